"""A session into the catalog: one run, how each step ended, and one point per series.

The figures are the report's (``report/build.py``): each run of a step on each host and its
fleet row, over the run minus its ramp-up (``--skip``, 5 s), every repeat (``select`` all);
a series' point is the median of the step's repeats that completed. A step that did not
complete (failed, interrupted, stopped by the watchdog or its deadline) still gets its
points, with its outcome: they are shown, never analysed.

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
from benchtui.history.catalog import Catalog
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


class Importer:
    """Adds sessions to a catalog; keeps the series ids it has seen between sessions."""

    def __init__(self, catalog: Catalog, *, skip: float | None = None) -> None:
        self.catalog = catalog
        self.skip = skip
        self._series: dict[tuple[str, ...], int] = {}
        self._envs: set[str] = set()
        self._ids = _Identities()

    def add(self, path: str, attributes: Mapping[str, str] | None = None) -> Imported:
        """Add the session at ``path`` (RecordingError when it is not one). A session
        already in the catalog changes nothing (``Imported.new`` False)."""
        with SessionReader.open(path) as reader:
            key = session_key(reader)
            plan = reader.meta.name or Path(path).stem
            have = self.catalog.one("SELECT id, outcome FROM runs WHERE session_key = ?",
                                    (key,))
            if have is not None:
                return Imported(path, int(have[0]), False, 0, plan, str(have[1]))
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
        try:
            run_id, points = self._write(run, rows)
        except BaseException:
            self.catalog.rollback()
            raise
        return Imported(path, run_id, True, points, plan, run.outcome)

    def _write(self, run: _Run, rows: Sequence[Row]) -> tuple[int, int]:
        cat = self.catalog
        found = cat.one("INSERT INTO runs (session_key, plan, session_name, path, started, "
                        "ended, outcome, source, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                        "RETURNING id", (run.key, run.plan, run.name,
                                         str(Path(run.path).resolve()), run.started,
                                         run.ended, run.outcome, run.source, time.time()))
        assert found is not None
        run_id = int(found[0])
        cat.executemany("INSERT INTO run_attributes (run_id, name, value) VALUES (?, ?, ?)",
                        [(run_id, k, v) for k, v in run.attributes.items()])
        host_env = {h: env_key(f) for h, f in run.facts.items()}
        for h, k in host_env.items():
            if k not in self._envs:
                cat.execute("INSERT INTO environments (key, facts) VALUES (?, ?) "
                            "ON CONFLICT (key) DO NOTHING",
                            (k, json.dumps(env_facts(run.facts[h]), sort_keys=True)))
                self._envs.add(k)
        labels = run.labels
        # (step, scope) -> (metric, op) -> [(value, outcome)] over repeats
        values: dict[tuple[str, str], dict[tuple[str, str], list[tuple[float, str]]]] = \
            defaultdict(lambda: defaultdict(list))
        hosts_of: dict[str, set[str]] = defaultdict(set)
        util: dict[tuple[str, str], list[float]] = defaultdict(list)
        for row in rows:
            label_outcome = labels.get(row.label, COMPLETED if row.ok else "failed")
            figures = _values(row)
            for mk, v in figures.items():
                values[(row.step, row.host)][mk].append((v, label_outcome))
            if row.host != FLEET:
                hosts_of[row.step].add(row.host)
                u = figures.get(("disk_util_ratio", ""))
                if u is not None:
                    util[(row.step, row.label)].append(u)
        for (step, label), us in util.items():  # the fleet's: the mean of its hosts'
            values[(step, FLEET)][("disk_util_ratio", "")].append(
                (statistics.fmean(us), labels.get(label, COMPLETED)))
        step_rows = []
        for step, ident in run.identities.items():
            reps = [lb for lb, d in run.step_data.items() if split_label(lb, d)[0] == step]
            outs = [labels.get(lb, "interrupted") for lb in reps]
            bad = [o for o in outs if o != COMPLETED]
            step_rows.append((run_id, step, make_args_key(ident), bad[0] if bad else COMPLETED,
                              len(reps)))
        cat.executemany("INSERT INTO step_runs (run_id, step, args_key, outcome, repeats) "
                        "VALUES (?, ?, ?, ?, ?)", step_rows)
        points = []
        for (step, scope), metrics in values.items():
            ident = run.identities.get(step, {})
            akey = make_args_key(ident)
            if scope == FLEET:
                env = fleet_env_key(host_env.get(h, "") for h in hosts_of.get(step, ()))
            else:
                env = host_env.get(scope, "")
            for (metric, op), reps_values in metrics.items():
                sid = self._series_id((run.plan, step, akey, metric, op, scope, env), ident)
                failed = [o for _v, o in reps_values if o != COMPLETED]
                value = typical((v, o == COMPLETED) for v, o in reps_values)
                points.append((sid, run_id, value, len(reps_values),
                               failed[0] if failed else COMPLETED))
        cat.executemany("INSERT INTO points (series_id, run_id, value, repeats, outcome) "
                        "VALUES (?, ?, ?, ?, ?)", points)
        cat.commit()
        return run_id, len(points)

    def _series_id(self, key: tuple[str, str, str, str, str, str, str],
                   ident: Mapping[str, object]) -> int:
        """The id of the series (plan, step, args key, metric, op, scope, env), made if
        new."""
        sid = self._series.get(key)
        if sid is not None:
            return sid
        cat = self.catalog
        cat.execute("INSERT INTO series (plan, step, args_key, args, metric, op, scope, "
                    "env_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (*key[:3], json.dumps(ident, sort_keys=True, default=str), *key[3:]))
        found = cat.one("SELECT id FROM series WHERE plan = ? AND step = ? AND args_key = ? "
                        "AND metric = ? AND op = ? AND scope = ? AND env_key = ?", key)
        assert found is not None
        self._series[key] = sid = int(found[0])
        return sid
