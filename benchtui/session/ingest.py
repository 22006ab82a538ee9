"""The ingestion of one run's output: bytes -> lines or documents -> parser -> samples, in
bounded memory.

``RunIngest`` is fed the chunks a transport's ``follow`` yields, in order, each with the
time it arrived; it returns what each completes (``Ingested``: the raw lines, when someone
wants them, and the samples). A parser that takes bytes (``Parser.takes_bytes``: fio's and
iperf3's JSON, whose documents are found on the bytes and decoded whole) is given each
chunk's bytes as they came (``lines.LineCutter``: only an over-long line is cut), never
decoded nor split into lines for it; the others get the chunk's whole lines as one text
(``lines.LineSplitter``). The raw lines are split only when a sink wants them (the
console's log, a recording). It keeps what the session says about the run afterwards:
how much arrived, the lines cut for their length (``lines.MAX_LINE_BYTES``), the parser's
warnings (the first ``WARNINGS_SHOWN`` given, the rest counted), and the tool's own last
words (``last_words``) for when it fails or prints nothing usable.

Nothing here grows with the output: the splitter holds at most one line of
``MAX_LINE_BYTES``, the parser's warnings are taken from it as they come, and the last words
are kept as the newest chunks (``TAIL_BYTES`` and one chunk more) and the first
``HEAD_BYTES`` (a tool that says what is wrong at its start, then prints a long report).
The chunks arrive from a transport whose reads are bounded too (``READ_SIZE``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchtui.model.sample import Sample
from benchtui.model.text_lines import TextLines
from benchtui.parsers.base import Parser, ParseWarning
from benchtui.transport import Chunk, LineSplitter
from benchtui.transport.lines import LineCutter

#: The newest bytes of a run's output kept for its last words.
TAIL_BYTES = 16 << 10
#: The first bytes of a run's output kept for its last words (when the newest hold none).
HEAD_BYTES = 4 << 10
#: At most this many lines of a tool's last words are said, each cut at this many characters.
WORDS_LINES = 5
WORDS_LINE_CHARS = 200
#: Parse warnings said per run; the others are counted (``warnings_hidden``).
WARNINGS_SHOWN = 20
#: Characters that open a line of JSON structure or data rather than a sentence.
_STRUCTURE = ("{", "}", "[", "]", '"', ",")


@dataclass(slots=True)
class Ingested:
    """What one chunk completed: its raw lines (only when ``lines_wanted``; a ``TextLines``,
    split when read, when they came as one text) and samples."""

    lines: Sequence[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    #: Some text arrived (a server that printed its first line is listening).
    text: bool = False


class RunIngest:
    """One run's output, chunk by chunk, into samples of ``parser``. ``lines_wanted``: the
    raw lines are wanted too (the console's log, recordings). ``parsed_here``: False when a
    parser worker parses the run (``keep`` then; the parser here is not readied: with fio
    json+ histograms, that would import numpy into a process that never parses with it).
    ``start``: the byte of the output file its first chunk starts at (a run resumed there)."""

    def __init__(self, parser: Parser, *, lines_wanted: bool, parsed_here: bool = True,
                 start: int = 0) -> None:
        self.parser = parser
        if parsed_here:
            parser.ready()
        self.lines_wanted = lines_wanted
        self.splitter = LineSplitter(start)
        #: The bytes for a parser that takes them (None: it takes lines).
        self.cutter = LineCutter(start) if parser.takes_bytes else None
        #: Bytes read.
        self.bytes = 0
        #: Parse warnings given by ``new_warnings``, and those counted only.
        self.warnings_shown = 0
        self.warnings_hidden = 0
        #: The lines cut and bytes dropped, as a parser worker counted them (None: here).
        self.cuts_elsewhere: tuple[int, int] | None = None
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0

    def feed(self, chunk: Chunk, t: float) -> Ingested:
        """The lines and samples ``chunk`` (arrived at ``t``, epoch seconds) completes."""
        data = chunk.data
        self._keep(data)
        out = Ingested()
        if self.cutter is not None:
            if self.lines_wanted:
                out.lines = self.splitter.feed_lines(chunk)
            data = self.cutter.feed(chunk)
            if data:
                out.text = True
                out.samples = self.parser.feed_bytes(data, t)
            return out
        if self.lines_wanted:
            lines = out.lines = self.splitter.feed_lines(chunk)
            text = lines.text if isinstance(lines, TextLines) \
                else "\n".join(lines) if lines else None
        else:
            text = self.splitter.feed_text(chunk)
        if text is not None:
            out.text = True
            out.samples = self.parser.feed_text(text, t)
        return out

    def keep(self, chunk: Chunk) -> list[str]:
        """``feed`` without the parser, whose worker process parses the chunk
        (``parse_pool``): its bytes kept for the last words, its raw lines if wanted."""
        self._keep(chunk.data)
        return self.splitter.feed(chunk) if self.lines_wanted else []

    def finish_lines(self) -> list[str]:
        """``finish`` without the parser: the output's last line, if wanted."""
        rest = self.splitter.finish()
        return rest if self.lines_wanted else []

    def parsed_elsewhere(self, warnings: list[ParseWarning], cut_lines: int,
                         dropped_bytes: int) -> None:
        """What the run's parser worker said with a chunk's samples: its new warnings (given
        by ``new_warnings`` as this run's own) and its count of the lines cut."""
        self.parser.warnings.extend(warnings)
        self.cuts_elsewhere = (cut_lines, dropped_bytes)

    def finish(self, t: float) -> Ingested:
        """The end of the output: its last line, and what the parser still held."""
        out = Ingested()
        rest = self.splitter.finish()
        if rest:
            out.text = True
            if self.lines_wanted:
                out.lines = rest
            if self.cutter is None:
                out.samples = self.parser.feed_text("\n".join(rest), t)
        out.samples += self.parser.finish()
        return out

    def new_warnings(self) -> list[ParseWarning]:
        """The parser's warnings since the last call (taken from it: its list does not grow
        with garbage), the first ``WARNINGS_SHOWN`` of the run; the others are counted."""
        found = self.parser.warnings
        if not found:
            return []
        taken = list(found)
        found.clear()
        room = max(WARNINGS_SHOWN - self.warnings_shown, 0)
        self.warnings_shown += min(room, len(taken))
        self.warnings_hidden += max(len(taken) - room, 0)
        return taken[:room]

    @property
    def cut_lines(self) -> int:
        """Lines cut at ``lines.MAX_LINE_BYTES``."""
        if self.cuts_elsewhere is not None:
            return self.cuts_elsewhere[0]
        return (self.cutter or self.splitter).cut_lines

    @property
    def dropped_bytes(self) -> int:
        """Bytes dropped from the lines cut."""
        if self.cuts_elsewhere is not None:
            return self.cuts_elsewhere[1]
        return (self.cutter or self.splitter).dropped_bytes

    def last_words(self) -> list[str]:
        """The tool's own last lines of text (at most ``WORDS_LINES``, each at most
        ``WORDS_LINE_CHARS`` characters): from the newest
        output, else from its start; lines of JSON structure or without a letter are passed
        over (fio's report after the error it printed first); a line repeated is said
        once."""
        tail = b"".join(self._tail)
        words = _sentences(tail, from_start=len(tail) < self.bytes)
        if not words and self.bytes > len(tail):
            words = _sentences(bytes(self._head), from_start=False, cut_end=True)
        return list(dict.fromkeys(words))[-WORDS_LINES:]  # (a line said twice, once)

    def _keep(self, data: bytes) -> None:
        if len(self._head) < HEAD_BYTES:
            self._head += data[:HEAD_BYTES - len(self._head)]
        self.bytes += len(data)
        self._tail.append(data)
        self._tail_bytes += len(data)
        while self._tail_bytes - len(self._tail[0]) >= TAIL_BYTES:
            self._tail_bytes -= len(self._tail.popleft())


def _sentences(data: bytes, *, from_start: bool, cut_end: bool = False) -> list[str]:
    """The lines of ``data`` that read as words: a letter, and nothing but printable
    characters (bytes that are not UTF-8 are not); ``from_start``: its first line may be
    the end of a cut one (dropped); ``cut_end``: so may its last."""
    lines = data.decode("utf-8", errors="replace").replace("\r", "\n").split("\n")
    if from_start:
        lines = lines[1:]
    if cut_end:
        lines = lines[:-1]
    out = []
    for line in lines:
        text = line.strip().replace("\t", " ")
        if not text or text.startswith(_STRUCTURE) or not any(c.isalpha() for c in text) \
                or not text.isprintable() or "\ufffd" in text:  # (garbage: not UTF-8)
            continue
        out.append(text if len(text) <= WORDS_LINE_CHARS
                   else text[:WORDS_LINE_CHARS - 1] + "…")
    return out


def words_text(words: list[str]) -> str:
    """A tool's last words in one line, for a message: ``fio: ... / Did you mean ...?``."""
    return " / ".join(words)
