"""Walking a session file frame by frame, for when there is no valid index: the recorder was
killed, the file was cut short or damaged.

Every frame header carries a sync word and its own CRC, so after damaged bytes the walk looks
for the next sync word whose header and payload check out and goes on from there. A segment
in which damage was found is cut there: its zstd stream cannot be continued past a missing
piece, so its later frames are ignored, and the walk resumes with the next segment.
"""

from __future__ import annotations

import contextlib
import mmap
import time
from dataclasses import dataclass, field, fields

import orjson
import zstandard

from benchtui.store.recording import format as fmt
from benchtui.store.recording.model import SessionMeta
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.varint import CodecError

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def clock(t: float | None) -> str:
    """A time for a warning sentence."""
    if t is None:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def meta_from_json(d: object, schema: int) -> SessionMeta:
    """``SessionMeta`` from its JSON form; unknown keys (a newer writer's) are ignored."""
    if not isinstance(d, dict):
        raise TypeError("metadata is not an object")
    known = {f.name for f in fields(SessionMeta)}
    kw = {k: v for k, v in d.items() if k in known}
    meta = SessionMeta(schema_version=schema, name=str(kw.get("name", "")),
                       session_id=str(kw.get("session_id", "")),
                       plan_text=str(kw.get("plan_text", "")),
                       plan_path=kw.get("plan_path") if isinstance(kw.get("plan_path"), str)
                       else None,
                       started=float(kw.get("started", 0.0)),
                       ended=float(kw["ended"]) if kw.get("ended") is not None else None,
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
    #: the file ends with a trailer (it was closed; its index must have been damaged)
    closed: bool = False
    warnings: list[str] = field(default_factory=list)


def walk_frames(mm: mmap.mmap, size: int, schema: int) -> Walk:
    """Every frame of the file, checked; damage skipped and noted."""
    walk = Walk()
    current: int | None = None
    pos = fmt.FILE_HEADER_SIZE
    while pos < size:
        if size - pos == fmt.TRAILER_SIZE and mm[pos:pos + 8] == fmt.TRAILER_MAGIC:
            walk.closed = True
            break
        h = fmt.read_frame_header(mm, pos, pos)
        payload = mm[h.payload_offset:h.end] if h is not None and h.end <= size else None
        if h is None or payload is None or not fmt.payload_ok(h, payload):
            after = resync(mm, pos + 1, size)
            short = size - pos < fmt.FRAME_HEADER_SIZE or (h is not None and h.end > size)
            walk.warnings.append(_damage(pos, after, truncated=after is None and short))
            damaged = h.segment if h is not None and h.type == fmt.DATA else current
            if damaged is not None:
                walk.cut.add(damaged)
            if after is None:
                break
            pos = after
            continue
        if h.type == fmt.META:
            try:
                walk.meta = meta_from_json(orjson.loads(payload), schema)
            except (ValueError, TypeError):
                walk.warnings.append("the session's metadata cannot be read")
        elif h.type == fmt.DATA and h.segment not in walk.cut:
            seg = walk.data.get(h.segment)
            if seg is None and payload.startswith(_ZSTD_MAGIC):
                seg = walk.data[h.segment] = SegmentStats(h.segment, offset=h.offset)
            if seg is not None:
                seg.end = h.end
                seg.frames += 1
                current = h.segment
        elif h.type == fmt.SEGMENT_END:
            with contextlib.suppress(ValueError, TypeError, KeyError, CodecError,
                                     zstandard.ZstdError):
                # (when unreadable, the reader rebuilds the summary from the data)
                summary = orjson.loads(fmt.plain_payload(h, payload))
                walk.summaries[h.segment] = SegmentStats.from_json(summary)
        pos = h.end
    return walk


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
