"""How big a session file is: the reference session of issue 5, extended to an hour, and
where its bytes go.

The reference: one host, fio randrw with two jobs (4 KiB, libaio, iodepth 16, direct) in json+
at 1 Hz with its per-interval latency histograms, and ``iostat -x`` of every device at 1 Hz.
The script

1. takes a real minute of it: by default the one kept in ``benchmarks/captures/
   reference-minute.btr`` (recorded on this project's 2-core VM on 2026-11-27 with the
   machine loaded, so fio's latencies are spread wide: ~1,300 of fio's buckets a second;
   the same input for every code that is measured), or with ``--record`` a new one: that
   plan run for ``--seconds`` (60) through benchtui's real engine with the real recorder
   attached (``benchtui.cli.record_cmd.recording``), at fio's own histogram resolution
   (``histogram_bits`` = 6, exact), counting the raw output the tools printed;
2. extends the minute to ``--hours`` (1) the way a longer run would look: the recorded
   minute's records again and again, times advanced, every value jittered (floats by ~1%,
   integers and decimals kept integral / to their decimals, each histogram count by a rounded
   N(0, 0.5)), then each histogram brought to the session's resolution with the function the
   engine applies (``LatencyHistogram.coarsened``: what a session at that ``histogram_bits``
   records), written with the real writer in the frames the recorder makes (a frame is
   sealed ``FLUSH_SECONDS`` after its first record arrived: ``Recorder``): at the default
   resolution (4 bits), at fio's own (6), and at 3 bits for comparison;
3. measures what takes the room: the same hour without histograms, without raw text, without
   the figure track; every frame kind's bytes and every part of the DATA frames' bodies
   (``recording_bytes.py``); how close the histograms are to what they must cost at least
   (the order-0 entropy of the count differences, a rough floor for any coder that stores
   them exactly), and how far the percentiles of the coarse histograms are from the exact
   ones;
4. with ``--code DIR`` (a checkout of the code before, e.g. ``git worktree add /tmp/old
   main``), extends the same minute with that checkout's own writer and its own
   ``recording_size.extend`` (in a process of its own, run from DIR), side by side;
5. writes the results into docs/benchmarks/recording.md (between the ``size`` markers).

    .venv/bin/python benchmarks/recording_size.py [--hours 1] [--code /tmp/old]
        [--record [--seconds 60] [--save-minute FILE]] [--minute FILE] [--out FILE|-]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from recording_bytes import account, data_bodies, tables  # noqa: E402

from benchtui.cli.record_cmd import recording  # noqa: E402
from benchtui.model.events import Event, OutputLines  # noqa: E402
from benchtui.model.fio_buckets import DEFAULT_BITS, FIO_PLAT_BITS, relative_error  # noqa: E402
from benchtui.model.histogram import LatencyHistogram  # noqa: E402
from benchtui.model.sample import Sample  # noqa: E402
from benchtui.parsers.registry import all_parsers  # noqa: E402
from benchtui.plan.loader import load_plan  # noqa: E402
from benchtui.session.engine import Session, SessionOptions  # noqa: E402
from benchtui.session.figure_track import FigureRecorder  # noqa: E402
from benchtui.session.ghost_digest import GhostDigest  # noqa: E402
from benchtui.store.recording import Record, SessionReader, SessionWriter  # noqa: E402
from benchtui.store.recording.writer import (  # noqa: E402
    FLUSH_SECONDS,
    SMALL_PARAMETERS,
    ZSTD_LEVEL,
)

OUT_MD = ROOT / "docs" / "benchmarks" / "recording.md"
REFERENCE_MINUTE = ROOT / "benchmarks" / "captures" / "reference-minute.btr"
#: Issue 5 asked for 4 MB per host-hour, issue 32 for 3.5.
BUDGET_MB_PER_HOST_HOUR = 3.5
PLAN = """[session]
name = "reference"
description = "issue 5 reference: fio randrw 2 jobs json+ 1 Hz + iostat -x of all devices"

[hosts.here]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "randrw"
tool = "fio"
hosts = "all"
args = \"\"\"
  --filename={scratch}/benchtui-recording-size.dat --size=256m --numjobs=2
  --rw=randrw --bs=4k --ioengine=libaio --iodepth=16 --direct=1
  --runtime={seconds} --time_based
\"\"\"
"""

Timed = tuple[float, Record]
QUANTILES = (0.5, 0.9, 0.99, 0.999)
#: A coarser resolution, measured for comparison.
FALLBACK_BITS = 3


def record_reference(workdir: Path, seconds: int) -> tuple[Path, dict[str, int]]:
    """Run the reference plan for real with the recorder; (file, raw output bytes per tool)."""
    scratch = Path("/var/tmp")  # /tmp is often tmpfs, which refuses direct=1
    plan_path = workdir / "reference.toml"
    plan_path.write_text(PLAN.format(scratch=scratch, seconds=seconds))
    plan = load_plan(str(plan_path), parser_names=all_parsers())
    raw: Counter[str] = Counter()

    def count(out: OutputLines) -> None:
        raw[out.tool] += sum(len(line.encode()) + 1 for line in out.lines)

    session = Session(plan, options=SessionOptions(histogram_bits=FIO_PLAT_BITS))
    session.add_output_sink(count)
    path = workdir / "reference-minute.btr"
    with recording(session, str(path)):
        result = asyncio.run(session.run())
    (scratch / "benchtui-recording-size.dat").unlink(missing_ok=True)
    if not result.ok:
        raise SystemExit(f"the reference run failed: {result.failures}")
    return path, dict(raw)


def _jitter_value(v: float, rng: random.Random) -> float:
    if type(v) is not float or not math.isfinite(v) or v == 0:
        return v
    g = 1 + rng.gauss(0, 0.01)
    if v.is_integer():
        return float(round(v * g))
    text = repr(v)
    if "e" not in text and len(text.partition(".")[2]) <= 4:
        return round(v * g, len(text.partition(".")[2]))
    return v * g


def _jitter_histogram(h: LatencyHistogram, rng: random.Random) -> LatencyHistogram:
    counts = {}
    for k, c in h.counts.items():
        c2 = max(0, c + round(rng.gauss(0, 0.5))) if c > 1 else c
        if c2:
            counts[k] = c2
    return LatencyHistogram(counts)


def _shift(record: Record, dt: float, rng: random.Random, bits: int) -> Record:
    if isinstance(record, Event):
        return replace(record, t=record.t + dt)
    if isinstance(record, OutputLines):
        return replace(record, t=record.t + dt)
    out = []
    for s in record:
        hist = None
        if s.histogram is not None:
            hist = _jitter_histogram(s.histogram, rng).coarsened(bits)
        if hist is not None:
            value = float(hist.total())
        elif s.metric == "latency_seconds":
            value = s.value  # a histogram bucket: kept as it is
        else:
            value = _jitter_value(s.value, rng)
        out.append(Sample(None if s.t is None else s.t + dt, s.tool, s.kind, s.metric, value,
                          dict(s.labels), s.host,
                          None if s.elapsed is None else s.elapsed + dt, hist))
    return out


def extend(minute: Path, target: Path, seconds: float, *, bits: int = DEFAULT_BITS,
           keep_histograms: bool = True, keep_output: bool = True, keep_figures: bool = True,
           seed: int = 1) -> tuple[float, float]:
    """Write ``seconds`` of the minute's steady part, repeated and jittered, its histograms at
    ``bits``, with the figure track the recorder computes (``keep_figures``): (file size in
    bytes, seconds covered)."""
    rng = random.Random(seed)
    with SessionReader.open(str(minute)) as r:
        meta = r.meta
        events = r.events()
        step = [e.t for e in events if e.kind in ("step_start", "step_end")]
        a, b = (step[0] + 2.0, step[-1] - 1.0) if len(step) >= 2 else (r.start, r.end)
        part = list(r.timed_records(a, b))
    cycle = b - a
    digest = GhostDigest()
    writer = SessionWriter(str(target), replace(meta, facts=dict(meta.facts),
                                                histogram_bits=bits,
                                                figures=digest.name if keep_figures else None))
    figures = FigureRecorder(digest, writer.add_figures) if keep_figures else None
    if figures is not None:  # the track of the step the hour stays in
        for e in events:
            if e.kind == "step_start":
                figures.on_event(e)
                break
    frame: list[Timed] = []
    k = 0
    covered = 0.0
    while covered < seconds:
        dt = k * cycle
        for t, record in part:
            if not keep_output and isinstance(record, OutputLines):
                continue
            if isinstance(record, Event) and k:
                continue  # the minute's step events, once
            shifted = _shift(record, dt, rng, bits)
            if not keep_histograms and isinstance(shifted, list):
                shifted = [replace(s, histogram=None) for s in shifted
                           if s.metric != "latency_histogram"]
            if frame and t + dt >= frame[0][0] + FLUSH_SECONDS:
                # the recorder seals a frame FLUSH_SECONDS after its first record arrived
                writer.append(frame)
                frame = []
            frame.append((t + dt, shifted))
            if figures is not None and isinstance(shifted, list):
                figures.on_samples(shifted, t + dt)
        k += 1
        covered = k * cycle
    writer.append(frame)
    writer.close()
    return target.stat().st_size, covered


def histogram_floor(minute: Path, bits: int) -> tuple[float, int, float]:
    """(bytes per second the order-0 entropy of the histograms' count differences needs,
    buckets per second, histograms per second) over the recorded minute at ``bits``."""
    diffs: Counter[int] = Counter()
    buckets = 0
    hists = 0
    with SessionReader.open(str(minute)) as r:
        times = []
        for s in r.samples(metrics=["latency_histogram"]):
            if s.histogram is None or s.kind != "interval":
                continue
            hists += 1
            times.append(s.t)
            previous = 0
            for _k, c in sorted(s.histogram.coarsened(bits).counts.items()):
                diffs[c - previous] += 1
                previous = c
                buckets += 1
    n = sum(diffs.values())
    bits = -sum(v * math.log2(v / n) for v in diffs.values()) if n else 0.0
    span = (max(times) - min(times)) if len(times) > 1 else 1.0
    return bits / 8 / span, round(buckets / span), hists / span


def percentile_errors(minute: Path, bits: int) -> dict[float, float]:
    """The largest relative error of each percentile read from the minute's histograms at
    ``bits``, against the same percentile read from them at fio's own resolution."""
    worst = dict.fromkeys(QUANTILES, 0.0)
    with SessionReader.open(str(minute)) as r:
        for s in r.samples(metrics=["latency_histogram"]):
            if s.histogram is None or s.kind != "interval" or not s.histogram:
                continue
            exact = s.histogram.quantiles(QUANTILES)
            coarse = s.histogram.coarsened(bits).quantiles(QUANTILES)
            for q in QUANTILES:
                worst[q] = max(worst[q], abs(coarse[q] - exact[q]) / exact[q])
    return worst


def extend_with(code: Path, minute: Path, seconds: float, work: Path
                ) -> tuple[int, float, int]:
    """(size, seconds covered, DATA frames) of the minute extended by another checkout's
    own ``recording_size.extend`` and writer (a process of its own, run from ``code``)."""
    out = work / "hour-before.btr"
    script = ("import sys; sys.path[:0] = ['.', 'benchmarks']\n"
              "from pathlib import Path\nimport recording_size as rs\n"
              f"size, covered = rs.extend(Path({str(minute)!r}), Path({str(out)!r}), "
              f"{seconds!r})\nprint(size, covered)")
    done = subprocess.run([sys.executable, "-c", script], cwd=code, capture_output=True,
                          text=True, check=True)
    size, covered = done.stdout.split()[-2:]
    frames = account(out)["frames"]["DATA"][0]  # type: ignore[index]
    out.unlink()
    return int(size), float(covered), frames


def compression_cpu(path: Path) -> tuple[float, float]:
    """CPU seconds to compress the file's DATA frame bodies as the writer does (a stream a
    segment, flushed at each frame): with ``SMALL_PARAMETERS``, and at ``ZSTD_LEVEL``."""
    segments = data_bodies(path)
    out = []
    for cctx in (zstandard.ZstdCompressor(compression_params=SMALL_PARAMETERS),
                 zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=False)):
        started = time.process_time()
        for bodies in segments:
            stream = cctx.compressobj()
            for body in bodies:
                stream.compress(body)
                stream.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
            stream.flush()
        out.append(time.process_time() - started)
    return out[0], out[1]


def mb_per_host_hour(size: float, seconds: float, hosts: int = 1) -> float:
    return size / 1e6 / hosts / (seconds / 3600)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=60, help="length of the real run")
    ap.add_argument("--hours", type=float, default=1.0, help="length of the extended session")
    ap.add_argument("--out", default=str(OUT_MD), help="Markdown file to write ('-': none)")
    ap.add_argument("--minute", type=Path, default=REFERENCE_MINUTE,
                    help="the real minute to extend (default: the kept reference minute)")
    ap.add_argument("--record", action="store_true",
                    help="record a new real minute on this machine instead")
    ap.add_argument("--save-minute", type=Path, default=None,
                    help="with --record: keep the new minute's file here")
    ap.add_argument("--code", type=Path, default=None,
                    help="another checkout (the code before): extend the same minute with "
                    "its writer too, side by side")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="benchtui-recsize-"))
    started = time.strftime("%Y-%m-%d %H:%M")
    load_before = os.getloadavg()[0]
    if args.record:
        minute, raw = record_reference(work, args.seconds)
        if args.save_minute is not None:
            shutil.copyfile(minute, args.save_minute)
    else:
        minute, raw = args.minute, {}
    with SessionReader.open(str(minute)) as r:
        real_seconds = r.end - r.start
        real_size = r.size_bytes
        samples_per_s = r.sample_count / real_seconds
        lines = r.output_line_count
    target = args.hours * 3600

    def hour(label: str, **kw: object) -> tuple[str, int, float, float]:
        path = work / "hour.btr"
        size, covered = extend(minute, path, target, **kw)  # type: ignore[arg-type]
        path.unlink()
        return label, int(size), covered, mb_per_host_hour(size, covered)

    d = DEFAULT_BITS
    rows = [hour(f"{d} bits (the default), as recorded (histograms, iostat text)", bits=d),
            hour(f"{d} bits, without the histograms", bits=d, keep_histograms=False),
            hour(f"{d} bits, without the raw text", bits=d, keep_output=False),
            hour(f"{d} bits, without the figure track", bits=d, keep_figures=False),
            hour(f"{FIO_PLAT_BITS} bits (fio's own, exact), as recorded", bits=FIO_PLAT_BITS),
            hour(f"{FALLBACK_BITS} bits, as recorded", bits=FALLBACK_BITS)]
    full, no_hist, no_text, no_figures, exact, coarser = (row[3] for row in rows)
    tried = [FIO_PLAT_BITS, d, FALLBACK_BITS]
    path = work / "hour.btr"
    extend(minute, path, target, bits=d)
    t = time.perf_counter()
    with SessionReader.open(str(path)) as r:
        opened_ms = (time.perf_counter() - t) * 1000
        segments = r.segment_count
        host_hours = (r.end - r.start) / 3600
    found = account(path)
    frames = found["frames"]
    cpu = compression_cpu(path)
    before = extend_with(args.code, minute, target, work) if args.code else None
    floors = {b: histogram_floor(minute, b) for b in tried}
    errors = {b: percentile_errors(minute, b) for b in tried if b < FIO_PLAT_BITS}
    _, fine_buckets, hists_per_s = floors[FIO_PLAT_BITS]
    verdict = "within" if full <= BUDGET_MB_PER_HOST_HOUR else "OVER"
    load = os.getloadavg()[0]
    by_bits = {d: full, FIO_PLAT_BITS: exact, FALLBACK_BITS: coarser}
    command = " ".join(["`.venv/bin/python benchmarks/recording_size.py", *sys.argv[1:]]) + "`"
    if raw:
        tools = (f"the tools printed {raw.get('fio', 0) / 1e6:.1f} MB of fio json+ "
                 f"({mb_per_host_hour(raw.get('fio', 0), real_seconds):.0f} MB/h) and "
                 f"{raw.get('iostat', 0) / 1e3:.0f} KB of iostat text")
    else:
        tools = (f"`{minute.relative_to(ROOT) if minute.is_relative_to(ROOT) else minute}` (when "
                 "it was recorded the tools printed 5.0 MB of fio json+, 287 MB/h, and 33 KB "
                 "of iostat text)")
    md = "\n".join([
        "<!-- size -->",
        "",
        f"Run on {started}: {command} (load average {load_before:.1f} before, {load:.1f} "
        "after, on 2 cores; sizes do not depend on load).",
        "",
        f"Real minute: {real_seconds:.0f} s, {samples_per_s:.0f} samples/s, "
        f"{hists_per_s:.0f} latency histograms/s with {fine_buckets} buckets/s in all at fio's "
        f"resolution, {lines} raw text lines kept; {tools}. The minute is recorded at "
        f"{FIO_PLAT_BITS} bits; the hours at fewer bits coarsen its histograms with the "
        "function the engine applies (the same histograms a session at that "
        "`histogram_bits` records).",
        "",
        "| session | size | MB per host-hour |",
        "|---|---|---|",
        f"| the real minute, recorded at {FIO_PLAT_BITS} bits ({real_seconds:.0f} s) | "
        f"{real_size / 1e6:.2f} MB | {mb_per_host_hour(real_size, real_seconds):.2f} |",
        *(f"| extended to {covered / 3600:.2f} h, {label} | {size / 1e6:.2f} MB | "
          f"{mb:.2f} |" for label, size, covered, mb in rows),
        *([f"| the same, {d} bits as recorded, by the code before (`{args.code}`, its own "
           f"`extend`: {before[2]:,} DATA frames, here {frames['DATA'][0]:,}) | "
           f"{before[0] / 1e6:.2f} MB | {mb_per_host_hour(before[0], before[1]):.2f} |"]
          if before else []),
        "",
        "| histogram_bits | buckets per power of two | histogram buckets/s | MB per "
        "host-hour | percentile error bound | worst error measured (p50, p90, p99, p99.9) |",
        "|---|---|---|---|---|---|",
        *(f"| {b}{' (default)' if b == d else ' (exact)' if b == FIO_PLAT_BITS else ''} | "
          f"{1 << b} | {floors[b][1]} | {by_bits[b]:.2f} | "
          + (f"{relative_error(b):.1%} | "
             + ", ".join(f"{errors[b][q]:.1%}" for q in QUANTILES)
             if b in errors else "0 | 0")
          + " |" for b in sorted(tried, reverse=True)),
        "",
        f"- Budget: {BUDGET_MB_PER_HOST_HOUR:g} MB per host-hour at the default "
        f"{d} bits: **{verdict}** ({full:.2f}); at fio's own resolution {exact:.2f}.",
        f"- At {d} bits the latency histograms take {full - no_hist:.2f} MB/h "
        f"({(full - no_hist) / full:.0%}); everything else (all samples' values, the iostat "
        f"text, events, frame headers) {no_hist:.2f} MB/h, of which the raw text "
        f"{full - no_text:.2f} and the figure track (the console's figures, for a later "
        f"run's ghost) {full - no_figures:.2f}.",
        *(f"- Floor for the histograms at {b} bits: the order-0 entropy of their count "
          f"differences alone is {floors[b][0] * 3600 / 1e6:.2f} MB/h "
          f"({floors[b][0] * 8 / max(floors[b][1], 1):.1f} bits per bucket), before the "
          "bucket positions." for b in sorted(tried, reverse=True)),
        f"- The hour's file opens in {opened_ms:.1f} ms ({segments} segments, index read "
        "from the end).",
        f"- Compressing the hour's frame bodies (one zstd stream a segment, a block a frame): "
        f"{cpu[0]:.2f} s of CPU with the small segments' parameters "
        f"(`writer.SMALL_PARAMETERS`), {cpu[1]:.2f} s at level {ZSTD_LEVEL} (this machine, "
        "its load as above).",
        "",
        f"Where the bytes of the hour at {d} bits go (`benchmarks/recording_bytes.py`, MB per "
        "host-hour):",
        "",
        *tables(found, host_hours),
        "",
        "<!-- /size -->",
    ])
    shutil.rmtree(work, ignore_errors=True)
    print(md)
    if args.out != "-":
        write_section(Path(args.out), "size", md)
    return 0


def write_section(path: Path, name: str, section: str) -> None:
    """Replace the ``name`` section of ``path`` (append it if there is none)."""
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    text = path.read_text() if path.exists() else "# Recording: size and cost\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
