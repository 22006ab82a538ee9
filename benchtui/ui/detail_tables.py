"""The detail view's tables (Devices, Jobs) fitted to the screen's width: whole columns.

A table wider than the screen used to be cut at its right edge wherever that fell: in the
middle of a value at 80 columns (p99.9 ``3.82 m`` for ``3.82 ms``). ``FittedTable`` shows
the columns that fit whole, the most important first (``TableSpec.priority``: the row's
names, then IOPS and the tail latencies before the mean and where a figure comes from), in
the table's own order, and says which it left out (``left_out``: the view writes it under
the table). Only when even the row's names do not fit does the table scroll sideways
(``cut``: the columns out of sight then).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.widgets import DataTable


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A table's columns in their order, which are always shown (``names``: what tells a
    row from another), and the others most important first."""

    columns: tuple[str, ...]
    names: int
    priority: tuple[str, ...]


JOBS = TableSpec(("step", "job", "op", "IOPS", "bandwidth", "mean", "p50", "p99", "p99.9",
                  "from"), 3, ("IOPS", "p99", "p99.9", "p50", "bandwidth", "mean", "from"))
DEVICES = TableSpec(("device", "util", "r/s", "w/s", "read", "write", "r_await", "w_await",
                     "queue"), 1, ("util", "r/s", "w/s", "r_await", "w_await", "read",
                                   "write", "queue"))


def fitting_columns(spec: TableSpec, rows: Sequence[Sequence[str]], room: int, *,
                    padding: int = 2) -> list[int]:
    """The indexes of the columns shown in ``room`` cells, in the table's order: every one
    when all fit; else the names and, by priority, the others that fit whole. ``padding``:
    the cells a column adds to its widest text."""
    widths = [max([len(label), *(len(row[i]) for row in rows)]) + padding
              for i, label in enumerate(spec.columns)]
    if sum(widths) <= room:
        return list(range(len(widths)))
    shown = set(range(spec.names))
    used = sum(widths[i] for i in shown)
    for name in spec.priority:
        i = spec.columns.index(name)
        if used + widths[i] <= room:
            shown.add(i)
            used += widths[i]
    return sorted(shown)


class FittedTable(DataTable[str]):
    """A row-cursor table of ``spec``'s columns showing those that fit (module docstring).
    ``show(rows)`` sets its rows; a resize fits them again."""

    def __init__(self, spec: TableSpec, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.spec = spec
        self._rows: list[tuple[str, ...]] = []
        self._shown: list[int] | None = None

    @property
    def left_out(self) -> list[str]:
        """The columns not shown at this width."""
        shown = set(self._shown or range(len(self.spec.columns)))
        return [c for i, c in enumerate(self.spec.columns) if i not in shown]

    @property
    def cut(self) -> list[str]:
        """The columns shown but out of sight, past the right edge (scrolled to with →)."""
        width = self.scrollable_content_region.width
        hidden: list[str] = []
        if width and self.virtual_size.width > width:
            x = 0
            for column in self.columns.values():
                x += column.get_render_width(self)
                if x > width + self.scroll_x:
                    hidden.append(str(column.label))
        return hidden

    def show(self, rows: list[tuple[str, ...]]) -> None:
        self._rows = rows
        self._fill()

    def on_resize(self) -> None:
        if self._rows or self._shown is None:
            self._fill()

    def _fill(self) -> None:
        room = self.scrollable_content_region.width or self.size.width
        shown = fitting_columns(self.spec, self._rows, room, padding=2 * self.cell_padding) \
            if room else list(range(len(self.spec.columns)))
        row = self.cursor_row
        if shown != self._shown:
            self._shown = shown
            self.clear(columns=True)
            self.add_columns(*(self.spec.columns[i] for i in shown))
        else:
            self.clear()
        self.add_rows([tuple(r[i] for i in shown) for r in self._rows])
        if self._rows:
            self.move_cursor(row=min(row, len(self._rows) - 1))
