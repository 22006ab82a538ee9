"""``benchtui import``: saved tool output made into a session file, read by ``report``,
``replay``, ``dump`` and ``info`` like a recorded one (docs/import.md).

The outputs are cut into (host, step) pieces (by a map, ``import_map.py``, or one piece per
file named by ``--host``/``--step``), parsed (``import_parse.py``), and written through
``SessionWriter`` with the events a live session has: hosts up, ``session_start``, per step
``step_start``, per host ``run_start``, the samples (host and ``step`` label set as the engine
sets them), the raw text as output lines, ``run_end``, ``step_end``, and ``session_end``.

There is no live timing, so every step gets a synthetic time slot (``import_timeline.py``).

An import holds no file whole (docs/import.md, "Memory"): each file is read a block at a time
(``import_text.py``; a file a map cuts is read twice, once to find its pieces), its pieces
are parsed as they are read, and what each run gets is kept compact (``import_store.py``)
until its step is written.

The file is written under a temporary name next to the target and linked to its name at the
end, so a failure leaves nothing half-written, and an existing file is never overwritten.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from benchtui import __version__
from benchtui.errors import InputError, RecordingError, UsageError
from benchtui.model.events import Event, OutputLines
from benchtui.model.fio_buckets import FIO_PLAT_BITS
from benchtui.model.format import CONTROL, escape_control
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.session.compare import FLEET
from benchtui.session.figure_track import Digest, FigureRecorder
from benchtui.session.import_map import (
    MATCH_SECONDS,
    ImportMap,
    MatchTimeout,
    Piece,
    PieceSplitter,
    control_error,
)
from benchtui.session.import_parse import ImportedRun, Streams, parse_file
from benchtui.session.import_text import TextFile
from benchtui.session.import_timeline import Timeline
from benchtui.store.recording import IMPORTED, SCHEMA_VERSION, SessionMeta, SessionWriter
from benchtui.transport import new_session_id

#: An imported session's segments end by size (``SEGMENT_RAW_BYTES``) rather than by time.
IMPORT_SEGMENT_SECONDS: Final = 600.0
#: Records of this many seconds go in one DATA frame.
FRAME_SECONDS: Final = 1.0
#: Records a frame holds at least (the last one excepted).
FRAME_RECORDS: Final = 256
#: Characters of raw text after which a frame is written whatever its records.
FRAME_TEXT: Final = 4 << 20


@dataclass(frozen=True, slots=True)
class ImportSummary:
    path: str
    hosts: list[str]
    steps: list[str]
    samples: int
    warnings: int
    seconds: float


def import_outputs(paths: Sequence[str], output: str, *, import_map: ImportMap | None = None,
                   hosts: Sequence[str] = (), steps: Sequence[str] = (),
                   tool: str | None = None, name: str | None = None,
                   start: float | None = None, figures: Digest | None = None
                   ) -> ImportSummary:
    """Write the session file ``output`` from the tool outputs in ``paths``: cut by
    ``import_map``, or each file the output of ``hosts``/``steps`` (one for all files, or
    one per file). ``start``: the session's start time (default: now). ``figures``: the
    digest whose figure track to write with it, as the recorder does
    (``session.figure_track``)."""
    if not paths:
        raise UsageError("import needs an OUTPUT file to read")
    _refuse_existing(output)
    name = name or Path(paths[0]).stem
    if CONTROL.search(name):
        raise UsageError(f"the session name '{escape_control(name)}' holds control "
                         "characters; give one without them (--name)")
    among = registry.candidates(tool) if tool else None
    named = _plain_names(paths, hosts, steps) if import_map is None else []
    hint = "cut it into parts (split -l) and import the part you need"
    texts = [TextFile(path, hint=hint) for path in paths]  # (each one checked before any is read)
    runs: dict[tuple[str, str], ImportedRun] = {}
    streams = Streams()
    for i, text in enumerate(texts):
        pieces = [Piece(*named[i], 0)] if import_map is None else _split(text, import_map)
        for run in parse_file(text, pieces, streams=streams, among=among,
                              check_labels=_label_check(text)):
            if not run.host:
                raise UsageError(_NEED_HOST)
            have = runs.get((run.host, run.step))
            if have is None:
                runs[(run.host, run.step)] = run
            else:  # the same host and step in another file: one run
                have.merge(run)
    _refuse_reserved_hosts(runs.values())
    t0 = float(int(time.time() if start is None else start))
    timeline = Timeline(t0, list(runs.values()), streams)
    del runs  # (the timeline's now: it drops each step's once its records are made)
    session_id = new_session_id()
    meta = SessionMeta(
        SCHEMA_VERSION, name, session_id, "", None, t0, None, hosts=timeline.hosts,
        writer=__version__, histogram_bits=FIO_PLAT_BITS, source=IMPORTED,
        imported_from=[text.described for text in texts],
        import_map=None if import_map is None else {
            "path": import_map.path, "bytes": import_map.size, "sha256": import_map.sha256,
            "text": import_map.text},
        figures=None if figures is None else figures.name)
    files = ", ".join(os.path.basename(p) for p in paths)
    _write(output, meta, timeline, f"session {name} ({session_id}): imported from {files}",
           figures)
    return ImportSummary(output, timeline.hosts, timeline.steps, timeline.samples,
                         timeline.warnings, timeline.end - t0)


def _split(text: TextFile, imap: ImportMap) -> list[Piece]:
    """The pieces of ``text`` (a first reading of it), its map's expressions bounded to
    ``MATCH_SECONDS`` over the whole file (the timer runs only while they do)."""
    splitter = PieceSplitter(imap, text.path, keep_lines=False)
    left = MATCH_SECONDS
    for number, lines, _flagged in text.blocks():
        started = time.monotonic()
        with time_bound(max(left, 0.001)):
            splitter.feed(number, lines)
        left -= time.monotonic() - started
    return splitter.finish()


def _label_check(text: TextFile) -> Callable[[Sample], None]:
    """Refuses, with its line, a name a tool printed (a fio job's) that holds control
    characters: shown raw, an escape sequence would reach the terminal of whoever reads it.
    (Called only on samples parsed from lines that hold such characters.)"""
    def check(sample: Sample) -> None:
        for key, value in sample.labels.items():
            if CONTROL.search(value):
                number = next((n for n, line in text.control_lines if value in line), None)
                where = text.path if number is None else f"{text.path}:{number}"
                raise control_error(where, f"{key} name", value)
    return check


_NEED_HOST = ("give --host and --step for plain tool output (or --map for a report that holds "
              "many hosts and steps); --host may be left out where every line names its host "
              "(pdsh's and clush's 'host: ' prefixes)")


def _plain_names(paths: Sequence[str], hosts: Sequence[str],
                 steps: Sequence[str]) -> list[tuple[str, str]]:
    """(host, step) of each file of plain output; the host is "" without --host (the lines
    must then name theirs: pdsh's prefixes)."""
    if not steps:
        raise UsageError(_NEED_HOST)
    for option, values in (("--host", hosts), ("--step", steps)):
        if not values:
            continue
        if len(values) not in (1, len(paths)):
            raise UsageError(f"give {option} once for all files or once per file "
                             f"({len(paths)}), not {len(values)} times")
        if not all(v.strip() for v in values):
            raise UsageError(f"{option} needs a name")
        for v in values:
            if CONTROL.search(v):
                raise UsageError(f"{option} '{escape_control(v)}' holds "
                                 "control characters; give a name without them")
    return [(hosts[i if len(hosts) > 1 else 0].strip() if hosts else "",
             steps[i if len(steps) > 1 else 0].strip()) for i in range(len(paths))]


@contextlib.contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raise ``MatchTimeout`` into the code of the block once it has run ``seconds`` (a
    regular expression that backtracks without end: Python's ``re`` checks for signals while
    it matches). Only the main thread has signals; elsewhere the block runs unbounded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise MatchTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:  # someone's timer (pytest-timeout's, say) was running: it goes on
            signal.setitimer(signal.ITIMER_REAL,
                             max(outer - (time.monotonic() - started), 0.001))


def _refuse_reserved_hosts(runs: Iterable[ImportedRun]) -> None:
    """``(fleet)`` names the fleet's figures in the report and the history: a host by that
    name would be merged with them."""
    if any(r.host == FLEET for r in runs):
        raise UsageError(f"{FLEET!r} cannot be a host name: benchtui keeps it for the "
                         "fleet's figures; give the host another name (--host, or the map's "
                         "host rule)")


def _refuse_existing(path: str) -> None:
    if os.path.isdir(path):
        raise InputError(path, "is a directory; give a file name for the session, e.g. "
                         f"{os.path.join(path, 'imported.btr')}")
    if os.path.lexists(path):
        raise InputError(path, "already exists; give another file name (a session file is "
                         "never overwritten)")


def _write(path: str, meta: SessionMeta, timeline: Timeline, started: str,
           figures: Digest | None = None) -> None:
    """The session file at ``path`` with the records of ``timeline`` (``started``: the
    session start's message), whole or not at all (with the figure track of ``figures``,
    when given)."""
    folder, base = os.path.split(os.path.abspath(path))
    part = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.part")
    try:
        # segments by size, not by the made-up clock: an import of 10^5 steps spreads
        # over weeks of synthetic time, and a segment a minute (each fsynced, each with its
        # own definitions) made a file ten times its input
        writer = SessionWriter(part, meta, segment_seconds=IMPORT_SEGMENT_SECONDS)
    except RecordingError as exc:
        raise InputError(path, exc.reason.replace("cannot create it", "cannot write it")) \
            from None
    track = None if figures is None else FigureRecorder(
        figures, writer.add_figures, on_error=lambda: writer.set_meta(figures=None))
    try:
        frame_end: float | None = None
        in_frame = text = 0
        for t, record in timeline.records(started):
            # a frame a second of made-up time, but at least FRAME_RECORDS records to a
            # frame (a step of a few records each is not a compressed frame of its own), and
            # at most FRAME_TEXT of raw text (a long log's is written in chunks at its end)
            if (frame_end is not None and t >= frame_end and in_frame >= FRAME_RECORDS) \
                    or text >= FRAME_TEXT:
                writer.write_frame()
                frame_end = None
                in_frame = text = 0
            in_frame += 1
            if isinstance(record, OutputLines):
                text += sum(map(len, record.lines))
            writer.add_record(t, record)
            if track is not None:  # as the recorder's sinks: the record, then its figures
                if isinstance(record, Event):
                    track.on_event(record)
                elif isinstance(record, list):
                    track.on_samples(record, t)
            if frame_end is None:
                frame_end = t + FRAME_SECONDS
        writer.close(ended=timeline.end)
        _publish(part, path)
    except RecordingError as exc:
        raise InputError(path, exc.reason) from None
    finally:
        if not writer.closed:
            writer.abandon()
        with contextlib.suppress(OSError):
            os.unlink(part)


def _publish(part: str, path: str) -> None:
    """Give the finished file its name, never replacing a file that appeared meanwhile."""
    try:
        os.link(part, path)
    except FileExistsError:
        _refuse_existing(path)
        raise
    except OSError:  # a file system without hard links: a rename, after a last look
        _refuse_existing(path)
        os.replace(part, path)
