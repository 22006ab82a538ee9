"""How fio reads an option's value: numbers, sizes and times, exactly as fio's parse.c does.

fio (fio-3.33, parse.c: ``str_to_decimal``, ``get_mult_time``, ``get_mult_bytes``,
``check_int``) reads the leading whole number with ``strtoll`` (hexadecimal when the text holds
``0x``) and then a suffix. It refuses a value with no number at all, and silently misreads many
others:

- a time's suffix must be ``us``/``usec``, ``ms``/``msec`` (or anything starting so), or exactly
  ``s``, ``m``, ``h`` or ``d``; any other (``15sec``, ``2min``, ``15s0``) counts as microseconds,
  and a bare number is in the option's own unit (seconds for ``runtime``, microseconds for
  ``thinktime``);
- a size's suffix is read by its first letter (``k``, ``m``, ``g``, ``t``, ``p``; ``%`` for a
  share); ``4x`` is 4 bytes; with fio's default ``kb_base=1024`` the IEC forms are the other
  way round: ``4k`` is 4096 bytes but ``4KiB`` is 4000;
- everything after the whole number is dropped or misread: ``1.5g`` is 1 byte, ``1.5s`` is 1 s.

``read_time``, ``read_size`` and ``read_int`` return what fio makes of a value, and whether that
is what its text says (``exact``): a check can then tell a value fio refuses from one it reads as
something else. Values are in base units: seconds, bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Time suffixes fio knows exactly (``get_mult_time``), in microseconds; ``us`` and ``ms`` are
#: matched as prefixes (``usec``, ``msec``).
_TIME_UNITS = {"s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
_SIZE_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SEPARATORS = ":-,/"
_HEX = re.compile(r"\s*[+-]?0[xX][0-9a-fA-F]+")


@dataclass(frozen=True)
class Reading:
    """What fio makes of a value: ``value`` (seconds, bytes or a count; None when refused),
    ``exact`` when that is what the text says, ``percent`` for ``N%`` (a share, 0-100)."""

    value: float | None
    exact: bool = True
    percent: bool = False


def strtoll(text: str) -> tuple[int, int] | None:
    """C's ``strtoll`` as fio calls it: base 16 when the text holds ``0x`` anywhere, else 10;
    leading blanks and a sign allowed. (value, index after the number), or None when no digit
    was read."""
    base = 16 if "0x" in text or "0X" in text else 10
    pattern = r"\s*[+-]?(?:0[xX])?[0-9a-fA-F]+" if base == 16 else r"\s*[+-]?[0-9]+"
    m = re.match(pattern, text)
    if m is None:
        return None
    digits = m.group(0).strip()
    try:
        return int(digits, base), m.end()
    except ValueError:  # "0x" alone: strtoll reads the 0
        return 0, m.end() - 1


def _after_digits(text: str) -> int:
    """Where fio's suffix scan stops: past digits and signs from the start (``get_mult_*``)."""
    i = 0
    while i < len(text) and (text[i].isdigit() or text[i] in "+-"):
        i += 1
    return i


def read_time(text: str, *, bare_seconds: bool, said: str | None = None) -> Reading:
    """A time option's value (``runtime``, ``thinktime``) in seconds, as fio reads it;
    ``exact`` when it is what ``said`` (the part as written; ``text`` itself) says."""
    number = strtoll(text)
    if number is None or not text:
        return Reading(None)
    whole, _ = number
    start = _after_digits(text)
    suffix = text[start:].lower() if start < len(text) and text[start].isalpha() else ""
    if not suffix:
        micros = 1_000_000 if bare_seconds else 1
    elif suffix.startswith("us"):
        micros = 1
    elif suffix.startswith("ms"):
        micros = 1000
    else:
        micros = _TIME_UNITS.get(suffix, 1)
    value = whole * micros
    said = text if said is None else said
    exact = _HEX.fullmatch(said) is not None or \
        meant_micros(said, bare_seconds=bare_seconds) == value
    return Reading(value / 1e6, exact)


def _size_multiplier(suffix: str, kb_base: int) -> tuple[int, bool]:
    """(multiplier, percent) of fio's ``__get_mult_bytes`` for the text after the number."""
    low = suffix.lower()
    for i, char in enumerate(low):
        if char in _SEPARATORS:
            low = low[:i]
            break
    if low.startswith("%"):
        return 1, True
    for prefix, power in _SIZE_POWERS.items():
        if low.startswith(prefix + "ib"):
            return (1000 if kb_base == 1024 else 1024) ** power, False
    for prefix, power in _SIZE_POWERS.items():
        if low.startswith(prefix):
            return kb_base ** power, False
    return 1, False


def read_size(text: str, *, kb_base: int = 1024, said: str | None = None) -> Reading:
    """A size or count (``size``, ``bs``, ``iodepth``), in bytes or units, as fio reads it;
    ``N%`` is a share (``percent``); ``exact`` as for ``read_time``."""
    number = strtoll(text)
    if number is None or not text:
        return Reading(None)
    whole, end = number
    start = _after_digits(text)
    if len(text) < 2:
        multiplier, percent = _size_multiplier(text, kb_base)
    elif start < len(text) and (text[start].isalpha() or text[start] == "%"):
        multiplier, percent = _size_multiplier(text[start:], kb_base)
    else:
        multiplier, percent = 1, False
    said = text if said is None else said
    if percent:
        return Reading(float(whole), said[end:] == "%", percent=True)
    value = whole * multiplier
    # (with kb_base=1024, fio's default, 4KiB is 4000 bytes: not what the text says)
    exact = _HEX.fullmatch(said) is not None or meant_bytes(said, kb_base=kb_base) == value
    return Reading(float(value), exact)


def read_int(text: str) -> Reading:
    """A boolean or flag's value: fio's ``check_int`` (``sscanf`` of ``%u``, or ``%x`` when the
    text holds ``0x``); anything after the number is ignored."""
    hexadecimal = "0x" in text or "0X" in text
    m = re.match(r"\s*[+-]?(0[xX])?[0-9a-fA-F]+" if hexadecimal else r"\s*[+-]?[0-9]+", text)
    if m is None:
        return Reading(None)
    digits = m.group(0).strip()
    return Reading(float(int(digits, 16 if hexadecimal else 10)), m.end() == len(text))


def seconds_text(seconds: float) -> str:
    """``15 microseconds``, ``1 s``, ``2 minutes``: how long fio's reading is, for people."""
    if seconds == 0:
        return "0 s"
    for unit, scale in (("day", 86400.0), ("hour", 3600.0), ("minute", 60.0), ("s", 1.0),
                        ("millisecond", 1e-3), ("microsecond", 1e-6)):
        if seconds >= scale:
            count = seconds / scale
            return f"{count:g} {unit}" + ("" if count == 1 or unit == "s" else "s")
    return f"{seconds:g} s"


_SAID = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*")
_TIME_NAMES = {
    "us": 1, "usec": 1, "usecs": 1, "microsecond": 1, "microseconds": 1,
    "ms": 1000, "msec": 1000, "msecs": 1000, "millisecond": 1000, "milliseconds": 1000,
    "s": 10**6, "sec": 10**6, "secs": 10**6, "second": 10**6, "seconds": 10**6,
    "m": 60 * 10**6, "min": 60 * 10**6, "mins": 60 * 10**6, "minute": 60 * 10**6,
    "minutes": 60 * 10**6, "h": 3600 * 10**6, "hr": 3600 * 10**6, "hrs": 3600 * 10**6,
    "hour": 3600 * 10**6, "hours": 3600 * 10**6, "d": 86400 * 10**6, "day": 86400 * 10**6,
    "days": 86400 * 10**6,
}


def _said(text: str, *, whole: bool) -> tuple[float, str] | None:
    """(number, unit word) a value's text says (``1.5 min``); ``whole``: nothing may follow."""
    m = _SAID.fullmatch(text) if whole else _SAID.match(text)
    return (float(m.group(1)), m.group(2).lower()) if m else None


def meant_micros(text: str, *, bare_seconds: bool, whole: bool = True) -> float | None:
    """The time ``text`` says, in microseconds, as a person reads it (``1.5s``, ``2min``,
    ``15sec``); None when it says no time."""
    said = _said(text, whole=whole)
    if said is None:
        return None
    number, unit = said
    if not unit:
        return number * (10**6 if bare_seconds else 1)
    scale = _TIME_NAMES.get(unit)
    return None if scale is None else number * scale


def meant_bytes(text: str, *, kb_base: int = 1024, whole: bool = True) -> float | None:
    """The size ``text`` says, in bytes, as a person reads it (``1.5g``; ``4KiB`` is 4096,
    ``4k`` is ``kb_base`` x 4); None when it says no size."""
    said = _said(text, whole=whole)
    if said is None:
        return None
    number, unit = said
    if unit in ("", "b"):
        return number
    if unit[:1] in _SIZE_POWERS and unit[1:] in ("", "b", "ib"):
        base = float(1024 if unit.endswith("ib") else kb_base)
        return number * base ** _SIZE_POWERS[unit[:1]]
    return None


def time_as_fio_reads_it(text: str, *, bare_seconds: bool) -> str | None:
    """What to write for fio to read the time ``text`` seems to mean (``1.5s`` -> ``1500ms``,
    ``2min`` -> ``2m``, ``15s0`` -> ``15s``); None when it cannot be told."""
    total = meant_micros(text, bare_seconds=bare_seconds, whole=False)
    if total is None:
        return None
    for suffix, scale in (("d", 86400 * 10**6), ("h", 3600 * 10**6), ("m", 60 * 10**6),
                          ("s", 10**6), ("ms", 1000), ("us", 1)):
        if total >= scale and total % scale == 0:
            return f"{int(total // scale)}{suffix}"
    return f"{round(total)}us" if total >= 1 else None


def size_as_fio_reads_it(text: str) -> str | None:
    """What to write for fio (kb_base=1024) to read the size ``text`` seems to mean
    (``1.5g`` -> ``1536m``, ``4KiB`` -> ``4k``); None when it cannot be told."""
    total = meant_bytes(text, whole=False)
    if total is None:
        return None
    for suffix, scale in (("p", 1024**5), ("t", 1024**4), ("g", 1024**3), ("m", 1024**2),
                          ("k", 1024)):
        if total >= scale and total % scale == 0:
            return f"{int(total // scale)}{suffix}"
    return str(int(total)) if total == int(total) else None
