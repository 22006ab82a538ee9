"""The replay timeline: the whole session as one bar, with its steps, notable events, gaps and
the player's position; a click seeks there.

Line 1 is the bar. Each cell covers ``(end - start) / width`` seconds and shows, by priority:
the position (a bright block), an error (``✖``), a warning (``!``), a user's mark (``◆``), the
start of a step (``▏``), a gap in some host's data (``┄``), a step's run (``━``, alternating
styles so that neighbouring steps can be told apart; a failed step in the error style), or
nothing recorded (``─``). Line 2 has the player's status (play/pause, speed, position) at its right
end, names the steps under their start as space allows, and shows the session's start and end
clock times where there is room left. Drawing is a pure
function of a ``Timeline`` and a position (``timeline_lines``), testable with a plain
``rich.Console``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.events import Click
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from benchtui.model import events as ev
from benchtui.session.replay import Timeline

POSITION = "█"
ERROR_MARK = "✖"
WARNING_MARK = "!"
USER_MARK = "◆"
STEP_START = "▏"
GAP = "┄"
STEP_RUN = "━"
NOTHING = "─"


@dataclass(frozen=True, slots=True)
class TimelineStyles:
    step: Style = field(default_factory=Style)
    step_alt: Style = field(default_factory=Style)
    failed: Style = field(default_factory=Style)
    warning: Style = field(default_factory=Style)
    mark: Style = field(default_factory=Style)
    position: Style = field(default_factory=Style)
    muted: Style = field(default_factory=Style)


def _cell(t: float, start: float, span: float, width: int) -> int:
    if span <= 0:
        return 0
    return min(max(int((t - start) / span * width), 0), width - 1)


Runs = list[tuple[str, Style]]


def timeline_lines(timeline: Timeline, position: float, width: int,
                   styles: TimelineStyles | None = None, status: str = "") -> tuple[Text, Text]:
    """The bar and the line under it (``status`` at its right end, then step names and the
    clock at the ends where there is room), ``width`` cells each."""
    bar, names = timeline_runs(timeline, position, width, styles, status)
    return _text(bar), _text(names)


def timeline_runs(timeline: Timeline, position: float, width: int,
                  styles: TimelineStyles | None = None, status: str = "") -> tuple[Runs, Runs]:
    """``timeline_lines`` as runs of text of one style each."""
    styles = styles or TimelineStyles()
    width = max(width, 1)
    start, span = timeline.start, timeline.end - timeline.start
    chars = [NOTHING] * width
    cell_styles = [styles.muted] * width

    def put(i: int, char: str, style: Style) -> None:
        chars[i] = char
        cell_styles[i] = style

    for n, step in enumerate(timeline.steps):
        style = styles.failed if step.ok is False else (styles.step_alt if n % 2 else styles.step)
        first = _cell(step.t0, start, span, width)
        last = _cell(timeline.end if step.t1 is None else step.t1, start, span, width)
        for i in range(first, last + 1):
            put(i, STEP_RUN, style)
    for gap in timeline.gaps:
        for i in range(_cell(gap.t0, start, span, width), _cell(gap.t1, start, span, width) + 1):
            put(i, GAP, styles.warning)
    for step in timeline.steps:
        i = _cell(step.t0, start, span, width)
        put(i, STEP_START, cell_styles[i])
    rank = {USER_MARK: 1, WARNING_MARK: 2, ERROR_MARK: 3}
    for event in timeline.events:
        if event.level == ev.ERROR:
            char, style = ERROR_MARK, styles.failed
        elif event.level == ev.WARNING:
            char, style = WARNING_MARK, styles.warning
        elif event.kind == ev.MARK:
            char, style = USER_MARK, styles.mark
        else:
            continue
        i = _cell(event.t, start, span, width)
        if rank[char] > rank.get(chars[i], 0):
            put(i, char, style)
    put(_cell(position, start, span, width), POSITION, styles.position)
    return _runs(chars, cell_styles), _names_line(timeline, width, styles, status)


def _runs(chars: list[str], styles: list[Style]) -> Runs:
    """Neighbouring cells of the same style as one piece of text (a bar of 200 cells is a
    few dozen runs: what Textual lays out costs by the piece)."""
    return [("".join(map(itemgetter(0), run)), style)
            for style, run in groupby(zip(chars, styles, strict=True), itemgetter(1))]


def _text(runs: Runs) -> Text:
    text = Text()
    for run, style in runs:
        text.append(run, style)
    return text


def _names_line(timeline: Timeline, width: int, styles: TimelineStyles, status: str) -> Runs:
    """``status`` against the right edge; step names under their start cells, where they
    fit; the clock at both ends where there is room left."""
    start, span = timeline.start, timeline.end - timeline.start
    left = time.strftime("%H:%M:%S", time.localtime(start))
    right = time.strftime("%H:%M:%S", time.localtime(timeline.end))
    line = [" "] * width
    line_styles = [styles.muted] * width

    def place(at: int, text: str, style: Style) -> bool:
        if at < 0 or at + len(text) > width:
            return False
        if any(c != " " for c in line[max(at - 1, 0):at + len(text) + 1]):
            return False
        line[at:at + len(text)] = list(text)
        line_styles[at:at + len(text)] = [style] * len(text)
        return True

    if status:
        place(max(width - len(status), 0), status[:width], styles.position)
    for n, step in enumerate(timeline.steps):
        style = styles.failed if step.ok is False else (styles.step_alt if n % 2 else styles.step)
        at = _cell(step.t0, start, span, width)
        if not place(at, step.name, style) and len(step.name) > 8:
            place(at, step.name[:7] + "…", style)
    place(0, left, styles.muted)
    place(width - len(right), right, styles.muted)
    return _runs(line, line_styles)


class TimelineBar(Widget):
    """Two lines under the header; a click on the bar asks to seek there."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--step", "timeline--step-alt", "timeline--failed", "timeline--warning",
        "timeline--mark", "timeline--position", "timeline--muted"}
    DEFAULT_CSS = """
    TimelineBar { height: 2; padding: 0 1; background: $panel; }
    TimelineBar > .timeline--step { color: $primary; }
    TimelineBar > .timeline--step-alt { color: $secondary; }
    TimelineBar > .timeline--failed { color: $error; text-style: bold; }
    TimelineBar > .timeline--warning { color: $warning; }
    TimelineBar > .timeline--mark { color: $accent; text-style: bold; }
    TimelineBar > .timeline--position { color: $accent; text-style: bold; }
    TimelineBar > .timeline--muted { color: $text-muted; }
    """

    class Seek(Message):
        """The user clicked the bar at ``fraction`` (0..1) of the session."""

        def __init__(self, fraction: float) -> None:
            super().__init__()
            self.fraction = fraction

    def __init__(self, timeline: Timeline) -> None:
        super().__init__(id="replay-timeline")
        self.timeline = timeline
        self.position = timeline.start
        self._key: tuple[object, ...] | None = None
        self._text = Text()
        self._lines: list[Runs] = []
        self._strips: list[Strip] = []

    def _styles(self) -> TimelineStyles:
        get = self.get_component_rich_style
        return TimelineStyles(get("timeline--step"), get("timeline--step-alt"),
                              get("timeline--failed"), get("timeline--warning"),
                              get("timeline--mark"), get("timeline--position"),
                              get("timeline--muted"))

    def update_position(self, position: float, generation: int = 0, status: str = "") -> bool:
        """Redraw when the position moved to another cell or the status changed (or the
        look did)."""
        width = self.content_region.width or self.size.width
        cell = _cell(position, self.timeline.start, self.timeline.end - self.timeline.start,
                     max(width, 1))
        key = (cell, width, generation, status)
        self.position = position
        if key == self._key:
            return False
        try:
            styles = self._styles()
        except KeyError:  # not styled yet (the first ticks of the app): draw next time
            return False
        self._key = key
        bar, names = timeline_runs(self.timeline, position, width, styles, status)
        self._text = Text("\n").join([_text(bar), _text(names)])
        self._lines = [bar, names]
        self._strips = []
        self.refresh()
        return True

    def render(self) -> Text:
        """The two lines as one Text (tests; Textual draws ``render_line``)."""
        return self._text

    def render_line(self, y: int) -> Strip:
        """Line ``y``, as strips made once per change: laying the Text out took Textual
        ~20 ms at 200 columns, after every seek and every second of playing."""
        width = self.content_region.width or self.size.width
        if not self._strips or self._strips[0].cell_length != width:
            base = self.rich_style
            self._strips = [Strip([Segment(run, base + style) for run, style in line])
                            .extend_cell_length(width, base).crop(0, width)
                            for line in self._lines]
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(width, self.rich_style)

    def on_click(self, event: Click) -> None:
        width = self.content_region.width
        offset = event.get_content_offset(self)
        if width <= 0 or offset is None:
            return
        self.post_message(self.Seek(min(max((offset.x + 0.5) / width, 0.0), 1.0)))
