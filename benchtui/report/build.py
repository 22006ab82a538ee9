"""A report built from session files: the rows of every step, host and fleet, and their
baseline.

For each run of a step on a host (``session/compare.py``'s layout: the run's window from its
events), the figures come from ``SessionReader.series_stats`` over the time its tool ran
(``window.py``: from its first interval to its last, told by the run's statistics) minus the
ramp-up (``--skip``, 5 s by default, from the tool's own start), restricted to the host's
samples labelled with the run's step (the workload's, and the monitors' of the same seconds)
of the metrics the figures are made of. Nothing else is read: no sample is held, and a store
that keeps summaries answers without decoding; a step's runs are read together
(``run_reads.py``: the seconds at every host's window edges decoded once per segment).

Imported sessions (``benchtui import``) have no live timing and their per-interval figures
are a status line's: they are read from the tools' end-of-run summaries instead.

Repeats: ``select`` (the plan's, or ``--select``) keeps every run (``all``), or makes one row
of a host's runs: their median, figure by figure, or the best run (``repeats.py``);
baselines are matched by ``session/compare.py`` (the one place that decides which step, host
and runs a row is compared with) and combined by the row's own rule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from benchtui.errors import CompareError
from benchtui.model import events as ev
from benchtui.report import figures, repeats
from benchtui.report.figures import IoFigures
from benchtui.report.model import Report, Row
from benchtui.report.run_reads import RunRead
from benchtui.report.step_reads import read_steps
from benchtui.session.changes import Change, fact_changes, plan_changes, plan_description
from benchtui.session.compare import (
    FLEET,
    SESSION,
    BaselineSpec,
    Matching,
    RunWindow,
    SessionLayout,
    counterpart_labels,
    host_pairs,
    match,
    parse_baseline,
)
from benchtui.store.recording import SessionReader

#: Seconds skipped at the start of every run by default: fio's first interval holds the
#: job's set-up (file layout, queue fill), and a device's first seconds are its cache.
DEFAULT_SKIP = 5.0
SELECTS = repeats.SELECTS
FIGURES = ("window", "summary")


@dataclass(frozen=True)
class ReportOptions:
    baseline: str | None = None
    baseline_host: str | None = None
    skip: float = DEFAULT_SKIP
    #: Overrides every step's own ``select`` (None: the plan's, else "all").
    select: str | None = None
    #: Where IOPS, bandwidth and mean latency come from: "window" (per-interval figures over
    #: the window) or "summary" (the tool's end-of-run figures); None: the tool's end-of-run
    #: figures where it printed them, else the window's.
    figures: str | None = None
    #: Only these steps (by name; None: every step): what ``benchtui plot`` reads.
    steps: tuple[str, ...] | None = None
    #: ``--steps``/``--exclude-step``: shell-style patterns of step names (as ``benchtui
    #: check`` prints them: ``rand bs=4k*``); a step is reported when it matches one of
    #: ``include`` (or there is none) and none of ``exclude``.
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def wants(self, step: str) -> bool:
        if self.steps is not None and step not in self.steps:
            return False
        if self.include and not any(fnmatchcase(step, p) for p in self.include):
            return False
        return not any(fnmatchcase(step, p) for p in self.exclude)


@dataclass
class _RunFigures:
    run: RunWindow
    io: IoFigures
    row: Row


class _SessionRows:
    """One session's rows, before baselines."""

    def __init__(self, reader: SessionReader, name: str, options: ReportOptions,
                 warnings: list[str]) -> None:
        self.reader = reader
        self.name = name
        self.options = options
        self.warnings = warnings
        self.layout = SessionLayout.from_events(reader.events())
        self.imported = reader.meta.imported
        self.rows: list[Row] = []
        #: (step, host) -> every run's row, in repeat order (before select)
        self.runs: dict[tuple[str, str], list[Row]] = defaultdict(list)

    def build(self) -> None:
        short: list[str] = []
        dropped: list[Row] = []
        self.left_out = [s for s in self.layout.steps if not self.options.wants(s)]
        steps = [s for s in self.layout.steps if self.options.wants(s)]
        windows = [self.layout.runs_of(step) for step in steps]
        reads = read_steps(self.reader, windows, self.options.skip, imported=self.imported,
                           warnings=self.warnings)
        for step, step_runs, step_reads in zip(steps, windows, reads, strict=True):
            by_label: dict[str, list[_RunFigures]] = defaultdict(list)
            for part in self._host_runs(step_runs, step_reads, short):
                by_label[part.run.label].append(part)
            for label, parts in by_label.items():
                fleet = self._fleet_row(step, label, parts)
                if fleet is not None:
                    self.runs[(step, FLEET)].append(fleet)
                for p in parts:
                    self.runs[(step, p.run.host)].append(p.row)
            select = self.select_of(step)
            for host in [*self._in_order(self.layout.hosts(step)), FLEET]:
                runs = self.runs.get((step, host), [])
                self.rows.extend(repeats.combine(runs, select))
                if host != FLEET:
                    dropped.extend(repeats.left_out(runs, select))
        if dropped:
            self.warnings.append(
                f"{self.name} ({self.reader.path}): runs that did not complete are left out of "
                "their step's row, which stands for the runs that did: " + "; ".join(
                    f"{r.label} on {r.host} ({r.outcome or 'no end recorded'})"
                    for r in dropped))
        if short:
            self.warnings.append(
                f"{self.name} ({self.reader.path}): {len(short)} run(s) were shorter than "
                f"twice the skip of {self.options.skip:g} s and are reported over their whole "
                "length "
                f"(e.g. {short[0]})")

    def _in_order(self, hosts: tuple[str, ...]) -> list[str]:
        """A step's hosts in the session's order (the plan's, or an imported report's)."""
        order = {h: i for i, h in enumerate(self.reader.meta.hosts)}
        return sorted(hosts, key=lambda h: order.get(h, len(order)))

    def select_of(self, step: str) -> str:
        if self.options.select is not None:
            return self.options.select
        chosen = self.layout.step_data.get(step, {}).get("select")
        # repeats are shown as each host's median run (the range over the runs beside it:
        # one row per host) unless the plan says best; a plan's "all" is its default and
        # cannot be told from a choice: --select all keeps every run
        return "best" if chosen == "best" else "median"

    def _host_runs(self, runs: Sequence[RunWindow], reads: Sequence[RunRead],
                   short: list[str]) -> list[_RunFigures]:
        """The runs' figures, from their reads (``run_reads.py``, ``step_reads.py``)."""
        # a run's figure is the tool's own end-of-run figure where it printed one (fio's
        # ``read: IOPS=...``), unless ``--figures window`` asks for the window's means
        prefer_summary = self.options.figures != "window"
        out = []
        for run, read in zip(runs, reads, strict=True):
            if read.short:
                short.append(f"{run.label} on {run.host}")
            window, whole = read.window, read.whole
            io = figures.io_figures(window, whole, prefer_summary=prefer_summary)
            clients = self.layout.clients_of(run.label, run.host) if run.role == "server" \
                else {}
            values = figures.io_values(io) + figures.device_values(window) \
                + figures.other_values(window, whole, prefer_summary=prefer_summary,
                                       clients=clients)
            row = Row(self.name, run.step, run.host, run.label, run.repeat, *read.shown,
                      values, read.steady, ok=run.ok, outcome=run.outcome, reason=run.reason,
                      silent_seconds=run.silent_seconds, matrix=self._matrix(run.step),
                      role=run.role, runs={run.label: read.started})
            out.append(_RunFigures(run, io, row))
        return out

    def _fleet_row(self, step: str, label: str, parts: list[_RunFigures]) -> Row | None:
        """A run's fleet row: its hosts' I/O together (``figures.fleet_io``), and their
        network figures added up (each host's own end: the clients' sends, the servers'
        receives)."""
        io = [p.io for p in parts if p.io.iops or p.io.bandwidth]
        values = figures.io_values(figures.fleet_io(io)) if io else []
        values += figures.fleet_net([p.row for p in parts])
        if not values:
            return None
        first = parts[0].run
        t0 = min(p.row.t0 for p in parts)
        t1 = max(p.row.t1 for p in parts)
        ok = None if any(p.run.ok is None for p in parts) else all(p.run.ok for p in parts)
        ends = [p.run.outcome for p in parts]
        outcome = None if None in ends else ev.worst([e for e in ends if e is not None])
        reason = "; ".join(f"{p.run.host}: {p.run.reason or p.run.outcome}" for p in parts
                           if p.run.outcome != ev.COMPLETED)
        return Row(self.name, step, FLEET, label, first.repeat, t0, t1, values, ok=ok,
                   outcome=outcome, reason=reason,
                   silent_seconds=max(p.run.silent_seconds for p in parts),
                   matrix=self._matrix(step),
                   runs={label: min(p.row.runs[label] for p in parts)})

    def _matrix(self, step: str) -> dict[str, str]:
        """A sweep step's option values (the ``step_start`` event's ``matrix``)."""
        matrix = self.layout.step_data.get(step, {}).get("matrix")
        return {str(k): str(v) for k, v in matrix.items()} if isinstance(matrix, dict) else {}


def _names(readers: Sequence[SessionReader]) -> list[str]:
    """What the report calls each session: its plan's name, or, where two sessions share
    one (two runs of one plan, before and after), their files' names."""
    names = [r.meta.name or Path(r.path).stem for r in readers]
    if len(set(names)) == len(names):
        return names
    stems = [Path(r.path).stem for r in readers]
    return stems if len(set(stems)) == len(stems) else [r.path for r in readers]


def _rows_of(reader: SessionReader, name: str, options: ReportOptions, warnings: list[str]
             ) -> _SessionRows:
    rows = _SessionRows(reader, name, options, warnings)
    rows.build()
    for w in reader.warnings:
        warnings.append(f"{name} ({reader.path}): {w}")
    return rows


def _baseline_row(matching: Matching, base: _SessionRows, row: Row) -> Row | None:
    """The row ``row`` is compared with: the baseline's runs ``compare.counterpart_labels``
    names, combined by the row's own rule (the median with the median, the best with the
    best); a row of a step run once against the baseline's row as the baseline shows it."""
    key = matching.baseline_of(row.step, row.host)
    if key is None:
        return None
    bstep, bhost = key
    if row.selected_from > 1:
        select = row.selected_by
    elif row.label != row.step:  # one run of a repeated step, shown run by run
        select = "all"
    else:  # the one run of a step run once: the baseline as the baseline shows its step
        select = base.select_of(bstep)
    labels = counterpart_labels(base.layout, bstep, bhost,
                                row.repeat if select == "all" else None)
    runs = [r for r in base.runs.get((bstep, bhost), []) if r.label in labels]
    found = repeats.combine(runs, select)
    return found[-1] if found else None


def _compare(rows: _SessionRows, matching: Matching, base: _SessionRows) -> None:
    for row in rows.rows:
        b = _baseline_row(matching, base, row)
        if b is None:
            continue
        row.baseline_row = b
        row.baseline = f"{b.step} / {b.host}" + (f" ({base.name})" if base is not rows else "")
        row.baseline_outcome = b.outcome
        by_key = {v.key: v for v in b.values}
        for v in row.values:
            bv = by_key.get(v.key)
            if bv is not None:
                v.baseline = bv.value


def _changes(rows: _SessionRows, base: _SessionRows, spec: BaselineSpec) -> list[Change]:
    """What differs between a session and its baseline session: plans, then facts."""
    meta, bmeta = rows.reader.meta, base.reader.meta
    pairs = host_pairs(spec, [*meta.facts], [*bmeta.facts])
    return plan_changes(bmeta.plan_text, meta.plan_text) \
        + fact_changes(bmeta.facts, meta.facts, pairs)


def _check_patterns(options: ReportOptions, sessions: Sequence[_SessionRows]) -> None:
    """A ``--steps`` pattern that matches no step is a mistake (CompareError listing the
    steps, as ``benchtui check`` names them)."""
    names = [s for rows in sessions for s in rows.layout.steps]
    for pattern in options.include:
        if not any(fnmatchcase(s, pattern) for s in names):
            raise CompareError(f"--steps {pattern!r} matches no step",
                               known=tuple(dict.fromkeys(names)))


def build_report(paths: Sequence[str], options: ReportOptions) -> Report:
    """The report of ``paths`` (RecordingError for a file that is not a session,
    CompareError for a baseline that does not exist or matches nothing)."""
    warnings: list[str] = []
    spec: BaselineSpec | None = None
    if options.baseline is not None:
        spec = parse_baseline(options.baseline, baseline_host=options.baseline_host)
    elif options.baseline_host is not None:
        raise CompareError("--baseline-host goes with --baseline session=FILE")
    if options.select is not None and options.select not in SELECTS:
        raise CompareError(f"--select {options.select!r} is not a choice", known=SELECTS)
    if options.figures is not None and options.figures not in FIGURES:
        raise CompareError(f"--figures {options.figures!r} is not a choice", known=FIGURES)
    readers: list[SessionReader] = []
    try:
        for path in [*paths, *([spec.value] if spec is not None and spec.kind == SESSION
                               else [])]:
            readers.append(SessionReader.open(path))
        names = _names(readers)
        sessions = [_rows_of(reader, name, options, warnings)
                    for reader, name in zip(readers[:len(paths)], names, strict=False)]
        base: _SessionRows | None = None
        if len(readers) > len(paths):
            base = _rows_of(readers[-1], names[-1], options, warnings)
        _check_patterns(options, sessions)
        unmatched: list[str] = []
        for rows in sessions:
            if spec is None:
                continue
            other = base if base is not None else rows
            matching = match(rows.layout, spec, base.layout if base is not None else None)
            _compare(rows, matching, other)
            unmatched.extend(s for s in matching.unmatched_steps if s not in unmatched)
    finally:
        for reader in readers:
            reader.close()
    report = Report([s.name for s in sessions], [r for s in sessions for r in s.rows],
                    spec, unmatched, warnings, options.skip, figures=options.figures)
    for s in sessions:
        report.facts[s.name] = s.reader.meta.facts
        report.paths[s.name] = s.reader.path
        report.imported[s.name] = s.imported
        if any(v.source == "histogram" for r in s.rows for v in r.values):
            report.histogram_bits[s.name] = s.reader.meta.histogram_bits
        report.descriptions[s.name] = plan_description(s.reader.meta.plan_text)
        report.left_out.extend(x for x in s.left_out if x not in report.left_out)
        if base is not None and spec is not None:
            report.changes[s.name] = _changes(s, base, spec)
    if base is not None:
        report.baseline_session = (base.name, base.reader.path,
                                   plan_description(base.reader.meta.plan_text))
    if not report.rows:
        warnings.append("no step ran in " + ", ".join(paths))
    return report

