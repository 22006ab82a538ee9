"""Textual wrappers for the charts: line-API widgets that cache their rows.

``SparkChart`` is the host grid's small chart, ``AxedChart`` the detail view's. Both are fed by
their parent (a pane polls the FleetState and calls ``set_data``); neither polls anything nor
re-plots on a timer. ``set_data`` compares a cheap signature of what would be drawn (series
lengths and newest times, how far a silent series has drifted left, the size) and calls
``refresh()`` only when it changed, so 48 charts at 1 Hz cost 48 small redraws a second and idle
charts cost nothing. Theme colours are read once per style update, not per draw.
Rows are computed lazily on the first ``render_line`` after a change and served from the cache
for the other lines.

Colours come from the theme through component classes (themes/*.tcss may override them)::

    SparkChart > .chart--primary   { color: $primary; }   /* read, p99, the first series */
    SparkChart > .chart--secondary { color: $warning; }   /* write, p50, the second series */

The overlap of two series is drawn in a blend of both colours.

Instrumentation: ``ChartPaintObserver.hook`` (None by default), when set, is called as
``hook(widget, newest_t)`` each time a chart with data computes new rows for the compositor,
with the newest sample time it drew; benchmarks/ui_render.py uses it to measure the
sample-to-screen latency.

Public API::

    SparkChart(*, include_zero=True, id=None, classes=None)
        .set_data(primary, secondary=None, *, end, seconds_per_column=1.0) -> None
    AxedChart(formatter=format_count, *, include_zero=True, id=None, classes=None)
        .set_data(lines: Sequence[ChartLine], *, end, seconds_per_column=1.0,
                  ghosts: Sequence[ChartLine] = ()) -> None

A baseline's ghost lines (``ghosts``) take the colours of ``chart--ghost-primary`` (the
first) and ``chart--ghost-secondary`` (the second); a latency chart's, ``chart--ghost-lat``
(``latency_chart``); a theme without these rules gets plain faint colours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.color import Color, blend_rgb
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from benchtui.model.format import format_count
from benchtui.ui.axed_chart import ChartLine, axed_rows
from benchtui.ui.charts import ChartStyles, Points, chart_rows, columns, value_range
from benchtui.ui.reused_lines import ReusedLines

Signature = tuple[object, ...]


class ChartPaintObserver:
    """A process-wide hook for benchmarks: who drew which data, when (see module docstring)."""

    hook: ClassVar[Callable[[Widget, float], None] | None] = None


def _newest(points: Points | None) -> float | None:
    return points.times[-1] if points is not None and points.times else None


def _points_signature(points: Points | None) -> tuple[object, ...]:
    if points is None:
        return (None,)
    return (id(points), len(points.times), _newest(points))


class _CachedChart(ReusedLines):
    """Shared machinery: theme styles, the rows cache, the paint hook."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"chart--primary", "chart--secondary"}

    def __init__(self, *, include_zero: bool = True, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.include_zero = include_zero
        self._end = 0.0
        self._seconds_per_column = 1.0
        self._signature: Signature | None = None
        self._rows: list[Strip] | None = None
        self._rows_key: Signature | None = None
        self._newest_t: float | None = None
        self._chart_styles: tuple[ChartStyles, Style] | None = None

    def notify_style_update(self) -> None:
        """The theme or the CSS changed: colours are read again on the next draw."""
        super().notify_style_update()
        self._chart_styles = None
        self._rows = None

    def _styles(self) -> tuple[ChartStyles, Style]:
        """(the series' styles, the widget's base style), read once per theme."""
        if self._chart_styles is None:
            primary = self.get_component_rich_style("chart--primary", partial=True)
            secondary = self.get_component_rich_style("chart--secondary", partial=True)
            both = Style(color=_blend(primary.color, secondary.color))
            self._chart_styles = (ChartStyles(Style(color=primary.color),
                                              Style(color=secondary.color), both),
                                  self.rich_style)
        return self._chart_styles

    def _changed(self, signature: Signature) -> None:
        if signature != self._signature:
            self._signature = signature
            self._rows = None
            self.refresh()

    def _compute(self, width: int, height: int,
                 styles: ChartStyles) -> list[list[Segment]]:  # pragma: no cover
        raise NotImplementedError

    def render_line(self, y: int) -> Strip:
        width, height = self.size.width, self.size.height
        key = (self._signature, width, height)
        if self._rows is None or self._rows_key != key:
            styles, base = self._styles()
            self._rows = [_strip(row, width, base)
                          for row in self._compute(width, height, styles)]
            self._rows_key = key
            hook = ChartPaintObserver.hook
            if hook is not None and self._newest_t is not None:
                hook(self, self._newest_t)
        if 0 <= y < len(self._rows):
            return self._rows[y]
        return Strip.blank(width, self._styles()[1])


def _strip(row: list[Segment], width: int, base: Style) -> Strip:
    """A row on the widget's background, exactly ``width`` cells."""
    segments = [Segment(seg.text, base + seg.style if seg.style else base) for seg in row]
    used = sum(len(seg.text) for seg in row)
    if used < width:
        segments.append(Segment(" " * (width - used), base))
        return Strip(segments, width)
    strip = Strip(segments, used)
    return strip.crop(0, width) if used > width else strip


def _shift(points: Points | None, end: float, seconds_per_column: float) -> int:
    """Columns between the series' newest sample and the right edge (0 while it reports)."""
    newest = _newest(points)
    if newest is None:
        return 0
    return max(math.floor((end - newest) / seconds_per_column), 0)


class SparkChart(_CachedChart):
    """A small chart of one or two series (read/write overlaid), one column per interval."""

    DEFAULT_CSS = """
    SparkChart { height: 3; width: 1fr; }
    SparkChart > .chart--primary { color: $primary; }
    SparkChart > .chart--secondary { color: $warning; }
    """

    def __init__(self, *, include_zero: bool = True, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(include_zero=include_zero, id=id, classes=classes)
        self._primary: Points | None = None
        self._secondary: Points | None = None

    def set_data(self, primary: Points | None, secondary: Points | None = None, *,
                 end: float, seconds_per_column: float = 1.0) -> None:
        """What to draw: the series, and the data time of the chart's right edge."""
        self._primary, self._secondary = primary, secondary
        self._end, self._seconds_per_column = end, seconds_per_column
        newest = [t for t in (_newest(primary), _newest(secondary)) if t is not None]
        self._newest_t = max(newest) if newest else None
        # Redraw on new data, or when a silent series must drift left; not on every tick.
        self._changed((_points_signature(primary), _points_signature(secondary),
                       _shift(primary, end, seconds_per_column),
                       _shift(secondary, end, seconds_per_column), seconds_per_column))

    def _compute(self, width: int, height: int, styles: ChartStyles) -> list[list[Segment]]:
        spc = self._seconds_per_column
        first = columns(self._primary, end=self._end, width=width, seconds_per_column=spc)
        second = (columns(self._secondary, end=self._end, width=width, seconds_per_column=spc)
                  if self._secondary is not None else None)
        lo, hi = value_range(first, second or [], include_zero=self.include_zero)
        return chart_rows(first, second, height=height, lo=lo, hi=hi, styles=styles)


class AxedChart(_CachedChart):
    """The detail view's chart: axes, value labels, time ticks and a legend."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*_CachedChart.COMPONENT_CLASSES,
                                             "chart--ghost-primary", "chart--ghost-secondary",
                                             "chart--ghost-lat"}
    #: The ghosts' component classes, in the order of ``set_data``'s ghosts.
    GHOST_CLASSES: ClassVar[tuple[str, ...]] = ("chart--ghost-primary",
                                                "chart--ghost-secondary")
    #: Their colours when the theme has no rule for them.
    GHOST_FALLBACK: ClassVar[tuple[str, ...]] = ("grey58", "light_salmon3")

    DEFAULT_CSS = """
    AxedChart { height: 12; width: 1fr; }
    AxedChart > .chart--primary { color: $primary; }
    AxedChart > .chart--secondary { color: $warning; }
    """

    def __init__(self, formatter: Callable[[float | None], str] = format_count, *,
                 include_zero: bool = True, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(include_zero=include_zero, id=id, classes=classes)
        self.formatter = formatter
        self._lines: tuple[ChartLine, ...] = ()
        self._ghosts: tuple[ChartLine, ...] = ()
        self._ghost_styles: tuple[Style, ...] | None = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._ghost_styles = None

    def set_data(self, lines: Sequence[ChartLine], *, end: float,
                 seconds_per_column: float = 1.0, ghosts: Sequence[ChartLine] = ()) -> None:
        """What to draw: up to two plotted lines (more appear in the legend only), and a
        baseline's lines as ghosts over them."""
        self._lines = tuple(lines)
        self._ghosts = tuple(ghosts)
        self._end, self._seconds_per_column = end, seconds_per_column
        every = (*self._lines, *self._ghosts)
        newest = [t for t in (_newest(line.points) for line in self._lines) if t is not None]
        self._newest_t = max(newest) if newest else None
        self._changed((*(_points_signature(line.points) for line in every),
                       *(_shift(line.points, end, seconds_per_column) for line in every),
                       *(line.label for line in every), seconds_per_column))

    def ghost_styles(self) -> tuple[Style, ...]:
        """The ghosts' colours (see the module docstring), read once per theme."""
        if self._ghost_styles is None:
            found = []
            for name, fallback in zip(self.GHOST_CLASSES, self.GHOST_FALLBACK, strict=True):
                rule = self.get_component_rich_style(name, partial=True, default=Style())
                found.append(Style(color=rule.color if rule.color is not None else fallback))
            self._ghost_styles = tuple(found)
        return self._ghost_styles

    def _ghost_pairs(self) -> list[tuple[ChartLine, Style]]:
        styles = self.ghost_styles()
        return [(g, styles[min(i, len(styles) - 1)]) for i, g in enumerate(self._ghosts)]

    def _compute(self, width: int, height: int, styles: ChartStyles) -> list[list[Segment]]:
        return axed_rows(self._lines, end=self._end, width=width, height=height,
                         formatter=self.formatter, seconds_per_column=self._seconds_per_column,
                         include_zero=self.include_zero, styles=styles,
                         ghosts=self._ghost_pairs())


def _blend(first: Color | None, second: Color | None) -> Color | None:
    """Half-way between two colours (the overlap of two series); None if either is unset."""
    if first is None or second is None:
        return first or second
    return Color.from_triplet(blend_rgb(first.get_truecolor(), second.get_truecolor(), 0.5))
