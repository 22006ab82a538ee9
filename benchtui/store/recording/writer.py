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
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Final

import orjson
import zstandard

from benchtui.errors import RecordingError
from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.store.recording import format as fmt
from benchtui.store.recording.codec import SegmentEncoder, TimedRecord
from benchtui.store.recording.model import SessionMeta
from benchtui.store.recording.outputfilter import JsonOutputFilter
from benchtui.store.recording.stats import SegmentStats

#: A segment ends after this many seconds of records, or this many bytes of frame bodies.
SEGMENT_SECONDS: Final = 60.0
SEGMENT_RAW_BYTES: Final = 32 * 1024 * 1024
#: zstd level: 3 is zstd's default; higher levels gain ~2% here for 2-3x the CPU.
ZSTD_LEVEL: Final = 3
#: How often the recorder thread writes what arrived (seconds): a kill -9 loses at most this.
FLUSH_SECONDS: Final = 0.5


def meta_json(meta: SessionMeta) -> bytes:
    return orjson.dumps(asdict(meta), default=str, option=orjson.OPT_NON_STR_KEYS)


class SessionWriter:
    """Appends records to a new session file. Not thread-safe: one caller at a time."""

    def __init__(self, path: str, meta: SessionMeta, *, segment_seconds: float = SEGMENT_SECONDS,
                 level: int = ZSTD_LEVEL) -> None:
        self.path = path
        self.meta = replace(meta, schema_version=fmt.SCHEMA_VERSION, ended=None,
                            hosts=list(meta.hosts), facts=dict(meta.facts))
        self.segment_seconds = segment_seconds
        try:
            self._file = open(path, "xb", buffering=0)  # noqa: SIM115 (closed by close())
        except FileExistsError:
            raise RecordingError(path, "already exists; give another file name (a recording "
                                 "is never overwritten)") from None
        except OSError as exc:
            raise RecordingError(path, f"cannot create it: {exc.strerror or exc}") from None
        self._cctx = zstandard.ZstdCompressor(level=level, write_checksum=False)
        self._offset = 0
        self._segments: list[SegmentStats] = []
        self._seg: SegmentStats | None = None
        self._encoder = SegmentEncoder()
        self._stream: zstandard.ZstdCompressionObj | None = None
        self._seg_raw = 0
        self.closed = False
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
        if not records:
            return
        for _t, r in records:
            if isinstance(r, Event) and r.kind == ev.FACTS and r.host is not None:
                facts = r.data.get("facts")
                if isinstance(facts, dict):
                    self.meta.facts[r.host] = facts
        if self._seg is None:
            self._start_segment()
        seg = self._seg
        assert seg is not None and self._stream is not None
        body = self._encoder.encode(records)
        seg.add(records)
        self._seg_raw += len(body)
        assert seg.t0 is not None and seg.t1 is not None
        last = seg.t1 - seg.t0 >= self.segment_seconds or self._seg_raw >= SEGMENT_RAW_BYTES
        piece = self._stream.compress(body) + self._stream.flush(
            zstandard.COMPRESSOBJ_FLUSH_FINISH if last else zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        times = [t for t, _ in records]
        self._data_frame(piece, len(body), min(times), max(times), last=last)
        if last:
            self._end_segment(finished=True)

    def _start_segment(self) -> None:
        previous = self._segments[-1] if self._segments else None
        self._seg = SegmentStats.after(len(self._segments), previous)
        self._seg.offset = self._offset
        self._encoder = SegmentEncoder()
        self._stream = self._cctx.compressobj()
        self._seg_raw = 0

    def _data_frame(self, piece: bytes, raw_len: int, t_first: float, t_last: float, *,
                    last: bool) -> None:
        seg = self._seg
        assert seg is not None
        flags = fmt.ZSTD | (fmt.LAST if last else 0)
        self._write(fmt.frame(fmt.DATA, piece, flags=flags, segment=seg.number, raw_len=raw_len,
                              t_first=t_first, t_last=t_last))
        seg.frames += 1
        seg.end = self._offset

    def _end_segment(self, *, finished: bool) -> None:
        seg, stream = self._seg, self._stream
        if seg is None or stream is None:
            return
        if not finished:  # close the zstd frame with an empty last piece
            t = seg.t1 if seg.t1 is not None else time.time()
            self._data_frame(stream.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH), 0, t, t, last=True)
        summary = orjson.dumps(seg.to_json(), default=str, option=orjson.OPT_NON_STR_KEYS)
        self._write(fmt.frame(fmt.SEGMENT_END, summary, segment=seg.number,
                              t_first=seg.t0 or 0.0, t_last=seg.t1 or 0.0))
        self._segments.append(seg)
        self._seg = None
        self._stream = None
        self.sync()

    def sync(self) -> None:
        """Make what was written survive a crash of the machine, not just of benchtui."""
        with contextlib.suppress(OSError):
            os.fsync(self._file.fileno())

    def close(self, ended: float | None = None) -> None:
        """End the open segment, write the index and the trailer, close. Idempotent."""
        if self.closed:
            return
        try:
            self._end_segment(finished=False)
            self.meta.ended = time.time() if ended is None else ended
            index = {"meta": asdict(self.meta),
                     "segments": [s.to_json() for s in self._segments]}
            payload = self._cctx.compress(
                orjson.dumps(index, default=str, option=orjson.OPT_NON_STR_KEYS))
            at = self._offset
            data = fmt.frame(fmt.INDEX, payload, flags=fmt.ZSTD, t_first=self.meta.started,
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


class Recorder:
    """A session's recorder: give ``on_samples``/``on_event``/``on_output`` to its sinks.

    The sinks only queue (cheap, on the event loop); a background thread encodes, compresses
    and writes every ``flush_seconds``, so a kill -9 loses at most that much. ``close()``
    writes what is left, the end time and the index (safe to call twice). A write error
    (disk full) stops the recording; ``close()`` then raises it as a ``RecordingError``."""

    def __init__(self, path: str, meta: SessionMeta, *,
                 flush_seconds: float = FLUSH_SECONDS) -> None:
        self._writer = SessionWriter(path, meta)
        self.path = path
        self._pending: list[TimedRecord] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._flush_seconds = flush_seconds
        self._filter = JsonOutputFilter()
        self.error: RecordingError | None = None
        self.closed = False
        self.records = 0
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
        with self._write_lock:
            self._writer.set_meta(**changes)

    def on_samples(self, samples: list[Sample]) -> None:
        if self.closed or self.error is not None or not samples:
            return
        for s in samples:
            if s.histogram is not None:
                s.histogram.counts  # noqa: B018 (built here, on the feeding thread, not raced)
        with self._lock:
            self._pending.append((time.time(), list(samples)))

    def on_event(self, event: Event) -> None:
        if not self.closed and self.error is None:
            with self._lock:
                self._pending.append((event.t, event))

    def on_output(self, out: OutputLines) -> None:
        if self.closed or self.error is not None:
            return
        with self._lock:  # the filter keeps state per stream: one caller at a time
            kept = self._filter(out)
            if kept is not None:
                self._pending.append((kept.t, kept))

    def _run(self) -> None:
        while not self._stop.wait(self._flush_seconds):
            self.flush()
            self.thread_cpu = time.thread_time()

    def flush(self) -> None:
        """Write what has arrived (the thread calls this every ``flush_seconds``)."""
        with self._lock:
            batch, self._pending = self._pending, []
        if not batch or self.error is not None:
            return
        with self._write_lock:
            try:
                self._writer.append(batch)
                self.records += len(batch)
            except RecordingError as exc:
                self.error = exc
            except Exception as exc:  # noqa: BLE001 (a bug must not kill the thread silently)
                self.error = RecordingError(self.path, f"recording stopped: {exc!r}")

    def close(self) -> None:
        """Stop the thread, write the rest and the index. Raises the write error, if any."""
        self.closed = True
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        self.flush()
        with self._write_lock:
            if not self._writer.closed:
                try:
                    self._writer.close()
                except RecordingError as exc:
                    self.error = self.error or exc
        if self.error is not None:
            raise self.error
