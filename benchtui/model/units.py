"""Turning the numbers tools print into base units (bytes, seconds, operations, ratios).

Every parser goes through these functions, so that "22.1k", "45.9MiB", "801kB/s",
"9.41 Gbits/sec" and "60039msec" mean the same thing everywhere. They return ``None`` for text
that is not a number of the expected kind; they never raise and never return NaN or infinity.
"""

from __future__ import annotations

import math
import re

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

_NUMBER = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"

#: Multipliers of plain counts (fio's IOPS=22.1k, iperf's packet counts).
COUNT_SUFFIXES: Final[dict[str, float]] = {
    "": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "t": 1e12, "T": 1e12,
}

#: Byte units. Binary prefixes are powers of 1024, SI prefixes powers of 1000.
BYTE_UNITS: Final[dict[str, float]] = {
    "B": 1.0, "": 1.0,
    "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3, "TiB": 1024.0**4, "PiB": 1024.0**5,
    "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
    "K": 1024.0, "M": 1024.0**2, "G": 1024.0**3, "T": 1024.0**4,
}

#: Bit units as iperf and iperf3 print them: decimal prefixes (Gbits = 1e9 bits).
BIT_UNITS: Final[dict[str, float]] = {
    "bits": 1.0, "Kbits": 1e3, "Mbits": 1e6, "Gbits": 1e9, "Tbits": 1e12,
    "kbits": 1e3, "mbits": 1e6, "gbits": 1e9,
}

#: Time units to seconds.
TIME_UNITS: Final[dict[str, float]] = {
    "ns": 1e-9, "nsec": 1e-9, "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "μs": 1e-6,
    "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "m": 60.0, "min": 60.0,
    "h": 3600.0, "hr": 3600.0,
}

_SPLIT_PATTERN: Final = r"^\s*" + _NUMBER + r"\s*([A-Za-zµμ]*)\s*(?:/s(?:ec)?)?\s*$"
#: Compiled on first use (~3 M instructions: not at the start of every command).
_SPLIT: re.Pattern[str] | None = None


def finite(value: float) -> float | None:
    """The value, or None if it is NaN or infinite."""
    return value if math.isfinite(value) else None


def parse_float(text: str) -> float | None:
    """A plain number, or None."""
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return None
    return finite(value)


def _split(text: str) -> tuple[float, str] | None:
    global _SPLIT  # noqa: PLW0603 - compiled once, on first use
    if _SPLIT is None:
        _SPLIT = re.compile(_SPLIT_PATTERN)
    m = _SPLIT.match(text)
    if m is None:
        return None
    value = parse_float(m.group(1))
    if value is None:
        return None
    return value, m.group(2)


def parse_count(text: str) -> float | None:
    """"22.1k" -> 22100.0, "7349" -> 7349.0."""
    parts = _split(text)
    if parts is None:
        return None
    value, unit = parts
    mult = COUNT_SUFFIXES.get(unit)
    return None if mult is None else finite(value * mult)


def parse_bytes(text: str, *, si_as_binary: bool = False) -> float | None:
    """"45.9MiB" -> bytes; "801kB/s" -> 801000.0 (a trailing /s is accepted and ignored).

    ``si_as_binary``: read kB/MB/GB as powers of 1024 (older tools that print MB for MiB,
    like rados bench's "MB/s").
    """
    parts = _split(text)
    if parts is None:
        return None
    value, unit = parts
    if si_as_binary and unit in ("kB", "KB", "MB", "GB", "TB"):
        unit = {"kB": "KiB", "KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}[unit]
    mult = BYTE_UNITS.get(unit)
    return None if mult is None else finite(value * mult)


def parse_bits_rate(value: str | float, unit: str) -> float | None:
    """iperf's ("9.41", "Gbits/sec") -> bytes per second."""
    number = parse_float(str(value))
    base = unit.split("/", 1)[0]
    mult = BIT_UNITS.get(base)
    if number is None or mult is None:
        return None
    return finite(number * mult / 8.0)


def parse_bits_quantity(value: str | float, unit: str) -> float | None:
    """iperf's transfer column ("1.10", "GBytes") -> bytes; iperf2 uses binary prefixes here."""
    number = parse_float(str(value))
    if number is None:
        return None
    table = {"Bytes": 1.0, "KBytes": 1024.0, "MBytes": 1024.0**2, "GBytes": 1024.0**3,
             "TBytes": 1024.0**4}
    mult = table.get(unit)
    return None if mult is None else finite(number * mult)


def parse_duration(text: str, default_unit: str = "s") -> float | None:
    """"60039msec" -> 60.039, "820.31" with default_unit="nsec" -> 8.2031e-07."""
    parts = _split(text)
    if parts is None:
        return None
    value, unit = parts
    mult = TIME_UNITS.get(unit or default_unit)
    return None if mult is None else finite(value * mult)


def time_unit(unit: str) -> float | None:
    """Seconds per unit ("usec" -> 1e-6), None for an unknown unit."""
    return TIME_UNITS.get(unit)


def percent_to_ratio(text: str) -> float | None:
    """"99.61%" or "99.61" -> 0.9961."""
    value = parse_float(text.strip().rstrip("%"))
    return None if value is None else finite(value / 100.0)
