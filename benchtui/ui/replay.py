"""Replay in the console: the live console (``ConsoleApp``) over a ``ReplayPlayer``.

``ReplaySource`` is the console's source: its ``state`` is the player's ``FleetState`` (a new
object after a seek back or far, which the console adopts), its clock is the player's position,
and its task moves the player on by the wall time that passed. ``ReplayApp`` adds the controls
and the timeline bar through the console's extension points; everything else (panes, detail
view, log, themes, window) is the live console's own code, so replay looks as live did.

Keys: space play/pause · ``]`` or ``>`` faster, ``[`` or ``<`` slower (x0.25 .. x32) · ``.`` one
interval on (paused) · ← → 10 s back/on, shift+← → 5% of the session · Home/End · ``g`` go to
a time or fraction · ``n``/``N`` next/previous event · a click on the timeline seeks there.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.widget import Widget

from benchtui import gc_policy
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.format import format_duration
from benchtui.session.estimate import PlannedRun, runs_from_events
from benchtui.session.replay import ReplayPlayer, parse_position
from benchtui.store.fleet import FleetState
from benchtui.ui.app import ConsoleApp
from benchtui.ui.console_base import REFRESH_HZ
from benchtui.ui.replay_timeline import TimelineBar
from benchtui.ui.screens import PromptScreen
from benchtui.ui.themes import DEFAULT_THEME

if TYPE_CHECKING:
    from benchtui.ui.ghost import Ghost

#: How often the source moves the player on (seconds of wall time).
TICK = 0.1
#: Time per tick spent building the state a seek started (its charts' history), in slices
#: of ``BUILD_SLICE`` samples: the screen stays responsive while the history fills in.
BUILD_SECONDS = 0.04
BUILD_SLICE = 1_000
#: The kind of the events that carry the session reader's warnings into the console.
READER_WARNING = "recording_damage"
#: What ← and → move, in seconds of data time; shift moves this fraction of the session.
SEEK_STEP = 10.0
SEEK_FRACTION = 0.05


class ReplaySource:
    """A ``ConsoleSource`` over a player: the console's clock is the replay position."""

    def __init__(self, player: ReplayPlayer, *, tick: float = TICK,
                 build_seconds: float = BUILD_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.player = player
        self.tick = tick
        self.build_seconds = build_seconds
        self._clock = clock
        self._runs: list[PlannedRun] | None = None

    @property
    def name(self) -> str:
        return self.player.name

    @property
    def state(self) -> FleetState:
        return self.player.state

    def now(self) -> float:
        return self.player.position

    def busy(self) -> bool:
        """Nothing runs on any host: quitting needs no confirmation."""
        return False

    def mark(self, note: str) -> bool:
        """A recording is not changed by replaying it."""
        return False

    def planned_runs(self) -> Sequence[PlannedRun]:
        """The runs the recording started, with their planned lengths (as live)."""
        if self._runs is None:
            self._runs = runs_from_events(self.player.events)
        return self._runs

    async def run(self) -> int | None:
        """Advance the player by the wall time between ticks, and build the chart history
        after a seek a slice at a time, until cancelled."""
        player = self.player
        last = self._clock()
        generation = player.generation
        while True:
            await asyncio.sleep(self.tick)
            now = self._clock()
            player.advance(now - last)
            last = now
            if player.generation != generation:
                # A seek: let the console draw the new place before building its history.
                generation = player.generation
                continue
            deadline = now + self.build_seconds
            while player.work(BUILD_SLICE) and self._clock() < deadline:
                pass
            if player.generation != generation:  # a state was built and is shown now
                settle_memory()
            generation = player.generation


def settle_memory() -> None:
    """Collect garbage once and freeze what is left (``gc.freeze``: the console's objects and
    the state just built), as the console does after its first frame. A full collection
    walks every point of every series (a deque's floats): ~40 ms for a 2-minute window of 16
    hosts, which otherwise fell inside a third of the seeks that followed. A frozen state
    that a seek replaces is still freed (by reference counting: states hold no cycles)."""
    gc_policy.freeze()


class GotoScreen(PromptScreen):
    """Asks where to go: a time into the session, a percentage, a clock time; the clock
    time and ISO 8601 examples are a moment of the session itself (``example``)."""

    PLACEHOLDER = "time or fraction, Enter to go, Esc to cancel"

    def __init__(self, example: float) -> None:
        super().__init__()
        clock = time.localtime(example)
        self.question = ("Go to: 90 · 5m · 1h30m (into the session) · 50% · "
                         f"{time.strftime('%H:%M', clock)} · "
                         f"{time.strftime('%Y-%m-%dT%H:%M:%S', clock)}")


class ReplayApp(ConsoleApp):
    """The console in replay mode."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "play_pause", "Play/Pause", key_display="␣"),
        Binding("right_square_bracket,greater_than_sign", "faster", "Faster",
                key_display="]"),
        Binding("left_square_bracket,less_than_sign", "slower", "Slower", key_display="["),
        Binding("full_stop", "step", "Step", key_display="."),
        Binding("right", "seek_by(1)", "+10s", show=False),
        Binding("left", "seek_by(-1)", "-10s", show=False),
        Binding("shift+right", "seek_part(1)", "+5%", show=False),
        Binding("shift+left", "seek_part(-1)", "-5%", show=False),
        Binding("home", "seek_end(0)", "Start", show=False),
        Binding("end", "seek_end(1)", "End", show=False),
        Binding("g", "goto", "Go to"),
        Binding("n", "next_event", "Next event"),
        Binding("N", "prev_event", "Prev event", show=False),
    ]

    def __init__(self, source: ReplaySource, *, theme: str = DEFAULT_THEME,
                 window: float | None = None, refresh_hz: float = REFRESH_HZ,
                 ghost: Ghost | None = None, notices: Sequence[str] = (),
                 screenshot_dir: str | None = None) -> None:
        super().__init__(source, theme=theme, window=window, refresh_hz=refresh_hz,
                         ghost=ghost, notices=notices, screenshot_dir=screenshot_dir)
        self.player = source.player
        self._origin: float | None = None
        self._warned = 0  # the reader's warnings told so far
        self.timeline_bar = TimelineBar(self.player.timeline())
        self._follow_window()

    # --- extension points of the console ---------------------------------------------------

    def compose_top(self) -> Iterator[Widget]:
        yield self.timeline_bar

    @property
    def origin(self) -> float:
        """Where time into the session counts from: the session's start (its first event
        after the hosts were prepared, from which the header's ``elapsed`` counts too),
        else the recording's."""
        if self._origin is None:
            self._origin = next((e.t for e in self.player.events
                                 if e.kind == ev.SESSION_START), self.player.start)
        return self._origin

    def status(self) -> str:
        """Play/pause, speed, position into the session / its length (from ``origin``: as
        the header's ``elapsed``), and the position's clock time:
        ``▶ x4  1h02m / 24h00m  14:05:03``."""
        p = self.player
        return (f"{'▶' if p.playing else '⏸'} x{p.speed:g}  "
                f"{format_duration(max(p.position - self.origin, 0.0))} / "
                f"{format_duration(max(p.end - self.origin, 0.0))}  "
                f"{time.strftime('%H:%M:%S', time.localtime(p.position))}")

    def header_badges(self) -> tuple[str, ...]:
        p = self.player
        return (f"REPLAY {'▶' if p.playing else '⏸'} x{p.speed:g}",
                *super().header_badges())

    def before_refresh(self) -> None:
        self._tell_reader_warnings()
        self.timeline_bar.update_position(self.player.position, self.generation,
                                          self.status())

    def _tell_reader_warnings(self) -> None:
        """The file's damage, said in the console when the reader meets it (opening: a
        damaged header or index, a cut-short file; reading on: a damaged span): each one an
        event of the state shown, so that the console's own path notifies it and the log
        (l) keeps it. Without this a file whose data cannot be read is an empty console."""
        warnings: list[str] = getattr(self.player.reader, "warnings", [])
        state = self.player.state
        if len(warnings) <= self._warned or state is not self._state:
            return  # (a state adopted in this tick counts its events as seen: the next one)
        for text in warnings[self._warned:]:
            state.on_event(Event(self.player.position, READER_WARNING,
                                 f"the recording cannot be read in full: {text}", ev.WARNING))
        self._warned = len(warnings)

    def help_rows(self) -> list[tuple[str, str]]:
        return [
            ("space", "replay: play / pause"),
            ("] or >, [ or <", "replay: faster / slower (x0.25 .. x32)"),
            (".", "replay: one interval on (and pause)"),
            ("← / →", f"replay: {SEEK_STEP:g} s back / on"),
            ("shift+← / →", f"replay: {SEEK_FRACTION:.0%} of the session back / on"),
            ("Home / End", "replay: go to the start / the end"),
            ("g", "replay: go to a time (90, 5m, 14:05, ISO 8601) or a fraction (50%)"),
            ("n / N", "replay: next / previous event (steps, warnings, errors, marks)"),
            ("click the timeline", "replay: go there"),
            *super().help_rows(),
        ]

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Replay: play/pause", "Play or pause the replay (space)",
                            self.action_play_pause)
        yield SystemCommand("Replay: go to…", "A time or a fraction of the session (g)",
                            self.action_goto)
        yield SystemCommand("Replay: next event", "Jump to the next event (n)",
                            self.action_next_event)
        yield SystemCommand("Replay: previous event", "Jump to the previous event (N)",
                            self.action_prev_event)

    # --- actions ---------------------------------------------------------------------------

    def _moved(self) -> None:
        """Redraw now rather than at the next tick: the user is waiting for it."""
        self.refresh_display()

    def go(self, move: Callable[[ReplayPlayer], object]) -> None:
        """Move the player (``move(player)``: a seek) and draw the new place at once, with the
        garbage collector held off until it is drawn: a seek makes and drops some 50,000
        objects, and the collections they set off cost 5-20 ms of it (``hold_gc``)."""
        self.hold_gc()
        move(self.player)
        self._moved()

    def go_to(self, t: float) -> None:
        """Seek to data time ``t`` and draw it (what the seeking keys do)."""
        self.go(lambda p: p.seek(t))

    def hold_gc(self) -> None:
        """No garbage collection until the next frame is drawn (the objects made meanwhile
        are collected after it; cycles are rare: a state holds none)."""
        if gc.isenabled():
            gc.disable()
            self.call_after_refresh(gc.enable)

    async def on_unmount(self) -> None:
        # the console's own ``on_unmount`` runs too (Textual calls each class's handler)
        gc.enable()  # should a frame never have been drawn after a seek

    def action_play_pause(self) -> None:
        self.player.toggle()
        self._moved()

    def action_faster(self) -> None:
        self.player.faster()
        self._moved()

    def action_slower(self) -> None:
        self.player.slower()
        self._moved()

    def action_step(self) -> None:
        self.player.step()
        self._moved()

    def action_seek_by(self, direction: int) -> None:
        self.go(lambda p: p.seek(p.position + direction * SEEK_STEP))

    def action_seek_part(self, direction: int) -> None:
        self.go(lambda p: p.seek_fraction(p.fraction + direction * SEEK_FRACTION))

    def action_seek_end(self, which: int) -> None:
        self.go(lambda p: p.seek_fraction(float(which)))

    def action_goto(self) -> None:
        if not isinstance(self.screen, GotoScreen):
            p = self.player
            self.push_screen(GotoScreen((self.origin + p.end) / 2), self._goto)

    def _goto(self, text: str | None) -> None:
        if not text or not text.strip():
            return
        p = self.player
        try:
            t = parse_position(text, self.origin, p.end)
        except ValueError as error:
            self.notify(str(error), title="go to", severity="error", timeout=8)
            return
        if not p.start <= t <= p.end:
            self.notify(f"{text.strip()} is outside the session "
                        f"({format_duration(p.end - self.origin)} long); went to the nearest "
                        "end",
                        title="go to", severity="warning", timeout=5)
        self.go_to(t)

    def action_next_event(self) -> None:
        self._jump(ReplayPlayer.next_event, "no later event")

    def action_prev_event(self) -> None:
        self._jump(ReplayPlayer.prev_event, "no earlier event")

    def _jump(self, find: Callable[[ReplayPlayer], Event | None], none: str) -> None:
        found: list[Event | None] = []
        self.go(lambda p: found.append(find(p)))
        event = found[0]
        if event is None:
            self.notify(none, timeout=2)
        else:
            where = " · ".join(x for x in (event.host, event.step) if x) or event.kind
            self.notify(event.message, title=where, timeout=4)

    def window_changed(self) -> None:
        super().window_changed()
        self._follow_window()

    def _follow_window(self) -> None:
        """The player keeps (and a seek rebuilds) what the charts show: their time window."""
        if self.player.window != self.window:
            self.player.set_window(self.window)

    def _adopt(self, state: FleetState) -> None:
        """A seek gave a new state of the same hosts: keep their panes (mounting and styling
        16 new panes costs several hundred ms, most of a seek) and redraw them all, rather
        than the console's default of starting its views over."""
        if self._state is not None and list(state.hosts) == list(self.grid.panes):
            # the panes and the header see the new state object and redraw from it; the look
            # (``generation``: styles read again, Textual's lines drawn whole) has not changed
            self._state = state
            self._reported = set()
            self._events_seen = state.events_total
            return
        super()._adopt(state)

    def on_timeline_bar_seek(self, message: TimelineBar.Seek) -> None:
        self.go(lambda p: p.seek_fraction(message.fraction))
