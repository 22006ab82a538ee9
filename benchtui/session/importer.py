"""``benchtui import``: saved tool output made into a session file, read by ``report``,
``replay``, ``dump`` and ``info`` like a recorded one (docs/import.md).

The outputs are cut into (host, step) pieces (by a map, ``import_map.py``, or one piece per
file named by ``--host``/``--step``), parsed (``import_parse.py``), and written through
``SessionWriter`` with the events a live session has: hosts up, ``session_start``, per step
``step_start``, per host ``run_start``, the samples (host and ``step`` label set as the engine
sets them), the raw text as output lines, ``run_end``, ``step_end``, and ``session_end``.

There is no live timing, so every step gets a synthetic time slot (``TimeSlots``): the steps
follow one another in the order the outputs first name them, each starting ``STEP_GAP``
after the whole second at or after the previous one's end, the first at the import's start
time (a whole second); each runs on all its hosts at once, and lasts as long as
its longest run. A run lasts as long as its output says (the largest ``elapsed`` of its
samples: fio's ``run=60039msec``, the last interval's second; or the span of the clock times
the tool printed), else ``DEFAULT_SPAN``. A sample is placed at its slot's start plus its
``elapsed``, or plus its clock time's offset from the run's first one; one with neither (an
end-of-run figure with no run time) at its run's end. The raw text and ``run_end`` come at the
run's end, ``step_end`` at the slot's end.

The file is written under a temporary name next to the target and linked to its name at the
end, so a failure leaves nothing half-written, and an existing file is never overwritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import secrets
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from benchtui import __version__
from benchtui.errors import InputError, RecordingError, UsageError
from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.fio_buckets import FIO_PLAT_BITS
from benchtui.model.format import CONTROL, escape_control, plural
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers._flattened import restore_line_breaks
from benchtui.parsers.base import decode_output
from benchtui.plan.commands import STEP
from benchtui.session.compare import FLEET
from benchtui.session.figure_track import Digest, FigureRecorder
from benchtui.session.import_map import (
    MATCH_SECONDS,
    ImportMap,
    MatchTimeout,
    Piece,
    control_error,
    split_pieces,
)
from benchtui.session.import_parse import (
    ImportedRun,
    finish_run,
    merge_runs,
    parse_file_pieces,
)
from benchtui.session.inputs import read_input
from benchtui.store.recording import IMPORTED, SCHEMA_VERSION, Record, SessionMeta, SessionWriter
from benchtui.store.recording.outputfilter import JsonOutputFilter
from benchtui.transport import new_session_id

#: An imported session's segments end by size (``SEGMENT_RAW_BYTES``) rather than by time.
IMPORT_SEGMENT_SECONDS: Final = 600.0
#: How long a run lasts when its output does not say (seconds).
DEFAULT_SPAN: Final = 10.0
#: Seconds between one step's end and the next one's start.
STEP_GAP: Final = 1.0
#: Records of this many seconds go in one DATA frame.
FRAME_SECONDS: Final = 1.0
#: Records a frame holds at least (the last one excepted).
FRAME_RECORDS: Final = 256


@dataclass(frozen=True, slots=True)
class ImportSummary:
    path: str
    hosts: list[str]
    steps: list[str]
    samples: int
    warnings: int
    seconds: float


@dataclass(slots=True)
class _Source:
    path: str
    text: str
    #: path, size and sha256 of its bytes (META's ``imported_from``)
    described: dict[str, object]
    #: when the file was last written (the year of syslog stamps, which print none)
    mtime: float | None = None


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
    described: list[dict[str, object]] = []
    runs: list[ImportedRun] = []
    for i, path in enumerate(paths):
        # one file's bytes and text at a time: what stays is its runs (their lines and
        # samples), which the timeline lets go of step by step as they are written
        src = _read(path)
        described.append(src.described)
        lines = src.text.split("\n")
        if import_map is None:
            pieces = [Piece(*named[i], 0, lines)]
        else:
            with time_bound(MATCH_SECONDS):
                pieces = split_pieces(lines, import_map, src.path)
        found = parse_file_pieces(pieces, src.path, among, src.mtime)
        if any(not run.host for run in found):
            raise UsageError(_NEED_HOST)
        _refuse_control_labels(found, src)
        runs.extend(found)
        del src, lines, pieces, found
    runs = merge_runs(runs)
    _refuse_reserved_hosts(runs)
    for run in runs:
        finish_run(run)
    samples = sum(len(r.samples) for r in runs)
    warnings = sum(len(r.warnings) for r in runs)
    t0 = float(int(time.time() if start is None else start))
    timeline = _Timeline(t0, runs)
    del runs  # (the timeline's now: it drops each step's once its records are made)
    session_id = new_session_id()
    meta = SessionMeta(
        SCHEMA_VERSION, name, session_id, "", None, t0, None, hosts=timeline.hosts,
        writer=__version__, histogram_bits=FIO_PLAT_BITS, source=IMPORTED,
        imported_from=described,
        import_map=None if import_map is None else {
            "path": import_map.path, "bytes": import_map.size, "sha256": import_map.sha256,
            "text": import_map.text},
        figures=None if figures is None else figures.name)
    files = ", ".join(os.path.basename(p) for p in paths)
    _write(output, meta, timeline, f"session {name} ({session_id}): imported from {files}",
           figures)
    return ImportSummary(output, timeline.hosts, timeline.steps, samples, warnings,
                         timeline.end - t0)


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


#: Control characters other than tab and line ends: a name can only hold them if the text does.
_STRAY_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


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


def _refuse_control_labels(runs: list[ImportedRun], src: _Source) -> None:
    """An ``InputError`` with the line when a name a tool printed (a fio job's) holds control
    characters: shown raw, an escape sequence would reach the terminal of whoever reads it."""
    if not _STRAY_CONTROL.search(src.text):
        return  # the common case: a scan of the text, not of every sample's labels
    for run in runs:
        for sample in run.samples:
            for key, value in sample.labels.items():
                if CONTROL.search(value):
                    at = src.text.find(value)
                    where = f"{src.path}:{src.text.count(chr(10), 0, at) + 1}" if at >= 0 \
                        else src.path
                    raise control_error(where, f"{key} name", value)


def _refuse_reserved_hosts(runs: list[ImportedRun]) -> None:
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


def _read(path: str) -> _Source:
    data = read_input(path, hint="cut it into parts (split -l) and import the part you need")
    described: dict[str, object] = {"path": path, "bytes": len(data),
                                    "sha256": hashlib.sha256(data).hexdigest()}
    try:
        mtime: float | None = os.stat(path).st_mtime
    except OSError:
        mtime = None
    # A report whose line breaks were lost (seed 001) is put back on fio's lines first.
    return _Source(path, restore_line_breaks(decode_output(data)), described, mtime)


class _Timeline:
    """The synthetic times of an import (the module's doc says how they are chosen) and the
    records a live session would have had at them, made step by step (``records``): an
    import of 10^5 steps never holds them all."""

    def __init__(self, t0: float, runs: list[ImportedRun]) -> None:
        self.t0 = t0
        #: the time of the last record, once ``records`` has been read to its end
        self.end = t0
        # dicts, not list membership: 10^5 steps must not cost 10^10 comparisons
        self.hosts = list(dict.fromkeys(r.host for r in runs))
        self._by_step: dict[str, list[ImportedRun]] = {}
        for r in runs:
            self._by_step.setdefault(r.step, []).append(r)
        self.steps = list(self._by_step)
        self._items: list[tuple[float, int, Record]] = []

    def _add(self, t: float, record: Record) -> None:
        self._items.append((t, len(self._items), record))

    def _take(self) -> list[tuple[float, Record]]:
        """The records made since the last call, in time order (at one time, in the order
        they were made)."""
        self._items.sort(key=lambda item: (item[0], item[1]))
        out = [(t, r) for t, _, r in self._items]
        self._items = []
        return out

    def _event(self, t: float, kind: str, message: str, *, host: str | None = None,
               step: str | None = None, **data: object) -> None:
        self._add(t, Event(t, kind, message, ev.INFO, host, step, data))

    def records(self, started: str) -> Iterator[tuple[float, Record]]:
        """Every record, in time order (at one time, in the order a live session has),
        made a step at a time: a step's records all fall in its slot, which ends before the
        next one starts, so each step's are sorted alone. Read once: each step's runs are
        let go of once its records are made."""
        t = self.t0
        for host in self.hosts:
            self._event(t, ev.HOST_STATE, f"{host}: up (imported)", host=host, state="up")
        self._event(t, ev.SESSION_START, started, imported=True)
        self.end = t
        for index, step in enumerate(self.steps):
            self.end = self._step(index, step, t)
            t = math.ceil(self.end) + STEP_GAP  # the next step starts on a whole second
            yield from self._take()
        self._event(self.end, ev.SESSION_END, "done")
        yield from self._take()

    def _step(self, index: int, step: str, t0: float) -> float:
        """Records of one step starting at ``t0``; returns its end."""
        runs = self._by_step.pop(step)
        placed = [_place(r.samples) for r in runs]
        seconds = max(span for _, span in placed)
        tool = runs[0].tools[0]
        self._event(t0, ev.STEP_START, f"step {step} on {', '.join(r.host for r in runs)}",
                    step=step, hosts=[r.host for r in runs], tool=tool,
                    expected_seconds=seconds, index=index, repeat=1, repeats=1,
                    select="all", sweep=None, matrix={})
        json_lines = JsonOutputFilter()
        for run, (offsets, span) in zip(runs, placed, strict=True):
            host, tools = run.host, "+".join(run.tools)
            where = f"{run.source}:{run.line}" if run.line else run.source
            self._event(t0, ev.HOST_STATE, f"{host}: running", host=host, state="running")
            self._event(t0, ev.RUN_START, f"{host}: {tools} imported from {where}", host=host,
                        step=step, source=run.source, line=run.line)
            for w in run.warnings:
                self._add(t0, Event(t0, ev.PARSE_WARNING, str(w), ev.WARNING, host, step))
            out = json_lines(OutputLines(t0 + span, host, step, tools, STEP, tuple(run.lines)))
            if out is not None:
                self._add(out.t, out)
            self._samples(run.samples, offsets, t0)
            self._event(t0 + span, ev.RUN_END, f"{host}: {tools} imported, "
                        f"{plural(len(run.samples), 'sample')}", host=host, step=step,
                        status=0)
            self._event(t0 + span, ev.HOST_STATE, f"{host}: done", host=host, state="done")
        self._event(t0 + seconds, ev.STEP_END, f"step {step} done in {seconds:.1f} s "
                    "(imported)", step=step, seconds=seconds)
        return t0 + seconds

    def _samples(self, samples: list[Sample], offsets: list[float], t0: float) -> None:
        """The samples at their times, one record per time (a sink call's batch)."""
        batch: list[Sample] = []
        at = t0
        for s, offset in sorted(zip(samples, offsets, strict=True), key=lambda p: p[1]):
            if batch and t0 + offset != at:
                self._add(at, batch)
                batch = []
            at = s.t = t0 + offset
            batch.append(s)
        if batch:
            self._add(at, batch)


def _place(samples: list[Sample]) -> tuple[list[float], float]:
    """Each sample's offset in its run's slot, and the run's length (seconds)."""
    clocked = [s.t for s in samples if s.t is not None and s.elapsed is None]
    first = min(clocked, default=0.0)
    offsets: list[float | None] = [
        max(s.elapsed, 0.0) if s.elapsed is not None else
        s.t - first if s.t is not None else None for s in samples]
    span = max((o for o in offsets if o is not None), default=0.0) or DEFAULT_SPAN
    return [span if o is None else o for o in offsets], span


def _write(path: str, meta: SessionMeta, timeline: _Timeline, started: str,
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
        in_frame = 0
        for t, record in timeline.records(started):
            # a frame a second of made-up time, but at least FRAME_RECORDS records to a
            # frame: a step of a few records each is not a compressed frame of its own
            if frame_end is not None and t >= frame_end and in_frame >= FRAME_RECORDS:
                writer.write_frame()
                frame_end = None
                in_frame = 0
            in_frame += 1
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
