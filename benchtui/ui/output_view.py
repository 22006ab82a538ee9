"""The detail view's Output tab: the raw lines a host's tools printed, one tool at a time or
all of them, with fio's JSON documents folded to one line each.

fio with ``--output-format=json`` (or json+) and ``--status-interval`` prints a whole JSON
document every interval, hundreds of lines each: shown as they came, they drown every other
tool's lines (iostat's). Folded (the default), a document is one line: its text with the
line breaks and indentation taken out, after a mark saying how many lines it had
(``{412 lines} {"fio version": "fio-3.33", ...``); the Log crops it at the screen's edge.
``f`` shows them as printed; ``o`` picks the next tool (all, then each tool the host ran).

``Folder`` is pure (a document is the lines from one starting with ``{`` to the one where the
braces balance again); ``OutputView`` is the widget.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, Static

from benchtui.store.fleet import OutputLine

MAX_LOG_LINES = 5000
#: A document longer than this is shown as it came (a tool printing braces that never
#: balance must not hold its lines back for ever).
MAX_DOCUMENT_LINES = 20_000


def line_text(line: OutputLine, text: str | None = None) -> str:
    """One line of the tab: local time, tool, the text."""
    stamp = time.strftime("%H:%M:%S", time.localtime(line.t))
    return f"{stamp} {line.tool}| {line.text if text is None else text}"


class Folder:
    """Folds JSON documents into one line each, per tool (``feed`` a line, get the lines to
    show now). ``midway``: tools whose lines start in the middle of a document (the host
    keeps its last lines only, so a tab filled from them may begin inside one): their lines
    before the first document's start are folded too, up to the line that closes it."""

    __slots__ = ("_midway", "_open")

    def __init__(self, midway: frozenset[str] = frozenset()) -> None:
        #: tool -> (the document's first line, its lines so far, brace depth)
        self._open: dict[str, tuple[OutputLine, list[str], int]] = {}
        self._midway = set(midway)

    def feed(self, line: OutputLine) -> list[str]:
        current = self._open.get(line.tool)
        text = line.text
        if line.tool in self._midway:
            if not text.startswith("{"):
                return self._tail(line)
            # a document starts before the one begun midway closed: those lines as they came
            self._midway.discard(line.tool)
            tail = self._open.pop(line.tool, None)
            return [*(line_text(tail[0], p) for p in tail[1]), *self.feed(line)] \
                if tail else self.feed(line)
        if current is None:
            if not text.lstrip().startswith("{"):
                return [line_text(line)]
            current = (line, [], 0)
        first, parts, depth = current
        parts.append(text.strip())
        depth += text.count("{") - text.count("}")
        if depth <= 0 or len(parts) >= MAX_DOCUMENT_LINES:
            self._open.pop(line.tool, None)
            if depth > 0:  # never balanced: as it came
                return [line_text(first, p) for p in parts]
            return [line_text(first, f"{{{len(parts)} lines}} " + " ".join(parts))]
        self._open[line.tool] = (first, parts, depth)
        return []

    def _tail(self, line: OutputLine) -> list[str]:
        """A line of the document a tab's lines began inside: kept until the line that
        closes it (``}`` alone, as fio prints it), then one line for all of them."""
        first, parts, _depth = self._open.get(line.tool) or (line, [], 0)
        parts.append(line.text.strip())
        if line.text.rstrip() == "}" or len(parts) >= MAX_DOCUMENT_LINES:
            self._open.pop(line.tool, None)
            self._midway.discard(line.tool)
            return [line_text(first, f"{{…{len(parts)} lines, the rest of a document whose "
                                     "start is no longer kept}")]
        self._open[line.tool] = (first, parts, 0)
        return []


class OutputView(Vertical):
    """The Output tab: a line saying what is shown and the keys, then the lines."""

    DEFAULT_CSS = """
    OutputView { height: 1fr; }
    OutputView #output-filter { height: 1; padding: 0 1; background: $panel; }
    OutputView Log { height: 1fr; }
    """
    ALL: ClassVar[str] = "all"

    def __init__(self) -> None:
        super().__init__()
        #: The tool shown, or ``ALL``; fio's JSON documents folded.
        self.tool = self.ALL
        self.fold = True
        self.tools: tuple[str, ...] = ()
        self._last: OutputLine | None = None
        self._folder = Folder()
        self._output: deque[OutputLine] | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._caption(), id="output-filter")
        yield Log(id="output", max_lines=MAX_LOG_LINES, auto_scroll=True)

    def _caption(self) -> str:
        shown = "every tool" if self.tool == self.ALL else self.tool
        fold = "JSON folded to one line each" if self.fold else "JSON as printed"
        return f"output of {shown} (o: next tool) · {fold} (f)"

    def next_tool(self) -> None:
        """All tools, then each tool the host ran, in turn."""
        cycle = (self.ALL, *self.tools)
        self.tool = cycle[(cycle.index(self.tool) + 1) % len(cycle)] \
            if self.tool in cycle else self.ALL
        self._rewrite()

    def toggle_fold(self) -> None:
        self.fold = not self.fold
        self._rewrite()

    def show(self, output: deque[OutputLine], tools: Iterable[str]) -> None:
        """Append the lines that arrived since the last call (all of them the first time,
        or when more arrived than the host keeps). ``tools``: the host's, in order; a tool
        with output that is not among them is added after them."""
        for tool in tools:
            if tool not in self.tools:
                self.tools = (*self.tools, tool)
        self._output = output
        if not output or output[-1] is self._last:
            return
        new: list[OutputLine] = []
        seen = False
        for line in reversed(output):
            if line is self._last:
                seen = True
                break
            new.append(line)
        new.reverse()
        if not seen:  # the first time, or more arrived than the host keeps
            self._rewrite()
            return
        self._last = output[-1]
        self._write(new)

    def _rewrite(self) -> None:
        """The tab anew from the lines the host keeps (whose first may be inside a
        document: ``Folder``'s ``midway``)."""
        self.query_one("#output-filter", Static).update(self._caption())
        self.query_one(Log).clear()
        lines = list(self._output or ())
        json_tools = frozenset(line.tool for line in lines if line.text.startswith("{"))
        self._folder = Folder(midway=json_tools)
        if lines:
            self._last = lines[-1]
            self._write(lines)

    def _write(self, lines: list[OutputLine]) -> None:
        known = set(self.tools)
        for line in lines:
            if line.tool not in known:
                known.add(line.tool)
                self.tools = (*self.tools, line.tool)
        tool, fold = self.tool, self.fold
        shown = [line for line in lines if tool in (self.ALL, line.tool)]
        if fold:
            folder = self._folder
            out = [text for line in shown for text in folder.feed(line)]
        else:
            out = [line_text(line) for line in shown]
        if out:
            self.query_one(Log).write_lines(out)
