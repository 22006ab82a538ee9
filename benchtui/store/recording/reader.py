"""Reading a session file: open it (by its index, or by walking its frames when the recorder
did not close it), then read records, samples, events and gaps by time.

Opening a closed file reads the file header, the trailer and the index: a few hundred KB
whatever the file's size. A file without a valid index (kill -9, truncated, damaged) is walked
frame by frame: frame headers have their own CRC and a sync word, so the walk skips damaged
bytes to the next good frame; what it cannot read is named in ``warnings``. A segment is read
in one piece and decoded frame by frame from its start; finding the segment for a time is a
binary search (``bisect``) over the segments' time ranges.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Collection, Iterator, Sequence
from itertools import accumulate
from types import TracebackType

import zstandard

from benchtui.errors import RecordingError
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording import format as fmt
from benchtui.store.recording import newest
from benchtui.store.recording.codec import SeriesDef, TimedRecord
from benchtui.store.recording.decoder import SegmentDecoder, SeriesFilter
from benchtui.store.recording.figread import FigureTrackReader
from benchtui.store.recording.index import Indexed, UnusableIndex, read_index
from benchtui.store.recording.inflate import FrameError, PieceCheck
from benchtui.store.recording.model import Gap, Record, SessionMeta
from benchtui.store.recording.series_stats import SeriesStats
from benchtui.store.recording.stats import GAP_SECONDS, SegmentStats
from benchtui.store.recording.statsread import Query, StatsReader
from benchtui.store.recording.varint import CodecError
from benchtui.store.recording.verify import verify_frames
from benchtui.store.recording.walk import clock, walk_frames

_CACHED_SEGMENTS = 3
Body = tuple[fmt.FrameHeader, bytes]


class SessionReader:
    """An open session file. Times are Unix epoch seconds.

    The time axis of ``records``/``start``/``end`` is the controller's clock when a record
    reached the sinks (``Event.t``, ``OutputLines.t``, and for a batch of samples the moment
    the recorder received it): the order and pace of the live session.
    """

    meta: SessionMeta
    #: Sentences for the user: where a truncated or damaged file ends, what was skipped. It
    #: can grow while reading (damage inside a closed file is found when that part is read).
    warnings: list[str]
    #: Time of the first and the last record (``start == end`` for an empty session).
    start: float
    end: float
    path: str
    size_bytes: int
    #: True when the recorder closed the file (False after a crash: then ``meta.ended`` is None).
    complete: bool

    def __init__(self, path: str) -> None:
        self.path = path
        self.warnings = []
        self.complete = False
        self._segments: list[SegmentStats] = []
        self._cache: OrderedDict[int, _Bodies] = OrderedDict()
        self._damaged: set[int] = set()
        self._figure_track: FigureTrackReader | None = None
        self._index_frame: tuple[int, int] | None = None  # (where, the recording's end)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):
                # a device reads endlessly or as empty, a FIFO would block the open
                raise RecordingError(path, "is not a file (a device, a pipe or a socket): a "
                                     "session file is a regular file")
            self._file = open(path, "rb")  # noqa: SIM115 (closed by close())
        except FileNotFoundError:
            raise RecordingError(path, "no such file") from None
        except IsADirectoryError:
            raise RecordingError(path, "is a directory, not a session file") from None
        except OSError as exc:
            raise RecordingError(path, f"cannot open it: {exc.strerror or exc}") from None
        try:
            self.size_bytes = os.fstat(self._file.fileno()).st_size
            if self.size_bytes == 0:
                raise RecordingError(path, "is empty: the recording never started")
            self._mm = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            self._load()
        except BaseException:
            self._file.close()
            raise

    @classmethod
    def open(cls, path: str) -> SessionReader:
        """Open and index the file. Raises RecordingError (one sentence) when it is not a
        session file, is empty, or was written by a newer benchtui."""
        return cls(path)

    def close(self) -> None:
        self._cache.clear()
        with contextlib.suppress(AttributeError):  # (not made when opening failed)
            self._stats.close()
        if not self._mm.closed:
            self._mm.close()
        self._file.close()

    def __enter__(self) -> SessionReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # --- opening ---------------------------------------------------------------------------

    def _load(self) -> None:
        mm, size = self._mm, self.size_bytes
        head = mm[:fmt.FILE_HEADER_SIZE]
        header = fmt.read_file_header(mm)
        if header is None:
            if len(head) < fmt.FILE_HEADER_SIZE and (fmt.MAGIC.startswith(head)
                                                     or head.startswith(fmt.MAGIC)):
                raise RecordingError(self.path, f"is cut short: it ends inside its header "
                                     f"(byte {size}): nothing to read")
            raise RecordingError(self.path, "is not a benchtui session file")
        if header.damaged:
            # Its CRC proves damage, not a newer writer: the frames carry their own CRCs and
            # are read as this benchtui's schema (it reads every older one too).
            self.warnings.append(
                "the file header (its first 16 bytes) is damaged: its CRC does not match; "
                f"the frames after it were read as schema {fmt.SCHEMA_VERSION}")
            self._schema = fmt.SCHEMA_VERSION
        elif header.schema > fmt.SCHEMA_VERSION:
            raise RecordingError(self.path, f"was written by a newer benchtui (schema "
                                 f"{header.schema}, this one reads up to "
                                 f"{fmt.SCHEMA_VERSION}): upgrade benchtui to read it")
        else:
            self._schema = header.schema
        refused = None
        try:
            indexed = read_index(mm, size, self._schema)
        except UnusableIndex as exc:
            indexed, refused = None, exc.sentence
        if indexed is None:
            self._scan(size, refused)
        else:
            self._use(indexed)
        self._ends = list(accumulate((s.t1 or 0.0 for s in self._segments), max))
        known = [s for s in self._segments if s.t0 is not None]
        self.start = min((s.t0 for s in known if s.t0 is not None), default=self.meta.started)
        self.end = max((s.t1 for s in known if s.t1 is not None), default=self.start)
        self._stats = StatsReader(self._mm, self.size_bytes, self._segments,
                                  self.meta.stats_seconds, overlapping=self._overlapping,
                                  decode=self._decode)

    def _use(self, indexed: Indexed) -> None:
        self.meta, self._segments, self.complete = indexed.meta, indexed.segments, True
        self._index_frame = (indexed.at, indexed.end)

    def _scan(self, size: int, refused: str | None) -> None:
        """No usable index: walk every frame (what a crash, a truncation or damage leaves).
        ``refused``: why the file's index was not used."""
        walk = walk_frames(self._mm, size, self._schema)
        if refused is not None and walk.appended is None:  # (else the appended file's)
            self.warnings.append(f"{refused}; the file was read frame by frame instead")
        self.warnings += walk.warnings + walk.appended_sentences(self.path)
        if walk.index_at is not None and walk.closed_at is not None \
                and (refused is None or walk.appended is not None):
            # a closed file whose trailer is damaged, or with another file after it: its
            # own index, if it describes its frames
            with contextlib.suppress(UnusableIndex):
                indexed = read_index(self._mm, walk.closed_at, self._schema, at=walk.index_at)
                if indexed is not None:
                    self._use(indexed)
                    return
        if walk.meta is None:
            self.warnings.append("the session's metadata is missing: its plan and name are "
                                 "unknown")
        self.meta = walk.meta or SessionMeta(self._schema, os.path.basename(self.path), "", "",
                                             None, 0.0, None)
        previous: SegmentStats | None = None
        for number in sorted(walk.data):
            found = walk.data[number]
            seg = walk.summaries.get(number)
            if seg is None or number in walk.cut or (seg.offset, seg.end) != (found.offset,
                                                                             found.end):
                seg = self._rebuild(found, previous)
            if seg.t0 is not None:
                self._segments.append(seg)
                previous = seg
        for seg in self._segments:
            for e in seg.events:
                if e.kind == ev.FACTS and e.host is not None:
                    facts = e.data.get("facts")
                    if isinstance(facts, dict):
                        self.meta.facts[e.host] = facts
        if not self.meta.started and self._segments:
            self.meta.started = self._segments[0].t0 or 0.0
        last = max((s.t1 for s in self._segments if s.t1 is not None), default=None)
        if not walk.closed and last is None:
            self.warnings.append("the recording was not closed and holds no records")
        elif not walk.closed:
            self.warnings.append(f"the recording was not closed (the recorder was stopped or "
                                 f"the file was cut short): it ends at {clock(last)}; "
                                 "replaying what is before")

    def _rebuild(self, seg: SegmentStats, previous: SegmentStats | None) -> SegmentStats:
        """A segment's summary, from its data (it has no valid SEGMENT_END)."""
        stats = SegmentStats.after(seg.number, previous)
        stats.offset, stats.end = seg.offset, seg.end
        decoder = SegmentDecoder()
        for h, body in self._bodies(stats):
            try:
                records = decoder.decode(body)
            except CodecError:
                self._warn_damage(stats, h)
                break
            stats.add(records)
            stats.frames += 1
        return stats

    # --- segments ----------------------------------------------------------------------------

    def _bodies(self, seg: SegmentStats) -> _Bodies:
        """The segment's frame bodies (decompressed as far as they are read), up to the first
        damage. A segment is one zstd stream: a seek to its last seconds still decompresses
        the frames before them, but no longer the ones after (~40 ms a minute of 16 hosts)."""
        cached = self._cache.get(seg.offset)
        if cached is not None:
            self._cache.move_to_end(seg.offset)
            return cached
        out = self._cache[seg.offset] = _Bodies(self, seg)
        if len(self._cache) > _CACHED_SEGMENTS:
            self._cache.popitem(last=False)
        return out

    def _warn_damage(self, seg: SegmentStats, h: fmt.FrameHeader | None,
                     at: int | None = None, why: str = "") -> None:
        """A warning (once) for damage met reading ``seg`` at frame ``h`` or at byte ``at``
        (``why``: what is wrong with the frame, when it is more than its CRC)."""
        offset = h.offset if h is not None else at if at is not None else seg.offset
        if offset in self._damaged:
            return
        self._damaged.add(offset)
        since = h.t_first if h is not None else seg.t0
        what = f"{fmt.named(h)} is not what it must be: {why}" if why and h is not None else \
            f"the file is damaged at byte {offset}"
        self.warnings.append(f"{what}: the records from {clock(since)} to {clock(seg.t1)} "
                             "cannot be read")

    def _decode(self, seg: SegmentStats, t0: float, t1: float, *, samples: bool = True,
                events: bool = True, output: bool = True,
                series_filter: SeriesFilter | None = None,
                to_end: bool = False) -> Iterator[TimedRecord]:
        """The records of ``seg`` in [t0, t1). Records arrive slightly out of time order, so
        a frame after one that starts at or past t1 may still hold one before t1: with
        ``to_end`` every frame is looked at, else the reading stops at the first frame that
        starts ``fmt.LATE_SECONDS`` past t1."""
        decoder = SegmentDecoder(series_filter)
        for h, body in self._bodies(seg):
            if h.t_first >= t1 + fmt.LATE_SECONDS and not to_end:
                return
            try:
                if h.t_last < t0 or h.t_first >= t1:
                    decoder.skip(body)
                    continue
                records = decoder.decode(body, samples=samples, events=events, output=output)
            except CodecError:
                self._warn_damage(seg, h)
                return
            for t, r in records:
                if t0 <= t < t1:
                    yield t, r

    def _overlapping(self, t0: float, t1: float) -> Iterator[SegmentStats]:
        """The segments with records in [t0, t1), in file order (O(log n) to find the first)."""
        i = bisect_left(self._ends, t0)
        for seg in self._segments[i:]:
            if seg.t0 is not None and seg.t0 >= t1:
                return
            yield seg

    # --- reading -----------------------------------------------------------------------------

    @property
    def host_count(self) -> int:
        return len(set(self.meta.hosts) | {h for s in self._segments for h in s.hosts})

    @property
    def sample_count(self) -> int:
        return sum(s.samples for s in self._segments)

    @property
    def event_count(self) -> int:
        return sum(len(s.events) for s in self._segments)

    @property
    def output_line_count(self) -> int:
        return sum(s.output_lines for s in self._segments)

    @property
    def segment_count(self) -> int:
        return len(self._segments)

    def host_sample_counts(self) -> dict[str, int]:
        """host -> samples recorded."""
        out: dict[str, int] = {}
        for s in self._segments:
            for host, n in s.hosts.items():
                out[host] = out.get(host, 0) + n
        return out

    def events(self) -> list[Event]:
        """Every event of the session, in time order (few: steps, states, warnings, marks)."""
        return sorted((e for s in self._segments for e in s.events), key=lambda e: e.t)

    def records(self, t0: float, t1: float) -> Iterator[Record]:
        """The records that reached the sinks in [t0, t1), in the order they did. Finding
        where t0 is costs O(log n) plus decoding at most one segment before it."""
        for _t, r in self.timed_records(t0, t1):
            yield r

    def timed_records(self, t0: float, t1: float) -> Iterator[tuple[float, Record]]:
        """As ``records``, with each record's time (for pacing a replay)."""
        for seg in self._overlapping(t0, t1):
            yield from self._decode(seg, t0, t1)

    def verify(self) -> int:
        """Read every frame of the file (``verify.py``): what opening it could not see is
        added to ``warnings``. The number of samples that could be read (``sample_count`` is
        what the index or the walk counted)."""
        return verify_frames(self)

    def newest_records(self, t0: float, t1: float) -> list[TimedRecord]:
        """As ``timed_records``, but each batch of samples keeps only the samples that are the
        last of their series in ``[t0, t1)`` (and every summary): what replay feeds the state
        it shows at once after a seek (``newest.py``)."""
        return newest.newest_records(self, t0, t1)

    def samples(self, *, hosts: Collection[str] | None = None,
                metrics: Collection[str] | None = None, t0: float | None = None,
                t1: float | None = None) -> Iterator[Sample]:
        """Recorded samples in recorded order, filtered by host, metric, and sample time
        ``t0 <= s.t < t1`` (a sample with no ``t`` is placed at its arrival time)."""
        lo = float("-inf") if t0 is None else t0
        hi = float("inf") if t1 is None else t1
        host_set = None if hosts is None else set(hosts)
        metric_set = None if metrics is None else set(metrics)

        def wanted(d: SeriesDef) -> bool:
            return ((host_set is None or d.host in host_set)
                    and (metric_set is None or d.metric in metric_set))

        for seg in self._segments:
            if seg.st0 is None or seg.st1 is None or seg.st1 < lo or seg.st0 >= hi:
                continue
            if host_set is not None and not host_set & seg.hosts.keys():
                continue
            for t, batch in self._decode(seg, float("-inf"), float("inf"), events=False,
                                         output=False, series_filter=wanted):
                assert isinstance(batch, list)
                for s in batch:
                    st = t if s.t is None else s.t
                    if lo <= st < hi:
                        yield s

    def series_stats(self, t0: float, t1: float, wanted: SeriesFilter | None = None,
                     host: str | None = None, *, histograms: bool = True
                     ) -> dict[SeriesDef, SeriesStats]:
        """Per series (those ``wanted`` accepts, all when None): count, sum, min, max and the
        merged histogram of the samples that reached the sinks in ``[t0, t1)``
        (``series_stats.py``): what a report needs of a step's window. Read from the file's
        stats blocks where they cover the window exactly, decoded where they do not (a
        window that cuts through a block, an older file, a crash's last minutes): the same
        figures either way (``statsread.py``). ``host``: ``wanted`` accepts that host's
        series only (then only its blocks are looked at). ``histograms`` False: without the
        series' histograms (not decoded)."""
        return self._stats.series_stats(t0, t1, wanted, host, histograms=histograms)

    def series_stats_many(self, queries: Sequence[Query]) -> list[dict[SeriesDef, SeriesStats]]:
        """``series_stats`` of each query (``statsread.Query``), the samples the queries
        must decode read in one decoding of each segment for all of them."""
        return self._stats.series_stats_many(queries)

    @property
    def figure_track(self) -> FigureTrackReader | None:
        """The file's figure track (FIGS frames: ``figread.py``), None when it has none."""
        if self.meta.figures is None:
            return None
        if self._figure_track is None:
            self._figure_track = FigureTrackReader(self._mm, self.size_bytes, self.meta.figures,
                                                   self._segments)
        return self._figure_track

    def stats_split_near(self, t: float, within: float, host: str | None = None) -> float:
        """The time nearest ``t``, at most ``within`` seconds from it, at which
        ``series_stats`` splits a window without decoding (``StatsReader.split_near``);
        ``t`` itself when there is none (a file without stats blocks)."""
        return self._stats.split_near(t, within, host)

    def sample_batches(self, t0: float, t1: float, wanted: SeriesFilter | None = None
                       ) -> Iterator[tuple[float, list[Sample]]]:
        """The batches of samples that reached the sinks in ``[t0, t1)``, with their times,
        in order, each holding only the series ``wanted`` accepts (all when None; a batch
        left empty is skipped): frames before ``t0`` are skipped, not decoded, and the
        samples of other series are not made (a baseline's ghost reads a few hosts' few
        metrics of one step this way)."""
        for seg in self._overlapping(t0, t1):
            for t, r in self._decode(seg, t0, t1, events=False, output=False,
                                     series_filter=wanted):
                if isinstance(r, list) and r:
                    yield t, r

    def gaps(self) -> list[Gap]:
        """Where a host that had been sending samples sent nothing for more than 2 s (up to
        the end of the recording, for a host that never sent again). None in an imported
        session: its times are made up, and a host sends nothing between its runs there."""
        if self.meta.imported:
            return []
        gaps = [g for s in self._segments for g in s.gaps]
        if self._segments:
            for host, last in self._segments[-1].last.items():
                if self.end - last > GAP_SECONDS:
                    gaps.append(Gap(host, last, self.end))
        return gaps


class _Bodies:
    """One segment's frame bodies, decompressed frame by frame as readers get to them (a
    reader's cache holds a few; iterating again yields the ones already decompressed, then
    decompresses on). Like the reader, for one thread."""

    __slots__ = ("_check", "_done", "_pos", "_reader", "_seg", "_stream", "bodies")

    def __init__(self, reader: SessionReader, seg: SegmentStats) -> None:
        self._reader = reader
        self._seg = seg
        self._pos = seg.offset
        self._stream = zstandard.ZstdDecompressor().decompressobj()
        self._check = PieceCheck()
        self._done = False
        self.bodies: list[Body] = []

    def __iter__(self) -> Iterator[Body]:
        i = 0
        while True:
            if i < len(self.bodies):
                yield self.bodies[i]
                i += 1
            elif self._done or not self._next():
                return

    def _next(self) -> bool:
        """Decompress up to the next frame with a body; False at the segment's end (or at
        damage, which the reader names in its warnings)."""
        reader, seg, mm = self._reader, self._seg, self._reader._mm
        while self._pos < seg.end:
            pos = self._pos
            h = fmt.read_frame_header(mm, pos, pos)
            if h is None or h.end > seg.end:
                reader._warn_damage(seg, None, pos)
                break
            self._pos = h.end
            if h.type != fmt.DATA or h.segment != seg.number:
                continue
            payload = mm[h.payload_offset:h.end]
            try:
                if not fmt.payload_ok(h, payload):
                    raise CodecError("CRC")
                self._check.check(h, payload)  # (a bomb is refused before it is inflated)
                body = self._stream.decompress(payload)
                if len(body) != h.raw_len:
                    raise CodecError("length")
            except FrameError as exc:
                reader._warn_damage(seg, h, why=exc.reason)
                break
            except (zstandard.ZstdError, CodecError):
                reader._warn_damage(seg, h)
                break
            if h.raw_len:
                self.bodies.append((h, body))
                return True
        self._done = True
        return False
