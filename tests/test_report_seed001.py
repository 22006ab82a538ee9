"""Seed 001's table (fio randrw with three I/O engines on ext4, xfs and a raw partition:
"Filesystem | IO Interface | Read | Write | Latency | IOPS"), from the seed through
``benchtui import`` and ``benchtui report``.

The authors copied Read, Write and IOPS from the last status line fio printed (``Jobs: 1 ...
[r=53.8MiB/s,w=54.2MiB/s][r=13.8k,w=13.9k IOPS]``), not from the run's summary (56.0 MiB/s):
``--figures window`` reports those (an imported session's per-interval figures are that
line). Their IOPS column is sometimes the read and sometimes the write figure, so a cell
must equal one of the two; Latency is the read mean (fio's ``lat``, within 10%).
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "tests" / "fixtures" / "seeds" / "001_82a32511c661f41a.txt"
_UNITS = {"MiB/s": 1024**2, "us": 1e-6}


def _table() -> list[tuple[str, str, float, float, float, float]]:
    """(file system, engine, read B/s, write B/s, latency s, IOPS) rows of the seed's table."""
    text = SEED.read_text(encoding="utf-8")
    rows = re.findall(r"\| (Ext4|None|XFS) \| (\w+) \| ([\d.]+) MiB/s \| ([\d.]+) MiB/s \| "
                      r"(\d+)us \| ([\d.]+)k \|", text)
    return [(fs, engine, float(r) * _UNITS["MiB/s"], float(w) * _UNITS["MiB/s"],
             float(lat) * 1e-6, float(iops) * 1000) for fs, engine, r, w, lat, iops in rows]


def _benchtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_engines_by_file_system(tmp_path: Path) -> None:
    session = tmp_path / "seed001.btr"
    done = _benchtui("import", str(SEED), "--map", "examples/import/seed001.toml", "-o",
                     str(session))
    assert done.returncode == 0, done.stderr
    done = _benchtui("report", str(session), "--figures", "window", "--format", "csv")
    assert done.returncode == 0, done.stderr
    values = {(r["host"], r["step"], r["metric"], r["op"]): float(r["value"])
              for r in csv.DictReader(io.StringIO(done.stdout))}
    table = _table()
    assert len(table) == 9
    for fs, engine, read, write, latency, iops in table:
        def get(metric: str, op: str, fs: str = fs, engine: str = engine) -> float:
            return values[(fs, engine, metric, op)]
        assert get("bandwidth_bytes", "read") == pytest.approx(read, rel=0.006), (fs, engine)
        assert get("bandwidth_bytes", "write") == pytest.approx(write, rel=0.006), (fs, engine)
        assert any(get("iops", op) == pytest.approx(iops, rel=0.006)
                   for op in ("read", "write")), (fs, engine, iops)
        assert get("latency_mean_seconds", "read") == pytest.approx(latency, rel=0.10)
