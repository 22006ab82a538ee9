"""The fleet header: the session, its step, its hosts and the fleet's totals, in three lines.

Line 1: session name, the current step with its progress and ETA, elapsed time, hosts up out
of the total, how far behind the controller is when it is (its figures that late), and the
display's own state (paused, chart window, anything a subclass adds).
Line 2: fleet IOPS and bandwidth, reads and writes summed over every host and job (taken with
the panes' own figures: with one host, the pane's numbers at every frame; ``FOLLOW_HOSTS``).
Line 3: fleet latency p50/p99/p99.9 per direction, quantiles of the merged per-interval
histograms of every host (never an average of percentiles).
With a baseline (``--baseline``), the fleet's IOPS and p99 are followed by their shares of the
baseline fleet's at the same step-elapsed second ("r 44.2k 97%", "p99 104%"), coloured
outside the tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text

from benchtui.model.format import (
    format_byte_rate,
    format_count,
    format_duration,
    format_latency,
    format_share,
)
from benchtui.session.estimate import Estimate, PlannedRun, estimate, waiting_for
from benchtui.store.fleet import FleetState
from benchtui.ui import figures as fig
from benchtui.ui.pane import figures_key
from benchtui.ui.reused_lines import ReusedLines
from benchtui.ui.screens import plural

if TYPE_CHECKING:
    from benchtui.ui.ghost import Ghost

BAR_WIDTH = 10
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def _right(left: Text, right: Text, width: int) -> Text:
    """``left``, then ``right`` against the right edge when both fit (else ``left`` only)."""
    gap = width - left.cell_len - right.cell_len
    if not right or gap < 1:
        return left
    return Text.assemble(left, " " * gap, right)


def progress_bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """``fraction`` (0..1) as a bar of ``width`` cells, in eighths."""
    eighths = round(min(max(fraction, 0.0), 1.0) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width)


#: Up to this many hosts the header's figures are taken anew whenever a host's are (its
#: pane's), so that the fleet line is the panes' sum at every frame (with one host, the
#: pane's figures); with more, at most once a second (and at a step's start or end): they
#: merge every host's histograms, and a fleet's data changes many times a second.
FOLLOW_HOSTS = 4


def _data_key(state: FleetState, now: float) -> tuple[object, ...]:
    """What the fleet line's figures depend on (``FOLLOW_HOSTS``)."""
    if len(state.hosts) <= FOLLOW_HOSTS:
        return (id(state), *(figures_key(state, h, now) for h in state.hosts))
    return (id(state), int(now), state.store.scope, len(state.steps))


class FleetHeader(ReusedLines):
    """Three lines at the top of the console."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "header--title", "header--label", "header--read", "header--write", "header--muted",
        "header--ok", "header--bad", "header--badge"}
    DEFAULT_CSS = """
    FleetHeader { height: 3; padding: 0 1; background: $panel; }
    """

    def __init__(self) -> None:
        super().__init__(id="fleet-header")
        self.figures: fig.FleetFigures | None = None
        self._text = Text()
        self._key: tuple[object, ...] | None = None
        #: The fleet's I/O figures, and what they were computed from (``_data_key``).
        self._io: fig.IoFigures | None = None
        self._data: tuple[object, ...] | None = None
        #: Extra words for line 1 (paused, window, replay position), set by the app.
        self.badges: tuple[str, ...] = ()
        #: The time left (``session.estimate``), and what a step past its length waits for.
        self.estimate = Estimate(None, None)
        self.waiting: str | None = None

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"header--{name}")

    def update_from(self, state: FleetState, now: float, generation: int, *,
                    ghost: Ghost | None = None, runs: Sequence[PlannedRun] = ()) -> bool:
        """Recompute when the fleet's data changed (``_data_key``), once a second of the
        clock (elapsed, the time left), when the display itself changed, and when the
        controller's lag as shown (whole seconds) did; ``ghost``: a baseline to compare the
        fleet with; ``runs``: the session's planned runs (its time left is estimated from
        them)."""
        data = _data_key(state, now)
        lag = state.controller_lag
        key = (id(state), data, int(now), self.badges, generation, self.size.width,
               state.started is None, state.ended is None, len(state.steps),
               None if lag is None else round(lag))
        if key == self._key:
            return False
        self._key = key
        if data != self._data or self._io is None:
            self._data = data
            self._io = fig.io_figures(state.store, None, now)
        f = self.figures = fig.fleet_figures(state, now, self._io)
        if ghost is not None:
            f.versus = ghost.fleet_versus(f, now)
        width = max(self.content_region.width or self.size.width, 1)
        self.estimate = estimate(state, runs, now)
        self.waiting = waiting_for(state, now)
        try:
            lines = [self._line1(f, state.controller_lag),
                     _right(self._line2(f), self._counts(f), width),
                     _right(self._line3(f), self._badges(), width)]
        except KeyError:  # styled before the theme reached this widget: next tick
            self._key = None
            return False
        for line in lines:
            line.no_wrap = True
            line.overflow = "ellipsis"
            line.truncate(width, overflow="ellipsis")
        self._text = Text("\n").join(lines)
        self.refresh()
        return True

    def render(self) -> Text:
        return self._text

    def _line1(self, f: fig.FleetFigures, behind: float | None = None) -> Text:
        label, muted = self._style("label"), self._style("muted")
        line = Text()
        line.append(f.name or "benchtui", self._style("title"))
        line.append("  ")
        step = f.step
        if step is not None:
            line.append("step ", muted)
            line.append(step.name, label)
            if f.progress is not None:
                line.append(" ")
                line.append(progress_bar(f.progress), self._style("read"))
                line.append(f" {f.progress * 100:3.0f}%", label)
            left = self.estimate.step_left  # (None when the step's length is not known)
            if self.waiting is not None:
                line.append(" " + self.waiting, label)
            elif left is not None:
                line.append(" ETA ", muted)
                line.append(format_duration(left), label)
        elif f.ended:
            if f.ok:
                line.append("finished ✔", self._style("ok"))
            else:
                line.append("finished ✖", self._style("bad"))
        elif f.started and f.last_step is not None:
            line.append("between steps", muted)
        elif f.started:
            line.append("starting…", muted)
        else:
            line.append("connecting…", muted)
        line.append("  elapsed ", muted)
        line.append(format_duration(f.elapsed), label)
        line.append("  hosts ", muted)
        up_style = self._style("ok") if f.hosts_up == f.hosts_total else self._style("bad")
        line.append(f"{f.hosts_up}/{f.hosts_total}", up_style)
        line.append(" up", muted)
        session_left = self.estimate.session_left
        if session_left is not None and not f.ended:
            line.append("  session ", muted)
            line.append(f"~{format_duration(session_left)}", label)
            line.append(" left" if not self.estimate.unknown else
                        f" left (+{plural(self.estimate.unknown, 'run')} of unknown length)",
                        muted)
        if behind is not None:
            line.append("  ")
            line.append(f"behind {format_duration(behind)}", self._style("bad"))
        return line

    def _counts(self, f: fig.FleetFigures) -> Text:
        line = Text()
        if f.errors:
            line.append(plural(f.errors, "error"), self._style("bad"))
        if f.warnings:
            line.append("  " if f.errors else "")
            line.append(plural(f.warnings, "warning"), self._style("badge"))
        return line

    def _badges(self) -> Text:
        line = Text()
        for badge in self.badges:
            line.append(" ")
            line.append(f" {badge} ", self._style("badge"))
        return line

    def _share(self, line: Text, f: fig.FleetFigures, figures: str, op: str, *,
               lower_is_better: bool = False, label: str = "") -> None:
        """" 97%" after a number: its share of the baseline's, coloured outside the
        tolerance (nothing without a baseline figure)."""
        vs = f.versus
        share = getattr(vs, figures).get(op) if vs is not None else None
        if vs is None or share is None:
            return
        verdict = vs.judge(share, lower_is_better=lower_is_better)
        line.append(f" {label}", self._style("muted"))
        line.append(format_share(share), self._style(
            "muted" if verdict == 0 else "ok" if verdict > 0 else "bad"))

    def _line2(self, f: fig.FleetFigures) -> Text:
        muted, read, write = self._style("muted"), self._style("read"), self._style("write")
        line = Text()
        line.append("fleet IOPS ", muted)
        if "total" in f.iops and "read" not in f.iops:
            line.append(format_count(f.iops.get("total")), read)
            self._share(line, f, "iops", "total")
        else:
            line.append("r ", muted)
            line.append(format_count(f.iops.get("read")), read)
            self._share(line, f, "iops", "read")
            line.append(" w ", muted)
            line.append(format_count(f.iops.get("write")), write)
            self._share(line, f, "iops", "write")
        line.append("   BW ", muted)
        if "total" in f.bandwidth and "read" not in f.bandwidth:
            line.append(format_byte_rate(f.bandwidth.get("total")), read)
        else:
            line.append("r ", muted)
            line.append(format_byte_rate(f.bandwidth.get("read")), read)
            line.append(" w ", muted)
            line.append(format_byte_rate(f.bandwidth.get("write")), write)
        return line

    def _line3(self, f: fig.FleetFigures) -> Text:
        muted = self._style("muted")
        line = Text()
        line.append("fleet lat p50/p99/p99.9 ", muted)
        if not f.latency:
            line.append("–", muted)
        for i, (op, style) in enumerate((("read", self._style("read")),
                                         ("write", self._style("write")),
                                         ("total", self._style("read")))):
            lat = f.latency.get(op)
            if lat is None:
                continue
            if i and len(line) > 25:
                line.append("   ")
            if op != "total":
                line.append(f"{op[0]} ", muted)
            if lat.source == "mean":
                line.append("mean ", muted)
                line.append(format_latency(lat.p50), style)
                self._share(line, f, "latency", op, lower_is_better=True)
                continue
            line.append("/".join(format_latency(v) for v in (lat.p50, lat.p99, lat.p999)),
                        style)
            if lat.source == "percentiles":
                line.append(" (worst)", muted)
            self._share(line, f, "latency", op, lower_is_better=True, label="p99 ")
        return line
