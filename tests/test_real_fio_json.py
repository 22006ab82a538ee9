"""Real fio runs with ``--status-interval=1 --output-format=json+`` (and json) parsed by the
fio-json parser: per-second samples, consistent with each other and with fio's own totals."""

from __future__ import annotations

import json
import statistics
import subprocess
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, SUMMARY, Sample
from benchtui.parsers.fio_json import FioJsonParser
from tests.helpers import check_invariants, one, pick, require_tool

BS = 4096
QUANTILES = ("0.5", "0.9", "0.99", "0.999", "0.9999")


def _run(tmp_path: Path, *args: str) -> str:
    cmd = [require_tool("fio"), "--ioengine=psync", "--direct=1", "--size=32m", f"--bs={BS}",
           "--time_based", "--status-interval=1", *args]
    proc = subprocess.run(cmd, capture_output=True, timeout=60, check=True, cwd=tmp_path)
    return proc.stdout.decode()


def _two_jobs(tmp_path: Path) -> list[str]:
    return ["--name=reader", f"--filename={tmp_path / 'r.dat'}", "--rw=randread",
            "--name=writer", f"--filename={tmp_path / 'w.dat'}", "--rw=randwrite"]


def _parse(text: str) -> list[Sample]:
    parser = FioJsonParser(source="real")
    samples = parser.feed_text(text) + parser.finish()
    check_invariants(samples)
    assert not parser.warnings, parser.warnings
    # the live path (line by line) gives the same samples
    live = FioJsonParser(source="real")
    by_line = [s for line in text.split("\n") for s in live.feed(line)] + live.finish()
    assert [s.to_dict() for s in by_line] == [s.to_dict() for s in samples]
    return samples


def _final(text: str) -> dict[str, Any]:
    start = text.rfind("\n{\n") + 1
    doc: dict[str, Any] = json.loads(text[start:])
    return doc


def _documents(text: str) -> list[dict[str, Any]]:
    """fio's dumps, in order."""
    decoder, docs, at = json.JSONDecoder(), [], 0
    while (at := text.find("{", at)) >= 0:
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
    return docs


def _spans(text: str, job: str, op: str) -> list[float]:
    """The seconds the job did ``op`` between its dumps (fio's runtime of the direction; of
    a group, its longest job's): the time each interval's rate is over, whether or not its
    sample says it (``duration`` None: a whole status interval, within 5%; a loaded machine
    makes that 1.04 s as well as 1.00)."""
    runtimes = [_job(doc, job)[op]["runtime"] / 1000 for doc in _documents(text)]
    return [b - a for a, b in pairwise([0.0, *runtimes]) if b > a]


def _job(doc: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(j for j in doc["jobs"] if j["jobname"] == name)
    return found


def _check_intervals(samples: list[Sample], text: str, job: str, op: str, *,
                     span: float) -> None:
    iops = pick(samples, "iops", INTERVAL, job=job, op=op)
    bw = pick(samples, "bandwidth_bytes", INTERVAL, job=job, op=op)
    assert len(iops) == len(bw) >= span - 1
    times = [s.t or 0.0 for s in iops]
    assert all(s.t is not None for s in iops)
    steps = [b - a for a, b in pairwise(times)]
    assert all(0.8 < step < 1.2 for step in steps[:-1]), steps  # ~1/s; the last is partial
    assert 0 < steps[-1] < 1.2
    # fio's status thread reads a job's counters one after the other while the job runs on:
    # descheduled between io_bytes and the I/O count on a loaded machine, the I/Os of those
    # milliseconds land in the next interval of one and not the other (a CI run: 4.8% in
    # one second). An interval's two figures are the same quantity; the work of the whole
    # run, each rate times the seconds it is over, is the same to the byte.
    spans = _spans(text, job, op)
    assert len(spans) == len(iops), (spans, times)
    for i, b in zip(iops, bw, strict=True):
        assert i.value > 0
        assert b.value == pytest.approx(i.value * BS, rel=0.2)
    done = sum(i.value * s for i, s in zip(iops, spans, strict=True))
    moved = sum(b.value * s for b, s in zip(bw, spans, strict=True))
    assert moved == pytest.approx(done * BS, rel=1e-6)
    for t in times:
        vals = [v.value for q in QUANTILES
                for v in pick(samples, "latency_seconds", INTERVAL, job=job, op=op,
                              measure="clat", quantile=q) if v.t == t]
        assert len(vals) == len(QUANTILES) and vals == sorted(vals) and vals[0] > 0
        mean = [v.value for v in pick(samples, "latency_mean_seconds", INTERVAL, job=job, op=op,
                                      measure="clat") if v.t == t]
        assert len(mean) == 1 and vals[0] / 10 < mean[0] < vals[-1] * 1.01
    # fio's whole-run figure against the per-second ones
    summary = one(samples, "iops", SUMMARY, job=job, op=op)
    assert statistics.mean(s.value for s in iops) == pytest.approx(summary, rel=0.2)


@pytest.mark.slow
def test_two_jobs_json_plus(tmp_path: Path) -> None:
    text = _run(tmp_path, "--runtime=4", "--output-format=json+", *_two_jobs(tmp_path))
    samples = _parse(text)
    _check_intervals(samples, text, "reader", "read", span=4)
    _check_intervals(samples, text, "writer", "write", span=4)
    ops = {(s.labels["job"], s.labels["op"]) for s in samples if "op" in s.labels}
    assert ops == {("reader", "read"), ("writer", "write")}
    final = _final(text)
    for job, op in (("reader", "read"), ("writer", "write")):
        hist = pick(samples, HISTOGRAM_METRIC, INTERVAL, job=job, op=op)
        assert sum(s.value for s in hist) == _job(final, job)[op]["clat_ns"]["N"]
        assert one(samples, "iops", SUMMARY, job=job, op=op) == _job(final, job)[op]["iops"]
    assert pick(samples, "disk_util_ratio", SUMMARY)
    assert {s.labels["mode"] for s in pick(samples, "cpu_ratio", SUMMARY, job="reader")} == {
        "user", "system"}


@pytest.mark.slow
def test_ramp_time_resets(tmp_path: Path) -> None:
    """fio zeroes its counters when ramp_time ends: no interval before, and the histograms of
    the intervals after add up to fio's final count."""
    text = _run(tmp_path, "--runtime=3", "--ramp_time=2", "--output-format=json+",
                *_two_jobs(tmp_path))
    samples = _parse(text)
    final = _final(text)
    start = final["timestamp_ms"] / 1000 - 5.5  # fio's whole run: ramp 2 s + runtime 3 s
    for job, op in (("reader", "read"), ("writer", "write")):
        iops = pick(samples, "iops", INTERVAL, job=job, op=op)
        assert len(iops) >= 3
        assert all(s.t is not None and s.t > start + 2 for s in iops)
        hist = pick(samples, HISTOGRAM_METRIC, INTERVAL, job=job, op=op)
        assert sum(s.value for s in hist) == _job(final, job)[op]["clat_ns"]["N"]
        assert all(s.value > 0 for s in iops)


@pytest.mark.slow
def test_group_reporting_json(tmp_path: Path) -> None:
    text = _run(tmp_path, "--runtime=3", "--output-format=json", "--numjobs=2",
                "--group_reporting", "--name=pair", f"--filename={tmp_path / 'p.dat'}",
                "--rw=randread")
    samples = _parse(text)
    assert {s.labels["job"] for s in samples if "job" in s.labels} == {"pair"}
    iops = pick(samples, "iops", INTERVAL, job="pair", op="read")
    assert len(iops) >= 3 and all(s.value > 0 for s in iops)
    assert not pick(samples, "latency_seconds", INTERVAL)  # plain json: no bins
    # iops x the seconds of work each interval covers (fio's job_runtime between dumps: the
    # sample's duration where it says one), summed, is fio's count of reads: the first
    # interval runs from the job start, the last is fio's final report, both partial.
    assert iops[0].duration is not None and iops[-1].duration is not None
    spans = _spans(text, "pair", "read")
    assert len(spans) == len(iops), spans
    assert all(s.duration is None or s.duration == pytest.approx(span)
               for s, span in zip(iops, spans, strict=True))
    total = sum(s.value * span for s, span in zip(iops, spans, strict=True))
    final = _final(text)
    assert total == pytest.approx(final["jobs"][0]["read"]["clat_ns"]["N"], rel=0.001)
