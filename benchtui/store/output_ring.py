"""A host's newest raw output lines, each made into an ``OutputLine`` only when someone reads
them.

The console keeps every host's last few thousand lines (``FleetState``'s
``max_output_lines``) for its detail view of one host. A fio json+ document of 32 jobs is
~34,000 lines, and 32 hosts print one each a second: making an object of every line, to
drop all but the last few thousand a moment later, cost the controller more than parsing
the documents did. ``OutputRing`` takes each batch of lines as it came (``add``: one tuple
of lines, kept as is), forgets the batches that newer ones have pushed out of reach, and
makes the ``OutputLine``s of what is left the first time it is read: a ``deque`` like any
other to its readers (the console's output tab), of at most ``maxlen`` lines.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class OutputLine:
    """One raw line a tool printed on a host."""

    t: float
    step: str
    tool: str
    text: str


#: A batch of lines not made into ``OutputLine``s yet: (t, step, tool, lines).
_Batch = tuple[float, str, str, Sequence[str]]


class OutputRing(deque[OutputLine]):
    """The newest ``maxlen`` lines (None: all), oldest first."""

    __slots__ = ("_waiting", "_waiting_lines")

    def __init__(self, lines: Iterable[OutputLine] = (), maxlen: int | None = None) -> None:
        super().__init__(lines, maxlen)
        self._waiting: deque[_Batch] = deque()
        self._waiting_lines = 0

    def add(self, t: float, step: str, tool: str, lines: Sequence[str]) -> None:
        """Lines a tool printed at ``t`` (kept as given: do not change ``lines`` after)."""
        if not lines:
            return
        waiting = self._waiting
        waiting.append((t, step, tool, lines))
        self._waiting_lines += len(lines)
        if self.maxlen is not None:  # the batches the newer ones pushed out of reach
            while self._waiting_lines - len(waiting[0][3]) >= self.maxlen:
                self._waiting_lines -= len(waiting.popleft()[3])

    def _make(self) -> None:
        """The waiting batches' lines made and appended (the newest ``maxlen`` only)."""
        waiting = self._waiting
        skip = 0 if self.maxlen is None else max(self._waiting_lines - self.maxlen, 0)
        for t, step, tool, lines in waiting:
            if skip >= len(lines):
                skip -= len(lines)
                continue
            deque.extend(self, [OutputLine(t, step, tool, line) for line in lines[skip:]])
            skip = 0
        waiting.clear()
        self._waiting_lines = 0

    def clear(self) -> None:
        self._waiting.clear()
        self._waiting_lines = 0
        deque.clear(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self), self.maxlen))

    def copy(self) -> OutputRing:
        return OutputRing(self, self.maxlen)

    __copy__ = copy


def _made_first(name: str) -> Callable[..., Any]:
    """``deque``'s method ``name``, once the waiting lines are made."""
    method = getattr(deque, name)

    def call(self: OutputRing, *args: Any) -> Any:
        if self._waiting:
            self._make()
        return method(self, *args)

    call.__name__ = call.__qualname__ = name
    return call


# Every reading, and every change but ``add``, sees the waiting lines made first.
for _name in ("__len__", "__iter__", "__reversed__", "__getitem__", "__setitem__",
              "__delitem__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
              "__ge__", "__iadd__", "__repr__", "append", "appendleft", "extend", "extendleft",
              "insert", "pop", "popleft", "remove", "rotate", "count", "index", "reverse"):
    setattr(OutputRing, _name, _made_first(_name))
