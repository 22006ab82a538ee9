"""The console app under Textual's Pilot: every key, every host state, notifications.

Data: real fio json+ and iostat output parsed by the real parsers onto a fixed timeline
(tests/ui_data.py); the console's clock is fixed (StaticSource), so what is on screen is known.
"""

from __future__ import annotations

import pytest
from textual.app import App
from textual.command import CommandPalette
from textual.pilot import Pilot

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.format import format_count, format_latency
from benchtui.session.estimate import PlannedRun
from benchtui.ui import figures as fig
from benchtui.ui.app import ConsoleApp
from benchtui.ui.chart_window import WINDOWS
from benchtui.ui.detail import HostDetailScreen
from benchtui.ui.pane import HostPane
from benchtui.ui.screens import ConfirmQuitScreen, HelpScreen, MarkScreen, SessionLogScreen
from benchtui.ui.source import StaticSource
from tests.ui_data import NOW, SECONDS, START, fleet_state, timeline

pytestmark = pytest.mark.usefixtures("utc_clock")


def screen_text(app: App[object]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def settle(pilot: Pilot[object], app: ConsoleApp) -> None:
    app.refresh_display()
    await pilot.pause()
    await pilot.pause()


def make_app(hosts: int = 1, *, busy: bool = False, **kwargs: int) -> tuple[ConsoleApp,
                                                                            StaticSource]:
    source = StaticSource(fleet_state(hosts, **kwargs), NOW, busy=busy)
    return ConsoleApp(source), source


async def test_header_shows_session_step_hosts_and_fleet_figures() -> None:
    app, source = make_app(3)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        f = fig.fleet_figures(source.state, NOW)
        assert "demo" in text and "step randrw-4k" in text
        # 59.5 s of its planned 120 s left, and a run's start and stop (3 s before one has
        # been measured)
        assert f"{(NOW - START) / 120 * 100:3.0f}%" in text and "ETA 1m02s" in text
        assert "elapsed 1m02s" in text and "hosts 3/3 up" in text
        assert f"r {format_count(f.iops['read'])} w {format_count(f.iops['write'])}" in text
        lat = f.latency["read"]
        assert "/".join(format_latency(v) for v in (lat.p50, lat.p99, lat.p999)) in text
        for host in ("host01", "host02", "host03"):
            assert f"● {host} · running" in text


async def test_host_states_show_in_pane_titles_and_classes() -> None:
    app, source = make_app(4, failed=1, reconnecting=1)
    state = source.state
    state.on_event(Event(START - 3, ev.HOST_STATE, "host05: connecting", host="host05",
                         data={"state": "connecting"}))
    async with app.run_test(size=(200, 60)) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "● host01 · running" in text
        assert "◍ host03 · reconnecting" in text and "no data for a while" in text
        assert "✖ host04 · failed" in text
        assert "failed: cannot start fio: No space left on device" in text
        assert "◌ host05 · connecting" in text and "connecting…" in text
        panes = app.grid.panes
        assert panes["host04"].has_class("-failed")
        assert panes["host03"].has_class("-stale")
        # The step ends: hosts are done, the header says the session finished.
        state.on_event(Event(NOW, ev.STEP_END, "step randrw-4k done", step="randrw-4k"))
        state.on_event(Event(NOW, ev.HOST_STATE, "host01: done", host="host01",
                             data={"state": "done"}))
        state.on_event(Event(NOW, ev.SESSION_END, "done with 1 failure(s)", level=ev.ERROR))
        await settle(pilot, app)
        text = screen_text(app)
        assert "✔ host01 · done" in text and "finished ✖" in text


async def test_new_data_reaches_the_screen_and_a_failed_host_does_not_stop_the_others(
        ) -> None:
    app, source = make_app(2)
    state = source.state
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        before = {h: p.renders for h, p in app.grid.panes.items()}
        state.on_event(Event(NOW, ev.HOST_STATE, "host02: failed (lost fio: connection "
                             "closed)", level=ev.ERROR, host="host02", data={"state": "failed"}))
        batch = timeline("fio", "host01", START + SECONDS, 2)[1]
        state.on_samples(batch)
        source.set_now(NOW + 2)
        await settle(pilot, app)
        assert app.grid.panes["host01"].renders > before["host01"]
        text = screen_text(app)
        new_read = sum(s.value for s in batch if s.metric == "iops" and s.labels["op"] == "read")
        assert f"r {format_count(new_read)}" in text
        assert "✖ host02 · failed" in text and "connection closed" in text


async def test_warnings_become_notifications_and_log_lines() -> None:
    app, source = make_app(1)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        source.state.on_event(Event(NOW, ev.PARSE_WARNING, "host01:fio line 12: malformed "
                                    "status line", level=ev.WARNING, host="host01",
                                    step="randrw-4k"))
        await settle(pilot, app)
        assert "malformed status line" in screen_text(app)
        for i in range(6):
            source.state.on_event(Event(NOW, ev.PARSE_WARNING, f"warning {i}",
                                        level=ev.WARNING, host="host01"))
        await settle(pilot, app)
        text = screen_text(app)
        assert "3 more warnings: l shows the log" in text
        await pilot.press("l")
        await settle(pilot, app)
        assert isinstance(app.screen, SessionLogScreen)
        text = screen_text(app)
        assert "malformed status line" in text and "warning 5" in text
        assert "measures its caches" in text  # the preflight warning from before
        assert "host01 [randrw-4k]" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, SessionLogScreen)


async def test_help_lists_every_key() -> None:
    app, _ = make_app(1)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for key, _what in app.help_rows():
            assert key in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_pause_freezes_the_display_while_data_keeps_flowing() -> None:
    app, source = make_app(1)
    state = source.state
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("p")
        await settle(pilot, app)
        assert app.paused and "PAUSED" in screen_text(app)
        frozen = screen_text(app)
        renders = app.grid.panes["host01"].renders
        for batch in timeline("iostat", "host01", START + SECONDS, 3):
            state.on_samples(batch)
        state.on_event(Event(NOW + 3, ev.HOST_STATE, "host01: done", host="host01",
                             data={"state": "done"}))
        source.set_now(NOW + 3)
        await settle(pilot, app)
        assert app.grid.panes["host01"].renders == renders
        assert "· running" in screen_text(app) and "· done" not in frozen
        await pilot.press("p")
        await settle(pilot, app)
        assert not app.paused
        assert "✔ host01 · done" in screen_text(app) and "PAUSED" not in screen_text(app)


async def test_the_header_says_the_sessions_time_left() -> None:
    runs = [PlannedRun("randrw-4k", 120.0), PlannedRun("seqread", 60.0),
            PlannedRun("layout", None)]
    app = ConsoleApp(StaticSource(fleet_state(1), NOW, runs=runs))
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot, app)
        # 59.5 s of this step, 60 s of the next, and 3 s each to start and stop them
        assert "hosts 1/1 up  session ~2m06s left (+1 run of unknown length)" \
            in app.header.render().plain


async def test_a_step_past_its_length_says_what_it_waits_for() -> None:
    source = StaticSource(fleet_state(2), START + 121)
    app = ConsoleApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert "100% waiting for fio on host01, host02" in app.header.render().plain
        source.state.on_event(Event(START + 121.5, ev.RUN_END, "host01: fio exited", ev.INFO,
                                    "host01", "randrw-4k", {}))
        source.set_now(START + 122)
        await settle(pilot, app)
        assert "waiting for fio on host02 " in app.header.render().plain


async def test_plus_and_minus_change_the_chart_window() -> None:
    app, _ = make_app(1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        # fitted to the 120 s step and its start and stop
        assert app.window == 125.0 and "window 2m05s = step" in screen_text(app)
        await pilot.press("plus")
        await settle(pilot, app)
        assert app.window == 300.0 and "window 5m00s " in screen_text(app)
        for _ in range(4):
            await pilot.press("minus")
        await settle(pilot, app)
        assert app.window == WINDOWS[0]
        await pilot.press("minus")
        assert app.window == WINDOWS[0]
        app.action_fit_window()
        await settle(pilot, app)
        assert app.window == 125.0 and "window 2m05s = step" in screen_text(app)


async def test_t_cycles_the_themes() -> None:
    app, _ = make_app(1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        pane = app.grid.panes["host01"]
        assert app.theme == "benchtui-dark"
        dark_read = pane.get_component_rich_style("pane--read").color
        seen = []
        for _ in range(3):
            await pilot.press("t")
            await settle(pilot, app)
            seen.append(app.theme)
        assert seen == ["benchtui-light", "benchtui-high-contrast", "benchtui-dark"]
        await pilot.press("t")
        await settle(pilot, app)
        assert pane.get_component_rich_style("pane--read").color != dark_read


async def test_enter_and_click_open_the_detail_view() -> None:
    app, source = make_app(2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, HostDetailScreen) and app.screen.host == "host01"
        text = screen_text(app)
        assert "host01 · running" in text and "Debian GNU/Linux 12" in text
        assert "IOPS" in text and "now" in text  # an axed chart with its time axis
        await pilot.press("2")
        await settle(pilot, app)
        assert "r_await" in screen_text(app) and "vda" in screen_text(app)
        await pilot.press("3")
        await settle(pilot, app)
        text = screen_text(app)
        assert "rread" in text and "rwrite" in text and "p99.9" in text
        await pilot.press("4")
        await settle(pilot, app)
        assert "iostat| vda 1059.00" in screen_text(app)
        source.state.on_output(__import__("benchtui.model.events", fromlist=["x"]).OutputLines(
            NOW, "host01", "randrw-4k", "fio", "step", ("a new line from fio",)))
        await settle(pilot, app)
        assert "fio| a new line from fio" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, HostDetailScreen)
        await pilot.click(app.grid.panes["host02"])
        await settle(pilot, app)
        assert isinstance(app.screen, HostDetailScreen) and app.screen.host == "host02"


async def test_many_hosts_become_compact_rows_and_pages() -> None:
    app, _ = make_app(32)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        lay = app.grid.layout_now
        assert lay.compact and lay.pages == 2
        text = screen_text(app)
        assert "host01" in text and "host32" not in text
        assert "page 1/2" in text
        await pilot.press("pagedown")
        await settle(pilot, app)
        text = screen_text(app)
        assert "host32" in text and "host01" not in text and "page 2/2" in text
        await pilot.press("pageup")
        await settle(pilot, app)
        assert "host01" in screen_text(app)


async def test_c_toggles_compact_rows() -> None:
    app, _ = make_app(2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert not app.grid.layout_now.compact
        await pilot.press("c")
        await settle(pilot, app)
        assert app.grid.layout_now.compact and "r IOPS" in screen_text(app)
        await pilot.press("c")
        await settle(pilot, app)
        assert not app.grid.layout_now.compact


async def test_q_quits_at_once_when_nothing_runs() -> None:
    app, _ = make_app(1)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 0


async def test_q_asks_while_steps_run_and_stopping_cancels_the_source() -> None:
    app, source = make_app(1, busy=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        assert "stop every process" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmQuitScreen) and not source.cancelled
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause(0.2)
    assert source.cancelled
    assert app.return_value == 130


async def test_ctrl_c_stops_without_asking() -> None:
    app, source = make_app(1, busy=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
    assert source.cancelled and app.return_value == 130


async def test_command_palette_runs_console_commands() -> None:
    app, _ = make_app(2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"Host: host02")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, HostDetailScreen) and app.screen.host == "host02"


async def test_a_new_state_object_starts_the_views_over() -> None:
    app, source = make_app(2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert set(app.grid.panes) == {"host01", "host02"}
        source._state = fleet_state(3, name="replayed")  # what a replay seek does
        await settle(pilot, app)
        await settle(pilot, app)
        assert set(app.grid.panes) == {"host01", "host02", "host03"}
        assert "replayed" in screen_text(app)


async def test_fleet_header_pane_numbers_match_the_figures() -> None:
    app, source = make_app(1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        pane = app.query_one(HostPane)
        f = fig.host_figures(source.state, "host01", NOW)
        text = screen_text(app)
        assert f"r {format_count(f.iops['read'])}  w {format_count(f.iops['write'])}" in text
        assert pane.figures is not None and pane.figures.iops == f.iops


async def test_m_puts_a_mark_with_a_note_and_esc_cancels() -> None:
    app, source = make_app(1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        before = source.state.events_total
        await pilot.press("m")
        assert isinstance(app.screen, MarkScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, MarkScreen)
        assert source.state.events_total == before
        await pilot.press("m")
        await pilot.press(*"scheduler none", "enter")
        await settle(pilot, app)
        marks = [e for e in source.state.events if e.kind == ev.MARK]
        assert [(m.message, m.data["note"], m.t) for m in marks] == [
            ("mark: scheduler none", "scheduler none", NOW)]
        await pilot.press("l")
        await settle(pilot, app)
        assert "mark: scheduler none" in screen_text(app)
