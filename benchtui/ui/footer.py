"""The console's footer: Textual's, keeping the keys that matter when the line is short.

Textual's footer lays its keys out in one line and cuts whatever passes the right edge, and
its command palette key, docked right, covers the last ones: at 80 columns the grid's footer
lost ``q Quit``. ``ConsoleFooter`` measures its keys once they are laid out and, when they
do not all fit, hides first the palette key (Ctrl-P still opens it; the help says so), then
keys from the right, never the ones that close or leave (``KEEP``: quit, help, back).
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets._footer import FooterKey

from benchtui.ui.reused_lines import ReusingFooter

#: Actions whose keys stay shown whatever the width.
KEEP = frozenset({"quit", "app.quit", "help", "app.help", "app.pop_screen", "dismiss"})


def _action(item: Widget) -> str:
    key = item if isinstance(item, FooterKey) else next(
        (k for k in item.query(FooterKey)), None)
    return key.action if isinstance(key, FooterKey) else ""


def shown_items(widths: list[tuple[str, int]], room: int) -> set[int]:
    """Which of the footer's items (their actions and widths, in order) are shown in
    ``room`` cells: all when they fit, else the ones of ``KEEP`` and as many of the others,
    from the left, as fit beside them."""
    if sum(w for _a, w in widths) <= room:
        return set(range(len(widths)))
    shown = {i for i, (action, _w) in enumerate(widths) if action in KEEP}
    used = sum(widths[i][1] for i in shown)
    for i, (_action_name, width) in enumerate(widths):
        if i not in shown and used + width <= room:
            shown.add(i)
            used += width
    return shown


class ConsoleFooter(ReusingFooter):
    """The footer of every console screen (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        #: The items' widths as laid out with everything shown, by item.
        self._measured: dict[int, int] = {}

    async def recompose(self) -> None:
        self._measured = {}
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        items = [c for c in self.children if not c.has_class("-command-palette")]
        palette = [c for c in self.children if c.has_class("-command-palette")]
        for item in [*items, *palette]:
            if id(item) not in self._measured:
                if not item.display:
                    item.display = True  # measured at the next layout
                    self.call_after_refresh(self._fit)
                    return
                width = item.outer_size.width + item.styles.margin.width
                if not width:
                    return  # not laid out yet: ``on_resize`` comes after
                self._measured[id(item)] = width
        room = self.size.width
        widths = [(_action(item), self._measured[id(item)]) for item in items]
        every = sum(w for _a, w in widths)
        palette_width = sum(self._measured[id(p)] for p in palette)
        fits_all = every + palette_width <= room
        for p in palette:
            p.display = fits_all
        shown = shown_items(widths, room if not fits_all else every)
        for i, item in enumerate(items):
            item.display = i in shown
