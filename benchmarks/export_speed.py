"""What the Prometheus exporter costs: a scrape of a busy fleet, the collector's work on every
sample batch, and ``benchtui dump --format openmetrics``'s writer.

Data: the real captures in benchmarks/captures/ (fio json+ with 2 jobs at 1 Hz, iostat -x -t),
parsed by the real parsers. Each host gets, every second, one fio interval (IOPS, bandwidth,
mean latency, 5 percentiles and the latency histogram per job and direction) and one iostat
report whose device lines are copied to 8 devices (the issue's reference host), times moved on
by one second per interval. Writes docs/benchmarks/export.md (or --out FILE, - for stdout):

    .venv/bin/python benchmarks/export_speed.py [--hosts 16 64] [--seconds 60] [--dump-seconds 3600]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prometheus_client.exposition import generate_latest  # noqa: E402

from benchtui.export.openmetrics import OpenMetricsWriter  # noqa: E402
from benchtui.export.prometheus import FleetCollector  # noqa: E402
from benchtui.model.sample import INTERVAL, Sample  # noqa: E402
from benchtui.parsers.fio_json import FioJsonParser  # noqa: E402
from benchtui.parsers.iostat import IostatParser  # noqa: E402
from benchtui.store.fleet import FleetState  # noqa: E402

CAPTURES = ROOT / "benchmarks" / "captures"
DEVICES = 8


def _parse(parser_cls: type, path: Path) -> list[Sample]:
    parser = parser_cls(host="h", source=path.name)
    text = path.read_text(encoding="utf-8")
    out: list[Sample] = []
    for line in text.split("\n"):
        out.extend(parser.feed(line, None))
    out.extend(parser.finish())
    return [s for s in out if s.kind == INTERVAL and s.t is not None]


def templates() -> list[list[Sample]]:
    """One batch per second for one host: a fio interval plus an iostat report (8 devices)."""
    fio: dict[float, list[Sample]] = defaultdict(list)
    for s in _parse(FioJsonParser, CAPTURES / "fio-json-plus-2jobs.json"):
        assert s.t is not None
        fio[round(s.t)].append(s)
    iostat: dict[float, list[Sample]] = defaultdict(list)
    for s in _parse(IostatParser, CAPTURES / "iostat-x-t.txt"):
        assert s.t is not None
        if "device" in s.labels:
            for i in range(DEVICES):
                iostat[s.t].append(Sample(s.t, s.tool, s.kind, s.metric, s.value,
                                          {**s.labels, "device": f"nvme{i}n1"}))
        else:
            iostat[s.t].append(s)
    fio_batches = [fio[k] for k in sorted(fio)]
    io_batches = [iostat[k] for k in sorted(iostat)]
    return [fio_batches[i % len(fio_batches)] + io_batches[i % len(io_batches)]
            for i in range(max(len(fio_batches), len(io_batches)))]


def batch_at(template: list[Sample], host: str, t: float) -> list[Sample]:
    return [Sample(t, s.tool, s.kind, s.metric, s.value, {**s.labels, "step": "randrw"}, host,
                   s.elapsed, s.histogram) for s in template]


def fleet_batches(hosts: int, seconds: int) -> list[list[Sample]]:
    base = templates()
    return [batch_at(base[i % len(base)], f"host{h:03d}", 1.8e9 + i)
            for i in range(seconds) for h in range(hosts)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scrape_cost(hosts: int, seconds: int) -> dict[str, float]:
    clock = Clock()
    state = FleetState("bench")
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    batches = fleet_batches(hosts, seconds)
    for i, batch in enumerate(batches):
        clock.now = i // hosts
        state.on_samples(batch)
    clock.now += 0.5
    ours, theirs = [], []
    body = b""
    for _ in range(15):
        t0 = time.perf_counter()
        body = collector.render()
        ours.append(time.perf_counter() - t0)
    for _ in range(5):
        t0 = time.perf_counter()
        generate_latest(collector)  # type: ignore[arg-type]
        theirs.append(time.perf_counter() - t0)
    lines = [x for x in body.split(b"\n") if x and not x.startswith(b"#")]
    return {"hosts": hosts, "series": len(lines), "bytes": len(body),
            "median_ms": statistics.median(ours) * 1000, "max_ms": max(ours) * 1000,
            "library_ms": statistics.median(theirs) * 1000}


def listener_cost(hosts: int, seconds: int) -> dict[str, float]:
    batches = fleet_batches(hosts, seconds)
    samples = sum(len(b) for b in batches)
    results = {}
    for attached in (False, True):
        best = float("inf")
        for _ in range(3):
            state = FleetState("bench")
            collector = FleetCollector(state)
            if attached:
                collector.attach()
            t0 = time.perf_counter()
            for batch in batches:
                state.on_samples(batch)
            best = min(best, time.perf_counter() - t0)
        results[attached] = best
    return {"samples": samples, "without_us": results[False] / samples * 1e6,
            "with_us": results[True] / samples * 1e6}


def dump_cost(seconds: int) -> dict[str, float]:
    base = templates()
    batches = [batch_at(base[i % len(base)], "db1", 1.8e9 + i) for i in range(seconds)]
    samples = sum(len(b) for b in batches)
    out = io.StringIO()
    t0 = time.perf_counter()
    with OpenMetricsWriter(out) as writer:
        for batch in batches:
            writer.write(batch)
    elapsed = time.perf_counter() - t0
    return {"samples": samples, "seconds": elapsed, "per_s": samples / elapsed,
            "bytes": len(out.getvalue().encode())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--dump-seconds", type=int, default=3600)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "export.md"))
    args = ap.parse_args()
    load = os.getloadavg()
    rows = [scrape_cost(h, args.seconds) for h in args.hosts]
    listen = listener_cost(args.hosts[0], args.seconds)
    dump = dump_cost(args.dump_seconds)
    text = f"""# Exporter costs

Measured by `benchmarks/export_speed.py` (`{' '.join(sys.argv[1:]) or 'defaults'}`) on
{platform.node()} ({os.cpu_count()} CPUs, Python {platform.python_version()}), load average
{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start (the machine is shared: numbers are
upper bounds). Per host and second: one fio json+ interval (2 jobs) and one iostat -x report of
{DEVICES} devices, from the real captures in benchmarks/captures/, parsed by the real parsers.

## A scrape, {args.seconds} s of data fed

What `/metrics` does per request: `FleetCollector.render()` (text format; OpenMetrics costs the
same). For comparison, prometheus_client's own `generate_latest()` of the same collector (its
`collect()`), which the endpoint does not use because of this cost.

| hosts | series exported | body | median | max | prometheus_client rendering (median) |
|---|---|---|---|---|---|
""" + "".join(f"| {r['hosts']:.0f} | {r['series']:.0f} | {r['bytes'] / 1024:.0f} KiB | "
              f"{r['median_ms']:.1f} ms | {r['max_ms']:.1f} ms | {r['library_ms']:.1f} ms |\n"
              for r in rows) + f"""
A scrape runs on the HTTP server's thread, and holds the GIL the session's event loop needs:
with 1 s scrapes the median is about the share of a core the exporter takes (plus the listener
below), whatever the session's length. Histograms are about half of the series (44 buckets, a
count and a sum per host, job and direction).

## The collector's work on every batch (FleetState.on_samples), {args.hosts[0]} hosts

| | per sample |
|---|---|
| FleetState alone | {listen['without_us']:.2f} us |
| with the collector listening (arrival times, histogram counters) | {listen['with_us']:.2f} us |

({listen['samples']:.0f} samples; best of 3.)

## `dump --format openmetrics` writer: one host, {args.dump_seconds} s

{dump['samples']:.0f} samples written in {dump['seconds']:.1f} s ({dump['per_s']:.0f} samples/s),
{dump['bytes'] / 2**20:.0f} MiB of OpenMetrics text (the histograms' 44 buckets per point are
most of it).
"""
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
