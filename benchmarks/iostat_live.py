"""The iostat parser's CPU per sample as a live session feeds it: a report at a time.

``fleet_scale.py``'s hosts print ``iostat -x -y -t 1`` (``captures/iostat-x-t.txt``: one
device, 25 samples a report); the live controller gets each report as one chunk and feeds
its whole lines to the host's ``IostatParser`` (``RunIngest`` -> ``Parser.feed_text``). This
does the same for ``--hosts`` parsers, the capture's reports in turn, ``--rounds`` times,
and times it with the thread's CPU clock, the garbage collector off (best of ``--repeat``).

``--old DIR`` runs the same in a process importing benchtui from DIR (a worktree of the code
before a change), alternately with this checkout, ``--repeat`` times each:

    .venv/bin/python benchmarks/iostat_live.py [--hosts 64] [--rounds 20] [--repeat 5]
        [--old DIR]
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CAPTURE = HERE / "captures" / "iostat-x-t.txt"


def reports() -> list[str]:
    """The capture's reports, each from its ``-t`` timestamp (the banner with the first)."""
    text = CAPTURE.read_text()
    return [r for r in re.split(r"(?m)^(?=\d{4}-\d\d-\d\dT)", text) if r.strip()]


def measure(code: str, hosts: int, rounds: int, repeat: int) -> dict[str, float]:
    sys.path.insert(0, code)
    from benchtui.parsers.iostat import IostatParser

    chunks = reports()
    clock = time.thread_time
    gc.collect()
    gc.disable()
    best = float("inf")
    samples = 0
    for _ in range(repeat):
        parsers = [IostatParser(f"h{h:03d}", f"h{h:03d}:iostat") for h in range(hosts)]
        samples = 0
        t = clock()
        for _round in range(rounds):
            for chunk in chunks:
                for parser in parsers:  # (every host's report of that second, in turn)
                    samples += len(parser.feed_text(chunk, 0.0))
        best = min(best, clock() - t)
    gc.enable()
    return {"samples": samples, "us_per_sample": best / samples * 1e6,
            "us_per_report": best / (hosts * rounds * len(chunks)) * 1e6}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=20, help="times through the capture")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--old", help="the code before, to run alternately with this one")
    ap.add_argument("--code", help=argparse.SUPPRESS)  # (one measurement, in a child)
    args = ap.parse_args()
    if args.code:
        print(json.dumps(measure(args.code, args.hosts, args.rounds, args.repeat)))
        return 0
    codes = [("this", str(ROOT))] + ([("before", args.old)] if args.old else [])
    print("| code | samples | µs a sample | µs a report |")
    print("|---|---|---|---|")
    for _ in range(2 if args.old else 1):
        for label, code in codes:
            out = subprocess.run(
                [sys.executable, __file__, "--code", code, "--hosts", str(args.hosts),
                 "--rounds", str(args.rounds), "--repeat", str(args.repeat)],
                check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            print(f"| {label} | {r['samples']} | {r['us_per_sample']:.3f} | "
                  f"{r['us_per_report']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
