"""``Sinks.deliver``'s parts, per sample, on the batches the parsers really deliver.

Issue 32: what the controller spends per sample after the parser and before the sinks (the
step's label, the histograms brought to the session's resolution, the fine histograms
freed) and in the two sinks of the live path (the live store, ``run --jsonl``'s writer),
each timed on its own over the same batches with the thread's CPU clock: the workloads of
``ingest_cost.py`` (``wide``: 32 hosts x a 32-job json+ document a second; ``fleet``: 64
hosts x fio json+ 2 jobs and ``iostat -x``), parsed first (not timed), the garbage collector
off while timing. The coarsening plans are made before the timing (a live session makes
one per job and direction at its first document, then reuses it).

    .venv/bin/python benchmarks/deliver_parts.py [--workload wide|fleet] [--old DIR]
        [--repeat R]

``--old DIR`` times the code in DIR (a worktree of the code before a change) in a process
of its own, alternately with this checkout's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if "--code" in sys.argv:  # the code to measure, before anything imports benchtui
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])
else:
    sys.path.insert(0, str(ROOT))
import benchtui.session.ingest  # noqa: E402,F401  (this code's, before ingest_cost's path)

sys.path.insert(1, str(HERE))
from ingest_cost import streams  # noqa: E402


def measure(workload: str) -> dict[str, Any]:
    from benchtui.export.formats import JsonlWriter
    from benchtui.model.fio_buckets import DEFAULT_BITS, FIO_PLAT_BITS
    from benchtui.parsers.registry import all_parsers
    from benchtui.session.ingest import Ingested, RunIngest
    from benchtui.session.sinks import Sinks
    from benchtui.store.live import LiveStore
    from benchtui.transport import Chunk

    hosts, seconds = (32, 6) if workload == "wide" else (64, 20)
    ingests: dict[tuple[str, str], tuple[RunIngest, list[int]]] = {}
    batches = []
    for second in streams(workload, hosts, seconds):
        for host, tool, data in second:
            if (host, tool) not in ingests:
                parser = all_parsers()["fio-json" if tool == "fio" else "iostat"](
                    host=host, source=f"{host}:{tool}")
                parser.stream = True
                ingests[host, tool] = (RunIngest(parser, lines_wanted=False), [0])
            ingest, offset = ingests[host, tool]
            offset[0] += len(data)
            got = ingest.feed(Chunk(offset[0], data), 0.0)
            if got.samples:
                batches.append(got.samples)
    samples = [s for batch in batches for s in batch]
    histograms = [s for s in samples if s.histogram is not None]
    for s in histograms:  # the plans made, as after a live session's first documents
        s.histogram.coarsened(DEFAULT_BITS)  # type: ignore[union-attr]
    clock = time.thread_time
    gc.collect()
    gc.disable()
    label = Sinks(FIO_PLAT_BITS)  # (histograms at fio's own resolution: left as they are)
    t = clock()
    for batch in batches:  # Sinks.deliver, its histograms apart: the step's label
        label.deliver(Ingested([], batch), 0.0, host="-", tool="-", role="step", step="s")
    labels = clock() - t
    t = clock()
    coarse = [s.histogram.coarsened(DEFAULT_BITS) for s in histograms]  # type: ignore[union-attr]
    take = clock() - t
    t = clock()
    for s, h in zip(histograms, coarse, strict=True):  # the fine histograms freed
        s.histogram = h
    del coarse
    free = clock() - t
    store = LiveStore()
    t = clock()
    for batch in batches:
        store.add(batch)
    stored = clock() - t
    with open(os.devnull, "w") as null:
        writer = JsonlWriter(null)
        t = clock()
        for batch in batches:
            writer.write(batch)
        jsonl = clock() - t
    gc.enable()
    n = len(samples)
    return {"samples": n, "histograms": len(histograms),
            "labels_us": labels / n * 1e6, "coarsen_us": take / n * 1e6,
            "free_us": free / n * 1e6, "store_us": stored / n * 1e6,
            "jsonl_us": jsonl / n * 1e6,
            "coarsen_per_histogram_us": take / len(histograms) * 1e6,
            "free_per_histogram_us": free / len(histograms) * 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=("wide", "fleet"), default="fleet")
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--code", help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.workload)))
        return 0
    codes = [("this", str(ROOT))] + ([("before", str(args.old))] if args.old else [])
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print("| code | workload | samples (histograms) | per sample (µs): label / coarsen / "
          "free the fine histograms / live store / JSON Lines | per histogram (µs): "
          "coarsen / free |")
    print("|---|---|---|---|---|")
    for k in range(args.repeat):
        for label, code in (codes if k % 2 == 0 else codes[::-1]):
            out = subprocess.run([sys.executable, __file__, "--child", "--code", code,
                                  "--workload", args.workload],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            print(f"| {label} | {args.workload} | {r['samples']} ({r['histograms']}) | "
                  f"{r['labels_us']:.3f} / {r['coarsen_us']:.3f} / {r['free_us']:.3f} / "
                  f"{r['store_us']:.3f} / {r['jsonl_us']:.3f} | "
                  f"{r['coarsen_per_histogram_us']:.1f} / {r['free_per_histogram_us']:.1f} |",
                  flush=True)
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
