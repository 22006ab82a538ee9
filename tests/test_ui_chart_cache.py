"""benchtui.ui.chart_cache: a pane chart's columns kept up to date from the new points only are
the columns computed from scratch (``charts.columns`` over ``figures.combined``), as series
grow, jitter, stop, drift, arrive late and are dropped by the store; and a pane's drawing with
its caches is the drawing without them."""

from __future__ import annotations

import gc
import math
import random
import weakref

import pytest

from benchtui.model.sample import Sample
from benchtui.store.live import LiveStore, Series
from benchtui.ui import figures as fig
from benchtui.ui.chart_cache import ColumnCache
from benchtui.ui.charts import Column, columns, stretch, stretched_width
from benchtui.ui.pane_content import PaneStyles, pane_lines
from tests.ui_data import NOW, SECONDS, START, fleet_state, timeline

T0 = 1_795_315_256.33


def scratch(series: list[Series], *, end: float, width: int, step: float, worst: bool = False,
            busy: bool = False, phase: float | None = None) -> list[Column]:
    """The columns computed from every point: ``charts.columns`` over ``figures.combined``;
    with ``phase``, on a grid of that phase (the same arithmetic). Under one second per
    column: the one-second columns, spread (``charts.stretch``)."""
    if step < 1.0:
        seconds = stretched_width(width, step)
        return stretch(scratch(series, end=end, width=seconds, step=1.0, worst=worst,
                               busy=busy, phase=phase), width)
    points = fig.combined(series, -math.inf, worst=worst)
    if busy and points is not None:
        points = fig.Points(list(points.times), [1.0 - v for v in points.values])
    if phase is None or points is None:
        return columns(points, end=end, width=width, seconds_per_column=step)
    newest = points.times[-1]
    shift = max(math.floor((end - newest) / step), 0)
    first = width - 1 - shift - math.floor((newest - phase) / step + 0.5)
    sums = [0.0] * width
    counts = [0] * width
    for t, v in zip(points.times, points.values, strict=True):
        col = first + math.floor((t - phase) / step + 0.5)
        if 0 <= col < width and math.isfinite(v):
            sums[col] += v
            counts[col] += 1
    return [sums[c] / counts[c] if counts[c] else None for c in range(width)]


def close(a: list[Column], b: list[Column]) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None
                                      and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9))
        for x, y in zip(a, b, strict=True))


def add(store: LiveStore, t: float, job: str, value: float, metric: str = "iops") -> None:
    store.add([Sample(t, "fio", "interval", metric, value, {"op": "read", "job": job}, "h")])


@pytest.mark.parametrize(("width", "step", "worst"), [
    (30, 1.0, False), (34, 3.53, False), (20, 0.4, False), (34, 3.53, True), (12, 10.0, False)])
def test_cached_columns_are_the_columns_from_scratch(width: int, step: float,
                                                     worst: bool) -> None:
    rnd = random.Random(width)
    store = LiveStore(window=600)
    cache = ColumnCache()
    jobs = ("a", "b")
    for second in range(300):
        t = T0 + second + rnd.uniform(-0.02, 0.02)  # a tool's clock: jitter of milliseconds
        for job in jobs:
            add(store, t, job, math.nan if rnd.random() < 0.03 else rnd.uniform(0, 1000))
        series = list(store.find("iops"))
        end = t + rnd.uniform(0, 0.9)
        got = cache.columns(series, end=end, width=width, seconds_per_column=step, worst=worst)
        assert close(got, scratch(series, end=end, width=width, step=step, worst=worst,
                                  phase=cache.phase)), second
        if second == 0:  # the grid laid on the newest point, as ``charts.columns`` lays it
            assert close(scratch(series, end=end, width=width, step=step, worst=worst),
                         scratch(series, end=end, width=width, step=step, worst=worst,
                                 phase=cache.phase))
    assert cache.rebuilds == 1  # every second after the first from the new points only


def test_a_late_series_a_stopped_one_and_idle_time() -> None:
    store = LiveStore()
    cache = ColumnCache()
    for second in range(40):
        t = T0 + second
        add(store, t, "a", 10.0 + second)
        if second < 20:
            add(store, t, "b", 1.0)  # job b stops
        series = list(store.find("iops"))
        got = cache.columns(series, end=t, width=30, seconds_per_column=1.0)
        assert close(got, scratch(series, end=t, width=30, step=1.0))
    rebuilds = cache.rebuilds
    # a value for a time already counted (job b late): computed from scratch, right
    add(store, T0 + 39, "b", 5.0)
    series = list(store.find("iops"))
    got = cache.columns(series, end=T0 + 39, width=30, seconds_per_column=1.0)
    assert close(got, scratch(series, end=T0 + 39, width=30, step=1.0))
    assert got[-1] == pytest.approx(10.0 + 39 + 5.0)
    assert cache.rebuilds == rebuilds + 1
    # nothing new, the clock moves on: the chart drifts left, nothing recomputed
    got = cache.columns(series, end=T0 + 45.5, width=30, seconds_per_column=1.0)
    assert close(got, scratch(series, end=T0 + 45.5, width=30, step=1.0))
    assert got[-6:] == [None] * 6
    assert cache.rebuilds == rebuilds + 1


def test_busy_charts_one_minus_the_value_and_a_drifting_clock_relays_the_grid() -> None:
    store = LiveStore()
    cache = ColumnCache()
    for second in range(60):
        t = T0 + second * 1.01  # drifts 10 ms a second: 0.6 s over the minute
        store.add([Sample(t, "mpstat", "interval", "cpu_ratio", 0.25, {"mode": "idle"}, "h")])
        series = list(store.find("cpu_ratio"))
        got = cache.columns(series, end=t, width=20, seconds_per_column=1.0, busy=True)
        if second == 0 or got != scratch(series, end=t, width=20, step=1.0, busy=True):
            # the grid keeps its phase while the clock drifts less than its slack
            assert all(v in (None, 0.75) for v in got)
    assert got[-1] == 0.75
    assert 1 < cache.rebuilds < 10


def test_points_the_store_dropped_leave_the_chart() -> None:
    store = LiveStore(window=10)
    cache = ColumnCache()
    for second in range(40):
        t = T0 + second
        add(store, t, "a", float(second))
        series = list(store.find("iops"))
        got = cache.columns(series, end=t, width=30, seconds_per_column=1.0)
        assert close(got, scratch(series, end=t, width=30, step=1.0)), second
    assert sum(v is not None for v in got) == 10


def test_pane_lines_with_caches_are_the_lines_without() -> None:
    state = fleet_state(2, seconds=40)
    names = list(state.hosts)
    more = {h: (timeline("fio", h, START, SECONDS + 30, phase=n),
                timeline("iostat", h, START, SECONDS + 30, phase=n))
            for n, h in enumerate(names)}
    f = {h: fig.host_figures(state, h, NOW) for h in names}
    caches: dict[str, dict[tuple[object, ...], ColumnCache]] = {h: {} for h in names}
    styles = PaneStyles.plain()
    for second in range(SECONDS, SECONDS + 30):
        now = START + second + 1.5
        for h in names:
            fio, io = more[h]
            state.on_samples(fio[second] + io[second])
            f[h] = fig.host_figures(state, h, now)
            for width, height, window in ((36, 11, 120.0), (70, 12, 60.0)):
                kwargs = {"width": width, "height": height, "end": now, "window": window,
                          "styles": styles}
                assert pane_lines(state, f[h], caches=caches[h], **kwargs) == \
                    pane_lines(state, f[h], **kwargs), (h, second, width)
    # the latency charts' three percentiles and the devices' await were among the cached
    for h in names:
        for q in ("0.5", "0.99", "0.999"):
            assert any(key[0] == "latency_seconds" and ("quantile", q) in key[1:]
                       for key in caches[h]), (h, q)
        assert any(key[0] == "disk_await_seconds" for key in caches[h])


def test_the_series_index_does_not_keep_its_store_alive() -> None:
    state = fleet_state(1)
    fig.index_of(state.store)
    gone = weakref.ref(state.store)
    del state
    gc.collect()
    assert gone() is None
