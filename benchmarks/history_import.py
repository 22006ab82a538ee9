"""How long ``benchtui history import`` takes for many sessions (issue 23: 1,000 sessions
into SQLite in under a minute).

One real session is recorded first (``benchtui record``: two local hosts, fio json+ with
histograms, iostat beside them, two 4 s steps), then copied N times with the real
``SessionWriter`` under new session ids and start times a day apart (what a year of nightly
runs of a plan looks like to the importer: each copy is read and figured in full). Then one
``benchtui history import`` is timed over all of them into a new SQLite catalog, as a user
runs it.

    .venv/bin/python benchmarks/history_import.py [-n 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.store.recording import SessionReader, SessionWriter  # noqa: E402

PLAN = """
[session]
name = "nightly-bench"

[hosts.alpha]
local = true

[hosts.beta]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "randread"
tool = "fio"
hosts = "all"
args = '''--filename={data} --size=16m --rw=randread --bs=4k --ioengine=psync
          --rate_iops=500 --runtime=4 --time_based'''

[[step]]
name = "randwrite"
tool = "fio"
hosts = "all"
args = '''--filename={data} --size=16m --rw=randwrite --bs=4k --ioengine=psync
          --rate_iops=300 --runtime=4 --time_based'''
"""


def record(top: Path) -> Path:
    plan = top / "plan.toml"
    plan.write_text(PLAN.format(data=top / "data.bin"))
    out = top / "original.btr"
    subprocess.run([sys.executable, "-m", "benchtui", "record", str(plan), "-o", str(out)],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    return out


def copies(original: Path, n: int, into: Path) -> list[Path]:
    with SessionReader.open(str(original)) as reader:
        records = list(reader.timed_records(reader.start - 1, reader.end + 1))
        meta = reader.meta
        ended = meta.ended
    paths = []
    for i in range(n):
        path = into / f"night-{i:04d}.btr"
        m = dataclasses.replace(meta, session_id=f"{meta.session_id}-{i:04d}",
                                started=meta.started + i * 86400, ended=None,
                                facts={h: dict(f) for h, f in meta.facts.items()})
        writer = SessionWriter(str(path), m)
        writer.append(records)
        writer.close(ended=ended)
        paths.append(path)
    return paths


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--keep", type=Path, help="keep the sessions and catalog in DIR")
    args = ap.parse_args()
    top = args.keep or Path(tempfile.mkdtemp(prefix="benchtui-history-bench-"))
    top.mkdir(parents=True, exist_ok=True)
    try:
        original = record(top)
        sessions = copies(original, args.n, top)
        size = sum(p.stat().st_size for p in sessions)
        catalog = top / "history.sqlite"
        catalog.unlink(missing_ok=True)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "benchtui", "history", "import",
                               *map(str, sessions), "--catalog", str(catalog)],
                              cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        added = done.stderr.count("added run")
        print(f"history import: {added} sessions ({size / 1e6:.1f} MB, 2 hosts x 2 steps "
              f"each) into SQLite in {seconds:.1f} s ({seconds / added * 1000:.1f} ms per "
              f"session); catalog {catalog.stat().st_size / 1e6:.1f} MB")
        t0 = time.perf_counter()
        again = subprocess.run([sys.executable, "-m", "benchtui", "history", "import",
                                *map(str, sessions), "--catalog", str(catalog)],
                               cwd=ROOT, capture_output=True, text=True, check=False)
        print(f"again (every one already there): {time.perf_counter() - t0:.1f} s, "
              f"{again.stderr.count('already in the catalog')} unchanged")
    finally:
        if args.keep is None:
            shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
