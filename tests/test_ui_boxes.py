"""Nothing drawn outside its box: at 80x24, 120x40 and 200x60, every view and overlay of the
console (the grid, compact rows, the detail view's four tabs, the help scrolled to its end,
the session log, the mark and quit prompts, the command palette; replay's timeline and its
go-to prompt) has no chart glyph on a cell that is not inside a chart's box
(``tests/screen_cells.py`` walks the cells the terminal gets and asks the compositor which
widget drew each).

One Pilot session per size walks through the views, so the sizes cost three app starts (and
three for replay), not one per view.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from textual.pilot import Pilot

from benchtui.session.replay import ReplayPlayer
from benchtui.store.recording import SessionReader
from benchtui.ui.app import ConsoleApp
from benchtui.ui.replay import ReplayApp, ReplaySource
from benchtui.ui.screens import ConfirmQuitScreen
from benchtui.ui.source import StaticSource
from tests.baseline_recording import fixture_pair
from tests.screen_cells import screen_lines, stray_glyphs
from tests.ui_data import NOW, fleet_state

pytestmark = pytest.mark.usefixtures("utc_clock")

SIZES = [(80, 24), (120, 40), (200, 60)]
View = Callable[[Pilot[int]], Awaitable[None]]


def keys(*pressed: str) -> View:
    async def press(pilot: Pilot[int]) -> None:
        await pilot.press(*pressed)
    return press


async def quit_question(pilot: Pilot[int]) -> None:
    pilot.app.push_screen(ConfirmQuitScreen())


#: (what is shown, how to get there from the grid, how to get back).
CONSOLE_VIEWS: list[tuple[str, View, View]] = [
    ("the grid", keys(), keys()),
    ("compact rows", keys("c"), keys("c")),
    ("detail: charts", keys("enter"), keys()),
    ("detail: charts scrolled down", keys("tab", "end"), keys()),
    ("detail: devices", keys("2"), keys()),
    ("detail: jobs", keys("3"), keys()),
    ("detail: output", keys("4"), keys("escape")),
    ("help", keys("question_mark"), keys()),
    ("help scrolled to its end", keys("end"), keys("escape")),
    ("session log", keys("l"), keys("escape")),
    ("mark prompt", keys("m"), keys("escape")),
    ("quit question", quit_question, keys("n")),
    ("command palette", keys("ctrl+p"), keys("escape")),
]


async def walk(app: ConsoleApp, size: tuple[int, int],
               views: list[tuple[str, View, View]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for name, there, back in views:
            await there(pilot)
            await pilot.pause()
            await pilot.pause(0.05)
            stray = stray_glyphs(app)
            if stray:
                found[name] = [*stray[:5], *screen_lines(app)]
            await back(pilot)
            await pilot.pause()
    return found


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_chart_glyph_outside_a_box(size: tuple[int, int]) -> None:
    app = ConsoleApp(StaticSource(fleet_state(4, failed=1), NOW))
    found = await walk(app, size, CONSOLE_VIEWS)
    assert not found, "\n".join(f"{view}:\n" + "\n".join(lines)
                                for view, lines in found.items())


REPLAY_VIEWS: list[tuple[str, View, View]] = [
    ("replay: the timeline and the panes", keys("end"), keys()),
    ("replay: detail", keys("enter"), keys("escape")),
    ("replay: go-to prompt", keys("g"), keys("escape")),
    ("replay: help scrolled to its end", keys("question_mark", "end"), keys("escape")),
]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_chart_glyph_outside_a_box_in_replay(size: tuple[int, int]) -> None:
    player = ReplayPlayer(SessionReader.open(str(fixture_pair().new)))
    app = ReplayApp(ReplaySource(player))
    found = await walk(app, size, REPLAY_VIEWS)
    assert not found, "\n".join(f"{view}:\n" + "\n".join(lines)
                                for view, lines in found.items())
