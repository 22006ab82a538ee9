"""Scroll bars drawn in whole cells.

Textual draws the ends of a scroll bar's thumb with eighth blocks (``▁▂▃…`` on a vertical
bar, ``▉▊▋…`` on a horizontal one) for a smoother look. In benchtui those are the very
glyphs its charts are drawn with: a thumb's end beside a chart's border (the detail view's
charts, the help, the Output tab, the Jobs table) reads as a chart glyph drawn outside its
box, and a terminal capture (tmux, a screenshot of text) shows nothing else of the bar. Here
the thumb is whole cells of the scroll bar's colour, and the track is blank: nothing on a
scroll bar looks like a chart. ``ConsoleApp`` installs it (``use_whole_cell_scrollbars``).
"""

from __future__ import annotations

from typing import ClassVar

from textual.scrollbar import ScrollBar, ScrollBarRender


class WholeCellScrollBarRender(ScrollBarRender):
    """Textual's scroll bar with its thumb's ends rounded to whole cells."""

    VERTICAL_BARS: ClassVar[list[str]] = [" "] * 8
    HORIZONTAL_BARS: ClassVar[list[str]] = [" "] * 8


def use_whole_cell_scrollbars() -> None:
    """Every scroll bar of the process drawn in whole cells (Textual's documented hook: the
    renderer is a class attribute of ``ScrollBar``)."""
    ScrollBar.renderer = WholeCellScrollBarRender
