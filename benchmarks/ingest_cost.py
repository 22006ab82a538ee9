"""The controller's CPU per document and per sample on its ingestion path, without SSH.

Issue 32: the live controller's cost outside the fio parser. ``fleet_wide.py`` and
``fleet_scale.py`` measure the whole controller over real sshd, but on a loaded 2-core
machine their CPU figures move with the load; this feeds the same output through the same
code, in one process, and times each part with the thread's CPU clock:

- ``parse``: ``RunIngest.feed`` (``LineCutter`` or ``LineSplitter``, the parser);
- ``deliver``: ``Sinks.deliver`` (the step's label, the histograms' resolution) and every
  sink it calls: ``--sinks jsonl`` (what ``run --jsonl`` has: samples as JSON Lines, to
  /dev/null), ``console`` (the console's ``FleetState``), ``record`` (``Recorder`` and the
  figure track, as ``--record`` adds them; the file in a temporary directory).

Workloads: ``wide``: the 32-job json+ capture (``captures/fio-json-plus-32jobs-20s.json.xz``,
~880 kB a document, every latency bucket), one document a second per host, all hosts' documents
together each second (fio's clocks in step); ``fleet``: fio json+ with 2 jobs
(``captures/fio-json-plus-2jobs.json``) and ``iostat -x -y -t 1`` per host, as
``fleet_scale.py``'s hosts print them. The output is cut into chunks of ``--chunk`` bytes
(SSH delivers a channel's data in packets of at most 32 KiB).

``--old DIR`` runs the same in a process importing benchtui from DIR (a worktree of the code
before a change), alternately with this checkout, ``--repeat`` times each.

    .venv/bin/python benchmarks/ingest_cost.py [--workload wide|fleet] [--hosts N]
        [--seconds S] [--sinks jsonl console record] [--old DIR] [--repeat R] [--profile FILE]
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

from replay_capture import FioReplay, IostatReplay, split_fio_documents  # noqa: E402

WIDE = HERE / "captures" / "fio-json-plus-32jobs-20s.json.xz"
NARROW = HERE / "captures" / "fio-json-plus-2jobs.json"
IOSTAT = HERE / "captures" / "iostat-x-t.txt"
#: A fixed start, so that every run and code sees the same bytes.
T0 = 1_790_000_000.0


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
    from benchtui.parsers.registry import all_parsers
    from benchtui.session.ingest import RunIngest
    from benchtui.session.sinks import Sinks
    from benchtui.transport import Chunk

    output = streams(args.workload, args.hosts, args.seconds)
    hosts = sorted({h for second in output for h, _, _ in second})
    bits = 5  # (the session's default: model.fio_buckets)
    sinks = Sinks(bits)
    stack = contextlib.ExitStack()
    if "jsonl" in args.sinks:
        from benchtui.export.formats import JsonlWriter

        jsonl = JsonlWriter(stack.enter_context(open(os.devnull, "w")))  # noqa: SIM115
        sinks.samples.append(jsonl.write)
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
    sinks.emit(ev.STEP_START, "step", step="s", hosts=hosts, tool="fio")
    parsers = {"fio": "fio-json", "iostat": "iostat"}
    ingests = {}
    for h, tool, _ in output[0]:
        parser = all_parsers()[parsers[tool]](host=h, source=f"{h}:{tool}")
        parser.stream = True  # (live output, as the session's runner sets it)
        ingests[(h, tool)] = RunIngest(parser, lines_wanted=lines_wanted)
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
            "deliver_us_per_sample": 1e6 * deliver / max(samples, 1)}


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| code | workload | hosts x s | sinks | samples | per document (ms): parse / "
            "deliver / all | per sample (µs): parse / deliver / all |", "|" + "---|" * 7]
    for r in results:
        rows.append(
            f"| {r['code']} | {r['workload']} | {r['hosts']} x {r['seconds']} | "
            f"{' '.join(r['sinks']) or '-'} | {r['samples']} | {r['parse_ms_per_doc']:.2f} / "
            f"{r['deliver_ms_per_doc']:.2f} / {r['ms_per_doc']:.2f} | "
            f"{r['parse_us_per_sample']:.2f} / {r['deliver_us_per_sample']:.2f} / "
            f"{r['us_per_sample']:.2f} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=("wide", "fleet"), default="wide")
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--sinks", nargs="*", default=["jsonl"],
                    choices=("jsonl", "console", "record"))
    ap.add_argument("--chunk", type=int, default=32 << 10, help="bytes per chunk")
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", help="cProfile (CPU time) into FILE (one process only)")
    ap.add_argument("--code", help=argparse.SUPPRESS)  # (the child's: import from here)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child or args.profile:
        print(json.dumps(measure(args)))
        return 0
    codes = [("this", str(ROOT))] + ([("before", str(args.old))] if args.old else [])
    results = []
    for repeat in range(args.repeat):
        for label, code in (codes if repeat % 2 == 0 else codes[::-1]):
            argv = [sys.executable, __file__, "--child", "--code", code,
                    "--workload", args.workload, "--hosts", str(args.hosts),
                    "--seconds", str(args.seconds), "--chunk", str(args.chunk),
                    "--sinks", *args.sinks]
            done = subprocess.run(argv, check=True, capture_output=True, text=True)
            result = json.loads(done.stdout)
            result["code"] = label
            results.append(result)
            print(table([result]).splitlines()[-1], file=sys.stderr, flush=True)
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
