"""Writing a session file: ``SessionWriter`` (frames on disk) and ``Recorder`` (a live
session's sinks, flushed by a thread at least every second).

The file only ever grows. Records are encoded a second's worth at a time into a DATA frame:
the next piece of the open segment's zstd stream, flushed to a block boundary so that the
piece decodes with what came before it. A kill -9 therefore loses only what had not been
written yet (at most one flush interval); the page cache holds the rest, and ``fsync`` at each
segment's end and at close covers the machine going down too. docs/session-format.md has the
layout and the reasons.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Final, TypeVar

import orjson
import zstandard

from benchtui.errors import RecordingError
from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.store.recording import figframe, statsframe
from benchtui.store.recording import format as fmt
from benchtui.store.recording.blocks import STATS_SECONDS, BlockKeeper, Piece
from benchtui.store.recording.codec import FrameBuilder, SegmentEncoder, TimedRecord
from benchtui.store.recording.histcodec import HistogramEncoder
from benchtui.store.recording.model import Record, SessionMeta
from benchtui.store.recording.outputfilter import JsonOutputFilter
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.summaries import SummaryLog

#: A segment ends after this many seconds of records, or this many bytes of frame bodies.
SEGMENT_SECONDS: Final = 60.0
SEGMENT_RAW_BYTES: Final = 32 * 1024 * 1024
#: zstd level: 3 is zstd's default; higher levels gain ~2% here for 2-3x the CPU.
ZSTD_LEVEL: Final = 3
#: A segment that follows one whose frame bodies were smaller than this (a few hosts: the
#: reference session's single host makes ~125 KB a minute) is compressed with
#: ``SMALL_PARAMETERS``: ~5% smaller, at ~0.2 ms of CPU per KB (under 0.1% of a core for
#: such a segment). It ends once its bodies reach twice this, so that a fleet that grows
#: busy is back to ``ZSTD_LEVEL`` within a segment. docs/benchmarks/recording.md measures it.
SMALL_SEGMENT_BYTES: Final = 256 * 1024
#: zstd's strongest level with tables sized to such a segment (memory ~2.5 MB instead of
#: ~90 MB at the level's defaults; matches reach back 256 KiB, a whole small segment).
SMALL_PARAMETERS: Final = zstandard.ZstdCompressionParameters.from_level(
    19, window_log=18, hash_log=16, chain_log=17, write_checksum=False)
#: How often the recorder thread writes what arrived (seconds): a kill -9 loses at most this.
FLUSH_SECONDS: Final = 0.5


def meta_json(meta: SessionMeta) -> bytes:
    return orjson.dumps(asdict(meta), default=str, option=orjson.OPT_NON_STR_KEYS)


@dataclass(frozen=True, slots=True)
class SealedFrame:
    """A DATA frame encoded and compressed, to be written (``SessionWriter.write_sealed``)."""

    segment: SegmentStats
    piece: bytes
    raw_len: int
    t_first: float
    t_last: float
    last: bool  # the segment's last piece: its summary follows
    #: stats-block pieces to write with the segment's end (``blocks.py``)
    pieces: list[Piece] | None = None
    #: the segment's figure track, to write with its end (``figframe.py``)
    ticks: list[figframe.Tick] | None = None


class SessionWriter:
    """Appends records to a new session file. Not thread-safe: one caller at a time, with one
    exception (``Recorder``): the encoding side (``add_record``, ``seal_frame``) and the
    writing side (``write_sealed``, ``sync``) may each have their own caller, the frames being
    written in the order they were sealed."""

    def __init__(self, path: str, meta: SessionMeta, *, segment_seconds: float = SEGMENT_SECONDS,
                 level: int = ZSTD_LEVEL, stats_seconds: float = STATS_SECONDS) -> None:
        self.path = path
        self.meta = replace(meta, schema_version=fmt.SCHEMA_VERSION, ended=None,
                            hosts=list(meta.hosts), facts=dict(meta.facts),
                            stats_seconds=stats_seconds)
        self.segment_seconds = segment_seconds
        try:
            self._file = open(path, "xb", buffering=0)  # noqa: SIM115 (closed by close())
        except FileExistsError:
            raise RecordingError(path, "already exists; give another file name (a recording "
                                 "is never overwritten)", exit_code=2) from None
        except OSError as exc:
            raise RecordingError(path, f"cannot create it: {exc.strerror or exc}",
                                 exit_code=2) from None
        self._cctx = zstandard.ZstdCompressor(level=level, write_checksum=False)
        self._small_cctx = zstandard.ZstdCompressor(compression_params=SMALL_PARAMETERS)
        # the writing side's own (a compressor is for one thread at a time)
        self._stats_cctx = zstandard.ZstdCompressor(level=level, write_checksum=False)
        self._blocks = BlockKeeper(stats_seconds)
        # The encoding side: the open segment and the frame being built.
        self._seg: SegmentStats | None = None
        self._previous: SegmentStats | None = None  # the last segment sealed
        self._segments_started = 0
        self._histograms = HistogramEncoder()
        self._encoder = SegmentEncoder(self._histograms)
        self._frame: FrameBuilder | None = None
        self._frame_times = (math.inf, -math.inf)
        self._stream: zstandard.ZstdCompressionObj | None = None
        self._seg_raw = 0
        self._seg_limit = SEGMENT_RAW_BYTES  # the open segment's: smaller when compressed small
        self._ticks: list[figframe.Tick] = []  # the figure track since the last segment
        # The writing side.
        self._offset = 0
        self._summaries = SummaryLog(level)  # the segments written (compressed: summaries.py)
        self.closed = False
        self._closing = False
        self._write(fmt.file_header())
        self._write_meta()

    # --- writing ---------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        try:
            written = self._file.write(data)
            while written is not None and written < len(data):
                more = self._file.write(data[written:])
                written += more or 0
        except OSError as exc:
            raise RecordingError(self.path, f"cannot write: {exc.strerror or exc}") from None
        self._offset += len(data)

    def _write_meta(self) -> None:
        self._write(fmt.frame(fmt.META, meta_json(self.meta), t_first=self.meta.started,
                              t_last=self.meta.started))

    def set_meta(self, **changes: object) -> None:
        """Change metadata fields (name, plan_text, hosts, ...): a new META frame."""
        self.meta = replace(self.meta, **changes)  # type: ignore[arg-type]
        self._write_meta()

    def append(self, records: Sequence[TimedRecord]) -> None:
        """Write ``records`` (time, record), in the order they arrived, as one DATA frame."""
        if self.closed:
            raise RecordingError(self.path, "the recording is already closed")
        for t, r in records:
            self.add_record(t, r)
        self.write_frame()

    def write_frame(self) -> None:
        """Write the records added since the last frame as one DATA frame (none: nothing);
        fsync when a segment ended with it."""
        sealed = self.seal_frame()
        if sealed is not None and self.write_sealed(sealed):
            self.sync()

    # --- the encoding side -----------------------------------------------------------------

    def add_record(self, t: float, r: Record) -> None:
        """Encode one record (arrived at ``t``) into the frame being built."""
        if self.closed:
            raise RecordingError(self.path, "the recording is already closed")
        if isinstance(r, Event) and r.kind == ev.FACTS and r.host is not None:
            facts = r.data.get("facts")
            if isinstance(facts, dict):
                self.meta.facts[r.host] = facts
        if self._seg is None:
            self._start_segment()
        assert self._seg is not None and self._frame is not None
        try:
            sids = self._frame.add(t, r)
        except BaseException:  # a half-built frame is never written: drop it
            self._frame = FrameBuilder(self._encoder)
            self._frame_times = (math.inf, -math.inf)
            raise
        self._seg.add_record(t, r)
        blocks = self._blocks
        if sids is not None:
            blocks.add_samples(t, r, sids, self._encoder.defs)  # type: ignore[arg-type]
        elif isinstance(r, Event):
            blocks.event(r)
        blocks.saw(t)
        t_first, t_last = self._frame_times
        if t < t_first or t > t_last:
            self._frame_times = (min(t, t_first), max(t, t_last))

    def add_figures(self, t: float, host: str | None,
                    figures: Sequence[tuple[figframe.Key, float]]) -> None:
        """One tick of the figure track (``host`` None: the fleet's): the figures at ``t``,
        written with the end of the segment open then (or of the next one; at close, of the
        last one)."""
        if self.closed:
            raise RecordingError(self.path, "the recording is already closed")
        if figures:
            self._ticks.append((t, figframe.FLEET_HOST if host is None else host, figures))

    def seal_frame(self) -> SealedFrame | None:
        """The records added since the last frame, encoded and compressed (None: none); a
        segment that is long enough ends with it, and the next record starts a new one."""
        seg, frame, stream = self._seg, self._frame, self._stream
        if self.closed or seg is None or frame is None or stream is None or not len(frame):
            return None
        body = frame.body()
        self._frame = FrameBuilder(self._encoder)
        t_first, t_last = self._frame_times
        self._frame_times = (math.inf, -math.inf)
        self._seg_raw += len(body)
        assert seg.t0 is not None and seg.t1 is not None
        last = seg.t1 - seg.t0 >= self.segment_seconds or self._seg_raw >= self._seg_limit
        piece = stream.compress(body) + stream.flush(
            zstandard.COMPRESSOBJ_FLUSH_FINISH if last else zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        pieces, ticks = self._seal_segment(closing=self._closing) if last else (None, None)
        return SealedFrame(seg, piece, len(body), t_first, t_last, last, pieces, ticks)

    def seal_segment(self) -> SealedFrame | None:
        """End the open segment with an empty last piece (None: no segment is open). The
        frame being built must have been sealed first."""
        seg, stream = self._seg, self._stream
        if seg is None or stream is None:
            return None
        t = seg.t1 if seg.t1 is not None else time.time()
        piece = stream.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
        pieces, ticks = self._seal_segment(closing=self._closing)
        return SealedFrame(seg, piece, 0, t, t, last=True, pieces=pieces, ticks=ticks)

    def _start_segment(self) -> None:
        self._seg = SegmentStats.after(self._segments_started, self._previous)
        self._blocks.start_segment(self._segments_started)
        self._segments_started += 1
        self._encoder = SegmentEncoder(self._histograms)
        self._frame = FrameBuilder(self._encoder)
        # the previous segment's size says which compressor this one gets (the first: the
        # default; its size is not known yet)
        small = self._previous is not None and self._seg_raw < SMALL_SEGMENT_BYTES
        self._stream = (self._small_cctx if small else self._cctx).compressobj()
        self._seg_limit = 2 * SMALL_SEGMENT_BYTES if small else SEGMENT_RAW_BYTES
        self._seg_raw = 0

    def _seal_segment(self, *, closing: bool = False
                      ) -> tuple[list[Piece], list[figframe.Tick]]:
        """End the open segment on the encoding side: its block list, and the stats-block
        pieces and the figure track to write after it."""
        assert self._seg is not None
        self._seg.blocks, pieces = self._blocks.end_segment(closing=closing)
        self._previous, self._seg = self._seg, None
        self._stream = None
        self._frame = None
        ticks, self._ticks = self._ticks, []
        return pieces, ticks

    # --- the writing side ------------------------------------------------------------------

    def write_sealed(self, sealed: SealedFrame) -> bool:
        """Write a sealed frame (and the segment's summary after its last one); True when
        a segment ended (``sync`` makes it survive the machine crashing)."""
        seg = sealed.segment
        if not seg.frames:
            seg.offset = self._offset
        flags = fmt.ZSTD | (fmt.LAST if sealed.last else 0)
        self._write(fmt.frame(fmt.DATA, sealed.piece, flags=flags, segment=seg.number,
                              raw_len=sealed.raw_len, t_first=sealed.t_first,
                              t_last=sealed.t_last))
        seg.frames += 1
        seg.end = self._offset
        if sealed.last:  # (no record is added to a sealed segment: its summary is final)
            if sealed.pieces:
                self._write_pieces(seg, sealed.pieces)
            if sealed.ticks:
                self._write_ticks(seg, sealed.ticks)
            summary, raw_len = self._summaries.add(seg)
            self._write(fmt.frame(fmt.SEGMENT_END, summary, flags=fmt.ZSTD, segment=seg.number,
                                  raw_len=raw_len, t_first=seg.t0 or 0.0,
                                  t_last=seg.t1 or 0.0))
        return sealed.last

    def _write_pieces(self, seg: SegmentStats, pieces: list[Piece]) -> None:
        """A STATS frame with ``pieces``, listed in ``seg``'s summary."""
        raw = statsframe.encode(pieces)
        payload = self._stats_cctx.compress(raw)
        at = self._offset
        self._write(fmt.frame(fmt.STATS, payload, flags=fmt.ZSTD, segment=seg.number,
                              raw_len=len(raw),
                              t_first=min(p.info.tmin for p in pieces),
                              t_last=max(p.info.tmax for p in pieces)))
        seg.stats.append((at, [p.info for p in pieces]))

    def _write_ticks(self, seg: SegmentStats, ticks: list[figframe.Tick]) -> None:
        """A FIGS frame with the segment's figure track, listed in ``seg``'s summary."""
        raw = figframe.encode(ticks)
        payload = self._stats_cctx.compress(raw)
        at = self._offset
        t_first, t_last = min(t[0] for t in ticks), max(t[0] for t in ticks)
        self._write(fmt.frame(fmt.FIGS, payload, flags=fmt.ZSTD, segment=seg.number,
                              raw_len=len(raw),
                              t_first=t_first, t_last=t_last))
        seg.figures.append((at, t_first, t_last))

    def sync(self) -> None:
        """Make what was written survive a crash of the machine, not just of benchtui."""
        with contextlib.suppress(OSError):
            os.fsync(self._file.fileno())

    def close(self, ended: float | None = None) -> None:
        """End the open segment, write the index and the trailer, close. Idempotent."""
        if self.closed:
            return
        try:
            self._closing = True
            for sealed in (self.seal_frame(), self.seal_segment()):
                if sealed is not None:
                    self.write_sealed(sealed)
            last = self._summaries.last
            rest = self._blocks.take_pieces(closing=True)
            if rest and last is not None:  # no segment was open: with the last one's, in the index
                self._write_pieces(last, rest)
            ticks, self._ticks = self._ticks, []
            if ticks and last is not None:  # (the same)
                self._write_ticks(last, ticks)
            self.meta.ended = time.time() if ended is None else ended
            payload, raw_len = self._summaries.index(self.meta)
            at = self._offset
            data = fmt.frame(fmt.INDEX, payload, flags=fmt.ZSTD, raw_len=raw_len,
                             t_first=self.meta.started,
                             t_last=self.meta.ended)
            self._write(data)
            self._write(fmt.trailer(at, len(data)))
            self.sync()
        finally:
            self.closed = True
            self._file.close()

    def abandon(self) -> None:
        """Close the file as it is, without index (what a crash leaves; for tests)."""
        self.closed = True
        self._file.close()


_T = TypeVar("_T")


class Recorder:
    """A session's recorder: give ``on_samples``/``on_event``/``on_output`` to its sinks.

    The sinks encode what they get into the frame being built, at once, on the event loop
    (the records are freshly made and die right after; docs/benchmarks/recording.md says why
    this costs less than handing them to a thread); a background thread seals (compresses)
    the frame ``flush_seconds`` after its first record arrived and writes it, so a kill -9
    loses at most that much, and does the fsync at each segment's end. (A frame is sealed by
    its first record's age rather than on a clock's ticks: what arrives within
    ``flush_seconds`` shares a frame, so a host whose tools report at two phases of the
    second makes one frame a second, not two: each frame costs a header and a zstd block.)
    The sinks never wait for the disk: the thread writes outside the lock they take.
    ``close()`` writes what is left, the end time and the index (safe to call twice). A
    write error (disk full) stops the recording: ``on_error`` hears of it at once (from the
    thread that met it; within ``flush_seconds`` of the write
    that failed), and ``close()`` then raises it as a ``RecordingError``."""

    def __init__(self, path: str, meta: SessionMeta, *,
                 flush_seconds: float = FLUSH_SECONDS,
                 on_error: Callable[[RecordingError], None] | None = None) -> None:
        self._writer = SessionWriter(path, meta)
        self.path = path
        self._lock = threading.Lock()  # the writer's encoding side (the sinks, sealing)
        self._io_lock = threading.Lock()  # its writing side (then always after _lock)
        self._stop = threading.Event()
        self._flush_seconds = flush_seconds
        self._filter = JsonOutputFilter()
        self.error: RecordingError | None = None
        self._on_error = on_error
        self.closed = False
        self.records = 0
        #: When (monotonic) the first record of the frame being built arrived; None: none yet.
        self._pending_since: float | None = None
        #: CPU seconds the writing thread has used (for benchmarks).
        self.thread_cpu = 0.0
        self._thread = threading.Thread(target=self._run, name="benchtui-recorder", daemon=True)
        self._thread.start()

    @property
    def meta(self) -> SessionMeta:
        return self._writer.meta

    @property
    def output_lines_dropped(self) -> int:
        """JSON lines of JSON tools not kept (their numbers are in the samples)."""
        return self._filter.dropped

    def set_meta(self, **changes: object) -> None:
        with self._lock, self._io_lock:
            self._writer.set_meta(**changes)

    # --- the sinks (event loop) --------------------------------------------------------------

    def on_samples(self, samples: list[Sample]) -> None:
        if samples and not self.closed and self.error is None:
            with self._lock:
                self._add(time.time(), samples)

    def on_event(self, event: Event) -> None:
        if not self.closed and self.error is None:
            with self._lock:
                self._add(event.t, event)

    def on_output(self, out: OutputLines) -> None:
        if not self.closed and self.error is None:
            with self._lock:  # (the filter keeps state per stream: one caller at a time)
                kept = self._filter(out)
                if kept is not None:
                    self._add(kept.t, kept)

    def on_figures(self, t: float, host: str | None,
                   figures: Sequence[tuple[figframe.Key, float]]) -> None:
        """A tick of the figure track (``SessionWriter.add_figures``; ``host`` None: the
        fleet's): the session's ``session.figure_track.FigureRecorder`` calls this."""
        if not self.closed and self.error is None:
            with self._lock:
                self._guard(self._writer.add_figures, t, host, figures)

    def _add(self, t: float, record: Record) -> None:
        self._guard(self._writer.add_record, t, record)
        if self.error is None:
            self.records += 1
            if self._pending_since is None:
                self._pending_since = time.monotonic()

    # --- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        wait = self._flush_seconds
        while not self._stop.wait(wait):
            since = self._pending_since
            due = None if since is None else since + self._flush_seconds - time.monotonic()
            if due is not None and due <= 0.0:
                self.flush()
                self.thread_cpu = time.thread_time()
                due = None
            # a record arriving while it sleeps is sealed at most flush_seconds after it came
            wait = self._flush_seconds if due is None else due

    def flush(self) -> None:
        """Write what has arrived as a frame (the thread calls this ``flush_seconds`` after
        the frame's first record arrived)."""
        with self._lock:
            self._pending_since = None
            sealed = self._guard(self._writer.seal_frame)
        if sealed is None:
            return
        with self._io_lock:
            ended = self._guard(self._writer.write_sealed, sealed)
        if ended:
            self._writer.sync()

    def _guard(self, step: Callable[..., _T], *args: object) -> _T | None:
        """Run a writer step; an error stops the recording (a sink must never raise)."""
        if self.error is not None:
            return None
        try:
            return step(*args)
        except RecordingError as exc:
            self._failed(exc)
        except Exception as exc:  # noqa: BLE001 (a bug must not kill the session silently)
            self._failed(RecordingError(self.path, f"recording stopped: {exc!r}"))
        return None

    def _failed(self, error: RecordingError) -> None:
        self.error = error
        if self._on_error is not None:
            self._on_error(error)

    def close(self) -> None:
        """Stop the thread, write the rest and the index. Raises the write error, if any."""
        self.closed = True
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        self.flush()
        with self._lock, self._io_lock:
            if not self._writer.closed:
                try:
                    self._writer.close()
                except RecordingError as exc:
                    self.error = self.error or exc
        if self.error is not None:
            raise self.error
