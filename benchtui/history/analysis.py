"""A plan's series read from the catalog and analysed: change points (``edivisive.py``),
the levels between them, and whether each change is confirmed.

Only points of completed steps, from runs not excluded, are analysed; the others are kept
and shown. An ``env-change`` annotation on a run is a boundary: the series is analysed
apart before and after it (a new kernel or a re-imaged disk is not a regression).

Before the change points are looked for, one-off runs (``transients.py``: a point far from
the level on both sides of it) are set apart: never a change, they are left out of the
levels, means and variances either side of the changes, and listed as transients; so is
the newest run when it is far from the level before it (*pending*: the next run tells).

A change is **confirmed** when the new level has held for ``confirm`` runs (transients
among them count: a bad night at the new level is a night it held) and the median of its
first points is nearer the level after the change than the level before it. A younger one
is **suspected**, and says how many runs it still needs. One whose next runs are back at
the old level is **transient**: a single bad run among good ones is never confirmed.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from benchtui.history.bounds import sql_within
from benchtui.history.catalog import Catalog
from benchtui.history.edivisive import Change, change_points, stats
from benchtui.history.ingest import COMPLETED
from benchtui.history.series import FLEET, METRICS, Metric, metric_named
from benchtui.history.transients import FLOOR, Transient, transients
from benchtui.history.ttest import mean_std

CONFIRMED, SUSPECTED = "confirmed", "suspected"
#: A change whose next runs went back to the old level (a bad run among good ones).
TRANSIENT = "transient"
REGRESSION, IMPROVEMENT = "regression", "improvement"


#: The smallest relative change ever reported (0.1%), whatever ``min_change``: below it two
#: levels differ by their last printed digit (a rate-limited fio reading 399.9 then 400.0),
#: and series with no noise at all would make the t-test's p 0 for any difference.
RESOLUTION = 0.001
#: A pending newest run within this many standard deviations of the noise of the level
#: before a change may be that level back (not a night the new level held).
BACK = 2.5


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
    #: The run's attributes (``--attr``: commit, branch, build...).
    attributes: dict[str, str] = field(default_factory=dict)
    #: Why the run is left out (``history exclude``), else None.
    excluded: str | None = None

    @property
    def analysed(self) -> bool:
        return self.outcome == COMPLETED and self.excluded is None

    @property
    def commit(self) -> str | None:
        return self.attributes.get("commit")

    @property
    def branch(self) -> str | None:
        return self.attributes.get("branch")


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
    #: One-off runs set apart before the change points were looked for, by index into
    #: ``points`` (``Transient.index`` too).
    transients: dict[int, Transient] = field(default_factory=dict)
    #: The newest run when it is far from the level before it (a transient or the first
    #: run of a new level: the next run tells), set apart too; else None.
    pending: Transient | None = None
    #: Analysed points the series needs before it can be called stable: ``confirm`` runs
    #: either side of a change.
    needed: int = 3

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
        "r.id, r.started, p.value, p.outcome, r.session_name, r.path "
        "FROM points p JOIN series s ON s.id = p.series_id JOIN runs r ON r.id = p.run_id "
        f"WHERE {' AND '.join(where)} ORDER BY s.id, r.started, r.id", params)
    excluded = dict(catalog.rows("SELECT run_id, reason FROM annotations "
                                 "WHERE kind = 'exclude' AND run_id IS NOT NULL"))
    attributes: dict[int, dict[str, str]] = defaultdict(dict)
    for run_id, name, value in catalog.rows(
            "SELECT a.run_id, a.name, a.value FROM run_attributes a JOIN runs r ON "
            "r.id = a.run_id WHERE r.plan = ? ORDER BY a.run_id, a.name", (plan,)):
        attributes[int(run_id)][str(name)] = str(value)
    out: dict[int, tuple[SeriesKey, list[Point]]] = {}
    for r in rows:
        sid, run_id = int(r[0]), int(r[8])
        if sid not in out:
            out[sid] = (SeriesKey(sid, r[1], r[2], r[3], r[4], r[5], r[6], r[7]), [])
        out[sid][1].append(Point(run_id, float(r[9]), float(r[10]), r[11], r[12], r[13],
                                 attributes.get(run_id, {}), excluded.get(run_id)))
    return list(out.values())


def env_changes(catalog: Catalog) -> set[int]:
    return {int(r[0]) for r in catalog.rows(
        "SELECT run_id FROM annotations WHERE kind = 'env-change' AND run_id IS NOT NULL")}


def analyse(series: SeriesKey, points: list[Point], options: Options,
            boundaries: set[int] | None = None) -> Analysed:
    """Change points, levels and verdicts of one series."""
    out = Analysed(series, points, needed=max(2 * options.confirm, 3))
    idx = [i for i, p in enumerate(points) if p.analysed]
    cuts = [k for k, i in enumerate(idx) if points[i].run_id in (boundaries or ())]
    out.boundaries = [i for i, p in enumerate(points) if p.run_id in (boundaries or ())]
    parts = [idx[a:b] for a, b in itertools.pairwise([0, *cuts, len(idx)]) if b > a]
    for k, part in enumerate(parts):
        _analyse_part(out, part, options, newest=k == len(parts) - 1)
    return out


def _analyse_part(out: Analysed, part: list[int], options: Options, *, newest: bool) -> None:
    """The change points of one part of a series (between environment changes): its
    transients set apart (and its newest point, when pending), then the method on the
    rest."""
    points, info = out.points, out.series.info
    floor = max(options.min_change, RESOLUTION)
    values = [points[i].value for i in part]
    log = info.log and all(v > 0 for v in values)
    odd = transients([math.log(v) for v in values] if log else values,
                     span=max(options.confirm, 3), log=log)
    for t in odd.transients:
        out.transients[part[t.index]] = replace(t, index=part[t.index])
    skip = {t.index for t in odd.transients}
    pending = odd.pending if newest else None
    if pending is not None:
        out.pending = replace(pending, index=part[pending.index])
        skip.add(pending.index)
    # runs[k]: the run (counted in the part, transients included) of the k-th point kept
    runs = [k for k in range(len(part)) if k not in skip] + [len(part)]
    kept = [part[k] for k in runs[:-1]]
    shown = [points[i].value for i in kept]
    tested = [math.log(v) for v in shown] if log else shown
    found = change_points(tested, window=options.window, max_p=options.p, min_magnitude=floor,
                          display=shown if log else None, exact=False)
    bounds = [0, *(c.index for c in found), len(kept)]
    for s, e in itertools.pairwise(bounds):
        mean, sd = mean_std(shown[s:e])
        out.segments.append(Segment(kept[s], kept[e - 1] + 1, mean, sd, e - s))
    changes = [c for c in found if abs(c.forward) >= floor]
    ends = _ends(changes, runs, options.confirm)
    scale = math.log if log else float

    def back(c: Change) -> bool:
        """The pending newest run is back at the level before ``c``: within its noise (2.5
        standard deviations: where 99% of its runs are) or the floor of a transient."""
        if pending is None:
            return False
        tolerance = max(BACK * odd.sd, math.log1p(FLOOR) if log else FLOOR * abs(c.mean_before))
        return abs(scale(values[pending.index]) - scale(c.mean_before)) <= tolerance

    for k, c in enumerate(changes):
        ref = _reference(k, changes, runs, options.confirm)
        status, needs = _status(c, k, changes, shown, end=ends[k], runs=runs,
                                confirm=options.confirm, back=back(c), ref=ref)
        change, before = c, kept[c.index - 1]
        natural = changes[k + 1].index if k + 1 < len(changes) else len(kept)
        if (ref is not None and ref[1] > ref[0]) or ends[k] != natural:
            # measured from the last level that held (not from a short segment before it),
            # or to the newest run (through a young step that goes on from it)
            held = ref if ref is not None and ref[1] > ref[0] else \
                (changes[k - 1].index if k else 0, c.index)
            change, before = stats(tested, shown, held, (c.index, ends[k]), c.index), \
                kept[held[1] - 1]
        worse = (change.forward < 0) == info.higher_is_better
        at = kept[c.index]
        out.changes.append(Found(
            out.series, change, at, before, points[at].run_id, points[before].run_id, status,
            REGRESSION if worse else IMPROVEMENT, needs))


def _ends(changes: Sequence[Change], runs: Sequence[int], confirm: int) -> list[int]:
    """Where each change's new level ends (indexes of points kept): at the next change; but
    the newest change, while young (fewer than ``confirm`` runs) and close after the one
    before it (fewer than ``confirm`` runs between them), does not end that one's level
    unless it goes back towards the level before it: a level reached in two steps, or with
    a run in between (a run the load slowed before the drop), is one change until each
    step has held. (Both change points stay, as the method found them.)"""
    ends = [c.index for c in changes[1:]] + [len(runs) - 1]
    if len(changes) >= 2:
        c1, c2 = changes[-2], changes[-1]
        young = runs[-1] - runs[c2.index] < confirm
        close = runs[c2.index] - runs[c1.index] < confirm
        if young and close and \
                abs(c2.mean_after - c1.mean_after) < abs(c2.mean_after - c1.mean_before):
            ends[-2] = ends[-1]
    return ends


def _reference(k: int, changes: Sequence[Change], runs: Sequence[int], confirm: int
               ) -> tuple[int, int] | None:
    """When the segment just before the ``k``-th change is short (fewer than ``confirm``
    runs: a run or a few between two levels, a step of a staircase still going), the
    segment (indexes of points kept) of the last level that held before it, which the
    change is measured from; ``(0, 0)`` when none held (the series' first runs were odd,
    not a level); None when the segment before is a level that held."""
    start = changes[k - 1].index if k else 0
    if runs[changes[k].index] - runs[start] >= confirm:
        return None
    bounds = [0, *(x.index for x in changes[:k]), changes[k].index]
    held = [(a, b) for a, b in itertools.pairwise(bounds) if runs[b] - runs[a] >= confirm]
    return held[-1] if held else (0, 0)


def _status(c: Change, k: int, changes: Sequence[Change], shown: Sequence[float], *,
            end: int, runs: Sequence[int], confirm: int, back: bool,
            ref: tuple[int, int] | None) -> tuple[str, int]:
    """(status, runs still needed) of the ``k``-th change of a part of a series.

    ``runs[i]`` is the run (counted in the part, transients included) of ``shown[i]``, with
    one more entry: the part's run count. Runs, not points, are counted: a transient among
    the runs after a change (a bad night at the new level) is a night the new level held,
    and so is the one just before its first point (the first night at the new level was a
    bad one), and the newest run when it is pending (far from the level before it) unless
    it is ``back`` at the old level. ``end``: where its level ends (``_ends``); ``ref``:
    ``_reference``.

    The new level must hold: the segment after the change (to the next change) spans at
    least ``confirm`` runs and the median of its first ``confirm`` points is nearer the new
    level than the old. A short last segment is suspected; a short segment between two
    changes is a transient (a bad run or a few among good ones, or a step of a staircase),
    and so is the change that ends it when it comes back to the level before it (the last
    segment that held), or that follows fewer than ``confirm`` first runs of a series (no
    level had held yet)."""
    first = runs[c.index] - 1 if c.index and runs[c.index] - runs[c.index - 1] > 1 \
        else runs[c.index]
    held_for = runs[end] - first
    if end == len(shown) and back:
        held_for -= 1  # the newest run may be the old level back
    if held_for < confirm:
        if end < len(shown):
            return TRANSIENT, 0
        return SUSPECTED, confirm - held_for
    if ref == (0, 0):
        return TRANSIENT, 0
    old = c.mean_before if ref is None else mean_std(shown[ref[0]:ref[1]])[0]
    med = statistics.median(shown[c.index:end][:confirm])
    if abs(med - c.mean_after) >= abs(med - old):
        return TRANSIENT, 0
    if ref is not None and abs(c.mean_after - old) < abs(c.mean_after - c.mean_before) / 2:
        return TRANSIENT, 0  # back to the level that held
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

