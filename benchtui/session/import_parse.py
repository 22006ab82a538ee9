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
(``import_timeline``, when it writes them). Lines that name their host (pdsh's and clush's
``host: `` prefixes, ``parsers._prefixes``) are that host's, in their piece's step, each host
a stream of its own (``parsers._host_streams``); a logger's stamps are the lines' times.

The file is read a block of lines at a time (``import_text``) and each block is fed to every
parser at once; what a run gets (its samples, its lines) is kept compact until it is written
(``import_store``). Which piece a sample belongs to is known when it comes, except while its
host's stream has given one run only: a sample of it in a later piece belongs to that later
piece if the stream never tells a second run apart, else to the run's first piece. Such
samples wait (compact) until the stream's second run or its end says which.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchtui.errors import InputError
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers._host_streams import HostStreams
from benchtui.parsers._prefixes import LinePrefixes, PrefixShape
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

    def merge(self, other: ImportedRun) -> None:
        """Take ``other``'s text, samples and what they say (the same host and step, from a
        later file: its streams are its own)."""
        self.text.extend_store(other.text)
        self.samples.extend_store(other.samples)
        self.tools += [t for t in other.tools if t not in self.tools]
        self.warnings += other.warnings
        self.first_run.update(other.first_run)
        for mine, theirs, pick in (("most_elapsed", other.most_elapsed, max),
                                   ("first_clock", other.first_clock, min),
                                   ("last_clock", other.last_clock, max)):
            have = getattr(self, mine)
            if theirs is not None:
                setattr(self, mine, theirs if have is None else pick(have, theirs))
        self.labels_seen.update(other.labels_seen)
        self.stretches.update(other.stretches)


class Streams:
    """The streams of an import, numbered, and its series (``SeriesTable``)."""

    def __init__(self) -> None:
        self.names: list[Stream] = []
        self.series = SeriesTable()

    def add(self, stream: Stream) -> int:
        self.names.append(stream)
        return len(self.names) - 1


def parse_file(text: TextFile, pieces: Sequence[Piece], *, streams: Streams,
               among: list[type[Parser]] | None, check_labels: LabelCheck
               ) -> list[ImportedRun]:
    """The (host, step) runs of ``text``'s ``pieces`` (for a plain file: one, from line 1 to
    the end; several pieces of the same host and step make one run), read and parsed. Lines
    that name their host (pdsh's ``host: ``) are that host's, in the piece's step; a
    logger's stamps are the lines' times (the file's modification time gives syslog stamps
    their year). ``InputError`` when no known tool's output is in them, or a piece gives no
    sample."""
    feeder = _Feeder(text, pieces, streams=streams, among=among, check_labels=check_labels)
    starts = [p.line for p in pieces]
    for number, lines, flagged in text.blocks():
        for i, first, part in _by_piece(pieces, starts, number, lines):
            feeder.feed(i, first, part, flagged)
    feeder.finish(bool(text.control_lines))
    for i, p in enumerate(pieces):
        own = feeder.runs.get((p.host, p.step))
        if feeder.given[i] or (own is not None and own.samples.count):
            continue
        if not p.line:  # a whole file
            raise nothing_found(text.path, among)
        raise InputError(f"{text.path}:{p.line}", f"no {_named(among)} output found for host "
                         f"{p.host!r}, step {p.step!r}", "check the map's markers" +
                         ("" if among else ", or name the tool with --tool"))
    return [run for run in feeder.runs.values() if run.samples.count]


def _named(among: list[type[Parser]] | None) -> str:
    """What --tool named (``iostat``, the parser ``fio-json``), or ``tool``."""
    if not among:
        return "tool"
    if len(among) == 1:
        return among[0].name  # a parser named: fio-json
    return " or ".join(dict.fromkeys(cls.tool for cls in among))


def nothing_found(source: str, among: list[type[Parser]] | None) -> InputError:
    if among:  # --tool named it: the file is not its output
        return InputError(source, f"no {_named(among)} output was found in it",
                          "check that the file holds that tool's output (benchtui parse "
                          "--list shows what each parser reads)")
    return InputError(source, "no known tool's output found in it",
                      "name the tool with --tool (benchtui parse --list shows them)")


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
    """A host's samples (of one stream) whose piece waits on whether its stream tells runs
    apart."""

    def __init__(self, table: SeriesTable) -> None:
        self.samples = SampleStore(table)
        self.pieces = array("I")


class _Stream:
    """One parser class fed every piece in order (a parser per host the lines name), and
    where its samples go."""

    def __init__(self, cls: type[Parser], shape: PrefixShape | None, *, source: str,
                 index: int, table: SeriesTable, reference: float | None) -> None:
        # Lines without a host prefix go to one parser whatever the piece's host (as a
        # file's text is one stream); its samples get the piece's host after (host "").
        self.parsers = HostStreams([cls], shape, host="", source=source, reference=reference)
        self.cls = cls
        self.index = index
        self.table = table
        self.name: Stream = (source, cls.name)
        #: (host, run label) -> the piece it began in; host -> its labels, in order
        self.first_piece: dict[tuple[str, str | None], int] = {}
        self.labels: dict[str, list[str | None]] = {}
        self.pending: dict[str, _Pending] = {}


class _Feeder:
    """The parsers of one file, detected on the head of its pieces' text, fed block by
    block (``parse_file``); the file's runs."""

    def __init__(self, text: TextFile, pieces: Sequence[Piece], *, streams: Streams,
                 among: list[type[Parser]] | None, check_labels: LabelCheck) -> None:
        self.text = text
        self.source = text.path
        self.pieces = pieces
        self.registry = streams
        self.among = among
        self.check_labels = check_labels
        self.streams: list[_Stream] | None = None  # (once detected)
        self.prefixes: LinePrefixes | None = None
        self.head: list[tuple[int, bool, list[str], bool]] = []
        self.head_chars = 0
        #: (host, step) -> its run, in the order met; samples given to each piece
        self.runs: dict[tuple[str, str], ImportedRun] = {}
        self.given = [0] * len(pieces)

    def run_of(self, host: str, p: Piece) -> ImportedRun:
        run = self.runs.get((host, p.step))
        if run is None:
            run = self.runs[(host, p.step)] = ImportedRun(host, p.step, self.source, p.line,
                                                          SampleStore(self.registry.series))
        return run

    def feed(self, i: int, first: bool, lines: list[str], flagged: bool) -> None:
        if self.streams is None:
            self.head.append((i, first, lines, flagged))
            self.head_chars += sum(map(len, lines)) + len(lines)
            if self.head_chars > registry.DETECT_HEAD_BYTES:
                self._detect()
            return
        p = self.pieces[i]
        if self.prefixes is None:
            self.run_of(p.host, p).text.extend(lines)
        else:
            for line in lines:  # each host's raw text, as its own output was
                host, _t, rest = self.prefixes.split(line)
                if host is not None:
                    self.run_of(host, p).text.extend([rest])
                elif p.host:
                    self.run_of(p.host, p).text.extend([line])
        text = "\n".join(lines)
        for stream in self.streams:
            # (a piece's lines follow its marker line)
            for s in stream.parsers.feed_text(text, p.line + 1 if first else None):
                if flagged:
                    self.check_labels(s)
                self._give(stream, i, s)

    def _detect(self) -> None:
        head = "\n".join(line for _, _, lines, _ in self.head for line in lines)
        shape, classes = registry.choose_stream(head[:registry.DETECT_HEAD_BYTES], self.among)
        if not classes:
            raise nothing_found(self.source, self.among)
        reference = self.text.mtime
        self.prefixes = None if shape is None else LinePrefixes(shape, reference)
        self.streams = [_Stream(cls, shape, source=self.source,
                                index=self.registry.add((self.source, cls.name)),
                                table=self.registry.series, reference=reference)
                        for cls in classes]
        waiting, self.head = self.head, []
        for i, first, lines, flagged in waiting:
            self.feed(i, first, lines, flagged)

    def _give(self, stream: _Stream, i: int, s: Sample) -> None:
        key = (s.host, s.labels.get("run"))
        first = stream.first_piece.get(key)
        if first is None:
            first = stream.first_piece[key] = i
            labels = stream.labels.setdefault(s.host, [])
            labels.append(key[1])
            if len(labels) == 2 and s.host in stream.pending:  # a second run told apart
                self._settle(stream, s.host, by_run=True)
        if len(stream.labels[s.host]) > 1:
            self._to(stream, first, s)
        elif i == first:
            self._to(stream, i, s)
        else:
            pending = stream.pending.get(s.host)
            if pending is None:
                pending = stream.pending[s.host] = _Pending(stream.table)
            pending.samples.add(stream.index, s)
            pending.pieces.append(i)

    def _settle(self, stream: _Stream, host: str, *, by_run: bool) -> None:
        pending = stream.pending.pop(host)
        first = stream.first_piece[(host, stream.labels[host][0])]
        for (_, s), i in zip(pending.samples, pending.pieces, strict=True):
            self._to(stream, first if by_run else i, s)

    def _to(self, stream: _Stream, i: int, s: Sample) -> None:
        piece = self.pieces[i]
        run = self.run_of(s.host or piece.host, piece)
        self.given[i] += 1
        if stream.cls.tool not in run.tools:
            run.tools.append(stream.cls.tool)
        run.first_run.setdefault(stream.name, stream.labels[s.host][0])
        s.host = run.host
        run.add(stream.index, s)

    def finish(self, flagged: bool) -> None:
        if self.streams is None:
            self._detect()
        assert self.streams is not None
        last = len(self.pieces) - 1
        starts = [p.line for p in self.pieces]
        for stream in self.streams:
            for s in stream.parsers.finish():
                if flagged:
                    self.check_labels(s)
                self._give(stream, last, s)
            for host in list(stream.pending):
                self._settle(stream, host, by_run=len(stream.labels[host]) > 1)
            for parser in stream.parsers.parsers:
                for w in parser.warnings:
                    piece = self.pieces[max(bisect_right(starts, w.line) - 1, 0)]
                    self.run_of(parser.host or piece.host, piece).warnings.append(w)
        for run in self.runs.values():
            run.samples.seal()
            run.text.seal()
