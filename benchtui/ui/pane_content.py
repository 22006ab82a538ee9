"""What a host pane draws, as rows of rich Segments: pure functions of a host's figures and
the store, testable with a plain rich Console (``lines_text``).

Segments, not rich Text: a pane hands its lines to Textual as strips (line API), so a redraw
costs building a few segments per row and no text layout; with 32 panes at 1 Hz that is most
of the console's cost.

The rows and what they chart are ``pane_rows``'s (and, beside a tall chart's lower lines,
each job's figures: ``pane_jobs``); the charts with their scales are ``pane_charts``'s. This
module lays them out: charts beside the numbers, or under them in narrow panes; the lines the
rows leave shared by the charts, so that they fill the pane; idle devices left out first
when short of lines, then device await folded into the device's row, then the last rows. A
pane with no figures shows the host's latest events. A compact pane is one row: the figures
that matter most and an IOPS sparkline (``COMPACT_HEADER`` names its columns).

With a baseline (``ghost``: ``benchtui.ui.ghost.Ghost``), the IOPS, bandwidth and latency
charts carry the baseline's line (``pane_charts``; latency: its p99), on a scale that holds
both, and the numbers' column is a little wider for the shares of the baseline's
when the chart beside it keeps its minimum width. A compact row then gives its read and
write IOPS and its p99 as shares of the baseline's too (``COMPACT_HEADER_VERSUS``), its
sparkline without a ghost (one line of blocks has no room for a second line).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from benchtui.model.format import (
    format_byte_rate,
    format_count,
    format_latency,
    format_ratio,
)
from benchtui.store.fleet import FleetState
from benchtui.ui import figures as fig
from benchtui.ui.charts import rows_text
from benchtui.ui.pane_charts import (
    SCALE_WIDTH,
    ChartCaches,
    ChartSpan,
    chart_cells,
    scaled_chart,
    seconds_per_column,
)
from benchtui.ui.pane_jobs import job_lines
from benchtui.ui.pane_rows import Cells, ChartSpec, PaneStyles, Row, host_rows, share_cells

if TYPE_CHECKING:
    from benchtui.ui.ghost import Ghost

__all__ = ["COMPACT_HEADER", "COMPACT_HEADER_VERSUS", "Cells", "ChartCaches", "ChartSpan",
           "ChartSpec", "PaneStyles", "Row", "chart_cells", "compact_line", "host_rows",
           "lines_text", "pane_lines", "scaled_chart", "subtitle_of", "title_of"]

LABEL_WIDTH = 8
#: The same in every pane, so that same-size panes' charts cover the same time.
NUMBERS_WIDTH = 26
#: With a baseline: the numbers and their shares of the baseline's ("r 44.2k 97%").
NUMBERS_WIDTH_VERSUS = 28
#: Charts narrower than this are left out (the numbers say more).
MIN_CHART = 6
#: A chart beside the numbers narrower than this goes under them instead (narrow panes).
MIN_SIDE_CHART = 12
STACK_INDENT = 2
STATE_MARK = {"connecting": "◌", "up": "○", "running": "●", "reconnecting": "◍",
              "failed": "✖", "done": "✔"}
#: Column titles above compact rows, aligned with ``compact_line``.
_COMPACT_NUMBERS = ("  host".ljust(18) + "r IOPS".rjust(7) + "w IOPS".rjust(7)
                    + "r BW".rjust(11) + "w BW".rjust(11) + "p99".rjust(9) + "util".rjust(7))
COMPACT_HEADER = _COMPACT_NUMBERS + "  IOPS r/w"
#: With a baseline, a compact row also gives its read and write IOPS and its p99 as shares of
#: the baseline's (coloured as a pane's), before the sparkline.
SHARE_WIDTH = 6
COMPACT_HEADER_VERSUS = (_COMPACT_NUMBERS + "r vs".rjust(SHARE_WIDTH) + "w vs".rjust(SHARE_WIDTH)
                         + "p99 vs".rjust(SHARE_WIDTH + 1) + "  IOPS r/w")


def cell_len(cells: Cells) -> int:
    return sum(len(s.text) for s in cells)


def fit(cells: Cells, width: int, style: Style | None = None) -> Cells:
    """``cells`` cut or padded with spaces to exactly ``width`` cells (the pane's text is
    all single-width characters)."""
    out: Cells = []
    used = 0
    for seg in cells:
        if used + len(seg.text) > width:
            if width > used:
                out.append(Segment(seg.text[:width - used], seg.style))
            return out
        out.append(seg)
        used += len(seg.text)
    if used < width:
        out.append(Segment(" " * (width - used), style))
    return out


def lines_text(lines: list[Cells]) -> Text:
    """Lines of segments as one rich Text (tests, a plain Console)."""
    return rows_text(lines)


def pane_lines(state: FleetState, f: fig.HostFigures, *, width: int, height: int, end: float,
               window: float, styles: PaneStyles, caches: ChartCaches | None = None,
               ghost: Ghost | None = None, drawn: ChartSpan | None = None) -> list[Cells]:
    """The content of a full pane: at most ``height`` lines of exactly ``width`` cells.
    ``drawn``, when given, is set to the charts' width and seconds per column."""
    rows = host_rows(f, styles)
    if not rows:
        waiting = {"connecting": "connecting…", "up": "connected, waiting for a step",
                   "failed": f"failed: {f.reason}" if f.reason else "failed",
                   "running": "running, waiting for its first figures",
                   "done": "done"}.get(f.state, "no data yet")
        first = fit([Segment(waiting, styles.warn if f.state == "failed" else styles.muted)],
                    width)
        return [first, *_recent_events(state, f.name, width=width, lines=height - 1,
                                       styles=styles)]
    height = max(height, 1)
    numbers_width = min(NUMBERS_WIDTH, max(width - LABEL_WIDTH, 0))
    if ghost is not None \
            and width - LABEL_WIDTH - NUMBERS_WIDTH_VERSUS - 1 - SCALE_WIDTH >= MIN_SIDE_CHART:
        numbers_width = NUMBERS_WIDTH_VERSUS
    chart_width = width - LABEL_WIDTH - numbers_width - 1 - SCALE_WIDTH
    stacked = chart_width < MIN_SIDE_CHART \
        and width - STACK_INDENT - SCALE_WIDTH >= MIN_CHART
    rows = _fitting(rows, height, stacked)
    if stacked:
        return _stacked(state, f, rows, width=width, height=height, end=end, window=window,
                        styles=styles, caches=caches, ghost=ghost, drawn=drawn)
    charting = chart_width >= MIN_CHART
    spc = seconds_per_column(window, chart_width)
    if drawn is not None and charting:
        drawn.columns, drawn.seconds_per_column = chart_width, spc
    heights = _chart_heights(rows, height - len(rows), charting, first=1)
    blank = Segment(" " * (LABEL_WIDTH + numbers_width + 1))
    lines: list[Cells] = []
    for row, rows_high in zip(rows, heights, strict=True):
        line = [Segment(row.label[:LABEL_WIDTH - 1].ljust(LABEL_WIDTH), styles.label),
                *fit(_numbers(row, numbers_width), numbers_width)]
        if row.chart is None or not charting:
            lines.append(fit(line, width))
            continue
        chart = scaled_chart(state, f.name, row.chart, width=chart_width, height=rows_high,
                             end=end, window=window, styles=styles, caches=caches,
                             ghost=ghost)
        lines.append([*line, Segment(" "), *chart[0]])
        legend = 1 if row.legend is not None else 0
        jobs = job_lines(state, f.name, row.chart, now=end, styles=styles,
                         most=rows_high - 1 - legend) if rows_high > 1 + legend else []
        for i, extra in enumerate(chart[1:]):
            beside = row.legend if i == 0 and row.legend is not None else (
                jobs[i - legend] if 0 <= i - legend < len(jobs) else None)
            if beside is not None:
                lines.append([Segment(" " * LABEL_WIDTH), *fit(beside, numbers_width),
                              Segment(" "), *extra])
            else:
                lines.append([blank, *extra])
    return lines


def _recent_events(state: FleetState, host: str, *, width: int, lines: int,
                   styles: PaneStyles) -> list[Cells]:
    """A pane with no figures (connecting, failed, waiting): the host's latest events in
    the room the figures would have, oldest first."""
    if lines < 2:
        return []
    found = []
    for event in reversed(state.events):
        if event.host == host:
            found.append(event)
            if len(found) == lines - 1:
                break
    if not found:
        return []
    out = [fit([Segment("latest events (l: the session log)", styles.muted)], width)]
    for event in reversed(found):
        stamp = time.strftime("%H:%M:%S", time.localtime(event.t))
        message = event.message.removeprefix(f"{host}: ")
        out.append(fit([Segment(stamp + " ", styles.muted),
                        Segment(message, styles.warn if event.level != "info" else
                                styles.label)], width))
    return out


def _fitting(rows: list[Row], height: int, stacked: bool) -> list[Row]:
    """The rows that fit ``height`` lines: optional rows (idle devices) go first, then the
    rows that fold into the one before (device await), then the last rows."""
    def needed(rs: list[Row]) -> int:
        return len(rs) + (sum(r.chart is not None for r in rs) if stacked else 0)

    if needed(rows) > height:
        rows = [r for r in rows if not r.optional]
    if needed(rows) > height:
        rows = _folded(rows)
    return rows[:height]


def _numbers(row: Row, width: int) -> Cells:
    """The row's numbers, or their shorter form when they do not fit ``width``."""
    if row.short is not None and cell_len(row.numbers) > width:
        return row.short
    return row.numbers


def _folded(rows: list[Row]) -> list[Row]:
    """``rows`` without the rows that fold into the one before (device await)."""
    out: list[Row] = []
    for row in rows:
        if row.fold is not None and out:
            out[-1] = Row(out[-1].label, [*out[-1].numbers, *row.fold], out[-1].chart,
                          out[-1].legend)
        else:
            out.append(row)
    return out


def _stacked(state: FleetState, f: fig.HostFigures, rows: list[Row], *, width: int,
             height: int, end: float, window: float, styles: PaneStyles,
             caches: ChartCaches | None = None, ghost: Ghost | None = None,
             drawn: ChartSpan | None = None) -> list[Cells]:
    """A narrow pane: each row's chart under its numbers, as wide as the pane allows; the
    spare lines go to the first rows' charts."""
    chart_width = width - STACK_INDENT - SCALE_WIDTH
    if drawn is not None:
        drawn.columns, drawn.seconds_per_column = (
            chart_width, seconds_per_column(window, chart_width))
    heights = _chart_heights(rows, height - len(rows), True, first=0)
    indent = Segment(" " * STACK_INDENT)
    lines: list[Cells] = []
    for row, rows_high in zip(rows, heights, strict=True):
        lines.append(fit([Segment(row.label[:LABEL_WIDTH - 1].ljust(LABEL_WIDTH),
                                  styles.label), *_numbers(row, width - LABEL_WIDTH)], width))
        if row.chart is not None and rows_high:
            chart = scaled_chart(state, f.name, row.chart, width=chart_width,
                                 height=rows_high, end=end, window=window, styles=styles,
                                 caches=caches, ghost=ghost)
            lines.extend([indent, *extra] for extra in chart)
    return lines[:height]


def _chart_heights(rows: list[Row], spare: int, charting: bool, *, first: int) -> list[int]:
    """``first`` chart lines per charted row, then the ``spare`` lines to the charted rows
    in turn (the first rows first), so that the charts fill the pane."""
    heights = [first if r.chart is not None else 0 for r in rows]
    charted = [i for i, r in enumerate(rows) if r.chart is not None] if charting else []
    if spare > 0 and charted:
        each, rest = divmod(spare, len(charted))
        for k, i in enumerate(charted):
            heights[i] += each + (k < rest)
    return [max(h, 1) if first else h for h in heights]


def state_style(f: fig.HostFigures, styles: PaneStyles) -> Style:
    if f.state == "failed" or f.stale:
        return styles.warn
    if f.state in ("running", "done"):
        return styles.read
    return styles.muted


def compact_line(state: FleetState, f: fig.HostFigures, *, width: int, end: float,
                 window: float, styles: PaneStyles, caches: ChartCaches | None = None,
                 versus: bool = False) -> Cells:
    """One row for a host when many share the screen, exactly ``width`` cells; ``versus``
    (a baseline is on): with the shares of ``COMPACT_HEADER_VERSUS`` (blank where the host
    has none)."""
    read_op = "total" if "total" in f.iops and "read" not in f.iops else "read"
    lat_op = read_op if read_op in f.latency else "write"
    lat = f.latency.get(lat_op)
    util = max((d.util for d in f.devices if d.util is not None), default=None)
    line = [
        Segment(f"{STATE_MARK.get(f.state, '?')} ", state_style(f, styles)),
        Segment(f.name[:15].ljust(16), styles.label),
        Segment(format_count(f.iops.get(read_op)).rjust(7), styles.read),
        Segment(format_count(f.iops.get("write")).rjust(7), styles.write),
        Segment(format_byte_rate(f.bandwidth.get(read_op)).rjust(11), styles.read),
        Segment(format_byte_rate(f.bandwidth.get("write")).rjust(11), styles.write),
        Segment(format_latency(lat.p99 if lat else None).rjust(9), styles.label),
        Segment(format_ratio(util).rjust(7), styles.label)]
    if versus:
        vs = f.versus
        for figures, op, lower, cells in (
                (vs.iops if vs else {}, read_op, False, SHARE_WIDTH),
                (vs.iops if vs else {}, "write", False, SHARE_WIDTH),
                (vs.latency if vs else {}, lat_op, True, SHARE_WIDTH + 1)):
            share = share_cells(vs, figures, op, styles, lower_is_better=lower)
            line += [Segment(" " * max(cells - cell_len(share), 0)), *share]
    rest = width - cell_len(line) - 1
    if f.state == "failed" or f.stale:
        line.append(Segment(" " + (f.reason or ("no data" if f.stale else "failed")),
                            styles.warn))
    elif rest >= MIN_CHART:
        spec = ChartSpec("iops", {"op": read_op}, {"op": "write"})
        chart = chart_cells(state, f.name, spec, width=rest, height=1, end=end,
                            seconds_per_column=seconds_per_column(window, rest),
                            styles=styles, caches=caches)
        line += [Segment(" "), *chart[0]]
    return fit(line, width)


def title_of(f: fig.HostFigures) -> str:
    return f"{STATE_MARK.get(f.state, '?')} {f.name} · {f.state}"


def subtitle_of(f: fig.HostFigures) -> str:
    parts = []
    if f.state in ("failed", "reconnecting") and f.reason:
        parts.append(f.reason)
    elif f.stale:
        parts.append("no data for a while")
    elif f.final or f.net_final:
        parts.append("end-of-run figures")
    if f.warnings:
        parts.append(f"{f.warnings} warning{'s' if f.warnings != 1 else ''}")
    return " · ".join(parts)
