"""``benchtui import``: seed 000 and seed 001 imported with the shipped maps give exactly the
numbers of the reports' tables; plain outputs with --host/--step; the session file reads like
a recorded one (events, info, dump, replay)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import SUMMARY, Sample
from benchtui.session.import_map import load_map
from benchtui.session.importer import import_outputs
from benchtui.session.replay import ReplayPlayer
from benchtui.store.recording import IMPORTED, RECORDED, SessionReader

ROOT = Path(__file__).resolve().parent.parent
SEED000 = "tests/fixtures/seeds/000_217b3b91532e58e6.txt"
SEED001 = "tests/fixtures/seeds/001_82a32511c661f41a.txt"
MAP000 = "examples/import/seed000.toml"
MAP001 = "examples/import/seed001.toml"

STEPS000 = ["4KB随机读", "4KB随机写", "4KB顺序读", "4KB顺序写", "1MB顺序读", "1MB顺序写"]
#: Seed 000's conclusion table ("测试结论", ~line 262), IOPS and throughput per step, the rows
#: in the table's order under the bullet text that names each host in "测试数据".
TABLE000 = """
物理机                                   | 195   | 782KiB/s  | 7349  | 28.7MiB/s | 22.1k | 86.3MiB/s | 24.5k | 95.8MiB/s | 1055 | 1056MiB/s | 1117 | 1118MiB/s
Linux虚拟机（cache=none）                | 245   | 981KiB/s  | 6096  | 23.8MiB/s | 9458  | 36.9MiB/s | 6278  | 24.5MiB/s | 979  | 980MiB/s  | 1058 | 1059MiB/s
Linux虚拟机（cache=none, multiqueue=2)   | 243   | 973KiB/s  | 7483  | 29.2MiB/s | 11.5k | 44.9MiB/s | 7271  | 28.4MiB/s | 958  | 959MiB/s  | 1052 | 1052MiB/s
Linux虚拟机(cache=writeback)             | 13.0k | 54.5MiB/s | 8360  | 32.7MiB/s | 13.1k | 51.3MiB/s | 8976  | 35.1MiB/s | 2550 | 2551MiB/s | 1045 | 1046MiB/s
Linux虚拟机(cache=writeback, queues=4)   | 28.7k | 112MiB/s  | 12.2k | 47.5MiB/s | 29.6k | 116MiB/s  | 11.2k | 43.8MiB/s | 2931 | 2932MiB/s | 1220 | 1220MiB/s
Windows虚拟机(cache=none)                | 2811  | 11.0MiB/s | 6002  | 23.4MiB/s | 11.8k | 46.1MiB/s | 4289  | 16.8MiB/s | 1009 | 1009MiB/s | 685  | 686MiB/s
Windows虚拟机(cache=none,queues=4)       | 2794  | 10.9MiB/s | 7448  | 29.1MiB/s | 21.1k | 82.6MiB/s | 25.5k | 99.7MiB/s | 930  | 930MiB/s  | 1013 | 1014MiB/s
Windows虚拟机(cache=writeback)           | 2483  | 9935KiB/s | 7430  | 29.0MiB/s | 10.9k | 42.8MiB/s | 13.6k | 53.0MiB/s | 1993 | 1994MiB/s | 920  | 920MiB/s
Windows虚拟机(cache=writeback,queues=4)  | 4520  | 17.7MiB/s | 18.8k | 73.6MiB/s | 23.3k | 90.8MiB/s | 21.8k | 85.1MiB/s | 2628 | 2628MiB/s | 1191 | 1192MiB/s
"""  # noqa: E501 (the table as the report has it)

#: Seed 001's table (engines by file system): read and write MiB/s, latency, IOPS.
TABLE001 = {
    ("Ext4", "posixaio"): (53.8, 54.2, 1100e-6, 13.8e3),
    ("Ext4", "io_submit"): (576, 572, 135e-6, 146e3),
    ("Ext4", "io_uring"): (674, 670, 135e-6, 171e3),
    ("None", "posixaio"): (246, 246, 267e-6, 63e3),
    ("None", "io_submit"): (1370, 1369, 49e-6, 350e3),
    ("None", "io_uring"): (1636, 1630, 40e-6, 417e3),
    ("XFS", "posixaio"): (58, 57.4, 1100e-6, 14.7e3),
    ("XFS", "io_submit"): (790, 794, 117e-6, 202e3),
    ("XFS", "io_uring"): (721, 719, 114e-6, 184e3),
}

_UNITS = {"": 1, "k": 1000, "KiB/s": 1024, "MiB/s": 1024 * 1024}


def number(text: str) -> float:
    """A table cell in base units (counts, bytes per second)."""
    m = re.fullmatch(r"([\d.]+)(k|KiB/s|MiB/s|)", text)
    assert m is not None, text
    return float(m.group(1)) * _UNITS[m.group(2)]


def table000() -> dict[tuple[str, str], tuple[float, float]]:
    cells = {}
    for row in TABLE000.strip().splitlines():
        host, *values = (c.strip() for c in row.split("|"))
        for i, step in enumerate(STEPS000):
            cells[(host, step)] = (number(values[2 * i]), number(values[2 * i + 1]))
    return cells


@pytest.fixture(scope="module")
def seed000(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("import") / "seed000.btr"
    assert main(["import", str(ROOT / SEED000), "--map", str(ROOT / MAP000),
                 "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def seed001(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("import") / "seed001.btr"
    import_outputs([str(ROOT / SEED001)], str(out), import_map=load_map(str(ROOT / MAP001)))
    return out


def summaries(path: Path, metric: str) -> dict[tuple[str, str], list[Sample]]:
    """(host, step) -> the summary samples of ``metric`` (fio's per-job figures)."""
    found: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    with SessionReader.open(str(path)) as reader:
        for s in reader.samples(metrics={metric}):
            if s.kind == SUMMARY and not s.labels.get("job", "").startswith("group"):
                found[(s.host, s.labels["step"])].append(s)
    return found


def test_seed000_every_cell_of_the_conclusion_table(seed000: Path) -> None:
    expected = table000()
    iops, bandwidth = summaries(seed000, "iops"), summaries(seed000, "bandwidth_bytes")
    assert len(expected) == 54 and set(iops) == set(bandwidth) == set(expected)
    for key, (want_iops, want_bw) in expected.items():
        assert [s.value for s in iops[key]] == [want_iops], key
        assert [s.value for s in bandwidth[key]] == [want_bw], key
    assert iops[("物理机", "4KB随机读")][0].value == 195
    assert bandwidth[("物理机", "4KB随机读")][0].value == 800768  # 782 KiB/s
    # The Windows VMs' fio 3.27 windowsaio reports are in, with their own job names.
    assert iops[("Windows虚拟机(cache=writeback,queues=4)", "4KB随机写")][0].value == 18800


def test_seed000_hosts_are_the_bullets_and_steps_the_comments(seed000: Path) -> None:
    with SessionReader.open(str(seed000)) as reader:
        meta = reader.meta
        assert meta.hosts == [row.split("|")[0].strip()
                              for row in TABLE000.strip().splitlines()]
        assert [e.step for e in reader.events() if e.kind == ev.STEP_START] == STEPS000
        assert meta.source == IMPORTED and meta.imported
        data = (ROOT / SEED000).read_bytes()
        assert meta.imported_from == [{"path": str(ROOT / SEED000), "bytes": len(data),
                                       "sha256": hashlib.sha256(data).hexdigest()}]
        assert meta.import_map is not None
        map_data = (ROOT / MAP000).read_bytes()
        assert meta.import_map == {"path": str(ROOT / MAP000), "bytes": len(map_data),
                                   "sha256": hashlib.sha256(map_data).hexdigest(),
                                   "text": map_data.decode()}
        assert meta.plan_text == "" and meta.plan_path is None
        assert reader.gaps() == []  # sparse by nature: no live timing to have gaps in


def test_seed000_runs_stay_whole(seed000: Path) -> None:
    """fio's disk stats of a run are pasted under the next step's comment: they stay with
    their run, and no sample keeps the continuous stream's run numbers."""
    util = summaries(seed000, "disk_util_ratio")
    assert [s.value for s in util[("物理机", "4KB随机读")]] == [0.9961]
    assert [s.value for s in util[("物理机", "4KB随机写")]] == [0.9129]
    assert [s.value for s in util[("物理机", "1MB顺序写")]] == [0.9303]
    with SessionReader.open(str(seed000)) as reader:
        assert not [s for s in reader.samples() if "run" in s.labels]


def test_seed000_events_are_a_live_sessions(seed000: Path) -> None:
    with SessionReader.open(str(seed000)) as reader:
        events = reader.events()
        kinds = [e.kind for e in events]
        assert kinds[9] == ev.SESSION_START and kinds[-1] == ev.SESSION_END
        assert kinds.count(ev.STEP_START) == kinds.count(ev.STEP_END) == 6
        assert kinds.count(ev.RUN_START) == kinds.count(ev.RUN_END) == 54
        first = next(e for e in events if e.kind == ev.STEP_START)
        assert first.data == {"hosts": reader.meta.hosts, "tool": "fio",
                              "expected_seconds": pytest.approx(60.069, abs=0.001),
                              "index": 0, "repeat": 1, "repeats": 1, "select": "all",
                              "sweep": None, "matrix": {}}
        run = next(e for e in events if e.kind == ev.RUN_START)
        assert (run.host, run.step, run.data["line"]) == ("物理机", "4KB随机读", 290)
        assert all(e.data["status"] == 0 for e in events if e.kind == ev.RUN_END)
        # Time order, and every sample inside its step's slot.
        assert [e.t for e in events] == sorted(e.t for e in events)
        slots = {e.step: e.t for e in events if e.kind == ev.STEP_START}
        ends = {e.step: e.t for e in events if e.kind == ev.STEP_END}
        for s in reader.samples():
            assert s.t is not None
            assert slots[s.labels["step"]] <= s.t <= ends[s.labels["step"]]
        assert reader.start == reader.meta.started == int(reader.meta.started)


def test_seed000_keeps_the_raw_text(seed000: Path) -> None:
    with SessionReader.open(str(seed000)) as reader:
        outputs = [r for _, r in reader.timed_records(reader.start, reader.end + 1)
                   if isinstance(r, OutputLines)]
    assert len(outputs) == 54
    first = next(o for o in outputs if o.host == "物理机")
    assert (first.host, first.step, first.tool, first.role) == ("物理机", "4KB随机读", "fio",
                                                                 "step")
    assert "   read: IOPS=195, BW=782KiB/s (801kB/s)(45.9MiB/60039msec)" in first.lines


def test_seed001_engines_by_file_system(seed001: Path) -> None:
    """The table's read and write bandwidth and IOPS are fio's last status line of each run
    (``Jobs: ... [r=53.8MiB/s,w=54.2MiB/s][r=13.8k,w=13.9k IOPS]``): the interval samples."""
    status: dict[tuple[str, str, str, str], float] = {}
    with SessionReader.open(str(seed001)) as reader:
        assert reader.meta.hosts == ["Ext4", "None", "XFS"]
        for s in reader.samples(metrics={"iops", "bandwidth_bytes"}):
            if s.kind != SUMMARY:
                status[(s.host, s.labels["step"], s.metric, s.labels["op"])] = s.value
    latency = {k: [s.value for s in v if s.labels["op"] == "read"
                   and s.labels["measure"] == "lat"]
               for k, v in summaries(seed001, "latency_mean_seconds").items()}
    mib = 1024 * 1024
    for (fs, engine), (read, write, lat, iops) in TABLE001.items():
        assert status[(fs, engine, "bandwidth_bytes", "read")] == read * mib
        # The table's one typo: fio printed w=1627MiB/s.
        want = 1627 if (fs, engine) == ("None", "io_uring") else write
        assert status[(fs, engine, "bandwidth_bytes", "write")] == want * mib
        # The table's IOPS is the read one in some rows, the write one in others.
        assert iops in (status[(fs, engine, "iops", "read")],
                        status[(fs, engine, "iops", "write")])
        # Its latency is the read latency, rounded by hand.
        assert latency[(fs, engine)] == [pytest.approx(lat, rel=0.1)]
    assert summaries(seed001, "iops")[("Ext4", "posixaio")][0].value == 14300  # IOPS=14.3k


def test_the_exact_command_from_the_repository_root(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "seed000.btr"
    assert main(["import", SEED000, "--map", MAP000, "-o", str(out)]) == 0
    assert summaries(out, "iops")[("物理机", "4KB随机读")][0].value == 195
    assert [p.name for p in tmp_path.iterdir()] == ["seed000.btr"]  # no temporary file left


# --- plain outputs --------------------------------------------------------------------------

FIO_TEXT = ROOT / "tests/fixtures/fio_text/fio333_normal_eta_2jobs.txt"
IOSTAT = ROOT / "tests/fixtures/disk/real_sysstat12_x_t.txt"
FIO_JSON = ROOT / "tests/fixtures/fio_json/latpct.jsonplus.txt"


def test_plain_outputs_with_host_and_step(tmp_path: Path) -> None:
    out = tmp_path / "s.btr"
    assert main(["import", str(FIO_TEXT), str(IOSTAT), "--host", "db1", "--step", "randrw",
                 "-o", str(out)]) == 0
    with SessionReader.open(str(out)) as reader:
        assert reader.meta.hosts == ["db1"]
        samples = list(reader.samples())
        events = reader.events()
    assert {s.host for s in samples} == {"db1"}
    assert {s.labels["step"] for s in samples} == {"randrw"}
    assert {s.tool for s in samples} == {"fio", "iostat"}
    run_start = next(e for e in events if e.kind == ev.RUN_START)
    assert run_start.message.startswith("db1: fio+iostat imported from ")
    start = next(e.t for e in events if e.kind == ev.STEP_START)
    # Interval samples sit at the slot's start plus their elapsed seconds.
    for s in samples:
        if s.elapsed is not None:
            assert s.t == pytest.approx(start + s.elapsed)
    reads = [s.value for s in samples if s.kind == SUMMARY and s.metric == "iops"
             and s.labels["op"] == "read"]
    assert reads == [28200, 28100]  # "read: IOPS=28.2k" and "28.1k" of the two jobs


def test_plain_outputs_one_host_per_file_and_json_histograms(tmp_path: Path) -> None:
    out = tmp_path / "s.btr"
    import_outputs([str(FIO_TEXT), str(FIO_JSON)], str(out), hosts=["a", "b"],
                   steps=["randrw"], name="two")
    with SessionReader.open(str(out)) as reader:
        assert reader.meta.name == "two" and reader.meta.hosts == ["a", "b"]
        tools = {(s.host, s.tool) for s in reader.samples()}
        hist = list(reader.samples(metrics={"latency_histogram"}))
    assert tools == {("a", "fio"), ("b", "fio")}
    assert hist and all(s.host == "b" and s.histogram is not None for s in hist)


def test_info_says_imported_and_where_from(seed000: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(seed000)]) == 0
    text = capsys.readouterr().out
    assert ("source    imported from 000_217b3b91532e58e6.txt (no live timing: the times "
            "are placed by benchtui import)") in text
    assert f"  map {ROOT / MAP000}: " in text
    assert "import map as used:\n  # benchtui import map for seed 000" in text
    assert "gaps      none" in text
    assert main(["info", str(seed000), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "imported" and len(doc["steps"]) == 6
    assert doc["imported_from"][0]["sha256"] == \
        hashlib.sha256((ROOT / SEED000).read_bytes()).hexdigest()


def test_dump_prints_every_sample(seed000: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dump", str(seed000), "--format", "csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    with SessionReader.open(str(seed000)) as reader:
        assert len(rows) == reader.sample_count + 1
    assert main(["dump", str(seed000), "--host", "物理机", "--metric", "iops"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [d["value"] for d in lines if d["kind"] == "summary"] == \
        [195, 7349, 22100, 24500, 1055, 1117]


def test_replay_plays_an_imported_session(seed000: Path) -> None:
    with SessionReader.open(str(seed000)) as reader:
        player = ReplayPlayer(reader)
        player.set_speed(32)
        player.play()
        for _ in range(1000):
            if not player.playing:
                break
            player.advance(5.0)
        state = player.state
        assert player.position == player.end
        assert list(state.hosts) == reader.meta.hosts
        assert {h.state for h in state.hosts.values()} == {"done"}
        assert [(s.name, s.ok) for s in state.steps] == [(name, True) for name in STEPS000]
        assert state.ended is not None and state.ok
        host = state.hosts["物理机"]
        assert host.tools == ["fio"]
        assert any("IOPS=195" in line.text for line in host.output)
        assert any(s.metric == "iops" and s.value == 1117 and s.host == "物理机"
                   for s in state.store.summaries)
        # A seek into the third step shows its hosts running it.
        third = next(e for e in reader.events()
                     if e.kind == ev.STEP_START and e.step == STEPS000[2])
        player.seek(third.t + 10)
        player.finish_work()
        assert [s.name for s in player.state.steps][-1] == STEPS000[2]
        assert player.state.hosts["物理机"].state == "running"


# --- mistakes -------------------------------------------------------------------------------

REPORT = """\
## Data

* db1

```
# randread
{fio}
# notes
nothing was run here
```
"""


def run_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("benchtui: ") and "Traceback" not in err
    return err.strip().removeprefix("benchtui: ")


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "report.md"
    path.write_text(REPORT.format(fio=FIO_TEXT.read_text()), encoding="utf-8")
    return path


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("case", "expected"), [
    ("missing file", "{tmp}/missing.txt: no such file"),
    ("directory", "{tmp}: is a directory, not a file of tool output"),
    ("no tool output", "{tmp}/notes.txt: no known tool's output found in it; name the tool "
     "with --tool (benchtui parse --list shows them)"),
    ("not that tool", "{tmp}/notes.txt: no iostat output was found in it; check that the "
     "file holds that tool's output (benchtui parse --list shows what each parser reads)"),
    ("output is a folder", "{tmp}/out: is a directory; give a file name for the session, e.g. "
     "{tmp}/out/imported.btr"),
    ("missing map", "{tmp}/none.toml: no such map file"),
    ("bad toml", "{tmp}/bad.toml:2: TOML syntax error: invalid value (column 10); text needs "
     'quotes: write marker = "bullet"'),
    ("rule matches nothing", "{tmp}/level6.toml:2: the [host] rule (headings of level 6) matched "
     'no line of {tmp}/report.md under "## Data"'),
    ("piece without output", "{tmp}/report.md:{notes}: no tool output found for host 'db1', step "
     "'notes'; check the map's markers, or name the tool with --tool"),
    ("exists", "{tmp}/s.btr: already exists; give another file name (a session file is "
     "never overwritten)"),
    ("map and host", "--map names the hosts and steps: leave out --host and --step"),
    ("no host", "give --host and --step for plain tool output (or --map for a report that "
     "holds many hosts and steps)"),
    ("hosts per file", "give --host once for all files or once per file (2), not 3 times"),
    ("unknown tool", "unknown tool 'fiio'; known tools: "),
    ("no folder", "{tmp}/no/s.btr: cannot write it: No such file or directory"),
])
def test_a_mistake_is_one_sentence_and_writes_nothing(
        case: str, expected: str, tmp_path: Path, report: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    tmp = str(tmp_path)
    out = str(tmp_path / "s.btr")
    good_map = write(tmp_path / "good.toml", 'within = "## Data"\n[host]\nmarker = "bullet"\n'
                     '[step]\nmarker = "comment"\n')
    plain = ["--host", "h", "--step", "s"]
    args = {
        "missing file": [f"{tmp}/missing.txt", *plain],
        "directory": [tmp, *plain],
        "no tool output": [write(tmp_path / "notes.txt", "a note\n"), *plain],
        "not that tool": [write(tmp_path / "notes.txt", "a note\n"), *plain, "--tool",
                          "iostat"],
        "output is a folder": [str(FIO_TEXT), *plain],
        "missing map": [str(report), "--map", f"{tmp}/none.toml"],
        "bad toml": [str(report), "--map",
                     write(tmp_path / "bad.toml", "[host]\nmarker = bullet\n")],
        "rule matches nothing": [str(report), "--map", write(
            tmp_path / "level6.toml", 'within = "## Data"\n[host]\nmarker = "heading"\nlevel = 6\n'
            '[step]\nmarker = "comment"\n')],
        "piece without output": [str(report), "--map", good_map],
        "exists": [str(FIO_TEXT), *plain],
        "map and host": [str(report), "--map", good_map, "--host", "h"],
        "no host": [str(FIO_TEXT), "--step", "s"],
        "hosts per file": [str(FIO_TEXT), str(IOSTAT), "--host", "a", "--host", "b",
                           "--host", "c", "--step", "s"],
        "unknown tool": [str(FIO_TEXT), *plain, "--tool", "fiio"],
        "no folder": [str(FIO_TEXT), *plain],
    }[case]
    if case == "exists":
        Path(out).write_text("keep")
    if case == "output is a folder":
        (tmp_path / "out").mkdir()
    target = {"no folder": f"{tmp}/no/s.btr", "output is a folder": f"{tmp}/out"}.get(case, out)
    before = sorted(p.name for p in tmp_path.iterdir())
    err = run_error(["import", *args, "-o", target], capsys)
    notes = report.read_text().split("\n").index("# notes") + 1
    assert err.startswith(expected.format(tmp=tmp, notes=notes))
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    if case == "exists":
        assert Path(out).read_text() == "keep"


def test_old_files_read_as_recorded(tmp_path: Path) -> None:
    """A META without the import fields (every file before them) is a recorded session."""
    from benchtui.store.recording.walk import meta_from_json

    meta = meta_from_json({"name": "n", "session_id": "i", "plan_text": "", "started": 1.0,
                           "hosts": ["a"]}, 2)
    assert (meta.source, meta.imported_from, meta.import_map) == (RECORDED, [], None)
    assert not meta.imported


def test_events_read_back_equal_the_written_ones(seed001: Path) -> None:
    with SessionReader.open(str(seed001)) as reader:
        events = reader.events()
        records = [r for _, r in reader.timed_records(reader.start, reader.end + 1)
                   if isinstance(r, Event)]
    assert records == events
    assert events[3].kind == ev.SESSION_START and events[3].data == {"imported": True}


def test_a_real_fio_run_saved_and_imported(tmp_path: Path) -> None:
    """fio's normal output, saved to a file as a user saves it, imported as plain output:
    the summary is what fio printed."""
    saved = tmp_path / "fio.txt"
    subprocess.run(["fio", "--name=quick", f"--filename={tmp_path / 'data'}", "--size=4M",
                    "--rw=randread", "--bs=4k", "--runtime=1", "--time_based",
                    f"--output={saved}"], check=True, capture_output=True, timeout=60)
    printed = re.search(r"read: IOPS=([\d.]+k?), BW=([\d.]+(?:KiB|MiB)/s)", saved.read_text())
    assert printed is not None, saved.read_text()
    out = tmp_path / "s.btr"
    assert main(["import", str(saved), "--host", "local", "--step", "randread",
                 "-o", str(out)]) == 0
    found = summaries(out, "iops")[("local", "randread")]
    assert [s.value for s in found] == [number(printed.group(1))]
    bandwidth = summaries(out, "bandwidth_bytes")[("local", "randread")]
    assert [s.value for s in bandwidth] == [number(printed.group(2))]
    with SessionReader.open(str(out)) as reader:
        step_end = next(e for e in reader.events() if e.kind == ev.STEP_END)
    assert step_end.data["seconds"] == pytest.approx(found[0].elapsed)  # fio's run=...msec
