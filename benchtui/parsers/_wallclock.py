"""Wall-clock stamps printed by Ceph and SPDK tools, turned into Unix time.

Shared by the ``rados-bench`` and ``fbbench`` parsers (a private module: the registry skips
modules whose name starts with ``_``).

The tools print local time: ``rados bench`` of Ceph 15 and later as ISO 8601 with the zone
(``2023-04-18T15:12:33.881436+0800``), older Ceph and SPDK's log prefix without any zone
(``2018-10-11 11:57:52.537579``, ``[2023-08-29 14:57:12.138883]``). A stamp with a zone is
exact. For a stamp without one, the zone is learnt once per stream from the time the first
stamped line was received (``t`` passed with the line, live capture): the difference between
the two, rounded to 15 minutes (every real zone offset is a multiple of 15 minutes), is the
zone offset; the tool's sub-second clock is then kept. With no receive time (parsing a saved
file) the stamp is taken as UTC.
"""

from __future__ import annotations

import calendar
import re
from typing import Final

#: ``YYYY-MM-DD[ T]HH:MM:SS[.frac][zone]`` anywhere at the start of a text.
STAMP: Final = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?"
)

#: Zone offsets are multiples of this (Nepal's +05:45 included).
_ZONE_STEP: Final = 900.0
#: A receive time further than this from the stamp is not trusted to guess a zone.
_MAX_ZONE: Final = 14 * 3600.0 + 450.0


def stamp_epoch(m: re.Match[str]) -> tuple[float, bool] | None:
    """(seconds since the epoch, True if the stamp carried its zone) for a ``STAMP`` match.
    Without a zone the value is the stamp read as UTC. None for an impossible date."""
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59
            and second <= 60 and year >= 1970):
        return None
    value = float(calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)))
    frac = m.group(7)
    if frac:
        value += int(frac) / 10 ** len(frac)
    zone = m.group(8)
    if zone is None:
        return value, False
    if zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:]) * 60
        value -= offset if zone[0] == "+" else -offset
    return value, True


class ZoneGuess:
    """Turns tool stamps into Unix time, learning the zone of zone-less stamps (see module)."""

    __slots__ = ("offset",)

    def __init__(self) -> None:
        #: Seconds to add to a zone-less stamp read as UTC; None until learnt.
        self.offset: float | None = None

    def epoch(self, m: re.Match[str], received: float | None) -> float | None:
        """The Unix time of a ``STAMP`` match; ``received`` is when its line arrived, if known."""
        parsed = stamp_epoch(m)
        if parsed is None:
            return None
        value, exact = parsed
        if exact:
            return value
        if self.offset is None and received is not None:
            guess = round((received - value) / _ZONE_STEP) * _ZONE_STEP
            if abs(guess) <= _MAX_ZONE:
                self.offset = guess
        return value + (self.offset or 0.0)
