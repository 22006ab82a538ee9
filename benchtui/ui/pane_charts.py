"""A host pane's charts, drawn from the store: ``chart_cells`` (one or two series overlaid, or
latency percentiles as nested bands, with a baseline's ghost over them), ``scaled_chart``
(the same with its scale beside it: the chart's top value and the time it covers), the
columns kept between drawings in a pane's ``ChartCaches`` (``chart_cache``). Every chart
covers exactly the window it is given (``seconds_per_column``; under one second per column,
each second spread over several: ``charts.stretch``). ``pane_content`` lays them out.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style

from benchtui.model.format import (
    format_bit_rate,
    format_byte_rate,
    format_count,
    format_duration,
    format_latency,
    format_ratio,
)
from benchtui.store.fleet import FleetState
from benchtui.ui import figures as fig
from benchtui.ui.band_chart import band_levels, band_rows, log_range
from benchtui.ui.chart_cache import ColumnCache
from benchtui.ui.charts import Column, chart_rows, columns, levels, overlay_ghost, value_range
from benchtui.ui.pane_rows import Cells, ChartSpec, PaneStyles

if TYPE_CHECKING:
    from benchtui.store.live import Series
    from benchtui.ui.ghost import Ghost

__all__ = ["GHOSTED", "GHOST_QUANTILE", "SCALE_WIDTH", "ChartCaches", "ChartSpan",
           "chart_cells", "scale_text", "scaled_chart", "seconds_per_column"]


def seconds_per_column(window: float, chart_width: int) -> float:
    """Charts cover exactly ``window`` seconds: under one second per column when the chart
    has more columns than the window has seconds (each second spread over several,
    ``charts.stretch``)."""
    return window / max(chart_width, 1)


class ChartSpan:
    """What a pane's charts cover as drawn: ``columns`` x ``seconds_per_column`` seconds
    (tests check it against the window the header's badge says)."""

    __slots__ = ("columns", "seconds_per_column")

    def __init__(self) -> None:
        self.columns = 0
        self.seconds_per_column = 0.0

    @property
    def seconds(self) -> float:
        return self.columns * self.seconds_per_column


#: The scale beside a pane's chart: a space, then the chart's top value on its first line
#: and, on its last line when it has two or more, the time it covers ("2m00s").
SCALE_WIDTH = 8


def scaled_chart(state: FleetState, host: str, spec: ChartSpec, *, width: int, height: int,
                 end: float, window: float, styles: PaneStyles,
                 caches: ChartCaches | None = None, ghost: Ghost | None = None
                 ) -> list[Cells]:
    """``chart_cells`` over exactly ``window`` seconds, each line followed by the scale
    (``SCALE_WIDTH`` cells): the top value of the chart, and the window on the last line."""
    top: list[float] = []
    rows = chart_cells(state, host, spec, width=width, height=height, end=end,
                       seconds_per_column=seconds_per_column(window, width), styles=styles,
                       caches=caches, ghost=ghost, top=top)
    label, muted = styles.label, styles.muted
    out = [[*rows[0], _scale_cell(scale_text(spec.metric, top[0] if top else None), label)]]
    if len(rows) > 1:
        blank = _scale_cell("", muted)
        out += [[*row, blank] for row in rows[1:-1]]
        out.append([*rows[-1], _scale_cell(_duration(window), muted)])
    return out


@lru_cache(maxsize=512)
def _scale_cell(text: str, style: Style) -> Segment:
    """A line's scale: a space, then ``text`` in ``SCALE_WIDTH - 1`` cells (segments are
    immutable: the same few are drawn again and again)."""
    return Segment(" " + text[:SCALE_WIDTH - 1].ljust(SCALE_WIDTH - 1), style)


@lru_cache(maxsize=64)
def _duration(window: float) -> str:
    return format_duration(window)


def scale_text(metric: str, top: float | None) -> str:
    """A chart's top value, in at most ``SCALE_WIDTH - 1`` cells."""
    if top is None:
        return ""
    if metric in ("bandwidth_bytes", "mem_bandwidth_bytes"):
        return format_byte_rate(top).replace(" ", "").replace("iB/s", "/s")
    if metric == "net_bandwidth_bytes":
        return format_bit_rate(top).replace(" ", "").replace("bit/s", "b")
    if metric in ("latency_seconds", "latency_mean_seconds", "disk_await_seconds"):
        return format_latency(top).replace(" ", "")
    if metric in ("disk_util_ratio", "cpu_ratio"):
        return format_ratio(top)
    return format_count(top)


def chart_cells(state: FleetState, host: str, spec: ChartSpec, *, width: int, height: int,
                end: float, seconds_per_column: float, styles: PaneStyles,
                caches: ChartCaches | None = None, ghost: Ghost | None = None,
                top: list[float] | None = None) -> list[Cells]:
    """A chart of ``spec``'s series of ``host``: ``height`` rows of ``width`` cells. With
    ``caches`` (a pane's, kept between drawings), the columns are kept up to date from the
    new points only (``chart_cache``). With ``ghost``, the baseline's line of the IOPS,
    bandwidth and latency charts over it. ``top``, when given, receives the value at the
    chart's top edge (nothing when the chart has no value)."""
    busy = spec.metric == "cpu_ratio"  # drawn as busy = 1 - idle

    def cols(labels: dict[str, str]) -> list[Column]:
        return _columns(state, host, spec.metric, labels, worst=spec.worst, busy=busy,
                        width=width, end=end, seconds_per_column=seconds_per_column,
                        caches=caches)

    def ghost_cols(labels: dict[str, str]) -> list[Column] | None:
        if ghost is None or spec.metric not in GHOSTED:
            return None
        series = ghost.series(host, spec.metric, labels)
        if series is None:
            return None
        return _ghost_columns(series, spec.metric, labels, width=width, end=end,
                              seconds_per_column=seconds_per_column, caches=caches)

    k = step_column(state, end=end, width=width, seconds_per_column=seconds_per_column)
    if spec.quantiles:
        bands = [_from(k, cols({**spec.labels, "quantile": q})) for q in spec.quantiles]
        tail = ghost_cols({**spec.labels, "quantile": GHOST_QUANTILE})
        tail = None if tail is None else _from(k, tail)
        lo, hi = log_range(*bands, tail or [])
        if top is not None and any(v for b in bands for v in b):
            top.append(hi)
        rows = band_rows(bands, height=height, lo=lo, hi=hi, styles=styles.bands)
        if tail is not None:
            rows = overlay_ghost(rows, band_levels([tail], height, lo, hi)[0], styles.ghost_lat)
        return rows
    first = _from(k, cols(spec.labels))
    second = _from(k, cols(spec.secondary)) if spec.secondary is not None else None
    ghosts = [(_from(k, g), style) for g, style in (
        (ghost_cols(spec.labels), styles.ghost_lat if spec.worst else styles.ghost_read),
        (ghost_cols(spec.secondary) if spec.secondary is not None else None,
         styles.ghost_write)) if g is not None]
    lo, hi = value_range(first, second or [], *(g for g, _s in ghosts))
    if top is not None and (first.count(None) < len(first)
                            or (second is not None and second.count(None) < len(second))):
        top.append(hi)  # (a column's value is a float or None: ``count`` compares in C)
    rows = chart_rows(first, second, height=height, lo=lo, hi=hi, styles=styles.chart)
    for g, style in ghosts:
        rows = overlay_ghost(rows, levels(g, height, lo, hi), style)
    return rows


def step_column(state: FleetState, *, end: float, width: int, seconds_per_column: float
                ) -> int:
    """The first column of the running step (0: the chart holds no earlier step, or no step
    runs; ``width``: none of it yet). While a step runs its pane charts draw that step only,
    as the detail view's (``LiveStore.scope``): at a step change the previous step's columns
    and scale leave with its figures, and the chart fills again from the step's start. With
    no step running (between steps, the session over) the whole window is drawn."""
    step = state.current_step
    scope = state.store.scope
    if step is None or step.ended is not None or scope is None or seconds_per_column <= 0:
        return 0
    first = end - width * seconds_per_column
    return min(max(math.ceil((scope - first) / seconds_per_column - 1e-9), 0), width)


def _from(k: int, cols: list[Column]) -> list[Column]:
    """``cols`` with its first ``k`` columns left blank (a copy: a cache's lists are kept)."""
    if k <= 0:
        return cols
    blank: list[Column] = [None] * min(k, len(cols))
    return blank + cols[k:]


#: The charts a baseline's ghost is drawn on, and the latency charts' ghost percentile.
GHOSTED = frozenset({"iops", "bandwidth_bytes", "latency_seconds", "latency_mean_seconds"})
GHOST_QUANTILE = "0.99"


def _ghost_columns(series: Series, metric: str, labels: dict[str, str], *, width: int,
                   end: float, seconds_per_column: float, caches: ChartCaches | None
                   ) -> list[Column]:
    if caches is None:
        return columns(series, end=end, width=width, seconds_per_column=seconds_per_column)
    key = ("ghost", metric, *labels.items())
    cache = caches.get(key)
    if cache is None:
        cache = caches[key] = ColumnCache()
    return cache.columns((series,), end=end, width=width,
                         seconds_per_column=seconds_per_column)


def _columns(state: FleetState, host: str, metric: str, labels: dict[str, str], *,
             worst: bool, busy: bool, width: int, end: float, seconds_per_column: float,
             caches: ChartCaches | None) -> list[Column]:
    """The columns of one combined series of ``host``: kept in the pane's ``caches`` when
    given (``chart_cache``), else computed from the store's points."""
    index = fig.index_of(state.store)
    if caches is None:
        points = fig.combined(index.find(metric, host, **labels),
                              end - width * seconds_per_column, worst=worst)
        if busy and points is not None:
            points = fig.Points(list(points.times), [1.0 - v for v in points.values])
        return columns(points, end=end, width=width, seconds_per_column=seconds_per_column)
    key = (metric, *labels.items())
    cache = caches.get(key)
    if cache is None:
        cache = caches[key] = ColumnCache()
    return cache.columns(index.found(metric, host, **labels), end=end, width=width,
                         seconds_per_column=seconds_per_column, worst=worst, busy=busy)


#: A pane's chart caches, by metric and labels.
ChartCaches = dict[tuple[object, ...], ColumnCache]
