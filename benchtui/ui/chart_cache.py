"""A chart's columns kept from one drawing to the next, so that a new sample costs its own
column and not the whole time window again (host panes: 32 of them, ~5 charts each, redraw
every second; ``benchmarks/ui_render.py``).

``ColumnCache.columns(series, end=, width=, seconds_per_column=)`` is
``charts.columns(combined(series))`` (``figures.combined``: values at the same time added, or
the largest taken with ``worst``), computed from the points that arrived since the last call:
each column's sum and count are kept by the column's place on a time grid, and a new point
adds to its own.

What differs from ``charts.columns``: the grid's sub-second phase is the newest sample's when
the grid was laid, and stays while new samples come a whole number of seconds after that one,
give or take ``PHASE_SLACK`` of a column (a tool's clock jitters by milliseconds and drifts
slowly), rather than following each new sample; a column holds the same samples either way
unless a sample lies that close to a column's edge. The grid is laid again, and the columns
computed from the store's points, when the series, the column width or the phase change, when
a point arrives for a time already counted (a series late with a time another one already
gave), and when the store no longer holds the window's oldest points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchtui.store.live import Series
from benchtui.ui.charts import Column, stretch, stretched_width

#: How far (a share of a column, at most of a second) the newest sample may move from a
#: whole number of seconds after the one the grid was laid on before the grid is laid again.
PHASE_SLACK = 0.125


class ColumnCache:
    """The columns of one chart of one or more store series (see the module's docstring)."""

    __slots__ = ("_anchor", "_busy", "_counts", "_key", "_lasts", "_means", "_newest", "_phase",
                 "_series", "_step", "_sums", "_worst", "rebuilds")

    def __init__(self) -> None:
        self._series: tuple[Series, ...] = ()
        self._key: tuple[float, int, bool, bool] | None = None
        self._phase = 0.0
        #: The newest sample's time when the grid was laid.
        self._anchor = 0.0
        self._step = 1.0
        self._worst = False
        self._busy = False
        #: Newest time taken from each series, and over all of them.
        self._lasts: list[float | None] = []
        self._newest: float | None = None
        self._sums: dict[int, float] = {}
        self._counts: dict[int, int] = {}
        #: Each column's value (sum / count), by grid index: a drawing reads them in C.
        self._means: dict[int, float] = {}
        #: How many times the columns were computed from scratch (tests).
        self.rebuilds = 0

    @property
    def phase(self) -> float:
        """The grid's sub-second phase: its columns are centred on ``phase + k * step``."""
        return self._phase

    def columns(self, series: Sequence[Series], *, end: float, width: int,
                seconds_per_column: float, worst: bool = False,
                busy: bool = False) -> list[Column]:
        """The ``width`` column values ending at ``end`` (None where no sample). ``busy``
        charts 1 - value (CPU idle ratios drawn as busy). Under one second per column, the
        columns of one second each, spread over ``width`` (``charts.stretch``)."""
        step = seconds_per_column
        if width <= 0 or step <= 0 or not series:
            return [None] * max(width, 0)
        if step < 1.0:
            return stretch(self.columns(series, end=end, width=stretched_width(width, step),
                                        seconds_per_column=1.0, worst=worst, busy=busy), width)
        key = (step, width, worst, busy)
        if key != self._key or not _same(series, self._series) \
                or not self._take(series, end, width):
            self._start(series, key)
            if not self._take(series, end, width):
                return [None] * width
        elif series is not self._series and isinstance(series, tuple):
            # the same series in the tuple the index hands out now (a new one each time a
            # series is added to the store): kept, so that the next call finds it at once
            self._series = series
        newest = self._newest
        if newest is None:
            return [None] * width
        phase, floor = self._phase, math.floor
        shift = max(floor((end - newest) / step), 0)
        newest_index = floor((newest - phase) / step + 0.5)
        first = width - 1 - shift - newest_index  # column = first + grid index
        means = self._means
        out: list[Column] = list(map(means.get, range(-first, width - first)))  # None: none
        if len(means) > 2 * width + 16:  # columns that left the window
            counts, sums = self._counts, self._sums
            for g in [g for g in means if g < newest_index - width - 2]:
                del counts[g]
                del sums[g]
                del means[g]
        return out

    def _start(self, series: Sequence[Series], key: tuple[float, int, bool, bool]) -> None:
        self._series = series if isinstance(series, tuple) else tuple(series)
        self._key = key
        self._step, _width, self._worst, self._busy = key
        self._lasts = [None] * len(series)
        self._newest = None
        self._sums = {}
        self._counts = {}
        self._means = {}
        newest = max((s.times[-1] for s in series if s.times), default=None)
        self._anchor = newest if newest is not None else 0.0
        self._phase = self._anchor % min(self._step, 1.0)
        self.rebuilds += 1

    def _take(self, series: Sequence[Series], end: float, width: int) -> bool:
        """Add the points that arrived since the last call; False when the columns must be
        computed from scratch (``_start``) instead."""
        step = self._step
        cycle = min(step, 1.0)
        oldest = end - (width + 2) * step  # older points are left of every column
        fresh: dict[float, float] = {}
        worst = self._worst
        newest = self._newest
        lasts = self._lasts
        for i, s in enumerate(series):
            times, values = s.times, s.values
            n = len(times)
            if not n:
                continue
            last = lasts[i]
            if last is not None and n == times.maxlen and times[0] > oldest:
                return False  # the store dropped points the window still shows
            k = n - 1
            while k >= 0 and times[k] >= oldest and (last is None or times[k] > last):
                k -= 1
            if k == n - 1:
                continue
            for j in range(k + 1, n):
                t, v = times[j], values[j]
                if newest is not None and t <= newest:
                    return False  # a time already counted gets another series' value
                if t in fresh:
                    fresh[t] = max(fresh[t], v) if worst else fresh[t] + v
                else:
                    fresh[t] = v
            lasts[i] = times[n - 1]
        if not fresh:
            return True
        top = max(fresh)
        phase = self._phase
        if newest is not None:
            # how far the newest sample is from a whole number of seconds after the one the
            # grid was laid on (tools report every second, or every few)
            moved = (top - self._anchor) % 1.0
            if min(moved, 1.0 - moved) > PHASE_SLACK * cycle:
                return False  # the clock drifted: lay the grid again on the newest sample
        sums, counts, means = self._sums, self._counts, self._means
        floor, isfinite, busy = math.floor, math.isfinite, self._busy
        for t in sorted(fresh):
            v = 1.0 - fresh[t] if busy else fresh[t]
            if isfinite(v):
                g = floor((t - phase) / step + 0.5)
                total = sums[g] = sums.get(g, 0.0) + v
                n = counts[g] = counts.get(g, 0) + 1
                means[g] = total / n
        self._newest = top
        return True


def _same(a: Sequence[Series], b: Sequence[Series]) -> bool:
    return a is b or (len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True)))
