"""Real fio runs (normal output with the --eta status line, custom percentiles, terse) parsed by
the fio-text and fio-terse parsers: the values must be sane and agree with each other."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers.fio_terse import FioTerseParser
from benchtui.parsers.fio_text import FioTextParser
from tests.helpers import check_invariants, one, pick, require_tool

BS = 4096


def _cmd(tmp_path: Path, *args: str) -> list[str]:
    return [require_tool("fio"), "--name=bt", f"--filename={tmp_path / 'data'}", "--size=16m",
            f"--bs={BS}", "--ioengine=psync", "--rw=randrw", *args]


def _run(tmp_path: Path, *args: str) -> str:
    proc = subprocess.run(_cmd(tmp_path, *args), capture_output=True, timeout=60, check=True)
    return proc.stdout.decode()


def _parse(cls: type[FioTextParser] | type[FioTerseParser], text: str) -> list[Sample]:
    parser = cls(source="real")
    samples = parser.feed_text(text) + parser.finish()
    check_invariants(samples)
    assert not parser.warnings, parser.warnings
    return samples


def _check_percentiles(samples: list[Sample]) -> set[str]:
    """Every percentile table is monotonic; returns the quantiles seen."""
    series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    for s in pick(samples, "latency_seconds"):
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "quantile"))
        series.setdefault(key, []).append((float(s.labels["quantile"]), s.value))
    assert series
    for points in series.values():
        values = [v for _, v in sorted(points)]
        assert values == sorted(values), points
        assert values[0] >= 0  # terse truncates to whole microseconds
    return {s.labels["quantile"] for s in pick(samples, "latency_seconds")}


def _check_report(samples: list[Sample], jobs: set[str]) -> None:
    for job in jobs:
        for op in ("read", "write"):
            iops = one(samples, "iops", SUMMARY, job=job, op=op)
            bw = one(samples, "bandwidth_bytes", SUMMARY, job=job, op=op)
            assert iops > 0
            # fio prints both with 3 significant digits
            assert bw / BS == pytest.approx(iops, rel=0.02)
            for measure in ("clat", "lat"):
                lab = {"job": job, "op": op, "measure": measure}
                lo = one(samples, "latency_min_seconds", **lab)
                mean = one(samples, "latency_mean_seconds", **lab)
                hi = one(samples, "latency_max_seconds", **lab)
                assert 0 < lo <= mean <= hi < 10
        for mode in ("user", "system"):
            assert 0 <= one(samples, "cpu_ratio", job=job, mode=mode) <= 1
    for s in pick(samples, "disk_util_ratio"):
        assert 0 <= s.value <= 1


@pytest.mark.slow
def test_normal_output_with_eta_through_a_pipe(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        _cmd(tmp_path, "--runtime=3", "--time_based", "--numjobs=2", "--eta=always",
             "--eta-newline=1"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    parser = FioTextParser(source="live")
    samples: list[Sample] = []
    raw = b""
    for chunk in iter(proc.stdout.readline, b""):  # as a live capture receives it
        raw += chunk
        samples.extend(parser.feed(chunk.decode(), t=time.time()))
    assert proc.wait(timeout=60) == 0
    samples.extend(parser.finish())
    check_invariants(samples)
    assert not parser.warnings, parser.warnings
    text = raw.decode()
    # the status line, rewritten in place with \r, gave per-second values for all jobs
    intervals = pick(samples, "iops", INTERVAL, job="all")
    assert "\r" in text and intervals
    assert all(s.t is not None for s in intervals)
    elapsed = [s.elapsed for s in pick(intervals, "iops", op="read")]
    assert elapsed == sorted(elapsed) and len(set(elapsed)) == len(elapsed)
    for s in pick(samples, "bandwidth_bytes", INTERVAL):
        assert s.value >= 0
    # two jobs named "bt" (numjobs=2, no group_reporting), numbered as fio-json does
    _check_report(samples, {"bt#0", "bt#1"})
    _check_percentiles(samples)
    for op in ("read", "write"):
        jobs = sum(one(samples, "bandwidth_bytes", SUMMARY, job=j, op=op)
                   for j in ("bt#0", "bt#1"))
        group = one(samples, "bandwidth_bytes", SUMMARY, job="group 0", op=op)
        assert group == pytest.approx(jobs, rel=0.03)
    assert bool(pick(samples, "disk_util_ratio")) == ("Disk stats" in text)
    assert {s.elapsed for s in pick(samples, "iops", SUMMARY)} <= {x / 1000 for x in
                                                                   range(2900, 3200)}


@pytest.mark.slow
def test_custom_percentile_list_and_lat_percentiles(tmp_path: Path) -> None:
    text = _run(tmp_path, "--runtime=3", "--time_based", "--percentile_list=10:50:99.5",
                "--lat_percentiles=1")
    samples = _parse(FioTextParser, text)
    _check_report(samples, {"bt"})
    assert _check_percentiles(samples) == {"0.1", "0.5", "0.995"}
    for op in ("read", "write"):
        for q in ("0.1", "0.5", "0.995"):
            clat = one(samples, "latency_seconds", job="bt", op=op, measure="clat", quantile=q)
            lat = one(samples, "latency_seconds", job="bt", op=op, measure="lat", quantile=q)
            assert lat >= clat  # every I/O's total latency includes its completion latency


@pytest.mark.slow
def test_terse_and_normal_of_one_run_agree(tmp_path: Path) -> None:
    text = _run(tmp_path, "--runtime=2", "--time_based", "--numjobs=2",
                "--output-format=terse,normal")
    terse = _parse(FioTerseParser, text)
    normal = _parse(FioTextParser, text)
    assert FioTerseParser.detect(text) >= 50
    _check_report(normal, {"bt#0", "bt#1"})
    _check_percentiles(terse)
    # the terse lines cannot know that the first "bt" has a clone: "bt", "bt#1"
    for job, tjob in (("bt#0", "bt"), ("bt#1", "bt#1")):
        for op in ("read", "write"):
            t_iops = one(terse, "iops", job=tjob, op=op)
            assert t_iops == pytest.approx(one(normal, "iops", job=job, op=op), rel=0.01)
            assert one(terse, "bandwidth_bytes", job=tjob, op=op) / BS == pytest.approx(
                t_iops, rel=0.01)
            # terse latencies are whole microseconds for min/max, fractional for the mean
            assert one(terse, "latency_mean_seconds", job=tjob, op=op, measure="clat") == (
                pytest.approx(one(normal, "latency_mean_seconds", job=job, op=op,
                                  measure="clat"), rel=0.01, abs=1e-6))
        assert one(terse, "cpu_ratio", job=tjob, mode="system") == pytest.approx(
            one(normal, "cpu_ratio", job=job, mode="system"), abs=0.001)
    for s in pick(terse, "disk_util_ratio"):
        assert 0 <= s.value <= 1


def test_detectors_ignore_fio_json(tmp_path: Path) -> None:
    text = _run(tmp_path, "--runtime=1", "--time_based", "--output-format=json")
    assert '"fio version"' in text
    assert FioTextParser.detect(text) == 0
    assert FioTerseParser.detect(text) == 0
