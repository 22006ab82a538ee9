"""``benchtui dump`` and ``benchtui info`` on a session recorded from a real fio + iostat run.

The round trip: what ``dump`` prints is exactly what the engine handed its sinks live (same
count, same values, same labels), in the schema of docs/SAMPLES.md. The OpenMetrics output is
loaded by the real ``promtool tsdb create-blocks-from openmetrics``. Broken, missing and
too-new files are one sentence and an exit code, never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.model.sample import HISTOGRAM_METRIC
from benchtui.store.recording import SessionReader
from benchtui.store.recording import format as fmt
from benchtui.store.recording.format import SCHEMA_VERSION, file_header
from tests.helpers import require_tool
from tests.replay_recording import MARK_NOTE, STEPS, RecordedRun


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def data_end(data: bytes) -> int:
    """Where the file's first segment's DATA frames end (its summary follows)."""
    pos = fmt.FILE_HEADER_SIZE
    seen = False
    while True:
        header = fmt.FRAME_HEADER.unpack_from(data, pos)
        if header[1] != fmt.DATA and seen:
            return pos
        seen = seen or header[1] == fmt.DATA
        pos += fmt.FRAME_HEADER_SIZE + header[5]


def live_dicts(run: RecordedRun, *, histograms: bool) -> list[dict[str, object]]:
    return [json.loads(json.dumps(s.to_dict())) for s in run.samples
            if histograms or s.histogram is None]


def test_dump_jsonl_is_exactly_what_the_engine_produced_live(
        recorded: RecordedRun, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "dump", str(recorded.path), "--histograms")
    assert code == 0, err
    dumped = [json.loads(line) for line in out.splitlines()]
    live = live_dicts(recorded, histograms=True)
    assert len(dumped) == len(live) > 100
    assert dumped == live
    tools = Counter(d["tool"] for d in dumped)
    assert tools["fio"] and tools["iostat"]
    assert {d["labels"].get("step") for d in dumped if d["tool"] == "fio"} == set(STEPS)
    assert any(d["metric"] == HISTOGRAM_METRIC and d["buckets"] for d in dumped)


def test_dump_without_histograms_matches_run_jsonl(recorded: RecordedRun,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "dump", str(recorded.path))
    assert code == 0
    dumped = [json.loads(line) for line in out.splitlines()]
    assert dumped == live_dicts(recorded, histograms=False)
    assert all("buckets" not in d for d in dumped)


def test_dump_csv_has_a_row_per_sample(recorded: RecordedRun,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "dump", str(recorded.path), "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    live = [s for s in recorded.samples if s.histogram is None]
    assert len(rows) == len(live)
    for row, s in zip(rows, live, strict=True):
        assert (row["host"], row["metric"], float(row["value"])) == (s.host, s.metric, s.value)
        assert row["step"] == s.labels.get("step", "")


def test_dump_filters_by_host_metric_and_time(recorded: RecordedRun,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = str(recorded.path)
    code, out, _ = run_cli(capsys, "dump", path, "--metric", "iops", "--host", "here")
    assert code == 0
    dumped = [json.loads(line) for line in out.splitlines()]
    assert dumped and {d["metric"] for d in dumped} == {"iops"}
    assert len(dumped) == sum(1 for s in recorded.samples if s.metric == "iops")

    with SessionReader.open(path) as reader:
        start = reader.start
    code, out, _ = run_cli(capsys, "dump", path, "--from", "3", "--to", "6s")
    assert code == 0
    times = [json.loads(line)["t"] for line in out.splitlines()]
    assert times and all(start + 3 <= t < start + 6 for t in times)
    expected = sum(1 for s in recorded.samples if s.histogram is None and s.t is not None
                   and start + 3 <= s.t < start + 6)
    assert len(times) == expected

    iso = subprocess.run(["date", "-d", f"@{start + 3}", "--iso-8601=ns"], check=True,
                         capture_output=True, text=True).stdout.strip().replace(",", ".")
    code, out2, _ = run_cli(capsys, "dump", path, "--from", iso, "--to", "6")
    assert code == 0 and out2 == out


def test_dump_filter_that_matches_nothing_says_so(recorded: RecordedRun,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "dump", str(recorded.path), "--metric", "no_such")
    assert code == 1 and out == ""
    assert "no recorded sample" in err and "metric no_such" in err
    code, _, err = run_cli(capsys, "dump", str(recorded.path), "--host", "nohost")
    assert code == 2 and "no host nohost" in err and "here" in err


@pytest.mark.parametrize("argv,message", [
    (("--from", "yesterday"), "--from: 'yesterday' is not a time"),
    (("--from", "10", "--to", "5"), "--to must be later than --from"),
    (("--format", "csv", "--histograms"), "--histograms needs --format jsonl"),
])
def test_dump_usage_errors(recorded: RecordedRun, capsys: pytest.CaptureFixture[str],
                           argv: tuple[str, ...], message: str) -> None:
    code, out, err = run_cli(capsys, "dump", str(recorded.path), *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_dump_openmetrics_backfills_with_promtool(recorded: RecordedRun, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    promtool = require_tool("promtool")
    code, out, err = run_cli(capsys, "dump", str(recorded.path), "--format", "openmetrics",
                             "--histograms")
    assert code == 0, err
    assert out.endswith("# EOF\n")
    assert "benchtui_iops{" in out and "benchtui_op_latency_seconds_bucket{" in out
    om = tmp_path / "session.om"
    om.write_text(out)
    blocks = tmp_path / "blocks"
    result = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(om),
                             str(blocks)], check=False, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [p for p in blocks.iterdir() if (p / "meta.json").exists()]
    listing = subprocess.run([promtool, "tsdb", "list", str(blocks)], capture_output=True,
                             text=True, timeout=60, check=True).stdout
    assert "BLOCK ULID" in listing


def test_info_describes_the_session(recorded: RecordedRun,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "info", str(recorded.path))
    assert code == 0
    assert "replay-test" in out and "here" in out
    for step in STEPS:
        assert f"  {step}: at +" in out and "ok" in out
    assert f"{len(recorded.samples)} samples" in out
    assert "gaps      none" in out
    assert "marks     1" in out and f": {MARK_NOTE}" in out
    assert "plan as recorded:" in out and 'name = "replay-test"' in out


def test_info_json(recorded: RecordedRun, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "info", str(recorded.path), "--json")
    assert code == 0
    info = json.loads(out)
    assert info["name"] == "replay-test"
    assert info["sample_count"] == len(recorded.samples)
    assert list(info["hosts"]) == ["here"]
    assert [s["name"] for s in info["steps"]] == list(STEPS)
    assert all(s["ok"] and s["seconds"] > 2 for s in info["steps"])
    assert info["complete"] is True and info["warnings"] == []
    assert info["duration_seconds"] == pytest.approx(info["end"] - info["start"])
    assert info["size_bytes"] == recorded.path.stat().st_size
    assert info["plan"] == recorded.plan_path.read_text()
    step_start = next(e.t for e in recorded.events if e.kind == "step_start"
                      and e.step == STEPS[1])
    assert [(m["note"], m["t"] >= step_start) for m in info["marks"]] == [(MARK_NOTE, True)]


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *argv], check=False,
                          capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("command", ["dump", "info", "replay"])
def test_missing_file_is_one_sentence(tmp_path: Path, command: str) -> None:
    result = _cli(command, str(tmp_path / "nope.btui"))
    assert result.returncode in (1, 2) and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "nope.btui" in result.stderr


@pytest.mark.parametrize("command", ["dump", "info", "replay"])
def test_a_file_that_is_not_a_session_is_refused(tmp_path: Path, command: str) -> None:
    bad = tmp_path / "plan.toml"
    bad.write_text('[session]\nname = "not a recording"\n' * 50)
    result = _cli(command, str(bad))
    assert result.returncode in (1, 2) and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "plan.toml" in result.stderr


@pytest.mark.parametrize("command", ["dump", "info", "replay"])
def test_a_newer_schema_is_refused(recorded: RecordedRun, tmp_path: Path, command: str) -> None:
    newer = tmp_path / "newer.btui"
    shutil.copy(recorded.path, newer)
    with newer.open("r+b") as f:
        f.write(file_header(SCHEMA_VERSION + 1))
    result = _cli(command, str(newer))
    assert result.returncode in (1, 2) and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "newer" in result.stderr


def test_a_truncated_file_dumps_its_valid_part_with_a_warning(
        recorded: RecordedRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "cut.btui"
    data = recorded.path.read_bytes()
    cut.write_bytes(data[:data_end(data) * 2 // 3])  # two thirds into the samples
    code, out, err = run_cli(capsys, "dump", str(cut), "--histograms")
    assert code == 0
    dumped = [json.loads(line) for line in out.splitlines()]
    live = live_dicts(recorded, histograms=True)
    assert 0 < len(dumped) < len(live)
    assert dumped == live[:len(dumped)]
    assert "warning" in err and "Traceback" not in err
    code, out, err = run_cli(capsys, "info", str(cut))
    assert code == 0
    assert "NOT closed" in out and "\nwarning   " in out


def test_info_lists_gaps_and_unfinished_steps() -> None:
    from benchtui.cli.dump_cmd import SessionInfo, format_info
    from benchtui.session.replay import TimelineStep
    from benchtui.store.recording import Gap

    start = 1_793_491_200.0
    info = SessionInfo(
        path="x.btr", name="night", session_id="s", schema_version=1, writer="benchtui 0.1",
        plan_path="plan.toml", plan="", started=start, ended=None, complete=False,
        start=start, end=start + 7200, size_bytes=3 * 2**20, sample_count=10, event_count=4,
        event_warnings=1, event_errors=0, hosts={"h07": "", "h12": "Debian 12"}, facts={}, marks=[],
        steps=[TimelineStep("randread", start + 60, start + 3360, True),
               TimelineStep("randwrite", start + 3660, None, None)],
        gaps=[Gap("h07", start + 600, start + 612)], warnings=["the file ends early"])
    text = format_info(info)
    assert "time      " in text and "(2h00m00s)" in text
    assert "size      3.0 MiB, 10 samples, 4 events (1 warning, 0 errors)" in text
    assert "  randread: at +1m00s, 55m00s, completed" in text
    assert "  randwrite: at +1h01m00s, still running when the recording ended" in text
    assert "gaps      1\n  h07: no sample for 12.0s from +10m00s" in text
    assert "  h12: Debian 12" in text and "warning   the file ends early" in text
    assert json.loads(json.dumps(info.to_dict()))["gaps"] == [
        {"host": "h07", "start": start + 600, "end": start + 612, "seconds": 12.0}]
