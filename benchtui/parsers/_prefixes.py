"""Prefixes that users' fleet tools and loggers put before every line of a tool's output.

* ``pdsh``/``clush`` (and ``dshbak``-less ``pdsh -S``...): ``node3: Device  r/s ...``, one
  ``HOST: `` before each line of each host (pdsh prints a blank line as ``node3: ``).
* a logger's stamp: ISO 8601 (``2016-04-08 01:06:59``, ``2016-04-08T01:06:59.123+02:00``,
  Python logging's ``2016-04-08 01:06:59,123``), syslog's and moreutils ``ts``'s default
  ``%b %d %H:%M:%S`` (``Apr  8 01:06:59``, ``Apr 08 01:06:59.123456`` with ``%.S``), Unix time
  (``ts '%.s'``: ``1460077619.123456``), or a bare time of day (``ts -s``'s ``00:00:05``);
  each maybe in brackets (``[2016-04-08 01:06:59]``).
* both, in either order (``pdsh ... | ts``: the stamp first; ``pdsh 'iostat | ts'``: the host
  first), and syslog's ``STAMP HOST TAG[PID]: `` (``iostat | logger -t iostat`` read back
  from /var/log/syslog).

``find_prefixes`` tells from the start of a stream which of these shapes its lines carry: the
one most lines carry, if at least ``MIN_SHARE`` of the non-blank lines carry it; the caller
keeps it only if the tool's output is recognised at least as well with it removed
(``registry.choose_stream``). ``LinePrefixes.split`` then cuts each line into (host, time,
the tool's line). A stamp's time: with a zone, exact; without one, read as UTC (as iostat's
own stamps, docs/tools/disk.md); syslog's stamps have no year: the year that puts the stream's
first stamp at or before ``reference`` (the file's modification time, given by the caller),
going on to the next year where the months wrap (December to January). A time of day alone
(no date) is removed but gives no time.

Pure text in, values out: no I/O (a private module of ``parsers``; the registry skips it).
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

#: A shape is kept when at least this share of the (first ``HEAD_LINES``) non-blank lines
#: carry it: a report may hold a few lines of its own around the prefixed output.
MIN_SHARE: Final = 0.8
#: How many lines of a stream's head ``find_prefixes`` looks at.
HEAD_LINES: Final = 400

_MONTHS: Final = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}

#: Stamp kinds -> the text of one (no groups of its own: parsed by ``_stamp_epoch``).
STAMPS: Final = {
    "iso": r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?",
    "syslog": r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d"
              r"(?:\.\d{1,9})?",
    "epoch": r"1\d{9}(?:\.\d{1,9})?",
    "clock": r"\d\d:\d\d:\d\d(?:\.\d{1,9})?",
}
#: A host name as pdsh/clush print it (a name or an IPv4 address).
_HOST: Final = r"[A-Za-z0-9_][\w.-]*"
#: The end of a stamp: a space or tab (ts, loggers), or the end of a blank line.
_AFTER_STAMP: Final = r"(?:[ \t]|$)"
#: The end of pdsh's ``host: `` (``host:`` on a blank line whose space was trimmed).
_AFTER_HOST: Final = r":(?: |$)"


def _stamp(kind: str) -> str:
    """A stamp of ``kind`` as group ``stamp``, maybe bracketed, and its separator."""
    body = STAMPS[kind]
    return rf"(?:\[(?P<stamp>{body})\]|(?P<stamp_>{body})){_AFTER_STAMP}"


#: Shapes -> their pattern (``{stamp}`` stands for a stamp of one kind).
_SHAPES: Final = {
    "host": rf"(?P<host>{_HOST}){_AFTER_HOST}",
    "stamp": "{stamp}",
    "stamp host": rf"{{stamp}}(?P<host>{_HOST}){_AFTER_HOST}",
    "host stamp": rf"(?P<host>{_HOST}){_AFTER_HOST}{{stamp}}",
    "syslog": rf"{{stamp}}(?P<host>{_HOST}) [\w./-]+(?:\[\d+\])?{_AFTER_HOST}",
}


@dataclass(frozen=True, slots=True)
class PrefixShape:
    """One shape of line prefix: which parts, and the kind of stamp (None: no stamp)."""

    parts: str  # a key of _SHAPES
    stamp: str | None

    @property
    def hosts(self) -> bool:
        """Whether the lines name their host."""
        return self.parts != "stamp"

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self)

    def describe(self) -> str:
        stamp = f"{self.stamp} stamps" if self.stamp else ""
        return {"host": "host: prefixes (pdsh/clush)", "stamp": stamp,
                "stamp host": f"{stamp} and host: prefixes",
                "host stamp": f"host: prefixes and {stamp}",
                "syslog": f"syslog lines ({stamp}, host, tag)"}[self.parts]


_PATTERNS: dict[PrefixShape, re.Pattern[str]] = {}


def _compiled(shape: PrefixShape) -> re.Pattern[str]:
    pattern = _PATTERNS.get(shape)
    if pattern is None:
        text = _SHAPES[shape.parts]
        if shape.stamp is not None:
            text = text.replace("{stamp}", _stamp(shape.stamp))
        pattern = _PATTERNS[shape] = re.compile(text)
    return pattern


def all_shapes() -> list[PrefixShape]:
    """Every shape, the most specific first (so that ties go to it)."""
    out = [PrefixShape(parts, kind) for parts in ("syslog", "stamp host", "host stamp")
           for kind in STAMPS]
    out += [PrefixShape("stamp", kind) for kind in STAMPS]
    out.append(PrefixShape("host", None))
    return out


def find_prefixes(head: str) -> PrefixShape | None:
    """The prefix shape the lines of ``head`` (the start of a stream) carry, or None: the one
    most of its first ``HEAD_LINES`` non-blank lines carry (the most specific of equals), if
    at least ``MIN_SHARE`` of them do."""
    lines = [line for line in head.split("\n", HEAD_LINES)[:HEAD_LINES] if line.strip()]
    if not lines:
        return None
    # A cheap look first: a plain tool's output has few lines that start like a prefix.
    starts = sum(1 for line in lines if _MAYBE(line))
    need = MIN_SHARE * len(lines)
    if starts < need:
        return None
    best: PrefixShape | None = None
    best_count = 0
    for shape in all_shapes():
        match = shape.pattern.match
        count = sum(1 for line in lines if match(line))
        if count > best_count:
            best, best_count = shape, count
    return best if best_count >= need else None


#: A line that may start with a prefix: a word and a colon-space, a digit, a month, a bracket.
_MAYBE: Final = re.compile(
    rf"{_HOST}{_AFTER_HOST}|\[?(?:\d|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) )"
).match


class LinePrefixes:
    """Cuts the lines of one stream that carry ``shape`` into host, time and the tool's line.

    ``reference``: a time (Unix seconds) at or after the stream's first syslog stamp (the
    file's modification time), for their year; None: syslog stamps give no time.
    (A plain class, not a dataclass: creating one costs ~2.4 M instructions at import,
    which every ``benchtui parse`` pays.)"""

    __slots__ = ("_month", "_year", "reference", "shape")

    def __init__(self, shape: PrefixShape, reference: float | None = None) -> None:
        self.shape = shape
        self.reference = reference
        self._year: int | None = None
        self._month = 0

    def split(self, line: str) -> tuple[str | None, float | None, str]:
        """(host or None, the stamp's time or None, the line without its prefix). A line
        without the shape's prefix is returned whole, with no host and no time."""
        m = self.shape.pattern.match(line)
        if m is None:
            return None, None, line
        rest = line[m.end():]
        if self.shape.stamp is None:
            return m.group("host"), None, rest
        host = m.group("host") if self.shape.hosts else None
        return host, self._epoch(m.group("stamp") or m.group("stamp_")), rest

    def strip_head(self, head: str) -> str:
        """``head`` with the prefixes removed and each host's lines together, in the order the
        hosts first appear (what detection reads)."""
        if not self.shape.hosts:
            return "\n".join(self.split(line)[2] for line in head.split("\n"))
        by_host: dict[str | None, list[str]] = {}
        match = self.shape.pattern.match
        for line in head.split("\n"):
            m = match(line)
            if m is None:
                by_host.setdefault(None, []).append(line)
            else:
                by_host.setdefault(m.group("host"), []).append(line[m.end():])
        return "\n".join("\n".join(lines) for lines in by_host.values())

    def _epoch(self, text: str) -> float | None:
        kind = self.shape.stamp
        if kind == "iso":
            return _iso_epoch(text)
        if kind == "epoch":
            return float(text)
        if kind == "syslog":
            return self._syslog_epoch(text)
        return None  # a time of day: no date

    def _syslog_epoch(self, text: str) -> float | None:
        month = _MONTHS[text[:3]]
        day = int(text[4:6])
        hour, minute, second = int(text[7:9]), int(text[10:12]), int(text[13:15])
        frac = float("0" + text[15:]) if len(text) > 15 else 0.0
        if self._year is None:
            if self.reference is None:
                return None
            self._year = _year_before(self.reference, (month, day, hour, minute, second))
        elif month < self._month - 6:  # December to January: a new year
            self._year += 1
        self._month = month
        return _utc((self._year, month, day, hour, minute, second), frac)


_ISO: Final = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?")


def _iso_epoch(text: str) -> float | None:
    m = _ISO.match(text)
    if m is None:
        return None
    frac = m.group(7)
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    value = _utc((y, mo, d, h, mi, sec), int(frac) / 10 ** len(frac) if frac else 0.0)
    zone = m.group(8)
    if value is None or zone is None or zone == "Z":
        return value
    digits = zone[1:].replace(":", "")
    offset = int(digits[:2]) * 3600 + int(digits[2:]) * 60
    return value - offset if zone[0] == "+" else value + offset


def _utc(fields: tuple[int, int, int, int, int, int], frac: float) -> float | None:
    """Seconds since the epoch of (year, month, day, hour, minute, second) in UTC, + frac."""
    year, month, day, hour, minute, second = fields
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59
            and second <= 60):
        return None
    try:
        return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) + frac
    except (OverflowError, ValueError):
        return None


def _year_before(reference: float, fields: tuple[int, int, int, int, int]) -> int:
    """The year that puts the stamp (month, day, hour, minute, second) at or before
    ``reference`` (a day's slack for zones)."""
    year = time.gmtime(reference).tm_year
    for candidate in (year + 1, year, year - 1):
        stamp = _utc((candidate, *fields), 0.0)
        if stamp is not None and stamp <= reference + 86400:
            return candidate
    return year - 1

