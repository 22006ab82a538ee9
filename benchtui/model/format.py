"""Base-unit values as short strings for people: the only place benchtui formats numbers.

Everything below the UI keeps seconds, bytes, bytes per second, operations and ratios 0..1
(see docs/SAMPLES.md). The console and ``benchtui report`` show them through these pure
functions, so that a number looks the same in the header, a pane, the detail view and a report.

Conventions (chosen for a screen that updates every second):

* three significant digits, trailing zeros kept ("1.20M", "4.00 KiB"): a column of numbers
  keeps its width while it updates, so the eye is not drawn by jitter;
* at most three integer digits before a prefix changes (1000 KiB is shown as "0.98 MiB");
* bytes use binary prefixes (KiB, MiB, GiB, as fio prints them), network rates use decimal bits
  ("9.41 Gbit/s", as iperf prints them) although the value given is in bytes per second;
* ``None``, NaN and infinities (missing data) are shown as :data:`MISSING`, never as "nan".

Public API::

    MISSING = "–"
    format_count(value, unit="")        # 12.3k, "1.25M IOPS", 412, 0.50
    format_bytes(value)                 # "412 MiB", "512 B"
    format_byte_rate(value)             # "412 MiB/s"
    format_bit_rate(bytes_per_second)   # "9.41 Gbit/s"
    format_latency(seconds)             # "412 µs", "1.23 ms", "850 ns"
    format_duration(seconds)            # "45s", "3m05s", "1h02m", "2d03h"
    format_ratio(ratio)                 # "87.5%", "100%", "0%"
    format_share(share)                 # a share of a baseline: "97%", "104%", "12x"
    format_metric(metric, value)        # picks one of the above from a SAMPLES.md metric name
    escape_control(text)                # "db\\x1b[2J1": control characters made visible
"""

from __future__ import annotations

import math
import re

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

MISSING: Final = "–"

_COUNT_PREFIXES: Final = ("", "k", "M", "G", "T", "P")
_BYTE_PREFIXES: Final = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_BIT_PREFIXES: Final = ("bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "Pbit/s")
_TIME_UNITS: Final = ((1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms"), (1.0, "s"))


#: Control characters (C0, DEL, C1): a name holding them would clear a terminal or break a
#: table's row when printed raw.
CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ESCAPED: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # a tab is only a space


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 step``, ``2 steps``, ``0 warnings``; ``nouns`` when the plural is not noun + s."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def escape_control(text: str) -> str:
    """``text`` with each control character but tab written as Python writes it (``\\x1b``,
    ``\\n``): safe to print anywhere, and still telling what was there. Other text is
    unchanged."""
    if not _ESCAPED.search(text):
        return text
    return _ESCAPED.sub(lambda m: repr(m.group())[1:-1], text)


def markdown_cell(text: str) -> str:
    """``text`` for a cell of a Markdown table: a ``|`` (a step named ``read|write``) would
    end the cell and shift the row, a control character (a newline in a name) would end it."""
    return escape_control(text).replace("|", "\\|")


def _usable(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _three_digits(magnitude: float) -> str:
    """A non-negative number below 1000 with three significant digits ("412", "41.2", "4.12")."""
    if magnitude >= 99.95:
        return f"{magnitude:.0f}"
    if magnitude >= 9.995:
        return f"{magnitude:.1f}"
    return f"{magnitude:.2f}"


def _whole(magnitude: float) -> str:
    """A number past every prefix: whole up to a billion, then "1.70e+293" (an absurd but
    finite value stays one short cell, not three hundred digits)."""
    return f"{magnitude:.0f}" if magnitude < 1e9 else f"{magnitude:.3g}"


def _scaled(value: float, step: float, prefixes: tuple[str, ...]) -> tuple[str, str]:
    """(number text, prefix) with the number below 1000 after rounding to 3 digits."""
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    index = 0
    while index < len(prefixes) - 1 and magnitude >= 999.5:
        # "999.7" would round to "1000": move to the next prefix instead
        magnitude /= step
        index += 1
    if magnitude >= 1000:  # beyond the last prefix: print it whole
        return sign + _whole(magnitude), prefixes[index]
    return sign + _three_digits(magnitude), prefixes[index]


def format_count(value: float | None, unit: str = "") -> str:
    """Operations or any plain count: 412, 12.3k, 1.25M; "1.25M IOPS" with ``unit="IOPS"``.

    Whole numbers below 1000 print without decimals ("7", "412"); fractions keep three
    significant digits ("0.50", "12.5").
    """
    number = _usable(value)
    if number is None:
        return MISSING
    if abs(number) < 999.5 and number == int(number):
        text = str(int(number))
    elif abs(number) < 999.5 and abs(number) >= 99.95:
        text = f"{number:.0f}"
    else:
        digits, prefix = _scaled(number, 1000.0, _COUNT_PREFIXES)
        text = digits + prefix
    return f"{text} {unit}" if unit else text


def format_bytes(value: float | None) -> str:
    """A size in bytes with binary prefixes: "512 B", "4.00 KiB", "412 MiB", "1.50 GiB"."""
    number = _usable(value)
    if number is None:
        return MISSING
    if abs(number) < 999.5:
        return f"{number:.0f} B"
    digits, prefix = _scaled(number, 1024.0, _BYTE_PREFIXES)
    return f"{digits} {prefix}"


def format_byte_rate(value: float | None) -> str:
    """Bytes per second: "412 MiB/s"."""
    text = format_bytes(value)
    return text if text == MISSING else text + "/s"


def format_bit_rate(bytes_per_second: float | None) -> str:
    """A network rate given in bytes per second, shown in decimal bits: "9.41 Gbit/s"."""
    number = _usable(bytes_per_second)
    if number is None:
        return MISSING
    bits = _usable(number * 8.0)
    if bits is None:
        return MISSING
    if abs(bits) < 999.5:
        return f"{bits:.0f} bit/s"
    digits, prefix = _scaled(bits, 1000.0, _BIT_PREFIXES)
    return f"{digits} {prefix}"


def format_latency(seconds: float | None) -> str:
    """A latency with three significant digits: "850 ns", "412 µs", "1.23 ms", "2.50 s"."""
    number = _usable(seconds)
    if number is None:
        return MISSING
    if number == 0:
        return "0 s"
    magnitude = abs(number)
    sign = "-" if number < 0 else ""
    for index, (scale, unit) in enumerate(_TIME_UNITS):
        scaled = magnitude / scale
        last = index == len(_TIME_UNITS) - 1
        if last or scaled < 999.5:
            if scaled >= 1000:
                return f"{sign}{_whole(scaled)} {unit}"
            return f"{sign}{_three_digits(scaled)} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def format_duration(seconds: float | None) -> str:
    """Elapsed time or an ETA, two units at most: "45s", "3m05s", "1h02m", "2d03h"."""
    number = _usable(seconds)
    if number is None:
        return MISSING
    sign = "-" if number < 0 else ""
    total = round(abs(number))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}d{hours:02d}h"
    if hours:
        return f"{sign}{hours}h{minutes:02d}m"
    if minutes:
        return f"{sign}{minutes}m{secs:02d}s"
    return f"{sign}{secs}s"


def format_ratio(ratio: float | None) -> str:
    """A ratio 0..1 as a percentage: "87.5%", "100%", "0.42%", "0%"."""
    number = _usable(ratio)
    if number is None:
        return MISSING
    percent = _usable(number * 100.0)
    if percent is None:
        return MISSING
    if percent == 0:
        return "0%"
    if abs(percent) >= 999.5:  # not a share any more (a bad value): keep it short
        return format_count(percent) + "%"
    if abs(percent) >= 99.95:
        return f"{percent:.0f}%"
    sign = "-" if percent < 0 else ""
    return f"{sign}{_three_digits(abs(percent))}%"


def format_share(share: float | None) -> str:
    """A value as a share of a baseline's, whole percent: "97%", "104%", "0%"; ten times
    or more as a factor ("12x"), so that it stays four cells wide at most."""
    number = _usable(share)
    if number is None:
        return MISSING
    percent = round(number * 100.0)
    if abs(percent) < 1000:
        return f"{percent}%"
    return f"{number:.0f}x" if abs(number) < 999.5 else ">999x"


def format_metric(metric: str, value: float | None) -> str:
    """Format a value by its SAMPLES.md metric name (base units are implied by the name).

    ``net_bandwidth_bytes`` is shown in bits per second, other ``*bandwidth_bytes`` as byte
    rates, ``*_seconds`` as latencies, ``*_ratio`` as percentages, the rest as counts.
    """
    if metric.startswith("net_bandwidth"):
        return format_bit_rate(value)
    if metric.endswith("bandwidth_bytes"):
        return format_byte_rate(value)
    if metric.endswith("_bytes"):
        return format_bytes(value)
    if metric.endswith("_seconds"):
        return format_latency(value)
    if metric.endswith("_ratio"):
        return format_ratio(value)
    return format_count(value)
