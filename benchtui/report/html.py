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

from benchtui.report.html_facts import facts_html
from benchtui.report.markdown import Table, intro, one_host, report_tables, row_name, title, total
from benchtui.report.model import Report, Row
from benchtui.report.plot.bars import Bar, Panel, bars_figure
from benchtui.report.plot.style import (
    PlotFigure,
    inline_figure,
    palette,
    plotting,
    shade,
)
from benchtui.report.plot.timeseries import METRICS, TITLES, time_figure
from benchtui.report.series import PlotGroup, RunSeries, SeriesSource, plot_groups
from benchtui.session.compare import FLEET

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
.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8d8d8; padding: 4px 8px; vertical-align: top; }
thead th { background: #f2f4f7; position: sticky; top: 0; text-align: center; }
table.values td { text-align: right; white-space: nowrap; }
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
.plots { flex: 1; display: grid; grid-template-columns: repeat(auto-fill, minmax(470px, 1fr));
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


def _table_html(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    # the step, a sweep's options and the host name the row; the values follow
    names = table.header.index("host") + 1 if "host" in table.header else 1
    body = []
    for cells in table.body:
        fleet = ' class="fleet"' if _FLEET_NAME.search(cells[names - 1]) else ""
        tds = "".join(f'<td class="name">{escape(c)}</td>' if i < names
                      else f"<td>{escape(c)}</td>" for i, c in enumerate(cells))
        body.append(f"<tr{fleet}>{tds}</tr>")
    return (f'<div class="wide"><table class="values"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _steadiness(row: Row) -> str:
    s = row.steadiness
    who = escape(row_name(row, 1))
    if s is None:
        return (f'<li class="unknown"><b>{who}</b>: no verdict (no per-second IOPS, or too '
                "few points)</li>")
    numbers = f"CV {s.cv:.0%}, trend {s.trend:+.0%} over {s.points} s"
    if s.steady:
        return f'<li class="yes"><b>{who}</b>: ✓ steady<br><small>{numbers}</small></li>'
    reason = escape(s.describe().split(": ", 1)[1])
    return (f'<li class="no"><b>{who}</b>: ✗ NOT steady: {reason}<br>'
            f"<small>{numbers}</small></li>")


def _bar_name(row: Row, sessions: int) -> str:
    """A bar's legend entry: the host (and session), and its run when each run is a bar (a
    selected run is the host's only bar: the tables say how it was chosen)."""
    name = f"{row.session} / {row.host}" if sessions > 1 else row.host
    return name + (f" (run {row.repeat})" if row.label != row.step
                   and row.selected_from <= 1 else "")


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
        report = self.report
        steps = report.steps()
        rows = [r for r in report.rows if r.host != FLEET]
        names: dict[str, str] = {}  # bar name -> colour
        panels = []
        for metric, label, kind in (("iops", "IOPS", "iops"),
                                    ("bandwidth_bytes", "bandwidth", "bandwidth")):
            bars: dict[tuple[str, str], Bar] = {}
            for r in rows:
                value, base = total(r, metric)
                if value is None:
                    continue
                name = _bar_name(r, len(report.sessions))
                later_run = r.repeat - 1 if r.label != r.step else 0
                names.setdefault(name, shade(self.colours[(r.session, r.host)], later_run))
                bars[(r.step, name)] = Bar(value, base, r.baseline == f"{r.step} / {r.host}")
            if bars:
                panels.append(Panel(label, kind, bars))
        if not panels:
            return ""
        fig = bars_figure(steps, list(names), panels, colours=names,
                          title="IOPS and bandwidth by step"
                          + (" (percentages of the baseline)" if report.baseline else ""))
        return f'<figure class="bars">{self.svg(fig)}</figure>'

    def series(self, group: PlotGroup) -> list[RunSeries]:
        path = self.report.paths.get(group.session)
        if path is None:
            return []
        source = self.sources.get(path)
        if source is None:
            source = self.sources[path] = SeriesSource(path)
        return source.series(group.rows)

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
        if all(r.steadiness is None for r in group.rows):
            steady = ('<li class="unknown">no verdict (no per-second IOPS, or too few '
                      "points)</li>")
        else:
            steady = "".join(_steadiness(r) for r in group.rows)
        out.append(f'<div class="run"><div class="steady"><b>Steadiness</b> (IOPS over the '
                   f"last half of the window)<ul>{steady}</ul></div>")
        series = [s for s in self.series(group) if not s.empty]
        colours = {h: c for (s, h), c in self.colours.items() if s == group.session}
        figures = [time_figure(series, m, title=f"{group.title}: {TITLES[m]}",
                               colours=colours) for m in METRICS] if series else []
        drawn = [f"<figure>{self.svg(f)}</figure>" for f in figures if f is not None]
        if not drawn:
            out.append('<p class="note">No per-second IOPS, bandwidth or latency in this '
                       "step.</p></div>")
            return out
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
        by_step = {t.step: t for t in tables if t.step is not None}
        with plotting():
            out.append('<section id="overview"><h2>'
                       + ("IOPS and bandwidth by step" if not one_host(report) else "All steps")
                       + "</h2>")
            out += [_table_html(t) for t in tables if t.step is None]
            out.append(self.bars())
            out.append("</section>")
            groups = plot_groups(report)
            for i, step in enumerate(steps):
                out.append(f'<section id="step-{i}"><h2>{escape(step)}</h2>')
                if step in by_step:
                    out.append(_table_html(by_step[step]))
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
