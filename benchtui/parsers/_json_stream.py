"""A stream of pretty-printed JSON documents, split into documents, fast.

Tools like fio (``--output-format=json --status-interval=N``) print one pretty-printed JSON
document after another: each opens with a line ``{`` and closes with a line ``}`` at column 0,
every line in between is indented. Lines outside documents (notes on a merged stderr, other
tools' output) are skipped and counted as unknown.

``feed`` (live, line by line) keeps only "is this line ``}``?" and an append per line;
``feed_text`` (files) finds documents with ``str.find`` over the whole block, and guesses where a
document ends from the length of the previous one (a successful decode proves the guess right).
Both give the same documents. Line numbers for warnings are counted only when a warning needs one.
Subclasses implement ``document``.
"""

from __future__ import annotations

from math import isfinite
from operator import attrgetter
from typing import Any

import orjson

from benchtui.model.sample import Sample
from benchtui.parsers.base import Parser

#: How much shorter than the previous one a document may be for the end guess to hold.
_GUESS_MARGIN = 2048
_VALUE = attrgetter("value")


class JsonStreamParser(Parser):
    """Base of parsers of pretty-printed JSON document streams."""

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._pending: list[str] | None = None  # the lines (or blocks) of an open document
        self._hint = 0  # the length of the last document, less a margin
        self._text: str | bytes | None = None  # the last block fed, for line numbers
        self._counted = self._mark = 0

    def wanted(self, doc: object) -> bool:
        """Whether a decoded document is this parser's (other tools print JSON too)."""
        raise NotImplementedError

    def document(self, doc: Any, t: float | None) -> list[Sample] | None:
        """One decoded document that ``wanted``; the samples it gives."""
        raise NotImplementedError

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        pending = self._pending
        if pending is None:
            if line == "{":
                self._pending = ["{"]
            else:
                self.unknown()
            return None
        pending.append(line)
        if line != "}":
            return None
        self._pending = None
        return self._document("\n".join(pending), t)

    def feed_text(self, text: str, t: float | None = None) -> list[Sample]:
        """A block of whole lines: documents are found with str.find, not line by line."""
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return self._feed(text, t, _STR)

    takes_bytes = True

    def feed_bytes(self, data: bytes, t: float | None = None) -> list[Sample]:
        """As ``feed_text(data decoded)``, for raw UTF-8 output (a file as read): documents go
        to orjson as they are, so the text is never decoded nor copied."""
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 (fio on Windows, PowerShell)
            return self.feed_text(data.decode("utf-16", errors="replace"), t)
        if self._pending is not None:  # a document left open by feed/feed_text
            return self.feed_text(data.decode("utf-8", errors="replace"), t)
        data = data.removeprefix(b"\xef\xbb\xbf")
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return self._feed(data, t, _BYTES)

    def _feed(self, text: Any, t: float | None, m: tuple[Any, ...]) -> list[Sample]:
        """The block loop, over str (``m`` = _STR) or bytes (``m`` = _BYTES)."""
        nl, nl_close_nl = m[0], m[4]
        view: Any = memoryview(text) if m is _BYTES else text  # chunks: no copy of bytes
        self._count_lines()
        self._text, self._counted, self._mark = text, 0, 0
        self.lineno += 1
        out: list[Sample] = []
        pos, size = 0, len(text)
        while pos < size:
            if self._pending is None:
                start = _open_at(text, pos, m)
                if start < 0:
                    self.unknown_lines += text.count(nl, pos) + (not text.endswith(nl))
                    break
                self.unknown_lines += text.count(nl, pos, start)
                if self._hint:  # skip most of the search for the end
                    guess = text.find(nl_close_nl, start + self._hint)
                    if guess >= 0:
                        chunk = view[start:guess + 2]
                        try:
                            doc = orjson.loads(chunk)
                        except orjson.JSONDecodeError:
                            pass  # shorter than guessed (or broken): search from the start
                        else:
                            self._mark = guess + 1
                            out.extend(self._finite(self._document(chunk, t, doc)))
                            pos = guess + 3
                            continue
            else:
                start = pos
            end = _close_at(text, start, m)
            if end < 0:
                rest = text[start:].removesuffix(nl)
                rest = rest if isinstance(rest, str) else rest.decode("utf-8", errors="replace")
                if self._pending is None:
                    self._pending = [rest]
                else:
                    self._pending.append(rest)
                break
            chunk = view[start:end + 1]
            if self._pending is not None:  # (str only: feed_bytes never continues a document)
                self._pending.append(chunk)
                chunk = "\n".join(self._pending)
                self._pending = None
            self._mark = end  # a warning names the document's closing line
            out.extend(self._finite(self._document(chunk, t)))
            pos = end + 2
        self._mark = len(text)
        self.lineno += (not text.endswith(nl)) - 1
        return out

    def warn(self, reason: str, text: str = "") -> None:
        self._count_lines(keep=True)
        super().warn(reason, text)

    def _finite(self, samples: list[Sample] | None) -> list[Sample]:
        """``Parser._checked`` (no NaN or infinity), without a Python loop when all is well."""
        if not samples:
            return []
        if all(map(isfinite, map(_VALUE, samples))):
            return samples
        return self._checked(samples)

    def flush_pending(self) -> None:
        """End of stream: an open document is incomplete."""
        if self._pending is not None:
            self.warn("incomplete JSON document at the end of the stream (ignored)",
                      self._pending[0])
            self._pending = None

    def _count_lines(self, *, keep: bool = False) -> None:
        if self._text is not None:
            text = self._text
            if isinstance(text, str):
                self.lineno += text.count("\n", self._counted, self._mark)
            else:
                self.lineno += text.count(b"\n", self._counted, self._mark)
            self._counted = self._mark
            if not keep:
                self._text = None

    def _document(self, chunk: str | memoryview, t: float | None, doc: object = None
                  ) -> list[Sample] | None:
        self._hint = max(0, len(chunk) - _GUESS_MARGIN)
        if doc is None:
            doc = self._decode(chunk)
            if doc is None:
                return None
        if not self.wanted(doc):
            text = chunk if isinstance(chunk, str) else bytes(chunk).decode(errors="replace")
            self.unknown_lines += text.count("\n") + 1
            return None
        return self.document(doc, t)

    def _decode(self, chunk: str | memoryview) -> object:
        try:
            return orjson.loads(chunk)
        except orjson.JSONDecodeError:
            pass
        if not isinstance(chunk, str):  # not UTF-8: as feed_text would see it
            return self._decode(bytes(chunk).decode("utf-8", errors="replace"))
        inner = chunk.rfind("\n{\n")
        if inner >= 0:  # a document cut short (the tool was killed), then a whole one
            self.warn("incomplete JSON document skipped", chunk[:40])
            return self._decode(chunk[inner + 1:])
        # Foreign lines (stderr merged into stdout) inside a document: its own are indented.
        lines = chunk.split("\n")
        kept = [x for x in lines[1:-1] if x.startswith((" ", "\t"))]
        if len(kept) < len(lines) - 2:
            try:
                doc = orjson.loads("{\n" + "\n".join(kept) + "\n}")
            except orjson.JSONDecodeError:
                pass
            else:
                self.unknown_lines += len(lines) - 2 - len(kept)
                return doc
        self.warn("not a valid JSON document (ignored)", chunk[:40])
        return None


#: The marks the block loop looks for: line end, "{", "}", "\n{\n", "\n}\n", "\n{", "\n}".
_STR: tuple[str, ...] = ("\n", "{", "}", "\n{\n", "\n}\n", "\n{", "\n}")
_BYTES: tuple[bytes, ...] = tuple(x.encode() for x in _STR)


def _open_at(text: Any, pos: int, m: tuple[Any, ...]) -> int:
    """Index of the next line that is exactly ``{`` at or after ``pos`` (a line start)."""
    return _line_at(text, pos, m, 1)


def _close_at(text: Any, pos: int, m: tuple[Any, ...]) -> int:
    """Index of the next line that is exactly ``}`` at or after ``pos`` (a line start)."""
    return _line_at(text, pos, m, 2)


def _line_at(text: Any, pos: int, m: tuple[Any, ...], which: int) -> int:
    nl, mark, nl_mark_nl, nl_mark = m[0], m[which], m[which + 2], m[which + 4]
    if text.startswith(mark, pos) and (pos + 1 == len(text) or text.startswith(nl, pos + 1)):
        return pos
    i: int = text.find(nl_mark_nl, pos)
    if i >= 0:
        return i + 1
    return len(text) - 1 if text.endswith(nl_mark) and len(text) - 2 >= pos else -1
