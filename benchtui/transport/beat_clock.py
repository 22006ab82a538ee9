"""One timer for every host keeper fed from an event loop: all their beats in one wake-up.

Each SSH host's keeper (``watchdog.KEEPER``) is fed a line every ``BEAT_INTERVAL`` seconds
(``ssh.feed_keeper``). With a timer per host, the heartbeat process woke once per host and
second (128 hosts: ~110 wake-ups a second, ~250 µs of CPU each with the timer, the task's
step and the event loop's turn around one SSH packet: ~3% of a core; ``benchmarks/
beat_cost.py``). A ``BeatClock`` wakes once per interval and writes every keeper's line in
that turn: the packets are the same, the wake-ups one per interval whatever the fleet.

A keeper joins with ``add`` (its first beat at once, as before) and leaves with
``discard``. A beat is a callable that writes the line, or finds its keeper gone and says
so to its feeder; it raises nothing (``ssh.feed_keeper``'s beats do not). One that raises
all the same is logged and dropped: the clock goes on beating every other keeper.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from benchtui.transport.watchdog import BEAT_INTERVAL

_log = logging.getLogger(__name__)

#: A keeper's beat: write its line now.
Beat = Callable[[], None]


class BeatClock:
    """Calls every added beat every ``interval`` seconds, in the same turn of the loop."""

    def __init__(self, interval: float = BEAT_INTERVAL) -> None:
        self.interval = interval
        self._beats: dict[Beat, None] = {}  # (ordered: beaten in the order they came)
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._beats)

    def add(self, beat: Beat) -> None:
        """Beat ``beat`` from now on: once at once, then at every tick of the clock."""
        self._beats[beat] = None
        beat()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="benchtui-beat-clock")

    def discard(self, beat: Beat) -> None:
        """Beat ``beat`` no more (nothing if it is not beaten)."""
        self._beats.pop(beat, None)

    async def close(self) -> None:
        """Stop the clock (its beats are forgotten)."""
        self._beats.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while self._beats:
            await asyncio.sleep(self.interval)
            for beat in list(self._beats):
                try:
                    beat()
                except Exception:  # noqa: BLE001 - one broken beat must not stop the others
                    _log.exception("a keeper's beat failed; it is beaten no more")
                    self._beats.pop(beat, None)
