"""How far behind the controller is, and saying so when it falls behind.

A controller with more to do than the CPU it gets (a fleet's output to parse, a machine busy
with other work, a process starved or stopped for a while) falls behind: its figures are late.
It is not dead (its hosts' work goes on: ``transport.heartbeats``), but the user must know
that what they see is late, and by how much. ``LagWatch`` looks every ``TICK``: the lag is
the longer of how late its look came (the event loop's lateness: nothing turned meanwhile)
and how long the oldest output still to be parsed has waited (``intake.Intake.oldest``).

Once the lag passes ``BEHIND`` it says so (a ``controller_lag`` warning: "the controller is
behind by 5.2 s ..."), again every ``SAY_EVERY`` while it stays behind, and once it is back
under ``CAUGHT_UP`` (or at the end of the session's steps, every output taken in), how long
it was behind and by how much at worst. In between, a quiet
``controller_lag`` event each look keeps the figure current for the console's header
(``said`` False: not for the log, nor stderr).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from benchtui.model import events as ev

#: Seconds between two looks.
TICK = 0.5
#: Seconds behind past which the controller says it is behind.
BEHIND = 1.0
#: Seconds behind under which it is caught up again.
CAUGHT_UP = 0.5
#: Seconds between two sayings while it stays behind.
SAY_EVERY = 10.0


class LagWatch:
    """The controller's lag, said through ``emit`` (``Session.emit``). ``waiting`` tells how
    long the oldest output not yet parsed has waited (seconds)."""

    def __init__(self, waiting: Callable[[float], float], emit: Callable[..., None]) -> None:
        self._waiting = waiting
        self._emit = emit
        #: Seconds behind at the last look.
        self.lag = 0.0
        #: Since when (monotonic) it is behind, and by how much at worst; None: not behind.
        self.since: float | None = None
        self.worst = 0.0
        self._said = 0.0

    async def watch(self) -> None:
        """Until cancelled: look every ``TICK``."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + TICK
            await asyncio.sleep(TICK)
            now = time.monotonic()
            self.look(now, max(loop.time() - due, self._waiting(now), 0.0))

    def end(self, now: float) -> None:
        """Every run's output was taken in (the session's steps are done): a controller
        still behind has caught up, and says so."""
        if self.since is not None:
            self.look(now, 0.0)

    def look(self, now: float, lag: float) -> None:
        """One look: ``lag`` seconds behind at ``now`` (monotonic)."""
        self.lag = lag
        if self.since is None:
            if lag >= BEHIND:
                self.since, self.worst, self._said = now, lag, now
                self._say(f"the controller is behind by {lag:.1f} s: it has more to do than "
                          "the CPU it gets (output to parse, or a busy or stopped process); "
                          "what it shows is that late, no output is lost and the hosts' work "
                          "goes on", ev.WARNING, lag)
            return
        self.worst = max(self.worst, lag)
        if lag < CAUGHT_UP:
            behind_for, worst = now - self.since, self.worst
            self.since = None
            self._say(f"the controller caught up: it was behind for {behind_for:.0f} s, "
                      f"by {worst:.1f} s at worst", ev.INFO, lag, behind=False,
                      behind_seconds=round(behind_for, 1))
        elif now - self._said >= SAY_EVERY:
            self._said = now
            self._say(f"the controller is still behind by {lag:.1f} s (by {self.worst:.1f} s "
                      "at worst so far)", ev.WARNING, lag)
        else:
            self._emit(ev.CONTROLLER_LAG, f"behind by {lag:.1f} s", level=ev.INFO,
                       seconds=round(lag, 2), worst=round(self.worst, 2), behind=True,
                       said=False)

    def _say(self, message: str, level: str, lag: float, *, behind: bool = True,
             **data: object) -> None:
        self._emit(ev.CONTROLLER_LAG, message, level=level, seconds=round(lag, 2),
                   worst=round(self.worst, 2), behind=behind, said=True, **data)
