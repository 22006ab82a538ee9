"""The recording benchmark scripts still run (small sizes; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchtui.store.recording import SessionReader

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_make_session_writes_a_readable_multi_host_session(tmp_path: Path) -> None:
    out = tmp_path / "big.btr"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "make_session.py"), "-o", str(out),
                           "--hosts", "3", "--hours", "0.02", "--doc", "-"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert "SessionReader.open" in done.stdout
    with SessionReader.open(str(out)) as r:
        assert r.complete and not r.warnings
        assert r.host_count == 3 and r.sample_count > 3 * 60 * 50
        kinds = {e.kind for e in r.events()}
        assert {"facts", "session_start", "step_start", "run_start", "session_end"} <= kinds
        tools = {s.tool for s in r.samples(hosts=["h02"])}
        assert tools == {"fio", "iostat"}
        assert any(s.histogram for s in r.samples(metrics=["latency_histogram"]))
