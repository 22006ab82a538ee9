"""Textual's compositor, asking only the widgets that a frame's changes touch for their lines.

A partial update (a frame drawing what changed, not the whole screen) renders within the
bounding box of its dirty regions, and Textual asks every visible widget whose *clip*
overlaps that box for its lines. The host panes' clip is the grid they sit in, which every
box overlaps: each frame asked all 32 panes for their lines and cut them at the screen's
cuts, ~1.2 ms a frame, whatever changed. Since host panes are drawn when their samples
arrive (``data_wakeup.py``: many small frames rather than 8 big ones a second), that cost
counted: ~30 frames a second. ``CroppingCompositor`` leaves out the widgets whose own region
does not meet the box: nothing of theirs is inside it, so the frame is the same
(``tests/test_ui_data_wakeup.py`` compares the screens). A full update is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class CroppingCompositor(Compositor):
    """``Compositor`` whose partial updates render only the widgets inside their crop."""

    _crop: Region | None = None

    @property
    def visible_widgets(self) -> dict[Widget, tuple[Region, Region]]:
        widgets = super().visible_widgets
        crop = self._crop
        if crop is None:
            return widgets
        overlaps = crop.overlaps
        return {w: found for w, found in widgets.items() if overlaps(found[0])}

    def _get_renders(self, crop: Region | None = None
                     ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        self._crop = crop
        try:
            yield from super()._get_renders(crop)
        finally:
            self._crop = None
