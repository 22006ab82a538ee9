"""Picking options out of a tool's command-line words (getopt style), without running it.

Used to read what benchtui needs from the plan's ``args`` (iperf's port and run time, rados
bench's seconds) and to take out the options benchtui sets itself. Options come as ``-p 5201``,
``-p5201``, ``--port 5201`` or ``--port=5201``; flags stand alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    """One option a tool accepts: its short and long spellings, and whether it takes a value."""

    short: str | None
    long: str | None
    takes_value: bool = True

    def match(self, word: str) -> tuple[bool, str | None, bool]:
        """(matches, attached value, value is in the next word)."""
        if self.long and (word == self.long or word.startswith(self.long + "=")):
            if "=" in word:
                return True, word.split("=", 1)[1], False
            return True, None, self.takes_value
        if self.short and word.startswith(self.short) and not word.startswith("--"):
            rest = word[len(self.short):]
            if not rest:
                return True, None, self.takes_value
            if self.takes_value:
                return True, rest.removeprefix("="), False
        return False, None, False


@dataclass
class Taken:
    """What ``take`` found: the words without the option, and the option's last value."""

    rest: list[str]
    value: str | None
    found: list[str]


def take(words: tuple[str, ...] | list[str], option: Option) -> Taken:
    """Remove every occurrence of ``option`` from ``words``; keep its last value."""
    rest: list[str] = []
    found: list[str] = []
    value: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        matched, attached, next_word = option.match(word)
        i += 1
        if not matched:
            rest.append(word)
            continue
        shown = word
        if next_word and i < len(words):
            value = words[i]
            shown = f"{word} {words[i]}"
            i += 1
        elif attached is not None:
            value = attached
        elif not option.takes_value:
            value = ""
        found.append(shown)
    return Taken(rest, value, found)


def find(words: tuple[str, ...] | list[str], option: Option) -> str | None:
    """The last value of ``option`` in ``words`` (``""`` for a flag), or None."""
    return take(words, option).value


def positional(words: tuple[str, ...] | list[str], valued: frozenset[str]) -> list[str]:
    """The words that are not options nor option values (``valued``: options that take a
    value in the next word)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-") and len(word) > 1:
            skip = word in valued
            continue
        out.append(word)
    return out


def number(text: str | None) -> float | None:
    """A plain positive number, or None."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value < 1e9 else None
