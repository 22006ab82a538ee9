"""Parsing the pieces of an imported file: each (host, step)'s samples, as a live session's
would be labelled.

A file's pieces are read in the file's order as one stream per tool, as ``benchtui parse``
reads the whole file: the parsers are detected on the pieces' text (or named by ``--tool``),
and each one is fed piece after piece. A sample belongs to the piece whose text was being fed
when the parser gave it, with one exception that keeps runs whole: when a parser tells its
runs apart (fio, rados bench, rbd bench and fbbench label the second run of a stream on
``run="2"``, ...), every sample of a run goes to the piece in which the run gave its first
sample. fio prints a run's disk statistics after the run, and seed 000 pastes them under the
next step's comment: they stay with the run they describe. Within a (host, step), runs are then
numbered again from the first, as a parser reading that step's output alone numbers them.

No I/O: text in, samples out.
"""

from __future__ import annotations

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

#: A run as the importer knows it: (file, parser name, the run label the parser gave it).
RunId = tuple[str, str, str | None]


@dataclass(slots=True)
class ImportedRun:
    """What one (host, step) of an import holds: the samples (host and ``step`` label set)
    and the raw lines they were parsed from."""

    host: str
    step: str
    source: str  # the file the output is in
    line: int  # where in it (1-based: the marker's line; 0 for a whole file)
    lines: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)
    #: The run each sample came from (same order as ``samples``), for renumbering runs.
    runs: list[RunId] = field(default_factory=list)
    #: The label each stream gave its first run (None: no label), by (file, parser).
    first_run: dict[tuple[str, str], str | None] = field(default_factory=dict)


def parse_file_pieces(pieces: Sequence[Piece], source: str,
                      among: list[type[Parser]] | None,
                      reference: float | None = None) -> list[ImportedRun]:
    """The (host, step) runs of one file's ``pieces`` (several pieces of the same host and
    step make one run). Lines that name their host (pdsh's ``host: ``) are that host's, in the
    piece's step; a logger's stamps are the lines' times (``reference``: when the file was
    written, for the year of syslog stamps). ``InputError`` when no known tool's output is in
    them, or a piece gives no sample."""
    shape, classes = registry.choose_stream(_head(pieces, registry.DETECT_HEAD_BYTES), among)
    if not classes:
        raise _nothing_found(source, among)
    runs: dict[tuple[str, str], ImportedRun] = {}

    def run_of(host: str, p: Piece) -> ImportedRun:
        run = runs.get((host, p.step))
        if run is None:
            run = runs[(host, p.step)] = ImportedRun(host, p.step, source, p.line)
        return run

    prefixes = None if shape is None else LinePrefixes(shape, reference)
    for p in pieces:
        if prefixes is None:
            run_of(p.host, p).lines.extend(p.lines)
            continue
        for line in p.lines:  # each host's raw text, as its own output was
            host, _t, rest = prefixes.split(line)
            if host is not None:
                run_of(host, p).lines.append(rest)
            elif p.host:
                run_of(p.host, p).lines.append(line)
    given_by_piece = [0] * len(pieces)
    for cls in classes:
        _parse_stream(cls, shape, pieces, run_of, source=source, given_by_piece=given_by_piece,
                      reference=reference)
    for i, p in enumerate(pieces):
        own = runs.get((p.host, p.step))
        if given_by_piece[i] or (own is not None and own.samples):
            continue
        if not p.line:  # a whole file
            raise _nothing_found(source, among)
        raise InputError(f"{source}:{p.line}", f"no {_named(among)} output found for host "
                         f"{p.host!r}, step {p.step!r}", "check the map's markers" +
                         ("" if among else ", or name the tool with --tool"))
    return [run for run in runs.values() if run.samples]


def _named(among: list[type[Parser]] | None) -> str:
    """What --tool named (``iostat``, the parser ``fio-json``), or ``tool``."""
    if not among:
        return "tool"
    if len(among) == 1:
        return among[0].name  # a parser named: fio-json
    return " or ".join(dict.fromkeys(cls.tool for cls in among))


def _nothing_found(source: str, among: list[type[Parser]] | None) -> InputError:
    if among:  # --tool named it: the file is not its output
        return InputError(source, f"no {_named(among)} output was found in it",
                          "check that the file holds that tool's output (benchtui parse "
                          "--list shows what each parser reads)")
    return InputError(source, "no known tool's output found in it",
                      "name the tool with --tool (benchtui parse --list shows them)")


def _head(pieces: Sequence[Piece], size: int) -> str:
    """The first ``size`` characters of the pieces' text, their lines joined (the whole text
    is not made: an import of 10^5 steps would hold its input once more for it)."""
    lines: list[str] = []
    n = 0
    for p in pieces:
        for line in p.lines:
            if n > size:
                return "\n".join(lines)[:size]
            lines.append(line)
            n += len(line) + 1
    return "\n".join(lines)[:size]


def _parse_stream(cls: type[Parser], shape: PrefixShape | None, pieces: Sequence[Piece],
                  run_of: Callable[[str, Piece], ImportedRun], *, source: str,
                  given_by_piece: list[int], reference: float | None) -> None:
    # Lines without a host prefix go to one parser whatever the piece's host (as a file's
    # text is one stream); its samples get the piece's host after (HostStreams' host "").
    streams = HostStreams([cls], shape, host="", source=source, reference=reference)
    given: list[tuple[int, Sample]] = []  # (piece index, sample) in the order given
    for i, p in enumerate(pieces):
        # the piece's lines follow its marker line
        given.extend((i, s) for s in streams.feed_text("\n".join(p.lines), p.line + 1))
    given.extend((len(pieces) - 1, s) for s in streams.finish())
    # A host's stream tells its runs apart: a run's samples go where it began.
    first_piece: dict[tuple[str, str | None], int] = {}
    labels: dict[str, list[str | None]] = {}
    for i, s in given:
        key = (s.host, s.labels.get("run"))
        if key not in first_piece:
            first_piece[key] = i
            labels.setdefault(s.host, []).append(key[1])
    ids: dict[tuple[str, str | None], RunId] = {}  # (one tuple a run, not one a sample)
    for i, s in given:
        key = (s.host, s.labels.get("run"))
        by_run = len(labels[s.host]) > 1
        at = first_piece[key] if by_run else i
        piece = pieces[at]
        run = run_of(s.host or piece.host, piece)
        given_by_piece[at] += 1
        if cls.tool not in run.tools:
            run.tools.append(cls.tool)
        run.first_run.setdefault((source, cls.name), labels[s.host][0])
        s.host = run.host
        run.samples.append(s)
        rid = ids.get(key)
        if rid is None:
            rid = ids[key] = (source, cls.name, key[1])
        run.runs.append(rid)
    starts = [p.line for p in pieces]
    for parser in streams.parsers:
        for w in parser.warnings:
            piece = pieces[max(bisect_right(starts, w.line) - 1, 0)]
            run_of(parser.host or piece.host, piece).warnings.append(w)


def finish_run(run: ImportedRun) -> None:
    """Label the samples with their step, as the engine does, and number the runs of each
    tool within this (host, step) from the first: the first keeps the label its stream gave
    its first run (fio: none), the k-th is ``run="k"``."""
    ranks: dict[RunId, int] = {}
    per_tool: dict[str, int] = {}
    for s, rid in zip(run.samples, run.runs, strict=True):
        rank = ranks.get(rid)
        if rank is None:
            rank = ranks[rid] = per_tool.get(rid[1], 0) + 1
            per_tool[rid[1]] = rank
        label = run.first_run[(rid[0], rid[1])] if rank == 1 else str(rank)
        labels = {k: v for k, v in s.labels.items() if k != "run"}
        if label is not None:
            labels["run"] = label
        labels["step"] = run.step
        s.labels = labels


def merge_runs(runs: Sequence[ImportedRun]) -> list[ImportedRun]:
    """Runs of the same (host, step) from several files made one, in order."""
    merged: dict[tuple[str, str], ImportedRun] = {}
    for r in runs:
        into = merged.get((r.host, r.step))
        if into is None:
            merged[(r.host, r.step)] = r
            continue
        into.lines.extend(r.lines)
        into.samples.extend(r.samples)
        into.runs.extend(r.runs)
        into.warnings.extend(r.warnings)
        into.tools.extend(t for t in r.tools if t not in into.tools)
        into.first_run.update(r.first_run)
    return list(merged.values())
