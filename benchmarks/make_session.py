"""Make a large, realistic session file: 16 hosts for 24 hours (for replay's open, seek and
memory benchmarks, and anyone who needs a big recording).

Every host runs an ``iostat -x`` monitor of 4 NVMe devices for the whole day and a fio step
(2 jobs, json+ with latency histograms) for 55 minutes of every hour, 24 steps in all (random
and sequential reads, writes and mixes, six workloads in turn, each step named apart:
``randread-4k-1`` ... ``randrw-16k-4``; 5-minute pauses between them). What is written is
what the live session would have recorded:

- iostat: text blocks in sysstat 12's ``-x -t`` layout with plausible numbers, parsed by
  benchtui's real iostat parser (so the samples are the parser's), and the text kept;
- fio: the samples the fio json+ parser gives for 2 jobs x read/write (iops, bandwidth,
  clat/slat/lat means, clat percentiles, the interval's latency histogram), with histograms
  drawn from the buckets of a real capture (benchmarks/captures), scaled and jittered, and the
  percentiles taken from them as the parser takes them; summaries at the end of each step;
- events as the engine emits them: host states and facts, session start/end, step and run
  start/end, a reconnect (h07, 12 s without data: a gap), parse warnings, user marks, and a
  host that fails for good (h12, hour 20).

The records are written with the real ``SessionWriter`` in half-second frames, as the recorder
writes them. About 25-40 minutes of one core and ~2.5 GB (16 x 24 host-hours).

    .venv/bin/python benchmarks/make_session.py [-o /var/tmp/benchtui-24h-16hosts.btr]
        [--hosts 16] [--hours 24]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui import __version__  # noqa: E402
from benchtui.model import events as ev  # noqa: E402
from benchtui.model.events import Event, OutputLines  # noqa: E402
from benchtui.model.fio_buckets import DEFAULT_BITS  # noqa: E402
from benchtui.model.histogram import LatencyHistogram  # noqa: E402
from benchtui.model.sample import Sample, quantile_label  # noqa: E402
from benchtui.parsers.fio_json import FioJsonParser  # noqa: E402
from benchtui.parsers.iostat import IostatParser  # noqa: E402
from benchtui.store.recording import SCHEMA_VERSION, Record, SessionMeta, SessionWriter  # noqa: E402
from benchtui.store.recording.writer import FLUSH_SECONDS  # noqa: E402

CAPTURE = ROOT / "benchmarks" / "captures" / "fio-json-plus-2jobs.json"
DEVICES = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")
START = 1_793_491_200.0  # 2026-11-01 00:00:00 UTC
STEP_SECONDS = 55 * 60
PAUSE_SECONDS = 5 * 60
#: (name, bs, read share, IOPS per job around)
WORKLOADS = [("randread-4k", 4096, 1.0, 90_000), ("randwrite-4k", 4096, 0.0, 60_000),
             ("randrw-4k", 4096, 0.7, 70_000), ("seqread-128k", 131072, 1.0, 12_000),
             ("seqwrite-128k", 131072, 0.0, 9_000), ("randrw-16k", 16384, 0.5, 40_000)]
QUANTILES = [(q, quantile_label(p)) for p, q in
             ((50.0, 0.5), (90.0, 0.9), (99.0, 0.99), (99.9, 0.999), (99.99, 0.9999))]
IOSTAT_HEADER = ("Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     "
                 "wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm "
                 "d_await dareq-sz     f/s f_await  aqu-sz  %util")

Timed = tuple[float, Record]


def histogram_pool(rng: random.Random, size: int = 2000) -> list[dict[int, int]]:
    """Shapes of real per-interval histograms (normalised), jittered: ``size`` variants."""
    parser = FioJsonParser(host="x", source="capture")
    shapes = []
    for s in [*parser.feed_text(CAPTURE.read_text(), None), *parser.finish()]:
        if s.histogram is not None and s.histogram.total() > 1000:
            total = s.histogram.total()
            shapes.append({k: v / total for k, v in s.histogram.counts.items()})
    pool = []
    for i in range(size):
        shape = shapes[i % len(shapes)]
        pool.append({k: p * rng.uniform(0.8, 1.2) for k, p in shape.items()})
    return pool


class Host:
    """One simulated host: its iostat parser and its fio state."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name = name
        self.rng = rng
        self.iostat = IostatParser(host=name, source=f"{name}:iostat")
        self.step = "-"
        self.busy = 0.0  # 0..1: how hard the disks work (a step runs)
        self.alive = True

    def iostat_block(self, t: float) -> list[str]:
        rng, busy = self.rng, self.busy
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))
        user, system, iowait = rng.uniform(5, 25) * busy, rng.uniform(5, 30) * busy, \
            rng.uniform(0, 10) * busy
        idle = max(0.0, 100 - user - system - iowait)
        lines = ["", stamp, "avg-cpu:  %user   %nice %system %iowait  %steal   %idle",
                 f"          {user:6.2f}    0.00  {system:6.2f}  {iowait:6.2f}    0.00  "
                 f"{idle:6.2f}", "", IOSTAT_HEADER]
        for dev in DEVICES:
            r = rng.uniform(0.8, 1.2) * 40_000 * busy
            w = rng.uniform(0.8, 1.2) * 25_000 * busy
            lines.append(
                f"{dev:<12} {r:9.2f} {r * 4:9.2f} {0:8.2f} {0:6.2f} {rng.uniform(0.05, 0.4):7.2f} "
                f"{4.0:8.2f} {w:9.2f} {w * 4:9.2f} {0:8.2f} {0:6.2f} {rng.uniform(0.01, 0.2):7.2f} "
                f"{4.0:8.2f} {0:7.2f} {0:9.2f} {0:8.2f} {0:6.2f} {0:7.2f} {0:8.2f} "
                f"{rng.uniform(0, 2):7.2f} {0:7.2f} {rng.uniform(0, 32) * busy:7.2f} "
                f"{min(100.0, rng.uniform(90, 110) * busy):6.2f}")
        lines.append("")
        return lines

    def iostat_samples(self, lines: list[str], t: float) -> list[Sample]:
        samples = self.iostat.feed_text("\n".join(lines), t)
        for s in samples:
            s.labels = {**s.labels, "step": self.step}
        return samples


def fio_samples(host: Host, t: float, elapsed: float, workload: tuple[str, int, float, int],
                pool: list[dict[int, int]], bits: int = DEFAULT_BITS) -> list[Sample]:
    """One interval of fio json+ samples for 2 jobs, as the parser gives them and the engine
    passes them on: the percentiles are the parser's (exact), the histogram is brought to the
    session's ``bits`` as the engine does before any sink sees it."""
    name, bs, read_share, iops = workload
    rng = host.rng
    dt = rng.choice((0.999, 1.0, 1.001, 1.002))
    out: list[Sample] = []
    for job in ("0", "1"):
        for op, share in (("read", read_share), ("write", 1 - read_share)):
            if share <= 0:
                continue
            labels = {"job": f"{name}#{job}", "op": op}
            n = max(1, round(iops * share * rng.uniform(0.9, 1.1)))
            shape = pool[rng.randrange(len(pool))]
            scale = n / sum(shape.values())
            counts = {k: c for k, p in shape.items() if (c := round(p * scale))}
            hist = LatencyHistogram(counts)
            total = hist.total()

            def add(metric: str, value: float, extra: dict[str, str] | None = None,
                    h: LatencyHistogram | None = None, labels: dict[str, str] = labels) -> None:
                out.append(Sample(t, "fio", "interval", metric, value,
                                  {**labels, **(extra or {}), "step": name}, host.name,
                                  elapsed, h))

            add("iops", total / dt)
            add("bandwidth_bytes", total * bs / dt)
            mean = hist.mean() or 0.0
            for measure, m in (("clat", mean), ("slat", mean * 0.03), ("lat", mean * 1.03)):
                add("latency_mean_seconds", m * rng.uniform(0.999, 1.001),
                    {"measure": measure})
            found = hist.quantiles(q for q, _ in QUANTILES)
            for q, label in QUANTILES:
                if q in found:
                    add("latency_seconds", found[q], {"measure": "clat", "quantile": label})
            add("latency_histogram", float(total), {"measure": "clat"}, hist.coarsened(bits))
    return out


def make(path: Path, hosts_n: int, hours: float, seed: int = 1,
         bits: int = DEFAULT_BITS) -> None:
    rng = random.Random(seed)
    pool = histogram_pool(rng)
    names = [f"h{i:02d}" for i in range(1, hosts_n + 1)]
    hosts = [Host(n, random.Random(rng.random())) for n in names]
    meta = SessionMeta(SCHEMA_VERSION, "day-of-fio", "20261101-000000-bench", PLAN_TEXT,
                       "examples/day-of-fio.toml", START, None, hosts=names,
                       writer=__version__, histogram_bits=bits)
    writer = SessionWriter(str(path), meta)
    end = START + hours * 3600
    pending: list[Timed] = []
    next_flush = START + FLUSH_SECONDS

    def emit(t: float, record: Record) -> None:
        nonlocal next_flush
        while t >= next_flush:
            writer.append(pending)
            pending.clear()
            next_flush += FLUSH_SECONDS
        pending.append((t, record))

    def event(t: float, kind: str, message: str, **kw: object) -> None:
        emit(t, Event(t, kind, message, **kw))  # type: ignore[arg-type]

    t = START
    for h in hosts:
        event(t, ev.HOST_STATE, f"{h.name}: up", host=h.name, data={"state": "up"})
        event(t + 0.3, ev.FACTS, f"{h.name}: Debian GNU/Linux 12, kernel 6.1.0, 64 CPUs",
              host=h.name, data={"facts": facts(h.name)})
    event(t + 1, ev.SESSION_START, "session day-of-fio (20261101-000000-bench)")
    second = 0
    step_index = -1
    step_started = 0.0
    workload = WORKLOADS[0]
    reconnect = (START + 5 * 3600 + 100, START + 5 * 3600 + 112)
    failed_at = START + 20 * 3600 + 1234
    while START + second + 2 < end:
        now = START + 2 + second
        in_hour = (second % 3600)
        if in_hour == 0:  # a step starts
            step_index += 1
            workload = step_workload(step_index)
            step_started = now
            alive = [h.name for h in hosts if h.alive]
            event(now, ev.STEP_START, f"step {workload[0]} on {len(alive)} hosts",
                  step=workload[0], data={"hosts": alive, "tool": "fio",
                                          "expected_seconds": STEP_SECONDS,
                                          "index": step_index, "repeat": 1})
            for h in hosts:
                if h.alive:
                    h.step, h.busy = workload[0], 1.0
                    event(now + 0.05, ev.RUN_START, f"{h.name}: fio started", host=h.name,
                          step=workload[0], data={"command": "fio ..."})
        if in_hour == STEP_SECONDS:  # it ends
            for h in hosts:
                if h.alive:
                    emit(now, fio_summary(h, now, workload))
                    event(now + 0.01, ev.RUN_END, f"{h.name}: fio exited with status 0",
                          host=h.name, step=workload[0], data={"status": 0})
                    h.busy = 0.02
            event(now + 0.1, ev.STEP_END, f"step {workload[0]} done in {STEP_SECONDS} s",
                  step=workload[0], data={"ok": True, "seconds": STEP_SECONDS})
        if now >= failed_at and hosts[11 % len(hosts)].alive and len(hosts) > 11:
            h = hosts[11]
            h.alive = False
            event(now, ev.HOST_STATE, f"{h.name}: failed (connection lost)", level=ev.ERROR,
                  host=h.name, data={"state": "failed"})
        for h in hosts:
            if not h.alive or (reconnect[0] <= now < reconnect[1] and h.name == "h07"):
                continue
            jitter = h.rng.uniform(0.0, 0.3)
            lines = h.iostat_block(now + jitter)
            emit(now + jitter, OutputLines(now + jitter, h.name, h.step, "iostat", "monitor",
                                           tuple(lines)))
            samples = h.iostat_samples(lines, now + jitter)
            if samples:
                emit(now + jitter + 0.001, samples)
            if h.busy >= 1.0 and in_hour < STEP_SECONDS:
                tf = now + 0.5 + jitter
                emit(tf, fio_samples(h, round(tf, 3), float(in_hour + 1), workload, pool, bits))
        if reconnect[0] == now:
            event(now, ev.HOST_STATE, "h07: reconnecting", level=ev.WARNING, host="h07",
                  data={"state": "reconnecting"})
        if reconnect[1] == now:
            event(now, ev.HOST_STATE, "h07: running", host="h07", data={"state": "running"})
        if second % 7919 == 0 and second:
            event(now + 0.7, ev.PARSE_WARNING, "h03:iostat line 12: unexpected column count",
                  level=ev.WARNING, host="h03", step=workload[0])
        if second in (3 * 3600 + 10, 9 * 3600 + 1800, 17 * 3600 + 42):
            event(now + 0.2, ev.MARK, f"mark: note at {time.strftime('%H:%M', time.gmtime(now))}")
        second += 1
        if second % 3600 == 0:
            print(f"  {second / 3600:.0f} h written, {path.stat().st_size / 1e9:.2f} GB",
                  file=sys.stderr, flush=True)
    del step_started
    event(end - 1, ev.SESSION_END, "done with 1 failure(s)", level=ev.ERROR)
    emit(end, [])
    writer.append(pending)
    writer.close(ended=end)


def step_workload(index: int) -> tuple[str, int, float, int]:
    """The ``index``-th step (0-based): the workloads in turn, each step named apart, as a
    plan's steps are (``randread-4k-1`` ... ``randread-4k-4``): a report's rows are per step
    name."""
    name, bs, share, iops = WORKLOADS[index % len(WORKLOADS)]
    return (f"{name}-{index // len(WORKLOADS) + 1}", bs, share, iops)


def fio_summary(h: Host, t: float, workload: tuple[str, int, float, int]) -> list[Sample]:
    name, bs, read_share, iops = workload
    out = []
    for job in ("0", "1"):
        for op, share in (("read", read_share), ("write", 1 - read_share)):
            if share > 0:
                labels = {"job": f"{name}#{job}", "op": op, "step": name}
                out.append(Sample(t, "fio", "summary", "iops", iops * share, dict(labels),
                                  h.name, float(STEP_SECONDS)))
                out.append(Sample(t, "fio", "summary", "bandwidth_bytes", iops * share * bs,
                                  dict(labels), h.name, float(STEP_SECONDS)))
    return out


def facts(name: str) -> dict[str, object]:
    return {"hostname": name, "kernel": "6.1.0-27-amd64", "arch": "x86_64",
            "os": "Debian GNU/Linux 12 (bookworm)", "cpu_model": "AMD EPYC 7543 32-Core",
            "cpu_count": 64, "mem_bytes": 256 * 2**30,
            "block_devices": {d: {"name": d, "size_bytes": 3_840_000_000_000, "rotational": False,
                                  "model": "SAMSUNG MZQL23T8HCLS", "scheduler": "none",
                                  "read_ahead_kb": 128} for d in DEVICES},
            "mounts": [], "tools": {"fio": "fio-3.33", "iostat": "sysstat 12.6.1"},
            "tool_paths": {"fio": "/usr/bin/fio", "iostat": "/usr/bin/iostat"}, "files": {}}


PLAN_TEXT = "\n".join([
    "[session]", 'name = "day-of-fio"', "", "[hosts.h01]", 'address = "10.0.0.1"', "# ...",
    "", "[[monitor]]", 'tool = "iostat"', "",
    *(f'[[step]]\nname = "{w[0]}"\ntool = "fio"\nhosts = "all"\n'
      f'args = "--filename=/dev/nvme0n1 --bs={w[1]} --numjobs=2 --runtime={STEP_SECONDS}"\n'
      for w in map(step_workload, range(24))), ""])


def measure(path: Path) -> list[str]:
    """What reading the file costs with ``SessionReader``: open, windows at random times."""
    import resource
    import statistics

    from benchtui.store.recording import SessionReader

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    reader = SessionReader.open(str(path))
    opened = time.perf_counter() - t
    rng = random.Random(2)
    seeks, counts = [], []
    with reader:
        for _ in range(30):
            at = rng.uniform(reader.start, reader.end - 1)
            t = time.perf_counter()
            records = list(reader.records(at, at + 1.0))
            seeks.append(time.perf_counter() - t)
            counts.append(sum(len(r) if isinstance(r, list) else 1 for r in records))
        info = (f"{reader.host_count} hosts, {(reader.end - reader.start) / 3600:.1f} h, "
                f"{reader.segment_count} segments, {reader.sample_count:,} samples, "
                f"{reader.event_count} events, {len(reader.gaps())} gaps, "
                f"{reader.size_bytes / 1e9:.2f} GB")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return [f"- The file: {info}.",
            f"- `SessionReader.open`: {opened * 1000:.1f} ms (index read from the end).",
            f"- Reading the records of one second (~{statistics.median(counts):.0f} samples "
            f"and records) at 30 random times: median {statistics.median(seeks) * 1000:.0f} "
            f"ms, max {max(seeks) * 1000:.0f} ms (a segment is decompressed and decoded from "
            "its start up to the second asked for; replay's own numbers are in "
            "docs/replay.md).",
            f"- Peak RSS of this process while reading: {rss / 1024:.0f} MiB "
            f"({(rss - rss0) / 1024:.0f} MiB more than before opening)."]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path,
                    default=Path("/var/tmp/benchtui-24h-16hosts.btr"))
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--histogram-bits", type=int, default=DEFAULT_BITS, choices=range(1, 7),
                    help="latency histogram resolution, as the engine's --histogram-bits "
                    f"(default {DEFAULT_BITS}, the engine's default; 6: fio's own, exact)")
    ap.add_argument("--measure", action="store_true",
                    help="only measure reading an existing file")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "benchmarks" / "recording.md"),
                    help="Markdown file to write the numbers into ('-': none)")
    args = ap.parse_args()
    lines = []
    if not args.measure:
        if args.output.exists():
            print(f"{args.output} exists; remove it first", file=sys.stderr)
            return 2
        t0, c0 = time.monotonic(), time.process_time()
        make(args.output, args.hosts, args.hours, bits=args.histogram_bits)
        size = args.output.stat().st_size
        lines.append(
            f"- Made by `.venv/bin/python benchmarks/make_session.py --hosts {args.hosts} "
            f"--hours {args.hours:g} --histogram-bits {args.histogram_bits}`: {size / 1e9:.2f} GB "
            f"({size / 1e6 / args.hosts / args.hours:.2f} MB per host-hour) in "
            f"{time.monotonic() - t0:.0f} s ({time.process_time() - c0:.0f} s CPU; load "
            f"average {os.getloadavg()[0]:.1f} at the end).")
    lines += measure(args.output)
    text = "\n".join(lines)
    print(text)
    if args.doc != "-":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from recording_size import write_section

        write_section(Path(args.doc), "bigsession", "\n".join(
            ["<!-- bigsession -->", "", f"Run on {time.strftime('%Y-%m-%d %H:%M')}.", "",
             text, "", "<!-- /bigsession -->"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
