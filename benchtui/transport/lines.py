"""Split a run's output, chunk by chunk, into lines, and count the bytes; or pass it on as
bytes with its over-long lines cut (``LineCutter``).

Chunks from ``Transport.follow`` end anywhere: in the middle of a line, of a UTF-8 character,
or between the ``\\r`` and ``\\n`` of a CRLF. ``LineSplitter`` keeps the partial line until it
is complete, ends lines at ``\\n``, ``\\r\\n`` and a lone ``\\r`` (fio's ``--eta`` line is
rewritten in place with ``\\r``), and checks that every chunk starts at the byte where the
previous one ended, so a resumed follow that lost or repeated a byte is caught at once.

A line longer than ``MAX_LINE_BYTES`` is cut there: its first ``MAX_LINE_BYTES`` bytes are a
line (given as soon as they are there), the rest of it up to its end is dropped and counted
(``cut_lines``, ``dropped_bytes``), so that a tool printing garbage or an endless line costs
a bounded memory. ``LineCutter`` does the same for a consumer that takes the raw bytes (a
parser that finds JSON documents on them): the bytes pass as they come, only a line longer
than ``MAX_LINE_BYTES`` is cut there (a line end put in its place) and the rest of it dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchtui.model.text_lines import TextLines
from benchtui.transport.base import Chunk

#: A line longer than this many bytes is cut to it, and the rest of it dropped.
MAX_LINE_BYTES = 1 << 20


class LineSplitter:
    """Incremental splitter over the bytes of one output file, starting at ``offset``.

    ``offset`` is the number of bytes fed so far (the file offset reached); ``consumed`` is
    the offset just after the last complete line returned. ``\\r\\n`` is one line end even
    when the two bytes come in different chunks.
    """

    def __init__(self, offset: int = 0, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        if offset < 0:
            raise ValueError(f"offset must be >= 0, not {offset}")
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, not {max_line_bytes}")
        self.offset = offset
        self.consumed = offset
        self._buffer = bytearray()
        self._after_cr = False
        self._max_line = max_line_bytes
        #: The line being read was cut: its bytes are dropped up to its end.
        self._skipping = False
        #: Lines cut at ``max_line_bytes``, and the bytes dropped from them.
        self.cut_lines = 0
        self.dropped_bytes = 0

    def feed(self, chunk: Chunk) -> list[str]:
        """The lines that ``chunk`` completes. ``ValueError`` if the chunk does not start
        where the previous one ended (bytes lost or repeated)."""
        start = chunk.offset - len(chunk.data)
        if start != self.offset:
            what = "lost" if start > self.offset else "repeated"
            raise ValueError(f"chunk starts at byte {start}, expected {self.offset}: "
                             f"{abs(start - self.offset)} bytes {what}")
        return self.feed_bytes(chunk.data)

    def feed_text(self, chunk: Chunk) -> str | None:
        """As ``feed``, but the completed lines come as one text (joined with ``\\n``, no
        final line end), None when the chunk completes none: for a consumer that would join
        them again (``Parser.feed_text``), output with no ``\\r`` and no long line is never
        split at all."""
        data = chunk.data
        if not self._plain(chunk):
            lines = self.feed(chunk)
            return "\n".join(lines) if lines else None
        last = data.rfind(b"\n")
        text = None
        if last >= 0:
            if self._buffer:  # the end of a line begun in an earlier chunk
                self._buffer += data[:last]
                text = self._buffer.decode("utf-8", errors="replace")
                self._buffer.clear()
            else:
                text = data[:last].decode("utf-8", errors="replace")
            self.consumed = self.offset + last + 1
        self._buffer += data[last + 1:]
        self.offset += len(data)
        return text

    def feed_lines(self, chunk: Chunk) -> Sequence[str]:
        """As ``feed``, but output with no ``\r`` and no long line comes as a ``TextLines``:
        the completed lines as one text, split when they are first read (for sinks that
        mostly do not read them one by one)."""
        if not self._plain(chunk):
            return self.feed(chunk)
        text = self.feed_text(chunk)
        return [] if text is None else TextLines(text)

    def _plain(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` starts where the last one ended, holds no ``\r`` and makes no
        line too long, after a chunk that did not end in a ``\r`` or a line cut: its
        complete lines are then its text up to its last ``\n``, decoded at once."""
        data = chunk.data
        return not (self._after_cr or self._skipping or b"\r" in data
                    or chunk.offset - len(data) != self.offset
                    or len(self._buffer) + len(data) > self._max_line)

    def feed_bytes(self, data: bytes) -> list[str]:
        """The lines that ``data`` (the next bytes of the stream) completes."""
        lines: list[str] = []
        pos = 0
        end = len(data)
        if self._after_cr and data:
            self._after_cr = False
            if data[0] == 0x0A:  # the \n of a \r\n split across chunks
                pos = 1
                self.consumed = self.offset + 1
        if (not self._skipping and data.find(b"\r", pos) < 0
                and len(self._buffer) + end - pos <= self._max_line):
            # most output: no \r, no long line; the lines decoded at once as one text
            # (many times faster than line by line)
            last = data.rfind(b"\n", pos)
            if last >= 0:
                self._buffer += data[pos:last]
                lines = self._take(self.offset + last + 1).split("\n")
                pos = last + 1
            self._buffer += data[pos:]
            self.offset += end
            return lines
        while pos < end:
            cut = _next_line_end(data, pos)
            if cut < 0:
                self._keep(data, pos, end, lines)
                break
            self._keep(data, pos, cut, lines)
            after = cut + 1
            if data[cut] == 0x0D:
                if after < end:
                    if data[after] == 0x0A:
                        after += 1
                else:
                    self._after_cr = True
            if self._skipping:  # the end of a line cut (and given) already
                self._skipping = False
                self.consumed = self.offset + after
            else:
                lines.append(self._take(self.offset + after))
            pos = after
        self.offset += end
        return lines

    def _keep(self, data: bytes, pos: int, stop: int, lines: list[str]) -> None:
        """Hold ``data[pos:stop]``, a piece of the line being read; once the line reaches
        ``max_line_bytes``, give it (cut there) and drop the rest of it, counted."""
        if self._skipping:
            self.dropped_bytes += stop - pos
            return
        room = self._max_line - len(self._buffer)
        if stop - pos < room:
            self._buffer += data[pos:stop]
            return
        self._buffer += data[pos:pos + room]
        self.dropped_bytes += stop - pos - room
        self.cut_lines += 1
        self._skipping = True
        lines.append(self._take(self.consumed))

    def finish(self) -> list[str]:
        """The last line if the stream ended without a line end."""
        self._skipping = False
        if not self._buffer:
            return []
        return [self._take(self.offset)]

    @property
    def pending(self) -> int:
        """Bytes held of a line not complete yet."""
        return len(self._buffer)

    def _take(self, consumed: int) -> str:
        text = self._buffer.decode("utf-8", errors="replace")
        self._buffer.clear()
        self.consumed = consumed
        return text


def _next_line_end(data: bytes, start: int) -> int:
    """Index of the first ``\\n`` or ``\\r`` at or after ``start``, or -1."""
    lf = data.find(b"\n", start)
    cr = data.find(b"\r", start, lf if lf >= 0 else len(data))
    return cr if cr >= 0 else lf


class LineCutter:
    """The bytes of one output file passed on as they come, from ``offset``, every line longer
    than ``max_line_bytes`` cut there as ``LineSplitter`` cuts it: its first
    ``max_line_bytes`` bytes, then ``\n``; the rest of it up to its end dropped and counted
    (``cut_lines``, ``dropped_bytes``). Lines end at ``\n`` or ``\r``."""

    def __init__(self, offset: int = 0, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.offset = offset
        self._max_line = max_line_bytes
        #: Bytes of the line being passed (since its last line end).
        self._line = 0
        #: The line being read was cut: its bytes are dropped up to its end.
        self._skipping = False
        self.cut_lines = 0
        self.dropped_bytes = 0

    def feed(self, chunk: Chunk) -> bytes:
        """The bytes of ``chunk`` to pass on. ``ValueError`` if the chunk does not start where
        the previous one ended (bytes lost or repeated)."""
        data = chunk.data
        start = chunk.offset - len(data)
        if start != self.offset:
            what = "lost" if start > self.offset else "repeated"
            raise ValueError(f"chunk starts at byte {start}, expected {self.offset}: "
                             f"{abs(start - self.offset)} bytes {what}")
        self.offset = chunk.offset
        if self._skipping:
            end = _next_line_end(data, 0)
            if end < 0:
                self.dropped_bytes += len(data)
                return b""
            self.dropped_bytes += end
            self._skipping = False
            self._line = 0
            data = data[end + (2 if data[end:end + 2] == b"\r\n" else 1):]
        if self._line + len(data) <= self._max_line:  # no line can be too long: as it came
            newline = data.rfind(b"\n")  # (then a \r only after it: no scan of the rest)
            last = max(newline, data.rfind(b"\r", newline + 1))
            self._line = self._line + len(data) if last < 0 else len(data) - last - 1
            return data
        return self._cut(data)

    def _cut(self, data: bytes) -> bytes:
        """``data`` line by line, its over-long lines cut."""
        out = bytearray()
        pos = 0
        while pos < len(data):
            end = _next_line_end(data, pos)
            stop = len(data) if end < 0 else end
            room = self._max_line - self._line
            if stop - pos > room:  # this line is too long: cut it at the limit
                out += data[pos:pos + room]
                out += b"\n"
                self.cut_lines += 1
                self._line = 0
                if end < 0:
                    self.dropped_bytes += stop - pos - room
                    self._skipping = True
                    break
                self.dropped_bytes += end - pos - room
                pos = end + (2 if data[end:end + 2] == b"\r\n" else 1)
                continue
            if end < 0:
                out += data[pos:]
                self._line += len(data) - pos
                break
            out += data[pos:end + 1]
            self._line = 0
            pos = end + 1
        return bytes(out)
