"""The detail view's latency charts: p50, p99 and p99.9 as the panes' nested bands on a log
scale with axes (``axed_chart.axed_band_rows``, ``latency_chart.BandAxedChart``), checked
cell by cell on a plain rich Console; the detail view's slots; the charts in the running
console, in the theme's band colours, the same as the panes'."""

from __future__ import annotations

import io
import math
from itertools import pairwise

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult

from benchtui.model.format import format_latency
from benchtui.ui import figures as fig
from benchtui.ui.axed_chart import ChartLine, axed_band_rows, log_labels
from benchtui.ui.band_chart import BandStyles
from benchtui.ui.chart_widgets import AxedChart
from benchtui.ui.charts import rows_text
from benchtui.ui.detail import HostDetailScreen, chart_slots
from benchtui.ui.latency_chart import BandAxedChart, band_colours
from benchtui.ui.pane_rows import PaneStyles
from tests.test_ui_app import make_app, screen_text, settle
from tests.ui_data import NOW, fleet_state

LOW, MID, HIGH = Style(color="green"), Style(color="yellow"), Style(color="magenta")
STYLES = BandStyles(LOW, MID, HIGH)
T0 = 1000.0


class Pts:
    def __init__(self, values: list[float | None], start: float = T0) -> None:
        kept = [(start + i, v) for i, v in enumerate(values) if v is not None]
        self.times = [t for t, _ in kept]
        self.values = [v for _, v in kept]


def lines_of(p50: list[float | None], p99: list[float | None], p999: list[float | None]
             ) -> list[ChartLine]:
    return [ChartLine("p50", Pts(p50)), ChartLine("p99", Pts(p99)),
            ChartLine("p99.9", Pts(p999))]


def cells(row: list[Segment]) -> list[tuple[str, Style | None]]:
    return [(ch, seg.style) for seg in row for ch in seg.text]


def on_console(rows: list[list[Segment]], width: int) -> list[str]:
    """The rows as a plain rich Console prints them (each cell where the terminal puts it)."""
    console = Console(width=width, file=io.StringIO(), record=True, color_system="truecolor",
                      force_terminal=True, legacy_windows=False)
    console.print(rows_text(rows), crop=False, soft_wrap=True)
    return console.export_text(styles=False).split("\n")[:-1]


# --- the log scale's labels ------------------------------------------------------------------

def test_log_labels_top_bottom_and_evenly_spaced_factors() -> None:
    labels = log_labels(50e-6, 10e-3, 7)
    assert sorted(labels) == [0, 2, 4, 6]  # every other row of seven
    assert labels[0] == pytest.approx(10e-3) and labels[6] == pytest.approx(50e-6)
    values = [labels[y] for y in sorted(labels, reverse=True)]  # bottom first
    factors = [b / a for a, b in pairwise(values)]
    assert factors == pytest.approx([200 ** (1 / 3)] * 3)  # the same factor: a log scale
    assert log_labels(1.0, 2.0, 1) == {0: 2.0}
    assert sorted(log_labels(1.0, 16.0, 5)) == [0, 2, 4]
    assert log_labels(1.0, 16.0, 5)[2] == pytest.approx(4.0)  # the geometric middle


# --- the chart, cell by cell ---------------------------------------------------------------

def test_three_bands_with_axes_labels_ticks_and_legend() -> None:
    # 20 seconds of p50 100 us, p99 1 ms, p99.9 10 ms: the scale runs from half the smallest
    # (50 us) to the largest (10 ms), 56 eighths over 7 rows: p50 fills 7 of them, p99 32
    n, width = 20, 44  # the legend needs 44 columns
    rows = axed_band_rows(lines_of([100e-6] * n, [1e-3] * n, [10e-3] * n),
                          end=T0 + n - 1, width=width, height=10, formatter=format_latency,
                          styles=STYLES)
    text = on_console(rows, width)
    assert len(rows) == 10 and len(text) == 10
    # value labels: log-spaced, the top one the largest p99.9, the bottom one half the p50
    expected = {y: format_latency(50e-6 * 200 ** ((6 - y) / 6)) for y in (0, 2, 4, 6)}
    assert expected == {0: "10.0 ms", 2: "1.71 ms", 4: "292 µs", 6: "50.0 µs"}
    for y in range(7):
        axis = text[y][:8]
        assert axis == (f"{expected[y]:>7}┤" if y in expected else " " * 7 + "│")
    # each column, top down: the p99.9 band (3 rows), p99's (3 rows), then p50 filling 7/8
    # of the bottom row under p99 (a two-colour cell: p50 in front, p99 behind)
    plot = [cells(row)[8:] for row in rows[:7]]
    plot_width = width - 8  # less the labels (7) and the axis (1)
    assert {len(row) for row in plot} == {plot_width}
    data = slice(plot_width - n, plot_width)
    for y in range(3):
        assert plot[y][data] == [("█", HIGH)] * n
    for y in range(3, 6):
        assert plot[y][data] == [("█", MID)] * n
    assert plot[6][data] == [("▇", Style(color="green", bgcolor="yellow"))] * n
    assert {ch for row in plot for ch, _ in row[:plot_width - n]} == {" "}  # no data: blank
    # the time axis and its ticks, "now" at the right
    assert text[7] == " " * 7 + "└─────┬" + ("─" * 9 + "┬") * 3  # every 10 s
    assert text[8].split() == ["-30s", "-20s", "-10s", "now"]
    # the legend: the three, each named in its band's colour, with its current value
    assert text[9] == "█ p50 100 µs  █ p99 1.00 ms  █ p99.9 10.0 ms"
    legend = cells(rows[9])
    for name, style in (("p50", LOW), ("p99", MID), ("p99.9", HIGH)):
        at = text[9].index(f"█ {name} ")
        assert {s for _, s in legend[at:at + len(name) + 2]} == {style}


def test_the_tail_shows_above_p99_where_it_spikes() -> None:
    # p99.9 close to p99 but for one spike: the p99.9 colour is above p99's in every column
    # that has it, far above in the spike's column
    p50 = [100e-6] * 8
    p99 = [400e-6] * 8
    p999 = [450e-6, 450e-6, 450e-6, 20e-3, 450e-6, None, 450e-6, 450e-6]
    rows = axed_band_rows(lines_of(p50, p99, p999), end=T0 + 7, width=20, height=10,
                          formatter=format_latency, styles=STYLES)
    plot = [cells(row)[-8:] for row in rows[:7]]

    def top_rows(col: int, colour: str) -> list[int]:
        """Rows (0 = top) where the column shows ``colour`` (in front or behind)."""
        return [y for y in range(7) for ch, st in [plot[y][col]]
                if ch != " " and st is not None and colour in (
                    st.color and st.color.name, st.bgcolor and st.bgcolor.name)]

    for col in range(8):
        high, mid = top_rows(col, "magenta"), top_rows(col, "yellow")
        if col == 5:  # no p99.9 there: the bar ends with p99
            assert not high and mid and min(mid) > 0
            continue
        assert high and mid and min(high) <= min(mid)
    assert top_rows(3, "magenta") == [0, 1, 2, 3, 4]  # the spike: up to the top
    assert plot[0][3] == ("█", HIGH)
    assert all(y > 3 for col in (0, 1, 2, 4, 6, 7) for y in top_rows(col, "magenta"))


def test_no_data_draws_axes_without_a_scale_and_the_legend_says_so() -> None:
    rows = axed_band_rows(lines_of([], [], []), end=T0, width=30, height=6,
                          formatter=format_latency, styles=STYLES)
    text = on_console(rows, 30)
    assert all(line.endswith("│") or "│ " in line for line in text[:3])
    assert "┤" not in "".join(text[:3])  # no value labels without values
    assert text[3].lstrip().startswith("└") and text[4].split() == ["-20s", "-10s", "now"]
    assert text[5].rstrip() == "█ p50 –  █ p99 –  █ p99.9 –"


def test_narrow_and_short_charts_keep_their_size() -> None:
    n = 30
    lines = lines_of([1e-4] * n, [1e-3] * n, [5e-3] * n)
    for width, height in ((12, 1), (12, 3), (25, 4), (60, 12)):
        rows = axed_band_rows(lines, end=T0 + n - 1, width=width, height=height,
                              formatter=format_latency, styles=STYLES)
        assert len(rows) == height
        assert all(sum(len(s.text) for s in row) <= width for row in rows)
    assert axed_band_rows(lines, end=T0, width=0, height=5, formatter=format_latency) == []


def test_a_narrow_legend_keeps_the_entries_that_fit() -> None:
    n = 30
    rows = axed_band_rows(lines_of([1e-4] * n, [1e-3] * n, [5e-3] * n), end=T0 + n - 1,
                          width=30, height=8, formatter=format_latency, styles=STYLES)
    assert "".join(s.text for s in rows[-1]).rstrip() == "█ p50 100 µs  █ p99 1.00 ms"


# --- the detail view -------------------------------------------------------------------------

def test_latency_slots_chart_the_three_percentiles_as_bands_lowest_first() -> None:
    state = fleet_state(1)
    f = fig.host_figures(state, "host01", NOW)
    slots = {s.title: s for s in chart_slots(f)}
    for op in ("read", "write"):
        slot = slots[f"latency {op} (worst job, log scale)"]
        assert slot.bands and isinstance(slot.widget, BandAxedChart)
        assert [(label, labels["quantile"]) for label, _, labels, _ in slot.lines] == [
            ("p50", "0.5"), ("p99", "0.99"), ("p99.9", "0.999")]
    assert not isinstance(slots["IOPS"].widget, BandAxedChart)


def test_band_colours_from_a_theme_file() -> None:
    css = "$bt-success: #00ff00;\n$bt-p50: $bt-success;\n$bt-p99: #e6b84a;\n$bt-p999: nope;"
    found = band_colours(css)
    assert set(found) == {"p50", "p99"}  # p99.9's value is no colour: the plain one instead
    assert found["p50"].color is not None and found["p50"].color.triplet == (0, 255, 0)
    assert band_colours("") == {}


@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast"])
async def test_detail_latency_charts_use_the_panes_band_colours(theme: str) -> None:
    app, _ = make_app(2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        if theme != "dark":
            app.set_console_theme(theme)
            await settle(pilot, app)
        pane_bands = app.grid.panes["host01"].styles_for_pane().bands
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, HostDetailScreen)
        charts = list(app.screen.query(BandAxedChart))
        assert len(charts) == 2  # read and write
        for chart in charts:
            bands = chart.band_styles()
            assert [s.color for s in (bands.low, bands.mid, bands.high)] == [
                s.color for s in (pane_bands.low, pane_bands.mid, pane_bands.high)]
            assert pane_bands.low.color != PaneStyles.plain().p50.color  # the theme's
        text = screen_text(app)
        assert "latency read (worst job, log scale)" in text
        assert "█ p50 " in text and "█ p99 " in text and "█ p99.9 " in text
        # the chart's lines on the screen: the band colours in its plot
        chart = charts[0]
        colours = {seg.style.color for y in range(chart.size.height)
                   for seg in chart.render_line(y) if seg.style and seg.style.color}
        assert {bands.low.color, bands.mid.color, bands.high.color} <= colours


class BandApp(App[None]):
    def compose(self) -> ComposeResult:
        yield BandAxedChart(id="bands")


async def test_widget_redraws_on_new_data_only_and_shows_the_newest_values() -> None:
    app = BandApp()
    n = 20
    p50, p99, p999 = Pts([1e-4] * n), Pts([1e-3] * n), Pts([1e-2] * n)
    lines = [ChartLine("p50", p50), ChartLine("p99", p99), ChartLine("p99.9", p999)]
    async with app.run_test(size=(60, 12)) as pilot:
        chart = app.query_one(BandAxedChart)
        assert isinstance(chart, AxedChart)
        chart.set_data(lines, end=T0 + n - 1)
        await pilot.pause()
        # outside a ConsoleApp: the panes' plain colours
        plain = PaneStyles.plain()
        assert chart.band_styles() == BandStyles(Style(color=plain.p50.color),
                                                 Style(color=plain.p99.color),
                                                 Style(color=plain.p999.color))
        last = chart.render_line(chart.size.height - 1).text
        assert last.startswith("█ p50 100 µs  █ p99 1.00 ms  █ p99.9 10.0 ms")
        first = chart.render_line(0)
        chart.set_data(lines, end=T0 + n - 1)  # the same: the cached rows
        assert chart.render_line(0) is first
        for series, value in ((p50, 2e-4), (p99, 2e-3), (p999, 4e-2)):
            series.times.append(T0 + n)
            series.values.append(value)
        chart.set_data(lines, end=T0 + n)
        await pilot.pause()
        assert chart.render_line(chart.size.height - 1).text.startswith(
            "█ p50 200 µs  █ p99 2.00 ms  █ p99.9 40.0 ms")
        assert chart.render_line(0).text.startswith("40.0 ms┤")
        assert math.isclose(float(chart.render_line(0).text.split()[0]), 40.0)


async def test_a_new_theme_recolours_the_open_detail_view() -> None:
    app, _ = make_app(1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        chart = app.screen.query(BandAxedChart).first()
        dark = chart.band_styles()
        await pilot.press("t")  # the light theme
        await settle(pilot, app)
        light = band_colours(app.console_theme.css)
        assert chart.band_styles() == BandStyles(light["p50"], light["p99"], light["p999"])
        assert chart.band_styles() != dark
