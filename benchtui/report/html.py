"""``benchtui report --format html``: the report as one self-contained HTML page.

The page holds the Markdown format's tables (``markdown.report_tables``: the same rows,
values and percentages, in the same words), a chart of grouped bars across the steps (IOPS
and bandwidth per host, the baseline marked), and for every step the plots of its runs:
per-second IOPS, bandwidth and latency percentiles of every host (``series.py``), with each
host's steadiness verdict beside them; then every host's facts.

Self-contained: the CSS is inline, the plots are inline SVG (text kept as text, so a
browser's find and copy work on host names), there is no script, font or image to fetch.
Imported sessions have no per-second series (their timing is made up): their steps get
tables only.
"""

from __future__ import annotations

import re
from html import escape

from benchtui.errors import RecordingError
from benchtui.report.html_facts import facts_html
from benchtui.report.html_steady import steadiness_items
from benchtui.report.markdown import (
    Table,
    change_lines,
    headline,
    intro,
    one_host,
    report_tables,
    title,
    total,
)
from benchtui.report.model import Report, Row
from benchtui.report.plot.bars import Bar, Panel, bars_figure
from benchtui.report.plot.distribution import TITLES as SPREAD_TITLES
from benchtui.report.plot.distribution import boxes_figure, distribution_figure
from benchtui.report.plot.style import (
    PLOT_WIDTH,
    PlotFigure,
    inline_figure,
    palette,
    plotting,
    shade,
)
from benchtui.report.plot.timeseries import METRICS, TITLES, fleet_figure, time_figure
from benchtui.report.series import (
    PlotGroup,
    Points,
    RunSeries,
    plot_groups,
)
from benchtui.report.series_source import SeriesSource
from benchtui.report.spread import MANY_HOSTS
from benchtui.session.compare import FLEET

#: Per-second points a run needs to be plotted (fewer are dots, not a line: said instead).
MIN_POINTS = 3

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Noto Sans CJK SC",
       sans-serif; margin: 0 auto; max-width: 1600px; padding: 0 24px 48px; color: #1d1d1f;
       background: #fff; font-size: 14px; line-height: 1.45; }
h1 { font-size: 24px; margin: 24px 0 8px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-top: 8px; border-top: 1px solid #ddd; }
h3 { font-size: 15px; margin: 22px 0 8px; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12.5px; }
nav { margin: 8px 0 16px; }
nav a { margin-right: 14px; white-space: nowrap; }
.wide { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums;
        max-width: 100%; }
th, td { border: 1px solid #d8d8d8; padding: 4px 6px; vertical-align: top; }
thead th { background: #f2f4f7; position: sticky; top: 0; text-align: center;
           overflow-wrap: normal; hyphens: manual; font-size: 13px; }
thead tr + tr th { position: static; }
table.values td { text-align: right; }
table.values td .pct, table.values td .range { white-space: nowrap; }
table.values td .range { color: #666; font-size: 12px; }
table.values td.mark { text-align: center; cursor: help; }
table.values td.mark.no { color: #c62828; font-weight: 600; }
table.facts th { white-space: nowrap; }
table.facts td { overflow-wrap: anywhere; }
.bars { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 620px), 1fr));
        gap: 12px; }
.bars figure.wide { grid-column: 1 / -1; }
ul.changes code { background: #f4f4f4; padding: 0 3px; border-radius: 3px;
                  overflow-wrap: anywhere; }
p.fields { margin: 0 0 6px; color: #333; }
table.values td.name { text-align: left; font-weight: 600; }
table.values tr.fleet td { background: #f7f7fb; font-style: italic; }
tbody tr:nth-child(even) td { background: #fafafa; }
table.facts th { text-align: left; }
table.facts ul { margin: 0; padding-left: 16px; }
.run { display: flex; gap: 18px; align-items: flex-start; margin-bottom: 12px; }
.steady { flex: 0 0 230px; font-size: 13px; }
.steady ul { list-style: none; padding: 0; margin: 0; }
.steady li { margin: 0 0 8px; padding: 6px 8px; border-radius: 4px; }
.steady .yes { background: #e8f5e9; border-left: 4px solid #2e7d32; }
.steady .no { background: #ffebee; border-left: 4px solid #c62828; }
.steady .unknown { background: #f2f2f2; border-left: 4px solid #999; }
.plots { flex: 1; display: grid;
         grid-template-columns: repeat(auto-fill, minmax(min(100%, 620px), 1fr));
         gap: 12px; min-width: 0; }
figure { margin: 0; }
figure svg { max-width: 100%; height: auto; display: block; }
.note { color: #555; }
"""

_INLINE_CODE = re.compile(r"`([^`]*)`")
_BOLD = re.compile(r"\*\*([^*]*)\*\*")
#: A table row of a step's fleet ("fleet", "night / fleet", "fleet (run 2)"): markdown.row_name.
_FLEET_NAME = re.compile(r"(^|/ )fleet( \(|$)")


def _inline_markdown(text: str) -> str:
    """A line of ``markdown.intro``: escaped, with its bold and code marks as HTML."""
    text = escape(text, quote=False)
    text = _INLINE_CODE.sub(r"<code>\1</code>", text)
    return _BOLD.sub(r"<strong>\1</strong>", text)


#: A value cell's parts: the value, its percentage of the baseline, the range over runs.
_VALUE_PARTS = re.compile(r"^(?P<value>.*?)(?P<pct> \(\d+%\))?(?P<range> \[[^\]]*\])?"
                          r"(?P<rest> \(.*\))?$")


def _value_td(text: str) -> str:
    """A value cell: the value, then its percentage and range kept whole (the cell may wrap
    between them, so that a wide table fits the page)."""
    m = _VALUE_PARTS.match(text)
    if m is None or not (m.group("pct") or m.group("range")):
        return f"<td>{escape(text)}</td>"
    out = escape(m.group("value"))
    if m.group("pct"):
        out += f' <span class="pct">{escape(m.group("pct").strip())}</span>'
    if m.group("range"):
        out += f' <span class="range">{escape(m.group("range").strip())}</span>'
    if m.group("rest"):
        out += " " + escape(m.group("rest").strip())
    return f"<td>{out}</td>"


def _steady_td(text: str) -> str:
    """The steadiness column as a mark (✓, ✗), its reason on hover: the sentence is in the
    steadiness box beside the plots."""
    if text.startswith("NO"):
        return f'<td class="mark no" title="{escape(text)}">✗ no</td>'
    if text == "yes":
        return '<td class="mark" title="steady">✓</td>'
    return f'<td class="mark">{escape(text)}</td>'


def _grouped_head(header: list[str], names: int) -> str | None:
    """The overview's header on two rows: each step's name over its figures' columns
    ("rand bs=4k rw=randread" over "IOPS" and "BW"), so that a column is as narrow as its
    values and a step's name breaks between its words; None for a table whose value
    columns are not "<step> <figure>"."""
    values = header[names:]
    if not values or any(" " not in h for h in values):
        return None
    groups: list[tuple[str, int]] = []
    for h in values:
        group = h.rsplit(" ", 1)[0]
        if groups and groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    top = "".join(f'<th rowspan="2">{escape(h)}</th>' for h in header[:names]) + "".join(
        f'<th colspan="{n}">{escape(g)}</th>' if n > 1 else f"<th>{escape(g)}</th>"
        for g, n in groups)
    under = "".join(f"<th>{escape(h.rsplit(' ', 1)[1])}</th>" for h in values)
    return f"<tr>{top}</tr><tr>{under}</tr>"


def _table_html(table: Table) -> str:
    # the step, a sweep's options and the host name the row; the values follow
    names = table.header.index("host") + 1 if "host" in table.header else 1
    grouped = _grouped_head(table.header, names) if table.step is None \
        and table.header[0] == "host" else None
    head = grouped or "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in table.header) \
        + "</tr>"
    steady = table.header.index("steady") if "steady" in table.header else -1
    body = []
    for cells in table.body:
        fleet = ' class="fleet"' if _FLEET_NAME.search(cells[names - 1]) else ""
        tds = "".join(f'<td class="name">{escape(c)}</td>' if i < names
                      else _steady_td(c) if i == steady else _value_td(c)
                      for i, c in enumerate(cells))
        body.append(f"<tr{fleet}>{tds}</tr>")
    return (f'<div class="wide"><table class="values"><thead>{head}</thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _note(table: Table) -> list[str]:
    """What is said under a table (which percentages are better lower)."""
    return [f'<p class="note table-note">{escape(table.note)}</p>'] if table.note else []


def _bar_name(row: Row, sessions: int) -> str:
    """A bar's legend entry: the host (and session), and its run when each run is a bar (a
    selected run is the host's only bar: the tables say how it was chosen)."""
    name = f"{row.session} / {row.host}" if sessions > 1 else row.host
    return name + (f" (run {row.repeat})" if row.label != row.step
                   and row.selected_from <= 1 else "")


_BAR_KINDS = {"iops": "iops", "bandwidth_bytes": "bandwidth", "net_bandwidth_bytes": "net",
              "mem_bandwidth_bytes": "bandwidth", "benchmark_score": "iops"}
_BAR_LABELS = {"iops": "IOPS", "bandwidth_bytes": "bandwidth",
               "net_bandwidth_bytes": "network", "mem_bandwidth_bytes": "memory",
               "benchmark_score": "score"}


#: Steps whose largest values are within this factor of each other share a bar chart.
_SAME_SCALE = 10.0


def _scale(rows: list[Row]) -> dict[str, float]:
    """A step's largest total of each of its headline figures (what its bars reach)."""
    out: dict[str, float] = {}
    for metric, _name in headline(rows):
        values = [v for r in rows for v in (total(r, metric)[0],) if v is not None]
        if values and metric != "net_retransmits":
            out[metric] = max(values)
    return out


def _sweep_of(rows: list[Row]) -> str | None:
    """The sweep a step belongs to (its name without its options' values), None for a step
    that is not a sweep's."""
    matrix = next((r.matrix for r in rows if r.matrix), None)
    if not matrix:
        return None
    values = {f"{k}={v}" for k, v in matrix.items()}
    return " ".join(w for w in rows[0].step.split() if w not in values)


def _step_groups(steps: list[str], by_step: dict[str, list[Row]]) -> list[list[str]]:
    """The steps of each bar chart, in order: a sweep's steps together; consecutive other
    steps together while their figures are the same and their scales within
    ``_SAME_SCALE`` of each other (a 0.4 s layout step at 1 GiB/s gets a chart of its own,
    so that the 4k steps' bars beside it are not slivers)."""
    groups: list[list[str]] = []
    keys: list[str | None] = []
    ranges: list[dict[str, tuple[float, float]]] = []
    for step in steps:
        rows = by_step.get(step, [])
        sweep, scale = _sweep_of(rows), _scale(rows)
        if groups and sweep is not None and keys[-1] == sweep:
            groups[-1].append(step)
            continue
        if groups and sweep is None and keys[-1] is None and set(scale) == set(ranges[-1]) \
                and all(max(hi, scale[m]) <= _SAME_SCALE * min(lo, scale[m])
                        for m, (lo, hi) in ranges[-1].items()):
            groups[-1].append(step)
            ranges[-1] = {m: (min(lo, scale[m]), max(hi, scale[m]))
                          for m, (lo, hi) in ranges[-1].items()}
            continue
        groups.append([step])
        keys.append(sweep)
        ranges.append({m: (v, v) for m, v in scale.items()})
    return groups


class _Page:
    """The page's parts, with the plotting state (colours, figure ids, open sessions)."""

    def __init__(self, report: Report) -> None:
        self.report = report
        hosts: dict[tuple[str, str], None] = {}
        for r in report.rows:
            if r.host != FLEET:
                hosts.setdefault((r.session, r.host))
        #: a colour per host of each session, the same in the bars and the time plots
        self.colours = palette(list(hosts))
        self.figures = 0
        self.sources: dict[str, SeriesSource] = {}

    def close(self) -> None:
        for source in self.sources.values():
            source.close()

    def svg(self, fig: PlotFigure) -> str:
        self.figures += 1
        return inline_figure(fig, f"f{self.figures}-")

    def bars(self) -> str:
        """Grouped bars, one chart per group of steps (a sweep's steps together, every other
        step alone) so that each is scaled to its own values: a short layout step's or a
        64k step's bandwidth leaves the 4k bars readable. A chart's panels are the
        figures its steps' tool measured (IOPS and bandwidth, network, memory, scores)."""
        report = self.report
        rows = [r for r in report.rows if r.host != FLEET]
        by_step: dict[str, list[Row]] = {}
        for r in rows:
            by_step.setdefault(r.step, []).append(r)
        charts = [self._bars(steps, [r for s in steps for r in by_step[s]])
                  for steps in _step_groups(report.steps(), by_step)]
        drawn = [c for c in charts if c]
        return f'<div class="bars">{"".join(drawn)}</div>' if drawn else ""

    def _bars(self, steps: list[str], rows: list[Row]) -> str:
        report = self.report
        names: dict[str, str] = {}  # bar name -> colour
        panels = []
        for metric, label in headline(rows):
            if metric == "net_retransmits":
                continue
            kind = _BAR_KINDS.get(metric, "iops")
            bars: dict[tuple[str, str], Bar] = {}
            for r in rows:
                value, base = total(r, metric)
                if value is None:
                    continue
                name = _bar_name(r, len(report.sessions))
                later_run = r.repeat - 1 if r.label != r.step and r.selected_from <= 1 else 0
                names.setdefault(name, shade(self.colours[(r.session, r.host)], later_run))
                bars[(r.step, name)] = Bar(value, base, r.baseline == f"{r.step} / {r.host}")
            if bars:
                panels.append(Panel(_BAR_LABELS.get(metric, label), kind, bars))
        if not panels:
            return ""
        what = " and ".join(p.label for p in panels)
        if len(names) > MANY_HOSTS:  # a box per step (docs/report-html.md, "Many hosts")
            fig = boxes_figure(steps, panels, title=f"{what} by step, across the hosts")
            return f'<figure class="bar">{self.svg(fig)}</figure>'
        fig = bars_figure(steps, list(names), panels, colours=names,
                          title=f"{what} by step"
                          + (" (percentages of the baseline)" if report.baseline else ""))
        wide = " wide" if fig.get_figwidth() > PLOT_WIDTH else ""  # a row of its own
        return f'<figure class="bar{wide}">{self.svg(fig)}</figure>'

    def series(self, group: PlotGroup) -> list[RunSeries]:
        path = self.report.paths.get(group.session)
        if path is None:
            return []
        source = self.sources.get(path)
        if source is None:
            source = self.sources[path] = SeriesSource(path)
        return source.series(group.rows)

    def baseline_series(self, group: PlotGroup) -> tuple[list[RunSeries], str]:
        """The baseline session's runs of a group's rows (a session baseline only), and
        what the legend calls them."""
        base = self.report.baseline_session
        if base is None or self.report.imported.get(group.session):
            return [], ""
        name, path, _description = base
        rows = list({id(r.baseline_row): r.baseline_row for r in group.rows
                     if r.baseline_row is not None}.values())
        if not rows:
            return [], ""
        source = self.sources.get(path)
        if source is None:
            try:
                source = self.sources[path] = SeriesSource(path)
            except RecordingError:
                return [], ""
        if source.reader.meta.imported:
            return [], ""
        found = [s for s in source.series(rows) if not s.empty]
        return found, f"baseline: {name}"

    def fleet(self, group: PlotGroup, series: list[RunSeries]) -> dict[str, dict[str, Points]]:
        path = self.report.paths.get(group.session)
        source = self.sources.get(path) if path is not None else None
        if source is None:
            return {}
        return source.fleet([s.row for s in series])

    def run_plots(self, group: PlotGroup) -> list[str]:
        out = []
        if len(self.report.sessions) > 1:
            out.append(f"<h3>{escape(group.session)}: {escape(group.title)}</h3>")
        elif group.title != group.step:  # a run of a repeated step, or the selected runs
            out.append(f"<h3>{escape(group.title)}</h3>")
        if self.report.imported.get(group.session):
            out.append('<p class="note">Imported session: no per-second series to plot and '
                       "no steadiness verdict (its timing is made up).</p>")
            return out
        steady = steadiness_items(group.rows)
        out.append(f'<div class="run"><div class="steady"><b>Steadiness</b> (IOPS over the '
                   f"last half of the window)<ul>{steady}</ul></div>")
        found = self.series(group)
        series = [s for s in found if s.longest >= MIN_POINTS]
        # a run with a point or two (a layout step, a run cut short) is said, not dotted
        short = [s for s in found if 0 < s.longest < MIN_POINTS
                 or (s.empty and s.seconds < MIN_POINTS)]
        notes = []
        if short:
            notes.append('<p class="note short">Too short to plot: ' + ", ".join(
                f"{escape(s.host)} ({s.longest} per-second point{'s' if s.longest != 1 else ''}"
                f" in {s.seconds:.1f} s)" for s in short)
                + f"; a plot needs {MIN_POINTS} points.</p>")
        colours = {h: c for (s, h), c in self.colours.items() if s == group.session}
        baseline, baseline_name = self.baseline_series(group)
        if len({s.host for s in series}) > MANY_HOSTS:  # docs/report-html.md, "Many hosts"
            figures = [distribution_figure(series, m, title=f"{group.title}: "
                                           f"{SPREAD_TITLES[m]}", baseline=baseline,
                                           baseline_name=baseline_name) for m in METRICS]
        else:
            figures = [time_figure(series, m, title=f"{group.title}: {TITLES[m]}",
                                   colours=colours, baseline=baseline,
                                   baseline_name=baseline_name)
                       for m in METRICS] if series else []
        if len(series) > 1:  # the fleet's percentiles (merged histograms) in one plot
            figures.append(fleet_figure(self.fleet(group, series),
                                        title=f"{group.title}: the fleet's latency "
                                        "percentiles per second"))
        drawn = [f"<figure>{self.svg(f)}</figure>" for f in figures if f is not None]
        if not drawn:
            if not notes:
                notes.append('<p class="note">No per-second figure in this step.</p>')
            out.append("".join(notes) + "</div>")
            return out
        out += notes
        out.append(f'<div class="plots">{"".join(drawn)}</div></div>')
        return out

    def body(self) -> list[str]:
        report = self.report
        steps = report.steps()
        tables = report_tables(report)
        out = [f"<h1>{escape(title(report))}</h1>",
               "<ul>" + "".join(f"<li>{_inline_markdown(line[2:])}</li>"
                                for line in intro(report)) + "</ul>"]
        links = [('<a href="#overview">overview</a>')] + [
            f'<a href="#step-{i}">{escape(s)}</a>' for i, s in enumerate(steps)] + [
            '<a href="#hosts">hosts</a>']
        out.append("<nav>" + " ".join(links) + "</nav>")
        changed = change_lines(report)
        if changed:
            out.append('<section id="changes"><h2>What changed against the baseline</h2>'
                       '<ul class="changes">' + "".join(
                           f"<li>{_inline_markdown(line[2:])}</li>" for line in changed)
                       + "</ul></section>")
        by_step = {t.step: t for t in tables if t.step is not None}
        with plotting():
            out.append('<section id="overview"><h2>'
                       + ("Overview by step" if not one_host(report) else "All steps")
                       + "</h2>")
            for t in tables:
                if t.step is None:
                    out += [_table_html(t), *_note(t)]
            out.append(self.bars())
            out.append("</section>")
            groups = plot_groups(report)
            for i, step in enumerate(steps):
                out.append(f'<section id="step-{i}"><h2>{escape(step)}</h2>')
                if step in by_step:
                    if by_step[step].fields:
                        out.append(f'<p class="fields">{escape(by_step[step].fields_line())}'
                                   "</p>")
                    out.append(_table_html(by_step[step]))
                    out += _note(by_step[step])
                for group in groups:
                    if group.step == step:
                        out += self.run_plots(group)
                out.append("</section>")
        out.append('<section id="hosts"><h2>Hosts</h2>')
        out += facts_html(report)
        out.append("</section>")
        return out


def render_html(report: Report) -> str:
    """The whole page (module doc)."""
    page = _Page(report)
    try:
        body = page.body()
    finally:
        page.close()
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title(report))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
