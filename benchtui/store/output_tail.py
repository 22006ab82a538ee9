"""A host's newest raw output lines, kept as the blocks they arrived in.

The console keeps each host's last ``max_output_lines`` lines for its Output tab. Kept as a
``deque`` of ``OutputLine`` (one object per line, the oldest pushed out by the newest), a
wide fio job's output cost more than anything else the console did: 32 hosts x 32 jobs of
json+ print ~34,000 lines a host a second, 1.1 million ``OutputLine`` a second made to be
dropped ~2,000 lines later (~0.4-0.75 µs each: 45-80% of a core;
docs/benchmarks/ui_render.md, "Issue 32: the console on a wide fleet"). ``OutputTail`` keeps
the blocks the session hands over (``OutputLines``: one chunk's lines, a shared tuple) and
the count of lines; the oldest block is trimmed or dropped to keep ``maxlen`` lines. A
block's ``OutputLine`` objects are made when something reads it (the Output tab, one host at
a time), once: a line read twice is the same object (the tab finds where it stopped by
identity).

It reads like the deque it replaces: ``len``, iteration in both directions, ``[i]``, and
``extend`` with ``OutputLine`` objects (replay, tests).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

__all__ = ["OutputLine", "OutputTail"]


@dataclass(frozen=True, slots=True)
class OutputLine:
    """One raw line a tool printed on a host."""

    t: float
    step: str
    tool: str
    text: str


class _Block:
    """Lines that arrived together (one step, tool and time), their objects made when read."""

    __slots__ = ("made", "step", "t", "texts", "tool")

    def __init__(self, t: float, step: str, tool: str, texts: Sequence[str],
                 made: list[OutputLine] | None = None) -> None:
        self.t, self.step, self.tool, self.texts, self.made = t, step, tool, texts, made

    def lines(self) -> list[OutputLine]:
        made = self.made
        if made is None:
            t, step, tool = self.t, self.step, self.tool
            made = self.made = [OutputLine(t, step, tool, text) for text in self.texts]
        return made

    def drop(self, n: int) -> None:
        """Forget the first ``n`` lines."""
        self.texts = self.texts[n:]
        if self.made is not None:
            self.made = self.made[n:]


class OutputTail:
    """The newest ``maxlen`` lines (all of them when None), oldest first (module doc)."""

    __slots__ = ("_blocks", "_size", "maxlen")

    def __init__(self, maxlen: int | None = None) -> None:
        self.maxlen = maxlen
        self._blocks: deque[_Block] = deque()
        self._size = 0

    def add(self, t: float, step: str, tool: str, texts: Sequence[str]) -> None:
        """Lines a tool printed (arrived at ``t``), kept without making an object per line."""
        if texts:
            self._push(_Block(t, step, tool, texts))

    def extend(self, lines: Iterable[OutputLine]) -> None:
        """Lines already made, appended in order."""
        made = list(lines)
        if made:
            first = made[0]
            self._push(_Block(first.t, first.step, first.tool,
                              [line.text for line in made], made))

    def _push(self, block: _Block) -> None:
        self._blocks.append(block)
        self._size += len(block.texts)
        maxlen = self.maxlen
        if maxlen is None:
            return
        blocks = self._blocks
        while self._size > maxlen:
            first = blocks[0]
            excess, size = self._size - maxlen, len(first.texts)
            if size <= excess:
                blocks.popleft()
                self._size -= size
            else:
                first.drop(excess)
                self._size -= excess

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[OutputLine]:
        return chain.from_iterable(block.lines() for block in self._blocks)

    def __reversed__(self) -> Iterator[OutputLine]:
        return chain.from_iterable(reversed(block.lines()) for block in reversed(self._blocks))

    def __getitem__(self, index: int) -> OutputLine:
        size = self._size
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("output line index out of range")
        if index >= size // 2:  # from the end: the newest lines are the ones asked for
            index -= size
            for block in reversed(self._blocks):
                n = len(block.texts)
                if index >= -n:
                    return block.lines()[index]
                index += n
        for block in self._blocks:
            n = len(block.texts)
            if index < n:
                return block.lines()[index]
            index -= n
        raise IndexError("output line index out of range")  # not reached
