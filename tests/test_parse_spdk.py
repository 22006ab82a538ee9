"""SPDK bdevperf and spdk_nvme_perf, every layout they have printed (v18-v26), on outputs
written after their source (tests/fixtures/spdk/README.md: SPDK cannot run here). Each figure
the tool printed is read here again with a plain regular expression and must come out in base
units; bdevperf's periodic figures (means since the start) must add up to its I/O count."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers import registry
from benchtui.parsers.bdevperf import BdevperfParser
from benchtui.parsers.spdk_nvme_perf import SpdkNvmePerfParser
from tests.helpers import fixture_text, one, parse_with, pick

MIB = 1024.0 * 1024.0
NUM = r"(\d+\.\d+)"


def spdk(name: str) -> str:
    return fixture_text(f"spdk/{name}")


def parse(cls: type, name: str) -> list[Sample]:
    parser = cls(host="-", source=name)
    samples = parser.feed_text(spdk(name)) + parser.finish()
    assert not parser.warnings, parser.warnings
    return samples


@pytest.mark.parametrize(("name", "cls"), [
    ("bdevperf_v20.01_S1.txt", BdevperfParser), ("bdevperf_v22.05_S1.txt", BdevperfParser),
    ("bdevperf_v23.01_ll.txt", BdevperfParser), ("bdevperf_v24.01_S1_randrw.txt", BdevperfParser),
    ("bdevperf_v24.09_progress_C_l.txt", BdevperfParser),
    ("bdevperf_v24.09_perform_tests.json.txt", BdevperfParser),
    ("spdk_nvme_perf_v18.01_L.txt", SpdkNvmePerfParser),
    ("spdk_nvme_perf_v24.01_tty_LL.txt", SpdkNvmePerfParser),
])
def test_detection(name: str, cls: type) -> None:
    assert registry.detect(spdk(name)) == [cls]


def test_bdevperf_tables_every_figure_as_printed() -> None:
    """v23.01+: each row's (and Total's) IOPS, MiB/s and latencies are the summary."""
    for name, rows in (("bdevperf_v23.01_ll.txt", 2), ("bdevperf_v24.09_progress_C_l.txt", 2)):
        samples = [s for s in parse(BdevperfParser, name) if s.kind == SUMMARY]
        text = spdk(name)
        row = re.compile(rf"^\t (\S+)\s+:\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}"
                         rf"\s+{NUM}$", re.M)
        jobs = [s.labels for s in pick(samples, "iops") if s.labels["job"] != "all"]
        assert len(jobs) == rows
        for m, labels in zip(row.finditer(text), jobs, strict=True):
            assert labels["job"] == m.group(1)
            got = {s.metric: s.value for s in samples if s.labels == labels
                   or s.labels == {**labels, "measure": "lat"}}
            assert got["iops"] == float(m.group(3))
            assert got["bandwidth_bytes"] == float(m.group(4)) * MIB
            assert got["latency_mean_seconds"] == pytest.approx(float(m.group(7)) * 1e-6)
            assert got["latency_min_seconds"] == pytest.approx(float(m.group(8)) * 1e-6)
            assert got["latency_max_seconds"] == pytest.approx(float(m.group(9)) * 1e-6)
            assert {s.elapsed for s in samples if s.labels.get("job") == m.group(1)
                    and s.labels.get("core_mask") == labels["core_mask"]} == {
                float(m.group(2))}
        total = re.search(rf"^ Total\s+:\s+{NUM}\s+{NUM}", text, re.M)
        assert total is not None
        assert one(samples, "iops", job="all") == float(total.group(1))


def test_bdevperf_C_jobs_are_told_apart_by_core_mask() -> None:
    samples = parse(BdevperfParser, "bdevperf_v24.09_progress_C_l.txt")
    masks = {s.labels.get("core_mask") for s in pick(samples, "iops", SUMMARY, job="Malloc0")}
    assert masks == {"0x1", "0x2"}
    assert {s.labels["op"] for s in samples} == {"read"}


@pytest.mark.parametrize(("name", "period"), [
    ("bdevperf_v20.01_S1.txt", 1.0), ("bdevperf_v22.05_S1.txt", 1.0),
    ("bdevperf_v24.01_S1_randrw.txt", 1.0),
])
def test_bdevperf_periods_are_the_periods_own(name: str, period: float) -> None:
    """-S blocks print the mean since the start: each period's IOPS, times its length, add up
    to the I/Os done by the last block (its mean x its time), and the first is its own mean."""
    samples = parse(BdevperfParser, name)
    for job in {s.labels["job"] for s in samples}:
        printed = [float(x) for x in re.findall(
            rf"^\s*{re.escape(job)}\s+:\s+(?:\d+\.\d\d\s+)?(\d+\.\d\d)(?: IOPS|\s)", spdk(name),
            re.M)] if job != "all" else [float(x) for x in re.findall(
                rf"^ Total\s+:\s+{NUM}", spdk(name), re.M)]
        intervals = pick(samples, "iops", INTERVAL, job=job)
        assert [s.elapsed for s in intervals] == [period * k for k in range(1, len(printed))]
        assert intervals[0].value == pytest.approx(printed[0])
        done = sum(s.value * period for s in intervals)
        assert done == pytest.approx(printed[-2] * period * len(intervals), abs=0.01)
        assert one(samples, "iops", SUMMARY, job=job) == printed[-1]
        assert all(s.duration is None for s in intervals)


def test_bdevperf_v24_01_interval_latency_from_the_means() -> None:
    """Periods' mean latencies weighted by their I/Os give back the last block's mean."""
    samples = parse(BdevperfParser, "bdevperf_v24.01_S1_randrw.txt")
    lat = pick(samples, "latency_mean_seconds", INTERVAL, job="Nvme0n1")
    ios = pick(samples, "iops", INTERVAL, job="Nvme0n1")
    weighted = sum(a.value * b.value for a, b in zip(lat, ios, strict=True)) / sum(
        b.value for b in ios)
    printed = re.findall(rf"^\t Nvme0n1\s+:\s+3\.00\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}",
                         spdk("bdevperf_v24.01_S1_randrw.txt"), re.M)
    assert weighted == pytest.approx(float(printed[0][4]) * 1e-6, rel=1e-4)
    assert {s.labels["op"] for s in samples} == {"total"}  # randrw: one figure for both


def test_bdevperf_progress_lines() -> None:
    """v24.09's ``IOPS, MiB/s`` line every second (all jobs, mean since the start)."""
    samples = parse(BdevperfParser, "bdevperf_v24.09_progress_C_l.txt")
    printed = [float(x) for x in re.findall(r"(\d+\.\d\d) IOPS,", spdk(
        "bdevperf_v24.09_progress_C_l.txt"))]
    got = pick(samples, "iops", INTERVAL, job="all")
    assert [s.elapsed for s in got] == [1.0, 2.0, 3.0, 4.0]
    assert [sum(s.value for s in got[:k]) for k in range(1, 5)] == pytest.approx(
        [p * k for k, p in enumerate(printed, 1)])


def test_bdevperf_latency_percentiles_and_histogram() -> None:
    """-ll: each job's percentiles, and its histogram (keyed by bucket ends) whose quantiles
    are the percentiles bdevperf printed and whose count is the job's I/Os."""
    parser = BdevperfParser()
    samples = parser.feed_text(spdk("bdevperf_v23.01_ll.txt")) + parser.finish()
    text = spdk("bdevperf_v23.01_ll.txt")
    for job in ("Nvme0n1", "Nvme1n1"):
        # the Latency summary's section of the job, up to the next job's
        section = text.split(f"Job: {job} (Core Mask")[2].split("=====")[0]
        printed = re.findall(r"^\s*(\d+\.\d+)% :\s+(\d+\.\d+)us$", section, re.M)
        got = pick(samples, "latency_seconds", SUMMARY, job=job)
        assert [(s.labels["quantile"], s.value) for s in got] == [
            (format((Decimal(p) / 100).normalize(), "f"), pytest.approx(float(v) * 1e-6))
            for p, v in printed]
        hist = [s for s in samples if s.metric == "latency_histogram" and s.labels["job"] == job]
        assert len(hist) == 1 and hist[0].histogram is not None
        h: LatencyHistogram = hist[0].histogram
        iops = one(samples, "iops", SUMMARY, job=job)
        assert hist[0].value == h.total() == pytest.approx(iops * 3.0, abs=1)
        q = h.quantiles([0.5, 0.99])
        assert q[0.5] == pytest.approx(one(got, "latency_seconds", quantile="0.5"), abs=1e-9)
        assert q[0.99] == pytest.approx(one(got, "latency_seconds", quantile="0.99"), abs=1e-9)
    parser = BdevperfParser()
    parser.histograms = False
    assert not [s for s in parser.feed_text(text) if s.metric == "latency_histogram"]


def test_bdevperf_perform_tests_json() -> None:
    text = spdk("bdevperf_v24.09_perform_tests.json.txt")
    doc = json.loads(text[text.index("{"):])
    samples = parse(BdevperfParser, "bdevperf_v24.09_perform_tests.json.txt")
    for r in doc["results"]:
        labels = {"job": r["job"], "core_mask": r["core_mask"], "op": "read"}
        got = [s for s in samples if s.labels in (labels, {**labels, "measure": "lat"})]
        values = {s.metric: s.value for s in got}
        assert values == {"iops": r["iops"], "bandwidth_bytes": r["mibps"] * MIB,
                          "latency_mean_seconds": r["avg_latency_us"] * 1e-6,
                          "latency_min_seconds": r["min_latency_us"] * 1e-6,
                          "latency_max_seconds": r["max_latency_us"] * 1e-6}
        assert {s.elapsed for s in got} == {r["runtime"]} and {s.kind for s in got} == {SUMMARY}


def test_bdevperf_runs_and_shutdown() -> None:
    """Two runs in one stream (bdevperf -z, two perform_tests): the second is run="2"; a run
    stopped by a signal takes the printed test time as its elapsed."""
    one_run = spdk("bdevperf_v22.05_S1.txt").split("Running I/O", 1)[1]
    head, tail = one_run.rsplit("\n Job: Malloc0", 1)  # before the final table
    stopped = (head + "\nReceived shutdown signal, test time was about 3.512000 seconds"
               "\n Job: Malloc0" + tail)
    samples, _ = parse_with(BdevperfParser, "Running I/O" + one_run + "Running I/O" + stopped)
    first = pick(samples, "iops", SUMMARY, job="Malloc0")
    assert [s.labels.get("run") for s in first] == [None, "2"]
    assert [s.elapsed for s in first] == [4.0, 3.512]


def test_nvme_perf_table_and_latency() -> None:
    for name, rows in (("spdk_nvme_perf_v18.01_L.txt", 1), ("spdk_nvme_perf_v24.01_tty_LL.txt", 2)):
        text = spdk(name)
        samples = parse(SpdkNvmePerfParser, name)
        row = re.compile(rf"^(.+?)\s+from core\s+(\d+):\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}\s+{NUM}$",
                         re.M)
        found = list(row.finditer(text))
        assert len(found) == rows
        for m in found:
            labels = {"job": m.group(1).strip(), "core": m.group(2)}
            got = {s.metric: s.value for s in samples if s.kind == SUMMARY and s.metric not in (
                "latency_seconds", "latency_histogram")
                and all(s.labels.get(k) == v for k, v in labels.items())}
            assert got == {"iops": float(m.group(3)), "bandwidth_bytes": float(m.group(4)) * MIB,
                           "latency_mean_seconds": pytest.approx(float(m.group(5)) * 1e-6),
                           "latency_min_seconds": pytest.approx(float(m.group(6)) * 1e-6),
                           "latency_max_seconds": pytest.approx(float(m.group(7)) * 1e-6)}
            # -L's title cuts the name to 43 characters: its percentiles are the row's job's
            assert len(pick(samples, "latency_seconds", SUMMARY, **labels)) == 15
        assert {s.elapsed for s in samples if s.kind == SUMMARY} == {4.0}


def test_nvme_perf_per_second_lines() -> None:
    """Per-second lines (stdout a terminal): the second's own I/Os; warm-up left out."""
    text = spdk("spdk_nvme_perf_v24.01_tty_LL.txt")
    samples = parse(SpdkNvmePerfParser, "spdk_nvme_perf_v24.01_tty_LL.txt")
    printed = re.findall(r"(\[warmup\] )?\s*(\d+) IOPS,\s+(\d+\.\d\d) MiB/s", text)
    kept = [(float(i), float(m)) for w, i, m in printed if not w]
    assert len(kept) == len(printed) - 1 == 4
    got = pick(samples, "iops", INTERVAL, job="all", op="write")
    assert [(s.elapsed, s.value) for s in got] == [(k, i) for k, (i, _) in enumerate(kept, 1)]
    assert [s.value for s in pick(samples, "bandwidth_bytes", INTERVAL)] == [
        m * MIB for _, m in kept]
    hist = SpdkNvmePerfParser()
    out = hist.feed_text(text) + hist.finish()
    assert len([s for s in out if s.metric == "latency_histogram"]) == 2


def test_bdevperf_ema_periods() -> None:
    """-P N: bdevperf prints an exponential moving average of the periods' rates
    (get_ema_io_per_second: EMA += (x - EMA) x 2 / (N + 1)); the periods' own come back."""
    rates = [1000.0, 3000.0, 2000.0, 2500.0]
    lines = ["./build/examples/bdevperf -q 8 -o 4096 -w randwrite -t 5 -S 1 -P 3",
             "Running I/O for 5 seconds..."]
    ema = 0.0
    for x in [*rates, 2200.0]:
        ema += (x - ema) * 2 / (3 + 1)
        lines += [" Job: Malloc0 (Core Mask 0x1)",
                  f"\t {'Malloc0':<20s}: {ema:10.2f} IOPS {ema * 4096 / 2**20:10.2f} MiB/s",
                  " " + "=" * 53, f" {'Total':<20s}: {ema:10.2f} IOPS {ema / 256:10.2f} MiB/s"]
    samples, _ = parse_with(BdevperfParser, "\n".join(lines))
    got = [s.value for s in pick(samples, "iops", INTERVAL, job="Malloc0")]
    assert got == pytest.approx(rates, abs=0.02)
    assert {s.labels["op"] for s in samples} == {"write"}
    assert not pick(samples, "latency_mean_seconds")
