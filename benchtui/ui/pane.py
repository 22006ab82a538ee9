"""One host's pane in the grid: its state, current numbers and small charts.

A pane takes new figures only when the host's data changed or a step started or ended
(``figures_key``), and redraws only when the figures or the display did (a host that
stopped reporting still has its charts move on, every ``IDLE_REDRAW`` seconds). What it
draws comes from ``pane_content`` (pure); the widget caches the lines as strips and serves
them through Textual's line API, so a frame costs no text layout. New data refreshes the
content region only (the border's lines are drawn again only when the title or a style
changes), and ``ReusedFrame`` hands Textual the new content lines inside the border it drew
last rather than having Textual draw each line whole
(benchmarks/ui_render.py measures what that saves).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.events import Click
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip

from benchtui.store.fleet import HOST_STATES, FleetState
from benchtui.ui import figures as fig
from benchtui.ui.chart_widgets import ChartPaintObserver
from benchtui.ui.pane_content import (
    COMPACT_HEADER,
    COMPACT_HEADER_VERSUS,
    Cells,
    ChartCaches,
    ChartSpan,
    PaneStyles,
    compact_line,
    pane_lines,
    subtitle_of,
    title_of,
)
from benchtui.ui.reused_lines import ReusedFrame

if TYPE_CHECKING:
    from benchtui.ui.ghost import Ghost

__all__ = ["COMPACT_HEADER", "COMPACT_HEADER_VERSUS", "IDLE_REDRAW", "HostPane", "figures_key"]

#: Seconds between redraws of a pane whose host sends nothing (its charts move on).
IDLE_REDRAW = 2.0
_text, _style, _control = itemgetter(0), itemgetter(1), itemgetter(2)  # a Segment's parts


def figures_key(state: FleetState, host: str, now: float) -> tuple[object, ...]:
    """What a host's figures depend on (a pane takes new figures when it changes, and the
    header with it: ``FleetHeader``): its data and state, whether it went stale, and the
    step they belong to (the store's scope moves at a step's start and end: a figure shown
    belongs to the step it is shown under, from the step's first frame). Its last item is
    whether the host is stale."""
    view = state.hosts[host]
    stale = view.last_sample_t is None or view.last_sample_t < fig.since(now)
    return (state.store.scope, len(state.steps), view.samples, view.state, view.reason,
            view.warnings, stale)


class _Added(dict[Style | None, Style]):
    """Styles added to a pane's base style, each made once: ``added[style]`` is
    ``base + style``."""

    def __init__(self, base: Style) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, style: Style | None) -> Style:
        full = self[style] = self.base + style
        return full


class HostPane(ReusedFrame, can_focus=True):
    """A host in the grid. Enter or a click opens its detail view."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"pane--label", "pane--read", "pane--write",
                                             "pane--both", "pane--muted", "pane--warn",
                                             "pane--p50", "pane--p99", "pane--p999",
                                             "pane--better", "pane--ghost-read",
                                             "pane--ghost-write", "pane--ghost-lat"}
    BINDINGS: ClassVar[list[BindingType]] = [("enter", "open", "Details")]

    DEFAULT_CSS = """
    HostPane { height: 1fr; width: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    HostPane.-compact { height: 1; border: none; padding: 0 0; }
    HostPane:focus { border: round $accent; }
    HostPane.-compact:focus { background: $boost; }
    """

    class Open(Message):
        """The user asked for a host's detail view."""

        def __init__(self, host: str) -> None:
            super().__init__()
            self.host = host

    def __init__(self, host: str) -> None:
        super().__init__(id=None, classes="host-pane")
        self.host = host
        self.figures: fig.HostFigures | None = None
        #: The content's lines, styled (the pane's base style added), and their strips as
        #: Textual asks for them: ``ReusedFrame`` takes the lines without making strips.
        self._lines: list[list[Segment]] = []
        self._strips: list[Strip | None] = []
        self._width = 0
        self._state_seen: FleetState | None = None
        #: The charts' columns, kept between drawings (``chart_cache``), for one state.
        self._chart_caches: ChartCaches = {}
        self._cached_for: FleetState | None = None
        #: (Textual's line 0 when the base style was read, the base style, styles added to it)
        self._base: tuple[Strip | None, Style, _Added] | None = None
        self._key: tuple[object, ...] | None = None
        self._data_key: tuple[object, ...] | None = None
        self._stale = True
        self._blank = Strip.blank(0)
        self._generation = 0
        self._styles: tuple[int, PaneStyles] | None = None
        self._draw_args: tuple[FleetState, float, float, Ghost | None] | None = None
        self._border_words: tuple[str, str] | None = None
        #: Newest sample time drawn (for the render-latency benchmark's paint hook).
        self.newest_t: float | None = None
        #: How many times the content was drawn (tests, benchmarks).
        self.renders = 0
        #: What the charts covered when last drawn: columns x seconds per column.
        self.chart_span = ChartSpan()

    def styles_for_pane(self) -> PaneStyles:
        """The theme's styles for the parts (colours only: the background is the pane's),
        read once per theme (``generation``)."""
        if self._styles is not None and self._styles[0] == self._generation:
            return self._styles[1]
        plain = PaneStyles.plain()

        def get(name: str, coloured: bool = False) -> Style:
            fallback: Style = getattr(plain, name.removeprefix("pane--").replace("-", "_"))
            style = self.get_component_rich_style(name, partial=True, default=fallback)
            # a theme made before the percentile bands had colours: the plain ones
            return fallback if coloured and style.color is None else style

        styles = PaneStyles(get("pane--label"), get("pane--read"), get("pane--write"),
                            get("pane--both"), get("pane--muted"), get("pane--warn"),
                            get("pane--p50", True), get("pane--p99", True),
                            get("pane--p999", True), get("pane--better", True),
                            get("pane--ghost-read", True), get("pane--ghost-write", True),
                            get("pane--ghost-lat", True))
        self._styles = (self._generation, styles)
        return styles

    def update_from(self, state: FleetState, now: float, end: float, window: float,
                    generation: int, *, ghost: Ghost | None = None) -> bool:
        """Take new figures when the host's data changed, and redraw when the figures or
        the display did (True then). A host that reports redraws with each new sample; one
        that does not still has its charts move on every ``IDLE_REDRAW`` seconds. The lines
        are drawn at the next render, at the pane's size then. ``generation`` changes with
        the theme and other display settings (and a baseline's ghost starting over).
        ``ghost``: the baseline, drawn with the host's own data (its shares of the
        baseline's taken with the figures)."""
        view = state.hosts.get(self.host)
        if view is None:
            return False
        data = figures_key(state, self.host, now)
        stale = data[-1]
        idle = stale or view.state not in ("running", "reconnecting")
        key = (*data, window, generation, int(end // IDLE_REDRAW) if idle else 0)
        same_state = state is self._state_seen  # a replay seek hands a new state
        if key == self._key and same_state:
            return False
        if data != self._data_key or self.figures is None or not same_state:
            self._data_key = data
            self._state_seen = state
            f = self.figures = fig.host_figures(state, self.host, now)
            if ghost is not None:
                f.versus = ghost.host_versus(f, now)
            self.newest_t = view.last_sample_t
            self._set_border(title_of(f), subtitle_of(f))
            # Textual restyles the pane (and its 9 component classes: ~1 ms) on every class
            # change: set them all, then restyle once (a replay seek changes 16 panes' states)
            changed = False
            for s in HOST_STATES:
                if self.has_class(f"-{s}") != (f.state == s):
                    self.set_class(f.state == s, f"-{s}", update=False)
                    changed = True
            if self.has_class("-stale") != f.stale:
                self.set_class(f.stale, "-stale", update=False)
                changed = True
            if changed:
                self.update_node_styles()
        self._key = key
        self._generation = generation
        self._draw_args = (state, end, window, ghost)
        self._stale = True
        size = self.content_size
        if size.width and size.height:
            # the content only: the border's lines (title, subtitle) stay as Textual drew them
            # unless they changed, which refreshes the whole pane
            self.refresh(Region(0, 0, size.width, size.height))
        else:
            self.refresh()
        return True

    def _set_border(self, title: str, subtitle: str) -> None:
        """Set the border's words when they changed (setting them repaints the border)."""
        if (title, subtitle) != self._border_words:
            self._border_words = (title, subtitle)
            self.border_title = title
            self.border_subtitle = subtitle

    def _draw(self, width: int, height: int) -> list[Cells]:
        f, args = self.figures, self._draw_args
        if f is None or args is None:
            return [[Segment(self.host)]]
        state, end, window, ghost = args
        styles = self.styles_for_pane()
        if state is not self._cached_for:  # a new state (replay seek): new series
            self._chart_caches = {}
            self._cached_for = state
        caches = self._chart_caches
        if self.has_class("-compact"):
            return [compact_line(state, f, width=width, end=end, window=window, styles=styles,
                                 caches=caches, versus=ghost is not None)]
        return pane_lines(state, f, width=width, height=height, end=end, window=window,
                          styles=styles, caches=caches, ghost=ghost, drawn=self.chart_span)

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the content, from the cache (rebuilt after a change or a resize)."""
        if self._stale:
            self._rebuild()
        if 0 <= y < len(self._strips):
            strip = self._strips[y]
            if strip is None:
                strip = self._strips[y] = Strip(self._lines[y], self._width)
            return strip
        return self._blank

    def content_text(self) -> list[str]:
        """The content's lines as drawn, as plain text (tests)."""
        if self._stale:
            self._rebuild()
        return ["".join(seg.text for seg in line) for line in self._lines]

    def content_cells(self, y: int) -> tuple[list[Segment], int] | None:
        """``ReusedFrame``: line ``y``'s segments and width, without making a Strip."""
        if self._stale:
            self._rebuild()
        if 0 <= y < len(self._lines):
            return self._lines[y], self._width
        return None

    def _base_style(self) -> tuple[Style, _Added]:
        """The pane's own style (background, colour), and a memo of styles added to it.
        Reading it walks up the DOM; it is read again when Textual drew the pane's top line
        anew since (any style change, focus or resize has Textual draw the pane whole)."""
        cache = getattr(self._styles_cache, "_cache", None)
        anchor = cache.get(0) if isinstance(cache, dict) else None
        base = self._base
        if base is None or anchor is None or base[0] is not anchor:
            style = self.rich_style
            base = self._base = (anchor, style, _Added(style))
        return base[1], base[2]

    def _rebuild(self) -> None:
        size = self.content_size
        width, height = size.width, size.height
        base, added = self._base_style()
        full = added.__getitem__
        lines = []
        for line in self._draw(width, height):
            # Segment.apply_style with the sums kept, a line at a time in C-level passes
            # (lines of the pane's own drawing have no control segments)
            if any(map(_control, line)):
                styled = [Segment(text, None, control) if control is not None
                          else Segment(text, full(style)) for text, style, control in line]
            else:
                styled = list(map(Segment, map(_text, line), map(full, map(_style, line))))
            # the lines are drawn to the width; for safety, measured (the whole line at once:
            # rich's cell_len takes a line of single-width characters at C speed)
            if cell_len("".join(map(_text, styled))) != width:
                styled = Segment.adjust_line_length(styled, width, base)
            lines.append(styled)
        self._lines = lines
        self._width = width
        self._strips = [None] * len(lines)
        self._blank = Strip.blank(width, base)
        self._stale = False
        self.renders += 1
        hook = ChartPaintObserver.hook
        if hook is not None and self.newest_t is not None:
            hook(self, self.newest_t)

    def invalidate(self) -> None:
        """Draw again at the next frame (size, mode or style changed)."""
        self._stale = True
        self.refresh()

    def on_resize(self) -> None:
        self.invalidate()

    def on_focus(self) -> None:
        self.invalidate()  # the focused style may change the background

    def on_blur(self) -> None:
        self.invalidate()

    def action_open(self) -> None:
        self.post_message(self.Open(self.host))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus()
        self.post_message(self.Open(self.host))
