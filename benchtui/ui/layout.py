"""How host panes fit the terminal: a pure function of the host count and the free space.

Full panes (charts and numbers) while every host fits at a readable size; beyond that one
compact row per host (numbers and one sparkline), and pages when even rows do not fit. The
chosen grid keeps panes as close to their comfortable shape as the space allows, so four hosts
on a wide screen sit side by side rather than stacked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The smallest full pane that still shows every line (border included).
PANE_MIN_WIDTH = 38
PANE_MIN_HEIGHT = 9
#: A compact row is one line; a one-line column header sits above the rows.
COMPACT_HEADER = 1


@dataclass(frozen=True, slots=True)
class GridLayout:
    """Where hosts go: ``columns`` x ``rows`` panes (or compact rows) per page."""

    compact: bool
    columns: int
    rows: int
    pages: int

    @property
    def per_page(self) -> int:
        return self.columns * self.rows

    def page_of(self, index: int) -> int:
        return index // self.per_page if self.per_page else 0


def grid_layout(hosts: int, width: int, height: int, *, compact: bool | None = None
                ) -> GridLayout:
    """The layout of ``hosts`` panes in ``width`` x ``height`` cells. ``compact`` forces
    (True) or forbids (False) compact rows; None chooses."""
    hosts = max(hosts, 1)
    width = max(width, 1)
    height = max(height, 1)
    max_cols = max(width // PANE_MIN_WIDTH, 1)
    max_rows = max(height // PANE_MIN_HEIGHT, 1)
    if compact is None:
        compact = hosts > max_cols * max_rows
    if compact:
        rows = max(height - COMPACT_HEADER, 1)
        return GridLayout(True, 1, rows, math.ceil(hosts / rows))
    best: tuple[tuple[float, int, int], int, int] | None = None
    for cols in range(1, max_cols + 1):
        rows = math.ceil(hosts / cols)
        if rows > max_rows:
            continue
        # How much room the tightest dimension has, relative to its minimum; then the fewest
        # empty cells, then the fewest columns (wider panes, longer charts).
        room = min((width / cols) / PANE_MIN_WIDTH, (height / rows) / PANE_MIN_HEIGHT)
        key = (room, -cols * rows, -cols)
        if best is None or key > best[0]:
            best = (key, cols, rows)
    if best is None:  # forced full panes that do not all fit: page them
        cols, rows = max_cols, max_rows
        return GridLayout(False, cols, rows, math.ceil(hosts / (cols * rows)))
    _key, cols, rows = best
    return GridLayout(False, cols, rows, 1)
