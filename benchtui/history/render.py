"""The history in words: the gate's lines, ``history show``'s sparklines, and ``analyze``'s
Markdown, JSON (a superset of Otava's change-point report) and JUnit."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from benchtui.history.analysis import (
    CONFIRMED,
    REGRESSION,
    SUSPECTED,
    Analysed,
    Found,
    Point,
)
from benchtui.history.gate import GateResult, Group
from benchtui.history.schema import ATTRIBUTES
from benchtui.history.series import FLEET
from benchtui.history.transients import Transient
from benchtui.model.format import format_metric, markdown_cell, plural

_BARS = "▁▂▃▄▅▆▇█"
#: Incomplete runs listed by name on the gate's line (the newest; a longer streak is
#: counted).
_LISTED = 5


def when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def value(f: Found | Analysed, v: float) -> str:
    series = f.series
    return format_metric(series.metric, v)


def _metric(f: Found) -> str:
    op = f" {f.series.op}" if f.series.op else ""
    return f"{f.series.info.label}{op}"


#: Below this a p-value is not printed as a number: the t distribution's tail is computed
#: in doubles, which end near 1e-308 (a series with no noise at all gives p 0).
P_FLOOR = 1e-300


def p_text(p: float) -> str:
    """A p-value as printed: ``0.012``, ``2.8e-34``, ``< 1e-300`` (never ``0.0e+00``)."""
    if p < P_FLOOR:
        return "< 1e-300"
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def attributes(before: Point, after: Point) -> str:
    """The runs' attributes either side of a change: the commit always (``commit c08 ->
    c09``), the others where they differ (``build 41 -> 42``)."""
    names = sorted(set(before.attributes) | set(after.attributes),
                   key=lambda n: (n not in ATTRIBUTES, ATTRIBUTES.index(n)
                                  if n in ATTRIBUTES else 0, n))
    out = []
    for name in names:
        a, b = before.attributes.get(name), after.attributes.get(name)
        if name == "commit" or a != b:
            out.append(f"{name} {a or '?'} -> {b or '?'}")
    return ", ".join(out)


def host_change(host: str, f: Found) -> str:
    """``h2 -15.0% (2.00k -> 1.70k)``."""
    c = f.change
    return (f"{host} {f.percent:+.1f}% ({value(f, c.mean_before)} -> "
            f"{value(f, c.mean_after)})")


def finding(group: Group, points: Sequence[Point]) -> str:
    """One line: the step (and host, for a host's series), the metrics that moved together,
    the first one's before and after, the change, p, the runs (and their attributes) where
    it happened, and the hosts that moved with the fleet, each with its own change."""
    f = group.first
    c = f.change
    moved = ", ".join(f"{_metric(x)} {x.percent:+.1f}%" for x in group.changes)
    before, after = points[f.before], points[f.at]
    status = "" if group.status == CONFIRMED else \
        f" [{group.status}, needs {f.needs} more run(s)]" if group.status == SUSPECTED \
        else f" [{group.status}]"
    where = group.step if group.scope == FLEET else f"{group.step} on {group.scope}"
    attrs = attributes(before, after)
    hosts = f"; hosts: {', '.join(host_change(h, x) for h, x in group.hosts)}" \
        if group.hosts else ""
    return (f"{group.verdict}{status}: {where}: {moved}; {_metric(f)} "
            f"{value(f, c.mean_before)} ± {value(f, c.sd_before)} -> "
            f"{value(f, c.mean_after)} ± {value(f, c.sd_after)}, p {p_text(c.pvalue)}; "
            f"between run {f.prev_run_id} ({_name(before)}, {when(before.started)}) and run "
            f"{f.run_id} ({_name(after)}, {when(after.started)})"
            + (f", {attrs}" if attrs else "") + hosts
            + (f" (change {f.id})" if f.id is not None else ""))


def _name(p: Point) -> str:
    """A run as a user knows it: its session file's name."""
    return Path(p.path).name or p.session


def gate_lines(result: GateResult) -> list[str]:
    points = {a.series.id: a.points for a in result.series}
    lines = [result.summary()]
    for g in [*result.regressions, *result.improvements, *result.suspected]:
        lines.append("  " + finding(g, points[g.first.series.id]))
    for a in result.pending:
        assert a.pending is not None
        lines.append(f"  pending: {a.series.name}: {_odd(a, a.pending)} from the level before "
                     "it: a transient or the first run of a new level; the next run tells")
    if result.incomplete:
        runs = result.incomplete
        shown = ", ".join(f"run {r.id} ({Path(r.path).name or r.session}, {when(r.started)}, "
                          f"{r.outcome})" for r in runs[-_LISTED:])
        more = f"{len(runs)} runs, the newest {_LISTED}: " if len(runs) > _LISTED else ""
        verdict = "fails the gate" if result.failed_to_complete else "not yet a failure"
        lines.append(f"  incomplete: {more}{shown}: not analysed; {verdict} "
                     f"(--require-complete {result.require_complete})")
    why = "--require-history" if result.require is not None \
        and result.require >= result.needed else "--confirm runs either side of a change"
    for a in result.too_short:
        lines.append(f"  too short: {a.series.name}: {a.analysed_count} of the "
                     f"{result.needed} points needed ({why})")
    return lines


def sparkline(values: Sequence[float | None]) -> str:
    """One character per point (``·`` for a point not analysed)."""
    shown = [v for v in values if v is not None]
    if not shown:
        return "·" * len(values)
    lo, hi = min(shown), max(shown)
    span = hi - lo
    out = []
    for v in values:
        if v is None:
            out.append("·")
        elif span <= 0 or span < 1e-9 * max(abs(hi), 1e-300):
            out.append(_BARS[3])
        else:
            out.append(_BARS[min(int((v - lo) / span * len(_BARS)), len(_BARS) - 1)])
    return "".join(out)


def verdict(a: Analysed) -> str:
    if not a.changes:
        n = a.analysed_count
        return f"too short ({n} of {a.needed} points)" if n < a.needed else "stable"
    f = a.changes[-1]
    ack = ", acknowledged" if f.acked else ""
    if f.status == SUSPECTED:
        return f"suspected {f.verdict} (needs {f.needs} more run(s){ack})"
    return f"{f.status} {f.verdict}{ack}"


def series_labels(series: Sequence[Analysed]) -> dict[int, str]:
    """Each series' name as the tables show it: its step, metric, op and scope, and where
    another series of the list has that name too (the same step on another set of hosts,
    or after a host's hardware, kernel or tool changed: a new series, ``series.py``), the
    run it starts from, so that two rows never read alike."""
    names: dict[str, int] = {}
    for a in series:
        names[a.series.name] = names.get(a.series.name, 0) + 1
    return {a.series.id: a.series.name if names[a.series.name] == 1 or not a.points
            else f"{a.series.name} from run {a.points[0].run_id}" for a in series}


def show_lines(series: Sequence[Analysed], last: int) -> list[str]:
    out: list[str] = []
    label = series_labels(series)
    for a in series:
        pts = a.points[-last:] if last > 0 else a.points
        first = len(a.points) - len(pts)
        spark = sparkline([p.value if p.analysed else None for p in pts])
        levels = [s for s in a.segments if s.end > first]
        cur = a.current
        out.append(f"{label[a.series.id]}  ({a.analysed_count} runs, {len(a.points)} recorded)")
        out.append(f"  {spark}")
        marks = [" "] * len(pts)
        for i in a.transients:
            if i >= first:
                marks[i - first] = "t"
        for f in a.changes:
            if f.at >= first and f.status in (CONFIRMED, SUSPECTED):
                marks[f.at - first] = "^" if f.status == CONFIRMED else "?"
        if any(m != " " for m in marks):
            out.append(f"  {''.join(marks).rstrip()}  (^ confirmed, ? suspected change, "
                       "t transient)")
        if levels:
            out.append("  levels: " + " -> ".join(
                f"{value(a, s.mean)} ({plural(s.count, 'run')})" for s in levels))
        if cur is not None:
            out.append(f"  now: {value(a, cur.mean)} ± {value(a, cur.sd)}")
        if a.changes:
            f = a.changes[-1]
            p = a.points[f.at]
            attrs = attributes(a.points[f.before], p)
            out.append(f"  last change: {f.percent:+.1f}% at run {f.run_id} ({_name(p)}, "
                       f"{when(p.started)}" + (f", {attrs}" if attrs else "")
                       + f"), p {p_text(f.change.pvalue)}"
                       + (f", change {f.id}" if f.id is not None else ""))
        odd = [t for i, t in sorted(a.transients.items()) if i >= first]
        if odd:
            out.append("  transients (one-off runs, left out of the levels, never gated): "
                       + ", ".join(_odd(a, t) for t in odd))
        if a.pending is not None:
            out.append(f"  pending: {_odd(a, a.pending)} from the level before it: a "
                       "transient or the first run of a new level; the next run tells")
        out.append(f"  verdict: {verdict(a)}")
    return out


def _odd(a: Analysed, t: Transient) -> str:
    """``run 5 (night-05.btr, 3.50k, -12.5%)``."""
    p = a.points[t.index]
    return f"run {p.run_id} ({_name(p)}, {value(a, p.value)}, {100 * t.deviation:+.1f}%)"


def _change_json(f: Found, a: Analysed) -> dict[str, Any]:
    p = a.points[f.at]
    c = f.change
    return {
        # Otava's fields (otava.series.ChangePoint.to_json, unrounded)
        "metric": _json_metric(f),
        "index": f.at, "time": p.started, "forward_change_percent": f.percent,
        "magnitude": c.magnitude, "mean_before": c.mean_before, "stddev_before": c.sd_before,
        "mean_after": c.mean_after, "stddev_after": c.sd_after, "pvalue": c.pvalue,
        # benchtui's
        "id": f.id, "status": f.status, "verdict": f.verdict, "needs": f.needs,
        "acknowledged": f.acked, "run_id": f.run_id, "prev_run_id": f.prev_run_id,
        "session": p.session, "path": p.path,
    }


def to_json(plan: str, series: Sequence[Analysed]) -> str:
    """Otava's report shape (test name -> change point groups, each with ``time``,
    ``attributes`` and ``changes``); a test is a step's scope (``PLAN.STEP.SCOPE``), its
    metrics the series of that step and scope. benchtui adds fields to each change and a
    ``series`` list to each group's test (levels, points)."""
    tests: dict[str, list[dict[str, Any]]] = {}
    for a in series:
        name = f"{plan}.{a.series.step}.{a.series.scope}"
        groups = tests.setdefault(name, [])
        for f in a.changes:
            p = a.points[f.at]
            group = next((g for g in groups if g["time"] == p.started), None)
            if group is None:
                group = {"time": p.started, "attributes": _json_attributes(p),
                         "changes": []}
                groups.append(group)
            group["changes"].append(_change_json(f, a))
        for i, t in sorted(a.transients.items()):
            p = a.points[i]
            group = next((g for g in groups if g["time"] == p.started), None)
            if group is None:
                group = {"time": p.started, "attributes": _json_attributes(p),
                         "changes": []}
                groups.append(group)
            group.setdefault("transients", []).append({
                "metric": _json_metric(a), "index": i, "value": p.value, "level": t.level,
                "deviation_percent": 100 * t.deviation, "run_id": p.run_id,
                "session": p.session, "path": p.path})
    for groups in tests.values():
        groups.sort(key=lambda g: g["time"])
    return json.dumps(tests, indent=1, allow_nan=False, default=_finite) + "\n"


def _json_attributes(p: Point) -> dict[str, str]:
    """A run's attributes (commit, branch, build...) and its session, as Otava's."""
    return {**p.attributes, "session": p.session} if p.session else dict(p.attributes)


def _json_metric(a: Analysed | Found) -> str:
    return f"{a.series.info.short}{'.' + a.series.op if a.series.op else ''}"


def _finite(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    raise TypeError(type(v).__name__)


def to_markdown(plan: str, series: Sequence[Analysed]) -> str:
    lines = [f"# History of {plan}", "",
             "| series | runs | now | last change | run | attributes | p | verdict "
             "| transients |",
             "|---|---|---|---|---|---|---|---|---|"]
    label = series_labels(series)
    for a in series:
        cur = a.current
        now = f"{value(a, cur.mean)} ± {value(a, cur.sd)}" if cur else "-"
        if a.changes:
            f = a.changes[-1]
            change, run, p = f"{f.percent:+.1f}%", str(f.run_id), p_text(f.change.pvalue)
            attrs = attributes(a.points[f.before], a.points[f.at]) or "-"
        else:
            change = run = p = attrs = "-"
        odd = ", ".join(f"{a.points[i].run_id} ({100 * t.deviation:+.1f}%)"
                        for i, t in sorted(a.transients.items())) or "-"
        cells = (label[a.series.id], str(a.analysed_count), now, change, run, attrs, p, verdict(a),
                 odd)
        lines.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def to_junit(plan: str, series: Sequence[Analysed], require: int) -> str:
    """One test per gated series (the fleet's): failed when its latest change is a
    confirmed, unacknowledged regression; skipped when it has fewer than ``require``
    points."""
    cases = []
    failures = skipped = 0
    label = series_labels(series)
    for a in series:
        name = quoteattr(label[a.series.id])
        last = a.changes[-1] if a.changes else None
        if a.analysed_count < require:
            skipped += 1
            cases.append(f'  <testcase classname={quoteattr(plan)} name={name}><skipped '
                         f'message="{a.analysed_count} point(s), fewer than {require}"/>'
                         "</testcase>")
        elif last is not None and last.status == CONFIRMED and last.verdict == REGRESSION \
                and not last.acked:
            failures += 1
            msg = f"{last.percent:+.1f}% at run {last.run_id}, p {p_text(last.change.pvalue)}"
            cases.append(f'  <testcase classname={quoteattr(plan)} name={name}><failure '
                         f'message={quoteattr(msg)}>{escape(verdict(a))}</failure></testcase>')
        else:
            cases.append(f'  <testcase classname={quoteattr(plan)} name={name}/>')
    head = (f'<testsuite name={quoteattr("benchtui history " + plan)} tests="{len(cases)}" '
            f'failures="{failures}" skipped="{skipped}">')
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, *cases,
                      "</testsuite>"]) + "\n"
