"""A plan's series read from the catalog and analysed: change points (``edivisive.py``),
the levels between them, and whether each change is confirmed.

Only points of completed steps, from runs not excluded, are analysed; the others are kept
and shown. An ``env-change`` annotation on a run is a boundary: the series is analysed
apart before and after it (a new kernel or a re-imaged disk is not a regression).

A change is **confirmed** when the new level has held for ``confirm`` runs: there are at
least that many analysed points from the change on, and their median (the first
``confirm``) is nearer the level after the change than the level before it. A younger one is
**suspected**, and says how many runs it still needs. One whose next runs are back at the
old level is **transient**: a single bad run among good ones is never confirmed, since the
median of the runs from it on is at the old level.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchtui.history.bounds import sql_within
from benchtui.history.catalog import Catalog
from benchtui.history.edivisive import Change, change_points
from benchtui.history.ingest import COMPLETED
from benchtui.history.series import FLEET, METRICS, Metric, metric_named

CONFIRMED, SUSPECTED = "confirmed", "suspected"
#: A change whose next runs went back to the old level (a bad run among good ones).
TRANSIENT = "transient"
REGRESSION, IMPROVEMENT = "regression", "improvement"


#: The smallest relative change ever reported (0.1%), whatever ``min_change``: below it two
#: levels differ by their last printed digit (a rate-limited fio reading 399.9 then 400.0),
#: and series with no noise at all would make the t-test's p 0 for any difference.
RESOLUTION = 0.001


@dataclass(frozen=True)
class Options:
    window: int = 50
    p: float = 0.001
    #: Changes smaller than this (relative, 0.05 = 5%) are not reported (never those under
    #: ``RESOLUTION``).
    min_change: float = 0.0
    confirm: int = 5


@dataclass(frozen=True, slots=True)
class SeriesKey:
    id: int
    plan: str
    step: str
    args_key: str
    metric: str
    op: str
    scope: str
    env_key: str

    @property
    def info(self) -> Metric:
        m = metric_named(self.metric)
        assert m is not None
        return m

    @property
    def name(self) -> str:
        op = f" {self.op}" if self.op else ""
        return f"{self.step} {self.info.short}{op} {self.scope}"


@dataclass(slots=True)
class Point:
    run_id: int
    started: float
    value: float
    outcome: str
    session: str
    path: str
    commit: str | None
    branch: str | None
    #: Why the run is left out (``history exclude``), else None.
    excluded: str | None = None

    @property
    def analysed(self) -> bool:
        return self.outcome == COMPLETED and self.excluded is None


@dataclass(slots=True)
class Segment:
    #: Indexes into ``Analysed.points`` (the first and one past the last analysed point).
    start: int
    end: int
    mean: float
    sd: float
    count: int


@dataclass(slots=True)
class Found:
    series: SeriesKey
    change: Change
    #: Index in ``Analysed.points`` of the first point at the new level, and of the point
    #: before it.
    at: int
    before: int
    run_id: int
    prev_run_id: int
    status: str
    verdict: str
    #: Runs the change still needs to be confirmed (0 when confirmed).
    needs: int
    commits: tuple[str | None, str | None] = (None, None)
    #: Catalog id once stored (``gate.store``).
    id: int | None = None
    acked: bool = False

    @property
    def percent(self) -> float:
        return 100.0 * self.change.forward


@dataclass(slots=True)
class Analysed:
    series: SeriesKey
    points: list[Point]
    segments: list[Segment] = field(default_factory=list)
    changes: list[Found] = field(default_factory=list)
    #: Runs where an environment change was annotated, as indexes into ``points``.
    boundaries: list[int] = field(default_factory=list)

    @property
    def analysed_count(self) -> int:
        return sum(1 for p in self.points if p.analysed)

    @property
    def current(self) -> Segment | None:
        return self.segments[-1] if self.segments else None


def load(catalog: Catalog, plan: str, *, step: str | None = None, metric: str | None = None,
         host: str | None = None, branch: str | None = None, since: float | None = None
         ) -> list[tuple[SeriesKey, list[Point]]]:
    """Every series of ``plan`` (filtered) with its points in run order; a figure beyond
    its bounds is left out (``bounds.py``)."""
    where, params = ["s.plan = ?", sql_within("s.metric", "p.value")], [plan]
    if step is not None:
        where.append("s.step = ?")
        params.append(step)
    if metric is not None:
        where.append("s.metric = ?")
        params.append(metric)
    if host is not None:
        where.append("s.scope = ?")
        params.append(host)
    if since is not None:
        where.append("r.started >= ?")
        params.append(since)  # type: ignore[arg-type]
    if branch is not None:
        where.append("EXISTS (SELECT 1 FROM run_attributes b WHERE b.run_id = r.id AND "
                     "b.name = 'branch' AND b.value = ?)")
        params.append(branch)
    rows = catalog.rows(
        "SELECT s.id, s.plan, s.step, s.args_key, s.metric, s.op, s.scope, s.env_key, "
        "r.id, r.started, p.value, p.outcome, r.session_name, r.path, "
        "(SELECT a.value FROM run_attributes a WHERE a.run_id = r.id AND a.name = 'commit'), "
        "(SELECT a.value FROM run_attributes a WHERE a.run_id = r.id AND a.name = 'branch') "
        "FROM points p JOIN series s ON s.id = p.series_id JOIN runs r ON r.id = p.run_id "
        f"WHERE {' AND '.join(where)} ORDER BY s.id, r.started, r.id", params)
    excluded = dict(catalog.rows("SELECT run_id, reason FROM annotations "
                                 "WHERE kind = 'exclude' AND run_id IS NOT NULL"))
    out: dict[int, tuple[SeriesKey, list[Point]]] = {}
    for r in rows:
        sid = int(r[0])
        if sid not in out:
            out[sid] = (SeriesKey(sid, r[1], r[2], r[3], r[4], r[5], r[6], r[7]), [])
        out[sid][1].append(Point(int(r[8]), float(r[9]), float(r[10]), r[11], r[12], r[13],
                                 r[14], r[15], excluded.get(int(r[8]))))
    return list(out.values())


def env_changes(catalog: Catalog) -> set[int]:
    return {int(r[0]) for r in catalog.rows(
        "SELECT run_id FROM annotations WHERE kind = 'env-change' AND run_id IS NOT NULL")}


def analyse(series: SeriesKey, points: list[Point], options: Options,
            boundaries: set[int] | None = None) -> Analysed:
    """Change points, levels and verdicts of one series."""
    out = Analysed(series, points)
    info = series.info
    idx = [i for i, p in enumerate(points) if p.analysed]
    cuts = [k for k, i in enumerate(idx) if points[i].run_id in (boundaries or ())]
    out.boundaries = [i for i, p in enumerate(points) if p.run_id in (boundaries or ())]
    parts = [(a, b) for a, b in itertools.pairwise([0, *cuts, len(idx)]) if b > a]
    for a, b in parts:
        part = idx[a:b]
        shown = [points[i].value for i in part]
        tested = [math.log(v) for v in shown] if info.log and all(v > 0 for v in shown) \
            else shown
        floor = max(options.min_change, RESOLUTION)
        found = change_points(tested, window=options.window, max_p=options.p,
                              min_magnitude=floor,
                              display=shown if tested is not shown else None)
        bounds = [0, *(c.index for c in found), len(part)]
        for s, e in itertools.pairwise(bounds):
            seg = shown[s:e]
            out.segments.append(Segment(part[s], part[e - 1] + 1, statistics.fmean(seg),
                                        statistics.pstdev(seg) if len(seg) > 1 else 0.0,
                                        len(seg)))
        kept = [c for c in found if abs(c.forward) >= floor]
        for k, c in enumerate(kept):
            status, needs = _status(c, k, kept, shown, options.confirm)
            worse = (c.forward < 0) == info.higher_is_better
            at, before = part[c.index], part[c.index - 1]
            out.changes.append(Found(
                series, c, at, before, points[at].run_id, points[before].run_id, status,
                REGRESSION if worse else IMPROVEMENT, needs,
                (points[before].commit, points[at].commit)))
    return out


def _status(c: Change, k: int, changes: Sequence[Change], shown: Sequence[float],
            confirm: int) -> tuple[str, int]:
    """(status, runs still needed) of the ``k``-th change of a part of a series.

    The new level must hold: the segment after the change (to the next change) has at least
    ``confirm`` points and their median (the first ``confirm``) is nearer the new level than
    the old. A short last segment is suspected; a short segment between two changes is a
    transient (a bad run or a few among good ones), and so is the change that ends it when
    it comes back to the level before it (the last segment that held), or that follows
    fewer than ``confirm`` first runs of a series (no level had held yet)."""
    end = changes[k + 1].index if k + 1 < len(changes) else len(shown)
    after = shown[c.index:end]
    if len(after) < confirm:
        if k + 1 < len(changes):
            return TRANSIENT, 0
        return SUSPECTED, confirm - len(after)
    med = statistics.median(after[:confirm])
    if abs(med - c.mean_after) >= abs(med - c.mean_before):
        return TRANSIENT, 0
    start = changes[k - 1].index if k else 0
    if c.index - start < confirm:
        # the segment before is short: measure against the last level that held (none: the
        # series' first runs were odd, not a level)
        bounds = [0, *(x.index for x in changes[:k]), c.index]
        held = [(a, b) for a, b in itertools.pairwise(bounds) if b - a >= confirm]
        if not held:
            return TRANSIENT, 0
        a, b = held[-1]
        old = statistics.fmean(shown[a:b])
        if abs(c.mean_after - old) < abs(c.mean_after - c.mean_before) / 2:
            return TRANSIENT, 0
    return CONFIRMED, 0


def analyse_plan(catalog: Catalog, plan: str, options: Options, **filters: object
                 ) -> list[Analysed]:
    """Every series of ``plan`` analysed (``load``'s filters)."""
    boundaries = env_changes(catalog)
    loaded = load(catalog, plan, **filters)  # type: ignore[arg-type]
    order = {m.name: i for i, m in enumerate(METRICS)}
    loaded.sort(key=lambda kp: (kp[0].step, kp[0].scope != FLEET, kp[0].scope,
                                order.get(kp[0].metric, 99), kp[0].op))
    return [analyse(key, points, options, boundaries) for key, points in loaded]


def current(loaded: Sequence[tuple[SeriesKey, list[Point]]]
            ) -> list[tuple[SeriesKey, list[Point]]]:
    """The series a plan still runs: those with a point in the latest run of their step."""
    latest: dict[str, float] = defaultdict(float)
    for key, points in loaded:
        if points:
            latest[key.step] = max(latest[key.step], points[-1].started)
    return [(k, p) for k, p in loaded if p and p[-1].started >= latest[k.step]]

