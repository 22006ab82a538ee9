"""Split a run's output, chunk by chunk, into lines, and count the bytes.

Chunks from ``Transport.follow`` end anywhere: in the middle of a line, of a UTF-8 character,
or between the ``\\r`` and ``\\n`` of a CRLF. ``LineSplitter`` keeps the partial line until it
is complete, ends lines at ``\\n``, ``\\r\\n`` and a lone ``\\r`` (fio's ``--eta`` line is
rewritten in place with ``\\r``), and checks that every chunk starts at the byte where the
previous one ended, so a resumed follow that lost or repeated a byte is caught at once.
"""

from __future__ import annotations

from benchtui.transport.base import Chunk

#: A line longer than this many bytes is cut, so a stream without newlines cannot grow
#: memory without bound.
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
        self.offset = offset
        self.consumed = offset
        self._buffer = bytearray()
        self._after_cr = False
        self._max_line = max_line_bytes

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
        them again (``Parser.feed_text``), output with no ``\\r`` is never split at all."""
        data = chunk.data
        if self._after_cr or b"\r" in data or chunk.offset - len(data) != self.offset:
            lines = self.feed(chunk)
            return "\n".join(lines) if lines else None
        text, cut = self._text_without_cr(data, 0)
        if cut is None:
            return text
        return cut if text is None else f"{text}\n{cut}"

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
        if data.find(b"\r", pos) < 0:
            block, long_line = self._text_without_cr(data, pos)
            if block is not None:
                lines.extend(block.split("\n"))
            if long_line is not None:
                lines.append(long_line)
            return lines
        while pos < end:
            cut = _next_line_end(data, pos)
            if cut < 0:
                self._buffer += data[pos:]
                if len(self._buffer) >= self._max_line:
                    lines.append(self._take(self.offset + end))
                break
            self._buffer += data[pos:cut]
            after = cut + 1
            if data[cut] == 0x0D:
                if after < end:
                    if data[after] == 0x0A:
                        after += 1
                else:
                    self._after_cr = True
            lines.append(self._take(self.offset + after))
            pos = after
        self.offset += end
        return lines

    def _text_without_cr(self, data: bytes, pos: int) -> tuple[str | None, str | None]:
        """The bytes from ``pos`` of data with no ``\\r`` (most output): (the lines they
        complete, decoded at once as one text, which is many times faster than line by line;
        a partial line cut at ``max_line_bytes``), each None when there is none."""
        end = len(data)
        last = data.rfind(b"\n", pos)
        text = cut = None
        if last >= 0:
            if self._buffer:  # the end of a line begun in an earlier chunk
                self._buffer += data[pos:last]
                text = self._buffer.decode("utf-8", errors="replace")
                self._buffer.clear()
            else:
                text = data[pos:last].decode("utf-8", errors="replace")
            self.consumed = self.offset + last + 1
            pos = last + 1
        if pos < end:
            self._buffer += data[pos:]
            if len(self._buffer) >= self._max_line:
                cut = self._take(self.offset + end)
        self.offset += end
        return text, cut

    def finish(self) -> list[str]:
        """The last line if the stream ended without a line end."""
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
