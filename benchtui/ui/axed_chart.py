"""A chart with axes, labels and a time window, for the focused host's detail view.

Built on the same block columns as the grid's sparklines (:mod:`benchtui.ui.charts`), so a
detail chart costs what a sparkline costs and looks like a bigger one: a y axis labelled with
the formatted top, middle and bottom values, an x axis with the age of the data ("-30s" ...
"now") and a legend with each series' current value. Why our own instead of a plotting library:
see docs/architecture.md (library table).

Layout for ``width`` x ``height`` cells::

     412k ┤      ▂▄█▇▆          <- plot rows: height - 3 (at least 1)
          │   ▁▃▅███████
        0 ┤▁▂▃█████████
          └────┬─────┬──────┬    <- axis, ticks every "nice" number of seconds
             -40s  -20s   now    <- tick labels
      ▇ read 12.3k  ▇ write 4.10k  <- legend: current values

Latency percentiles have a chart of their own, ``axed_band_rows``: p50, p99 and p99.9 as the
nested bands of the panes (:mod:`benchtui.ui.band_chart`), on the same log scale, with value
labels on every other row (each the same factor above the one under it: the log scale shows
in them) and a legend naming the three in their bands' colours::

    3.20 ms ┤     ▁       ▆       <- p99.9 (the tail)
            │▂ ▃ ▇█▅  ▂▄ ▇█
     800 µs ┤█▇██████▆▇████        <- p99
            │██████████████
     200 µs ┤██████████████        <- p50 at the bottom
            └────┬─────┬──────┬
               -40s  -20s   now
    █ p50 150 µs  █ p99 1.20 ms  █ p99.9 2.90 ms

A baseline's ghosts (``--baseline``) are drawn over either as dotted lines
(``charts.overlay_ghost``), on the same scale, and named in the legend after the lines
("⠒ base read 45.6k").

Public API::

    ChartLine(label, points)                      # one series and its legend name
    axed_rows(lines, *, end, width, height, formatter, seconds_per_column=1.0,
              include_zero=True, styles=DEFAULT_STYLES, ghosts=()) -> list[list[Segment]]
    axed_band_rows(lines, *, end, width, height, formatter, seconds_per_column=1.0,
                   styles=DEFAULT_BAND_STYLES, ghosts=()) -> list[list[Segment]]  # lowest first
    # ghosts: (ChartLine, Style) pairs
    log_labels(lo, hi, plot_height) -> dict[int, float]   # row -> value, log scale
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style

from benchtui.model.format import format_duration
from benchtui.ui.band_chart import (
    DEFAULT_BAND_STYLES,
    BandStyles,
    band_levels,
    band_rows,
    log_range,
)
from benchtui.ui.charts import (
    DEFAULT_STYLES,
    GHOST_MARKS,
    ChartStyles,
    Column,
    Points,
    chart_rows,
    columns,
    levels,
    overlay_ghost,
    value_range,
)

#: Tick spacings the x axis may use, in seconds.
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200,
                86400)
MIN_TICK_GAP = 8  # columns between ticks, at least
AXIS_STYLE = Style(dim=True)
#: A ghost's mark in a legend.
GHOST_MARK = GHOST_MARKS[4] + " "
#: A baseline's line: what it plots, and how.
Ghost = tuple["ChartLine", Style]


@dataclass(frozen=True, slots=True)
class ChartLine:
    """A series to draw and the name the legend gives it ("read", "p99")."""

    label: str
    points: Points | None


def tick_seconds(seconds_per_column: float, plot_width: int) -> float:
    """The smallest nice spacing that leaves at least MIN_TICK_GAP columns between ticks."""
    for nice in NICE_SECONDS:
        if nice / seconds_per_column >= MIN_TICK_GAP:
            return float(nice)
    return max(float(NICE_SECONDS[-1]), seconds_per_column * plot_width)


def _last_value(points: Points | None) -> float | None:
    return points.values[-1] if points is not None and points.values else None


def axed_rows(lines: Sequence[ChartLine], *, end: float, width: int, height: int,
              formatter: Callable[[float | None], str], seconds_per_column: float = 1.0,
              include_zero: bool = True, styles: ChartStyles = DEFAULT_STYLES,
              ghosts: Sequence[Ghost] = ()) -> list[list[Segment]]:
    """``height`` rows of segments, each ``width`` cells or fewer. The first line is drawn in
    the primary style, the second (if any) overlaid in the secondary style; further lines only
    appear in the legend (with their current value). ``ghosts`` are drawn over them as dotted
    lines, each in its style, and named in the legend after the lines."""
    if width <= 0 or height <= 0:
        return []
    plot_height = max(height - 3, 1)

    def linear(cols: list[list[Column]]) -> tuple[float, float, dict[int, float]]:
        lo, hi = value_range(*cols, include_zero=include_zero)
        values = {0: hi, plot_height - 1: lo}
        if plot_height >= 5:
            values[(plot_height - 1) // 2] = (lo + hi) / 2
        return lo, hi, values

    drawn = list(lines[:2])
    label_width, plot_width, cols, lo, hi, labels = _fit(
        [*drawn, *(g for g, _s in ghosts)], linear, end=end, width=width, formatter=formatter,
        seconds_per_column=seconds_per_column)
    primary = cols[0] if drawn else [None] * plot_width
    secondary = cols[1] if len(drawn) > 1 else None
    plot = chart_rows(primary, secondary, height=plot_height, lo=lo, hi=hi, styles=styles)
    for (_g, style), g_cols in zip(ghosts, cols[len(drawn):], strict=True):
        plot = overlay_ghost(plot, levels(g_cols, plot_height, lo, hi), style)
    marks = (styles.primary, styles.secondary)
    legend = _legend([(line, marks[i] if i < len(marks) else None, None)
                      for i, line in enumerate(lines)], formatter, width)
    if len(lines) > 1 and sum(len(seg.text) for seg in legend) + 7 <= width:
        legend += [Segment("█ ", styles.both), Segment("both")]
    legend = _ghost_legend(legend, ghosts, formatter, width)
    return _frame(plot, labels, label_width=label_width, plot_width=plot_width,
                  seconds_per_column=seconds_per_column, height=height, legend=legend)


def axed_band_rows(lines: Sequence[ChartLine], *, end: float, width: int, height: int,
                   formatter: Callable[[float | None], str], seconds_per_column: float = 1.0,
                   styles: BandStyles = DEFAULT_BAND_STYLES,
                   ghosts: Sequence[Ghost] = ()) -> list[list[Segment]]:
    """Percentiles, lowest first (p50, p99, p99.9), as nested bands on a log scale
    (``band_chart.band_rows``, the panes' latency chart): ``height`` rows of segments, each
    ``width`` cells or fewer, with value labels from ``log_labels``, the time axis and a
    legend naming each line in its band's colour with its current value. Lines past the
    third appear in the legend only; ``ghosts`` as in ``axed_rows``, on the same scale."""
    if width <= 0 or height <= 0:
        return []
    plot_height = max(height - 3, 1)

    def logarithmic(cols: list[list[Column]]) -> tuple[float, float, dict[int, float]]:
        lo, hi = log_range(*cols)
        if not any(v is not None and v > 0 for c in cols for v in c):  # no scale to label
            return lo, hi, {}
        return lo, hi, log_labels(lo, hi, plot_height)

    drawn = list(lines[:3])
    label_width, plot_width, cols, lo, hi, labels = _fit(
        [*drawn, *(g for g, _s in ghosts)], logarithmic, end=end, width=width,
        formatter=formatter, seconds_per_column=seconds_per_column)
    plot = band_rows(cols[:len(drawn)] or [[None] * plot_width], height=plot_height, lo=lo,
                     hi=hi, styles=styles)
    for (_g, style), g_cols in zip(ghosts, cols[len(drawn):], strict=True):
        plot = overlay_ghost(plot, band_levels([g_cols], plot_height, lo, hi)[0], style)
    marks = (styles.low, styles.mid, styles.high)
    legend = _legend([(line, marks[i], marks[i]) if i < len(marks) else (line, None, None)
                      for i, line in enumerate(lines)], formatter, width)
    legend = _ghost_legend(legend, ghosts, formatter, width)
    return _frame(plot, labels, label_width=label_width, plot_width=plot_width,
                  seconds_per_column=seconds_per_column, height=height, legend=legend)


def _ghost_legend(legend: list[Segment], ghosts: Sequence[Ghost],
                  formatter: Callable[[float | None], str], width: int) -> list[Segment]:
    """``legend`` and the ghosts' entries after it, as many as fit."""
    if not ghosts:
        return legend
    used = sum(len(seg.text) for seg in legend)
    if legend and not legend[-1].text.endswith("  "):
        legend = [*legend, Segment("  ")]
        used += 2
    rest = _legend([(line, style, None) for line, style in ghosts], formatter, width - used,
                   sign=GHOST_MARK)
    return [*legend, *rest]


def log_labels(lo: float, hi: float, plot_height: int) -> dict[int, float]:
    """The value labels of a log scale from ``lo`` (the bottom row's bottom edge) to ``hi``
    (the top row's top edge): row (0 = top) -> the value at that row's height, on the top
    row, the bottom row and about every other row between them, evenly spaced, so that each
    label is the same factor above the one under it when the rows are evenly spaced (every
    other row of an odd number of rows)."""
    if plot_height <= 1 or lo <= 0 or hi <= lo:
        return {0: hi}
    last = plot_height - 1
    n = max(2, (plot_height + 1) // 2)
    rows = sorted({round(i * last / (n - 1)) for i in range(n)})
    return {y: lo * (hi / lo) ** ((last - y) / last) for y in rows}


Scale = Callable[[list[list[Column]]], tuple[float, float, dict[int, float]]]


def _fit(lines: Sequence[ChartLine], scale: Scale, *, end: float, width: int,
         formatter: Callable[[float | None], str], seconds_per_column: float
         ) -> tuple[int, int, list[list[Column]], float, float, dict[int, str]]:
    """The labels' width, the plot's width, the lines' columns, (lo, hi) and the value
    labels by row: two passes at most, as the labels' width depends on the range and the
    range on the plot's width."""
    label_width = max(len(formatter(v)) for v in (0.0, 1.0))
    # the columns once, as wide as the plot can be; a narrower plot's are their right part
    widest = max(width - 1, 1)
    every = [columns(line.points, end=end, width=widest, seconds_per_column=seconds_per_column)
             for line in lines]
    for _ in range(2):
        plot_width = max(width - label_width - 1, 1)
        cols = [c[widest - plot_width:] for c in every]
        lo, hi, values = scale(cols)
        labels = {y: formatter(v) for y, v in values.items()}
        needed = max((len(t) for t in labels.values()), default=label_width)
        if needed == label_width:
            break
        label_width = needed
    return label_width, plot_width, cols, lo, hi, labels


def _frame(plot: list[list[Segment]], labels: dict[int, str], *, label_width: int,
           plot_width: int, seconds_per_column: float, height: int, legend: list[Segment]
           ) -> list[list[Segment]]:
    """The plot's rows with the y axis and its labels on their left, then the x axis, its
    tick labels and the legend, as far as ``height`` goes."""
    rows: list[list[Segment]] = []
    for y, plot_row in enumerate(plot):
        label = labels.get(y)
        axis = f"{label:>{label_width}}┤" if label is not None else " " * label_width + "│"
        rows.append([Segment(axis, AXIS_STYLE), *plot_row])
    plot_height = len(plot)
    axis_line, tick_line = _x_axis(plot_width, seconds_per_column)
    if height >= plot_height + 1:
        rows.append([Segment(" " * label_width + "└" + axis_line, AXIS_STYLE)])
    if height >= plot_height + 2:
        rows.append([Segment(" " * (label_width + 1) + tick_line, AXIS_STYLE)])
    if height >= plot_height + 3:
        rows.append(legend)
    return rows[:height]


def _x_axis(plot_width: int, seconds_per_column: float) -> tuple[str, str]:
    """The axis line with tick marks, and the tick labels under it (ages, "now" at right)."""
    spacing = tick_seconds(seconds_per_column, plot_width)
    axis = ["─"] * plot_width
    labels = [" "] * plot_width
    n = 0
    free_until = plot_width  # labels are placed right to left without overlap
    while True:
        age = n * spacing
        col = plot_width - 1 - round(age / seconds_per_column)
        if col < 0:
            break
        axis[col] = "┬"
        text = "now" if n == 0 else "-" + _age_label(age)
        start = min(col - len(text) // 2, plot_width - len(text))
        if start >= 0 and start + len(text) <= free_until:
            labels[start:start + len(text)] = list(text)
            free_until = start - 1
        n += 1
    return "".join(axis), "".join(labels).rstrip()


def _age_label(age: float) -> str:
    """A tick's age, short: "30s", "5m", "2h", "1m30s"."""
    whole = round(age)
    if whole % 3600 == 0:
        return f"{whole // 3600}h"
    if whole % 60 == 0 and whole < 3600:
        return f"{whole // 60}m"
    return format_duration(age)


def _legend(entries: Sequence[tuple[ChartLine, Style | None, Style | None]],
            formatter: Callable[[float | None], str], width: int, *,
            sign: str = "█ ") -> list[Segment]:
    """Each line's mark (in its style; none without), label (in the label style given, else
    plain) and current value, as many as fit in ``width``."""
    segments: list[Segment] = []
    used = 0
    for line, mark_style, label_style in entries:
        value = formatter(_last_value(line.points))
        mark = Segment(sign, mark_style) if mark_style is not None else Segment("")
        if label_style is None:
            text = [Segment(f"{line.label} {value}  ")]
        else:
            text = [Segment(f"{line.label} ", label_style), Segment(f"{value}  ")]
        size = len(mark.text) + sum(len(seg.text) for seg in text)
        if used + size - 2 > width:  # the last one fits without the gap after it
            continue
        if used + size > width:
            text[-1] = Segment(text[-1].text[:-2], text[-1].style)
            size -= 2
        segments += [mark, *text]
        used += size
    return segments
