"""The event loop's time a step's end takes in ``Runner.settle`` at 1,000 hosts.

``settle`` looks each of the step's runs up in the runner's active list (every monitor's and
step's run of the session) and removes those that ended; with runs compared field by field
(a dataclass's ``__eq__``: the command's fields too) each look-up compared a run with every
run before it. This times the same look-ups and removals on 1,000 hosts x (a monitor and a
step), in this checkout and, with ``--old DIR``, in another (the code before a change).

    .venv/bin/python benchmarks/settle_cost.py [--hosts 1000] [--old DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(hosts: int) -> float:
    from benchtui.plan.commands import RemoteCommand
    from benchtui.session.runs import Run

    def run(i: int, name: str) -> Run:
        return Run(RemoteCommand(host=f"h{i:04d}", name=name, role="step", tool=name,
                                 parser="iostat", argv=(name,), deadline=60.0), name)

    steps = [run(i, "fio") for i in range(hosts)]
    active = [run(i, "iostat") for i in range(hosts)] + steps
    t = time.process_time()
    unheard = [r for r in steps if r in active and r.lost]  # (Runner.settle's look-ups)
    for r in steps:
        if r in active and not r.lost:
            active.remove(r)
    assert not unheard and len(active) == hosts
    return time.process_time() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--code", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.code:
        sys.path.insert(0, args.code)
        print(f"{measure(args.hosts):.4f}")
        return 0
    for label, code in [("this", ROOT)] + ([("before", args.old)] if args.old else []):
        out = subprocess.run([sys.executable, __file__, "--code", str(code), "--hosts",
                              str(args.hosts)], check=True, capture_output=True, text=True)
        print(f"{label}: a step's end at {args.hosts} hosts, {float(out.stdout):.3f} s of CPU "
              "in Runner.settle's look-ups")
    return 0


if __name__ == "__main__":
    sys.exit(main())
