"""Opening a closed session file by its index, once the index is shown to describe this
file's frames (docs/session-format.md, "What a reader checks").

A closed file ends with an INDEX frame (the final metadata and every segment's summary) and
a trailer pointing at it: reading those two is enough to open a file of any size. But an
index is only a claim about the frames. Before it is believed:

- its trailer, its frame's CRCs and its JSON are checked, the JSON against what an index must
  be (an object, its metadata an object with finite times, each summary a summary: counts
  whole, times finite; ``SegmentStats.from_json``), its size before it is decompressed
  (``inflate.py``);
- its segments must lie in the file, in order, each starting with a data frame of its number;
- it must list every data frame: the frames between its segments (and after the last, up to
  the index) are followed by their headers (three or four a segment: its stats, figure track
  and summary), and a data frame among them means the index leaves data out (an index listing
  no segment would hide every sample);
- it must be this file's session's: the first metadata frame's session id and start time
  must be the index's (another recording's index spliced on describes the other session).

An index that fails any of these is not used, with one sentence saying why and where; the
file is then read frame by frame (``walk.py``): the frames win.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass

from benchtui.store.recording import format as fmt
from benchtui.store.recording.inflate import FrameError, json_object
from benchtui.store.recording.model import SessionMeta
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.walk import meta_from_json


class UnusableIndex(Exception):
    """The file has an index that cannot be used; ``sentence`` says why (and where)."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


@dataclass(frozen=True, slots=True)
class Indexed:
    meta: SessionMeta
    segments: list[SegmentStats]
    #: where the index frame is, and where the recording ends (after its trailer)
    at: int
    end: int


def read_index(mm: mmap.mmap, size: int, schema: int, *, strict: bool = False,
               at: int | None = None) -> Indexed | None:
    """The file's index, checked (the module's doc); None when the file has no valid
    trailer (it was not closed, or the trailer is damaged: walking the frames says which).
    ``UnusableIndex`` when it has one whose index cannot be used. ``strict`` (``info
    --verify``): the summaries' stats-block lists are checked too. ``at``: the index frame
    is there (found by walking the frames: its trailer is damaged), not where the trailer
    points."""
    if size < fmt.FILE_HEADER_SIZE + fmt.TRAILER_SIZE:
        return None
    if at is None:
        found = fmt.read_trailer(mm[size - fmt.TRAILER_SIZE:size])
        if found is None:
            return None
        offset, length = found
        where = f"the file's index (at byte {offset}, where its trailer points)"
    else:
        offset, length = at, size - fmt.TRAILER_SIZE - at
        where = f"the file's index (at byte {offset})"
    h = fmt.read_frame_header(mm, offset, offset) if offset < size else None
    if h is None or h.type != fmt.INDEX or h.end != offset + length \
            or h.end != size - fmt.TRAILER_SIZE:
        raise UnusableIndex(f"{where} is not there or is damaged")
    payload = mm[h.payload_offset:h.end]
    if not fmt.payload_ok(h, payload):
        raise UnusableIndex(f"{where} is damaged: its CRC does not match")
    try:
        index = json_object(h, payload)
        meta = meta_from_json(index.get("meta"), schema)
        listed = index.get("segments")
        if not isinstance(listed, list):
            raise ValueError("its 'segments' is not a list")
        segments = [_summary(i, s, strict) for i, s in enumerate(listed)]
    except FrameError as exc:
        raise UnusableIndex(f"{where} is not what it must be: {exc.reason}") from None
    except (ValueError, TypeError) as exc:
        raise UnusableIndex(f"{where} is not what it must be: {exc}") from None
    why = _out_of_place(segments, offset) or _hidden_data(mm, segments, offset) \
        or _other_session(mm, size, meta, schema)
    if why is not None:
        raise UnusableIndex(f"{where} does not describe this file's frames: {why}")
    return Indexed(meta, segments, offset, size)


def _summary(i: int, d: object, strict: bool) -> SegmentStats:
    try:
        return SegmentStats.from_json(d, strict=strict)
    except ValueError as exc:
        raise ValueError(f"its summary {i}: {exc}") from None


def _out_of_place(segments: list[SegmentStats], index_at: int) -> str | None:
    """Why the segments cannot be where the index says (None: they can)."""
    pos = fmt.FILE_HEADER_SIZE
    for seg in segments:
        if not pos <= seg.offset <= seg.end <= index_at:
            return (f"its segment {seg.number} would span bytes {seg.offset} to {seg.end}, "
                    "out of order or outside the file's frames")
        pos = seg.end
    return None


def _hidden_data(mm: mmap.mmap, segments: list[SegmentStats], index_at: int) -> str | None:
    """Why the index does not list the file's data frames (None: it does). Only the frames
    between its segments are followed (by their headers): a few a segment."""
    pos = fmt.FILE_HEADER_SIZE
    for seg in segments:
        found = _data_between(mm, pos, seg.offset)
        if found is not None:
            return _unlisted(found)
        h = fmt.read_frame_header(mm, seg.offset, seg.offset)
        if h is not None and (h.type != fmt.DATA or h.segment != seg.number):
            return (f"its segment {seg.number} starts at byte {seg.offset}, where there is "
                    f"{fmt.named(h)} instead of a data frame of that segment")
        # (a damaged header there is damage, not disagreement: reading the segment says so)
        pos = seg.end
    found = _data_between(mm, pos, index_at)
    return None if found is None else _unlisted(found)


def _unlisted(h: fmt.FrameHeader) -> str:
    return f"the data frame of segment {h.segment} at byte {h.offset} is in none of its segments"


def _data_between(mm: mmap.mmap, pos: int, end: int) -> fmt.FrameHeader | None:
    """The first data frame met following the frames' headers from ``pos`` to ``end``;
    None when there is none (or at damage, which only reading every frame can tell about:
    ``info --verify``)."""
    while pos < end:
        h = fmt.read_frame_header(mm, pos, pos)
        if h is None:
            return None
        if h.type == fmt.DATA:
            return h
        pos = h.end
    return None


def _other_session(mm: mmap.mmap, size: int, meta: SessionMeta, schema: int) -> str | None:
    """Why the index is another session's than the file's first metadata frame says
    (None: the same session, or no readable first frame to tell)."""
    at = fmt.FILE_HEADER_SIZE
    h = fmt.read_frame_header(mm, at, at)
    if h is None or h.type != fmt.META or h.end > size \
            or not fmt.payload_ok(h, mm[h.payload_offset:h.end]):
        return None
    try:
        first = meta_from_json(json_object(h, mm[h.payload_offset:h.end]), schema)
    except (ValueError, TypeError):
        return None
    if (first.session_id, first.started) == (meta.session_id, meta.started):
        return None
    return (f"it is another session's ({meta.name or '?'}, id {meta.session_id or '?'}), not "
            f"this file's ({first.name or '?'}, id {first.session_id or '?'}, whose metadata "
            f"is at byte {at})")
