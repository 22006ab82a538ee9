"""benchmarks/export_speed.py still runs (tiny sizes; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys

from tests.export_support import repo_root


def test_export_benchmark_runs_and_reports() -> None:
    script = repo_root() / "benchmarks" / "export_speed.py"
    done = subprocess.run([sys.executable, str(script), "--hosts", "2", "--seconds", "3",
                           "--dump-seconds", "5", "--out", "-"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert "| 2 | " in done.stdout and "samples written" in done.stdout

