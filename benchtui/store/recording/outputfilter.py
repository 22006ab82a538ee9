"""Which raw output lines a recording keeps: the text tools' (iostat -x, rados bench, ...),
not the JSON documents of fio json+, iostat -o JSON or iperf3 -J.

A JSON tool's output is what the samples were parsed from, in full, and it is large: fio json+
at 1 Hz is ~300 MB an hour, the whole budget of a recording many times over. Every number in
it that benchtui uses is in the samples, which are kept exactly. So a JSON document's lines
are left out; the lines around them (fio's warnings and errors, which are text) are kept. The
first chunk of every stream is kept even when it is empty after the filter, so that replay
still learns which tools ran on which host.

This runs on the live path (the session's output sink), on every line every tool prints:
~180,000 lines a second for 64 hosts of fio json+. So it looks for document boundaries with
``str.find`` over the chunk's text, never line by line in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from benchtui.model.events import OutputLines
from benchtui.model.text_lines import TextLines


class JsonOutputFilter:
    """Drops the lines of JSON documents, per (host, tool, role) stream.

    A document starts with a line that begins with ``{`` in the first column and ends with a
    line that begins with ``}`` in the first column (the pretty-printed layout of fio, sysstat
    and iperf3; their documents are objects), or is one line that ends with ``}``
    (``--json-stream``). Text tools do not start lines with ``{`` (iperf's ``[  5]`` is text)."""

    def __init__(self) -> None:
        self._in_json: dict[tuple[str, str, str], bool] = {}
        self.dropped = 0

    def __call__(self, out: OutputLines) -> OutputLines | None:
        key = (out.host, out.tool, out.role)
        first = key not in self._in_json
        lines, in_json = out.lines, self._in_json.get(key, False)
        kept, self._in_json[key] = _split_text(lines.text, in_json) \
            if isinstance(lines, TextLines) else _split(lines, in_json)
        if len(kept) == len(out.lines):
            return out
        if not any(line.strip() for line in kept):
            kept = []  # blank lines between documents
        self.dropped += len(out.lines) - len(kept)
        if not kept and not first:
            return None
        return replace(out, lines=tuple(kept))


def _split_text(text: str, in_json: bool) -> tuple[list[str], bool]:
    """(the lines of ``text`` outside JSON documents, whether it ends inside one), the kept
    lines split off the text alone: a chunk that is one document makes no line at all."""
    kept: list[str] = []
    pos = 0  # the start of the first line not looked at yet
    while True:
        if in_json:  # skip to the line that closes the document, and past it
            start = _next_start(text, "}", pos)
            if start < 0:
                return kept, True
            in_json = False
        else:  # keep up to the line that opens a document
            start = _next_start(text, "{", pos)
            if start < 0:
                kept += text[pos:].split("\n")
                return kept, False
            if start > pos:
                kept += text[pos:start - 1].split("\n")
            end = text.find("\n", start)
            line = text[start:] if end < 0 else text[start:end]
            in_json = not (line.rstrip().endswith("}") and line.count("{") == line.count("}"))
        end = text.find("\n", start)
        if end < 0:
            return kept, in_json
        pos = end + 1


def _next_start(text: str, char: str, pos: int) -> int:
    """The start offset of the first line at or after offset ``pos`` (a line's start) that
    starts with ``char``; -1 when there is none.

    ``char`` is looked for alone (a C-level scan over the few braces of a pretty-printed
    document: a 2-job fio json+ document has 55 of each in 60 kB), each one found checked for
    a line end before it: ``find("\\n{")`` steps on every line end and space, several times
    slower. Where braces come closer than ``_SPAN`` characters apart on average (past
    ``_HOPS`` of them: text full of braces), the pair is looked for instead."""
    if text.startswith(char, pos):
        return pos
    found = text.find(char, pos + 1)
    hops = 0
    while found > 0 and text[found - 1] != "\n":
        hops += 1
        if hops >= _HOPS and found - pos < _SPAN * hops:
            found = text.find("\n" + char, found)  # (no brace before it starts a line)
            return found if found < 0 else found + 1
        found = text.find(char, found + 1)
    return found


#: ``_next_start`` looks for the line end and the brace together after this many braces
#: inside lines, if they came closer than ``_SPAN`` characters apart on average (a brace
#: passed over costs ~0.1 µs, the pair's search ~0.8 ns a character).
_HOPS = 16
_SPAN = 128


def _split(lines: Sequence[str], in_json: bool) -> tuple[list[str], bool]:
    """(the lines outside JSON documents, whether the chunk ends inside one): ``_split_text``
    of the lines joined (a chunk that came as lines: after a ``\\r``, a line cut)."""
    return _split_text("\n".join(lines), in_json) if lines else ([], in_json)
