"""Parsing the pieces of an imported file, as it is read: each (host, step)'s samples, as a
live session's would be labelled.

A file's pieces are read in the file's order as one stream per tool, as ``benchtui parse``
reads the whole file: the parsers are detected on the pieces' text (or named by ``--tool``),
and each one is fed piece after piece. A sample belongs to the piece whose text was being fed
when the parser gave it, with one exception that keeps runs whole: when a parser tells its
runs apart (fio, rados bench, rbd bench and fbbench label the second run of a stream on
``run="2"``, ...), every sample of a run goes to the piece in which the run gave its first
sample. fio prints a run's disk statistics after the run, and seed 000 pastes them under the
next step's comment: they stay with the run they describe. Within a (host, step), runs are then
numbered again from the first, as a parser reading that step's output alone numbers them
(``importer``, when it writes them).

The file is read a block of lines at a time (``import_text``) and each block is fed to every
parser at once; what a run gets (its samples, its lines) is kept compact until it is written
(``import_store``). Which piece a sample belongs to is known when it comes, except while a
stream has given one run only: a sample of it in a later piece belongs to that later piece
if the stream never tells a second run apart, else to the run's first piece. Such samples
wait (compact) until the stream's second run or its end says which.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchtui.errors import InputError
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers.base import Parser, ParseWarning
from benchtui.session.import_map import Piece
from benchtui.session.import_store import SampleStore, SeriesTable, TextStore
from benchtui.session.import_text import TextFile

#: A stream of samples: (the file, the parser's name). Streams are numbered in the order the
#: import meets them (file by file, the parsers of a file in the registry's order).
Stream = tuple[str, str]
#: Checks a sample (its labels) given from a block that held a stray control character.
LabelCheck = Callable[[Sample], None]


@dataclass(slots=True)
class ImportedRun:
    """What one (host, step) of an import holds: the samples (host label set) and the raw
    lines they were parsed from, compact; and what places the run in time."""

    host: str
    step: str
    source: str  # the file the output is in
    line: int  # where in it (1-based: the marker's line; 0 for a whole file)
    samples: SampleStore
    text: TextStore = field(default_factory=TextStore)
    tools: list[str] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)
    #: The label each stream gave its first run (None: no label), by (file, parser).
    first_run: dict[Stream, str | None] = field(default_factory=dict)
    #: For placing it: the largest ``elapsed`` (0 at least), the smallest and largest clock
    #: time of its samples that have a time and no ``elapsed``.
    most_elapsed: float | None = None
    first_clock: float | None = None
    last_clock: float | None = None
    #: (stream, run label) of its samples, each in the order first given within its stream.
    labels_seen: dict[tuple[int, str | None], None] = field(default_factory=dict)
    #: stream -> where (the count of its samples before) each stretch of them already in
    #: time order starts: a stretch holds samples placed by one rule (``elapsed``, clock
    #: time, neither) in order (their place in time is only known once the run is whole).
    stretches: dict[int, list[int]] = field(default_factory=dict)
    _last: dict[int, tuple[int, int, float]] = field(default_factory=dict)

    def add(self, stream: int, s: Sample) -> None:
        self.samples.add(stream, s)
        if s.elapsed is not None:
            rule, at = 0, max(s.elapsed, 0.0)
            if self.most_elapsed is None or at > self.most_elapsed:
                self.most_elapsed = at
        elif s.t is not None:
            rule, at = 1, s.t
            if self.first_clock is None or at < self.first_clock:
                self.first_clock = at
            if self.last_clock is None or at > self.last_clock:
                self.last_clock = at
        else:
            rule, at = 2, 0.0
        n, last_rule, last_at = self._last.get(stream, (0, -1, 0.0))
        if rule != last_rule or at < last_at:
            self.stretches.setdefault(stream, []).append(n)
        self._last[stream] = (n + 1, rule, at)
        self.labels_seen[(stream, s.labels.get("run"))] = None


class Streams:
    """The streams of an import, numbered, and its series (``SeriesTable``)."""

    def __init__(self) -> None:
        self.names: list[Stream] = []
        self.series = SeriesTable()

    def add(self, stream: Stream) -> int:
        self.names.append(stream)
        return len(self.names) - 1


def parse_file(text: TextFile, pieces: Sequence[Piece], runs: dict[tuple[str, str], ImportedRun],
               *, streams: Streams, among: list[type[Parser]] | None,
               check_labels: LabelCheck) -> None:
    """Read ``text`` and parse its ``pieces`` (for a plain file: one, from line 1 to the
    end) into ``runs`` (made for pieces that have none yet; several pieces of the same host
    and step make one run, over files too). ``InputError`` when no known tool's output is in
    them, or a piece gives no sample."""
    for p in pieces:
        if (p.host, p.step) not in runs:
            runs[(p.host, p.step)] = ImportedRun(p.host, p.step, text.path, p.line,
                                                 SampleStore(streams.series))
    by_piece = [runs[(p.host, p.step)] for p in pieces]
    feeder = _Feeder(text.path, pieces, by_piece, streams=streams, among=among,
                     check_labels=check_labels)
    starts = [p.line for p in pieces]
    for number, lines, flagged in text.blocks():
        for i, first, part in _by_piece(pieces, starts, number, lines):
            by_piece[i].text.extend(part)
            feeder.feed(i, first, part, flagged)
    feeder.finish(bool(text.control_lines))
    for p in pieces:
        if feeder.given.get((p.host, p.step)):
            continue
        if not p.line:  # a whole file
            raise InputError(text.path, "no tool output found in it",
                             "name the tool with --tool (benchtui parse --list shows them)")
        raise InputError(f"{text.path}:{p.line}", f"no tool output found for host "
                         f"{p.host!r}, step {p.step!r}", "check the map's markers, or name "
                         "the tool with --tool")


def _by_piece(pieces: Sequence[Piece], starts: list[int], number: int, lines: list[str]
              ) -> list[tuple[int, bool, list[str]]]:
    """The lines (numbered from ``number``) that belong to pieces: (piece index, whether
    they are the piece's first, the lines), in order. A piece holds the lines after its
    marker line up to its ``end``; ``starts``: each piece's marker line."""
    out = []
    end = number + len(lines)
    for i in range(max(bisect_right(starts, number - 1) - 1, 0), len(pieces)):
        p = pieces[i]
        lo, hi = max(p.line + 1, number), min(p.end, end)
        if p.line + 1 >= end:
            break
        if lo < hi:
            out.append((i, lo == p.line + 1, lines[lo - number:hi - number]))
    return out


class _Pending:
    """A stream's samples whose piece waits on whether the stream tells runs apart."""

    def __init__(self, table: SeriesTable) -> None:
        self.samples = SampleStore(table)
        self.pieces = array("I")


class _Stream:
    """One parser fed every piece in order, and where its samples go."""

    def __init__(self, cls: type[Parser], source: str, index: int, table: SeriesTable) -> None:
        self.parser = cls(host="-", source=source)
        self.table = table
        self.cls = cls
        self.index = index
        self.name: Stream = (source, cls.name)
        self.first_piece: dict[str | None, int] = {}
        self.first_key: str | None = None
        self.pending = _Pending(table)


class _Feeder:
    """The parsers of one file, detected on the head of its pieces' text, fed block by
    block (``parse_file``)."""

    def __init__(self, source: str, pieces: Sequence[Piece], by_piece: list[ImportedRun], *,
                 streams: Streams, among: list[type[Parser]] | None,
                 check_labels: LabelCheck) -> None:
        self.source = source
        self.pieces = pieces
        self.by_piece = by_piece
        self.registry = streams
        self.among = among
        self.check_labels = check_labels
        self.streams: list[_Stream] | None = None  # (once detected)
        self.head: list[tuple[int, bool, list[str], bool]] = []
        self.head_chars = 0
        self.last = -1  # the piece fed last
        #: (host, step) -> samples given to it from this file
        self.given: dict[tuple[str, str], int] = {}

    def feed(self, i: int, first: bool, lines: list[str], flagged: bool) -> None:
        if self.streams is None:
            self.head.append((i, first, lines, flagged))
            self.head_chars += sum(map(len, lines)) + len(lines)
            if self.head_chars > registry.DETECT_HEAD_BYTES:
                self._detect()
            return
        for stream in self.streams:
            parser = stream.parser
            if first:
                parser.lineno = self.pieces[i].line  # the piece's lines follow its marker
            for s in parser.feed_text("\n".join(lines)):
                if flagged:
                    self.check_labels(s)
                self._give(stream, i, s)

    def _detect(self) -> None:
        head = "\n".join(line for _, _, lines, _ in self.head for line in lines)
        classes = registry.choose(head[:registry.DETECT_HEAD_BYTES], self.among)
        if not classes:
            raise InputError(self.source, "no known tool's output found in it",
                             "name the tool with --tool (benchtui parse --list shows them)")
        self.streams = [_Stream(cls, self.source, self.registry.add((self.source, cls.name)),
                                self.registry.series) for cls in classes]
        waiting, self.head = self.head, []
        for i, first, lines, flagged in waiting:
            self.feed(i, first, lines, flagged)

    def _give(self, stream: _Stream, i: int, s: Sample) -> None:
        key = s.labels.get("run")
        if not stream.first_piece:
            stream.first_key = key
        first = stream.first_piece.setdefault(key, i)
        if len(stream.first_piece) > 1:
            if stream.pending.samples.count:  # the stream told a second run apart
                self._settle(stream, by_run=True)
            self._to(stream, first, s)
        elif i == first:
            self._to(stream, i, s)
        else:
            stream.pending.samples.add(stream.index, s)
            stream.pending.pieces.append(i)

    def _settle(self, stream: _Stream, *, by_run: bool) -> None:
        pending, stream.pending = stream.pending, _Pending(stream.table)
        first = stream.first_piece[stream.first_key]
        for (_, s), i in zip(pending.samples, pending.pieces, strict=True):
            self._to(stream, first if by_run else i, s)

    def _to(self, stream: _Stream, i: int, s: Sample) -> None:
        run = self.by_piece[i]
        if stream.cls.tool not in run.tools:
            run.tools.append(stream.cls.tool)
        run.first_run.setdefault(stream.name, stream.first_key)
        s.host = run.host
        run.add(stream.index, s)
        key = (run.host, run.step)
        self.given[key] = self.given.get(key, 0) + 1

    def finish(self, flagged: bool) -> None:
        if self.streams is None:
            self._detect()
        assert self.streams is not None
        last = len(self.pieces) - 1
        starts = [p.line for p in self.pieces]
        for stream in self.streams:
            for s in stream.parser.finish():
                if flagged:
                    self.check_labels(s)
                self._give(stream, last, s)
            if stream.pending.samples.count:
                self._settle(stream, by_run=len(stream.first_piece) > 1)
            for w in stream.parser.warnings:
                self.by_piece[max(bisect_right(starts, w.line) - 1, 0)].warnings.append(w)
        for run in self.by_piece:
            run.samples.seal()
            run.text.seal()
