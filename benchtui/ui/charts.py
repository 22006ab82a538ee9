"""Cheap terminal charts: pure functions from series points to rows of block characters.

Why this and not a plotting library: a small widget that appends one column per sample used
~6% of a core for 48 charts at 1 Hz, re-plotting libraries ~40% (DESIGN.md, measured on
Textual 8.2). The work here is a few arithmetic operations per column; nothing is re-plotted
unless the data changed. The Textual wrappers (:mod:`benchtui.ui.chart_widgets`) cache the rows
and hand them to the compositor as strips.

Model. A chart is ``width`` columns; each column covers ``seconds_per_column`` of data time, so
the chart shows ``width * seconds_per_column`` seconds (the time window) ending at ``end`` (the
fleet's newest time, so that every host's chart lines up). With 1 Hz samples and one second per
column, each new sample adds one column at the right. A window shorter than the chart is
wide (fewer seconds than columns) spreads each second over several columns (``stretch``):
the columns are made at one second each, then widened, so the chart covers exactly the
window. A column holds the mean of the samples in it; a column with no sample stays blank,
so a host that stopped reporting shows a gap growing at
the right. Samples are placed on a grid anchored on the series' own newest sample, which absorbs
the few milliseconds of jitter of a 1 Hz tool clock.

Scaling is min/max over the visible columns of all series drawn together (``include_zero`` keeps
the bottom at 0, the honest default for rates). Any value above the bottom gets at least one
eighth of a row, so a small but non-zero load is never invisible.

Two series overlaid (read/write): each column is drawn up to the larger of the two; the part
under the smaller one in the ``both`` style, the rest in the style of the larger one. Reading a
column: the top of the ``both`` part is the smaller value, the colour above it says which series
is larger. A cell holding both tops keeps the larger one's outline (error below one row).

A baseline's "ghost" (``--baseline``) is drawn over a chart as a dotted line (braille
dots, four heights a cell) at each column's baseline value: in the blank above a bar in the
ghost's own faint colour; through a bar as the ghost's colour on the bar's (the dots cut
the bar there); hidden in the top cell of a bar that ends below it in the same cell, where
a dot would hide the bar's top.

Public API::

    Points                              # protocol: .times, .values (store Series fits)
    ChartStyles(primary, secondary, both)   # rich Styles
    columns(points, *, end, width, seconds_per_column=1.0) -> list[float | None]
    stretch(cols, width) -> list[float | None]   # ``cols`` spread over ``width`` columns
    value_range(*cols, include_zero=True) -> tuple[float, float]
    chart_rows(primary, secondary=None, *, height, lo, hi, styles) -> list[list[Segment]]
    levels(cols, height, lo, hi) -> list[int]   # eighths of the chart per column
    overlay_ghost(rows, levels, style) -> rows   # a baseline's line over a drawn chart
    rows_text(rows) -> rich Text        # rows of segments as one multi-line Text
    spark_text(points, secondary=None, *, end, width, height=1, ...) -> rich Text
    (axes and legends: benchtui.ui.axed_chart; Textual widgets: benchtui.ui.chart_widgets)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import groupby
from operator import add, itemgetter
from typing import Protocol

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

#: Lower eighth blocks, index = eighths filled (0 = blank).
BLOCKS = " ▁▂▃▄▅▆▇█"

Column = float | None


class Points(Protocol):
    """Times (epoch seconds, ascending) and values of one series; a store ``Series`` fits."""

    @property
    def times(self) -> Sequence[float]: ...

    @property
    def values(self) -> Sequence[float]: ...


@dataclass(frozen=True, slots=True)
class ChartStyles:
    """How the primary (read), secondary (write) series and their overlap are drawn."""

    primary: Style = field(default_factory=lambda: Style(color="dodger_blue1"))
    secondary: Style = field(default_factory=lambda: Style(color="dark_orange"))
    both: Style = field(default_factory=lambda: Style(color="medium_purple1"))


DEFAULT_STYLES = ChartStyles()


def columns(points: Points | None, *, end: float, width: int,
            seconds_per_column: float = 1.0) -> list[Column]:
    """The series as ``width`` column values (mean per column, None where no sample), the
    rightmost column ending at ``end``. Cost: the visible points only (walks from the newest).
    Under one second per column, the columns of one second each, spread (``stretch``)."""
    out: list[Column] = [None] * max(width, 0)
    if points is None or width <= 0 or not points.times or seconds_per_column <= 0:
        return out
    if seconds_per_column < 1.0:
        seconds = stretched_width(width, seconds_per_column)
        return stretch(columns(points, end=end, width=seconds), width)
    step = seconds_per_column
    times, values = points.times, points.values
    newest = times[-1]
    # the newest sample sits in column width-1-shift; older ones k columns further left
    shift = max(math.floor((end - newest) / step), 0)
    # Grid edges half a step around the samples' sub-second phase: jitter of a 1 Hz clock never
    # moves a sample to the next column, and wide columns keep fixed edges as time goes on.
    phase = newest % min(step, 1.0)
    newest_index = math.floor((newest - phase) / step + 0.5)
    sums = [0.0] * width
    counts = [0] * width
    # column = first - k for the sample k columns left of the newest one's
    first = width - 1 - shift - newest_index
    floor, isfinite = math.floor, math.isfinite
    for t, value in zip(reversed(times), reversed(values), strict=True):  # newest first
        col = first + floor((t - phase) / step + 0.5)
        if col < 0:
            break
        if col >= width:
            continue
        if isfinite(value):
            sums[col] += value
            counts[col] += 1
    for col in range(width):
        if counts[col]:
            out[col] = sums[col] / counts[col]
    return out


def stretched_width(width: int, seconds_per_column: float) -> int:
    """How many one-second columns a chart of ``width`` columns of ``seconds_per_column``
    (under one) covers: the window in whole seconds."""
    return max(min(round(width * seconds_per_column), width), 1)


def stretch(cols: Sequence[Column], width: int) -> list[Column]:
    """``cols`` spread over ``width`` columns (at least as many): each gets ``width /
    len(cols)`` of them, give or take one, the newest at the right edge."""
    n = len(cols)
    if n == 0 or width <= n:
        return list(cols[-width:]) if width > 0 else []
    return [cols[i * n // width] for i in range(width)]


def value_range(*cols: Sequence[Column], include_zero: bool = True) -> tuple[float, float]:
    """(lo, hi) over every given column; a flat or empty chart gets a range of 1."""
    present = [v for c in cols for v in c if v is not None]
    if not present:
        return 0.0, 1.0
    lo, hi = min(present), max(present)
    if include_zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi <= lo:
        hi = lo + (abs(lo) if lo else 1.0)
    return lo, hi


def levels(cols: Sequence[Column], height: int, lo: float, hi: float) -> list[int]:
    """Eighths of the chart filled per column (0..8*height), on the linear scale
    ``lo``..``hi``: where ``chart_rows`` draws each column's top, and a ghost its line."""
    top = 8 * height
    span = hi - lo
    if span == math.inf and math.isfinite(lo) and math.isfinite(hi):
        # a range wider than the largest float (-1e308..1e308): the same levels at half scale
        lo, hi, span = lo / 2, hi / 2, hi / 2 - lo / 2
        cols = [None if v is None else v / 2 for v in cols]
    if not span > 0 or not math.isfinite(span):
        return [0] * len(cols)
    # ``or 1``: a value above lo fills at least an eighth; above hi (when given a range that
    # is not the columns'), the levels are cut at the top
    filled = [0 if v is None or v <= lo else round((v - lo) / span * top) or 1 for v in cols]
    if filled and max(filled) > top:
        filled = [min(x, top) for x in filled]
    return filled


def _cell(pa: int, pb: int) -> tuple[str, int]:
    """The character and style code of a cell whose two series fill ``pa`` and ``pb``
    eighths of it (0..8): codes index ``by_code`` in ``chart_rows``."""
    if pa == 0 and pb == 0:
        return " ", 0
    if pa == 8 and pb == 8:
        return "█", 1
    low, high = (pa, pb) if pa < pb else (pb, pa)
    larger = 1 if pa == pb else (2 if pa > pb else 3)
    if low == high:
        return BLOCKS[high], 1
    if low == 0:
        return BLOCKS[high], larger
    if high == 8:
        return BLOCKS[low], 4 if pa > pb else 5
    return BLOCKS[high], larger  # both tops in one cell: keep the larger one's outline


#: ``_cell`` for every pair, at ``pa * 9 + pb``: a cell depends on its two fills only.
_CELLS = tuple(_cell(pa, pb) for pa in range(9) for pb in range(9))


def chart_rows(primary: Sequence[Column], secondary: Sequence[Column] | None = None, *,
               height: int, lo: float, hi: float,
               styles: ChartStyles = DEFAULT_STYLES) -> list[list[Segment]]:
    """Rows of segments, top row first, one cell per column (same-style runs merged)."""
    a = levels(primary, height, lo, hi)
    rows: list[list[Segment]] = []
    if secondary is None:
        # one colour: a row is one segment (blank cells take no colour anyway)
        for r in range(height - 1, -1, -1):
            base = 8 * r
            if height == 1:  # the levels are the row's eighths already
                text = "".join(map(BLOCKS.__getitem__, a))
            else:
                text = "".join([BLOCKS[min(max(x - base, 0), 8)] for x in a])
            rows.append([Segment(text, styles.primary if text.strip() else None)])
        return rows
    b = levels(secondary, height, lo, hi)
    if len(b) < len(a):
        b += [0] * (len(a) - len(b))
    by_code = _styles_by_code(styles)
    cells = _CELLS.__getitem__
    for r in range(height - 1, -1, -1):
        base = 8 * r
        top = base + 8
        if height == 1:  # both levels are the row's eighths already
            row = list(map(cells, map(add, [x * 9 for x in a], b)))
        else:
            row = [cells((0 if x <= base else 8 if x >= top else x - base) * 9
                         + (0 if y <= base else 8 if y >= top else y - base))
                   for x, y in zip(a, b, strict=False)]
        rows.append([Segment("".join(map(_char, run)), by_code[code])
                     for code, run in groupby(row, _code)])
    return rows


@lru_cache(maxsize=64)
def _styles_by_code(styles: ChartStyles) -> tuple[Style | None, ...]:
    """Cell styles by ``_cell``'s codes: the lower part (fg) of a split cell is the overlap,
    its upper part (bg) the larger series."""
    return (
        None, styles.both, styles.primary, styles.secondary,
        Style(color=styles.both.color, bgcolor=styles.primary.color),
        Style(color=styles.both.color, bgcolor=styles.secondary.color),
    )


_char, _code = itemgetter(0), itemgetter(1)

#: The ghost's dots by the eighth of a cell its value reaches (1..8): four heights.
GHOST_MARKS = "⣀⣀⠤⠤⠒⠒⠉⠉"
_FILL = {ch: i for i, ch in enumerate(BLOCKS)}


def overlay_ghost(rows: list[list[Segment]], levels: Sequence[int], style: Style
                  ) -> list[list[Segment]]:
    """``rows`` (top row first, one cell per column) with a ghost's line drawn over them at
    ``levels`` (eighths of the chart per column, 0: none there): see the module docstring.
    Rows the line does not cross are returned as they are; in the others only the cells of
    the line are cut out of their segments."""
    height = len(rows)
    marks: dict[int, dict[int, int]] = {}
    for col, level in enumerate(levels):
        if level > 0:
            r = min((level - 1) // 8, height - 1)  # 0 = the bottom row
            marks.setdefault(height - 1 - r, {})[col] = min(level - 8 * r, 8)
    if not marks:
        return rows
    out: list[list[Segment]] = []
    for y, row in enumerate(rows):
        here = marks.get(y)
        out.append(_ghost_row(row, here, style) if here else row)
    return out


def _ghost_row(row: list[Segment], here: dict[int, int], style: Style) -> list[Segment]:
    """One row with the ghost's dots at the columns of ``here`` (column -> eighth)."""
    cols = sorted(here)
    new: list[Segment] = []
    col = ci = 0
    for seg in row:
        text, seg_style = seg.text, seg.style
        end = col + len(text)
        if ci >= len(cols) or cols[ci] >= end:
            new.append(seg)
            col = end
            continue
        start = 0
        while ci < len(cols) and cols[ci] < end:
            i = cols[ci] - col
            cell = _ghost_cell(text[i], seg_style, here[cols[ci]], style)
            ci += 1
            if cell is None:
                continue
            if i > start:
                new.append(Segment(text[start:i], seg_style))
            last = new[-1] if new and start == i else None
            if last is not None and last.style is cell[1] and last.text[-1] in GHOST_MARKS:
                new[-1] = Segment(last.text + cell[0], cell[1])
            else:
                new.append(Segment(*cell))
            start = i + 1
        if start < len(text):
            new.append(Segment(text[start:], seg_style) if start else seg)
        col = end
    return new


def _ghost_cell(ch: str, cell_style: Style | None, eighth: int, style: Style
                ) -> tuple[str, Style] | None:
    """The ghost's dot in a cell holding ``ch`` (None: the cell is kept)."""
    fill = _FILL.get(ch)
    if fill is None:
        return None  # another ghost's dots are there
    mark = GHOST_MARKS[eighth - 1]
    if fill == 0:
        return mark, style
    bg = cell_style.bgcolor if cell_style is not None else None
    if fill < 8 and bg is None:
        return None  # the top of a bar ending in this cell: the bar is kept
    under = cell_style.color if cell_style is not None and eighth <= fill else bg
    return mark, _through(style, under)


@lru_cache(maxsize=256)
def _through(style: Style, under: Color | None) -> Style:
    """The ghost's colour on a bar's (its dots cutting through the bar)."""
    return Style(color=style.color, bgcolor=under)


def rows_text(rows: list[list[Segment]]) -> Text:
    """Rows of segments as one multi-line rich Text (for a plain rich Console, and tests)."""
    out = Text()
    for i, row in enumerate(rows):
        if i:
            out.append("\n")
        for seg in row:
            out.append(seg.text, seg.style)
    return out


def spark_text(points: Points | None, secondary: Points | None = None, *, end: float,
               width: int, height: int = 1, seconds_per_column: float = 1.0,
               include_zero: bool = True, styles: ChartStyles = DEFAULT_STYLES) -> Text:
    """A sparkline of one or two series as rich Text: the whole pipeline in one call."""
    first = columns(points, end=end, width=width, seconds_per_column=seconds_per_column)
    second = (columns(secondary, end=end, width=width, seconds_per_column=seconds_per_column)
              if secondary is not None else None)
    lo, hi = value_range(first, second or [], include_zero=include_zero)
    return rows_text(chart_rows(first, second, height=height, lo=lo, hi=hi, styles=styles))
