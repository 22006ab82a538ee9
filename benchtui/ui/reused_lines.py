"""A widget mixin: hand the compositor the same lines again while nothing changed.

Textual's compositor, on every frame, asks each visible widget that overlaps the bounding box of
the frame's dirty regions for its lines. A widget whose content did not change is served from
Textual's own line cache, but the call still costs: its background colours (walked up the DOM),
the styles of its border title and subtitle, every line passed through the app's line filters,
cropping. With 32 host panes whose hosts report at different phases of the second, each frame
has a few changed panes spread over the screen, so every pane pays that eight times a second
for the one time its content changes (benchmarks/ui_render.py: a large part of what the console
cost before this).

``ReusedLines.render_lines`` returns the list it returned last time when the crop, the widget's
size and the line filters are the same and Textual's line cache still holds the very same line
objects, none marked dirty: Textual clears or re-renders those on every refresh, style change
(focus, hover, theme) and resize, so the result is the one Textual would have computed. When
the internals it checks are not there (another Textual version), it steps aside.

``ReusedFrame`` (host panes) also assembles a widget's dirty content lines inside the border
Textual drew last; ``ReusingScreen`` and ``ReusingFooter`` are Textual's screen and footer
with the mixin: the compositor asks both for their lines on every frame. ``_release`` breaks
the reference cycles of replaced lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Footer

from benchtui.ui.cropping_compositor import CroppingCompositor

_Reused = tuple[Region, Size, Sequence[object], list[Strip | None], list[Strip]]


def _same(a: Sequence[object], b: Sequence[object]) -> bool:
    """The same objects, one for one (compared in C: every pane asks this each frame)."""
    return len(a) == len(b) and all(map(is_, a, b))


class ReusedLines(Widget):
    """Mix in before a Textual widget class (``class Pane(ReusedLines, Widget)``)."""

    _reused: _Reused | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        styles_cache = self._styles_cache
        cache = getattr(styles_cache, "_cache", None)
        dirty = getattr(styles_cache, "_dirty_lines", None)
        if (not isinstance(cache, dict) or not isinstance(dirty, set)
                or (self.auto_links and self.hover_style)):  # link hover restyles lines
            return super().render_lines(crop)
        filters = self.app.get_line_filters()
        size = self.outer_size  # ``size`` asks the compositor's map, twice per widget a frame
        lines = crop.line_range
        last = self._reused
        if (last is not None and last[0] == crop and last[1] == size
                and _same(last[2], filters) and dirty.isdisjoint(lines)
                and _same(last[3], list(map(cache.get, lines)))):
            return last[4]
        self._frame_lines(cache, dirty, crop)
        strips = self._cached_render(cache, dirty, crop, filters)
        if strips is None:
            strips = super().render_lines(crop)
        self._learn_frame(cache, crop)
        self._reused = (crop, size, filters, list(map(cache.get, lines)), strips)
        if last is not None:
            _release(last[4], strips)
        return strips

    def _frame_lines(self, cache: dict[int, Strip], dirty: set[int], crop: Region) -> None:
        """Put dirty lines in Textual's line cache before it renders (``ReusedFrame``)."""

    def _cached_render(self, cache: dict[int, Strip], dirty: set[int], crop: Region,
                       filters: Sequence[LineFilter]) -> list[Strip] | None:
        """What Textual's render would return when every line is in its cache (``ReusedFrame``);
        None to have Textual render."""
        return None

    def _learn_frame(self, cache: dict[int, Strip], crop: Region) -> None:
        """Look at the lines Textual rendered (``ReusedFrame``)."""


#: (line 0 when learnt, widget width, content width, segments left and right of the content,
#: the widget's background then)
_Frame = tuple[Strip, int, int, list[Segment], list[Segment], Color]


class ReusedFrame(ReusedLines):
    """``ReusedLines`` for a widget with a border whose content is refreshed on its own (a host
    pane refreshes its content region each second; a new title refreshes it all).

    Textual draws each dirty line of a widget whole: border, padding and content, styled, a
    few Strips per line; for 32 panes that was as much work as drawing the panes' content.
    Here a dirty content line is put together from the widget's own line (``render_line``)
    and the segments Textual drew left and right of it the last time, and handed to Textual's
    line cache as if Textual had drawn it (its filters still apply). The frame is learnt from
    a line Textual drew whose middle is the very segments of the widget's line (so no tint,
    opacity or hatch changed them), and forgotten when line 0, the top border, is not the
    one it was learnt with: Textual empties its cache on every full refresh, style change
    (focus, theme) and resize. Widgets without a top border are left to Textual."""

    _frame: _Frame | None = None

    def _frame_lines(self, cache: dict[int, Strip], dirty: set[int], crop: Region) -> None:
        frame = self._frame
        if frame is None or not dirty:
            return
        anchor, width, content_width, left, right, background = frame
        content = self.content_size
        if cache.get(0) is not anchor or self.region.width != width \
                or content.width != content_width:
            self._frame = None
            return
        top = self.styles.gutter.top
        unfiltered = _unfiltered(self.app.get_line_filters(), background)
        for y in crop.line_range:
            row = y - top
            if y in dirty and 0 <= row < content.height:
                cells = self.content_cells(row)
                if cells is not None and cells[1] == content_width:
                    strip = cache[y] = Strip([*left, *cells[0], *right], width)
                    dirty.discard(y)
                    if unfiltered is not None:
                        unfiltered(strip)

    def content_cells(self, y: int) -> tuple[Sequence[Segment], int] | None:
        """Line ``y`` of the content as segments and its cell length (the widget's
        ``render_line`` unless it has them without making a Strip)."""
        line = self.render_line(y)
        return list(line), line.cell_length

    def _learn_frame(self, cache: dict[int, Strip], crop: Region) -> None:
        if self._frame is not None:
            return
        styles = self.styles
        anchor = cache.get(0)
        if anchor is None or not styles.border_top[0]:
            return
        top = styles.gutter.top
        content = self.content_size
        for y in crop.line_range:
            row = y - top
            drawn = cache.get(y)
            if drawn is None or not 0 <= row < content.height:
                continue
            line = self.render_line(row)
            inner = list(line)
            segments = list(drawn)
            if line.cell_length != content.width or not inner:
                continue
            for start in range(min(4, len(segments) - len(inner)) + 1):
                middle = segments[start:start + len(inner)]
                if all(a is b for a, b in zip(middle, inner, strict=True)):
                    self._frame = (anchor, self.region.width, content.width,
                                   segments[:start], segments[start + len(inner):],
                                   self.background_colors[1])
                    return

    def _cached_render(self, cache: dict[int, Strip], dirty: set[int], crop: Region,
                       filters: Sequence[LineFilter]) -> list[Strip] | None:
        """Textual's ``StylesCache.render`` for the case where the frame is known and every
        line of ``crop`` is in the cache and clean (``_frame_lines`` put the new ones there):
        each line through the line filters (each strip caches what a filter made of it) and
        cut to the crop's columns. Textual's own render also reads the widget's background,
        border title styles and more, walking up the DOM each time: with a new pane a frame,
        that was as much again as putting its lines together."""
        frame = self._frame
        if frame is None or cache.get(0) is not frame[0] or self.BLANK:
            return None
        width = frame[1]
        if getattr(self._styles_cache, "_width", None) != width or self.region.width != width:
            return None
        lines = crop.line_range
        if not dirty.isdisjoint(lines):
            return None
        background = frame[5]
        strips = []
        for y in lines:
            strip = cache.get(y)
            if strip is None:
                return None
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips


def _unfiltered(filters: Sequence[LineFilter], background: Color
                ) -> Callable[[Strip], None] | None:
    """When the app's only line filter is Textual's ANSI-to-truecolor one (as it is unless
    ANSI colours are kept or colour is off), a function that marks a strip as already
    filtered if the filter would give it back unchanged (every style truecolor already, as
    benchtui's themes are): the filter builds a new strip of new segments for every new line,
    a good part of a pane's cost. None for any other filters."""
    if len(filters) != 1 or not isinstance(filters[0], ANSIToTruecolor):
        return None
    ansi = filters[0]
    key = (ansi, background)
    truecolor = ansi.truecolor_style
    rich_background = background.rich_color
    known = _TRUECOLOR.get(key)
    if known is None:
        if len(_TRUECOLOR) > 64:  # themes and backgrounds come and go: a few at a time
            _TRUECOLOR.clear()
        known = _TRUECOLOR[key] = {}
    kept = known.get

    def mark(strip: Strip) -> None:
        cache = getattr(strip, "_filter_cache", None)
        if cache is None:
            return
        for _text, style, control in strip:
            if control is not None:
                return
            if style is not None:
                same = kept(style)
                if same is None:
                    same = known[style] = truecolor(style, rich_background) == style
                if not same:
                    return
        cache[key] = strip

    return mark


#: Per (filter, background): whether the filter gives a style back unchanged.
_TRUECOLOR: dict[tuple[LineFilter, Color], dict[Style, bool]] = {}


def _release(old: list[Strip], new: list[Strip]) -> None:
    """Break the reference cycle of each strip of ``old`` not in ``new``: the compositor
    divides every line at the cuts of the screen, and a strip that is one piece caches itself
    in its ``_divide_cache``, so that, once replaced, it (with its segments and seven caches)
    would wait for a full garbage collection; freed now, they leave the collector little to
    do (benchmarks/ui_render.py)."""
    kept = {id(strip) for strip in new}
    for strip in old:
        if id(strip) not in kept:
            for name in ("_divide_cache", "_filter_cache"):  # the latter: ``_unfiltered``
                clear = getattr(getattr(strip, name, None), "clear", None)
                if clear is not None:
                    clear()


class ReusingScreen(ReusedLines, Screen[None]):
    """The console's main screen (``ConsoleApp.get_default_screen``), whose frames render
    only the widgets their changes touch (``cropping_compositor.py``)."""

    def __init__(self) -> None:
        super().__init__()
        self._compositor = CroppingCompositor()


class ReusingFooter(Footer, ReusedLines):
    """Textual's footer with the mixin (after ``Footer``, so that the footer's CSS still
    applies: Textual's CSS follows the first base): its clip is the screen's, so the
    compositor asks it for its line on every frame, wherever the frame's changes are."""
