"""A report as data for programs: tidy CSV (one row per session, step, host, metric, op and
item) and JSON.

The CSV is long, not wide, so that pandas (``pd.read_csv``) and spreadsheets take it as it
is: filter by ``metric``, pivot by ``host`` or ``step``. Values are in base units (``unit``
says which); ``percent_of_baseline`` is 100 x value / baseline_value, empty without a
baseline.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import IO

import orjson

from benchtui.report.model import OVERFLOW, Report, Row, Value, overflowed

CSV_COLUMNS = ("session", "step", "host", "metric", "op", "value", "unit", "baseline_value",
               "percent_of_baseline", "item", "repeat", "runs", "source", "baseline",
               "steady", "window_start", "window_end", "outcome", "range_min", "range_max")


def _num(v: float | None) -> str:
    if v is None:
        return ""
    if overflowed(v):
        return OVERFLOW
    return repr(round(v, 12)) if v != int(v) or abs(v) >= 1e15 else str(int(v))


def _percent(pct: float | None) -> str:
    return "" if pct is None else OVERFLOW if overflowed(pct) else f"{pct:.2f}"


def _steady(row: Row) -> str:
    if row.steadiness is None:
        return ""
    return "yes" if row.steadiness.steady else "no"


def matrix_columns(report: Report) -> dict[str, str]:
    """A sweep's options (the plans' ``matrix`` keys, in the order they come) -> the column
    that holds them: the key itself (``bs``, ``rw``), ``matrix.KEY`` where a fixed column
    has that name."""
    keys = dict.fromkeys(k for r in report.rows for k in r.matrix)
    return {k: f"matrix.{k}" if k in CSV_COLUMNS else k for k in keys}


def csv_rows(report: Report) -> Iterator[list[str]]:
    keys = list(matrix_columns(report))
    for row in report.rows:
        matrix = [row.matrix.get(k, "") for k in keys]
        for v in row.values:
            pct = v.percent
            yield [row.session, row.step, row.host, v.metric, v.op, _num(v.value), v.unit,
                   _num(v.baseline), _percent(pct), v.item,
                   "" if row.combined else str(row.repeat), str(row.selected_from),
                   v.source, row.baseline, _steady(row), f"{row.t0:.3f}", f"{row.t1:.3f}",
                   row.outcome or "", _num(v.low), _num(v.high), *matrix]


def write_csv(report: Report, out: IO[str]) -> None:
    """The fixed columns (``CSV_COLUMNS``), then one per sweep option (``matrix_columns``):
    ``pivot_table(index="bs", columns="host", values="value")`` needs no string parsing."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow([*CSV_COLUMNS, *matrix_columns(report).values()])
    w.writerows(csv_rows(report))


def _value(v: Value) -> dict[str, object]:
    d: dict[str, object] = {"metric": v.metric, "op": v.op, "value": v.value, "unit": v.unit}
    if v.item:
        d["item"] = v.item
    if v.source:
        d["source"] = v.source
    if v.baseline is not None:
        d["baseline_value"] = v.baseline
        d["percent_of_baseline"] = v.percent
    if v.low is not None and v.high is not None:
        d["range"] = [None if overflowed(x) else x for x in (v.low, v.high)]
    gone = [k for k, x in (("value", v.value), ("baseline_value", v.baseline),
                           ("percent_of_baseline", v.percent)) if overflowed(x)]
    if gone:  # JSON has no infinity: null, and which of them overflowed
        d["overflow"] = gone
        for k in gone:
            d[k] = None
    return d


def as_dict(report: Report) -> dict[str, object]:
    """The report as plain JSON-able data (the same rows and values as the CSV, nested)."""
    rows = []
    columns = matrix_columns(report)
    for r in report.rows:
        row: dict[str, object] = {
            "session": r.session, "step": r.step, "host": r.host, "label": r.label,
            "repeat": None if r.combined else r.repeat, "runs": r.selected_from,
            "selected_by": r.selected_by or None, "run_labels": list(r.runs),
            "window": [r.t0, r.t1], "ok": r.ok, "outcome": r.outcome,
            "reason": r.reason or None, "silent_seconds": r.silent_seconds or None,
            "baseline_outcome": r.baseline_outcome,
            "baseline": r.baseline or None, "values": [_value(v) for v in r.values]}
        if r.matrix:
            row["matrix"] = r.matrix
            # and each option as a field of its own, named as the CSV's column
            row.update({columns[k]: v for k, v in r.matrix.items() if columns[k] not in row})
        if r.role:
            row["role"] = r.role
        if r.spread:
            row["range_over_runs"] = {m: list(lh) for m, lh in r.spread.items()}
        if r.steadiness is not None:
            s = r.steadiness
            row["steady"] = {"steady": s.steady, "cv": s.cv, "trend": s.trend,
                             "points": s.points, "verdict": s.describe()}
        rows.append(row)
    return {
        "sessions": [{"name": n, "path": report.paths.get(n), "imported": report.imported.get(n),
                      "facts": report.facts.get(n, {})} for n in report.sessions],
        "baseline": report.baseline.describe() if report.baseline else None,
        "skip_seconds": report.skip,
        "unmatched_steps": report.unmatched_steps,
        "baseline_session": None if report.baseline_session is None else dict(zip(
            ("name", "path", "description"), report.baseline_session, strict=True)),
        "changes": {name: [{"where": c.where, "what": c.what, "before": c.before,
                            "after": c.after} for c in changes]
                    for name, changes in report.changes.items()},
        "steps_left_out": report.left_out,
        "warnings": report.warnings,
        "rows": rows,
    }


def write_json(report: Report, out: IO[str]) -> None:
    out.write(orjson.dumps(as_dict(report), option=orjson.OPT_INDENT_2
                           | orjson.OPT_NON_STR_KEYS).decode())
    out.write("\n")
