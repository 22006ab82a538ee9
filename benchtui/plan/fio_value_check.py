"""A fio option's value, checked as fio's parser reads it (``fio_values``): refused or misread.

fio refuses a number with no digits, a boolean that is not a whole number (``direct=true``), a
value out of the option's range (``iodepth=0``), a value not in an option's list (``rw=randrea``,
an ``ioengine`` that is not one of fio's). It silently misreads a time or size whose suffix it
does not know or that is not a whole number (``runtime=15s0`` is 15 microseconds, ``size=1.5g`` is
1 byte). Both are problems; the hint says what to write for fio to read what was meant. Values
holding a placeholder, ``$`` (a jobfile's environment variables) or an arithmetic expression
(``(...)``) are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from benchtui.plan.fio_option_names import CHOICES, MAXIMUMS, MINIMUMS, VALUE_KINDS
from benchtui.plan.fio_rewrite import canonical_option as canonical
from benchtui.plan.fio_values import (
    meant_micros,
    read_int,
    read_size,
    read_time,
    seconds_text,
    size_as_fio_reads_it,
    time_as_fio_reads_it,
)
from benchtui.plan.placeholders import has_placeholders

_TIMES = ("seconds", "microseconds")
_NUMBERS = ("number", "zone-number", *_TIMES)
_TIME_WORDS = "its time suffixes are us, ms, s, m, h and d, after a whole number"
_SIZE_WORDS = "its suffixes are k, m, g, t and p (kb, mb... too), after a whole number"
_IEC_WORDS = "with fio's kb_base=1024, KiB, MiB... are powers of 1000 and k, m... of 1024"
_RANGE_WORDS = ("in a range or list of times, fio takes s, m, h and d only at the very end: "
                "write bare numbers, or us and ms")


def not_checked(text: str) -> bool:
    """A name or value benchtui cannot judge: a placeholder, ``$VAR``, ``(arithmetic)``."""
    return has_placeholders(text) or "$" in text or text.startswith("(")


def closest(word: str, options: Iterable[str]) -> str | None:
    """fio's "Did you mean" (parse.c, ``string_distance_ok``): the nearest choice by
    Levenshtein distance, if within half the word's length; a choice equal but for case wins."""
    choices = list(options)
    if word.lower() in choices:
        return word.lower()
    best = min(choices, key=lambda c: (distance(word, c), c), default=None)
    if best is None or distance(word, best) > (len(word) + 1) // 2:
        return None
    return best


def distance(a: str, b: str) -> int:
    """Levenshtein distance (fio's ``string_distance``)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def value_problem(option: str, value: str | None, prefix: str = "", *, kb_base: int = 1024
                  ) -> tuple[str, str] | None:
    """(why, what to write) when fio would refuse or misread ``value`` for ``option`` (a
    known option's name as written); None when fio reads it as written or benchtui cannot
    tell. ``prefix``: ``--`` in args. ``kb_base``: the job's (1000 or fio's default 1024)."""
    if value is not None and not_checked(value):
        return None
    return _Given(option, value or "", prefix, kb_base).problem(given=value is not None)


def _parts(value: str) -> Iterator[tuple[str, str]]:
    """The values of a numeric option as fio's ``handle_option`` splits them: at a comma, else
    a colon, else a dash (``bs=4k,64k``, ``startdelay=5-10``). Each is (what fio's parser
    reads: from the part's start to the first comma, the rest of the text included; the
    part as written). So ``5s-10s`` is read from ``5s-10s`` (suffix ``s-10s``: microseconds to
    fio) and ``10s``; ``4k-8k`` from ``4k-8k`` (a size's suffix stops at the dash) and ``8k``."""
    rest = value
    while True:
        comma = rest.find(",")
        if comma >= 0 and comma == len(rest) - 1:  # a last comma is dropped, and ends it
            yield rest[:-1], rest[:-1]
            return
        cut = comma if comma >= 0 else next((rest.index(c) for c in ":-" if c in rest), -1)
        yield rest.split(",", 1)[0], rest if cut < 0 else rest[:cut]
        if cut < 0:
            return
        rest = rest[cut + 1:]


@dataclass(frozen=True)
class _Given:
    """One option's value, and what fio's parser makes of it."""

    option: str
    value: str
    prefix: str
    kb_base: int

    @property
    def key(self) -> str:
        return canonical(self.option)

    @property
    def kind(self) -> str | None:
        return VALUE_KINDS.get(self.option) or VALUE_KINDS.get(self.key)

    @property
    def name(self) -> str:
        return self.prefix + self.option

    @property
    def written(self) -> str:
        return f"{self.name}={self.value}"

    def example(self) -> str:
        key, kind = self.key, self.kind
        if key in CHOICES:
            value = CHOICES[key][0]
        else:
            value = {"bool": "1", "seconds": "60s", "microseconds": "100us"}.get(
                kind or "", str(MINIMUMS.get(key, 4)))
        return f"{self.name}={value}"

    def problem(self, *, given: bool) -> tuple[str, str] | None:
        kind, key = self.kind, self.key
        if kind == "deprecated":
            return f"fio refuses {self.name}: it is deprecated", f"remove {self.name}"
        needs = kind in ("bool", *_NUMBERS) or key in CHOICES
        if not given:
            return (f"{self.name} needs a value", f"e.g. {self.example()}") if needs else None
        if needs and self.prefix and self.value.startswith("--"):  # --direct --rw=read
            return (f"{self.name} needs a value (fio would take {self.value} for it)",
                    f"e.g. {self.example()}")
        if kind in ("bool", "flag"):
            return self._boolean()
        if kind in _NUMBERS:
            parts = list(_parts(self.value))
            return next(filter(None, (self._number(read, part, len(parts) > 1)
                                      for read, part in parts)), None)
        if key == "ioengine":
            return self._engine()
        if key in CHOICES:
            return self._choice()
        return None

    def _boolean(self) -> tuple[str, str] | None:
        reading = read_int(self.value)
        if reading.value is None or not reading.exact:
            read = "" if reading.value is None else f" (it would read {reading.value:g})"
            return (f"fio takes 0 or 1 for {self.name}, not {self.value!r}{read}",
                    f"write {self.name}=1 or {self.name}=0")
        return self._in_range(reading.value)

    def _in_range(self, number: float) -> tuple[str, str] | None:
        least, most = MINIMUMS.get(self.key), MAXIMUMS.get(self.key)
        if least is not None and number < least:
            return (f"fio refuses {self.written}: the least value is {least}",
                    f"write {self.name}={least} or more")
        if most is not None and number > most:
            return (f"fio refuses {self.written}: the largest value is {most}",
                    f"write {self.name}={most} or less")
        return None

    def _number(self, read: str, part: str, several: bool) -> tuple[str, str] | None:
        """fio reads ``read`` for the ``part`` of the value (one of ``several``)."""
        kind = self.kind or "number"
        if not part:
            return None  # fio keeps its default for an empty part (bs=,64k; nice=-5)
        if part[-1:] in "zZ" and kind == "zone-number":
            if re.fullmatch(r"\s*\d+z", part):
                return None
            return (f"fio refuses {self.written}: {part!r} is not a number of zones",
                    f"write e.g. {self.name}=4z")
        digits = re.match(r"\s*(\d+)", part)
        leading = digits.group(1) if digits else ""
        if kind in _TIMES:
            reading = read_time(read, bare_seconds=kind == "seconds", said=part)
            fix = self._time_fix(leading)
        else:
            reading = read_size(read, kb_base=self.kb_base, said=part)
            meant = size_as_fio_reads_it(part)
            fix = f"write {self.name}={self.value.replace(part, meant, 1)}" if meant else \
                f"write a whole number and a suffix, e.g. {self.name}={leading or 4}k"
        if reading.value is None:
            return f"fio refuses {self.written}: {part!r} is not a number", fix
        if reading.percent and kind != "zone-number":
            return (f"fio misreads {self.written}: a share (%) is only for size, io_size and "
                    "offset", f"write a whole number, e.g. {self.name}={leading or 4}")
        if not reading.exact:
            if kind in _TIMES:
                said = seconds_text(reading.value)
                alone = read_time(part, bare_seconds=kind == "seconds").exact
                why = _RANGE_WORDS if several and alone else _TIME_WORDS
            else:
                said = f"{reading.value:.0f}"
                if kind == "zone-number":
                    said += " byte" if reading.value == 1 else " bytes"
                why = _IEC_WORDS if part.lower().endswith("ib") else _SIZE_WORDS
            what = f"{part!r} of {self.written}" if several else self.written
            return f"fio reads {what} as {said} ({why})", fix
        return None if kind in _TIMES or reading.percent else self._in_range(reading.value)

    def _time_fix(self, leading: str) -> str:
        """What to write for fio to read the time value as meant. In a range or list, only
        ``us`` and ``ms`` work (fio matches them as prefixes of the rest of the text: ``s``,
        ``m``, ``h`` and ``d`` must end it), so a bare number or those are written there."""
        bare = self.kind == "seconds"
        pieces = re.split(r"([,:-])", self.value)
        if len(pieces) == 1:
            meant = time_as_fio_reads_it(self.value, bare_seconds=bare)
            if meant is not None:
                return f"write {self.name}={meant}"
            return f"write a whole number and a suffix, e.g. {self.name}={leading or 60}" + \
                ("s" if bare else "us")
        values = [meant_micros(p, bare_seconds=bare) for p in pieces[::2] if p]
        if any(v is None for v in values):
            return f"write each value as a whole number, e.g. {self.name}=5-10"
        unit, scale = next((u, s) for u, s in (("", 10**6), ("ms", 1000), ("us", 1))
                           if (u or bare) and all(v is not None and v % s == 0
                                                  for v in values))
        def written(piece: str) -> str:
            return f"{round((meant_micros(piece, bare_seconds=bare) or 0) / scale)}{unit}"

        out = [p if i % 2 or not p else written(p) for i, p in enumerate(pieces)]
        return f"write {self.name}={''.join(out)}"

    def _engine(self) -> tuple[str, str] | None:
        engine = self.value.split(":", 1)[0]
        engines = CHOICES["ioengine"]
        if engine in engines or engine.startswith("external") or "/" in engine:
            return None
        guess = closest(engine, engines)
        if guess is None:
            return None  # an external engine (a plugin such as SPDK's): fio loads it by name
        return (f"fio has no ioengine {engine!r}",
                f"did you mean {self.name}={guess}? (fio --enghelp lists its engines)")

    def _choice(self) -> tuple[str, str] | None:
        choices = CHOICES[self.key]
        # fio compares up to the first comma, else the first colon (``rw=randread:8``).
        token = self.value.split(",", 1)[0] if "," in self.value else \
            self.value.split(":", 1)[0]
        if token in choices:
            return None
        guess = closest(token, choices)
        return (f"fio refuses {self.written}: {self.key} is one of {', '.join(choices)}",
                f"did you mean {self.name}={guess}?" if guess else f"e.g. {self.example()}")
