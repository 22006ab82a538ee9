"""A session into the catalog: one run, how each step ended, and one point per series.

The figures are the report's (``report/build.py``): each run of a step on each host and its
fleet row, over the run minus its ramp-up (``--skip``, 5 s), every repeat (``select`` all);
a series' point is the median of the step's repeats that completed. A step that did not
complete (failed, interrupted, stopped by the watchdog or its deadline) still gets its
points, with its outcome: they are shown, never analysed.

A session is added whole or not at all, by any number of processes at once: the run's row
is inserted only if its session key is not there yet (``INSERT ... ON CONFLICT DO
NOTHING``), in the same transaction as everything else of it, so two processes importing the
same session add it once and the other is told it is already there. Series, environments
and the run are written in one order (series by key), so two imports never wait on each
other in a circle. Refused, with one sentence and nothing written: a figure that is not
finite or is beyond any tool's range (``bounds.py``), a host named ``(fleet)``.

How a step ended: the ``outcome`` of its ``step_end`` event's data where the engine writes
it (completed, failed, interrupted, watchdog, deadline), else from the event itself (an
error is ``failed``, ``interrupted`` is said so), and ``interrupted`` when the recording
ends before the step did.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchtui.errors import BenchtuiError
from benchtui.history.bounds import beyond, within
from benchtui.history.catalog import Catalog
from benchtui.history.digest import StepFields, run_digest
from benchtui.history.series import FLEET, METRICS, env_facts, env_key, fleet_env_key
from benchtui.history.series import args_key as make_args_key
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.report.build import ReportOptions, build_report
from benchtui.report.model import Row
from benchtui.report.repeats import typical
from benchtui.session.compare import split_label
from benchtui.store.recording import SessionReader

COMPLETED = "completed"
OUTCOMES = ("completed", "failed", "interrupted", "watchdog", "deadline")
_WANTED = {m.name for m in METRICS}


@dataclass
class SessionRefused(BenchtuiError):
    """A session that must not go into the catalog as it is (nothing of it is written)."""

    path: str
    reason: str
    hint: str = ""
    exit_code = 1

    def __str__(self) -> str:
        text = f"{self.path}: {self.reason}; the session was not added to the history"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass(frozen=True, slots=True)
class Imported:
    path: str
    run_id: int
    #: False when the session was already in the catalog (nothing changed).
    new: bool
    points: int
    plan: str
    outcome: str


def session_key(reader: SessionReader) -> str:
    """What makes a session the same session: its id and start time."""
    meta = reader.meta
    return f"{meta.session_id or Path(reader.path).stem}@{meta.started:.3f}"


def _label_outcomes(events: Sequence[Event]) -> dict[str, str]:
    """step label -> how it ended."""
    out: dict[str, str] = {}
    for e in events:
        if e.step is None:
            continue
        if e.kind == ev.STEP_START:
            out[e.step] = "interrupted"  # until its end says otherwise
        elif e.kind == ev.STEP_END and e.step in out:
            said = e.data.get("outcome")
            if isinstance(said, str) and said in OUTCOMES:
                out[e.step] = said
            elif e.data.get("interrupted"):
                out[e.step] = "interrupted"
            else:
                out[e.step] = "failed" if e.level == ev.ERROR else COMPLETED
    return out


def _run_outcome(events: Sequence[Event], steps: Mapping[str, str]) -> str:
    ended = [e for e in events if e.kind == ev.SESSION_END]
    if not ended:
        return "interrupted"
    said = ended[-1].data.get("outcome")
    if isinstance(said, str) and said in OUTCOMES:
        return said
    if ended[-1].data.get("interrupted"):
        return "interrupted"
    bad = [o for o in steps.values() if o != COMPLETED]
    if bad:
        return bad[0]
    return "failed" if ended[-1].level == ev.ERROR else COMPLETED


class _Identities:
    """Each step's effective arguments, from the plan the session recorded (parsed once
    per plan text)."""

    def __init__(self) -> None:
        self._plans: dict[str, dict[str, dict[str, object]]] = {}

    def of(self, reader: SessionReader, step: str, data: Mapping[str, object]
           ) -> dict[str, object]:
        text = reader.meta.plan_text
        steps = self._plans.get(text)
        if steps is None:
            steps = self._plans[text] = _plan_steps(text, reader.meta.plan_path or "plan.toml")
        found = steps.get(step)
        if found is not None:
            return found
        # no plan (an imported session): what its events say of the step
        return {"tool": data.get("tool"), "matrix": data.get("matrix") or {}}


def _plan_steps(text: str, path: str) -> dict[str, dict[str, object]]:
    if not text:
        return {}
    from benchtui.parsers.registry import all_parsers
    from benchtui.plan.loader import parse_plan

    try:
        plan = parse_plan(text, path, parser_names=all_parsers())
    except BenchtuiError:
        return {}
    out: dict[str, dict[str, object]] = {}
    for s in plan.steps:
        out[s.name] = {"tool": s.tool, "args": list(s.args), "jobfile": s.jobfile_text,
                       "server_args": list(s.server_args), "command": list(s.command),
                       "executable": s.executable, "duration": s.duration,
                       "env": dict(s.env)}
    return out


def _values(row: Row) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for v in row.values:
        if v.metric not in _WANTED:
            continue
        if v.metric == "disk_util_ratio":
            key = (v.metric, "")
            out[key] = max(out.get(key, 0.0), v.value)  # the busiest device
        elif not v.item:
            out[(v.metric, v.op)] = v.value
    return out


@dataclass
class _Run:
    """What a session says of itself, read before its figures."""

    key: str
    plan: str
    path: str
    name: str
    started: float
    ended: float | None
    outcome: str
    source: str
    attributes: dict[str, str]
    labels: dict[str, str]
    step_data: dict[str, Mapping[str, object]]
    identities: dict[str, Mapping[str, object]]
    facts: dict[str, dict[str, object]]


#: (plan, step, args key, metric, op, scope, env key): a series
SeriesKey = tuple[str, str, str, str, str, str, str]


@dataclass(frozen=True, slots=True)
class _Point:
    series: SeriesKey
    identity: Mapping[str, object]
    value: float
    repeats: int
    outcome: str


@dataclass
class _Stored:
    run_id: int
    new: bool
    outcome: str
    series: dict[SeriesKey, int]
    envs: set[str]


class Importer:
    """Adds sessions to a catalog; keeps the series ids it has seen between sessions."""

    def __init__(self, catalog: Catalog, *, skip: float | None = None) -> None:
        self.catalog = catalog
        self.skip = skip
        self._series: dict[SeriesKey, int] = {}
        self._envs: set[str] = set()
        self._ids = _Identities()

    def _known(self, key: str) -> tuple[int, str] | None:
        have = self.catalog.one("SELECT id, outcome FROM runs WHERE session_key = ?", (key,))
        return None if have is None else (int(have[0]), str(have[1]))

    def add(self, path: str, attributes: Mapping[str, str] | None = None) -> Imported:
        """Add the session at ``path`` (RecordingError when it is not one, SessionRefused
        when it must not go in, CatalogError when the catalog cannot take it). A session
        already in the catalog changes nothing (``Imported.new`` False)."""
        with SessionReader.open(path) as reader:
            key = session_key(reader)
            plan = reader.meta.name or Path(path).stem
            have = self._known(key)
            self.catalog.commit()  # (a read: no transaction left open while the report is made)
            if have is not None:
                return Imported(path, have[0], False, 0, plan, have[1])
            _refuse_reserved_hosts(path, reader)
            events = reader.events()
            step_data: dict[str, Mapping[str, object]] = {e.step: e.data for e in events
                         if e.kind == ev.STEP_START and e.step is not None}
            identities: dict[str, Mapping[str, object]] = {}
            for label, data in step_data.items():
                name, _repeat = split_label(label, data)
                identities.setdefault(name, self._ids.of(reader, name, data))
            meta = reader.meta
            labels = _label_outcomes(events)
            run = _Run(key, plan, path, meta.name or plan, meta.started, meta.ended,
                       _run_outcome(events, labels),
                       "imported" if meta.imported else "recorded", dict(attributes or {}),
                       labels, step_data, identities,
                       {h: dict(f) for h, f in meta.facts.items()})
        options = ReportOptions(select="all") if self.skip is None \
            else ReportOptions(select="all", skip=self.skip)
        rows = build_report([path], options).rows
        points = _points(run, rows)
        steps = _steps(run)
        digest = run_digest((run.key, run.plan, run.started, run.ended, run.outcome),
                            steps, [(*p.series, p.value, p.repeats, p.outcome)
                                    for p in points])
        stored = self.catalog.write(lambda: self._store(run, steps, points, digest))
        self._series.update(stored.series)  # (only once committed: a rollback makes none)
        self._envs |= stored.envs
        if not stored.new:
            return Imported(path, stored.run_id, False, 0, plan, stored.outcome)
        return Imported(path, stored.run_id, True, len(points), plan, run.outcome)

    def _store(self, run: _Run, steps: Sequence[StepFields], points: Sequence[_Point],
               digest: str) -> _Stored:
        """Inside a write transaction: the run and all of it, unless its session is there
        already."""
        cat = self.catalog
        found = cat.one("INSERT INTO runs (session_key, plan, session_name, path, started, "
                        "ended, outcome, source, added, digest) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_key) DO NOTHING "
                        "RETURNING id", (run.key, run.plan, run.name,
                                         str(Path(run.path).resolve()), run.started,
                                         run.ended, run.outcome, run.source, time.time(),
                                         digest))
        if found is None:  # another process added it since we looked
            have = self._known(run.key)
            assert have is not None
            return _Stored(have[0], False, have[1], {}, set())
        run_id = int(found[0])
        cat.executemany("INSERT INTO run_attributes (run_id, name, value) VALUES (?, ?, ?)",
                        [(run_id, k, v) for k, v in run.attributes.items()])
        envs = {env_key(f): f for f in run.facts.values()}
        new_envs = sorted(k for k in envs if k not in self._envs)
        cat.executemany("INSERT INTO environments (key, facts) VALUES (?, ?) "
                        "ON CONFLICT (key) DO NOTHING",
                        [(k, json.dumps(env_facts(envs[k]), sort_keys=True))
                         for k in new_envs])
        cat.executemany("INSERT INTO step_runs (run_id, step, args_key, outcome, repeats) "
                        "VALUES (?, ?, ?, ?, ?)", [(run_id, *s) for s in steps])
        made: dict[SeriesKey, int] = {}
        for p in sorted(points, key=lambda p: p.series):
            if p.series not in self._series and p.series not in made:
                made[p.series] = self._series_id(p.series, p.identity)
        ids = self._series | made
        cat.executemany("INSERT INTO points (series_id, run_id, value, repeats, outcome) "
                        "VALUES (?, ?, ?, ?, ?)",
                        [(ids[p.series], run_id, p.value, p.repeats, p.outcome)
                         for p in points])
        return _Stored(run_id, True, run.outcome, made, set(new_envs))

    def _series_id(self, key: SeriesKey, ident: Mapping[str, object]) -> int:
        """The id of the series (plan, step, args key, metric, op, scope, env), made if
        new."""
        cat = self.catalog
        cat.execute("INSERT INTO series (plan, step, args_key, args, metric, op, scope, "
                    "env_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (*key[:3], json.dumps(ident, sort_keys=True, default=str), *key[3:]))
        found = cat.one("SELECT id FROM series WHERE plan = ? AND step = ? AND args_key = ? "
                        "AND metric = ? AND op = ? AND scope = ? AND env_key = ?", key)
        assert found is not None
        return int(found[0])


def _refuse_reserved_hosts(path: str, reader: SessionReader) -> None:
    hosts = set(reader.meta.hosts) | set(reader.host_sample_counts())
    if FLEET in hosts:
        raise SessionRefused(path, f"a host is named {FLEET!r}, the name benchtui keeps for "
                             "the fleet's figures", "give the host another name")


def _steps(run: _Run) -> list[StepFields]:
    """(step, args key, outcome, repeats) of each step of the run."""
    out = []
    for step, ident in run.identities.items():
        reps = [lb for lb, d in run.step_data.items() if split_label(lb, d)[0] == step]
        outs = [run.labels.get(lb, "interrupted") for lb in reps]
        bad = [o for o in outs if o != COMPLETED]
        out.append((step, make_args_key(ident), bad[0] if bad else COMPLETED, len(reps)))
    return out


def _points(run: _Run, rows: Sequence[Row]) -> list[_Point]:
    """One point per series of the run: the median of its repeats that completed (of all
    of them when none did). SessionRefused for a figure beyond the bounds: the hosts'
    figures are looked at first (a fleet's absurd sum comes from one of them)."""
    labels = run.labels
    # (step, scope) -> (metric, op) -> [(value, outcome)] over repeats
    values: dict[tuple[str, str], dict[tuple[str, str], list[tuple[float, str]]]] = \
        defaultdict(lambda: defaultdict(list))
    hosts_of: dict[str, set[str]] = defaultdict(set)
    util: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r.host == FLEET):
        label_outcome = labels.get(row.label, COMPLETED if row.ok else "failed")
        figures = _values(row)
        for (metric, op), v in figures.items():
            if not within(metric, v):
                who = "the fleet" if row.host == FLEET else f"host {row.host}"
                raise SessionRefused(run.path, f"{who}, step {row.label}: "
                                     f"{beyond(metric, op, v)}")
            values[(row.step, row.host)][(metric, op)].append((float(v), label_outcome))
        if row.host != FLEET:
            hosts_of[row.step].add(row.host)
            u = figures.get(("disk_util_ratio", ""))
            if u is not None:
                util[(row.step, row.label)].append(u)
    for (step, label), us in util.items():  # the fleet's: the mean of its hosts'
        values[(step, FLEET)][("disk_util_ratio", "")].append(
            (statistics.fmean(us), labels.get(label, COMPLETED)))
    host_env = {h: env_key(f) for h, f in run.facts.items()}
    out = []
    for (step, scope), metrics in values.items():
        ident = run.identities.get(step, {})
        akey = make_args_key(ident)
        if scope == FLEET:
            env = fleet_env_key(host_env.get(h, "") for h in hosts_of.get(step, ()))
        else:
            env = host_env.get(scope, "")
        for (metric, op), reps_values in metrics.items():
            failed = [o for _v, o in reps_values if o != COMPLETED]
            value = typical((v, o == COMPLETED) for v, o in reps_values)
            out.append(_Point((run.plan, step, akey, metric, op, scope, env), ident,
                              float(value), len(reps_values),
                              failed[0] if failed else COMPLETED))
    return out
