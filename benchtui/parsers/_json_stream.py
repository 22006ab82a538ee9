"""Parsers of streams of JSON documents (fio's status dumps, iperf3 -J and --json-stream),
fed raw bytes in chunks cut anywhere, blocks of whole lines, or lines.

Documents are found on the bytes by ``_json_documents.JsonDocuments`` (whatever their
indentation: as the tool printed them, re-indented by ``jq .`` or ``python -m json.tool``, with
every line indented deeper, compact on one line, CRLF line ends) and decoded whole by orjson:
the cost of a document is that of decoding it, whichever way it is fed. Lines outside
documents (notes on a merged stderr, other tools' output) are skipped and counted as unknown.

``feed_bytes`` is the stream's own path: a file as read, or a live channel's chunks as they
come (a partial line or document waits for the next chunk; ``finish`` ends the stream).
``feed_text`` (whole lines) and ``feed`` (one line) give the same documents. A warning names
the line that closes its document. Subclasses implement ``wanted`` and ``document``.
"""

from __future__ import annotations

import codecs
import json
import re
from math import isfinite
from operator import attrgetter

import orjson

from benchtui.model.sample import Sample
from benchtui.parsers._json_documents import BROKEN, MAX_DOCUMENT_BYTES, Found, JsonDocuments
from benchtui.parsers.base import Parser

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any

_VALUE = attrgetter("value")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


class JsonStreamParser(Parser):
    """Base of parsers of JSON document streams."""

    takes_bytes = True

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._docs = JsonDocuments()
        self._started = False  # (the first bytes may carry a byte order mark)
        self._utf16: codecs.IncrementalDecoder | None = None
        self._at: int | None = None  # where the closing line of the document being read is
        self._unwanted = 0  # lines of documents that are not this parser's
        self._dropped = 0  # documents too long to be kept, already warned of

    def wanted(self, doc: object) -> bool:
        """Whether a decoded document is this parser's (other tools print JSON too)."""
        raise NotImplementedError

    def document(self, doc: Any, t: float | None) -> list[Sample] | None:
        """One decoded document that ``wanted``; the samples it gives."""
        raise NotImplementedError

    # --- feeding ---------------------------------------------------------------------------

    def feed_bytes(self, data: bytes, t: float | None = None) -> list[Sample]:
        """The next raw bytes of the output, cut anywhere: a file as read, or a live chunk.
        UTF-8 (a byte order mark is dropped) or UTF-16 with its mark (PowerShell's ``>``)."""
        if not self._started and data:
            self._started = True
            if data.startswith(_UTF16_BOMS):
                self._utf16 = codecs.getincrementaldecoder("utf-16")(errors="replace")
            data = data.removeprefix(_UTF8_BOM)
        if self._utf16 is not None:
            data = self._utf16.decode(data).encode("utf-8", errors="replace")
        return self._read(self._docs.feed(data), t)

    def feed_text(self, text: str, t: float | None = None) -> list[Sample]:
        """A block of whole lines (as ``Parser.feed_text``)."""
        self._started = True
        return self._read(self._docs.feed(text.encode("utf-8", errors="replace") + b"\n"), t)

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        self._started = True
        return self._read(self._docs.feed(line.encode("utf-8", errors="replace") + b"\n"), t)

    def flush_pending(self, t: float | None = None) -> list[Sample]:
        """End of stream: the documents its last bytes close; an open one is incomplete."""
        out = self._read(self._docs.finish(), t)
        if self._docs.incomplete is not None:
            self.warn("incomplete JSON document at the end of the stream (ignored)",
                      self._docs.incomplete.decode("utf-8", errors="replace"))
            self._docs.incomplete = None
            self._sync_unknown()
        return out

    # --- documents ---------------------------------------------------------------------------

    def _read(self, found: Any, t: float | None) -> list[Sample]:
        out: list[Sample] = []
        for f in found:
            self._at = f.last_line_at
            samples = self._one(f, t)
            if samples:
                if all(map(isfinite, map(_VALUE, samples))):
                    out.extend(samples)
                else:
                    out.extend(self._checked(samples))
        self._at = None
        self._sync_unknown()
        return out

    def _sync_unknown(self) -> None:
        docs = self._docs
        self.unknown_lines = docs.foreign + self._unwanted
        if docs.too_long > self._dropped:
            self._dropped = docs.too_long
            self.warn(f"JSON document longer than {MAX_DOCUMENT_BYTES >> 20} MiB (skipped)")

    def _one(self, f: Found, t: float | None) -> list[Sample] | None:
        value = f.value
        if value is BROKEN:
            value = self._repair(bytes(f.raw).decode("utf-8", errors="replace"), f.indent)
            if value is BROKEN:
                return None
        if not self.wanted(value):
            self._unwanted += bytes(f.raw).count(b"\n") + 1
            return None
        try:
            return self.document(value, t)
        except Exception as exc:  # noqa: BLE001 - as Parser.feed: never kill a live session
            self.warn(f"internal parser error ({type(exc).__name__}: {exc})")
            return None

    def _repair(self, text: str, indent: bytes) -> object:
        """A document whose bytes do not decode: not UTF-8; numbers orjson refuses (NaN,
        integers past 64 bits); cut short and followed by a whole one; or with foreign lines
        inside (a stderr merged into stdout: the document's own lines are indented deeper)."""
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
        pad = indent.decode()
        opening = re.compile(r"\n" + re.escape(pad) + r"\{[ \t\r]*\n")
        inner = [m.start() for m in opening.finditer(text)]
        if inner:  # a document cut short (the tool was killed), then a whole one
            self.warn("incomplete JSON document skipped", text[:40])
            return self._repair(text[inner[-1] + 1:], indent)
        lines = text.split("\n")
        deeper = (pad + " ", pad + "\t")
        kept = [x for x in lines[1:-1] if x.startswith(deeper)]
        if len(lines) > 2 and len(kept) < len(lines) - 2:
            try:
                doc = orjson.loads("\n".join([lines[0], *kept, lines[-1]]))
            except orjson.JSONDecodeError:
                pass
            else:
                self._unwanted += len(lines) - 2 - len(kept)
                return doc
        self.warn("not a valid JSON document (ignored)", text[:40])
        return BROKEN

    def warn(self, reason: str, text: str = "") -> None:
        docs = self._docs
        self.lineno = docs.line_at(self._at) if self._at is not None else docs.lines_read()
        super().warn(reason, text)
