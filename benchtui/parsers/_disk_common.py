"""What the disk monitor parsers share: iostat's column names, its number format, its clock.

Private to the disk family (iostat, iostat-json, diskstats, spdk_iostat); the registry skips
modules whose name starts with ``_``.

Column names map to ``(metric, op, scale, is_size)``: ``op`` is the ``op`` label (``None``: no
``op`` label), ``scale`` turns the printed number into base units and ``is_size`` says that
the column is an amount of data, so that ``iostat -h`` values carrying their own unit
("2.7M", "6.9k", "512.0B", "8.0s") can be read whatever the column's nominal unit.

iostat's units: "kB" is 1024 bytes (sysstat divides 512-byte sectors by 2), "MB" 1024² bytes,
"sec"/"Blk" are 512-byte sectors, times are milliseconds, ``avgrq-sz`` is in sectors while
``areq-sz``/``rareq-sz`` are in kB, ``%util`` is a percentage.
"""

from __future__ import annotations

import calendar
import re
from typing import Final

IOPS: Final = "disk_iops"
BANDWIDTH: Final = "disk_bandwidth_bytes"
AWAIT: Final = "disk_await_seconds"
QUEUE: Final = "disk_queue_depth"
UTIL: Final = "disk_util_ratio"
MERGED: Final = "disk_merged_iops"
REQ_SIZE: Final = "disk_request_size_bytes"
SVCTM: Final = "disk_service_time_seconds"
CPU: Final = "cpu_ratio"

KIB: Final = 1024.0
MIB: Final = 1024.0 * 1024.0
SECTOR: Final = 512.0

#: One column: metric, op label (None = no op label), scale to base units, amount of data?
Column = tuple[str, str | None, float, bool]


def _ops(prefix_fmt: str, metric: str, scale: float, is_size: bool) -> dict[str, Column]:
    """The read/write/discard(/flush) variants of a column name pattern."""
    out: dict[str, Column] = {}
    for letter, op in (("r", "read"), ("w", "write"), ("d", "discard"), ("f", "flush")):
        out[prefix_fmt.format(letter)] = (metric, op, scale, is_size)
    return out


#: sysstat column (text header name or JSON key) -> what it means. Columns not listed here
#: (%rrqm, kB_read, ...) are skipped.
COLUMNS: Final[dict[str, Column]] = {
    **_ops("{}/s", IOPS, 1.0, False),
    "tps": (IOPS, "total", 1.0, False),
    **_ops("{}kB/s", BANDWIDTH, KIB, True),
    **_ops("{}MB/s", BANDWIDTH, MIB, True),
    **_ops("{}sec/s", BANDWIDTH, SECTOR, True),
    "kB_read/s": (BANDWIDTH, "read", KIB, True),
    "kB_wrtn/s": (BANDWIDTH, "write", KIB, True),
    "kB_dscd/s": (BANDWIDTH, "discard", KIB, True),
    "MB_read/s": (BANDWIDTH, "read", MIB, True),
    "MB_wrtn/s": (BANDWIDTH, "write", MIB, True),
    "MB_dscd/s": (BANDWIDTH, "discard", MIB, True),
    # ``iostat -s`` (short layout, sysstat 12.1+): writes and discards in one column
    "kB_w+d/s": (BANDWIDTH, "write", KIB, True),
    "MB_w+d/s": (BANDWIDTH, "write", MIB, True),
    "Blk_read/s": (BANDWIDTH, "read", SECTOR, True),
    "Blk_wrtn/s": (BANDWIDTH, "write", SECTOR, True),
    "kB/s": (BANDWIDTH, "total", KIB, True),
    "MB/s": (BANDWIDTH, "total", MIB, True),
    **_ops("{}rqm/s", MERGED, 1.0, False),
    "rqm/s": (MERGED, "total", 1.0, False),
    **_ops("{}_await", AWAIT, 1e-3, False),
    "await": (AWAIT, "total", 1e-3, False),
    **_ops("{}areq-sz", REQ_SIZE, KIB, True),
    "areq-sz": (REQ_SIZE, "total", KIB, True),
    "avgrq-sz": (REQ_SIZE, "total", SECTOR, True),
    "aqu-sz": (QUEUE, None, 1.0, False),
    "avgqu-sz": (QUEUE, None, 1.0, False),
    "%util": (UTIL, None, 0.01, False),
    "svctm": (SVCTM, None, 1e-3, False),
}

#: ``iostat -h`` unit letters (sysstat's cprintf_unit): the unit of the printed value itself.
HUMAN_UNITS: Final[dict[str, float]] = {
    "s": SECTOR, "B": 1.0, "k": KIB, "M": MIB, "G": KIB**3, "T": KIB**4, "P": KIB**5,
}

#: avg-cpu / cpu_stat header word -> ``mode`` label.
CPU_MODES: Final[dict[str, str]] = {
    "user": "user", "nice": "nice", "system": "system", "sys": "system", "iowait": "iowait",
    "steal": "steal", "idle": "idle",
}


def to_number(text: str) -> float | None:
    """A number as iostat prints it: "12.50", "12,50" (decimal comma locales), "2.2%"."""
    try:
        return float(text)
    except ValueError:
        pass
    text = text.rstrip("%").replace(",", ".")
    try:
        return float(text)
    except ValueError:
        return None


def human_value(text: str, scale: float, is_size: bool) -> float | None:
    """A value that did not parse as a plain number: ``iostat -h`` style ("2.7M", "6.9k",
    "1.4%") or a decimal comma. Returns the value in base units, or None."""
    if not text:
        return None
    unit = HUMAN_UNITS.get(text[-1])
    if unit is not None:
        if not is_size:
            return None
        number = to_number(text[:-1])
        return None if number is None else number * unit
    number = to_number(text)
    return None if number is None else number * scale


# --- the report clock: iostat -t, the JSON "timestamp", the banner's date ---------------------

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2}):(\d{2})(?:\.\d+)?\s*"
    r"(Z|[+-]\d{2}:?\d{2})?$"
)
_LOCAL = re.compile(
    r"^(\d{1,4})([/.-])(\d{1,2})\2(\d{2,4})\.?\s+(\d{1,2}):(\d{2}):(\d{2})"
    r"(?:\s*([AaPp])\.?\s*[Mm]\.?)?$"
)
_DATE_ONLY = re.compile(r"^(\d{1,4})([/.-])(\d{1,2})\2(\d{2,4})$")


def _year(text: str) -> int:
    year = int(text)
    if len(text) <= 2:
        year += 2000 if year < 70 else 1900
    return year


class ReportClock:
    """Turns iostat's report timestamps into Unix epoch seconds.

    The format depends on the locale and S_TIME_FORMAT: "2026-11-22T03:48:51+0000" (ISO, with a
    zone), "11/22/26 03:48:51" (C locale), "11/22/2026 03:48:51 AM" (en_US), "22/11/26
    03:48:51" (en_GB), "22.11.2026 03:48:51" (de_DE). A time without a zone is taken as UTC.
    For a d/d/y date whose order cannot be told from the numbers, the order learnt from an
    earlier date of the stream (the banner's or a timestamp's, where one field is above 12)
    is used, else month first (the C and en_US order).
    """

    __slots__ = ("day_first",)

    def __init__(self) -> None:
        self.day_first: bool | None = None

    def learn(self, a: int, b: int) -> None:
        """Learn the day/month order from the two first fields of a slashed date."""
        if self.day_first is None:
            if a > 12 >= b:
                self.day_first = True
            elif b > 12 >= a:
                self.day_first = False

    def learn_date(self, text: str) -> None:
        """A bare date (the banner line's) that may tell the day/month order."""
        m = _DATE_ONLY.match(text.strip())
        if m is not None and m.group(2) == "/" and len(m.group(1)) <= 2:
            self.learn(int(m.group(1)), int(m.group(3)))

    def parse(self, text: str) -> float | None:
        """Epoch seconds, or None when ``text`` is not a timestamp we can read."""
        text = text.strip()
        m = _ISO.match(text)
        if m is not None:
            y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
            offset = 0
            zone = m.group(7)
            if zone and zone != "Z":
                digits = zone[1:].replace(":", "")
                offset = (int(digits[:2]) * 60 + int(digits[2:])) * 60
                if zone[0] == "-":
                    offset = -offset
            return self._epoch((y, mo, d, h, mi, s), -offset)
        m = _LOCAL.match(text)
        if m is None:
            return None
        a_text, sep, b_text, c_text, h_text, mi_text, s_text, ampm = m.groups()
        a, b = int(a_text), int(b_text)
        if len(a_text) == 4:
            y, mo, d = int(a_text), b, int(c_text)
        elif sep == ".":
            d, mo, y = a, b, _year(c_text)
        else:
            self.learn(a, b)
            if self.day_first:
                d, mo = a, b
            else:
                mo, d = a, b
            y = _year(c_text)
        h = int(h_text)
        if ampm is not None:
            h %= 12
            if ampm in "Pp":
                h += 12
        return self._epoch((y, mo, d, h, int(mi_text), int(s_text)), 0)

    @staticmethod
    def _epoch(fields: tuple[int, int, int, int, int, int], shift: int) -> float | None:
        y, mo, d, h, mi, s = fields
        if not (1 <= mo <= 12 and 1 <= d <= 31 and h <= 23 and mi <= 59 and s <= 60):
            return None
        try:
            return float(calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) + shift)
        except (OverflowError, ValueError):
            return None


def looks_like_timestamp(line: str) -> bool:
    """Cheap pre-check before ReportClock.parse: short, starts with a digit, has a time."""
    return len(line) < 40 and line[:1].isdigit() and ":" in line
