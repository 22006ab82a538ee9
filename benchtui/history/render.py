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
from benchtui.model.format import format_metric, markdown_cell

_BARS = "▁▂▃▄▅▆▇█"


def when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def value(f: Found | Analysed, v: float) -> str:
    series = f.series
    return format_metric(series.metric, v)


def _metric(f: Found) -> str:
    op = f" {f.series.op}" if f.series.op else ""
    return f"{f.series.info.label}{op}"


def _p(p: float) -> str:
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def _commits(f: Found) -> str:
    a, b = f.commits
    if a is None and b is None:
        return ""
    return f", commit {a or '?'} -> {b or '?'}"


def finding(group: Group, points: Sequence[Point]) -> str:
    """One line: the step, the metrics that moved together, the first one's before and
    after, the change, p, and the runs (and commits) where it happened."""
    f = group.first
    c = f.change
    moved = ", ".join(f"{_metric(x)} {x.percent:+.1f}%" for x in group.changes)
    before, after = points[f.before], points[f.at]
    status = "" if group.status == CONFIRMED else \
        f" [{group.status}, needs {f.needs} more run(s)]" if group.status == SUSPECTED \
        else f" [{group.status}]"
    hosts = f"; hosts: {', '.join(group.hosts)}" if group.hosts else ""
    return (f"{group.verdict}{status}: {group.step}: {moved}; {_metric(f)} "
            f"{value(f, c.mean_before)} ± {value(f, c.sd_before)} -> "
            f"{value(f, c.mean_after)} ± {value(f, c.sd_after)}, p {_p(c.pvalue)}; "
            f"between run {f.prev_run_id} ({_name(before)}, {when(before.started)}) and run "
            f"{f.run_id} ({_name(after)}, {when(after.started)}){_commits(f)}{hosts}"
            + (f" (change {f.id})" if f.id is not None else ""))


def _name(p: Point) -> str:
    """A run as a user knows it: its session file's name."""
    return Path(p.path).name or p.session


def gate_lines(result: GateResult) -> list[str]:
    points = {a.series.id: a.points for a in result.series}
    lines = [result.summary()]
    for g in [*result.regressions, *result.improvements, *result.suspected]:
        lines.append("  " + finding(g, points[g.first.series.id]))
    for a in result.too_short:
        need = result.require if result.require is not None else None
        extra = f" (--require-history {need})" if need is not None else ""
        lines.append(f"  too short: {a.series.name}: {a.analysed_count} point(s){extra}")
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
        return "stable"
    f = a.changes[-1]
    ack = ", acknowledged" if f.acked else ""
    if f.status == SUSPECTED:
        return f"suspected {f.verdict} (needs {f.needs} more run(s){ack})"
    return f"{f.status} {f.verdict}{ack}"


def show_lines(series: Sequence[Analysed], last: int) -> list[str]:
    out: list[str] = []
    for a in series:
        pts = a.points[-last:] if last > 0 else a.points
        first = len(a.points) - len(pts)
        spark = sparkline([p.value if p.analysed else None for p in pts])
        levels = [s for s in a.segments if s.end > first]
        cur = a.current
        out.append(f"{a.series.name}  ({a.analysed_count} runs, {len(a.points)} recorded)")
        out.append(f"  {spark}")
        marks = [" "] * len(pts)
        for f in a.changes:
            if f.at >= first and f.status in (CONFIRMED, SUSPECTED):
                marks[f.at - first] = "^" if f.status == CONFIRMED else "?"
        if any(m != " " for m in marks):
            out.append(f"  {''.join(marks).rstrip()}  (^ confirmed, ? suspected change)")
        if levels:
            out.append("  levels: " + " -> ".join(
                f"{value(a, s.mean)} ({s.count} runs)" for s in levels))
        if cur is not None:
            out.append(f"  now: {value(a, cur.mean)} ± {value(a, cur.sd)}")
        if a.changes:
            f = a.changes[-1]
            p = a.points[f.at]
            out.append(f"  last change: {f.percent:+.1f}% at run {f.run_id} ({_name(p)}, "
                       f"{when(p.started)}), p {_p(f.change.pvalue)}"
                       + (f", change {f.id}" if f.id is not None else ""))
        out.append(f"  verdict: {verdict(a)}")
    return out


def _change_json(f: Found, a: Analysed) -> dict[str, Any]:
    p = a.points[f.at]
    c = f.change
    return {
        # Otava's fields (otava.series.ChangePoint.to_json, unrounded)
        "metric": f"{f.series.info.short}{'.' + f.series.op if f.series.op else ''}",
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
                group = {"time": p.started,
                         "attributes": {k: v for k, v in (("commit", p.commit),
                                                          ("branch", p.branch),
                                                          ("session", p.session)) if v},
                         "changes": []}
                groups.append(group)
            group["changes"].append(_change_json(f, a))
    for groups in tests.values():
        groups.sort(key=lambda g: g["time"])
    return json.dumps(tests, indent=1, allow_nan=False, default=_finite) + "\n"


def _finite(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    raise TypeError(type(v).__name__)


def to_markdown(plan: str, series: Sequence[Analysed]) -> str:
    lines = [f"# History of {plan}", "",
             "| series | runs | now | last change | run | p | verdict |",
             "|---|---|---|---|---|---|---|"]
    for a in series:
        cur = a.current
        now = f"{value(a, cur.mean)} ± {value(a, cur.sd)}" if cur else "-"
        if a.changes:
            f = a.changes[-1]
            change, run, p = f"{f.percent:+.1f}%", str(f.run_id), _p(f.change.pvalue)
        else:
            change = run = p = "-"
        cells = (a.series.name, str(a.analysed_count), now, change, run, p, verdict(a))
        lines.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def to_junit(plan: str, series: Sequence[Analysed], require: int) -> str:
    """One test per gated series (the fleet's): failed when its latest change is a
    confirmed, unacknowledged regression; skipped when it has fewer than ``require``
    points."""
    cases = []
    failures = skipped = 0
    for a in series:
        name = quoteattr(a.series.name)
        last = a.changes[-1] if a.changes else None
        if a.analysed_count < require:
            skipped += 1
            cases.append(f'  <testcase classname={quoteattr(plan)} name={name}><skipped '
                         f'message="{a.analysed_count} point(s), fewer than {require}"/>'
                         "</testcase>")
        elif last is not None and last.status == CONFIRMED and last.verdict == REGRESSION \
                and not last.acked:
            failures += 1
            msg = f"{last.percent:+.1f}% at run {last.run_id}, p {_p(last.change.pvalue)}"
            cases.append(f'  <testcase classname={quoteattr(plan)} name={name}><failure '
                         f'message={quoteattr(msg)}>{escape(verdict(a))}</failure></testcase>')
        else:
            cases.append(f'  <testcase classname={quoteattr(plan)} name={name}/>')
    head = (f'<testsuite name={quoteattr("benchtui history " + plan)} tests="{len(cases)}" '
            f'failures="{failures}" skipped="{skipped}">')
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, *cases,
                      "</testsuite>"]) + "\n"
