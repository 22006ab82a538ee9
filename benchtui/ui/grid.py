"""The host grid: one pane per host, laid out to fit, paged when they do not.

The layout itself is ``layout.grid_layout`` (pure); this widget applies it: grid cells for full
panes, one line per host in compact mode (with column titles), and only the current page's
panes displayed. Hosts appear as the state mentions them and keep their order.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Container
from textual.events import Resize
from textual.widgets import Static

from benchtui.store.fleet import FleetState
from benchtui.ui.layout import GridLayout, grid_layout
from benchtui.ui.pane import COMPACT_HEADER, COMPACT_HEADER_VERSUS, HostPane
from benchtui.ui.reused_lines import ReusedLines


class HostGrid(ReusedLines, Container):
    """Every host's pane. ``compact`` forces a mode (None: by the space)."""

    DEFAULT_CSS = """
    HostGrid { height: 1fr; }
    HostGrid > #compact-titles { height: 1; display: none; }
    HostGrid.-compact { layout: vertical; }
    HostGrid.-compact > #compact-titles { display: block; }
    HostGrid > #page-info { dock: bottom; height: 1; display: none; text-align: right; }
    HostGrid.-paged > #page-info { display: block; }
    """

    def __init__(self) -> None:
        super().__init__(id="host-grid")
        self.panes: dict[str, HostPane] = {}
        self.layout_now = GridLayout(False, 1, 1, 1)
        self.page = 0
        self.compact: bool | None = None
        self._versus = False

    def compose(self) -> ComposeResult:
        yield Static(COMPACT_HEADER, id="compact-titles")
        yield Static("", id="page-info")

    def show_versus(self, on: bool) -> None:
        """Compact rows' column titles with the baseline's shares (``on``) or without."""
        if on != self._versus:
            self._versus = on
            self.query_one("#compact-titles", Static).update(
                COMPACT_HEADER_VERSUS if on else COMPACT_HEADER)

    def sync_hosts(self, state: FleetState) -> bool:
        """Mount a pane for every host not shown yet; True when some were added."""
        new = [HostPane(h) for h in state.hosts if h not in self.panes]
        if not new:
            return False
        for pane in new:
            self.panes[pane.host] = pane
        self.mount_all(new, before="#page-info")
        self.relayout()
        return True

    def clear_hosts(self) -> None:
        for pane in self.panes.values():
            pane.remove()
        self.panes.clear()
        self.page = 0

    def on_resize(self, event: Resize) -> None:
        self.relayout()

    def relayout(self) -> None:
        width, height = self.size.width, self.size.height
        if not width or not height:
            return
        paged_height = height - 1  # room for the page line, should paging be needed
        lay = grid_layout(len(self.panes), width, height, compact=self.compact)
        if lay.pages > 1:
            lay = grid_layout(len(self.panes), width, paged_height, compact=self.compact)
        self.layout_now = lay
        self.page = min(self.page, lay.pages - 1)
        self.set_class(lay.compact, "-compact")
        self.set_class(lay.pages > 1, "-paged")
        if not lay.compact:
            self.styles.layout = "grid"
            self.styles.grid_size_columns = lay.columns
            self.styles.grid_size_rows = lay.rows
        else:
            self.styles.layout = "vertical"
        self._show_page()

    def _show_page(self) -> None:
        lay = self.layout_now
        first = self.page * lay.per_page
        for i, pane in enumerate(self.panes.values()):
            if pane.has_class("-compact") != lay.compact:
                pane.set_class(lay.compact, "-compact")
                pane.invalidate()
            pane.display = first <= i < first + lay.per_page
        if lay.pages > 1:
            shown = min(first + lay.per_page, len(self.panes))
            self.query_one("#page-info", Static).update(
                f"hosts {first + 1}-{shown} of {len(self.panes)} · page {self.page + 1}/"
                f"{lay.pages} · PgUp/PgDn")

    def visible_panes(self) -> list[HostPane]:
        return [p for p in self.panes.values() if p.display]

    def turn_page(self, delta: int) -> bool:
        pages = self.layout_now.pages
        page = min(max(self.page + delta, 0), pages - 1)
        if page == self.page:
            return False
        self.page = page
        self._show_page()
        visible = self.visible_panes()
        if visible:
            visible[0].focus()
        return True

    def show_host(self, host: str) -> None:
        """Turn to the page that holds ``host`` (focus moved there)."""
        names = list(self.panes)
        if host in names:
            page = self.layout_now.page_of(names.index(host))
            if page != self.page:
                self.page = page
                self._show_page()
