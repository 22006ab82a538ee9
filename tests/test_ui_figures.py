"""What the console computes before drawing: figures, layout, themes, pane text.

Pure functions over a FleetState fed with real fio json+ and iostat output (tests/ui_data.py);
no Textual app runs here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from benchtui.errors import InputError, UsageError
from benchtui.model.format import format_count, format_latency
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC
from benchtui.store.fleet import FleetState
from benchtui.ui import figures as fig
from benchtui.ui.header import progress_bar
from benchtui.ui.layout import PANE_MIN_HEIGHT, PANE_MIN_WIDTH, grid_layout
from benchtui.ui.pane_content import (
    PaneStyles,
    cell_len,
    compact_line,
    host_rows,
    lines_text,
    pane_lines,
)
from benchtui.ui.themes import available_themes, load_theme, next_theme, theme_variables
from tests.ui_data import NOW, SECONDS, START, fleet_state, timeline


def _last_batch(host: str, n: int) -> list:
    return timeline("fio", host, START, SECONDS, phase=n)[-1]


def test_fleet_latency_is_the_quantile_of_merged_histograms() -> None:
    state = fleet_state(3)
    figures = fig.fleet_figures(state, NOW)
    for op in ("read", "write"):
        parts = [s.histogram for n, h in enumerate(("host01", "host02", "host03"))
                 for s in _last_batch(h, n)
                 if s.metric == HISTOGRAM_METRIC and s.labels["op"] == op and s.histogram]
        expected = LatencyHistogram.merged(parts).quantiles((0.5, 0.99, 0.999))
        lat = figures.latency[op]
        assert lat.source == "histogram"
        assert (lat.p50, lat.p99, lat.p999) == (expected[0.5], expected[0.99], expected[0.999])
        # and it is not the average of the hosts' own p99
        own = [fig.latency(state.store, NOW, op, h).p99 for h in ("host01", "host02", "host03")]
        assert lat.p99 != pytest.approx(sum(v for v in own if v) / 3, rel=1e-9)


def test_fleet_sums_add_the_newest_value_of_every_host_and_job() -> None:
    state = fleet_state(2)
    figures = fig.fleet_figures(state, NOW)
    expected = sum(s.value for n, h in enumerate(("host01", "host02"))
                   for s in _last_batch(h, n) if s.metric == "iops" and s.labels["op"] == "read")
    assert figures.iops["read"] == pytest.approx(expected)
    assert figures.hosts_up == 2 and figures.hosts_total == 2
    assert figures.step is not None and figures.step.name == "randrw-4k"
    assert figures.progress == pytest.approx((NOW - START) / 120.0)
    assert figures.eta == pytest.approx(START + 120.0 - NOW)


def test_stale_hosts_leave_the_totals_and_the_fleet_histogram() -> None:
    state = fleet_state(4, reconnecting=1)
    figures = fig.fleet_figures(state, NOW)
    fresh_only = fig.fleet_figures(fleet_state(3), NOW)
    assert figures.iops == pytest.approx(fresh_only.iops)
    assert figures.latency == fresh_only.latency
    silent = fig.host_figures(state, "host04", NOW)
    assert silent.stale and silent.state == "reconnecting"
    assert silent.iops == {} and silent.io_ops == ("read", "write")
    # Everything is current again when the clock is put back to when it reported.
    back = START + SECONDS // 2
    assert fig.host_figures(state, "host04", back).iops


def test_host_figures_devices_and_cpu_from_iostat() -> None:
    state = fleet_state(1)
    f = fig.host_figures(state, "host01", NOW)
    (vda,) = f.devices
    last = timeline("iostat", "host01", START, SECONDS)[-1]
    util = next(s.value for s in last if s.metric == "disk_util_ratio")
    w_await = next(s.value for s in last if s.metric == "disk_await_seconds"
                   and s.labels["op"] == "write")
    idle = next(s.value for s in last if s.metric == "cpu_ratio" and s.labels["mode"] == "idle")
    assert (vda.name, vda.util, vda.await_write) == ("vda", util, w_await)
    assert f.cpu_busy == pytest.approx(1 - idle)


def test_combined_adds_jobs_and_takes_the_worst_percentile() -> None:
    state = fleet_state(1)
    index = fig.index_of(state.store)
    iops = fig.combined(index.find("iops", "host01"), START)
    assert iops is not None and len(iops.times) == SECONDS
    reads = list(index.find("iops", "host01", op="read"))
    writes = list(index.find("iops", "host01", op="write"))
    assert iops.values[-1] == pytest.approx(reads[0].values[-1] + writes[0].values[-1])
    p99 = fig.combined(index.find("latency_seconds", "host01", quantile="0.99"), START,
                       worst=True)
    assert p99 is not None
    both = [s.values[-1] for s in index.find("latency_seconds", "host01", quantile="0.99")]
    assert p99.values[-1] == max(both)


def test_series_index_matches_the_store_and_catches_up() -> None:
    state = fleet_state(2)
    index = fig.index_of(state.store)
    assert fig.index_of(state.store) is index
    for host in ("host01", "host02"):
        assert {id(s) for s in index.find("iops", host)} == \
            {id(s) for s in state.store.find("iops", host)}
    state.on_samples(timeline("fio", "host03", START, 2)[0])
    assert list(index.find("iops", "host03"))


def test_the_store_keeps_at_most_its_window_of_points() -> None:
    state = FleetState("long", window=10)
    for batch in timeline("fio", "h", START, 100):
        state.on_samples(batch)
    assert all(len(s.values) <= 10 for s in state.store.series.values())
    assert state.store.samples_total > 1000


@pytest.mark.parametrize(("hosts", "size", "compact", "grid"), [
    (1, (80, 19), False, (1, 1)),
    (4, (120, 35), False, (2, 2)),
    (8, (200, 55), False, (3, 3)),
    (16, (200, 55), False, (4, 4)),
    (12, (120, 35), True, (1, 34)),
    (32, (80, 19), True, (1, 18)),
])
def test_grid_layout_fits_the_terminal(hosts: int, size: tuple[int, int], compact: bool,
                                       grid: tuple[int, int]) -> None:
    lay = grid_layout(hosts, *size)
    assert (lay.compact, (lay.columns, lay.rows)) == (compact, grid)
    if not compact:
        assert size[0] // lay.columns >= PANE_MIN_WIDTH
        assert size[1] // lay.rows >= PANE_MIN_HEIGHT
    assert lay.pages == -(-hosts // lay.per_page)


def test_grid_layout_pages_when_forced_panes_do_not_fit() -> None:
    lay = grid_layout(32, 80, 19, compact=False)
    assert not lay.compact and lay.pages > 1
    assert lay.page_of(0) == 0 and lay.page_of(lay.per_page) == 1


def test_pane_text_shows_numbers_and_charts() -> None:
    state = fleet_state(1)
    f = fig.host_figures(state, "host01", NOW)
    lines = pane_lines(state, f, width=76, height=18, end=NOW, window=60.0,
                       styles=PaneStyles.plain())
    console = Console(width=80, record=True, color_system=None)
    console.print(lines_text(lines))
    text = console.export_text()
    assert f"r {format_count(f.iops['read'])}" in text
    assert format_latency(f.latency["read"].p99) in text
    assert "vda" in text and "cpu" in text
    assert any(ch in text for ch in "▁▂▃▄▅▆▇█")
    assert len(lines) <= 18 and all(cell_len(line) == 76 for line in lines)
    rows = host_rows(f, PaneStyles.plain())
    assert [r.label for r in rows] == ["IOPS", "BW", "lat r", "lat w", "vda", "  await", "cpu"]


def test_compact_line_fits_its_width() -> None:
    state = fleet_state(3, failed=1)
    for host, width in (("host01", 80), ("host03", 120)):
        f = fig.host_figures(state, host, NOW)
        line = compact_line(state, f, width=width, end=NOW, window=120.0,
                            styles=PaneStyles.plain())
        assert cell_len(line) == width
        assert host in lines_text([line]).plain
    failed = compact_line(state, fig.host_figures(state, "host03", NOW), width=120, end=NOW,
                          window=120.0, styles=PaneStyles.plain())
    assert "No space left on device" in lines_text([failed]).plain


def test_progress_bar_is_in_eighths() -> None:
    assert progress_bar(0.0) == " " * 10
    assert progress_bar(1.0) == "█" * 10
    assert progress_bar(0.55) == "█████▌    "


def test_builtin_themes_load_and_cycle() -> None:
    names = available_themes()
    assert names[:3] == ["dark", "light", "high-contrast"]
    for name in names[:3]:
        theme = load_theme(name)
        assert theme.textual.name == f"benchtui-{name}"
        assert theme.textual.dark == (name != "light")
        assert theme_variables(theme.css)["read"].startswith("#")
    assert next_theme("dark", names) == "light"
    assert next_theme("high-contrast", names[:3]) == "dark"


def test_bad_themes_are_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="no theme named 'nope'; the themes are: dark"):
        load_theme("nope")
    bad = tmp_path / "broken.tcss"
    bad.write_text("$bt-primary: #ffffff;\nHostPane { color: $undefined-thing; }\n")
    with pytest.raises(InputError, match="is not valid Textual CSS"):
        load_theme(str(bad))
    nocolour = tmp_path / "plain.tcss"
    nocolour.write_text("Screen { background: black; }\n")
    with pytest.raises(InputError, match=r"defines no \$bt-primary"):
        load_theme(str(nocolour))
    # A user theme directory is searched before the built-in one.
    mine = tmp_path / "themes"
    mine.mkdir()
    (mine / "mine.tcss").write_text("$bt-mode: light;\n$bt-primary: #123456;\n"
                                    "Screen { background: $bt-primary; }\n")
    monkeypatch.setenv("BENCHTUI_THEMES", str(mine))
    assert "mine" in available_themes()
    assert not load_theme("mine").textual.dark
