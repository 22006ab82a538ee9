"""A real mbw run (Debian's mbw), parsed: three methods, three runs each, and the averages."""

from __future__ import annotations

import re
import subprocess

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from benchtui.parsers.mbw import MbwParser
from tests.helpers import check_invariants, one, pick, require_tool

MIB = 1024.0**2


def test_mbw_real_run() -> None:
    exe = require_tool("mbw")
    done = subprocess.run([exe, "-n", "3", "64"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    parser = MbwParser(host="lo", source="real")
    samples = parser.feed_text(done.stdout) + parser.finish()
    check_invariants(samples)
    assert not parser.warnings
    copied = [float(x) for x in re.findall(r"Elapsed: ([\d.]+)", done.stdout)]
    elapsed_total = 0.0
    for method in ("MEMCPY", "DUMB", "MCBLOCK"):
        runs = pick(samples, "mem_bandwidth_bytes", INTERVAL, method=method)
        assert len(runs) == 3
        assert all(s.value > 100 * MIB for s in runs)  # any machine copies 100 MiB/s
        # each run copies 64 MiB: the rate is 64 MiB over that run's own time
        for s in runs:
            took = (s.elapsed or 0) - elapsed_total
            elapsed_total = s.elapsed or 0
            assert s.value == pytest.approx(64 * MIB / took, rel=0.02)
        avg = one(samples, "mem_bandwidth_bytes", SUMMARY, method=method)
        assert min(s.value for s in runs) <= avg <= max(s.value for s in runs)
    # the per-run Elapsed column (not the AVG lines) adds up to the last elapsed
    assert elapsed_total == pytest.approx(sum(copied[:3] + copied[4:7] + copied[8:11]))
