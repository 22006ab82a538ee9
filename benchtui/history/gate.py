"""``history gate``: a new confirmed change in the worse direction since the last gate fails
it (exit 3); improvements are told; suspected changes wait for more runs.

The changes found are kept in the catalog (``change_points``), each matched with the one
stored before it when it is of the same series and direction within ``_SLACK`` runs (a
change point found a run earlier or later as points arrive is the same change). A change
is gated once: the next gate does not report it again. The fleet's series gate (or, with
``scope``, the hosts' own); a host's series tell which hosts moved with the fleet, and by
how much.

The gate never calls stable what it could not test: a series with fewer points than a
change needs to be confirmed (``confirm`` runs either side) is too short; and when the
plan's newest runs did not complete, it says which, and fails when the newest
``require_complete`` did not (a nightly job whose benchmark no longer completes must not
pass).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from benchtui.history.analysis import (
    CONFIRMED,
    IMPROVEMENT,
    REGRESSION,
    SUSPECTED,
    TRANSIENT,
    Analysed,
    Found,
    Options,
    analyse,
    current,
    env_changes,
    load,
)
from benchtui.history.catalog import Catalog
from benchtui.history.ingest import COMPLETED
from benchtui.history.series import FLEET, METRICS

EXIT_OK, EXIT_REGRESSED, EXIT_TOO_SHORT = 0, 3, 4
#: Runs by which a change point may move between analyses and still be the same change.
_SLACK = 2
#: The order in which the changes found are matched with those stored.
_PRIORITY = {CONFIRMED: 0, SUSPECTED: 1}
_ORDER = {m.name: i for i, m in enumerate(METRICS)}


@dataclass(slots=True)
class Group:
    """Changes of one step's series of one scope at one run (metrics that moved
    together)."""

    step: str
    scope: str
    verdict: str
    status: str
    changes: list[Found]
    #: For a fleet's change: each host whose own series moved the same way at about the
    #: same run, with its change (of the group's first metric).
    hosts: list[tuple[str, Found]] = field(default_factory=list)

    @property
    def first(self) -> Found:
        return self.changes[0]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A run as the gate names it."""

    id: int
    path: str
    session: str
    started: float
    outcome: str


@dataclass(slots=True)
class GateResult:
    plan: str
    regressions: list[Group]
    improvements: list[Group]
    suspected: list[Group]
    stable: int
    too_short: list[Analysed]
    series: list[Analysed]
    require: int | None
    #: Points a series needs to be gated at all: a change is confirmed after ``confirm``
    #: runs at the old level and ``confirm`` at the new one (or ``require``, if more).
    needed: int = 0
    #: Gated series whose newest point is pending (far from the level before it: a
    #: transient or the first run of a new level, which the next run tells).
    pending: list[Analysed] = field(default_factory=list)
    #: The newest runs of the plan that did not complete, oldest first.
    incomplete: list[RunInfo] = field(default_factory=list)
    require_complete: int = 1
    exit_code: int = EXIT_OK

    def summary(self) -> str:
        def n(count: int, word: str, plural: str | None = None) -> str:
            return f"{count} {word if count == 1 else plural or word + 's'}"
        text = (f"history: {n(len(self.regressions), 'regression')}, "
                f"{n(len(self.improvements), 'improvement')}, "
                f"{len(self.suspected)} suspected, {self.stable} stable, "
                f"{len(self.too_short)} too short")
        if self.pending:
            text += f", {len(self.pending)} pending"
        if self.incomplete:
            text += (f"; the newest {n(len(self.incomplete), 'run')} did not complete"
                     if len(self.incomplete) > 1 else "; the newest run did not complete")
        return text

    @property
    def failed_to_complete(self) -> bool:
        """The newest ``require_complete`` runs all did not complete."""
        return 0 < self.require_complete <= len(self.incomplete)


class _Stored(NamedTuple):
    id: int
    run_id: int
    verdict: str
    acked: float | None
    gated: float | None


def sync(catalog: Catalog, analysed: Sequence[Analysed]) -> None:
    """Store every change found (new ones added, known ones updated) and give each
    ``Found`` its catalog id, and whether it was acknowledged."""
    now = time.time()
    by_series: dict[int, list[_Stored]] = defaultdict(list)
    ids = [a.series.id for a in analysed if a.changes]
    for chunk in range(0, len(ids), 500):
        part = ids[chunk:chunk + 500]
        for r in catalog.rows(
                "SELECT id, series_id, run_id, verdict, acked, gated FROM change_points "
                f"WHERE series_id IN ({', '.join('?' * len(part))})", part):
            by_series[int(r[1])].append(_Stored(int(r[0]), int(r[2]), r[3], r[4], r[5]))
    for a in analysed:
        if not a.changes:
            continue
        pos = {p.run_id: i for i, p in enumerate(a.points)}
        stored = by_series.get(a.series.id, [])
        taken: set[int] = set()
        # the confirmed changes first, and to a change a gate reported first: a change point
        # that moved a run or two as points arrived (a step that took two runs) is still
        # the change a gate reported
        for f in sorted(a.changes, key=lambda x: _PRIORITY.get(x.status, 9)):
            c = f.change
            near = [s for s in stored if s.verdict == f.verdict and s.run_id in pos
                    and s.id not in taken and abs(pos[s.run_id] - f.at) <= _SLACK]
            match = min(near, key=lambda s: (f.status != CONFIRMED or s.gated is None,
                                             abs(pos[s.run_id] - f.at))) if near else None
            confirmed = now if f.status == CONFIRMED else None
            if match is None:
                row = catalog.one(
                    "INSERT INTO change_points (series_id, run_id, prev_run_id, mean_before, "
                    "sd_before, mean_after, sd_after, change, pvalue, verdict, first_seen, "
                    "confirmed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (series_id, run_id) DO UPDATE SET verdict = excluded.verdict "
                    "RETURNING id, acked",
                    (a.series.id, f.run_id, f.prev_run_id, c.mean_before, c.sd_before,
                     c.mean_after, c.sd_after, c.forward, c.pvalue, f.verdict, now, confirmed))
                assert row is not None
                f.id, f.acked = int(row[0]), row[1] is not None
                stored.append(_Stored(f.id, f.run_id, f.verdict, row[1], None))
            else:
                f.id, f.acked = match.id, match.acked is not None
                catalog.execute(
                    "UPDATE change_points SET mean_before = ?, sd_before = ?, mean_after = ?, "
                    "sd_after = ?, change = ?, pvalue = ?, confirmed = COALESCE(confirmed, ?) "
                    "WHERE id = ?", (c.mean_before, c.sd_before, c.mean_after, c.sd_after,
                                     c.forward, c.pvalue, confirmed, f.id))
            taken.add(f.id)
    catalog.commit()


def _gated(catalog: Catalog, found: Sequence[Found]) -> set[int]:
    ids = [f.id for f in found if f.id is not None]
    out: set[int] = set()
    for chunk in range(0, len(ids), 500):
        part = ids[chunk:chunk + 500]
        out |= {int(r[0]) for r in catalog.rows(
            f"SELECT id FROM change_points WHERE gated IS NOT NULL AND id IN "
            f"({', '.join('?' * len(part))})", part)}
    return out


def _groups(found: Sequence[Found]) -> list[Group]:
    """The changes by step, scope, run and verdict, each group's in the order of
    ``METRICS`` (IOPS first: the first one's figures are on the gate's line)."""
    groups: dict[tuple[str, str, int, str], Group] = {}
    for f in sorted(found, key=lambda x: (_ORDER.get(x.series.metric, 99), x.series.op)):
        key = (f.series.step, f.series.scope, f.run_id, f.verdict)
        if key not in groups:
            groups[key] = Group(f.series.step, f.series.scope, f.verdict, f.status, [])
        groups[key].changes.append(f)
    return list(groups.values())


def _hosts(group: Group, hosts: Sequence[Analysed]) -> list[tuple[str, Found]]:
    """Hosts of the group's step whose series of its first metric moved the same way at
    about the same run, each with its own change."""
    first = group.first
    run = first.run_id
    moved: list[tuple[str, Found]] = []
    for a in hosts:
        k = a.series
        if (k.step, k.metric, k.op) != (group.step, first.series.metric, first.series.op):
            continue
        pos = {p.run_id: i for i, p in enumerate(a.points)}
        if run not in pos:
            continue
        near = [f for f in a.changes if f.verdict == group.verdict and f.status != TRANSIENT
                and abs(f.at - pos[run]) <= _SLACK]
        if near:
            moved.append((k.scope, min(near, key=lambda f: abs(f.at - pos[run]))))
    return sorted(moved, key=lambda hf: hf[0])


def incomplete_runs(catalog: Catalog, plan: str) -> list[RunInfo]:
    """The plan's newest runs that did not complete (since its newest completed run),
    oldest first."""
    last = catalog.one("SELECT MAX(started) FROM runs WHERE plan = ? AND outcome = ?",
                       (plan, COMPLETED))
    since = last[0] if last is not None and last[0] is not None else None
    rows = catalog.rows(
        "SELECT id, path, session_name, started, outcome FROM runs WHERE plan = ? "
        + ("AND started > ? " if since is not None else "") + "ORDER BY started, id",
        (plan, since) if since is not None else (plan,))
    return [RunInfo(int(r[0]), str(r[1]), str(r[2]), float(r[3]), str(r[4])) for r in rows]


def gate(catalog: Catalog, plan: str, options: Options, *, require: int | None = None,
         metrics: Collection[str] = (), scope: str = "fleet", require_complete: int = 1
         ) -> GateResult:
    """Analyse ``plan``'s series, store the changes, mark the new confirmed ones gated and
    say what the gate found (``GateResult.exit_code``). ``metrics`` (report names) limits
    the gate to those metrics; by default it gates every metric that gates. ``scope``:
    the fleet's series gate (``fleet``), or the hosts' own (``host``), or both (``all``).
    The gate fails too when the newest ``require_complete`` runs (0: never) did not
    complete."""
    boundaries = env_changes(catalog)
    loaded = [(k, p) for k, p in current(load(catalog, plan))
              if (not metrics or k.metric in metrics) and k.info.gated]
    wanted = {"fleet": (True,), "host": (False,), "all": (True, False)}[scope]
    gated = [analyse(k, p, options, boundaries) for k, p in loaded
             if (k.scope == FLEET) in wanted]
    sync(catalog, gated)
    confirmed = [f for a in gated for f in a.changes if f.status == CONFIRMED and not f.acked]
    already = _gated(catalog, confirmed)
    new = [f for f in confirmed if f.id not in already]
    suspected = [a.changes[-1] for a in gated
                 if a.changes and a.changes[-1].status == SUSPECTED]
    needed = max(2 * options.confirm, 3, require or 0)
    too_short = [a for a in gated if a.analysed_count < needed]
    moved = {f.series.id for f in new} | {f.series.id for f in suspected}
    stable = sum(1 for a in gated if a.series.id not in moved and a not in too_short
                 and a.pending is None)
    if scope == "fleet":
        # the hosts' series of the steps whose fleet moved, to say which hosts moved with
        # it (only those: a big fleet has many)
        steps = {f.series.step for f in (*new, *suspected)}
        hosts = [analyse(k, p, options, boundaries) for k, p in loaded
                 if k.scope != FLEET and k.step in steps]
        sync(catalog, hosts)
        analysed = gated + hosts
    else:
        hosts, analysed = [a for a in gated if a.series.scope != FLEET], gated
    result = GateResult(plan, [], [], _groups(suspected), stable, too_short, analysed,
                        require, needed,
                        sorted((a for a in gated if a.pending is not None),
                               key=lambda a: (a.series.step, a.series.scope,
                                              _ORDER.get(a.series.metric, 99))),
                        incomplete_runs(catalog, plan), require_complete)
    for g in result.suspected:
        if g.scope == FLEET:
            g.hosts = _hosts(g, hosts)
    for g in _groups(new):
        if g.scope == FLEET:
            g.hosts = _hosts(g, hosts)
        (result.regressions if g.verdict == REGRESSION else result.improvements).append(g)
    if result.regressions or result.failed_to_complete:
        result.exit_code = EXIT_REGRESSED
    elif require is not None and any(a.analysed_count < require for a in gated):
        result.exit_code = EXIT_TOO_SHORT
    now = time.time()
    ids = [f.id for f in new if f.id is not None]
    catalog.executemany("UPDATE change_points SET gated = ? WHERE id = ?",
                        [(now, i) for i in ids])
    catalog.execute("INSERT INTO gates (plan, t, exit_code, summary) VALUES (?, ?, ?, ?)",
                    (plan, now, result.exit_code, result.summary()))
    catalog.commit()
    return result


__all__ = ["EXIT_OK", "EXIT_REGRESSED", "EXIT_TOO_SHORT", "IMPROVEMENT", "REGRESSION",
           "GateResult", "Group", "RunInfo", "gate", "incomplete_runs", "sync"]
