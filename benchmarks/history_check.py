"""What checking a SQLite history catalog costs, against its size: SQLite's ``PRAGMA
quick_check`` and ``integrity_check``, and ``benchtui history check`` as a user runs it (a
new process: start-up, both structure checks, every run's digest and every bound). The
figure behind docs/history.md's choice of what is checked when a catalog is opened.

Each catalog is filled through its own tables (as ``history_gate.py``): RUNS runs of one
plan, each with SERIES points (a fleet of hosts x steps x metrics), then every run given its
digest as an upgrade gives it (``digest.fill_digests``).

    .venv/bin/python benchmarks/history_check.py [--runs 365 3650 10000] [--series 200]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.history.catalog import open_catalog  # noqa: E402
from benchtui.history.digest import fill_digests  # noqa: E402

METRICS = ("iops", "bandwidth_bytes", "latency_mean_seconds", "latency_p99_seconds")
T0 = 1_767_225_600.0  # 2026-01-01


def fill(path: Path, runs: int, series: int, seed: int = 29) -> None:
    rng = random.Random(seed)
    cat = open_catalog(str(path))

    def work() -> None:
        cat.executemany("INSERT INTO runs (id, session_key, plan, session_name, path, "
                        "started, ended, outcome, source, added) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(i, f"s{i}", "nightly", "nightly", f"/srv/nightly/{i:05d}.btr",
                          T0 + i * 86400, T0 + i * 86400 + 3600, "completed", "recorded", T0)
                         for i in range(1, runs + 1)])
        keys = []
        for sid in range(1, series + 1):
            metric = METRICS[sid % len(METRICS)]
            keys.append((sid, metric))
            cat.execute("INSERT INTO series (id, plan, step, args_key, args, metric, op, "
                        "scope, env_key) VALUES (?, 'nightly', ?, 'a', '{}', ?, 'read', ?, "
                        "'e')", (sid, f"step-{sid % 10}", metric, f"host-{sid:04d}"))
        for i in range(1, runs + 1):
            cat.executemany("INSERT INTO points (series_id, run_id, value, repeats, outcome) "
                            "VALUES (?, ?, ?, 1, 'completed')",
                            [(sid, i, rng.uniform(1e-4, 1e5)) for sid, _m in keys])
        fill_digests(cat)

    cat.write(work)
    cat.close()


def _timed(path: Path, pragma: str) -> float:
    conn = sqlite3.connect(path)
    start = time.perf_counter()
    found = conn.execute(f"PRAGMA {pragma}").fetchall()
    took = time.perf_counter() - start
    conn.close()
    assert found == [("ok",)], found
    return took


def _drop_cache(path: Path) -> None:
    """Read-ahead aside, the page cache holds the file after filling: the figures are of a
    catalog read from memory, as on a machine that just used it."""
    path.read_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[365, 3650, 10000])
    ap.add_argument("--series", type=int, default=200)
    args = ap.parse_args()
    print("| runs | points | file | open_catalog | quick_check | integrity_check | "
          "history check (process) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="benchtui-check-") as top:
        for runs in args.runs:
            path = Path(top) / f"c{runs}.sqlite"
            fill(path, runs, args.series)
            _drop_cache(path)
            start = time.perf_counter()
            open_catalog(str(path), create=False).close()
            opened = time.perf_counter() - start
            quick, full = _timed(path, "quick_check"), _timed(path, "integrity_check")
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "benchtui", "history", "check",
                                   "--catalog", str(path)], capture_output=True, text=True,
                                  check=False, cwd=ROOT)
            checked = time.perf_counter() - start
            assert done.returncode == 0, done.stdout + done.stderr
            print(f"| {runs} | {runs * args.series:,} | {path.stat().st_size / 1e6:.1f} MB | "
                  f"{opened * 1e3:.0f} ms | {quick * 1e3:.0f} ms | {full * 1e3:.0f} ms | "
                  f"{checked:.2f} s |", flush=True)


if __name__ == "__main__":
    main()
