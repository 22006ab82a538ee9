"""Shared test helpers: parse a fixture, pick samples, check the invariants every sample keeps."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers.base import Parser

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = Path(__file__).resolve().parent / "fixtures" / "seeds"

#: Metric names of docs/SAMPLES.md plus the ones the project added (docs/SAMPLES.md lists them).
KNOWN_LABEL_VALUE_TYPES = (str,)
#: Put before a command the tests start as a user's shell would: SIGHUP at its default
#: action. A suite run under ``nohup`` (or any runner that ignores SIGHUP) passes that
#: disposition on to every process it starts, and a controller started so never sees a
#: hangup (``session/stop_signals.py``: an ignored SIGHUP is the user's ``nohup``).
FROM_A_TERMINAL = ("env", "--default-signal=HUP")


def fixture_text(relpath: str) -> str:
    return (FIXTURES / relpath).read_text(encoding="utf-8")


def parse_with(cls: type[Parser], text: str, *, host: str = "-", t: float | None = None
               ) -> tuple[list[Sample], Parser]:
    """Feed ``text`` line by line through a new ``cls`` parser; return samples and the parser."""
    parser = cls(host=host, source="test")
    samples: list[Sample] = []
    for line in text.split("\n"):
        samples.extend(parser.feed(line, t))
    samples.extend(parser.finish())
    check_invariants(samples)
    return samples, parser


def pick(samples: list[Sample], metric: str, kind: str | None = None, **labels: str
         ) -> list[Sample]:
    """Samples of ``metric`` (and ``kind``) whose labels include all of ``labels``."""
    return [s for s in samples
            if s.metric == metric and (kind is None or s.kind == kind)
            and all(s.labels.get(k) == v for k, v in labels.items())]


def one(samples: list[Sample], metric: str, kind: str | None = None, **labels: str) -> float:
    """The value of the single sample matching; fails if there is not exactly one."""
    found = pick(samples, metric, kind, **labels)
    assert len(found) == 1, f"expected one {metric} {kind} {labels}, got {len(found)}: {found[:5]}"
    return found[0].value


def check_invariants(samples: list[Sample]) -> None:
    """What docs/SAMPLES.md promises of every sample."""
    for s in samples:
        assert isinstance(s.value, float | int) and math.isfinite(s.value), s
        assert s.kind in (INTERVAL, SUMMARY), s
        assert s.tool and s.metric, s
        assert s.t is not None or s.elapsed is not None, f"no t and no elapsed: {s}"
        if s.t is not None:
            assert math.isfinite(s.t), s
        if s.elapsed is not None:
            assert math.isfinite(s.elapsed) and s.elapsed >= 0, s
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in s.labels.items()), s
        if "quantile" in s.labels:
            q = s.labels["quantile"]
            assert (0 <= float(q) <= 1 and not q.endswith("0")) or q == "0", s
        if s.metric.endswith("_ratio") and s.metric != "net_loss_ratio":
            assert -1e-9 <= s.value <= 1.5, s


def require_tool(name: str) -> str:
    """The path of a Debian tool the test runs for real. In CI a missing tool is a failure
    (the set-up script installs it); on a developer's machine the test is skipped."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; scripts/setup test installs it as root")
        pytest.skip(f"{name} is not installed (scripts/setup test installs it as root)")
    return path
