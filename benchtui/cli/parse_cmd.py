"""``benchtui parse``: saved tool output in, samples out."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator

from benchtui import gc_policy
from benchtui.errors import InputError, UsageError
from benchtui.export.formats import writer_for
from benchtui.model.format import plural
from benchtui.parsers import registry
from benchtui.parsers._flattened import MIN_CHARS, restore_line, restore_line_breaks
from benchtui.parsers._host_streams import HostStreams
from benchtui.parsers._prefixes import LinePrefixes, PrefixShape
from benchtui.parsers.base import Parser, ParseWarning, decode_output
from benchtui.session.inputs import input_error, is_stream, read_input

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import BinaryIO

    from benchtui.export.formats import SampleWriter

#: Warnings printed per input before they are only counted.
MAX_WARNINGS_SHOWN = 20
#: Bytes read from stdin before choosing parsers when nothing is recognised yet.
STDIN_DETECT_BYTES = 256 * 1024
#: Bytes of a stream read at a time for a parser that takes bytes.
STREAM_CHUNK_BYTES = 1 << 20
#: Characters of a saved capture given to a text parser at a time.
TEXT_BLOCK_CHARS = 1 << 20


class _Outcome:
    """What parsing one input gave (a plain class: a dataclass costs ~2.4 M instructions to
    create at import, at every ``benchtui parse``)."""

    __slots__ = ("samples", "unknown_lines", "warnings")

    def __init__(self) -> None:
        self.samples = 0
        self.warnings: list[ParseWarning] = []
        self.unknown_lines = 0


def text_blocks(text: str, size: int = TEXT_BLOCK_CHARS) -> Iterator[str]:
    """``text`` in consecutive blocks of about ``size`` characters, each ending at a line end
    (the last one at the end of the text): what ``Parser.feed_text`` takes."""
    pos, end = 0, len(text)
    while pos < end:
        cut = text.find("\n", pos + size)
        if cut < 0:
            yield text[pos:] if pos else text
            return
        yield text[pos:cut]
        pos = cut + 1


def run_parse(args: argparse.Namespace) -> int:
    if args.list:
        parsers = sorted(registry.all_parsers().items())
        width = max(len(name) for name, _ in parsers)
        for name, cls in parsers:
            print(f"{name:{width}} tool={cls.tool:12} {cls.description}")
        return 0
    if not args.files:
        raise UsageError("parse needs a FILE to read (or - for standard input)")
    among = registry.candidates(args.tool) if args.tool else None
    writer = writer_for(args.format, sys.stdout, histograms=args.histograms)
    total = 0
    for path in args.files:
        outcome = _parse_one(path, among, args.host, writer,
                             histograms=args.histograms and args.format == "jsonl")
        total += outcome.samples
        if not args.quiet:
            _report_warnings(path, outcome.warnings)
        if outcome.samples == 0:
            named = f"as {args.tool} output" if args.tool else "as any known tool's output"
            hint = "check that the file holds that tool's output (see --list)" if args.tool \
                else "check the file, or name the tool with --tool (see --list)"
            print(f"benchtui: nothing in {path} could be read {named}"
                  f" ({plural(outcome.unknown_lines, 'line')} skipped); {hint}",
                  file=sys.stderr)
    sys.stdout.flush()
    return 0 if total > 0 else 1


def _report_warnings(path: str, warnings: list[ParseWarning]) -> None:
    for w in warnings[:MAX_WARNINGS_SHOWN]:
        print(f"benchtui: warning: {w}", file=sys.stderr)
    if len(warnings) > MAX_WARNINGS_SHOWN:
        print(f"benchtui: warning: {path}: {len(warnings) - MAX_WARNINGS_SHOWN} more warnings "
              "not shown", file=sys.stderr)


def _open(path: str) -> BinaryIO:
    if path == "-":
        if sys.stdin is None:  # (<&-: closed before benchtui started)
            raise InputError("-", "standard input is closed", "give a file name, or pipe the "
                             "tool's output in")
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise input_error(path, exc) from None


def _make(classes: list[type[Parser]], host: str, source: str,
          histograms: bool) -> list[Parser]:
    parsers = [cls(host=host, source=source) for cls in classes]
    for p in parsers:
        p.histograms = histograms
    return parsers


def _parse_one(path: str, among: list[type[Parser]] | None, host: str,
               writer: SampleWriter, *, histograms: bool) -> _Outcome:
    if is_stream(path):  # stdin, or a pipe such as <(fio ...): parsed as it comes
        stream = _open(path)
        try:
            return _parse_stream(stream, among, host, writer, histograms=histograms,
                                 source="<stdin>" if path == "-" else path)
        finally:
            if path != "-":
                stream.close()
    data = read_input(path, hint="benchtui parse - < FILE reads it as a stream, at any size")
    # Only the head is decoded, for detection; a parser that takes bytes (fio-json) gets them
    # as read, so a 250 MB capture is not copied into a str it does not need. A report
    # flattened onto one line (seed 001) is put back on its lines for the text parsers.
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
    text = restore_line_breaks(decode_output(data)) if utf16 else None
    head = restore_line_breaks(text[: registry.DETECT_HEAD_BYTES] if text is not None
                               else decode_output(data[: registry.DETECT_HEAD_BYTES]))
    shape, classes = registry.choose_stream(head, among)
    if shape is not None:  # pdsh's host: prefixes, a logger's stamps
        if text is None:
            text = restore_line_breaks(decode_output(data))
        return _parse_prefixed(text, classes, shape, host=host, path=path, writer=writer,
                               histograms=histograms, reference=_mtime(path))
    parsers = _make(classes, host, path, histograms)
    outcome = _Outcome()
    with gc_policy.paused():  # (a capture's parse makes no reference cycles)
        for p in parsers:
            if p.takes_bytes and not utf16:
                outcome.samples += writer.write(p.feed_bytes(data))
            else:
                if text is None:
                    text = restore_line_breaks(decode_output(data))
                # In blocks of whole lines: the samples of one block are written and freed
                # before the next is parsed (memory stays flat however long the capture).
                for block in text_blocks(text):
                    outcome.samples += writer.write(p.feed_text(block))
            outcome.samples += writer.write(p.finish())
    # Lines are counted only for the "nothing could be read" message.
    lines = data.count(b"\n") + 1 if outcome.samples == 0 else 0
    _collect(outcome, parsers, lines)
    return outcome


def _mtime(path: str) -> float:
    """When the file was last written: the year of its syslog stamps (which print none)."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return time.time()


def _parse_prefixed(text: str, classes: list[type[Parser]], shape: PrefixShape, *, host: str,
                    path: str, writer: SampleWriter, histograms: bool,
                    reference: float) -> _Outcome:
    """A saved capture whose lines carry prefixes: each host's lines to its own parsers."""
    streams = HostStreams(classes, shape, host=host, source=path, histograms=histograms,
                          reference=reference)
    outcome = _Outcome()
    with gc_policy.paused():
        for block in text_blocks(text):
            outcome.samples += writer.write(streams.feed_text(block))
        outcome.samples += writer.write(streams.finish())
    outcome.warnings = streams.warnings
    outcome.unknown_lines = streams.unknown_lines if streams.parsers else text.count("\n") + 1
    return outcome


def _parse_stream(stream: BinaryIO, among: list[type[Parser]] | None, host: str,
                  writer: SampleWriter, *, histograms: bool, source: str) -> _Outcome:
    """stdin (or a pipe): buffer until the tool is recognised, then parse and print as it
    comes (line by line, or chunk by chunk for a parser that takes bytes), so that
    ``fio ... | benchtui parse -`` shows samples as fio prints them (with
    ``pdsh ... | benchtui parse -``, each host's under its name)."""
    buffered: list[bytes] = []
    size = 0
    flattened = False  # a line long enough to be a flattened report was read
    single = among is not None and len(among) == 1
    classes: list[type[Parser]] = []
    shape: PrefixShape | None = None
    while not classes:
        line = stream.readline()
        if line:
            buffered.append(line)
            size += len(line)
            flattened = flattened or len(line) >= MIN_CHARS
        head = decode_output(b"".join(buffered))
        if flattened:
            head = restore_line_breaks(head)
        if not line or size >= STDIN_DETECT_BYTES:
            shape, classes = registry.choose_stream(head, among)
            break
        shape, found = registry.choose_stream(head, among)
        if single and len(buffered) >= _PREFIX_LINES:
            classes = found  # --tool: the prefixes are known after a few lines
        elif found and not single:
            best = registry.scores(_shape_head(head, shape), among)[0][0]
            if best >= 90:
                classes = found
    streams = HostStreams(classes, shape, host=host, source=source, histograms=histograms,
                          reference=time.time())
    outcome = _Outcome()
    lines = 0

    def feed(raw: bytes) -> None:
        nonlocal lines
        lines += 1
        text = decode_output(raw)
        if len(text) >= MIN_CHARS:  # a flattened report is parsed as the lines it was
            line = text.rstrip("\n")
            restored = restore_line(line)
            if restored is not line:
                outcome.samples += writer.write(streams.feed_text(restored))
                return
        outcome.samples += writer.write(streams.feed(text))

    if streams.takes_bytes:
        # (fio-json) raw chunks as they come: documents are found on the bytes, not line by line
        chunk = b"".join(buffered) or _read_some(stream)
        while chunk:
            outcome.samples += writer.write(streams.feed_bytes(chunk))
            sys.stdout.flush()
            chunk = _read_some(stream)
    else:
        for raw in buffered:
            feed(raw)
        if classes:
            for raw in iter(stream.readline, b""):
                feed(raw)
                sys.stdout.flush()
    outcome.samples += writer.write(streams.finish())
    outcome.warnings = streams.warnings
    outcome.unknown_lines = streams.unknown_lines if streams.parsers else lines
    return outcome


def _read_some(stream: BinaryIO) -> bytes:
    """What the stream has now (at least a byte, at most STREAM_CHUNK_BYTES), b"" at its end."""
    read1 = getattr(stream, "read1", None)
    return read1(STREAM_CHUNK_BYTES) if read1 is not None else stream.read(STREAM_CHUNK_BYTES)


#: Lines of a stream read before its prefixes are decided when --tool names its parser.
_PREFIX_LINES = 8


def _shape_head(head: str, shape: PrefixShape | None) -> str:
    """``head`` as its parsers read it: without its line prefixes."""
    return head if shape is None else LinePrefixes(shape).strip_head(head)


def _collect(outcome: _Outcome, parsers: list[Parser], lines: int) -> None:
    for p in parsers:
        outcome.warnings.extend(p.warnings)
    outcome.unknown_lines = min((p.unknown_lines for p in parsers), default=lines)
