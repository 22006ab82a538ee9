"""The controller's CPU per document and per sample on its ingestion path, without SSH.

Issue 32: the live controller's cost outside the fio parser. ``fleet_wide.py`` and
``fleet_scale.py`` measure the whole controller over real sshd, but on a loaded 2-core
machine their CPU figures move with the load; this feeds the same output through the same
code, in one process, and times each part with the thread's CPU clock:

- ``parse``: ``RunIngest.feed`` (``LineCutter`` or ``LineSplitter``, the parser);
- ``deliver``: ``Sinks.deliver`` (the step's label, the histograms' resolution) and every
  sink it calls: ``--sinks jsonl`` (what ``run --jsonl`` has: samples as JSON Lines, to
  /dev/null), ``store`` (a ``LiveStore``, the sink of ``fleet_probe.py``), ``console`` (the
  console's ``FleetState``), ``record`` (``Recorder`` and the figure track, as ``--record``
  adds them; the file in a temporary directory: the recorder's own thread, which compresses
  and writes, is not counted).

Workloads: ``wide``: the 32-job json+ capture (``captures/fio-json-plus-32jobs-20s.json.xz``,
~880 kB a document, every latency bucket), one document a second per host, all hosts' documents
together each second (fio's clocks in step); ``fleet``: fio json+ with 2 jobs
(``captures/fio-json-plus-2jobs.json``) and ``iostat -x -y -t 1`` per host, as
``fleet_scale.py``'s hosts print them. The output is cut into chunks of ``--chunk`` bytes
(SSH delivers a channel's data in packets of at most 32 KiB).

``--parse-workers N``: this code with its parser worker processes (``session/parse_pool.py``):
the main process keeps the runs' raw lines and last words, sends the chunks, reads the
answers and delivers them (all counted as ``deliver``; ``parse`` is then the main process's
sending), and the workers' CPU (their start-up left out) is said apart.

``--old DIR`` runs the same in a process importing benchtui from DIR (a worktree of the code
before a change), alternately with this checkout, ``--repeat`` times each.

    .venv/bin/python benchmarks/ingest_cost.py [--workload wide|fleet] [--hosts N]
        [--seconds S] [--sinks jsonl store console record] [--old DIR] [--repeat R]
        [--wall] [--parts] [--profile FILE] [--gc SPEC ...]

``--parts``: each sink's own CPU per sample as well (the recorder's samples and output, the
figure track), inside ``deliver``.

The garbage collector runs as the code's controller has it (``gc_pauses.controller_policy``:
``benchtui.gc_policy`` where the code has it, Python's defaults before), or as ``--gc SPEC``
says (``gc_pauses.variant``: to weigh the options against each other); its collections,
their total and longest pause per generation are in the results (``gc``, the table's last
column: the main process's only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if "--code" in sys.argv:  # the code to measure, before anything imports benchtui
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])
else:
    sys.path.insert(0, str(ROOT))

from gc_pauses import GcPauses, variant, words  # noqa: E402
from replay_capture import FioReplay, IostatReplay, split_fio_documents  # noqa: E402

WIDE = HERE / "captures" / "fio-json-plus-32jobs-20s.json.xz"
NARROW = HERE / "captures" / "fio-json-plus-2jobs.json"
IOSTAT = HERE / "captures" / "iostat-x-t.txt"
#: A fixed start, so that every run and code sees the same bytes.
#: (``--wall``: the start of this second instead. The recorder ends a segment once its records
#: span ``SEGMENT_SECONDS``; its events carry the wall clock's time, so samples dated from a
#: fixed start long ago end a segment at every frame and make it define every series again.)
T0 = float(int(time.time())) if "--wall" in sys.argv else 1_790_000_000.0


def streams(workload: str, hosts: int, seconds: int) -> list[list[tuple[str, str, bytes]]]:
    """Per second, every (host, tool, output) printed in it; each host's output the same
    bytes (rendered once), with its own timestamps."""
    if workload == "wide":
        docs = split_fio_documents(lzma.decompress(WIDE.read_bytes()).decode())[:-1]
        fio = FioReplay(docs)
        per_second = [[("fio", fio.document(T0 + k))] for k in range(seconds)]
    else:
        fio = FioReplay(split_fio_documents(NARROW.read_text()))
        iostat = IostatReplay(IOSTAT.read_text())
        per_second = [[("fio", fio.document(T0 + k)),
                       ("iostat", (iostat.banner if k == 0 else b"") + iostat.document(T0 + k))]
                      for k in range(seconds)]
    return [[(f"h{i:04d}", tool, data) for i in range(hosts) for tool, data in second]
            for second in per_second]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from benchtui.model import events as ev
    from benchtui.model.fio_buckets import DEFAULT_BITS
    from benchtui.parsers.registry import all_parsers
    from benchtui.session.ingest import RunIngest
    from benchtui.session.sinks import Sinks

    output = streams(args.workload, args.hosts, args.seconds)
    hosts = sorted({h for second in output for h, _, _ in second})
    bits = DEFAULT_BITS  # (the session's histogram resolution)
    sinks = Sinks(bits)
    stack = contextlib.ExitStack()
    if "jsonl" in args.sinks:
        from benchtui.export.formats import JsonlWriter

        jsonl = JsonlWriter(stack.enter_context(open(os.devnull, "w")))  # noqa: SIM115
        sinks.samples.append(jsonl.write)
    if "store" in args.sinks:
        from benchtui.store.live import LiveStore

        sinks.samples.append(LiveStore().add)
    if "console" in args.sinks:
        from benchtui.store.fleet import FleetState

        state = FleetState("bench", hosts)
        sinks.samples.append(state.on_samples)
        sinks.events.append(state.on_event)
        sinks.output.append(state.on_output)
    if "record" in args.sinks:
        from benchtui.session.figure_track import FigureRecorder
        from benchtui.session.ghost_digest import GhostDigest
        from benchtui.store.recording import SCHEMA_VERSION, Recorder, SessionMeta

        directory = stack.enter_context(tempfile.TemporaryDirectory())
        digest = GhostDigest()
        meta = SessionMeta(SCHEMA_VERSION, "bench", "bench", "", "", T0, None, hosts=hosts,
                           writer="bench", histogram_bits=bits, figures=digest.name)
        recorder = Recorder(os.path.join(directory, "s.btr"), meta)
        stack.callback(recorder.close)
        figures = FigureRecorder(digest, recorder.on_figures)
        sinks.samples += [recorder.on_samples, figures.on_samples]
        sinks.events += [recorder.on_event, figures.on_event]
        sinks.output.append(recorder.on_output)
    lines_wanted = bool(sinks.output)
    parts: dict[str, float] = {}
    if getattr(args, "parts", False):  # each sink's own CPU (counted in deliver too)
        for kind, chosen in (("samples", sinks.samples), ("output", sinks.output)):
            chosen[:] = [_timed(parts, f"{kind}: {getattr(f, '__qualname__', f)}", f)
                         for f in chosen]
    sinks.emit(ev.STEP_START, "step", step="s", hosts=hosts, tool="fio")
    parsers = {"fio": "fio-json", "iostat": "iostat"}
    ingests = {}
    for h, tool, _ in output[0]:
        parser = all_parsers()[parsers[tool]](host=h, source=f"{h}:{tool}")
        parser.stream = True  # (live output, as the session's runner sets it)
        parser.histogram_bits = bits  # (as the runner tells it; code before: unread)
        ingests[(h, tool)] = RunIngest(parser, lines_wanted=lines_wanted)
    with variant(args.gc):  # (by default as Session.run has it: the code's own policy)
        pauses = GcPauses()
        if getattr(args, "parse_workers", 0):
            result = _in_workers(args, output, ingests, sinks, stack, parsers)
        else:
            result = _in_process(args, output, ingests, sinks, stack, parts)
        result["gc"] = pauses.figures()
        pauses.stop()
    return result


def _in_process(args: argparse.Namespace, output: list[list[tuple[str, str, bytes]]],
                ingests: dict[tuple[str, str], Any], sinks: Any,
                stack: contextlib.ExitStack, parts: dict[str, float]) -> dict[str, Any]:
    """As ``measure``, parsing in this process (``parts``: each sink's CPU, ``--parts``)."""
    from benchtui.transport import Chunk

    offsets = dict.fromkeys(ingests, 0)
    clock = time.thread_time
    parse = deliver = 0.0
    samples = documents = 0
    chunk_size = args.chunk
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(clock)
        profiler.enable()
    with stack:
        for k, second in enumerate(output):
            t = T0 + k + 0.01
            for host, tool, data in second:
                ingest = ingests[(host, tool)]
                documents += tool == "fio"
                for a in range(0, len(data), chunk_size):
                    piece = data[a:a + chunk_size]
                    offsets[(host, tool)] += len(piece)
                    chunk = Chunk(offsets[(host, tool)], piece)
                    c0 = clock()
                    got = ingest.feed(chunk, t)
                    c1 = clock()
                    if got.lines or got.samples:
                        samples += len(got.samples)
                        sinks.deliver(got, t, host=host, tool=tool, role="step", step="s")
                    deliver += clock() - c1
                    parse += c1 - c0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    total = parse + deliver
    return {"workload": args.workload, "hosts": args.hosts, "seconds": args.seconds,
            "sinks": args.sinks, "documents": documents, "samples": samples,
            "parse_s": parse, "deliver_s": deliver,
            "ms_per_doc": 1e3 * total / max(documents, 1),
            "parse_ms_per_doc": 1e3 * parse / max(documents, 1),
            "deliver_ms_per_doc": 1e3 * deliver / max(documents, 1),
            "us_per_sample": 1e6 * total / max(samples, 1),
            "parse_us_per_sample": 1e6 * parse / max(samples, 1),
            "deliver_us_per_sample": 1e6 * deliver / max(samples, 1),
            "parts_us_per_sample": {k: 1e6 * v / max(samples, 1) for k, v in parts.items()}}


def _timed(parts: dict[str, float], name: str, sink: Any) -> Any:
    """``sink``, its thread CPU added up in ``parts[name]``."""
    clock = time.thread_time
    parts[name] = 0.0

    def timed(*args: Any) -> None:
        c0 = clock()
        sink(*args)
        parts[name] += clock() - c0
    return timed


def _in_workers(args: argparse.Namespace, output: list[list[tuple[str, str, bytes]]],
                ingests: dict[tuple[str, str], Any], sinks: Any,
                stack: contextlib.ExitStack, parsers: dict[str, str]) -> dict[str, Any]:
    """As ``measure``, with ``args.parse_workers`` parser processes."""
    import asyncio

    import psutil

    from benchtui.model.fio_buckets import DEFAULT_BITS
    from benchtui.session.ingest import Ingested
    from benchtui.session.parse_pool import ParsePool
    from benchtui.transport import Chunk

    clock = time.thread_time
    counts = {"samples": 0}

    def worker_cpu(pool: ParsePool) -> float:
        return sum(sum(psutil.Process(p).cpu_times()[:2]) for p in pool.pids)

    async def run() -> tuple[float, float, float]:
        pool = ParsePool(args.parse_workers, print, DEFAULT_BITS)
        for n in range(args.parse_workers):  # (started and imported: not counted)
            warm = pool.open("fio-json", f"warm{n}", "warm", "warm", lambda *_: None)
            pool.feed(warm, b"\n", 1, T0, [])
            await pool.settled(warm)
            pool.close_run(warm)
        slots = {}
        for (host, tool), _ in ingests.items():
            def on_answer(answer: Any, lines: list[str], t: float, host: str = host,
                          tool: str = tool) -> None:
                counts["samples"] += len(answer.samples)
                sinks.deliver(Ingested(lines, answer.samples, answer.text), t, host=host,
                              tool=tool, role="step", step="s")
            slots[(host, tool)] = pool.open(parsers[tool], host, f"{host}:{tool}",
                                            f"{host} {tool}", on_answer)
        offsets = dict.fromkeys(ingests, 0)
        w0, c0 = worker_cpu(pool), clock()
        send = 0.0
        for k, second in enumerate(output):
            t = T0 + k + 0.01
            for host, tool, data in second:
                key = (host, tool)
                for a in range(0, len(data), args.chunk):
                    piece = data[a:a + args.chunk]
                    offsets[key] += len(piece)
                    await pool.room(slots[key])
                    s0 = clock()
                    lines = ingests[key].keep(Chunk(offsets[key], piece))
                    pool.feed(slots[key], piece, offsets[key], t, lines)
                    send += clock() - s0
        for slot in slots.values():
            await pool.settled(slot)
        main, workers = clock() - c0, worker_cpu(pool) - w0
        await pool.close()
        return main, send, workers

    with stack:
        main, send, workers = asyncio.run(run())
    documents = sum(tool == "fio" for second in output for _, tool, _ in second)
    samples = counts["samples"]
    return {"workload": args.workload, "hosts": args.hosts, "seconds": args.seconds,
            "sinks": args.sinks, "documents": documents, "samples": samples,
            "parse_workers": args.parse_workers, "parse_s": send, "deliver_s": main - send,
            "workers_s": workers,
            "ms_per_doc": 1e3 * main / max(documents, 1),
            "parse_ms_per_doc": 1e3 * send / max(documents, 1),
            "deliver_ms_per_doc": 1e3 * (main - send) / max(documents, 1),
            "workers_ms_per_doc": 1e3 * workers / max(documents, 1),
            "us_per_sample": 1e6 * main / max(samples, 1),
            "parse_us_per_sample": 1e6 * send / max(samples, 1),
            "deliver_us_per_sample": 1e6 * (main - send) / max(samples, 1)}


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| code | workload | hosts x s | sinks | samples | per document (ms): parse / "
            "deliver / all | per sample (µs): parse / deliver / all | parse workers' CPU "
            "per document (ms) | GC: collections / total ms / longest ms per generation |",
            "|" + "---|" * 9]
    for r in results:
        rows.append(
            f"| {r['code']} | {r['workload']} | {r['hosts']} x {r['seconds']} | "
            f"{' '.join(r['sinks']) or '-'} | {r['samples']} | {r['parse_ms_per_doc']:.2f} / "
            f"{r['deliver_ms_per_doc']:.2f} / {r['ms_per_doc']:.2f} | "
            f"{r['parse_us_per_sample']:.2f} / {r['deliver_us_per_sample']:.2f} / "
            f"{r['us_per_sample']:.2f} | "
            + (f"{r['workers_ms_per_doc']:.2f} |" if "workers_ms_per_doc" in r else "- |")
            + f" {words(r.get('gc'))} |")
    parted = [r for r in results if r.get("parts_us_per_sample")]
    if parted:
        rows += ["", "| code | sink | per sample (µs) |", "|---|---|---|"]
        rows += [f"| {r['code']} | {name} | {us:.2f} |" for r in parted
                 for name, us in r["parts_us_per_sample"].items()]
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=("wide", "fleet"), default="wide")
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--sinks", nargs="*", default=["jsonl"],
                    choices=("jsonl", "store", "console", "record"))
    ap.add_argument("--chunk", type=int, default=32 << 10, help="bytes per chunk")
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--parse-workers", type=int, nargs="+", metavar="N",
                    help="run this code once with each of these numbers of parser worker "
                    "processes (0: in process)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", help="cProfile (CPU time) into FILE (one process only)")
    ap.add_argument("--wall", action="store_true",
                    help="date the output from now, not from a fixed start (with --sinks "
                    "record: the recorder's segments then end by their length, as live)")
    ap.add_argument("--parts", action="store_true",
                    help="also each sink's own CPU per sample (inside deliver)")
    ap.add_argument("--gc", nargs="+", default=["code"], metavar="SPEC",
                    help="the garbage collector's policy: the code's own (code), Python's "
                    "(python), or words joined by +: t=A/B/C (thresholds), freeze, paused "
                    "(each feed with the collector off); several: each in turn "
                    "(gc_pauses.variant)")
    ap.add_argument("--code", help=argparse.SUPPRESS)  # (the child's: import from here)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child or args.profile:
        args.parse_workers = (args.parse_workers or [0])[0]
        args.gc = args.gc[0]
        print(json.dumps(measure(args)))
        return 0
    these = [("this", str(ROOT), 0, gc) for gc in args.gc] if not args.parse_workers else [
        (f"this, {n} parse workers", str(ROOT), n, gc) for n in args.parse_workers
        for gc in args.gc]
    if len(args.gc) > 1:
        these = [(f"{label}, gc {gc}", *rest, gc) for label, *rest, gc in these]
    codes = these + ([("before", str(args.old), 0, "code")] if args.old else [])
    results = []
    for repeat in range(args.repeat):
        for label, code, workers, gc in (codes if repeat % 2 == 0 else codes[::-1]):
            argv = [sys.executable, __file__, "--child", "--code", code, "--gc", gc,
                    *(["--parse-workers", str(workers)] if workers else []),
                    "--workload", args.workload, "--hosts", str(args.hosts),
                    "--seconds", str(args.seconds), "--chunk", str(args.chunk),
                    *(["--wall"] if args.wall else []), *(["--parts"] if args.parts else []),
                    "--sinks", *args.sinks]
            done = subprocess.run(argv, check=True, capture_output=True, text=True)
            result = json.loads(done.stdout)
            result["code"] = label
            results.append(result)
            print(table([result]).splitlines()[2], file=sys.stderr, flush=True)
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
