"""The replay timeline: the whole session as one bar, with its steps, notable events, gaps and
the player's position; a click seeks there.

Line 1 is the bar, then the player's status (play/pause, speed, position) at its right end.
Each cell of the bar covers ``(end - start) / bar width`` seconds and shows, by priority:
the position (a bright block), an error (``✖``), a warning (``!``), a user's mark (``◆``), the
start of a step (``▏``), a gap in some host's data (``┄``), a step's run (``━``, alternating
styles so that neighbouring steps can be told apart; a failed step in the error style), or
nothing recorded (``─``). Line 2 names every step under its run, in the room its run has
up to the next step's start: whole when it fits, else shorter (``step_label``: a sweep's
``randread ioengine=psync bs=4k#1`` as ``psync 4k#1``, its next runs as ``#2``, ``#3``), cut
with ``…`` last; and the session's start and end clock times where there is room left.
Drawing is a pure function of a ``Timeline`` and a position (``timeline_lines``), testable
with a plain ``rich.Console``.
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
from benchtui.session.replay import Timeline, TimelineStep

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
    """The bar with ``status`` at its right end, and the line under it (step names, the
    clock at the ends where there is room), ``width`` cells each."""
    bar, names = timeline_runs(timeline, position, width, styles, status)
    return _text(bar), _text(names)


#: The bar keeps at least this many cells however long the status.
MIN_BAR = 20
#: A step's name takes at least this many cells ("lay…") even where its run has fewer.
MIN_LABEL = 4


def bar_width(width: int, status: str) -> int:
    """The cells of the bar in a line of ``width`` that ends with ``status`` (and a space
    before it)."""
    if not status:
        return max(width, 1)
    return max(width - len(status) - 1, min(MIN_BAR, width), 1)


def timeline_runs(timeline: Timeline, position: float, width: int,
                  styles: TimelineStyles | None = None, status: str = "") -> tuple[Runs, Runs]:
    """``timeline_lines`` as runs of text of one style each."""
    styles = styles or TimelineStyles()
    width = max(width, 1)
    cells = bar_width(width, status)
    start, span = timeline.start, timeline.end - timeline.start
    chars = [NOTHING] * cells
    cell_styles = [styles.muted] * cells

    def put(i: int, char: str, style: Style) -> None:
        chars[i] = char
        cell_styles[i] = style

    for n, step in enumerate(timeline.steps):
        style = _step_style(step, n, styles)
        first = _cell(step.t0, start, span, cells)
        last = _cell(timeline.end if step.t1 is None else step.t1, start, span, cells)
        for i in range(first, last + 1):
            put(i, STEP_RUN, style)
    for gap in timeline.gaps:
        for i in range(_cell(gap.t0, start, span, cells), _cell(gap.t1, start, span, cells) + 1):
            put(i, GAP, styles.warning)
    for step in timeline.steps:
        i = _cell(step.t0, start, span, cells)
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
        i = _cell(event.t, start, span, cells)
        if rank[char] > rank.get(chars[i], 0):
            put(i, char, style)
    put(_cell(position, start, span, cells), POSITION, styles.position)
    bar = _runs(chars, cell_styles)
    rest = width - cells
    if rest > 0:
        bar.append(((" " + status)[:rest].rjust(rest), styles.position))
    return bar, _names_line(timeline, cells, width, styles)


def _step_style(step: TimelineStep, n: int, styles: TimelineStyles) -> Style:
    return styles.failed if step.ok is False else (styles.step_alt if n % 2 else styles.step)


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


def step_label(name: str, room: int, previous: str | None = None) -> str:
    """``name`` in at most ``room`` cells: a repeat run after a run of the same step as its
    run alone (``#2``: the first run is named); else whole; else its words without their
    ``key=`` (a sweep's ``randread psync 4k#1``), then without its first word
    (``psync 4k#1``); else cut with "…" (nothing in less than two cells)."""
    base, mark, run = name.rpartition("#")
    if mark and run.isdigit() and previous is not None \
            and previous.rpartition("#")[0] == base and len(mark + run) <= room:
        return mark + run
    if len(name) <= room:
        return name
    words = [w.split("=", 1)[1] if "=" in w else w for w in name.split()]
    for form in (" ".join(words), " ".join(words[1:])):
        if form and len(form) <= room:
            return form
    shortest = " ".join(words[1:]) or name
    return shortest[:room - 1].rstrip() + "…" if room >= 2 else ""


def _names_line(timeline: Timeline, cells: int, width: int, styles: TimelineStyles) -> Runs:
    """Every step's name under its run, in the cells up to the next step's start
    (``step_label``); the clock at both ends where there is room left."""
    start, span = timeline.start, timeline.end - timeline.start
    left = time.strftime("%H:%M:%S", time.localtime(start))
    right = time.strftime("%H:%M:%S", time.localtime(timeline.end))
    line = [" "] * width
    line_styles = [styles.muted] * width

    def place(at: int, text: str, style: Style, *, gap: int = 1) -> bool:
        if not text or at < 0 or at + len(text) > width:
            return False
        if any(c != " " for c in line[max(at - gap, 0):at + len(text) + gap]):
            return False
        line[at:at + len(text)] = list(text)
        line_styles[at:at + len(text)] = [style] * len(text)
        return True

    steps = timeline.steps
    starts = [_cell(step.t0, start, span, cells) for step in steps]
    previous: str | None = None
    free = 0  # the first cell after the last name and its gap
    for n, step in enumerate(steps):
        # under its run's start, or after the name before it when that one needed more
        # room than its run had (short steps crowd: the names flow on to the right)
        at = max(starts[n], free)
        following = [c for c in starts[n + 1:] if c > at]
        end = following[0] - 1 if following else width  # the cell the name stops before
        label = step_label(step.name, min(max(end - at, MIN_LABEL), width - at), previous)
        if place(at, label, _step_style(step, n, styles), gap=0):
            free = at + len(label) + 1
        previous = step.name
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
        self._bar_width = 0

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
                     bar_width(width, status))
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
        self._bar_width = bar_width(width, status)
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
        """A click on the bar (not on the status after it) seeks there."""
        width = self._bar_width or self.content_region.width
        offset = event.get_content_offset(self)
        if width <= 0 or offset is None or offset.x >= width:
            return
        self.post_message(self.Seek(min(max((offset.x + 0.5) / width, 0.0), 1.0)))
