"""JSON documents found in a stream of bytes, on the bytes: whatever their indentation, compact
on one line or pretty-printed, with LF or CRLF line ends, among lines of other output, and fed
in chunks cut anywhere (a file as read, or a live SSH channel's reads).

A document opens on a line whose first non-blank character is ``{``, at indentation I:

* ``{`` alone on its line (fio, iperf3 -J, ``jq .``, ``python -m json.tool``, a report pasted
  with every line indented deeper): pretty-printed. Its own lines are indented deeper than I,
  so it closes on the first later line that is ``}`` alone at an indentation up to I.
* ``{`` and more on the line: the line itself, when it is a whole JSON value (``jq -c``,
  iperf3 --json-stream); else, when the line leaves an object or array open (sysstat's
  ``{"sysstat": {``), the first later line starting with ``}`` at an indentation up to I that
  makes the whole a JSON value.

Other lines are foreign (notes of a merged stderr, another tool's output): only counted.

The cost is that of decoding the documents (orjson, in C) plus a search for each one's end:
after the first document, the end is looked for near where the previous document's length
says it is (a successful decode proves the guess), and a live chunk that ends with a closing
line is tried first. Line numbers are counted only when asked for (a warning), from the last
block fed. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import orjson

from benchtui import compiled

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

#: An open document longer than this is given up (a ``{`` line that never closes must not
#: hold the rest of the stream in memory).
MAX_DOCUMENT_BYTES: Final = 64 * 1024 * 1024
#: How much shorter than the previous document one may be for the guess of its end to hold.
_GUESS_MARGIN: Final = 2048
#: Candidate ends tried for a document opened by a line that leaves it open, before giving up.
_MAX_TRIES: Final = 8
#: An opening line: blanks and ``{`` at a line start, or after a ``\r`` that rewrote the line
#: (fio's --eta status on a merged stderr).
_OPEN: Final = re.compile(rb"(?:^|\r)([ \t]*)\{", re.MULTILINE)
_BLANKS: Final = b" \t\r"


def _load_newlines() -> Callable[[bytes | bytearray, int, int], int | None] | None:
    """The compiled pass's line count (``_fio_json_pass.newlines``: 16 bytes compared at a
    time, ~7x ``bytes.count``'s speed; a 32-job fio document's 880 kB cost 0.23 ms to count
    in Python), or None: not built, or ``BENCHTUI_PURE_PYTHON`` set (as
    ``_fio_json_walked.load_pass``)."""
    if not compiled.wanted():
        return None
    try:
        from benchtui.parsers._fio_json_pass import newlines
    except ImportError:
        return None
    return newlines


#: Counts the line ends of a stretch of bytes (None: ``bytes.count``). Tests set it.
NEWLINES = _load_newlines()


def _newlines(blk: bytes | bytearray, start: int, end: int) -> int:
    """``blk.count(b"\\n", start, end)``, by the compiled pass where it takes them."""
    if NEWLINES is not None and (found := NEWLINES(blk, start, end)) is not None:
        return found
    return blk.count(b"\n", start, end)


class _Broken:
    """``Found.value`` of bytes that do not decode as JSON."""

    def __repr__(self) -> str:
        return "BROKEN"


BROKEN: Final = _Broken()


class Found:
    """One document: its decoded value (``BROKEN`` when its bytes are not valid JSON: cut
    short, foreign lines inside), its bytes (first line to closing line, no final line end),
    the indentation of its opening line and where its closing line starts in the block.

    (A plain class with slots, as ``_Open``, not a dataclass: each dataclass costs ~2.4 M
    instructions to create at import, which every ``benchtui parse`` pays.)"""

    __slots__ = ("indent", "last_line_at", "raw", "value")

    def __init__(self, value: object, raw: bytes | bytearray | memoryview, indent: bytes,
                 last_line_at: int) -> None:
        self.value = value
        self.raw = raw
        self.indent = indent
        self.last_line_at = last_line_at

    def __repr__(self) -> str:
        return (f"Found(value={self.value!r}, raw={bytes(self.raw)!r}, "
                f"indent={self.indent!r}, last_line_at={self.last_line_at!r})")


class _Open:
    __slots__ = ("ends", "gscan", "guess_failed", "indent", "pretty", "scan", "start",
                 "tries")

    def __init__(self, start: int, indent: bytes, ends: re.Pattern[bytes], scan: int,
                 pretty: bool) -> None:
        self.start = start  # where its opening line starts in the block
        self.indent = indent
        self.ends = ends  # its closing lines
        self.scan = scan  # the close is not before this
        self.pretty = pretty  # ``{`` alone on the opening line (else: a line left open)
        self.gscan = 0  # (pretty) the close is not between the guess and this
        self.guess_failed = False
        self.tries = 0


_ENDS: dict[tuple[int, bool], re.Pattern[bytes]] = {}


def _ends(width: int, pretty: bool) -> re.Pattern[bytes]:
    """Lines that may close a document opened at indentation ``width``: ``}`` (a comma may
    follow: the document is an element of an array) or, for a document whose opening line
    left it open, ``}`` and more (``}}``); the match ends after the ``}``."""
    key = (width, pretty)
    found = _ENDS.get(key)
    if found is None:
        tail = rb"(?=[ \t\r,]*\n)" if pretty else rb"(?=[^\n]*\n)"
        found = _ENDS[key] = re.compile(rb"\n[ \t]{0,%d}\}" % width + tail)
    return found


def _content_end(blk: bytes | bytearray, lo: int, eol: int) -> int:
    """The end of a line's JSON: before the blanks and commas that end the line."""
    while eol > lo and blk[eol - 1] in b" \t\r,":
        eol -= 1
    return eol


def _decode(raw: bytes | bytearray | memoryview) -> object:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return BROKEN


class JsonDocuments:
    """The JSON documents of one stream: ``feed`` the bytes as they come, ``finish`` at its
    end. ``foreign`` counts the lines outside documents, ``too_long`` the documents given up
    for their length; ``incomplete`` is the opening line of a document the stream ended in
    (None when there is none)."""

    def __init__(self, max_bytes: int = MAX_DOCUMENT_BYTES) -> None:
        self.max_bytes = max_bytes
        self.foreign = 0
        self.too_long = 0
        self.incomplete: bytes | None = None
        self._blk: bytes | bytearray = b""  # the block being read: the last data fed, or a buffer
        self._own = False  # whether _blk is this object's buffer (else the caller's data)
        self._pos = 0  # everything before it in the block is read
        self._nl = 0  # line ends in the stream before _counted
        self._counted = 0
        self._open: _Open | None = None
        self._hint = 0  # the length of the last pretty document, less a margin

    # --- line numbers ------------------------------------------------------------------------

    def line_at(self, pos: int) -> int:
        """The 1-based line number of position ``pos`` of the block being read (valid until the
        next ``feed``): counted on demand, from where it was last counted."""
        blk = self._blk
        if pos >= self._counted:
            self._nl += _newlines(blk, self._counted, pos)
        else:
            self._nl -= _newlines(blk, pos, self._counted)
        self._counted = pos
        return self._nl + 1

    def lines_read(self) -> int:
        """The line number of the end of what was read so far."""
        return self.line_at(self._pos)

    # --- feeding -------------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray) -> Iterator[Found]:
        """The documents that ``data`` (the next bytes of the stream) completes, as they are
        found. A partial line or an open document waits for the next call."""
        blk, pos = self._blk, self._pos
        if pos < len(blk):  # a document or a line left open: continue it in a buffer
            self.line_at(pos)
            try:
                if not self._own:
                    raise BufferError
                del blk[:pos]  # type: ignore[union-attr]
                blk += data
            except BufferError:  # the caller's bytes, or a view of the buffer is still held
                blk = bytearray(memoryview(blk)[pos:])
                blk += data
            self._blk, self._own = blk, True
            self._counted = 0
            if self._open is not None:
                self._open.start -= pos
                self._open.scan = max(self._open.start, self._open.scan - pos)
                self._open.gscan = max(self._open.start, self._open.gscan - pos)
        else:
            self.line_at(len(blk))
            self._blk, self._own = data, False
            self._counted = 0
        self._pos = 0
        yield from self._scan()

    def finish(self) -> Iterator[Found]:
        """The end of the stream: a last line without a line end is read as a whole line; a
        document still open then is ``incomplete`` (its lines are counted as foreign)."""
        blk = self._blk
        if self._pos < len(blk) and not blk.endswith(b"\n"):
            yield from self.feed(b"\n")
        while (op := self._open) is not None:
            op.guess_failed = True  # (a document shorter than the last one, at the end)
            yield from self._scan()
            if self._open is op:
                blk = self._blk
                self.incomplete = bytes(blk[op.start:blk.find(b"\n", op.start)])
                self.foreign += blk.count(b"\n", op.start)
                self._open = None
                self._pos = len(blk)

    def _scan(self) -> Iterator[Found]:
        blk = self._blk
        while True:
            op = self._open
            if op is None:
                got = self._opening(blk)
                if got is None:
                    return
                if isinstance(got, Found):
                    yield got
                    continue
                op = got
            found = self._closing(blk, op)
            if found is None:
                if len(blk) - op.start <= self.max_bytes:
                    return
                # never closed: its opening line is foreign; read on after it
                self._open = None
                self.foreign += 1
                self.too_long += 1
                self._pos = blk.find(b"\n", op.start) + 1
                continue
            yield found

    def _opening(self, blk: bytes | bytearray) -> _Open | Found | None:
        """The next document's opening line: the document itself when that line is one, else
        the open document; None when the block holds no more whole lines."""
        while True:
            pos = self._pos
            m = _OPEN.search(blk, pos)
            if m is None:
                last = blk.rfind(b"\n", pos)
                if last >= 0:
                    self.foreign += blk.count(b"\n", pos, last + 1)
                    self._pos = last + 1
                return None
            start, brace = m.start(1), m.end() - 1
            if start > pos:
                self.foreign += blk.count(b"\n", pos, start)
                self._pos = start
            eol = blk.find(b"\n", brace)
            if eol < 0:
                return None  # the rest of the opening line has not come yet
            indent = bytes(blk[start:brace])
            last = eol - 1
            while last > brace and blk[last] in _BLANKS:
                last -= 1
            if last == brace:  # "{" alone: pretty-printed
                self._open = _Open(start, indent, _ends(len(indent), True), eol, True)
                return self._open
            line = memoryview(blk)[start:_content_end(blk, brace, eol)]
            value = _decode(line)
            if value is not BROKEN:
                self._pos = eol + 1
                return Found(value, line, indent, start)
            if blk[last] in b"{[,":  # a first line that leaves the document open
                self._open = _Open(start, indent, _ends(len(indent), False), eol, False)
                return self._open
            self._pos = eol + 1
            if blk.startswith(b'{"', brace):  # a JSON object cut short
                return Found(BROKEN, line, indent, start)
            self.foreign += 1  # not JSON at all

    def _closing(self, blk: bytes | bytearray, op: _Open) -> Found | None:
        """The document ``op`` when the block holds its closing line, else None."""
        if not op.pretty:
            for end in op.ends.finditer(blk, op.scan):
                op.scan = end.end()
                found = self._try(blk, op, end)
                if found is not None:
                    return found
                op.tries += 1
                if op.tries >= _MAX_TRIES:
                    return self._take(blk, op, end, BROKEN)
            op.scan = max(op.scan, blk.rfind(b"\n", op.scan))
            return None
        size = len(blk)
        if self._hint and not op.guess_failed:
            # after a first document, the end is near where the last one's length says
            start = max(op.start + self._hint, op.gscan)
            if start >= size:
                # not that far yet: a live chunk that ends with a closing line is tried
                last = blk.rfind(b"\n", op.scan, size - 1)
                if last >= 0 and (m := op.ends.match(blk, last)) is not None:
                    return self._try(blk, op, m)
                return None
            m = op.ends.search(blk, start)
            if m is None:
                op.gscan = max(start, blk.rfind(b"\n", start))
                return None
            found = self._try(blk, op, m)
            if found is not None:
                return found
            op.guess_failed = True  # shorter than the last one, or broken: from its start
        m = op.ends.search(blk, op.scan)
        if m is None:
            op.scan = max(op.scan, blk.rfind(b"\n", op.scan))
            return None
        return self._take(blk, op, m, None)

    def _try(self, blk: bytes | bytearray, op: _Open, m: re.Match[bytes]) -> Found | None:
        """The document from ``op`` to the closing line ``m``, if that decodes."""
        found = self._take(blk, op, m, None, keep=False)
        if found.value is BROKEN:
            return None
        self._open = None
        self._pos = blk.find(b"\n", m.end()) + 1
        return found

    def _take(self, blk: bytes | bytearray, op: _Open, m: re.Match[bytes], value: object,
              *, keep: bool = True) -> Found:
        """The document from ``op`` to the closing line ``m`` (decoded unless ``value``);
        ``keep``: it is taken, the reading goes on after it."""
        eol = blk.find(b"\n", m.end())
        end = m.end() if op.pretty else _content_end(blk, m.end(), eol)
        raw = memoryview(blk)[op.start:end]
        if value is None:
            value = _decode(raw)
        if keep:
            self._open = None
            self._pos = eol + 1
        if op.pretty and value is not BROKEN:
            self._hint = max(0, len(raw) - _GUESS_MARGIN)
        return Found(value, raw, op.indent, m.start() + 1)
