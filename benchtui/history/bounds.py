"""The range a figure of the history can have: beyond it, no tool measured it.

A figure that is not a finite number, is negative, or is beyond its metric's bound is
refused at import (``ingest.py``: one sentence naming the file, host and metric; nothing of
the session written), and a catalog that already holds one (written by an older benchtui,
or by hand) leaves that point out of the analysis with a sentence (``history_cmd``) and
``history check`` lists it. The bounds are far above any hardware, for a whole fleet
(docs/history.md, "Bounds"); what they keep out is the absurd: an ``IOPS=`` of 309 digits
that a parser reads as a finite 1e308, whose square overflows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from benchtui.history.series import metric_named


@dataclass(frozen=True, slots=True)
class Bound:
    metric: str
    #: The highest figure kept, in base units.
    high: float
    #: What the bound stands for, for the docs and the sentence.
    why: str


BOUNDS: dict[str, Bound] = {b.metric: b for b in (
    Bound("iops", 1e12, "a million hosts at a million IOPS each"),
    Bound("bandwidth_bytes", 1e16, "10 PB/s: ten thousand hosts at 1 TB/s each"),
    Bound("latency_mean_seconds", 1e6, "11.6 days for one I/O"),
    Bound("latency_p99_seconds", 1e6, "11.6 days for one I/O"),
    Bound("disk_util_ratio", 10.0, "1000% busy (iostat's %util is at most 100%)"),
)}


def within(metric: str, value: float) -> bool:
    """A finite figure from 0 to the metric's bound (a metric without one: finite, >= 0)."""
    bound = BOUNDS.get(metric)
    return math.isfinite(value) and 0.0 <= value <= (bound.high if bound else math.inf)


def beyond(metric: str, op: str, value: float) -> str:
    """What is wrong with ``value``, in words: ``IOPS read of 1e+308 is beyond any tool's
    range (at most 1e+12)``."""
    m = metric_named(metric)
    label = f"{m.label if m else metric}{' ' + op if op else ''}"
    if not math.isfinite(value):
        return f"{label} is not a finite number ({value})"
    if value < 0:
        return f"{label} is negative ({value:g})"
    bound = BOUNDS[metric]
    return (f"{label} of {value:.4g} {m.unit if m else ''} is beyond any tool's range (at "
            f"most {bound.high:g}: {bound.why})")


def sql_within(metric: str, value: str) -> str:
    """The SQL condition ``within`` is: ``metric`` and ``value`` are the columns' names.
    (SQLite stores no NaN; PostgreSQL's NaN is above every number, so it fails it.)"""
    cases = " ".join(f"WHEN '{b.metric}' THEN {b.high!r}" for b in BOUNDS.values())
    return f"({value} >= 0 AND {value} <= CASE {metric} {cases} ELSE 1e300 END)"
