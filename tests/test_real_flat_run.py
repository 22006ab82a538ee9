"""Issue 18's acceptance on a real run: a flat 20 s fio run (rate-limited, so that every
second is the same) recorded by ``benchtui record``. The report's own figure over the run
(``--figures window``: the mean of the per-second rates, each weighted by the seconds it
covered, fio's partial last interval included) is within 1% of fio's own end-of-run IOPS
(the report's default figure), and the run is steady: a partial last interval is neither a
dip nor a spike."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
#: Low enough that fio holds it on a loaded 2-core machine: at 500 IOPS (500 timed
#: wake-ups a second) three busy loops beside it starved fio to ~230 IOPS in bursts, a run
#: that is rightly not steady; at 100 it stays within 2% under the same load.
RATE = 100

pytestmark = pytest.mark.slow


def _benchtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def _iops(session: Path, *figures: str) -> dict[str, str]:
    done = _benchtui("report", str(session), "--skip", "2", "--format", "csv", *figures)
    assert done.returncode == 0, done.stderr
    rows = [r for r in csv.DictReader(io.StringIO(done.stdout))
            if r["metric"] == "iops" and r["op"] == "read" and r["host"] == "here"]
    assert len(rows) == 1, rows
    return rows[0]


def test_a_flat_run_reads_fios_own_figure_and_is_steady(tmp_path: Path) -> None:
    require_tool("fio")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "flat-run"\n\n[hosts.here]\nlocal = true\n\n'
        '[[step]]\nname = "flat"\ntool = "fio"\nhosts = "all"\n'
        f'args = "--filename={tmp_path}/fio.dat --size=8m --rw=randread --bs=4k '
        f'--ioengine=psync --rate_iops={RATE} --runtime=20 --time_based"\n')
    session = tmp_path / "flat.btr"
    done = _benchtui("record", str(plan), "-o", str(session))
    assert done.returncode == 0, done.stderr
    fio_own = _iops(session)
    window = _iops(session, "--figures", "window")
    assert fio_own["source"] == "summary" and window["source"] != "summary", (fio_own, window)
    assert float(fio_own["value"]) == pytest.approx(RATE, rel=0.02)
    assert float(window["value"]) == pytest.approx(float(fio_own["value"]), rel=0.01)
    assert window["steady"] == "yes", window
