"""A key on the host grid is answered and drawn in the turn of the event loop that read it,
and a host's new samples drawn in the turn that took them in (``ui/draw_now.py``), with the
frame Textual's own way would have written."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual._compositor import CompositorUpdate
from textual.pilot import Pilot

from benchtui.ui import console_base as app_module
from benchtui.ui.app import ConsoleApp
from benchtui.ui.pane import HostPane
from benchtui.ui.source import StaticSource
from tests.ui_data import NOW, START, fleet_state, timeline

pytestmark = pytest.mark.usefixtures("utc_clock")


def _frames(app: ConsoleApp) -> list[str]:
    """What the app writes to its terminal from now on, frame by frame (headless: what it
    would write)."""
    written: list[str] = []
    display = app._display

    def recorded(screen: Any, update: Any) -> None:
        if isinstance(update, CompositorUpdate):
            written.append(update.render_segments(app.console))
        display(screen, update)

    app._display = recorded  # type: ignore[method-assign]
    return written


async def _settled(pilot: Pilot[object], app: ConsoleApp) -> None:
    app.refresh_display()
    for _ in range(3):
        await pilot.pause()


async def _first_frame_after_p(fast: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    """The first frame written after ``p`` on the grid: handled and drawn at once (``fast``),
    or Textual's way (the key passed from the focused pane up to the app, the frame at the
    screen's next update)."""
    if not fast:
        async def textuals_way(*_args: object) -> bool:
            return False

        monkeypatch.setattr(app_module, "answer_key", textuals_way)
    app = ConsoleApp(StaticSource(fleet_state(4), NOW), refresh_hz=0.01)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settled(pilot, app)
        assert isinstance(app.focused, HostPane)
        frames = _frames(app)
        key = events.Key("p", "p")
        await app.on_event(key)
        if fast:  # answered, and its frame written, before this turn of the loop ended
            assert app.paused and len(frames) == 1 and "PAUSED" in frames[0]
        else:
            assert not app.paused and not frames  # the pane has it: some turns later
            while not frames:
                await pilot.pause()
            assert app.paused
        await _settled(pilot, app)
        assert len(frames) == 1  # Textual found nothing left to draw
        app.exit()
        return frames[0]


async def test_a_key_on_the_grid_is_answered_and_drawn_at_once_as_textual_would_draw_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fast = await _first_frame_after_p(True, monkeypatch)
    textuals = await _first_frame_after_p(False, monkeypatch)
    assert fast == textuals


async def test_new_samples_are_drawn_in_the_turn_that_took_them_in() -> None:
    state = fleet_state(4, seconds=10)
    host = list(state.hosts)[1]
    more = timeline("fio", host, START, 11, phase=1)[10]
    source = StaticSource(state, START + 11.5)
    app = ConsoleApp(source, refresh_hz=0.01)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settled(pilot, app)
        frames = _frames(app)
        pane = next(p for p in app.grid.visible_panes() if p.host == host)
        drawn = pane.renders
        state.on_samples(more)
        app._redraw_hosts({host})  # what the data wakeup calls, DELAY after the samples
        assert pane.renders == drawn + 1 and pane.newest_t == more[0].t and len(frames) == 1
        for _ in range(3):
            await pilot.pause()
        assert len(frames) == 1 and pane.renders == drawn + 1  # nothing left to draw
        app.exit()


async def test_keys_on_other_screens_go_textuals_way() -> None:
    """The help screen's q closes it (the app's q would ask to quit); a mark's note takes
    the letters the grid has keys for."""
    source = StaticSource(fleet_state(2), NOW, busy=True)
    app = ConsoleApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await _settled(pilot, app)
        await pilot.press("question_mark")
        await pilot.press("q")
        await _settled(pilot, app)
        assert app.screen is app.screen_stack[0] and len(app.screen_stack) == 1
        await pilot.press("m", "p", "l", "c", "enter")
        await _settled(pilot, app)
        assert not app.paused and len(app.screen_stack) == 1
        assert [e.data["note"] for e in source.state.events if e.kind == "mark"] == ["plc"]
        app.exit()
