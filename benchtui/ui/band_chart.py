"""Latency percentiles (p50, p99, p99.9) in one chart: nested bands of one bar per column.

Each column is a bar as tall as the column's p99.9; the part of it up to p50 is drawn in the
p50 style, from p50 to p99 in the p99 style, from p99 to p99.9 in the p99.9 style, so the
three read at a glance: the body of the distribution at the bottom, its tails above::

    ▁ ▃▂      ▆        <- p99.9 (the tail's spikes)
    █▆██▃▄▅▅▄▆█▇▅      <- p99
    ████████████▇      <- p50 at the bottom

Percentiles of storage latency are often a decade or more apart (p50 150 µs, p99.9 30 ms), so
the height is logarithmic: from half the smallest value charted to the largest, where a
linear scale would leave p50 a flat line of one eighth. A cell shows at most two colours (a
lower block in the foreground, the rest in the background): where three bands meet in one
cell, the lowest one gives way, and a one-line chart shows the top band's outline alone
(p99.9 mostly; the numbers beside it have all three).

``band_rows(cols, height=, lo=, hi=, styles=)`` draws columns of values (``charts.columns``,
``chart_cache.ColumnCache``), one list per percentile, lowest first; ``log_range`` gives
``lo`` and ``hi``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import groupby
from operator import add

from rich.segment import Segment
from rich.style import Style

from benchtui.ui.charts import BLOCKS, Column

#: The bottom of the scale: this factor below the smallest value, so the smallest p50 still
#: fills a part of its column.
FLOOR_FACTOR = 0.5


@dataclass(frozen=True, slots=True)
class BandStyles:
    """How the bands are drawn, lowest (p50) first."""

    low: Style = field(default_factory=lambda: Style(color="green"))
    mid: Style = field(default_factory=lambda: Style(color="yellow"))
    high: Style = field(default_factory=lambda: Style(color="magenta"))


DEFAULT_BAND_STYLES = BandStyles()


def log_range(*cols: Sequence[Column]) -> tuple[float, float]:
    """(lo, hi) of a logarithmic scale over the positive values of ``cols``: ``lo`` is
    ``FLOOR_FACTOR`` times the smallest, ``hi`` the largest (1.0, 2.0 without values)."""
    present = [v for c in cols for v in c if v]
    if present and (min(present) <= 0 or not math.isfinite(max(present))):
        present = [v for v in present if v > 0 and math.isfinite(v)]
    if not present:
        return 1.0, 2.0
    return min(present) * FLOOR_FACTOR, max(present)


def band_levels(cols: Sequence[Sequence[Column]], height: int, lo: float, hi: float
                ) -> list[list[int]]:
    """Eighths filled (0..8 * height) per band and column, on a log scale from ``lo`` to
    ``hi`` (rounded; a value above ``lo`` fills an eighth at least); each band at least as
    high as the one below it (a missing or smaller upper percentile adds nothing)."""
    top = 8 * height
    if lo <= 0 or hi <= lo or not cols:
        return [[0] * len(c) for c in cols]
    # a value's level is how many of these it exceeds: lo, then the values half way (on the
    # log scale) between one eighth and the next; a bisection each, in C
    step = math.log(hi / lo) / top
    bounds = [lo, *(lo * math.exp((k - 0.5) * step) for k in range(2, top + 1))]
    out: list[list[int]] = []
    below: list[int] | None = None
    for c in cols:
        levels = [0 if v is None else bisect_left(bounds, v) for v in c]
        if below is not None:
            levels = list(map(max, levels, below))
        out.append(levels)
        below = levels
    return out


def _cell(a: int, b: int, c: int) -> tuple[str, int]:
    """The character and style code of a cell the three bands fill to ``a <= b <= c``
    eighths of (0..8); codes index ``_styles_by_code``: 1-3 a band alone (low, mid, high),
    4-6 two of them (foreground below, background above)."""
    if c == 0:
        return " ", 0
    if c < 8:  # the bar ends in this cell: the top band's colour
        return BLOCKS[c], 3 if b < c else 2 if a < c else 1
    # full to the top: the band at the top above the highest boundary inside the cell
    if 0 < b < 8:
        return BLOCKS[b], 6 if a < b else 5
    if b == 8 and 0 < a < 8:
        return BLOCKS[a], 4
    return BLOCKS[8], 3 if b == 0 else 2 if a == 0 else 1


#: ``_cell`` for every triple, at ``a * 81 + b * 9 + c`` (a <= b <= c; others unused).
_CELLS = tuple(_cell(a, b, c) for a in range(9) for b in range(9) for c in range(9))
_CHARS = tuple(ch for ch, _ in _CELLS)
_CODES = tuple(code for _, code in _CELLS)
#: A one-line chart's cells: the bar's top band alone (a split cell there would be a split
#: only where the bar reaches the top of the window, not a band of every column).
_CODES_ONE_LINE = tuple(0 if c == 0 else 3 if b < c else 2 if a < c else 1
                        for a in range(9) for b in range(9) for c in range(9))
_CHARS_ONE_LINE = tuple(BLOCKS[c] for a in range(9) for b in range(9) for c in range(9))


def band_rows(cols: Sequence[Sequence[Column]], *, height: int, lo: float, hi: float,
              styles: BandStyles = DEFAULT_BAND_STYLES) -> list[list[Segment]]:
    """Rows of segments, top row first, one cell per column: up to three bands (lowest
    first; fewer are drawn as the lowest ones), same-style runs merged."""
    width = min((len(c) for c in cols), default=0)
    levels = band_levels(cols, height, lo, hi)
    while len(levels) < 3:  # fewer bands: the missing upper ones add nothing
        levels.append(levels[-1] if levels else [0] * width)
    a, b, c = (x[:width] for x in levels[:3])
    by_code = _styles_by_code(styles)
    chars, codes = (_CHARS_ONE_LINE, _CODES_ONE_LINE) if height == 1 else (_CHARS, _CODES)
    rows: list[list[Segment]] = []
    for r in range(height - 1, -1, -1):
        # each band's eighths in this row, weighted as ``_CELLS``'s index: C-level passes
        wa, wb, wc = _row_tables(r, height)
        index = list(map(add, map(add, map(wa.__getitem__, a), map(wb.__getitem__, b)),
                         map(wc.__getitem__, c)))
        text = "".join(map(chars.__getitem__, index))
        row: list[Segment] = []
        at = 0
        for code, run in groupby(map(codes.__getitem__, index)):
            n = sum(1 for _ in run)
            row.append(Segment(text[at:at + n], by_code[code]))
            at += n
        rows.append(row)
    return rows


@lru_cache(maxsize=64)
def _row_tables(r: int, height: int) -> tuple[tuple[int, ...], ...]:
    """For row ``r`` (0 = bottom) of a chart ``height`` rows high: a band's level (eighths
    of the whole chart) -> its eighths in the row, times 81, 9 and 1 (``_CELLS``'s index)."""
    clipped = [min(max(x - 8 * r, 0), 8) for x in range(8 * height + 1)]
    return tuple(tuple(v * w for v in clipped) for w in (81, 9, 1))


@lru_cache(maxsize=64)
def _styles_by_code(styles: BandStyles) -> tuple[Style | None, ...]:
    """Cell styles by ``_cell``'s codes."""
    low, mid, high = styles.low, styles.mid, styles.high
    return (None, low, mid, high,
            Style(color=low.color, bgcolor=mid.color),
            Style(color=low.color, bgcolor=high.color),
            Style(color=mid.color, bgcolor=high.color))
