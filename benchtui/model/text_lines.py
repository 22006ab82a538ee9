"""Lines kept as the one text they came in, split only when read.

A chunk of a tool's output is split into lines for the sinks that want raw lines (the
console's log, a recording). A fio json+ document of 2 jobs is ~3,100 lines, of 32 jobs
~34,000, and the sinks mostly do not read them one by one: the console keeps the newest few
thousand of a host for its detail view and reads them when that view is shown; a recording
drops the lines of JSON documents (their numbers are in the samples), finding them with
``str.find`` over the text. Making a ``str`` of every line cost 108-291 µs per 2-job
document of 44 samples (docs/benchmarks/fleet_scale.md). ``TextLines`` is a sequence of the
lines of a text that makes them the first time one is read; its length and its ``text``
need none.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload


class TextLines(Sequence[str]):
    """The lines of ``text`` (separated by ``\\n``; a text without one is one line, an empty
    text one empty line): ``text.split("\\n")``, made when first read. Equal to a tuple or
    list of the same lines, and hashed as the tuple of them."""

    __slots__ = ("_lines", "_n", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._n = text.count("\n") + 1
        self._lines: list[str] | None = None

    def lines(self) -> list[str]:
        """The lines as a list (made once; do not change it)."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self.lines()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextLines):
            return self.text == other.text
        if isinstance(other, (tuple, list)):
            return self._n == len(other) and self.lines() == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self.lines()))

    def __repr__(self) -> str:
        return f"TextLines({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (TextLines, (self.text,))
