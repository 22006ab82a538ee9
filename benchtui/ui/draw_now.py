"""A key answered, and new data shown, in the turn of the event loop that made them.

Textual draws a change several turns of the event loop after it was made: a widget's
``refresh`` prompts the widget's message pump; at its idle, the widget tells the screen; at
the screen's idle, the screen's update timer starts; at its next tick (up to 1/60 s later) the
frame is drawn. A key on the host grid took more before it was even handled: the app hands it
to the focused pane, which hands it up to the grid, the screen and back to the app, where the
console's bindings are. Each turn waits for whatever else the loop has ready, and on a busy
controller that is a slice of output parsing (``session/intake.py``: 10 ms and the chunk it
is in, a wide fio json+ document being one): on 32 hosts x 32 fio jobs a key took ~10 turns,
150-600 ms on a loaded 2-core machine (docs/benchmarks/ui_render.md, "Issue 32: the console
on a wide fleet").

``answer_key``: on the host grid (the main screen, a host pane or nothing focused: none of
them takes keys but through bindings), the app's priority bindings, then the bindings from the
focused pane up, run at once, which is what Textual would do after the pane, the grid and the
screen had passed the key on. ``draw_now``: the frame of what was refreshed, drawn at once with
Textual's own compositor, as the screen's update would draw it; when a layout, a scroll, a
restyle or a recomposition is pending it steps aside and Textual draws as usual.
Both read Textual's private state (as ``cropping_compositor.py`` does) and step aside, to
Textual's own way, on a Textual without it; ``tests/test_ui_draw_now.py`` compares the frame
written with the one Textual's way writes.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget


async def answer_key(app: App[Any], event: events.Key, grid: Screen[Any],
                     focus_ok: type[Widget]) -> bool:
    """Run ``event``'s binding at once when ``grid`` is the only screen and the focused widget
    (if any) is a ``focus_ok``; True when a binding took the key (else Textual's way)."""
    if event.is_forwarded or app.screen_stack != [grid] or grid.maximized is not None:
        return False
    focused = app.focused
    if focused is not None and not isinstance(focused, focus_ok):
        return False
    check = getattr(app, "_check_bindings", None)  # what Textual runs (priority first, then up)
    if check is None:
        return False
    app.app_focus = True
    return bool(await check(event.key, priority=True) or await check(event.key))


def draw_now(screen: Screen[Any]) -> bool:
    """Draw ``screen``'s refreshed widgets now, as its next update would; False (nothing
    done) when it is not the current screen or something other than a repaint is pending."""
    app = screen.app
    try:
        if (not screen.is_current or app._batch_count or screen._layout_required
                or screen._scroll_required or screen._recompose_required
                or screen._repaint_required or not hasattr(screen, "_compositor_refresh")
                or not isinstance(screen._dirty_widgets, set)):
            return False
        dirty: list[Widget] = []
        for widget in screen.walk_children(Widget, with_self=False):
            if (widget._layout_required or widget._refresh_styles_required
                    or widget._scroll_required or widget._recompose_required):
                return False
            if widget._repaint_required:
                dirty.append(widget)
    except AttributeError:  # another Textual: its own way
        return False
    for widget in dirty:  # (what its idle would tell the screen: ``Widget._check_refresh``)
        widget._repaint_required = False
    screen._dirty_widgets.update(w for w in dirty if w.display)
    if screen._dirty_widgets:
        screen._compositor.update_widgets(screen._dirty_widgets)
        screen._compositor_refresh()
    return True
