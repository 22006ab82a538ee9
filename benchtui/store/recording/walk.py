"""Walking a session file frame by frame, for when there is no valid index: the recorder was
killed, the file was cut short or damaged.

Every frame header carries a sync word and its own CRC, so after damaged bytes the walk looks
for the next sync word whose header and payload check out and goes on from there. A segment
in which damage was found is cut there: its zstd stream cannot be continued past a missing
piece, so its later frames are ignored, and the walk resumes with the next segment.
"""

from __future__ import annotations

import math
import mmap
import time
from dataclasses import dataclass, field, fields

from benchtui.store.recording import figframe
from benchtui.store.recording import format as fmt
from benchtui.store.recording.blockread import TableMasks
from benchtui.store.recording.inflate import FrameError, inflate, json_object
from benchtui.store.recording.model import SessionMeta
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.statsframe import StatsFrame
from benchtui.store.recording.varint import CodecError

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def clock(t: float | None) -> str:
    """A time for a warning sentence (a forged time that no calendar holds: as a number)."""
    if t is None:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    except (OverflowError, OSError, ValueError):
        return repr(t)


def _time(value: object, what: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):  # type: ignore[arg-type]
        raise ValueError(f"its {what} is not a time")
    return float(value)  # type: ignore[arg-type]


def meta_from_json(d: object, schema: int) -> SessionMeta:
    """``SessionMeta`` from its JSON form; unknown keys (a newer writer's) are ignored.
    ``ValueError`` (or ``TypeError``) when it is not an object with finite times."""
    if not isinstance(d, dict):
        raise TypeError("metadata is not an object")
    known = {f.name for f in fields(SessionMeta)}
    kw = {k: v for k, v in d.items() if k in known}
    ended = kw.get("ended")
    meta = SessionMeta(schema_version=schema, name=str(kw.get("name", "")),
                       session_id=str(kw.get("session_id", "")),
                       plan_text=str(kw.get("plan_text", "")),
                       plan_path=kw.get("plan_path") if isinstance(kw.get("plan_path"), str)
                       else None,
                       started=_time(kw.get("started", 0.0), "start"),
                       ended=None if ended is None else _time(ended, "end"),
                       writer=str(kw.get("writer", "")))
    hosts = kw.get("hosts")
    if isinstance(hosts, list):
        meta.hosts = [str(h) for h in hosts]
    facts = kw.get("facts")
    if isinstance(facts, dict):
        meta.facts = {str(k): v for k, v in facts.items() if isinstance(v, dict)}
    bits = kw.get("histogram_bits")
    if isinstance(bits, int) and not isinstance(bits, bool):
        meta.histogram_bits = bits
    source, imported, import_map = (kw.get(k) for k in ("source", "imported_from",
                                                          "import_map"))
    if isinstance(source, str):
        meta.source = source
    if isinstance(imported, list):
        meta.imported_from = [f for f in imported if isinstance(f, dict)]
    if isinstance(import_map, dict):
        meta.import_map = import_map
    stats_seconds = kw.get("stats_seconds")
    if isinstance(stats_seconds, int | float) and not isinstance(stats_seconds, bool) \
            and stats_seconds > 0:
        meta.stats_seconds = float(stats_seconds)
    figures = kw.get("figures")
    if isinstance(figures, str) and figures:
        meta.figures = figures
    return meta


@dataclass
class Walk:
    """What walking the frames found."""

    meta: SessionMeta | None = None
    #: segment number -> where its readable DATA frames are (offset, end, frames)
    data: dict[int, SegmentStats] = field(default_factory=dict)
    #: segment number -> its SEGMENT_END summary, when readable
    summaries: dict[int, SegmentStats] = field(default_factory=dict)
    #: segments with damage: their frames after it are not readable
    cut: set[int] = field(default_factory=set)
    #: the recording ends with a trailer: it was closed
    closed: bool = False
    #: where another session file appended to this one starts (``cat a.btr b.btr``), and
    #: that session in words ("night-2, id 4f3a..."; "" when its metadata cannot be read)
    appended: int | None = None
    appended_session: str = ""
    #: what is appended is another session's frames without a file header of their own
    appended_frames: bool = False
    #: the INDEX frame right before the trailer of a closed file, and the trailer's end:
    #: the index a file whose trailer is damaged (or that has another file after it) has
    index_at: int | None = None
    closed_at: int | None = None
    warnings: list[str] = field(default_factory=list)

    def appended_sentences(self, path: str) -> list[str]:
        """The sentence for another session appended to the file at ``path`` (none:
        none)."""
        if self.appended is None:
            return []
        at = self.appended
        which = f" ({self.appended_session})" if self.appended_session else ""
        if self.appended_frames:
            return [f"byte {at} starts another session's frames{which}, appended to this "
                    "file's: they were not read"]
        return [f"byte {at} starts another session file{which} appended to this one: it was "
                f"not read (tail -c +{at + 1} {path} > other.btr cuts it out)"]


def walk_frames(mm: mmap.mmap, size: int, schema: int, *, thorough: bool = False) -> Walk:
    """Every frame of the file, checked (both CRCs; the metadata's and the summaries' JSON);
    damage skipped and noted. It stops where another session's frames start (a file
    appended to this one). ``thorough`` (``info --verify``): the STATS and FIGS frames are
    decompressed and decoded too, and each one that is not what it must be is named."""
    return _Walker(mm, size, schema, thorough).run()


class _Walker:
    """One walk through a file's frames (``walk_frames``)."""

    def __init__(self, mm: mmap.mmap, size: int, schema: int, thorough: bool) -> None:
        self.mm, self.size, self.schema, self.thorough = mm, size, schema, thorough
        self.walk = Walk()
        self.current: int | None = None  # the segment whose data frames came last
        self.sealed: set[int] = set()  # segments over (summary seen, or a later one begun)
        self.session: str | None = None  # the session id of the first readable META
        self.index_at = -1  # the last INDEX frame, and where it ended
        self.after_index = -1

    def run(self) -> Walk:
        mm, size, walk = self.mm, self.size, self.walk
        pos = fmt.FILE_HEADER_SIZE
        while pos < size:
            if _recording_ends(mm, pos, size, walk, self.after_index == pos):
                if self.after_index == pos:
                    walk.index_at, walk.closed_at = self.index_at, pos + fmt.TRAILER_SIZE
                break
            h = fmt.read_frame_header(mm, pos, pos)
            if h is None or h.end > size:
                after = self._bad_bytes(pos, h)
            elif not fmt.payload_ok(h, mm[h.payload_offset:h.end]):
                after = self._bad_payload(h)
            else:
                after = self._frame(h, mm[h.payload_offset:h.end])
            if after is None:
                break
            pos = after
        return walk

    def _bad_bytes(self, pos: int, h: fmt.FrameHeader | None) -> int | None:
        """No frame at ``pos`` (or one cut short): where the next valid one starts."""
        mm, size, walk = self.mm, self.size, self.walk
        after = resync(mm, pos + 1, size)
        other = _file_header_at(mm, pos, size if after is None else after)
        if other is not None:
            if other > pos:
                walk.warnings.append(_damage(pos, other, truncated=False))
            _appended(mm, other, size, walk)
            return None
        short = size - pos < fmt.FRAME_HEADER_SIZE or h is not None
        walk.warnings.append(_damage(pos, after, truncated=after is None and short))
        damaged = h.segment if h is not None and h.type == fmt.DATA else self.current
        if damaged is not None:
            walk.cut.add(damaged)
        return after

    def _bad_payload(self, h: fmt.FrameHeader) -> int | None:
        """A frame whose header is valid and payload is not: the frame after it, unless
        another session file starts inside it (this one was cut short there)."""
        other = _file_header_at(self.mm, h.payload_offset, h.end)
        if other is not None:
            self.walk.warnings.append(f"the file is cut short at byte {other}, inside "
                                      f"{fmt.named(h)}: nothing of it after that point can be "
                                      "read")
            _appended(self.mm, other, self.size, self.walk)
            return None
        self.walk.warnings.append(f"{fmt.named(h)} is damaged (its CRC does not match): it "
                                  "was skipped")
        if h.type == fmt.DATA:
            self.walk.cut.add(h.segment)
        return h.end

    def _frame(self, h: fmt.FrameHeader, payload: bytes) -> int | None:
        """A frame with valid CRCs: what it holds; the offset of the next one (None: the
        walk ends here)."""
        walk = self.walk
        if h.type == fmt.META:
            meta = _meta(h, payload, self.schema, walk)
            if meta is not None and self.session is not None and meta.session_id != self.session:
                _appended(self.mm, h.offset, self.size, walk, meta, frames=True)
                return None
            if meta is not None:
                self.session, walk.meta = meta.session_id, meta
        elif h.type == fmt.DATA:
            self._data(h, payload)
        elif h.type == fmt.SEGMENT_END:
            self.sealed.add(h.segment)
            try:
                walk.summaries[h.segment] = SegmentStats.from_json(json_object(h, payload),
                                                                   strict=self.thorough)
            except ValueError as exc:  # (FrameError is one)
                walk.warnings.append(f"{fmt.named(h)} is not what it must be: "
                                     f"{_reason(exc)}; it was rebuilt from the segment's data")
        elif h.type == fmt.INDEX:
            self.index_at, self.after_index = h.offset, h.end
        elif self.thorough and h.type in (fmt.STATS, fmt.FIGS):
            _check_derived(h, payload, walk)
        return h.end

    def _data(self, h: fmt.FrameHeader, payload: bytes) -> None:
        walk = self.walk
        if h.segment in walk.cut:
            return
        seg = walk.data.get(h.segment)
        starts = payload.startswith(_ZSTD_MAGIC)
        if h.segment in self.sealed or (seg is not None and starts):
            # a segment's frames are one zstd stream, in a row: this one is another's
            walk.warnings.append(f"{fmt.named(h)} belongs to a segment that had ended "
                                 "before it (frames of another recording?): it was skipped")
            return
        if seg is None and starts:
            seg = walk.data[h.segment] = SegmentStats(h.segment, offset=h.offset)
        if seg is not None:
            seg.end = h.end
            seg.frames += 1
            if self.current is not None and self.current != h.segment:
                self.sealed.add(self.current)
            self.current = h.segment


def _recording_ends(mm: mmap.mmap, pos: int, size: int, walk: Walk, after_index: bool) -> bool:
    """True when the recording's frames end at ``pos``: its trailer (the last bytes of a
    closed file, or followed by what is not this recording), or another session file's
    header (a file appended)."""
    if mm[pos:pos + 8] == fmt.MAGIC and _file_header_at(mm, pos, pos + 1) == pos:
        _appended(mm, pos, size, walk)
        return True
    left = size - pos
    if mm[pos:pos + 8] != fmt.TRAILER_MAGIC and not (after_index and left == fmt.TRAILER_SIZE):
        return False
    found = fmt.read_trailer(mm[pos:pos + fmt.TRAILER_SIZE])
    walk.closed = walk.closed or after_index or found is not None
    if found is None and left < fmt.TRAILER_SIZE:  # the file ends inside it: truncated
        walk.warnings.append(f"the file is cut short in its trailer (at byte {pos}: "
                             f"{left} of its {fmt.TRAILER_SIZE} bytes are there)")
    elif found is None:
        walk.warnings.append(f"the file's trailer (the {fmt.TRAILER_SIZE} bytes at byte {pos}) "
                             "is damaged")
    end = pos + fmt.TRAILER_SIZE
    if end < size:
        if _file_header_at(mm, end, end + 1) == end:
            _appended(mm, end, size, walk)
        else:
            walk.warnings.append(f"the recording ends at byte {end} (its trailer), but "
                                 f"{size - end} more bytes follow: they are not part of it "
                                 "and were not read")
    return True


def _file_header_at(mm: mmap.mmap, start: int, end: int) -> int | None:
    """Where a session file's header (magic and a matching CRC) starts in [start, end)."""
    while (found := mm.find(fmt.MAGIC, start, end + len(fmt.MAGIC) - 1)) >= 0:
        header = fmt.read_file_header(mm[found:found + fmt.FILE_HEADER_SIZE])
        if header is not None and not header.damaged:
            return found
        start = found + 1
    return None


def _appended(mm: mmap.mmap, at: int, size: int, walk: Walk,
              meta: SessionMeta | None = None, *, frames: bool = False) -> None:
    """Another session file starts at ``at`` (``frames``: another session's frames, without
    a file header): the walk ends there."""
    if meta is None:  # its file header, then its first META frame
        h = fmt.read_frame_header(mm, at + fmt.FILE_HEADER_SIZE, at + fmt.FILE_HEADER_SIZE)
        if h is not None and h.type == fmt.META and h.end <= size:
            try:
                meta = meta_from_json(json_object(h, mm[h.payload_offset:h.end]), 0)
            except (ValueError, TypeError):
                meta = None
    walk.appended, walk.appended_frames = at, frames
    if meta is not None:
        same = " (this session again)" if walk.meta is not None \
            and walk.meta.session_id == meta.session_id else ""
        walk.appended_session = f"{meta.name or '?'}, id {meta.session_id or '?'}{same}"


def _meta(h: fmt.FrameHeader, payload: bytes, schema: int, walk: Walk) -> SessionMeta | None:
    try:
        return meta_from_json(json_object(h, payload), schema)
    except (ValueError, TypeError) as exc:
        walk.warnings.append(f"{fmt.named(h)} cannot be read: {_reason(exc)}")
        return None


def _check_derived(h: fmt.FrameHeader, payload: bytes, walk: Walk) -> None:
    """A STATS or FIGS frame decompressed and decoded whole; a warning when it cannot be
    (what it holds is then computed from the samples)."""
    try:
        body = inflate(h, payload)
        if h.type == fmt.STATS:
            frame = StatsFrame(body, {})
            every = TableMasks(None)
            for slot in range(len(frame.heads)):
                frame.rows(slot, every)
        else:
            figframe.decode(body)
    except CodecError as exc:
        walk.warnings.append(f"{fmt.named(h)} is not what it must be: {_reason(exc)}; the "
                             "figures it holds are computed from the samples instead")


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, FrameError) else str(exc)


def resync(mm: mmap.mmap, start: int, size: int) -> int | None:
    """The offset of the next valid frame at or after ``start``."""
    while True:
        found = mm.find(fmt.SYNC, start, size)
        if found < 0:
            return None
        h = fmt.read_frame_header(mm, found, found)
        if h is not None and h.end <= size and fmt.payload_ok(h, mm[h.payload_offset:h.end]):
            return found
        start = found + 1


def _damage(at: int, after: int | None, *, truncated: bool) -> str:
    if after is None:
        what = "is cut short" if truncated else "is damaged from there to its end"
        return f"the file {what} at byte {at}: nothing after that point can be read"
    return f"bytes {at} to {after} of the file are damaged and were skipped"
