"""Every rados bench and rbd bench file of the shared corpus (Ceph 2013 to Nautilus, written by
other people: see ../shared/corpus/ceph/SOURCE), read as ``benchtui parse`` reads it.

Every figure of every per-second row and of every summary, read here independently (a regular
expression per row, ``Key: value`` for the summary), comes out in base units within half a unit
of its last printed digit; and the partial tail after rados bench's last row says its duration.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from tests.corpus import Printed, corpus_files, corpus_path, match_all, parse_file, printed

FILES = corpus_files("ceph")
RADOS = [n for n in FILES if "rados" in n]
MIB = 1048576.0
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_SUMMARY = {  # rados bench's summary key -> (metric, scale)
    "Bandwidth (MB/sec)": ("bandwidth_bytes", MIB), "Stddev Bandwidth": (
        "bandwidth_stddev_bytes", MIB),
    "Max bandwidth (MB/sec)": ("bandwidth_max_bytes", MIB),
    "Min bandwidth (MB/sec)": ("bandwidth_min_bytes", MIB),
    "Stddev IOPS": ("iops_stddev", 1.0), "Max IOPS": ("iops_max", 1.0),
    "Min IOPS": ("iops_min", 1.0),
    "Average Latency(s)": ("latency_mean_seconds", 1.0), "Average Latency": (
        "latency_mean_seconds", 1.0),
    "Stddev Latency(s)": ("latency_stddev_seconds", 1.0), "Stddev Latency": (
        "latency_stddev_seconds", 1.0),
    "Max latency(s)": ("latency_max_seconds", 1.0), "Max latency": ("latency_max_seconds", 1.0),
    "Min latency(s)": ("latency_min_seconds", 1.0), "Min latency": ("latency_min_seconds", 1.0),
}


def test_the_corpus_is_there() -> None:
    assert len(RADOS) >= 4 and len(FILES) >= 5


def _rados_figures(text: str) -> tuple[dict[str, list[Printed]], dict[str, list[Printed]],
                                       list[str]]:
    rows: dict[str, list[Printed]] = {}
    summary: dict[str, list[Printed]] = {}
    averages: list[str] = []
    for raw in text.split("\n"):
        line = re.sub(r"^\d{4}-\d\d-\d\d[T ][\d:.]+(?:[+-]\d{4})?\s", "", raw)
        if (m := _ROW.match(line)) and m.group(1) != "0":
            finished = int(m.group(4))
            rows.setdefault("ops_in_flight", []).append(printed(m.group(2)))
            rows.setdefault("bandwidth_bytes", []).append(printed(m.group(6), MIB))
            if m.group(7) != "-" and finished:
                rows.setdefault("latency_last_seconds", []).append(printed(m.group(7)))
            if finished:
                rows.setdefault("latency_running_mean_seconds", []).append(printed(m.group(8)))
            continue
        key, sep, value = line.partition(":")
        if sep and key.strip() in _SUMMARY and value.strip():
            metric, scale = _SUMMARY[key.strip()]
            summary.setdefault(metric, []).append(printed(value.strip(), scale))
        elif key.strip() == "Average IOPS":
            averages.append(value.strip())
    return rows, summary, averages


@pytest.mark.parametrize("name", RADOS)
def test_rados_bench_every_figure(name: str) -> None:
    parsed = parse_file("ceph", name)
    assert "rados-bench" in parsed.names and not parsed.warnings
    rados = [s for s in parsed.samples if s.tool == "rados_bench"]
    rows, summary, averages = _rados_figures(
        corpus_path("ceph", name).read_text(encoding="utf-8"))
    whole_rows = [s for s in rados if s.kind == INTERVAL and s.duration is None]
    match_all(rows, whole_rows, f"{name} rows")
    match_all(summary, [s for s in rados if s.kind == SUMMARY], f"{name} summary")
    # "Average IOPS: 257" is rados bench's made / time truncated to an integer
    iops = [s.value for s in rados if s.kind == SUMMARY and s.metric == "iops"]
    assert len(iops) == max(len(averages), 1)
    for value, text in zip(iops, averages, strict=False):
        assert math.floor(value) == int(text)
    # every summary figure at the run's end: "Total time run"
    runs = re.findall(r"^Total time run:\s+([\d.]+)", corpus_path("ceph", name).read_text(
        encoding="utf-8"), re.MULTILINE)
    assert sorted({s.elapsed for s in rados if s.kind == SUMMARY}) == sorted(map(float, runs))


def test_rados_bench_tail_by_hand() -> None:
    """yzhan qd64: last row ``180  56  46723  46667 ...``, ``Total time run: 181.51``,
    ``Total writes made: 46723``, ``Write size: 4096``: the 56 writes in flight at the last
    row completed in the last 1.51 s."""
    parsed = parse_file("ceph", "yzhan-rados-bench-4k-qd64-stamps.txt")
    tail = {s.metric: s for s in parsed.samples if s.kind == INTERVAL and s.duration}
    assert set(tail) == {"iops", "bandwidth_bytes"}
    assert tail["iops"].duration == 1.51 and tail["iops"].elapsed == 181.51
    assert tail["iops"].value == pytest.approx(56 / 1.51)
    assert tail["bandwidth_bytes"].value == pytest.approx(56 * 4096 / 1.51)


def test_old_blog_post_rados_and_fio() -> None:
    """ceph.io 2013: a rados bench summary without a table (``Bandwidth (MB/sec): 82.480``)
    and fio 2.x lines (``bw=153016KB/s, iops=37 , runt=300475msec``), pasted in a blog post;
    the pool from the command line inside HTML markup."""
    parsed = parse_file("ceph", "cephio-2013-rados-bench-old-summary.md")
    assert sorted(parsed.names) == ["fio-text", "rados-bench"] and not parsed.warnings
    bw = {(s.tool, s.labels["job"]): s for s in parsed.samples
          if s.kind == SUMMARY and s.metric == "bandwidth_bytes"}
    assert bw["rados_bench", "leseb"].value == pytest.approx(82.480 * MIB)
    assert bw["rados_bench", "leseb"].elapsed == 300.097605
    assert bw["fio", "seq-write"].value == 153016 * 1024
    assert bw["fio", "seq-write"].elapsed == 300.475
    assert bw["fio", "seq-read"].value == 164268 * 1024


def test_rbd_bench_every_figure() -> None:
    """Old rbd bench rows ``SEC OPS OPS/SEC BYTES/SEC`` and ``elapsed: 356 ops: 8192 ops/sec:
    23.00 bytes/sec: 3015193.89``."""
    name = "yzhan-rbd-bench-old-plain.txt"
    parsed = parse_file("ceph", name)
    assert parsed.names == ["rbd-bench"] and not parsed.warnings
    text = corpus_path("ceph", name).read_text(encoding="utf-8")
    rows = re.findall(r"^\s*\d+\s+\d+\s+([\d.]+)\s+([\d.]+)\s*$", text, re.MULTILINE)
    want = {"iops": [printed(a) for a, _ in rows],
            "bandwidth_bytes": [printed(b) for _, b in rows]}
    match_all(want, [s for s in parsed.samples if s.kind == INTERVAL], name)
    total = {s.metric: s for s in parsed.samples if s.kind == SUMMARY}
    assert printed("23.00").matches(total["iops"].value)
    assert printed("3015193.89").matches(total["bandwidth_bytes"].value)
    assert total["iops"].elapsed == pytest.approx(8192 / 23.00)  # "elapsed: 356", truncated


def test_duration_survives_benchtui_parse_json_lines() -> None:
    """``benchtui parse FILE`` prints the tail's duration in its JSON Lines (docs/SAMPLES.md)."""
    path = corpus_path("ceph", "yzhan-rados-bench-4k-qd64-stamps.txt")
    done = subprocess.run([sys.executable, "-m", "benchtui", "parse", str(path)],
                          capture_output=True, text=True, timeout=60, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    partial = [r for r in rows if "duration" in r]
    assert [(r["metric"], r["duration"], r["elapsed"]) for r in partial] == [
        ("iops", 1.51, 181.51), ("bandwidth_bytes", 1.51, 181.51)]
    assert all(r["kind"] == "interval" for r in partial)
