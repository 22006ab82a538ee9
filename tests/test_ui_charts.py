"""benchtui.ui.charts / axed_chart / chart_widgets: rendering checked against expected text."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from textual.app import App, ComposeResult
from textual.widget import Widget

from benchtui.model.format import format_count
from benchtui.model.sample import Sample
from benchtui.store.live import LiveStore
from benchtui.ui.axed_chart import ChartLine, axed_rows, tick_seconds
from benchtui.ui.chart_widgets import AxedChart, ChartPaintObserver, SparkChart
from benchtui.ui.charts import (
    BLOCKS,
    ChartStyles,
    chart_rows,
    columns,
    rows_text,
    spark_text,
    value_range,
)

T0 = 1_795_315_256.33


@dataclass
class Points:
    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


def every_second(values: list[float], start: float = T0, jitter: float = 0.0) -> Points:
    """Samples at 1 Hz, with an alternating clock jitter of +-jitter seconds."""
    return Points([start + i + (jitter if i % 2 else -jitter) for i in range(len(values))],
                  list(values))


def plain(text_rows: list[str] | str) -> list[str]:
    return text_rows.split("\n") if isinstance(text_rows, str) else text_rows


# --- columns: one per sample, time window, gaps -----------------------------------------------

def test_one_column_per_sample_newest_at_the_right() -> None:
    pts = every_second([1, 2, 3])
    assert columns(pts, end=pts.times[-1], width=5) == [None, None, 1, 2, 3]


def test_window_keeps_only_the_newest_columns() -> None:
    pts = every_second([float(i) for i in range(100)])
    assert columns(pts, end=pts.times[-1] + 0.4, width=4) == [96, 97, 98, 99]


def test_clock_jitter_never_moves_a_sample_to_another_column() -> None:
    pts = every_second([1, 2, 3, 4, 5, 6], jitter=0.049)
    assert columns(pts, end=pts.times[-1] + 0.9, width=6) == [1, 2, 3, 4, 5, 6]


def test_a_missing_interval_is_a_gap_and_a_stale_series_drifts_left() -> None:
    pts = Points([T0, T0 + 1, T0 + 3], [1, 2, 4])
    assert columns(pts, end=T0 + 3, width=5) == [None, 1, 2, None, 4]
    # the fleet moved on 2 s since this host's last sample: two blank columns at the right
    assert columns(pts, end=T0 + 5.2, width=5) == [2, None, 4, None, None]


def test_wide_columns_average_their_samples() -> None:
    pts = every_second([float(i) for i in range(20)], start=1000.0)
    cols = columns(pts, end=1019.0, width=4, seconds_per_column=5)
    # a fixed 5 s grid, edges at 1002.5, 1007.5, ...; the newest, partial column at the right
    assert cols == [sum(range(3, 8)) / 5, sum(range(8, 13)) / 5, sum(range(13, 18)) / 5,
                    (18 + 19) / 2]
    # one second later the edges stay where they were: old columns keep their values
    pts.times.append(1020.0)
    pts.values.append(20.0)
    assert columns(pts, end=1020.0, width=4, seconds_per_column=5)[:3] == cols[:3]


def test_empty_and_missing_series() -> None:
    assert columns(None, end=T0, width=3) == [None, None, None]
    assert columns(Points(), end=T0, width=3) == [None, None, None]
    assert columns(every_second([1]), end=T0, width=0) == []


def test_non_finite_values_are_skipped() -> None:
    pts = every_second([1, math.nan, math.inf, 4])
    assert columns(pts, end=pts.times[-1], width=4) == [1, None, None, 4]


def test_store_series_are_charted_directly() -> None:
    store = LiveStore(window=3)
    store.add(Sample(T0 + i, "fio", "interval", "iops", float(i), {"job": "j", "op": "read"},
                     host="db1") for i in range(5))
    (series,) = store.find("iops", host="db1")
    assert isinstance(series.times, deque)
    assert columns(series, end=T0 + 4, width=4) == [None, 2, 3, 4]


# --- scaling and rows ----------------------------------------------------------------------

def test_value_range() -> None:
    assert value_range([1, None, 5]) == (0, 5)
    assert value_range([3, 5], include_zero=False) == (3, 5)
    assert value_range([None]) == (0, 1)
    assert value_range([0, 0]) == (0, 1)
    assert value_range([2, 2], include_zero=False) == (2, 4)
    assert value_range([-3, 1], [4]) == (-3, 4)


def test_single_series_one_row() -> None:
    cols = [None, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    rows = chart_rows(cols, height=1, lo=0, hi=8)
    assert rows_text(rows).plain == "  ▁▂▃▄▅▆▇█"


def test_single_series_three_rows() -> None:
    rows = chart_rows([3, 6, 12, 24], height=3, lo=0, hi=24)
    assert rows_text(rows).plain.split("\n") == [
        "   █",
        "  ▄█",   # 12 of 24: one full row and half of the next
        "▃▆██",
    ]


def test_a_small_non_zero_value_is_never_invisible() -> None:
    assert rows_text(chart_rows([0.001, 1000], height=1, lo=0, hi=1000)).plain == "▁█"


def test_two_series_overlaid() -> None:
    styles = ChartStyles(Style(color="blue"), Style(color="red"), Style(color="magenta"))
    read = [8, 2, 4, 16]
    write = [2, 8, 4, 12]
    rows = chart_rows(read, write, height=2, lo=0, hi=16, styles=styles)
    assert rows_text(rows).plain.split("\n") == [
        "   ▄",   # only the last column reaches the top row: write 12 under read 16
        "▂▂▄█",
    ]
    top, bottom = rows
    overlap_under_read = Style(color="magenta", bgcolor="blue")
    overlap_under_write = Style(color="magenta", bgcolor="red")
    assert [(s.text, s.style) for s in top] == [("   ", None), ("▄", overlap_under_read)]
    # col 0: read 8 > write 2 -> "▂" of overlap, read above it; col 1 the other way round;
    # col 2 equal -> all "both"; col 3 both fill the row -> "both"
    assert [(s.text, s.style) for s in bottom] == [
        ("▂", overlap_under_read), ("▂", overlap_under_write), ("▄█", styles.both)]


def test_spark_text_on_a_plain_rich_console() -> None:
    console = Console(width=20, record=True, color_system=None)
    pts = every_second([1, 2, 3, 4, 5, 6, 7, 8])
    console.print(spark_text(pts, end=pts.times[-1], width=10))
    assert console.export_text() == "  ▁▂▃▄▅▆▇█\n"


@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
                max_size=40),
       st.integers(min_value=1, max_value=5))
@example([7.973382036591206e+294, -1.797693134862236e+308], 1)  # a range wider than a float
def test_rows_are_always_width_cells_of_block_characters(values: list[float | None],
                                                         height: int) -> None:
    pts = Points([T0 + i for i, v in enumerate(values) if v is not None],
                 [v for v in values if v is not None])
    text = spark_text(pts, pts, end=T0 + len(values), width=12, height=height).plain
    rows = text.split("\n")
    assert len(rows) == height
    for row in rows:
        assert len(row) == 12 and set(row) <= set(BLOCKS)


# --- axed chart ----------------------------------------------------------------------------

def test_axed_chart_layout() -> None:
    read = every_second([1000, 2000, 3000, 4000], start=1000.0)
    write = every_second([500, 500, 500, 500], start=1000.0)
    rows = axed_rows([ChartLine("read", read), ChartLine("write", write)], end=1003.0,
                     width=20, height=8, formatter=format_count)
    assert rows_text(rows).plain.split("\n") == [
        "4.00k┤             █",
        "     │            ▆█",
        "2.00k┤           ▄██",
        "     │          ▂███",
        "    0┤          ▅▅▅▅",   # write (500) under read: the overlap colour
        "     └───┬─────────┬",
        "       -10s      now",
        "█ read 4.00k  ",         # "write 500" does not fit in 20 columns
    ]


def test_axed_chart_ticks_follow_the_time_window() -> None:
    assert tick_seconds(1.0, 60) == 10
    assert tick_seconds(5.0, 60) == 60
    rows = axed_rows([ChartLine("p99", None)], end=T0, width=40, height=5,
                     formatter=format_count, seconds_per_column=30.0)
    lines = rows_text(rows).plain.split("\n")
    assert lines[2] == " └───────┬─────────┬─────────┬─────────┬"
    assert lines[3].split() == ["-15m", "-10m", "-5m", "now"]
    assert lines[4].strip() == "█ p99 –"


def test_axed_chart_empty_series_is_drawn_without_data() -> None:
    rows = axed_rows([], end=T0, width=12, height=4, formatter=format_count)
    lines = rows_text(rows).plain.split("\n")
    assert lines == ["0┤          ", " └─────────┬", "         now", ""]


# --- Textual widgets -----------------------------------------------------------------------

class ChartsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SparkChart(id="spark")
        yield AxedChart(format_count, id="axed")


async def test_widgets_render_and_redraw_only_on_new_data() -> None:
    painted: list[tuple[str | None, float]] = []

    def hook(widget: Widget, newest: float) -> None:
        painted.append((widget.id, newest))

    ChartPaintObserver.hook = hook
    try:
        app = ChartsApp()
        read = every_second([1, 2, 3, 4, 5, 6, 7, 8])
        write = every_second([8, 7, 6, 5, 4, 3, 2, 1])
        async with app.run_test(size=(40, 20)) as pilot:
            spark = app.query_one(SparkChart)
            axed = app.query_one(AxedChart)
            spark.set_data(read, None, end=read.times[-1])
            axed.set_data([ChartLine("read", read), ChartLine("write", write)],
                          end=read.times[-1])
            await pilot.pause()
            assert spark.size.height == 3
            assert [spark.render_line(y).text for y in range(3)] == [
                " " * 37 + "▂▅█",
                " " * 34 + "▁▄▇███",
                " " * 32 + "▃▆██████",
            ]
            assert axed.render_line(axed.size.height - 1).text.startswith("█ read 8  █ write 1")
            spark_paints = [p for p in painted if p[0] == "spark"]
            assert spark_paints == [("spark", read.times[-1])]
            # the same data again: no redraw
            spark.set_data(read, None, end=read.times[-1])
            await pilot.pause()
            assert [p for p in painted if p[0] == "spark"] == spark_paints
            # a new sample: one redraw, showing it
            read.times.append(read.times[-1] + 1)
            read.values.append(16)
            spark.set_data(read, None, end=read.times[-1])
            await pilot.pause()
            assert [p for p in painted if p[0] == "spark"][-1] == ("spark", read.times[-1])
            assert spark.render_line(0).text.endswith("█")
    finally:
        ChartPaintObserver.hook = None
