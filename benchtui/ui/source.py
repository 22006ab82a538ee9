"""What drives the console: a source of ``FleetState`` and a clock.

The console does not care whether a session is running now or being replayed: it asks its
source for ``state`` (re-read on every refresh: replay may swap in a new ``FleetState`` after a
seek) and for ``now()`` (the wall clock live, the player's position in replay), and runs
``run()`` as a task for as long as the console is open. Cancelling that task is how the console
stops a live session: the engine then stops every process it started on every host.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Protocol

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.session.engine import Session, SessionResult
from benchtui.session.estimate import PlannedRun, planned_runs
from benchtui.store.fleet import FleetState

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


class ConsoleSource(Protocol):
    """Anything the console can show."""

    @property
    def name(self) -> str:
        """The session's name, for the title."""
        ...

    @property
    def state(self) -> FleetState:
        """The state to show now (may be a new object after a replay seek)."""
        ...

    def now(self) -> float:
        """The console's clock, epoch seconds: wall clock live, the position in replay."""
        ...

    def busy(self) -> bool:
        """True while quitting would interrupt work (steps run on hosts): ask first."""
        ...

    async def run(self) -> int | None:
        """Drive the state until done; the exit code to report (None: nothing to say).
        Cancelled when the user quits."""
        ...

    def mark(self, note: str) -> bool:
        """Put a user's mark (with a note) at the current moment; False when this source
        cannot (a finished session, a replay)."""
        ...

    def planned_runs(self) -> Sequence[PlannedRun]:
        """Every run of the session's steps, in order, with its planned length (the
        session's time left is estimated from them; empty: not known)."""
        ...


class LiveSource:
    """A ``Session`` running now, feeding ``state`` through its sinks."""

    def __init__(self, session: Session, state: FleetState) -> None:
        self.session = session
        self._state = state
        self.result: SessionResult | None = None
        self._running = False
        self._runs = planned_runs(session.plan)

    @property
    def name(self) -> str:
        return self.session.plan.name

    @property
    def state(self) -> FleetState:
        return self._state

    def now(self) -> float:
        return time.time()

    def busy(self) -> bool:
        return self._running

    def mark(self, note: str) -> bool:
        if not self._running:
            return False
        self.session.mark(note)
        return True

    def planned_runs(self) -> Sequence[PlannedRun]:
        return self._runs

    async def run(self) -> int:
        self._running = True
        try:
            self.result = await self.session.run()
        finally:
            self._running = False
        return EXIT_OK if self.result.ok else EXIT_FAILED


class StaticSource:
    """A state that is already complete (tests, snapshots, a finished session): no task,
    a fixed clock."""

    def __init__(self, state: FleetState, now: float, *, busy: bool = False,
                 runs: Sequence[PlannedRun] = ()) -> None:
        self._state = state
        self._now = now
        self._busy = busy
        self._runs = runs
        self.cancelled = False

    @property
    def name(self) -> str:
        return self._state.name

    @property
    def state(self) -> FleetState:
        return self._state

    def now(self) -> float:
        return self._now

    def set_now(self, now: float) -> None:
        self._now = now

    def busy(self) -> bool:
        return self._busy

    def planned_runs(self) -> Sequence[PlannedRun]:
        return self._runs

    def mark(self, note: str) -> bool:
        self._state.on_event(Event(self._now, ev.MARK, f"mark: {note}" if note else "mark",
                                   ev.INFO, None, None, {"note": note}))
        return True

    async def run(self) -> int | None:
        """Wait until cancelled, as a session would while it runs (when ``busy``)."""
        if not self._busy:
            return None
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            self._busy = False
            raise
        return None  # pragma: no cover - the wait above ends only by cancellation
