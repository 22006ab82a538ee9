"""Which widget drew each cell of a Textual screen, and the chart glyphs drawn outside a
chart's box.

``stray_glyphs(app)`` renders the screen as the terminal gets it (the screens under a modal
one included), finds for every cell holding a chart glyph (a block of eighths, a left block,
a braille dot: what the panes' and the detail view's charts, the header's progress bar and
replay's timeline are drawn with) the widget the compositor placed there, and reports every
such cell that is not inside the content region of a widget that draws charts, nor a
border character of the widget whose border it is on (a footer key's ``▏`` border). A chart
painting past its region, a stale line of another size, a scroll bar's eighth-block thumb
or anything else drawing block glyphs where no chart is shows up as one line each:
``(x, y) '▃' in ScrollBar (not a chart)``.
"""

from __future__ import annotations

from textual._border import BORDER_CHARS
from textual.app import App
from textual.errors import NoWidget
from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget

from benchtui.ui.chart_widgets import AxedChart, SparkChart
from benchtui.ui.header import FleetHeader
from benchtui.ui.pane import HostPane
from benchtui.ui.replay_timeline import TimelineBar

#: The glyphs charts are drawn with.
CHART_GLYPHS = frozenset("▁▂▃▄▅▆▇█▉▊▋▌▍▎▏") | frozenset(map(chr, range(0x2801, 0x2900)))
#: The widgets that draw them, inside their content region.
CHART_OWNERS: tuple[type[Widget], ...] = (HostPane, AxedChart, SparkChart, FleetHeader,
                                          TimelineBar)


def screen_lines(app: App[object]) -> list[str]:
    """The screen's text as the terminal shows it (modal screens over the ones under)."""
    compositor = app.screen._compositor
    from textual._context import visible_screen_stack

    visible_screen_stack.set(app._background_screens)
    return ["".join(seg.text for seg in strip) for strip in compositor.render_strips()]


def _owner(app: App[object], x: int, y: int) -> tuple[Widget, Region] | None:
    """The widget drawn at (x, y): the top screen's, else (through a modal screen's
    transparent background) the screens' under it."""
    screens: list[Screen[object]] = [app.screen, *reversed(app._background_screens)]
    for screen in screens:
        try:
            widget, region = screen.get_widget_at(x, y)
        except NoWidget:
            continue
        if widget is screen and screen is not screens[-1]:
            continue  # the modal screen's own background: what is under it shows
        return widget, region
    return None


def _border_chars(widget: Widget) -> set[str]:
    chars: set[str] = set()
    for edge in (widget.styles.border_top, widget.styles.border_right,
                 widget.styles.border_bottom, widget.styles.border_left):
        kind = edge[0]
        if kind:
            for row in BORDER_CHARS[kind]:
                chars.update(row)
    return chars


def stray_glyphs(app: App[object]) -> list[str]:
    """Every chart glyph on screen outside a chart's box (see the module docstring)."""
    found: list[str] = []
    for y, line in enumerate(screen_lines(app)):
        for x, ch in enumerate(line):
            if ch not in CHART_GLYPHS:
                continue
            owned = _owner(app, x, y)
            if owned is None:
                found.append(f"({x}, {y}) {ch!r} on no widget")
                continue
            widget, region = owned
            name = type(widget).__name__
            inner = region.shrink(widget.styles.gutter)
            frame = region.shrink(widget.styles.border.spacing)
            if inner.contains(x, y):
                if not isinstance(widget, CHART_OWNERS):
                    found.append(f"({x}, {y}) {ch!r} in {name} (not a chart)")
            elif frame.contains(x, y):
                found.append(f"({x}, {y}) {ch!r} in {name}'s padding")
            elif ch not in _border_chars(widget):
                found.append(f"({x}, {y}) {ch!r} on {name}'s border")
    return found
