"""The panes' lines as the compositor gets them (``ui/reused_lines.py``: lines handed back
unchanged, content lines put together inside the border Textual drew last, marked as filtered)
are the lines Textual itself renders for the same pane, through data updates, focus, a theme
change and compact rows. If a Textual release changes what these shortcuts rely on, this fails.
"""

from __future__ import annotations

import pytest
from rich.segment import Segment
from textual.geometry import Region
from textual.widget import Widget

from benchtui.ui import reused_lines
from benchtui.ui.app import ConsoleApp
from benchtui.ui.pane import HostPane
from benchtui.ui.source import StaticSource
from tests.ui_data import START, fleet_state, timeline

HOSTS = 4
BEFORE = 20  # seconds of data when the console starts
AFTER = 18  # seconds fed while it runs


pytestmark = pytest.mark.usefixtures("utc_clock")


def drawn(pane: HostPane) -> list[list[Segment]]:
    """What the compositor gets from the pane now."""
    return [list(strip) for strip in pane.render_lines(Region(0, 0, *pane.region.size))]


def textual(pane: HostPane) -> list[list[Segment]]:
    """What Textual renders for the pane from scratch (no shortcut, nothing cached)."""
    pane._styles_cache.clear()
    pane._reused = None
    pane._frame = None
    return [list(strip) for strip in Widget.render_lines(pane, Region(0, 0, *pane.region.size))]


async def test_pane_lines_are_the_ones_textual_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    framed = 0
    original = reused_lines.ReusedFrame._frame_lines

    def counting(self: reused_lines.ReusedFrame, cache: dict[int, object], dirty: set[int],
                 crop: Region) -> None:
        nonlocal framed
        before = len(dirty)
        original(self, cache, dirty, crop)  # type: ignore[arg-type]
        framed += before - len(dirty)

    monkeypatch.setattr(reused_lines.ReusedFrame, "_frame_lines", counting)
    state = fleet_state(HOSTS, seconds=BEFORE)
    names = list(state.hosts)
    more = {h: (timeline("fio", h, START, BEFORE + AFTER, phase=n),
                timeline("iostat", h, START, BEFORE + AFTER, phase=n))
            for n, h in enumerate(names)}
    source = StaticSource(state, START + BEFORE + 0.5)
    app = ConsoleApp(source)
    keys = {3: "tab", 6: "t", 9: "c", 12: "c"}
    checked_at = 0
    async with app.run_test(size=(120, 40)) as pilot:
        for second in range(BEFORE, BEFORE + AFTER):
            for h in names:
                fio, io = more[h]
                state.on_samples(fio[second] + io[second])
            source.set_now(START + second + 1.5)
            app.refresh_display()
            await pilot.pause()
            await pilot.pause()
            if second - BEFORE in keys:
                await pilot.press(keys[second - BEFORE])
                app.refresh_display()
                await pilot.pause()
            if (second - BEFORE) % 3 == 2:  # in between, the frames are learnt again
                # these lines were put together by the shortcut (compact rows: no border)
                assert framed > checked_at or app.grid.layout_now.compact
                for pane in app.grid.panes.values():
                    assert drawn(pane) == textual(pane), (pane.host, second)
                checked_at = framed
