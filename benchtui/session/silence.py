"""Tools that fall silent: a run whose tool prints nothing for longer than its ``silence``.

A stuck Ceph cluster leaves ``rbd bench`` running and silent for minutes; a hung device does
the same to fio. Each run keeps a ``Quiet``: when its output last arrived, and the longest
time it printed nothing past its limit. ``watch`` looks every ``TICK`` and warns, once per
run, as soon as one has been silent for longer than its limit; the run's end event keeps
how long it was silent in all. Time during which this controller itself stood still (frozen,
suspended) is not the tools' silence, and is counted again from when it goes on.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: Seconds between two looks.
TICK = 0.5
#: A look this much later than planned means this controller stood still.
STALLED = 5.0


@dataclass(slots=True)
class Quiet:
    """One run's silence. Times are ``time.monotonic``."""

    #: Seconds its tool may print nothing before a warning (``StepSpec.silence_limit``).
    limit: float = math.inf
    #: When its output last arrived (or it started).
    last: float = 0.0
    #: The warning was given (once per run).
    warned: bool = False
    #: The longest time it printed nothing, past ``limit`` (0: never that long).
    longest: float = 0.0

    def heard(self, now: float | None = None) -> None:
        """Output arrived (or the run ended: the silence up to its end counts)."""
        now = time.monotonic() if now is None else now
        gap = now - self.last
        if gap > self.limit:
            self.longest = max(self.longest, gap)
        self.last = now

    def silent_for(self, now: float) -> float:
        return now - self.last

    def longest_so_far(self, now: float, *, running: bool) -> float:
        """The longest silence past the limit, the one going on included (while it runs)."""
        gap = now - self.last
        return max(self.longest, gap) if running and gap > self.limit else self.longest


async def watch(quiets: Callable[[], Iterable[Quiet]],
                warn: Callable[[Quiet, float], None]) -> None:
    """Until cancelled: every ``TICK``, ``warn(quiet, seconds)`` once for each of the
    ``quiets()`` (the runs that can be heard now) silent for longer than its limit."""
    last = time.monotonic()
    while True:
        await asyncio.sleep(TICK)
        now = time.monotonic()
        stood_still = now - last > TICK + STALLED
        last = now
        for quiet in list(quiets()):
            if stood_still:
                quiet.last = max(quiet.last, now)
            elif not quiet.warned and quiet.silent_for(now) > quiet.limit:
                quiet.warned = True
                warn(quiet, quiet.silent_for(now))
