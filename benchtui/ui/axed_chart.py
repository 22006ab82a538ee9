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

Public API::

    ChartLine(label, points)                      # one series and its legend name
    axed_rows(lines, *, end, width, height, formatter, seconds_per_column=1.0,
              include_zero=True, styles=DEFAULT_STYLES) -> list[list[Segment]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style

from benchtui.ui.charts import (
    DEFAULT_STYLES,
    ChartStyles,
    Points,
    chart_rows,
    columns,
    value_range,
)
from benchtui.ui.format import format_duration

#: Tick spacings the x axis may use, in seconds.
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200,
                86400)
MIN_TICK_GAP = 8  # columns between ticks, at least
AXIS_STYLE = Style(dim=True)


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
              include_zero: bool = True,
              styles: ChartStyles = DEFAULT_STYLES) -> list[list[Segment]]:
    """``height`` rows of segments, each ``width`` cells or fewer. The first line is drawn in
    the primary style, the second (if any) overlaid in the secondary style; further lines only
    appear in the legend (with their current value)."""
    if width <= 0 or height <= 0:
        return []
    plot_height = max(height - 3, 1)
    guess = [formatter(v) for v in (0.0, 1.0)]
    label_width = max(len(t) for t in guess)
    # two passes: the labels' width depends on the range, the range on the plot's width
    for _ in range(2):
        plot_width = max(width - label_width - 1, 1)
        cols = [columns(line.points, end=end, width=plot_width,
                        seconds_per_column=seconds_per_column) for line in lines[:2]]
        lo, hi = value_range(*cols, include_zero=include_zero)
        labels = {0: formatter(hi), plot_height - 1: formatter(lo)}
        if plot_height >= 5:
            labels[(plot_height - 1) // 2] = formatter((lo + hi) / 2)
        needed = max(len(t) for t in labels.values())
        if needed == label_width:
            break
        label_width = needed
    primary = cols[0] if cols else [None] * plot_width
    secondary = cols[1] if len(cols) > 1 else None
    plot = chart_rows(primary, secondary, height=plot_height, lo=lo, hi=hi, styles=styles)

    rows: list[list[Segment]] = []
    for y, plot_row in enumerate(plot):
        label = labels.get(y)
        axis = f"{label:>{label_width}}┤" if label is not None else " " * label_width + "│"
        rows.append([Segment(axis, AXIS_STYLE), *plot_row])
    axis_line, tick_line = _x_axis(plot_width, seconds_per_column)
    if height >= plot_height + 1:
        rows.append([Segment(" " * label_width + "└" + axis_line, AXIS_STYLE)])
    if height >= plot_height + 2:
        rows.append([Segment(" " * (label_width + 1) + tick_line, AXIS_STYLE)])
    if height >= plot_height + 3:
        rows.append(_legend(lines, formatter, styles, width))
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


def _legend(lines: Sequence[ChartLine], formatter: Callable[[float | None], str],
            styles: ChartStyles, width: int) -> list[Segment]:
    marks = (styles.primary, styles.secondary)
    segments: list[Segment] = []
    used = 0
    for i, line in enumerate(lines):
        value = formatter(_last_value(line.points))
        mark = Segment("█ ", marks[i]) if i < len(marks) else Segment("")
        text = f"{line.label} {value}  "
        if used + len(mark.text) + len(text) > width:
            continue
        segments += [mark, Segment(text)]
        used += len(mark.text) + len(text)
    if len(lines) > 1 and used + 7 <= width:
        segments += [Segment("█ ", styles.both), Segment("both")]
    return segments
