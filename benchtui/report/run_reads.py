"""What a report reads of its runs: each run's whole (its tool's end-of-run figures, and
when the tool ran: ``window.py``) and its window, in three parts for the steadiness test.

The runs of a step are read together: every host's reads of one kind are asked of the
reader at once (``SessionReader.series_stats_many``). A window starts and ends with its tool,
not on the recording's stats-block cuts: it is read from the host's cuts just outside it
(the run's start plus a multiple of 5 s, its end), less the few seconds outside
(``window.without_part``), and those seconds are decoded. Asked host by host, each host's
edge seconds would decode their segment from its start through every host's records: the
fleet's segment once per host, a cost that grows with the square of the hosts. Asked
together, each segment is decoded once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchtui.report.figures import INTERVAL, METRICS, SUMMARY
from benchtui.report.steady import MIN_POINTS as MIN_STEADY_POINTS
from benchtui.report.steady import Steadiness, steadiness
from benchtui.report.window import TOOL_METRICS, tool_span, without_part
from benchtui.session.compare import RunWindow
from benchtui.store.recording import SessionReader, StatsQuery
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import SeriesStats

#: A summary arrives with the run's last output, at most this long after its run_end event.
SUMMARY_SLACK = 1.0
#: How far outside a window a stats-block cut is looked for, seconds, nearest first (a
#: run's blocks are 5 s long for its first minute).
_EDGE = 30.0
_REACHES = (2.0, 6.0, _EDGE)

Stats = dict[SeriesDef, SeriesStats]
Wanted = Callable[[SeriesDef], bool]


@dataclass
class RunRead:
    """What a run's row is made of."""

    #: the whole run's statistics: its end-of-run figures and its tool's interval series,
    #: without histograms (all, with histograms, in an imported session: also the window)
    whole: Stats
    window: Stats
    steady: Steadiness | None
    #: when the run's figures start (the tool's start), and the window as a report says it
    started: float
    shown: tuple[float, float]
    #: shorter than twice the skip: read over its whole length
    short: bool = False


def _of_whole(d: SeriesDef) -> bool:
    """What a report takes of a whole run: its end-of-run figures, and the series that tell
    when its tool ran (``window.tool_span``)."""
    return d.kind == SUMMARY or (d.kind == INTERVAL and d.metric in TOOL_METRICS)


def in_step(host: str, label: str) -> Wanted:
    """The series of a run a report reads: the host's samples labelled with the run's step,
    of the metrics its figures are made of (``figures.METRICS``)."""
    pair = ("step", label)

    def wanted(d: SeriesDef) -> bool:
        return d.metric in METRICS and d.host == host and pair in d.labels
    return wanted


def _merge(into: Stats, part: Stats) -> None:
    for d, st in part.items():
        have = into.get(d)
        if have is None:
            into[d] = st  # each part is a fresh object of its own
        else:
            have.merge(st)


class _Asked:
    """Queries gathered, then answered together (``answer``); each ``ask`` gives the index
    of its answer."""

    def __init__(self, reader: SessionReader) -> None:
        self.reader = reader
        self.queries: list[StatsQuery] = []
        self.answers: list[Stats] = []

    def ask(self, t0: float, t1: float, wanted: Wanted, host: str, *,
            histograms: bool = True, only: Wanted | None = None) -> int:
        self.queries.append(StatsQuery(t0, t1, wanted, host, histograms, only))
        return len(self.queries) - 1

    def answer(self) -> None:
        self.answers = self.reader.series_stats_many(self.queries)


@dataclass
class _Part:
    """A part of a window off the cuts: read from the cuts around it, less the outside."""

    t0: float
    t1: float
    within: int
    outside: list[int] = field(default_factory=list)
    #: the part itself, asked when the outside cannot be taken away
    fallback: int | None = None


@dataclass
class _Plan:
    run: RunWindow
    wanted: Wanted
    whole: Stats
    started: float
    shown: tuple[float, float]
    short: bool = False
    window: int | None = None  # the window read as is (no tool span)
    parts: list[_Part | int] = field(default_factory=list)  # first, third, fourth or one


class RunReader:
    """Reads runs for a report (module docstring)."""

    def __init__(self, reader: SessionReader, skip: float, *, imported: bool) -> None:
        self.reader = reader
        self.skip = skip
        self.imported = imported

    def read(self, runs: Sequence[RunWindow]) -> list[RunRead]:
        reader = self.reader
        wholes = _Asked(reader)
        wanted = [in_step(run.host, run.label) for run in runs]
        for run, w in zip(runs, wanted, strict=True):
            wholes.ask(run.t0, self._end(run) + SUMMARY_SLACK, w, run.host,
                       histograms=self.imported, only=None if self.imported else _of_whole)
        wholes.answer()
        asked = _Asked(reader)
        plans = [self._plan(run, w, whole, asked)
                 for run, w, whole in zip(runs, wanted, wholes.answers, strict=True)]
        asked.answer()
        again = _Asked(reader)
        for plan in plans:
            for part in plan.parts:
                if isinstance(part, _Part) and not self._take_outside(part, asked):
                    part.fallback = again.ask(part.t0, part.t1, plan.wanted, plan.run.host)
        if again.queries:
            again.answer()
        return [self._finish(plan, asked, again) for plan in plans]

    def _end(self, run: RunWindow) -> float:
        return run.t1 if run.t1 is not None else self.reader.end + 1e-6

    def _plan(self, run: RunWindow, wanted: Wanted, whole: Stats, asked: _Asked) -> _Plan:
        span = None if self.imported else tool_span(whole)
        t1 = self._end(run)
        if span is None:
            # an imported session (its times are made up) or a tool that printed no
            # interval: the run's own window
            plan = _Plan(run, wanted, whole, run.t0, (run.t0, t1))
            if not self.imported:
                plan.window = asked.ask(run.t0, t1, wanted, run.host)
            return plan
        w0, w1, cut = span.window(self.skip)
        plan = _Plan(run, wanted, whole, span.start, span.shown(self.skip),
                     short=not cut and self.skip > 0)
        host = run.host
        if w1 - w0 < 2 * MIN_STEADY_POINTS:
            # too short for a verdict (steady.py wants 4 per-second points in the last
            # half): one read
            plan.parts = [self._part(w0, w1, wanted, host, asked)]
            return plan
        # three parts (first half, third and fourth quarter) for the steadiness test,
        # meeting where the host's stats blocks are cut when there is such a time within
        # an eighth of the window of the half and of the last quarter: then no sample of
        # the middle is decoded
        mid, q3 = w0 + (w1 - w0) / 2, w0 + 3 * (w1 - w0) / 4
        near = (w1 - w0) / 8
        m = self.reader.stats_split_near(mid, near, host)
        q = self.reader.stats_split_near(q3, near, host)
        if w0 < m < q < w1:
            mid, q3 = m, q
        plan.parts = [self._part(w0, mid, wanted, host, asked),
                      asked.ask(mid, q3, wanted, host),
                      self._part(q3, w1, wanted, host, asked)]
        return plan

    def _part(self, t0: float, t1: float, wanted: Wanted, host: str, asked: _Asked
              ) -> _Part | int:
        """``[t0, t1)`` read from the host's cut just before ``t0`` to its cut just after
        ``t1`` (each within ``_EDGE`` seconds), with the seconds outside asked apart; the
        part itself when it is on cuts."""
        start, end = self._cut(t0, -1.0, host), self._cut(t1, 1.0, host)
        if (start, end) == (t0, t1):
            return asked.ask(t0, t1, wanted, host)
        part = _Part(t0, t1, asked.ask(start, end, wanted, host))
        part.outside = [asked.ask(a, b, wanted, host) for a, b in ((start, t0), (t1, end))
                        if b > a]
        return part

    def _cut(self, t: float, side: float, host: str) -> float:
        """The host's stats-block cut nearest ``t`` before it (``side`` -1) or after it (1),
        at most ``_EDGE`` seconds away; ``t`` itself when there is none."""
        for reach in _REACHES:
            found = self.reader.stats_split_near(t + side * reach / 2, reach / 2, host)
            if (found - t) * side >= 0 and found != t + side * reach / 2:
                return found
        return t

    @staticmethod
    def _take_outside(part: _Part, asked: _Asked) -> bool:
        stats = asked.answers[part.within]
        return all(without_part(stats, asked.answers[i]) for i in part.outside)

    def _finish(self, plan: _Plan, asked: _Asked, again: _Asked) -> RunRead:
        def got(part: _Part | int) -> Stats:
            if isinstance(part, int):
                return asked.answers[part]
            if part.fallback is not None:
                return again.answers[part.fallback]
            return asked.answers[part.within]

        read = RunRead(plan.whole, plan.whole, None, plan.started, plan.shown, plan.short)
        if plan.window is not None:
            read.window = asked.answers[plan.window]
        elif len(plan.parts) == 1:
            read.window = got(plan.parts[0])
        elif plan.parts:
            first, third, fourth = map(got, plan.parts)
            read.steady = steadiness(third, fourth)
            window: Stats = {}
            for part in (first, third, fourth):
                _merge(window, part)
            read.window = window
        return read

