"""The benchmark scripts still run: the capture replay, and the fleet-scale benchmark end to end
on 2 real sshd "hosts" for 3 s (no timing is asserted: only that it runs and reports)."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtui.parsers.fio_json import FioJsonParser
from benchtui.parsers.iostat import IostatParser
from tests.sshd import sshd_unavailable

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
CAPTURES = BENCHMARKS / "captures"


def replay(kind: str, capture: str, seconds: int) -> str:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "replay_capture.py"), kind,
                           str(CAPTURES / capture), "--seconds", str(seconds)],
                          capture_output=True, text=True, timeout=30, check=True)
    return done.stdout


def test_fio_replay_looks_live() -> None:
    started = time.time()
    out = replay("fio-json", "fio-json-plus-2jobs.json", 2)
    parser = FioJsonParser(host="h", source="test")
    samples = parser.feed_text(out) + parser.finish()
    assert not parser.warnings
    iops = [s for s in samples if s.metric == "iops" and s.kind == "interval"]
    # 2 documents x 2 jobs x read/write, stamped with the time they were printed.
    assert len(iops) == 8
    assert all(s.value > 0 for s in iops)
    assert all(started < (s.t or 0) < time.time() + 1 for s in iops)
    assert {s.labels["job"] for s in iops} == {"a", "b"}


def test_iostat_replay_looks_live() -> None:
    started = time.time()
    out = replay("iostat", "iostat-x-t.txt", 2)
    parser = IostatParser(host="h", source="test")
    samples = parser.feed_text(out) + parser.finish()
    times = {s.t for s in samples}
    assert len(times) == 2
    assert all(int(started) <= (t or 0) <= time.time() + 1 for t in times)
    assert any(s.metric == "cpu_ratio" for s in samples)


@pytest.mark.slow
def test_fleet_scale_benchmark_runs_and_reports(tmp_path: Path) -> None:
    reason = sshd_unavailable()
    if reason:
        pytest.skip(reason)
    out_md, out_json = tmp_path / "fleet.md", tmp_path / "fleet.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "fleet_scale.py"), "--hosts", "2", "--seconds", "3",
         "--out", str(out_md), "--json", str(out_json), "--patience", "0"],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| hosts | fio docs in store |" in done.stdout
    assert "\n| this | 2 | 6/6 |" in done.stdout  # 2 hosts x 3 documents, all in the store
    result = json.loads(out_json.read_text())[0]
    assert result["ok"] and result["hosts_streaming"] == 2
    assert result["samples_total"] > 0
    text = out_md.read_text()
    assert "<!-- results stock -->" in text and "<!-- /results stock -->" in text


@pytest.mark.slow
def test_watchdog_cost_benchmark_runs_and_reports(tmp_path: Path) -> None:
    reason = sshd_unavailable()
    if reason:
        pytest.skip(reason)
    out_md = tmp_path / "watchdog.md"
    out_md.write_text("# before\n\n<!-- results -->\nold\n<!-- /results -->\n\n# after\n")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "watchdog_cost.py"), "--runs", "2", "--seconds", "1",
         "--out", str(out_md)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    text = out_md.read_text()
    assert text.startswith("# before\n") and text.endswith("# after\n") and "old" not in text
    rows = [line for line in text.splitlines() if line.startswith(("| local", "| ssh"))]
    assert [row.split(" | ")[0] for row in rows] == ["| local, off", "| local, 60 s",
                                                      "| ssh, off", "| ssh, 60 s"]


def test_report_speed_benchmark_runs_and_reports(tmp_path: Path) -> None:
    """A 2-host hour (two runs): the script makes it, times series_stats, the decoding of one
    run and `benchtui report`, checks that both ways give the same figures, and writes its
    section."""
    session, doc = tmp_path / "s.btr", tmp_path / "report.md"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "report_speed.py"), "--session", str(session),
         "--hosts", "2", "--hours", "1", "--decode-runs", "1", "--doc", str(doc)],
        capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert session.exists()
    assert "`series_stats` of every run's window (2 windows," in done.stdout
    assert "same figures: yes" in done.stdout
    assert "| `benchtui report SESSION --format csv` (" in done.stdout
    text = doc.read_text()
    assert "<!-- report-speed -->" in text and "<!-- /report-speed -->" in text


def test_export_burst_runs_and_reports() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "export_burst.py"), "--hosts", "1",
                           "--scrapes", "10", "--idle", "10", "--slow", "2", "--steady", "2",
                           "--rounds", "1", "--json"],
                          capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout)
    (one,) = report["rounds"]
    assert (one["burst"]["answered"], one["steady"]["answered"], one["idle_kept"]) == (10, 2, 10)
    assert report["server_threads"] <= 5


def test_fio_replay_on_the_second_prints_on_whole_seconds() -> None:
    """``--on-the-second`` (fleet_wide.py --lockstep): every document is stamped on a whole
    second of the clock, so that a fleet's replays print together, as fio's timers in step."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / "replay_capture.py"), "fio-json",
                           str(CAPTURES / "fio-json-plus-2jobs.json"), "--seconds", "2",
                           "--on-the-second"],
                          capture_output=True, text=True, timeout=30, check=True)
    stamps = [json.loads(doc)["timestamp_ms"] for doc in split_documents(done.stdout)]
    assert len(stamps) == 2
    assert all(ms % 1000 < 250 for ms in stamps), stamps  # (the replay's wake-up)
    assert stamps[1] - stamps[0] in range(750, 1250)


def split_documents(text: str) -> list[str]:
    return [part + "\n}" for part in text.split("\n}\n") if part.strip()]


def test_doc_path_finds_documents_however_the_bytes_are_cut() -> None:
    """benchmarks/doc_path.py's scanner (fleet_wide.py --parts) finds every document's start
    (its timestamp_ms) and end in the pieces SSH packets and chunks cut a stream into, a
    pattern cut in two included."""
    sys.path.insert(0, str(BENCHMARKS))
    from doc_path import DocPath, DocScanner, one_core

    rng = random.Random(32)
    docs = [json.dumps({"fio version": "fio-3.33", "timestamp_ms": 1764245512000 + 1000 * i
                        + rng.randrange(1000), "jobs": [{"job": {"n": k}} for k in range(9)]},
                       indent=2, separators=(",", " : ")) + "\n" for i in range(12)]
    data = "".join(docs).encode()
    want = [json.loads(d)["timestamp_ms"] for d in docs]
    for _ in range(200):
        scanner, starts, ends, at = DocScanner(), [], [], 0
        while at < len(data):
            size = rng.choice((1, 2, 3, 7, 18, 31, 64, 500, 4096))
            got = scanner.feed(data[at:at + size])
            starts += got[0]
            ends += got[1]
            at += size
        assert starts == want and ends == want
    # Pieces that end one document and begin the next: each document's pieces counted.
    path = DocPath()
    for at in range(0, len(data), 700):
        path.packet(1, data[at:at + 700])
    assert [rec[2] for rec in path.net.values()] == [
        (start + len(doc) - 1) // 700 - start // 700 + 1
        for start, doc in zip(itertools.accumulate([0] + [len(d) for d in docs]), docs,
                              strict=False)]
    # One core serving each document for 10 ms as printed: three printed together wait
    # 10, 20 and 30 ms; one printed later alone, 10.
    rows = [{"stamp": t} for t in (5.0, 5.0, 5.0, 6.0)]
    lags = one_core(rows, 0.01)  # type: ignore[arg-type]
    assert abs(lags["max"] - 0.03) < 1e-9 and abs(lags["p50"] - 0.02) < 1e-9
