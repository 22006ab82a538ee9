"""How long ``benchtui history gate`` takes over a year of nights (issue 23: 365 nights x
50 series in under 5 s).

A SQLite catalog is filled through its own tables with 365 runs of one plan and 50 series
(10 steps x IOPS, bandwidth, mean and p99 latency of the fleet, and util): noise of 1-3%
around each level, a 10% drop in three series a month before the end, a single bad night in
five others, a slow drift in two. Then ``benchtui history gate`` is timed as a user runs
it (a new process: start-up included), twice (the second gate has nothing new to report).

    .venv/bin/python benchmarks/history_gate.py [--nights 365] [--steps 10]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.history.catalog import open_catalog  # noqa: E402

METRICS = [("iops", "read", 50_000.0), ("bandwidth_bytes", "read", 2e8),
           ("latency_mean_seconds", "read", 2e-4), ("latency_p99_seconds", "read", 9e-4),
           ("disk_util_ratio", "", 0.8)]
T0 = 1_767_225_600.0  # 2026-01-01


def fill(path: Path, nights: int, steps: int, seed: int = 23) -> int:
    rng = random.Random(seed)
    cat = open_catalog(str(path))
    cat.executemany("INSERT INTO runs (id, session_key, plan, session_name, path, started, "
                    "ended, outcome, source, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(i, f"s{i}", "nightly", "nightly", f"/srv/nightly/{i:03d}.btr",
                      T0 + i * 86400, T0 + i * 86400 + 3600, "completed", "recorded", T0)
                     for i in range(1, nights + 1)])
    cat.executemany("INSERT INTO run_attributes (run_id, name, value) VALUES (?, ?, ?)",
                    [(i, "commit", f"{rng.getrandbits(40):010x}") for i in range(1, nights + 1)])
    sid = 0
    for step in range(steps):
        for metric, op, level in METRICS:
            sid += 1
            cat.execute("INSERT INTO series (id, plan, step, args_key, args, metric, op, "
                        "scope, env_key) VALUES (?, 'nightly', ?, 'a', '{}', ?, ?, '(fleet)', "
                        "'e')", (sid, f"step-{step:02d}", metric, op))
            noise = rng.uniform(0.01, 0.03)
            points = []
            for i in range(1, nights + 1):
                v = level * rng.gauss(1.0, noise)
                if sid in (3, 17, 41) and i > nights - 30:
                    v *= 0.9 if metric in ("iops", "bandwidth_bytes") else 1.1
                if sid in (5, 12, 22, 33, 44) and i == nights // 2:
                    v *= 0.6
                if sid in (8, 28):
                    v *= 1 - 0.1 * i / nights
                points.append((sid, i, v, 1, "completed"))
            cat.executemany("INSERT INTO points (series_id, run_id, value, repeats, outcome) "
                            "VALUES (?, ?, ?, ?, ?)", points)
    cat.commit()
    cat.close()
    return sid


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchtui-history-gate-") as top:
        path = Path(top) / "history.sqlite"
        series = fill(path, args.nights, args.steps)
        for attempt in ("first gate", "second gate"):
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "benchtui", "history", "gate",
                                   "nightly", "--catalog", str(path)], cwd=ROOT,
                                  capture_output=True, text=True, check=False)
            seconds = time.perf_counter() - t0
            first = done.stdout.splitlines()[0] if done.stdout else done.stderr
            print(f"{attempt}: {args.nights} nights x {series} series in {seconds:.2f} s, "
                  f"exit {done.returncode}: {first}")
        other = Path(top) / "min-change.sqlite"
        fill(other, args.nights, args.steps)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "benchtui", "history", "gate", "nightly",
                               "--catalog", str(other), "--min-change", "5%"], cwd=ROOT,
                              capture_output=True, text=True, check=False)
        print(f"with --min-change 5%: {time.perf_counter() - t0:.2f} s, exit "
              f"{done.returncode}: {done.stdout.splitlines()[0]}")
        for line in done.stdout.splitlines()[1:]:
            print("   " + line[:150])
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "benchtui", "--version"], cwd=ROOT,
                       capture_output=True, check=False)
        print(f"(benchtui --version alone: {time.perf_counter() - t0:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
