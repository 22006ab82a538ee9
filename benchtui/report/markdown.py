"""A report as the seeds write theirs: Markdown tables, every value followed by its
percentage of the baseline ("22.1k (113%)").

- An overview: with several hosts, one row per host and two columns (IOPS, bandwidth) per
  step, as seed 000's conclusion table; with one host, one row per step (a sweep's table).
- Then, with several hosts, one table per step: IOPS, bandwidth and latency (mean, p50,
  p99, p99.9) per op, the busiest device's utilisation and await, network and memory
  figures where the tools gave them, and the steadiness verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import IO

from benchtui.model.format import MISSING, format_duration, format_metric, markdown_cell
from benchtui.report.figures import resolution_sentence, sources_sentences
from benchtui.report.model import OVERFLOW, Report, Row, Value, overflowed, percent_of
from benchtui.session.changes import Change
from benchtui.session.compare import FLEET

_OP_SHORT = {"read": "r", "write": "w", "trim": "t", "total": "", "send": "send",
             "receive": "recv"}
_LATENCY = (("latency_mean_seconds", "mean"), ("latency_p50_seconds", "p50"),
            ("latency_p99_seconds", "p99"), ("latency_p999_seconds", "p99.9"))


def _pct(p: float | None) -> str:
    if overflowed(p):
        return f" ({OVERFLOW})"
    return "" if p is None else f" ({p:.0f}%)"


#: Figures of which less is better, by what a table's note calls them (``_lower_note``).
_LOWER_METRICS = {**{m: "latency" for m, _name in _LATENCY},
                  "disk_await_seconds": "await", "net_retransmits": "retransmits"}
#: The figures an I/O step is compared by; its devices' utilisation and await compare too.
_IO_METRICS = frozenset({"iops", "bandwidth_bytes"})


def _cell(metric: str, value: float | None, baseline: float | None, *,
          share: bool = True) -> str:
    """A value and (``share``) its percentage of the baseline's."""
    if value is None:
        return MISSING
    if overflowed(value):
        return OVERFLOW
    return format_metric(metric, value) + (_pct(percent_of(value, baseline)) if share else "")


def _value_cell(v: Value | None, *, share: bool = True) -> str:
    """A value, (``share``) its percentage of the baseline and, for a row of several runs,
    its range over them: ``1.50k (98%) [1.00k–2.00k]``."""
    if v is None:
        return MISSING
    return _cell(v.metric, v.value, v.baseline, share=share) + _range(v.metric, v.low, v.high)


def _range(metric: str, low: float | None, high: float | None) -> str:
    """`` [low–high]``: a figure's range over a row's runs ("" for a row of one run)."""
    if low is None or high is None:
        return ""
    return f" [{_cell(metric, low, None)}–{_cell(metric, high, None)}]"


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    out = ["| " + " | ".join(markdown_cell(h) for h in header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in rows)
    return out


def total(row: Row, metric: str) -> tuple[float | None, float | None]:
    """A row's figure over its ops (read + write, or the tool's total), with its baseline."""
    found = row.parts(metric)
    if not found:
        return None, None
    base = None if any(v.baseline is None for v in found) else sum(
        v.baseline or 0.0 for v in found)
    return sum(v.value for v in found), base


def row_name(row: Row, sessions: int) -> str:
    """What a table calls a row: the host (with its session when there are several, and
    its run of a repeated step)."""
    host = "fleet" if row.host == FLEET else row.host
    if row.role:
        host += f" ({row.role})"
    name = f"{row.session} / {host}" if sessions > 1 else host
    if row.selected_from > 1:
        name += f" ({row.selected_by} of {row.selected_from} runs)" if row.combined \
            else f" (best of {row.selected_from} runs: run {row.repeat})"
    elif row.label != row.step:
        name += f" (run {row.repeat})"
    return name + "".join(f" [{flag}]" for flag in row.flags())


def _ops(rows: list[Row], metric: str) -> list[str]:
    seen = {v.op for r in rows for v in r.values if v.metric == metric}
    return [op for op in ("read", "write", "trim", "total", "send", "receive", "")
            if op in seen]


def _busiest_device(row: Row) -> tuple[Value | None, list[Value]]:
    utils = [v for v in row.values if v.metric == "disk_util_ratio"]
    if not utils:
        return None, []
    top = max(utils, key=lambda v: v.value)
    awaits = [v for v in row.values if v.metric == "disk_await_seconds" and v.item == top.item
              and v.op in ("read", "write", "total")]
    return top, awaits


def _steady(row: Row) -> str:
    if row.steadiness is None:
        return MISSING
    return "yes" if row.steadiness.steady else "NO: " + row.steadiness.describe().split(
        ": ", 1)[1]


def _columns(rows: list[Row]) -> list[tuple[str, Callable[[Row], str]]]:
    """The columns a set of rows has values for, in the order a reader scans them."""
    cols: list[tuple[str, Callable[[Row], str]]] = []

    def by(metric: str, op: str, item: str = "") -> Callable[[Row], str]:
        return lambda r: _value_cell(r.get(metric, op, item))

    for metric, name in (("iops", "IOPS"), ("bandwidth_bytes", "BW")):
        for op in _ops(rows, metric):
            cols.append((f"{name} {_OP_SHORT.get(op, op)}".strip(), by(metric, op)))
    for op in _ops(rows, "latency_mean_seconds") or _ops(rows, "latency_p99_seconds"):
        for metric, name in _LATENCY:
            if any(r.get(metric, op) for r in rows):
                cols.append((f"{_OP_SHORT.get(op, op)} {name}".strip(), by(metric, op)))
    if any(_busiest_device(r)[0] for r in rows):
        # beside an I/O step's figures, its devices' compare; beside a network step's,
        # they are context, without a percentage ("disk util 3.20% (330%)" says nothing)
        io = any(v.metric in _IO_METRICS for r in rows for v in r.values)

        def util(r: Row) -> str:
            top, _ = _busiest_device(r)
            return MISSING if top is None else f"{_value_cell(top, share=io)} {top.item}"

        def await_(r: Row) -> str:
            _, awaits = _busiest_device(r)
            return " / ".join(f"{_OP_SHORT.get(v.op, v.op)} {_value_cell(v, share=io)}"
                              .strip() for v in awaits) or MISSING
        cols += [("disk util", util), ("disk await", await_)]
    for op in _ops(rows, "net_bandwidth_bytes"):
        cols.append((f"net {op}", by("net_bandwidth_bytes", op)))
    if any(r.get("net_retransmits") for r in rows):
        cols.append(("retransmits", by("net_retransmits", "")))
    for metric, name in (("mem_bandwidth_bytes", "mem"), ("benchmark_score", "score")):
        items = sorted({v.item for r in rows for v in r.values if v.metric == metric})
        for item in items:
            cols.append((f"{name} {item}", by(metric, "", item)))
    if any(r.steadiness is not None for r in rows):
        cols.append(("steady", _steady))
    return cols


@dataclass(frozen=True)
class Table:
    """One table of a report, as the cells' text: the Markdown and HTML formats lay out the
    same tables with the same words (``title`` empty: the report's only table)."""

    title: str
    #: The step the table is of (None: the overview of every step, or the one-host table).
    step: str | None
    header: list[str]
    body: list[list[str]]
    #: A step's sweep values (option -> value), said under its title.
    fields: dict[str, str] = field(default_factory=dict)
    #: Said under the table (``_lower_note``: which of its percentages are better lower).
    note: str = ""

    def fields_line(self) -> str:
        return "sweep: " + ", ".join(f"{k} = {v}" for k, v in self.fields.items()) \
            if self.fields else ""


#: What an overview shows of a step, from what its tool measured: (metric, column name).
_HEADLINES = ((("iops", "IOPS"), ("bandwidth_bytes", "BW")),
              (("net_bandwidth_bytes", "BW"), ("net_retransmits", "retr")),
              (("mem_bandwidth_bytes", "mem"),),
              (("benchmark_score", "score"),))


def headline(rows: Iterable[Row]) -> tuple[tuple[str, str], ...]:
    """The overview's columns of a step: IOPS and bandwidth for I/O tools, network for
    iperf3/iperf, memory for mbw, scores for UnixBench (the first its rows have)."""
    metrics = {v.metric for r in rows for v in r.values}
    for columns in _HEADLINES:
        if columns[0][0] in metrics:
            return tuple(c for c in columns if c[0] in metrics)
    return ()


def _spread(row: Row, metric: str) -> str:
    low, high = row.spread.get(metric, (None, None))
    return _range(metric, low, high)


def _overview_by_host(report: Report, steps: list[str]) -> Table:
    """One row per host (per run, under ``--select all``), the columns of each step its
    tool's (``headline``); a selected run's range over the step's runs beside it."""
    by_step: dict[str, list[Row]] = {}
    for r in report.rows:
        by_step.setdefault(r.step, []).append(r)
    columns = {s: headline(by_step.get(s, [])) for s in steps}
    header = ["host"] + [f"{s} {name}" for s in steps for _m, name in columns[s]]
    keys: dict[tuple[str, str, int], dict[str, Row]] = {}
    for r in report.rows:
        run = r.repeat if r.label != r.step and r.selected_from <= 1 else 0
        keys.setdefault((r.session, r.host, run), {})[r.step] = r
    body = []
    for (session, host, run), found_by_step in sorted(keys.items(),
                                                      key=lambda kv: kv[0][1] == FLEET):
        name = "fleet" if host == FLEET else host
        if len(report.sessions) > 1:
            name = f"{session} / {name}"
        cells = [name + (f" (run {run})" if run else "")]
        for s in steps:
            found = found_by_step.get(s)
            for metric, _name in columns[s]:
                value, base = total(found, metric) if found else (None, None)
                cell = _cell(metric, value, base)
                if found is not None and value is not None:
                    cell += _spread(found, metric)
                    who = found.role or ("fleet" if found.is_fleet else "")
                    if metric == "net_bandwidth_bytes" and who:
                        ops = "/".join(_OP_SHORT.get(v.op, v.op) for v in found.parts(metric))
                        cell += f" ({who} {ops})"
                if found is not None:
                    cell += "".join(f" [{f}]" for f in found.flags())
                cells.append(cell)
        body.append(cells)
    return Table("Overview by step", None, header, body)


def _per_client(rows: list[Row]) -> list[Row]:
    """``rows``, each iperf3 server's followed by a row per client it served (its figures
    for that client: ``alpha (server ← beta)``), from its values of that ``item``."""
    out = []
    for r in rows:
        out.append(r)
        items = dict.fromkeys(v.item for v in r.values
                              if v.metric == "net_bandwidth_bytes" and v.item)
        for item in items:
            out.append(replace(r, role=f"{r.role} ← {item}".strip(), steadiness=None,
                               values=[replace(v, item="") for v in r.values
                                       if v.metric == "net_bandwidth_bytes"
                                       and v.item == item]))
    return out


def _step_table(report: Report, rows: list[Row], *, with_step: bool) -> tuple[
        list[str], list[list[str]]]:
    rows = _per_client(rows)
    cols = _columns(rows)
    # a sweep's options as columns of their own, so that the table reads as a matrix
    keys = list(dict.fromkeys(k for r in rows for k in r.matrix)) if with_step else []
    header = (["step"] if with_step else []) + keys + ["host"] + [c[0] for c in cols]
    body = []
    for r in rows:
        body.append(([r.step] if with_step else []) + [r.matrix.get(k, "") for k in keys]
                    + [row_name(r, len(report.sessions))] + [f(r) for _, f in cols])
    return header, body


def _described(description: str) -> str:
    return f" ({description})" if description else ""


def intro(report: Report) -> list[str]:
    """The lines under the title: the sessions, the baseline, the window, the warnings
    (Markdown list items, with ``**`` and backquotes the only markup)."""
    lines = []
    for name in report.sessions:
        imported = report.imported.get(name)
        summary = report.figures == "summary" or (report.figures is None and imported)
        how = ("imported" if imported else "recorded") + (
            ": figures from the tools' end-of-run summaries" if summary else "")
        if name in report.histogram_bits:
            how += "; " + resolution_sentence(report.histogram_bits[name])
        lines.append(f"- session **{name}**: `{report.paths.get(name, '')}`"
                     f"{_described(report.descriptions.get(name, ''))}, {how}")
    if report.baseline_session is not None:
        bname, bpath, bdescription = report.baseline_session
        against = report.baseline.describe().partition(report.baseline.value)[2] \
            if report.baseline is not None else ""
        lines.append(f"- baseline: session **{bname}**: `{bpath}`{_described(bdescription)}"
                     f"{against}; every value is followed by its percentage of the "
                     "baseline's")
    elif report.baseline is not None:
        lines.append(f"- baseline: {report.baseline.describe()}; every value is followed by "
                     "its percentage of the baseline's")
    lines += _repeats(report)
    if report.left_out:
        lines.append(f"- steps left out (--steps/--exclude-step): {', '.join(report.left_out)}")
    if report.figures == "window" or (report.figures is None and any(
            not report.imported.get(n) for n in report.sessions)):
        lines.append(f"- window: each run from {format_duration(report.skip)} after its tool "
                     "started (ramp-up skipped) to its tool's last report; the disk, CPU and "
                     "network figures beside it over the same seconds")
    lines += [f"- {sentence}" for sentence in sources_sentences(report.rows)]
    if any(v.metric == "net_retransmits" for r in report.rows for v in r.values):
        lines.append("- network: each host's own end of the connection (a client's send, a "
                     "server's receive, as it measured them); retransmits are counted over "
                     "the same window as the other figures (an exporter's or iperf3's own "
                     "total covers the whole run)")
    if report.unmatched_steps:
        lines.append("- steps with no baseline: " + ", ".join(report.unmatched_steps))
    lines.extend(_not_clean(report))
    for w in report.warnings:
        lines.append(f"- warning: {w}")
    return lines


def _repeats(report: Report) -> list[str]:
    """What a row of a repeated step is (the median of its runs, or the best of them)."""
    ways = {r.selected_by for r in report.rows if r.selected_from > 1}
    out = []
    if "median" in ways:
        out.append("- repeated steps: each host's row is the **median of its runs**, each "
                   "figure on its own (of an even number of runs, the mean of the two middle "
                   "ones), over the runs that completed; the runs' range is beside every "
                   "value [min–max]; `--select all` shows every run")
    if "best" in ways:
        out.append("- repeated steps: each host's **best run** (by IOPS, else bandwidth) of "
                   "the runs that completed; the runs' range is beside every value "
                   "[min–max]; `--select all` shows every run")
    return out


def _not_clean(report: Report) -> list[str]:
    """The runs marked in the tables: those that did not complete, and those whose tool
    fell silent (the hosts' rows; a fleet row is marked as its hosts are)."""
    rows = [r for r in report.rows if r.host != FLEET]
    lines = []
    cut = [r for r in rows if not r.completed]
    if cut:
        lines.append("- **runs that did not complete** (marked in the tables; their figures "
                     "cover only the time they ran, and the gate leaves them out): " + "; ".join(
                         f"{r.label} on {r.host}: {r.outcome or 'no end recorded'}"
                         + (f" ({r.reason})" if r.reason else "") for r in cut))
    quiet = [r for r in rows if r.silent_seconds > 0]
    if quiet:
        lines.append("- **tools that fell silent** (marked in the tables; their figures leave "
                     "out the time they printed nothing): " + "; ".join(
                         f"{r.label} on {r.host}: nothing for "
                         f"{format_duration(r.silent_seconds)}" for r in quiet))
    return lines


def change_lines(report: Report) -> list[str]:
    """What changed against a session baseline, one Markdown list item each (empty without
    a session baseline); per session when several are reported."""
    lines: list[str] = []
    for name in report.sessions:
        changes = report.changes.get(name)
        if changes is None:
            continue
        prefix = f"{name}: " if len(report.sessions) > 1 else ""
        if not changes:
            lines.append(f"- {prefix}the plans and the hosts' facts are the same")
        for c in changes:
            lines.append(f"- {prefix}{change_text(c)}")
    return lines


def change_text(c: Change) -> str:
    """One change in words, its values in backquotes (they hold options and paths)."""
    return c.describe("`")


def title(report: Report) -> str:
    return f"benchtui report: {', '.join(report.sessions)}"


def one_host(report: Report) -> bool:
    """One host (or none): a single table with a step column, no overview."""
    return len({r.host for r in report.rows if r.host != FLEET}) <= 1


def report_tables(report: Report) -> list[Table]:
    """The report's tables: with one host, one table of every step; with several, the
    overview (IOPS and bandwidth by step, when there are several steps) and one table per
    step."""
    steps = report.steps()
    if one_host(report):
        rows = [r for r in report.rows if r.host != FLEET] or report.rows
        return [Table("", None, *_step_table(report, rows, with_step=True),
                      note=_lower_note(rows))]
    tables = []
    by_step: dict[str, list[Row]] = {}
    for r in report.rows:
        by_step.setdefault(r.step, []).append(r)
    if len(steps) > 1:
        overview = _overview_by_host(report, steps)
        if any(h.endswith(" retr") for h in overview.header):
            overview = replace(overview, note=_lower_note(report.rows, "retransmits"))
        tables.append(overview)
    for step in steps:
        rows = by_step[step]
        fields = next((r.matrix for r in rows if r.matrix), {})
        tables.append(Table(step, step, *_step_table(report, rows, with_step=False),
                            fields=dict(fields), note=_lower_note(rows)))
    return tables


def _lower_note(rows: list[Row], *only: str) -> str:
    """Which of the rows' percentages of the baseline are better lower ("latency: lower
    is better ..."), for the figures of which less is better that have a baseline (of the
    kinds ``only``, when given: the overview's retransmits)."""
    kinds = {_LOWER_METRICS[v.metric] for r in rows for v in r.values
             if v.metric in _LOWER_METRICS and v.baseline is not None}
    if not any(v.metric in _IO_METRICS for r in rows for v in r.values):
        kinds.discard("await")  # shown without its percentage (``_columns``)
    named = [k for k in ("latency", "await", "retransmits") if k in kinds
             and (not only or k in only)]
    if not named:
        return ""
    return (", ".join(named[:-1]) + " and " if len(named) > 1 else "") + named[-1] + \
        ": lower is better (under 100% of the baseline's is better)"


def render_markdown(report: Report) -> str:
    lines = [f"# {title(report)}", "", *intro(report), ""]
    changed = change_lines(report)
    if changed:
        lines += ["## What changed against the baseline", "", *changed, ""]
    for table in report_tables(report):
        if table.title:
            lines += [f"## {table.title}", ""]
        if table.fields:
            lines += [table.fields_line(), ""]
        lines += _table(table.header, table.body)
        lines.append("")
        if table.note:
            lines += [f"_{table.note}_", ""]
    return "\n".join(lines)


def write_markdown(report: Report, out: IO[str]) -> None:
    out.write(render_markdown(report))
