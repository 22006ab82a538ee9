"""The console uses the room it has and its controls do what they say (issue 21), through
Textual's Pilot on the deterministic data of tests/ui_data.py: panes without blank lines at
every size and host count, the charts' drawn span equal to the window the badge says (live
and in replay), the Screenshot action, the Output tab's tool filter and JSON folding, the
session log's filter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Log

from benchtui.model.format import format_duration
from benchtui.session.replay import ReplayPlayer
from benchtui.store.fleet import OutputLine
from benchtui.store.recording import SessionReader
from benchtui.ui import figures as fig
from benchtui.ui.app import ConsoleApp
from benchtui.ui.charts import stretch, stretched_width
from benchtui.ui.detail import HostDetailScreen
from benchtui.ui.notices import NoticeBar
from benchtui.ui.output_view import Folder, OutputView
from benchtui.ui.pane import HostPane
from benchtui.ui.pane_charts import SCALE_WIDTH, scale_text, seconds_per_column
from benchtui.ui.pane_content import lines_text, pane_lines
from benchtui.ui.pane_rows import PaneStyles, host_rows
from benchtui.ui.replay import ReplayApp, ReplaySource
from benchtui.ui.screens import SessionLogScreen
from benchtui.ui.source import StaticSource
from tests.baseline_recording import STEP, fixture_pair
from tests.test_ui_app import screen_text, settle
from tests.ui_data import NOW, fleet_state

pytestmark = pytest.mark.usefixtures("utc_clock")

SIZES = ((80, 24), (120, 40), (200, 60), (240, 80))
#: Blank lines a pane may have inside its border.
MAX_BLANK = 2


def blank_lines(pane: HostPane) -> int:
    lines = pane.content_text()
    height = pane.content_size.height
    return sum(not line.strip() for line in lines) + max(height - len(lines), 0)


@pytest.mark.parametrize("hosts", [1, 2, 4, 9, 16, 32])
async def test_no_pane_has_more_than_a_few_blank_lines(hosts: int) -> None:
    app = ConsoleApp(StaticSource(fleet_state(hosts), NOW))
    async with app.run_test(size=SIZES[0]) as pilot:
        for width, height in SIZES:
            await pilot.resize_terminal(width, height)
            await settle(pilot, app)
            await settle(pilot, app)
            panes = [p for p in app.grid.visible_panes() if not p.has_class("-compact")]
            for pane in panes:
                blank = blank_lines(pane)
                assert blank <= MAX_BLANK, (width, height, pane.host, blank,
                                            "\n".join(pane.content_text()))


async def check_span_follows_the_window(app: ConsoleApp, pilot: object, key: str,
                                        windows: tuple[float, ...]) -> None:
    """The window is each of ``windows`` in turn, ``key`` pressed between them; the badge
    says it, and every pane's charts cover it exactly."""
    for presses, expected in enumerate(windows):
        await settle(pilot, app)  # type: ignore[arg-type]
        window = app.window
        assert window == expected
        assert f"window {format_duration(window)}" in " ".join(app.header_badges())
        for pane in app.grid.visible_panes():
            pane.content_text()  # drawn at its size now
            span = pane.chart_span
            assert span.columns > 0
            assert span.seconds == pytest.approx(window), (pane.host, span.columns)
        if presses < len(windows) - 1:
            await pilot.press(key)  # type: ignore[attr-defined]


async def test_minus_twice_the_charts_cover_the_window_the_badge_says() -> None:
    app = ConsoleApp(StaticSource(fleet_state(2), NOW))
    async with app.run_test(size=(200, 60)) as pilot:
        # fitted to the step (120 s and its start and stop), then the shorter ones
        await check_span_follows_the_window(app, pilot, "minus", (125.0, 120.0, 60.0, 30.0))
        pane = app.grid.visible_panes()[0]
        # 30 s over more than 30 columns: each second spread over several
        assert pane.chart_span.seconds_per_column < 1.0
        assert "30s" in "\n".join(pane.content_text())  # the scale says it too


async def test_the_window_keys_in_replay_the_same() -> None:
    reader = SessionReader.open(str(fixture_pair().new))
    try:
        player = ReplayPlayer(reader)
        app = ReplayApp(ReplaySource(player))
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("g", *"50%", "enter")
            # fitted to the 6 s step (and its start and stop), then the longer ones
            await check_span_follows_the_window(app, pilot, "plus", (10.0, 30.0, 60.0))
            assert player.window == 60.0
    finally:
        reader.close()
    assert STEP


async def test_screenshot_writes_an_svg_and_says_where(tmp_path: Path) -> None:
    app = ConsoleApp(StaticSource(fleet_state(1), NOW), screenshot_dir=str(tmp_path))
    async with app.run_test(size=(200, 30)) as pilot:
        await settle(pilot, app)
        app.action_screenshot()
        await settle(pilot, app)
        files = list(tmp_path.glob("*.svg"))
        assert len(files) == 1 and files[0].stat().st_size > 1000
        assert "host01" in files[0].read_text()
        assert str(files[0]) == app.last_screenshot
        assert f"saved {files[0]}" in screen_text(app)


async def test_screenshot_failure_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    app = ConsoleApp(StaticSource(fleet_state(1), NOW), screenshot_dir=str(missing))
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot, app)
        app.action_screenshot()
        await settle(pilot, app)
        text = screen_text(app)
        assert "could not save the screenshot" in text and str(missing) in text
        assert not missing.exists()


async def test_screenshot_from_the_palette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.chdir(tmp_path)  # the current directory by default
    app = ConsoleApp(StaticSource(fleet_state(1), NOW))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        await pilot.press(*"Screenshot")
        await pilot.pause(0.3)
        await pilot.press("enter")
        for _ in range(20):
            await pilot.pause(0.1)
            if list(tmp_path.glob("*.svg")):
                break
        (svg,) = tmp_path.glob("*.svg")
        assert svg.name.startswith("benchtui-demo-")


def fio_document(t: float, n: int) -> list[OutputLine]:
    body = ["{", '  "fio version" : "fio-3.33",', f'  "timestamp" : {n},', '  "jobs" : [',
            "    {", '      "jobname" : "rread"', "    }", "  ]", "}"]
    return [OutputLine(t, STEP, "fio", line) for line in body]


def test_a_json_document_folds_to_one_line() -> None:
    folder = Folder()
    out = [text for line in [*fio_document(NOW, 1),
                             OutputLine(NOW, STEP, "iostat", "vda 1.0"),
                             *fio_document(NOW, 2)]
           for text in folder.feed(line)]
    assert len(out) == 3
    assert out[0].endswith('fio| {9 lines} { "fio version" : "fio-3.33", "timestamp" : 1, '
                           '"jobs" : [ { "jobname" : "rread" } ] }')
    assert out[1].endswith("iostat| vda 1.0")
    # a document that never closes is not held back for ever
    folder = Folder()
    lines = [OutputLine(NOW, STEP, "fio", "{")] * 20_001
    assert len([t for line in lines for t in folder.feed(line)]) == 20_000


async def test_output_tab_shows_one_tool_and_folds_fio_json() -> None:
    state = fleet_state(1)
    view = state.hosts["host01"]
    for n in range(3):
        view.output.extend(fio_document(NOW - 3 + n, n))
    # the host keeps its last lines only: the first ones kept may be inside a document
    view.output.extendleft(reversed(fio_document(NOW - 90, 0)[4:]))
    app = ConsoleApp(StaticSource(state, NOW))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("enter", "4")
        await settle(pilot, app)
        assert isinstance(app.screen, HostDetailScreen)
        output = app.screen.query_one(OutputView)
        text = screen_text(app)
        assert "output of every tool" in text and "iostat| vda" in text
        assert text.count("{9 lines}") == 3 and '"jobname"' in text
        log = "\n".join(app.screen.query_one(Log).lines)  # (scrolled to its end on screen)
        assert log.count("start is no longer kept") == 1 and log.count("{9 lines}") == 3
        assert set(output.tools) == {"fio", "iostat"}
        while output.tool != "fio":  # o: the next tool
            await pilot.press("o")
        await settle(pilot, app)
        text = screen_text(app)
        assert "output of fio" in text
        log = "\n".join(app.screen.query_one(Log).lines)
        assert log.count("start is no longer kept") == 1 and "iostat|" not in log
        assert "iostat|" not in text and text.count("{9 lines}") == 3
        await pilot.press("f")  # as printed
        await settle(pilot, app)
        text = screen_text(app)
        assert "{9 lines}" not in text and '"jobname" : "rread"' in text
        await pilot.press("f")  # folded again
        seen = []
        for _ in range(3):
            await pilot.press("o")
            seen.append(output.tool)
        assert sorted(seen) == ["all", "fio", "iostat"]  # all, then each in turn
        while output.tool != "iostat":
            await pilot.press("o")
        await settle(pilot, app)
        text = screen_text(app)
        assert "fio|" not in text and "iostat| vda" in text


async def test_session_log_hides_routine_events_until_asked() -> None:
    state = fleet_state(3, failed=1)
    app = ConsoleApp(StaticSource(state, NOW))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("l")
        for _ in range(20):  # the log is written once it is laid out (a loaded machine)
            await settle(pilot, app)
            if "routine hidden" in screen_text(app):
                break
        assert isinstance(app.screen, SessionLogScreen)
        text = screen_text(app)
        assert "host01: running" not in text  # routine
        assert "host03: failed" in text and "measures its caches" in text  # not routine
        assert "routine hidden, a shows all" in text
        assert "1 warning ·" in text and "1 warnings" not in text
        await pilot.press("a")
        await settle(pilot, app)
        text = screen_text(app)
        assert "host01: running" in text and "host03: failed" in text
        await pilot.press("a")
        await settle(pilot, app)
        assert "host01: running" not in screen_text(app)


def row_labels(f: fig.HostFigures) -> list[str]:
    return [r.label for r in host_rows(f, PaneStyles.plain())]


def row_numbers(f: fig.HostFigures) -> list[str]:
    return ["".join(s.text for s in r.numbers).strip() for r in host_rows(f, PaneStyles.plain())]


def test_rows_of_figures_the_step_does_not_produce_are_left_out() -> None:
    read = fig.Latency(p50=30e-6, p99=60e-6, p999=90e-6)
    seen = {"io_ops": ("read", "write"), "latency_ops": ("read", "write"),
            "metrics": frozenset({"iops", "bandwidth_bytes", "latency_seconds", "cpu_ratio"})}
    # a read-only step: no "lat w –/–/–"
    f = fig.HostFigures("h", "running", iops={"read": 1000.0}, bandwidth={"read": 4e6},
                        latency={"read": read}, cpu_busy=0.5, **seen)  # type: ignore[arg-type]
    assert row_labels(f) == ["IOPS", "BW", "lat r", "cpu"]
    # a network step after it: no IOPS, bandwidth or latency rows of "–"
    f = fig.HostFigures("h", "running", net_send=1e8, net_receive=1e8, cpu_busy=0.5,
                        io_ops=("read", "write"), latency_ops=("read", "write"),
                        metrics=frozenset({"iops", "latency_seconds", "net_bandwidth_bytes",
                                           "cpu_ratio"}))
    assert row_labels(f) == ["net", "cpu"]
    # a host that stopped reporting keeps every row it had, its values "–"
    f = fig.HostFigures("h", "running", stale=True, **seen)  # type: ignore[arg-type]
    assert row_labels(f) == ["IOPS", "BW", "lat r", "lat w", "cpu"]
    assert row_numbers(f)[0] == "r –  w –"
    # a step's first second, before its first figures: no rows of "–" (the pane says it)
    f = fig.HostFigures("h", "running", **seen)  # type: ignore[arg-type]
    assert row_labels(f) == []
    lines = pane_lines(fleet_state(1), f, width=60, height=8, end=NOW, window=60.0,
                       styles=PaneStyles.plain())
    assert "running, waiting for its first figures" in lines_text(lines).plain
    # a finished host: its run's end-of-run figures alone, or a word
    f = fig.HostFigures("h", "done", iops={"read": 232.0}, bandwidth={"read": 2.4e8},
                        latency={"read": read}, final=True, **seen)  # type: ignore[arg-type]
    assert row_labels(f) == ["IOPS", "BW", "lat r"]
    f = fig.HostFigures("h", "done", **seen)  # type: ignore[arg-type]
    lines = pane_lines(fleet_state(1), f, width=60, height=8, end=NOW, window=60.0,
                       styles=PaneStyles.plain())
    assert row_labels(f) == [] and lines_text(lines).plain.split("\n")[0].strip() == "done"


def test_a_row_shows_only_the_directions_the_step_measures() -> None:
    read = fig.Latency(p50=30e-6, p99=60e-6, p999=90e-6)
    f = fig.HostFigures("h", "running", iops={"read": 1000.0}, bandwidth={"read": 4e6},
                        latency={"read": read}, devices=[fig.DeviceFigures(
                            "vda", util=0.5, await_read=1e-3)],
                        io_ops=("read", "write"), latency_ops=("read", "write"),
                        metrics=frozenset({"iops", "bandwidth_bytes", "latency_seconds",
                                           "disk_await_seconds"}))
    numbers = row_numbers(f)
    assert numbers[:2] == ["r 1.00k", "r 3.81 MiB/s"]
    assert numbers[-1] == "r 1.00 ms"  # the device's await: reads only
    assert not any("–" in n for n in numbers), numbers


def test_the_latency_legend_keeps_its_spaces_over_missing_values() -> None:
    f = fig.HostFigures("h", "running", stale=True, io_ops=("read",), latency_ops=("read",),
                        metrics=frozenset({"latency_seconds"}))
    (lat,) = [r for r in host_rows(f, PaneStyles.plain()) if r.label == "lat r"]
    assert lat.legend is not None
    assert "".join(s.text for s in lat.legend).split() == ["p50", "p99", "p99.9"]


def test_stretch_spreads_seconds_over_columns() -> None:
    assert stretch([1.0, 2.0, 3.0], 6) == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert stretch([1.0, None], 5) == [1.0, 1.0, 1.0, None, None]
    assert stretched_width(154, 30 / 154) == 30
    assert seconds_per_column(30.0, 154) * 154 == pytest.approx(30.0)


@pytest.mark.parametrize(("metric", "top", "text"), [
    ("iops", 28_512.0, "28.5k"), ("bandwidth_bytes", 111 * 2**20, "111M/s"),
    ("bandwidth_bytes", 1.57 * 2**20, "1.57M/s"), ("latency_seconds", 1.234, "1.23s"),
    ("latency_seconds", 264e-6, "264µs"), ("disk_await_seconds", 1.62e-3, "1.62ms"),
    ("disk_util_ratio", 0.732, "73.2%"), ("net_bandwidth_bytes", 9.41e9 / 8, "9.41Gb"),
    ("iops", None, "")])
def test_a_charts_scale_fits_its_column(metric: str, top: float | None, text: str) -> None:
    assert scale_text(metric, top) == text
    assert len(text) <= SCALE_WIDTH - 1


async def test_notices_take_lines_of_their_own_never_over_a_pane() -> None:
    app = ConsoleApp(StaticSource(fleet_state(1), NOW))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        pane = app.grid.visible_panes()[0]
        before = pane.region
        app.notify("session finished: every step succeeded; q quits", title="done")
        await settle(pilot, app)
        bar = app.notices.region
        assert bar.height >= 1 and "session finished" in screen_text(app)
        pane = app.grid.visible_panes()[0]
        assert pane.region.bottom <= bar.y  # the pane's bottom border above the notice
        assert pane.region.height < before.height
        text = "\n".join(pane.content_text())
        assert "vda" in text and "cpu" in text  # the rows are still drawn
        await pilot.press("enter")  # the detail view has its own lines for notices
        await settle(pilot, app)
        app.notify("a warning", title="host01", severity="warning")
        await settle(pilot, app)
        (detail_bar,) = app.screen.query(NoticeBar)
        assert any(n.message == "a warning" for n in detail_bar.notices)
        assert "a warning" in screen_text(app)


async def test_a_pane_with_room_shows_each_jobs_direction() -> None:
    app = ConsoleApp(StaticSource(fleet_state(1), NOW))
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot, app)
        text = "\n".join(app.grid.visible_panes()[0].content_text())
        assert re.search(r"rread\s+r 28\.5k", text) and re.search(r"rwrite\s+w 28\.4k", text)
        assert re.search(r"rread\s+r 111 MiB/s", text)
    app = ConsoleApp(StaticSource(fleet_state(16), NOW))
    async with app.run_test(size=(200, 60)) as pilot:  # no room: the rows' numbers only
        await settle(pilot, app)
        assert "rread" not in "\n".join(app.grid.visible_panes()[0].content_text())


def test_screenshot_dir_on_the_console_commands(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from benchtui.cli.main import build_parser

    for command in (["demo"], ["run", "plan.toml"], ["replay", "s.btr"]):
        args = build_parser().parse_args([*command, "--screenshot-dir", str(tmp_path)])
        assert args.screenshot_dir == str(tmp_path)
        with pytest.raises(SystemExit):
            build_parser().parse_args([*command, "--screenshot-dir", str(tmp_path / "nope")])
        assert "is not a directory (create it first)" in capsys.readouterr().err


def test_a_tab_that_begins_inside_a_document_folds_its_end_too() -> None:
    lines = [*fio_document(NOW, 1)[4:], OutputLine(NOW, STEP, "iostat", "  47.74  16.58"),
             *fio_document(NOW, 2)]
    folder = Folder(midway=frozenset({"fio"}))
    out = [text for line in lines for text in folder.feed(line)]
    assert len(out) == 3, out
    assert out[0].endswith("fio| {…5 lines, the rest of a document whose start is no "
                           "longer kept}")
    assert out[1].endswith("iostat|   47.74  16.58")  # another tool's line as it came
    assert "{9 lines}" in out[2]
