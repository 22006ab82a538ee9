"""Replaying a recorded session: a player that feeds a ``FleetState`` from a session file.

The player owns no screen and reads no clock. Front ends tell it how much wall time went by
(``advance``) and it moves its position in data time by that much times its speed, handing
every record recorded up to the new position to ``FleetState.on_samples``/``on_event``/
``on_output``: the very calls the live engine's sinks make, so replay shows what was seen live.

Seeking backwards, or further forward than a few seconds, builds a fresh ``FleetState`` and
feeds it every event since the start (events are few and carry the steps, host states and
facts), the raw output of the last seconds before ``t`` and, of their samples, each series'
newest point (``SessionReader.newest_records``): what the console's current values are made
of, so the first frame at ``t`` shows the numbers a play up to ``t`` shows. A seek costs what
those seconds cost to read, whatever the session's length. Chart history is then built in
the background from ``t - window`` (see ``ReplayPlayer``). A host that is between runs at
``t`` also gets its last run's end-of-run summaries, read around that run's end however long
ago it was (``_older_summaries``). The price is that the rest of what lies before the window
(older chart points and summaries, per-host sample counts) is not in the rebuilt state;
``window`` should cover what the console shows.

Times are Unix epoch seconds, as recorded; ``position`` always lies in ``[start, end]``.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import SUMMARY, Sample
from benchtui.session.timeline import (
    NOTABLE_KINDS,
    Timeline,
    TimelineStep,
    is_notable,
    monitored_hosts,
    parse_position,
    real_gaps,
    steps_from_events,
)
from benchtui.store.fleet import FleetState
from benchtui.store.live import DEFAULT_WINDOW
from benchtui.store.recording import Gap, Record, SessionMeta

__all__ = ["DEFAULT_QUICK_WINDOW", "DEFAULT_REPLAY_WINDOW", "FEED_ON", "MAX_SPEED", "MIN_SPEED",
           "NOTABLE_KINDS", "SPEEDS", "RecordSource", "ReplayPlayer", "Timeline",
           "TimelineStep", "clamp_speed", "is_notable", "monitored_hosts", "parse_position",
           "real_gaps", "steps_from_events"]

#: The speeds ``faster``/``slower`` step through; ``set_speed`` clamps to the ends.
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
MIN_SPEED = SPEEDS[0]
MAX_SPEED = SPEEDS[-1]
#: Seconds of samples a state rebuilt by a seek holds before its target: what the charts can
#: show (the console asks for more when its chart window is longer).
DEFAULT_REPLAY_WINDOW = 300.0
#: Seconds before its place whose records the state shown at once after a seek is fed
#: from: each series' newest point in them, every event and raw output line. The console
#: counts a point as current for 5 s (``benchtui.store.figures.STALE_AFTER``), and a sample's
#: own time may trail or lead its arrival a little: 6 s hold every point the first frame's
#: numbers are made of. Decoding and feeding only the newest points (16 hosts: ~1,700 a
#: seek) costs a fraction of feeding every record of those seconds.
DEFAULT_QUICK_WINDOW = 6.0
#: A seek forward by up to this many seconds feeds on (keeps the history) rather than
#: starting over: feeding that much (16 hosts: ~1,700 samples a second, ~7 us each) costs
#: about what a fresh start does, and there is nothing to rebuild.
FEED_ON = 3.0
#: A state keeps this much more than the window's points (intervals are not exactly 1 s).
HISTORY_MARGIN = 1.1
#: One reporting interval (the tools run at 1 Hz): what ``step`` moves.
DEFAULT_INTERVAL = 1.0


class RecordSource(Protocol):
    """What the player needs of a session file (``SessionReader`` is one)."""

    meta: SessionMeta
    start: float
    end: float

    def events(self) -> list[Event]: ...

    def timed_records(self, t0: float, t1: float) -> Iterator[tuple[float, Record]]: ...

    def newest_records(self, t0: float, t1: float) -> list[tuple[float, Record]]: ...

    def gaps(self) -> list[Gap]: ...


def clamp_speed(speed: float) -> float:
    if not math.isfinite(speed):
        return MAX_SPEED if speed > 0 else MIN_SPEED
    return min(max(speed, MIN_SPEED), MAX_SPEED)


#: End-of-run summaries are read from this many seconds before a run's end event (a tool prints
#: them as it exits; the engine reports the end once the exit status is known) ...
SUMMARY_LEAD = 5.0
#: ... to this many after it.
SUMMARY_LAG = 0.5


def _merged_spans(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted ``(start, end)`` spans with the overlapping ones joined."""
    merged: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


class _Feed:
    """A state and the open read of the file that feeds it (one record of look-ahead)."""

    def __init__(self, state: FleetState, records: Iterator[tuple[float, Record]]) -> None:
        self.state = state
        self._records = records
        self._ahead: tuple[float, Record] | None = None
        self.done = False

    def feed(self, records: Iterable[tuple[float, Record]]) -> None:
        """Hand the state these records (times up to where the read goes on), in order."""
        for _t, record in records:
            _hand(self.state, record)

    def through(self, t: float, budget: int | None = None) -> bool:
        """Hand the state every record up to and including time ``t``, or stop once
        ``budget`` samples went in. True when every record up to ``t`` is in."""
        state = self.state
        fed = 0
        while not self.done:
            item = self._ahead
            if item is None:
                item = next(self._records, None)
                if item is None:
                    self.done = True
                    break
            if item[0] > t:
                self._ahead = item
                return True
            if budget is not None and fed >= budget:
                self._ahead = item
                return False
            self._ahead = None
            fed += _hand(state, item[1])
        return True


def _hand(state: FleetState, record: Record) -> int:
    """Give ``state`` one record, through the sink its kind goes to live; the samples given."""
    if isinstance(record, list):
        state.on_samples(record)
        return len(record)
    if isinstance(record, Event):
        state.on_event(record)
    elif isinstance(record, OutputLines):
        state.on_output(record)
    return 0


class ReplayPlayer:
    """Plays a recorded session into ``state``. Pure logic: no clock, no screen.

    A seek that cannot feed on builds the new state in two goes, so that the screen follows
    at once: ``state`` is first a state fed the newest point of each series from the last
    ``quick`` seconds (current values, the header, host states: cheap), and a fuller one fed
    from ``t - window`` is built by ``work()`` a slice at a time, and replaces it
    (``generation`` grows) once it has caught up with the position. A front end calls
    ``work`` between frames."""

    def __init__(self, reader: RecordSource, *, window: float = DEFAULT_REPLAY_WINDOW,
                 quick: float = DEFAULT_QUICK_WINDOW, history: int = DEFAULT_WINDOW,
                 interval: float = DEFAULT_INTERVAL, speed: float = 1.0) -> None:
        if not window > 0 or not quick > 0:
            raise ValueError("window and quick must be positive numbers of seconds")
        self.reader = reader
        #: Seconds of samples a rebuilt state holds before its position (what charts show).
        self.window = float(window)
        #: Seconds of samples the state shown right after a seek holds.
        self.quick = float(quick)
        #: Points per series a state may keep at most (``--history``, as live).
        self.max_history = history
        self.interval = float(interval)
        self.start = reader.start
        self.end = max(reader.end, reader.start)
        self.speed = clamp_speed(speed)
        self.playing = False
        #: Grows each time ``state`` is replaced by a new object (seeks, a finished build).
        self.generation = 0
        self._events = sorted(reader.events(), key=lambda e: e.t)
        self._event_times = [e.t for e in self._events]
        notable = [e for e in self._events if is_notable(e)]
        self._notable = notable
        self._notable_times = [e.t for e in notable]
        self._timeline: Timeline | None = None
        self.position = self.start
        self._feed = self._new_feed(self.start)
        self._build: _Feed | None = None
        #: Where the build a seek asked for starts (made by the first ``work`` after it).
        self._build_from: float | None = None
        self._retired: list[FleetState] = []
        self._feed.through(self.start)

    @property
    def state(self) -> FleetState:
        """What to show now."""
        return self._feed.state

    @property
    def building(self) -> bool:
        """True while a fuller state is being built (``work`` has something to do)."""
        return self._build is not None or self._build_from is not None

    # --- reading ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.reader.meta.name

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def fraction(self) -> float:
        """Position as a fraction of the session (0..1)."""
        return 0.0 if self.duration <= 0 else (self.position - self.start) / self.duration

    @property
    def at_end(self) -> bool:
        return self.position >= self.end

    @property
    def events(self) -> Sequence[Event]:
        """Every event of the recording, in time order."""
        return self._events

    def timeline(self) -> Timeline:
        """Steps, notable events and gaps of the whole session (computed once)."""
        if self._timeline is None:
            meta = self.reader.meta
            gaps = real_gaps(self.reader.gaps(), self._events, end=self.end,
                             monitored=monitored_hosts(meta.plan_text, meta.hosts))
            self._timeline = Timeline(self.start, self.end, tuple(steps_from_events(self._events)),
                                      tuple(self._notable), tuple(gaps))
        return self._timeline

    # --- controls --------------------------------------------------------------------------

    def play(self) -> None:
        if self.at_end:
            self.seek(self.start)
        self.playing = True

    def pause(self) -> None:
        self.playing = False

    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def set_speed(self, speed: float) -> float:
        self.speed = clamp_speed(speed)
        return self.speed

    def faster(self) -> float:
        """The next speed up the ladder (x0.25 .. x32)."""
        return self.set_speed(next((s for s in SPEEDS if s > self.speed), MAX_SPEED))

    def slower(self) -> float:
        return self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed), MIN_SPEED))

    def advance(self, wall_seconds: float) -> bool:
        """``wall_seconds`` of wall time went by: when playing, move by that times the speed
        and feed what was recorded up to there. Stops playing at the end. True if it moved."""
        if not self.playing or not wall_seconds > 0:
            return False
        moved = self._forward_to(self.position + wall_seconds * self.speed)
        if self.at_end:
            self.playing = False
        return moved

    def step(self) -> bool:
        """Pause, and move one reporting interval forward."""
        self.playing = False
        return self._forward_to(self.position + self.interval)

    def seek(self, t: float) -> None:
        """Go to data time ``t`` (clamped to the session). Forward by a few seconds (up to
        ``FEED_ON`` seconds): feed on; otherwise start over at ``t`` (the newest points of
        the last ``quick`` seconds) and build from ``t - window`` in the background
        (``work``)."""
        t = min(max(t, self.start), self.end) if math.isfinite(t) else self.position
        if self.position <= t <= self.position + FEED_ON:
            self._forward_to(t)
            return
        self._rebuild(t)

    def seek_fraction(self, fraction: float) -> None:
        """Go to a fraction (0..1) of the session."""
        f = min(max(fraction, 0.0), 1.0) if math.isfinite(fraction) else 0.0
        self.seek(self.start + f * self.duration)

    def next_event(self) -> Event | None:
        """Go to the next notable event after the position; None (and stay) if there is none."""
        i = bisect_right(self._notable_times, self.position)
        if i >= len(self._notable):
            return None
        event = self._notable[i]
        self.seek(event.t)
        return event

    def prev_event(self) -> Event | None:
        """Go to the last notable event before the position; None (and stay) if none."""
        i = bisect_left(self._notable_times, self.position)
        if i == 0:
            return None
        event = self._notable[i - 1]
        self.seek(event.t)
        return event

    @property
    def history(self) -> int:
        """Points per series a new state keeps: the window's worth (and a margin), so that
        memory follows what the charts show rather than ``max_history``: 1,600 series of a
        16-host session cost ~64 bytes a point, 370 MB at an hour's 3,600 points."""
        points = math.ceil(self.window / self.interval * HISTORY_MARGIN) + 10
        return max(1, min(self.max_history, points))

    def set_window(self, seconds: float) -> None:
        """The charts' time window changed. A longer one is built at once at the position
        (in the background: ``work``) while the current state stays on screen; a shorter
        one applies from the next seek."""
        if not seconds > 0:
            raise ValueError("window must be a positive number of seconds")
        grew = seconds > self.window
        self.window = float(seconds)
        if grew:
            self._build = None
            self._build_from = max(self.start, self.position - self.window)

    def work(self, budget: int = 20_000) -> bool:
        """Feed the state being built by at most about ``budget`` samples; when it has
        caught up with the position, it becomes ``state``. True while work remains."""
        self._retired.clear()
        if self._build_from is not None:
            # made here rather than in ``seek``: its events are fed after the new place is drawn
            self._build = self._new_feed(self._build_from)
            self._build_from = None
        build = self._build
        if build is None:
            return False
        if not build.through(self.position, budget):
            return True
        self._build = None
        self._retired.append(self._feed.state)
        self._feed = build
        self.generation += 1
        return False

    def finish_work(self) -> None:
        """Build the fuller state now, whatever it costs (tests, benchmarks, headless use)."""
        while self.work(1_000_000):
            pass

    # --- feeding ---------------------------------------------------------------------------

    def _new_state(self, t0: float) -> FleetState:
        """A fresh state with every event before ``t0`` in it, and the end-of-run summaries
        of the last run of each host that is not running at ``t0`` (``_older_summaries``)."""
        meta = self.reader.meta
        state = FleetState(meta.name, meta.hosts, window=self.history)
        events = self._events[:bisect_left(self._event_times, t0)]
        summaries = self._older_summaries(events, t0)
        i = 0
        for event in events:  # in time order, as they were seen live
            while i < len(summaries) and summaries[i][0] <= event.t:
                state.on_samples(summaries[i][1])
                i += 1
            state.on_event(event)
        for _t, samples in summaries[i:]:
            state.on_samples(samples)
        return state

    def _older_summaries(self, events: list[Event], t0: float) -> list[tuple[float, list[Sample]]]:
        """The end-of-run summary samples recorded around the end of the last run of each host
        that no run is going on at ``t0``, when that end lies before ``t0``: a host between
        steps shows its last run's figures, and a state rebuilt from the last seconds would not
        hold them (a play to ``t0`` does). Read from ``SUMMARY_LEAD`` seconds before each run's
        end to just after it; nothing is read for a host that is running."""
        running: dict[str, bool] = {}
        ended: dict[str, float] = {}
        for event in events:
            if event.host is None:
                continue
            if event.kind == ev.RUN_START:
                running[event.host] = True
            elif event.kind == ev.RUN_END:
                running[event.host] = False
                ended[event.host] = event.t
        ends = sorted(t for host, t in ended.items() if not running.get(host))
        out: list[tuple[float, list[Sample]]] = []
        for a, b in _merged_spans([(t - SUMMARY_LEAD, min(t + SUMMARY_LAG, t0)) for t in ends]):
            for t, record in self.reader.timed_records(a, b):
                if isinstance(record, list):
                    kept = [x for x in record if x.kind == SUMMARY]
                    if kept:
                        out.append((t, kept))
        return out

    def _new_feed(self, t0: float) -> _Feed:
        """A fresh state with every event before ``t0`` in it, reading on from ``t0``."""
        return _Feed(self._new_state(t0), self.reader.timed_records(t0, math.inf))

    def _forward_to(self, t: float) -> bool:
        t = min(t, self.end)
        if t <= self.position:
            return False
        self.position = t
        self._feed.through(t)
        return True

    def _rebuild(self, t: float) -> None:
        """A fresh state at ``t``: the newest point of each series from ``t - quick`` on
        (every event and output line), reading on after ``t``; and a fuller one to build
        from ``t - window`` (every record: the charts' history). Within ``FEED_ON`` seconds
        of the start, or with a window no longer than ``quick``, the first is fed every
        record (as cheap), and there is nothing to build."""
        quick_t0 = max(self.start, t - self.quick)
        self.generation += 1
        self.position = t
        # Freeing a state of a few hundred thousand points takes ~15 ms: let ``work`` do it,
        # after the console has drawn the new place.
        self._retired = [self._feed.state]
        self._build = None
        full_t0 = max(self.start, t - max(self.window, self.quick))
        if self.window <= self.quick or t - self.start <= FEED_ON:
            self._build_from = None
            self._feed = self._new_feed(full_t0)
            self._feed.through(t)
            return
        after = math.nextafter(t, math.inf)
        feed = _Feed(self._new_state(quick_t0), self.reader.timed_records(after, math.inf))
        feed.feed(self.reader.newest_records(quick_t0, after))
        self._feed = feed
        self._build_from = full_t0
