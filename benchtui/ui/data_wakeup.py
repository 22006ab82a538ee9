"""Redraw a host's pane when its samples arrive, not at the next tick of a clock.

The console's refresh tick (8 Hz until issue 32) redrew what changed: a sample waited for
the tick (up to 125 ms, ~60 ms on average) before its pane was drawn, and sample to screen
was 115-145 ms at p99 with 32 panes (docs/benchmarks/ui_render.md). Now the state tells the
console which hosts got samples (``FleetState.sample_listeners``: a cheap call on the feeding
side, which never waits for the screen) and the console redraws those hosts' panes ``DELAY``
later: every host whose samples arrive in the meantime is drawn in the same frame (a step's
fio processes, started together, print together). So a pane waits at most ``DELAY`` (then
its drawing, and Textual's 1/60 s screen update), and frames drawn this way are at least
``DELAY`` apart: 32 hosts spread over the second make at most ~16 frames a second, each
drawing the two or three panes whose hosts reported (a shorter delay buys latency with
frames: each costs the screen's compositing, ~1 ms; measured in ui_render.md). The tick
(``console_base.REFRESH_HZ``) still draws the rest: the header, the clock, the hosts' states,
idle charts moving on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from operator import attrgetter
from typing import Final

from benchtui.model.sample import Sample
from benchtui.store.fleet import FleetState

#: Seconds from a host's samples arriving to its pane being drawn (hosts that report
#: within it share a frame).
DELAY: Final = 0.06

_HOST = attrgetter("host")


class DataWakeup:
    """Calls ``redraw(hosts)`` soon after samples of ``hosts`` reach the state it follows
    (module doc). Runs on one event loop (``start``); samples fed from another thread are
    handed to it."""

    def __init__(self, redraw: Callable[[set[str]], None], *, delay: float = DELAY) -> None:
        self._redraw = redraw
        self.delay = delay
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0
        self._state: FleetState | None = None
        self._pending: set[str] = set()
        self._handle: asyncio.TimerHandle | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()

    def follow(self, state: FleetState | None) -> None:
        """Listen to ``state``'s samples (and no longer to the previous state's)."""
        if self._state is not None and self._on_samples in self._state.sample_listeners:
            self._state.sample_listeners.remove(self._on_samples)
        self._state = state
        if state is not None:
            state.sample_listeners.append(self._on_samples)

    def stop(self) -> None:
        self.follow(None)
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._loop = None

    def _on_samples(self, samples: list[Sample]) -> None:
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() != self._thread:
            loop.call_soon_threadsafe(self._on_samples, samples)
            return
        self._pending.update(map(_HOST, samples))
        if self._handle is None:
            self._handle = loop.call_later(self.delay, self._fire)

    def _fire(self) -> None:
        self._handle = None
        hosts, self._pending = self._pending, set()
        if hosts:
            self._redraw(hosts)
