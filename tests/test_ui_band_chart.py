"""benchtui.ui.band_chart and the pane's latency row: p50, p99 and p99.9 as nested bands on a
log scale, checked cell by cell (characters and styles) on a plain rich Console; the row's
numbers and legend in the bands' colours; device await charted in its own row, folded into
the device's row when the pane is short of lines."""

from __future__ import annotations

import math

import pytest
from rich.console import Console
from rich.style import Style

from benchtui.ui import figures as fig
from benchtui.ui.band_chart import BandStyles, band_levels, band_rows, log_range
from benchtui.ui.charts import rows_text
from benchtui.ui.pane_content import PaneStyles, lines_text, pane_lines
from benchtui.ui.pane_rows import LATENCY_QUANTILES, host_rows
from tests.ui_data import NOW, fleet_state

LOW, MID, HIGH = Style(color="green"), Style(color="yellow"), Style(color="magenta")
STYLES = BandStyles(LOW, MID, HIGH)


def test_log_range_is_half_the_smallest_to_the_largest() -> None:
    assert log_range([None, 2e-4, 1e-3], [4e-2, None]) == (1e-4, 4e-2)
    assert log_range([0.0, -1.0, None, math.inf]) == (1.0, 2.0)  # nothing to chart
    assert log_range([]) == (1.0, 2.0)


def test_levels_are_logarithmic_and_nested() -> None:
    # 1 .. 256 over 8 eighths: one eighth per power of 2
    (p50, p99, p999) = band_levels([[2.0, 16.0, None, 256.0],
                                    [4.0, 8.0, 4.0, None],  # below p50, missing: p50's
                                    [256.0, 300.0, 16.0, 64.0]], 1, 1.0, 256.0)
    assert p50 == [1, 4, 0, 8]
    assert p99 == [2, 4, 2, 8]
    assert p999 == [8, 8, 4, 8]  # above hi: cut at the top
    # a value just above the bottom still shows; at or below it, nothing
    assert band_levels([[1.0001, 1.0, 0.5]], 2, 1.0, 256.0) == [[1, 0, 0]]


def test_three_bands_meeting_in_a_cell() -> None:
    # 1 .. 2**16 over two rows: one eighth per power of 2; every column's p50 reaches one
    # eighth into the top row, so the bottom row is all p50's
    cols = [[2.0 ** 9, 2.0 ** 9, 2.0 ** 9, 2.0 ** 9, 2.0 ** 16, None],     # p50
            [2.0 ** 12, 2.0 ** 9, 2.0 ** 16, 2.0 ** 12, 2.0 ** 16, None],  # p99
            [2.0 ** 14, 2.0 ** 12, 2.0 ** 16, 2.0 ** 16, 2.0 ** 16, None]]  # p99.9
    top, bottom = band_rows(cols, height=2, lo=1.0, hi=2.0 ** 16, styles=STYLES)
    assert [(ch, seg.style) for seg in top for ch in seg.text] == [
        ("▆", HIGH),  # p99.9 ends at 6/8: the bar's top band, alone (nothing above it)
        ("▄", HIGH),  # p50 = p99 at 1/8 under p99.9 at 4/8: still the top band's outline
        ("▁", Style(color="green", bgcolor="yellow")),  # p50 1/8, p99 (= p99.9) above
        ("▄", Style(color="yellow", bgcolor="magenta")),  # three in a cell: p50 gives way
        ("█", LOW),  # all full: p50 fills the cell
        (" ", None),  # no sample
    ]
    assert [(seg.text, seg.style) for seg in bottom] == [("█████", LOW), (" ", None)]


def test_a_one_line_chart_shows_the_top_band_alone() -> None:
    cols = [[2.0, 2.0, 2.0, 2.0, 256.0, None],
            [16.0, 2.0, 256.0, 16.0, 256.0, None],
            [64.0, 16.0, 256.0, 256.0, 256.0, None]]
    (row,) = band_rows(cols, height=1, lo=1.0, hi=256.0, styles=STYLES)
    assert [(ch, seg.style) for seg in row for ch in seg.text] == [
        ("▆", HIGH), ("▄", HIGH), ("█", MID), ("█", HIGH), ("█", LOW), (" ", None)]


def test_bands_over_rows_on_a_plain_console() -> None:
    # 4 rows = 32 eighths over 1 .. 2**32: one eighth per power of 2, so p50 2**8 fills the
    # bottom row, p99 2**20 half of the third, p99.9 2**28 half of the top one
    rows = band_rows([[2.0 ** 8], [2.0 ** 20], [2.0 ** 28]], height=4, lo=1.0, hi=2.0 ** 32,
                     styles=STYLES)
    console = Console(width=10, record=True, color_system=None)
    console.print(rows_text(rows))
    assert console.export_text() == "▄\n▄\n█\n█\n"
    assert [row[0].style for row in rows] == [
        HIGH,  # the top of the bar: p99.9 alone
        Style(color="yellow", bgcolor="magenta"),  # p99 up to half the row, p99.9 above
        MID,  # p50 .. p99
        LOW,  # up to p50
    ]


def test_fewer_bands_are_drawn_as_the_lowest() -> None:
    (row,) = band_rows([[16.0, None]], height=1, lo=1.0, hi=256.0, styles=STYLES)
    assert [(s.text, s.style) for s in row] == [("▄", LOW), (" ", None)]


@pytest.fixture
def pane() -> tuple[fig.HostFigures, list[str], list[list[tuple[str, Style | None]]]]:
    state = fleet_state(1)
    f = fig.host_figures(state, "host01", NOW)
    lines = pane_lines(state, f, width=76, height=18, end=NOW, window=60.0,
                       styles=PaneStyles.plain())
    text = lines_text(lines).plain.split("\n")
    return f, text, [[(s.text, s.style) for s in line] for line in lines]


def test_latency_row_numbers_legend_and_bands(pane: tuple[fig.HostFigures, list[str], list[
        list[tuple[str, Style | None]]]]) -> None:
    f, text, segments = pane
    plain = PaneStyles.plain()
    at = next(i for i, line in enumerate(text) if line.startswith("lat r"))
    lat = f.latency["read"]
    numbers = [(t, s) for t, s in segments[at] if s in (plain.p50, plain.p99, plain.p999)]
    assert numbers[:3] == list(zip(_formatted(lat), (plain.p50, plain.p99, plain.p999),
                                   strict=True))
    # the legend under the numbers, each name under its number
    legend = text[at + 1]
    assert legend.split()[:3] == ["p50", "p99", "p99.9"]
    assert legend.index("p99 ") == text[at].index("/") + 1
    # the chart beside them: its 3 lines use the three bands' colours
    chart_colours = {c.name for line in segments[at:at + 3] for _, s in line[-8:] if s
                     for c in (s.color, s.bgcolor) if c is not None}
    assert {"green", "bright_yellow", "bright_magenta"} <= chart_colours


def _formatted(lat: fig.Latency) -> list[str]:
    from benchtui.model.format import format_latency

    return [format_latency(v) for v in (lat.p50, lat.p99, lat.p999)]


def test_device_await_has_its_own_charted_row_or_folds_into_the_device(pane: tuple[
        fig.HostFigures, list[str], list[list[tuple[str, Style | None]]]]) -> None:
    f, text, _segments = pane
    rows = host_rows(f, PaneStyles.plain())
    await_row = next(r for r in rows if r.label == "  await")
    assert await_row.chart is not None and await_row.chart.metric == "disk_await_seconds"
    assert any(line.startswith("  await r ") for line in text)
    assert any(line.startswith("vda ") and " aw " not in line for line in text)
    latency = next(r for r in rows if r.label == "lat r")
    assert latency.chart is not None and latency.chart.quantiles == LATENCY_QUANTILES
    # a narrow, short pane: every row keeps a line of chart, await folds into the device
    state = fleet_state(1)
    narrow = lines_text(pane_lines(state, f, width=36, height=12, end=NOW, window=60.0,
                                   styles=PaneStyles.plain())).plain.split("\n")
    device = next(line for line in narrow if line.startswith("vda "))
    assert " aw " in device and not any("await" in line for line in narrow)
    assert len(narrow) == 12
