"""A host's pane is drawn when its samples arrive (``ui/data_wakeup.py``), not at the next
tick of the console's clock; and a frame that draws a few panes renders only what it touches
(``ui/cropping_compositor.py``), putting on screen what Textual's own compositor would."""

from __future__ import annotations

import asyncio
import time
import types

import pytest
from textual._compositor import Compositor
from textual.geometry import Region

from benchtui.ui.app import ConsoleApp
from benchtui.ui.cropping_compositor import CroppingCompositor
from benchtui.ui.data_wakeup import DELAY
from benchtui.ui.pane import HostPane
from benchtui.ui.source import StaticSource
from tests.ui_data import START, fleet_state, timeline

HOSTS = 6
BEFORE = 10

pytestmark = pytest.mark.usefixtures("utc_clock")


def _panes(app: ConsoleApp) -> dict[str, HostPane]:
    return {p.host: p for p in app.grid.visible_panes()}


async def test_a_pane_is_drawn_when_its_samples_arrive_not_at_the_tick() -> None:
    state = fleet_state(HOSTS, seconds=BEFORE)
    names = list(state.hosts)
    more = timeline("fio", names[2], START, BEFORE + 3, phase=2)
    source = StaticSource(state, START + BEFORE + 0.5)
    # a tick every 100 s: only the samples' arrival can draw the pane in this test
    app = ConsoleApp(source, refresh_hz=0.01)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.pause(0.3)
        panes = _panes(app)
        drawn = {h: p.newest_t for h, p in panes.items()}
        for i in range(BEFORE, BEFORE + 3):
            source.set_now(START + i + 1.5)
            state.on_samples(more[i])
            sent = time.monotonic()
            target = more[i][0].t
            while panes[names[2]].newest_t != target:
                assert time.monotonic() - sent < 10.0, "the pane was not drawn"
                await asyncio.sleep(0.01)
            # not before the delay that lets hosts reporting together share a frame
            assert time.monotonic() - sent >= DELAY * 0.9
        # the other hosts sent nothing: their panes were left alone
        assert {h: p.newest_t for h, p in panes.items() if h != names[2]} == \
            {h: t for h, t in drawn.items() if h != names[2]}
        app.exit()


def _chops_on_screen(compositor: Compositor, crop: Region, spans: list[tuple[int, int, int]]
                     ) -> dict[tuple[int, int], object]:
    """What a partial update over ``crop`` writes: the chops inside the dirty spans."""
    on_line = {y for y, _x1, _x2 in spans}.__contains__
    chops = compositor._render_chops(crop, on_line)
    out: dict[tuple[int, int], object] = {}
    for y, x1, x2 in spans:
        for x, strip in chops[y].items():
            if x1 <= x < x2 and strip is not None:
                out[(y, x)] = list(strip)
    return out


async def test_a_partial_frame_puts_on_screen_what_textuals_compositor_would(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    render_lines = HostPane.render_lines

    def counted(self: HostPane, crop: Region) -> object:
        asked.append(self.host)
        return render_lines(self, crop)

    monkeypatch.setattr(HostPane, "render_lines", counted)
    state = fleet_state(HOSTS, seconds=BEFORE)
    source = StaticSource(state, START + BEFORE + 0.5)
    app = ConsoleApp(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.pause(0.3)
        compositor = app.screen._compositor
        assert isinstance(compositor, CroppingCompositor)
        panes = list(_panes(app).values())
        for chosen in ([panes[0]], [panes[1], panes[4]], [panes[-1]], panes):
            regions = [p.region for p in chosen]
            crop = Region.from_union(regions)
            spans = list(compositor._regions_to_spans(regions))
            for p in chosen:  # their lines drawn anew, as on a data frame
                p.refresh()
            asked.clear()
            ours = _chops_on_screen(compositor, crop, spans)
            ours_asked = sorted(asked)
            for p in chosen:
                p.refresh()
            asked.clear()
            compositor._get_renders = types.MethodType(  # type: ignore[method-assign]
                Compositor._get_renders, compositor)
            try:
                theirs = _chops_on_screen(compositor, crop, spans)
            finally:
                del compositor._get_renders
            assert ours == theirs and ours
            # Textual asks every pane (their clip is the grid's); this asks the crop's only
            assert sorted(asked) == sorted(p.host for p in panes)
            assert ours_asked == sorted(p.host for p in panes if crop.overlaps(p.region))
            if len(chosen) == 1:
                assert ours_asked == [chosen[0].host]
        app.exit()
