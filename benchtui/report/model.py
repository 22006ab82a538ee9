"""What a report is, as plain data: rows of values, each value with its baseline.

A *row* is one run of a step on one host (or the step's fleet: every host together) of one
session; its *values* are figures in base units (ops/s, bytes/s, seconds, ratios), each
named by a metric (docs/SAMPLES.md's names where one fits, ``latency_p99_seconds`` and the
like for a window's percentiles), an op (read/write/..., send/receive) and an item (a device,
a memory copy method, a score's test). The formats (``formats.py``, ``markdown.py``) only
lay them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchtui.model.events import COMPLETED
from benchtui.model.format import format_duration
from benchtui.session.compare import FLEET, BaselineSpec

if TYPE_CHECKING:
    from benchtui.report.steady import Steadiness
    from benchtui.session.changes import Change

#: Metrics where a larger value is worse (a regression gate's ``--fail-above``).
HIGHER_IS_WORSE = frozenset({
    "latency_mean_seconds", "latency_p50_seconds", "latency_p99_seconds",
    "latency_p999_seconds", "disk_await_seconds", "net_retransmits",
})


#: What every format shows for a value too large for a double (a tool printed absurd numbers
#: and their sum or mean overflowed): never a traceback, never a blank taken for "missing".
OVERFLOW = "overflow"


def overflowed(value: float | None) -> bool:
    """True for a value that overflowed (infinite, or NaN from infinities combined)."""
    return value is not None and not math.isfinite(value)


def percent_of(value: float, baseline: float | None) -> float | None:
    """``value`` as a percentage of ``baseline`` (None without one, or against 0)."""
    if baseline is None or baseline == 0:
        return None
    return 100.0 * value / baseline


@dataclass(slots=True)
class Value:
    metric: str
    op: str
    value: float
    unit: str
    #: A device, a memory copy method, a benchmark test: what the value is of, besides op.
    item: str = ""
    #: Where the figure came from: "interval" (window mean), "summary" (the tool's own
    #: end-of-run figure), "histogram" (quantiles of merged histograms), "percentiles" (the
    #: tool's own), "mean".
    source: str = ""
    baseline: float | None = None
    #: A row that stands for several runs (``select`` median or best): the lowest and the
    #: highest of this figure over them (None for a row of one run).
    low: float | None = None
    high: float | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.metric, self.op, self.item)

    @property
    def percent(self) -> float | None:
        """The value as a percentage of its baseline (None without one, or against 0)."""
        return percent_of(self.value, self.baseline)


@dataclass(slots=True)
class Row:
    session: str
    step: str
    host: str
    #: The step's label as recorded (``randread#2``): which run this row is; the step's
    #: name for a median row (of no single run), whose ``repeat`` is 0.
    label: str
    repeat: int
    #: The window the figures cover (epoch seconds): from ``--skip`` after the tool's own
    #: start to its last interval (a median row: from its first run's to its last run's).
    t0: float
    t1: float
    values: list[Value] = field(default_factory=list)
    steadiness: Steadiness | None = None
    #: Runs of the step this row stands for (``select``: median or best of N), when > 1.
    selected_from: int = 1
    #: How it was made from them: "median" (each figure the median of the runs': a row of
    #: no single run, ``repeats.py``) or "best" (the best run), with ``selected_from`` > 1.
    selected_by: str = ""
    #: The baseline row this one is compared with: "step / host", when there is one.
    baseline: str = ""
    #: ``outcome == "completed"`` (None: the recording ends before the run did).
    ok: bool | None = None
    #: How the run ended (``events.OUTCOMES``; a fleet row: its hosts' worst) and why; None
    #: when the recording ends before the run did. (A report's builder sets it; a row made
    #: by hand stands for a run that completed.)
    outcome: str | None = COMPLETED
    reason: str = ""
    #: Seconds its tool printed nothing, past its ``silence`` (0: never).
    silent_seconds: float = 0.0
    #: The outcome of the baseline row it is compared with (None: one with no end).
    baseline_outcome: str | None = COMPLETED
    #: A sweep's values for this step (the plan's ``matrix``: option -> value), else empty.
    matrix: dict[str, str] = field(default_factory=dict)
    #: The host's part in a client-server step (iperf3): "client", "server", or "".
    role: str = ""
    #: A row of several runs' (``select`` median/best): the range over them of the ops'
    #: total: metric -> (min, max) (IOPS, bandwidth, network, ...).
    spread: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: The runs the row stands for: their labels -> when each one's tool started (its first
    #: interval's start, epoch seconds: what the per-second plots count from). One run for
    #: a run's row; every run it combines for a median (or best) row.
    runs: dict[str, float] = field(default_factory=dict)
    #: The baseline row itself (``baseline`` names it), for plots that draw its run.
    baseline_row: Row | None = None

    @property
    def is_fleet(self) -> bool:
        return self.host == FLEET

    @property
    def combined(self) -> bool:
        """The row is the median of several runs (not one of them)."""
        return self.selected_by == "median" and self.selected_from > 1

    def run_name(self) -> str:
        """The step, and which of its runs the row is: ``randread #2``, ``randread (median
        of 3)``, ``randread #2 (best of 3)``, or the step alone for a step run once."""
        if self.combined:
            return f"{self.step} (median of {self.selected_from})"
        name = f"{self.step} #{self.repeat}" if self.label != self.step else self.step
        return name + (f" (best of {self.selected_from})" if self.selected_from > 1 else "")

    @property
    def completed(self) -> bool:
        """The run ran to its end: its figures cover the whole of it."""
        return self.outcome == COMPLETED

    def flags(self) -> list[str]:
        """What a table marks a row with: how it ended when it did not complete, and a
        tool's silence (``["interrupted", "silent 11m00s"]``); empty for a clean run."""
        out = []
        if not self.completed:
            out.append(self.outcome or "no end recorded")
        if self.silent_seconds > 0:
            out.append(f"silent {format_duration(self.silent_seconds)}")
        return out

    def parts(self, metric: str) -> list[Value]:
        """The values the row's ``metric`` over its ops adds up: read + write (the tool's
        ``total`` where it splits none); the figure itself, not its items, where it has one
        (an iperf3 server's figure, not its clients' apart); of the network one direction
        (a fleet row has both: its receives, what arrived)."""
        found = [v for v in self.values if v.metric == metric]
        found = [v for v in found if not v.item] or found
        found = [v for v in found if v.op != "total"] or found
        if metric == "net_bandwidth_bytes" and len({v.op for v in found}) > 1:
            found = [v for v in found if v.op == "receive"]
        return found

    def get(self, metric: str, op: str = "", item: str = "") -> Value | None:
        for v in self.values:
            if v.metric == metric and v.op == op and v.item == item:
                return v
        return None


@dataclass(slots=True)
class Report:
    #: The sessions' names (file stems), in the order given.
    sessions: list[str]
    rows: list[Row]
    baseline: BaselineSpec | None = None
    #: Steps of the sessions with no counterpart in the baseline.
    unmatched_steps: list[str] = field(default_factory=list)
    #: Sentences for the user (damaged files, windows shorter than the skip, ...).
    warnings: list[str] = field(default_factory=list)
    #: Seconds skipped at the start of every run (ramp-up).
    skip: float = 0.0
    #: session name -> its path, host facts and whether it was imported.
    facts: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    imported: dict[str, bool] = field(default_factory=dict)
    #: ReportOptions.figures: "window", "summary", or None (each session's default).
    figures: str | None = None
    #: session name -> the resolution of its latency histograms (``histogram_bits``; None:
    #: fio's own, 6), for sessions with histograms.
    histogram_bits: dict[str, int | None] = field(default_factory=dict)
    #: session name -> its plan's description ("" when none).
    descriptions: dict[str, str] = field(default_factory=dict)
    #: A session baseline (``session=FILE``): its name, path and description.
    baseline_session: tuple[str, str, str] | None = None
    #: session name -> what changed against the baseline session (plans, facts).
    changes: dict[str, list[Change]] = field(default_factory=dict)
    #: Steps left out by ``--steps``/``--exclude-step`` (said once).
    left_out: list[str] = field(default_factory=list)

    def steps(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.setdefault(r.step)
        return list(seen)
