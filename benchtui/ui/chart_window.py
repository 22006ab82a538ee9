"""The time every chart of the console covers (the header's ``window`` badge).

By default the window fits the step: the running step's planned length (fio's runtime,
iperf's ``-t``, ``duration``) and what starting and stopping a run costs
(``session.estimate.overhead``: measured as the session goes), rounded up to 5 s, so that
a step fills its charts from its first second to its last (a 60 s demo: 65 s; a sweep of
15 s steps: 20 s, not 2 minutes of which the step is an eighth). Between steps it keeps
the last step's; a step of unknown length keeps the window as it is (2 minutes at first).
It is at most the history the console keeps (``--history`` points: an hour by default),
and at least ``MIN_FITTED``.

``+`` and ``-`` pick one of ``WINDOWS`` from the current window on, and the window stays
that from then on; the palette's "Window fits the step" goes back to fitting.
"""

from __future__ import annotations

import math

from benchtui.model.format import format_duration
from benchtui.session.estimate import overhead
from benchtui.store.fleet import FleetState

#: Chart time windows (seconds) that + and - step through.
WINDOWS = (30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0,
           24 * 3600.0)
#: Before a step of known length has started (and for steps of unknown length).
DEFAULT_WINDOW = 120.0
#: The shortest window fitted to a step (a 3 s step gets 10 s: its seconds stay readable).
MIN_FITTED = 10.0
#: A fitted window is a multiple of this.
FIT_STEP = 5.0


def fitted_seconds(state: FleetState) -> float | None:
    """The window that fits ``state``'s running (else last) step, None when its length is
    not known."""
    step = state.current_step or (state.steps[-1] if state.steps else None)
    if step is None or not step.expected_seconds:
        return None
    seconds = math.ceil((step.expected_seconds + overhead(state.steps)) / FIT_STEP) * FIT_STEP
    return min(max(seconds, MIN_FITTED), max(float(state.store.window), MIN_FITTED))


class ChartWindow:
    """The window, fitted to the step until the user picks one (module docstring)."""

    def __init__(self, seconds: float | None = None) -> None:
        #: Fitted to the step (no window given, no + or - pressed since).
        self.fitted = seconds is None
        self.seconds = DEFAULT_WINDOW if seconds is None else seconds
        self._seen: tuple[object, ...] | None = None

    def follow(self, state: FleetState) -> bool:
        """Fit the step shown (when fitting); True when the window changed. Computed again
        only when a step started or ended (the console asks on every refresh tick)."""
        if not self.fitted:
            return False
        steps = state.steps
        key = (id(state), len(steps), steps[-1].ended if steps else None)
        if key == self._seen:
            return False
        self._seen = key
        seconds = fitted_seconds(state)
        if seconds is None or seconds == self.seconds:
            return False
        self.seconds = seconds
        return True

    def step(self, delta: int) -> None:
        """The next window of ``WINDOWS`` longer (``delta`` > 0) or shorter than this one
        (none past the longest or the shortest: this one stays); the window is the user's
        from then on."""
        if delta > 0:
            longer = [w for w in WINDOWS if w > self.seconds]
            self.seconds = longer[0] if longer else self.seconds
        else:
            shorter = [w for w in WINDOWS if w < self.seconds]
            self.seconds = shorter[-1] if shorter else self.seconds
        self.fitted = False

    def fit(self, state: FleetState) -> None:
        """Back to fitting the step."""
        self.fitted = True
        self._seen = None
        self.follow(state)

    def badge(self) -> str:
        """``window 1m05s`` (``= step`` when fitted to it)."""
        return f"window {format_duration(self.seconds)}" + (" = step" if self.fitted else "")
