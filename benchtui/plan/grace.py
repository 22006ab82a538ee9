"""``controller_grace``: how long a host lets a session's processes run on once the controller
is gone (``[session] controller_grace`` in a plan, ``--controller-grace`` on the command line);
``reconnect_window``: how long the controller lets a host stay unreachable before it gives the
host up (``[session] reconnect_window``, ``--reconnect-window``).

Written as seconds (``60``, ``"60s"``, ``"2m"``, ``"1h"``, ``"0"``: stop at once) or, for the
grace, ``"off"`` (no watchdog: the processes run until their deadline, for deliberately
unattended runs). Held as seconds, ``math.inf`` for off.
"""

from __future__ import annotations

import math

from benchtui.model.units import parse_duration

#: The default: a minute, so that a dropped link that comes back within it changes nothing.
DEFAULT_CONTROLLER_GRACE = 60.0
#: The word that turns the host's watchdog off.
OFF = "off"
#: How to write it, for messages.
EXAMPLES = '"60s", "5m", 0 (stop at once) or "off"'
#: How to write a reconnect window, for messages.
WINDOW_EXAMPLES = '"30s", "2m" or 90'
_LONGEST = 1e9


def parse_grace(value: object) -> float:
    """Seconds (``math.inf`` for "off") from a number or a text; ``ValueError`` with one
    sentence when ``value`` is neither."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number of seconds or a duration such as {EXAMPLES}")
    if isinstance(value, int | float):
        seconds: float | None = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if text == OFF:
            return math.inf
        seconds = parse_duration(text.replace(" ", "")) if text else None
    else:
        raise ValueError(f"must be a number of seconds or a duration such as {EXAMPLES}")
    if seconds is None or not math.isfinite(seconds):
        raise ValueError(f"{value!r} is not a duration: write {EXAMPLES}")
    if seconds < 0 or seconds > _LONGEST:
        raise ValueError(f"{value!r} must be zero or more seconds: write {EXAMPLES}")
    return seconds


def parse_window(value: object) -> float:
    """A reconnect window in seconds (more than zero, finite) from a number or a text;
    ``ValueError`` saying what is wrong with ``value`` ("is not a duration", ...) when it is
    not one (the caller names it, and shows ``WINDOW_EXAMPLES``)."""
    if isinstance(value, str) and value.strip().lower() == OFF:
        raise ValueError("cannot be off: a host that stays unreachable is given up after it")
    try:
        seconds = parse_grace(value)
    except ValueError:
        raise ValueError("is not a duration") from None
    if seconds <= 0:
        raise ValueError("must be more than zero seconds")
    return seconds


def grace_text(seconds: float) -> str:
    """``60 s``, ``1.5 s`` or ``off``: a grace as messages show it."""
    return OFF if math.isinf(seconds) else f"{seconds:g} s"
