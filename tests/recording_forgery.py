"""Damaged and forged copies of a real recording, made deterministically for
``test_recording_fuzz.py`` (issue 29): cut anywhere, a bit flipped in every kind of frame and
in the trailer, frames whose JSON is of the wrong type (with valid CRCs), zstd bombs in every
kind of compressed frame, indexes that do not describe the file's frames (no segments,
another session's, a segment left out or moved), and files appended to one another.

A forged frame keeps its CRCs valid (anyone can compute them): the checks under test are
the ones on a frame's content. Forgeries of a frame inside the file keep its payload's
length, so that the file's index stays true to its frames: a summary is re-written as plain
JSON (flag 0, as writers before issue 20 wrote them) padded with spaces, a bomb as a zstd
frame made by hand (RLE blocks: 4 bytes for every 128 KiB it declares) padded with a raw
block. The index is the last frame: it is re-written whole, with its trailer.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import zstandard

from benchtui.model.events import Event
from benchtui.session.figure_track import FigureRecorder
from benchtui.session.ghost_digest import GhostDigest
from benchtui.store.recording import SessionReader, SessionWriter
from benchtui.store.recording import format as fmt

#: What the issue's bomb declared (a 350 KB file, 4.2 GB once decompressed).
BOMB = 4_200_000_000
_BLOCK = 128 * 1024


@dataclass(frozen=True)
class Copy:
    """A damaged copy: its name (what was done to it), its bytes, and for the copies whose
    frames are intact but were read another way (a spliced index, a file appended), the
    session and the samples the frames hold: what the reader must report."""

    name: str
    data: bytes
    frames_win: bool = False
    #: a zstd bomb (or JSON nested without end): read in a child under a memory limit
    bomb: bool = False


def resegment(src: Path, dst: Path, *, session_id: str | None = None, name: str | None = None,
              segment_seconds: float = 2.0) -> None:
    """``src`` (a real recording) written again with segments of ``segment_seconds``: every
    segment then has its data, stats, figure-track and summary frames. With ``session_id``
    and ``name``: as another session (for splicing)."""
    digest = GhostDigest()
    with SessionReader.open(str(src)) as reader:
        meta = reader.meta
        if session_id is not None:
            meta.session_id = session_id
        meta.name = name or meta.name
        meta.figures = digest.name
        writer = SessionWriter(str(dst), meta, segment_seconds=segment_seconds)
        track = FigureRecorder(digest, writer.add_figures)
        frame_end = None
        for t, record in reader.timed_records(-math.inf, math.inf):
            if frame_end is not None and t >= frame_end:
                writer.write_frame()
                frame_end = None
            writer.add_record(t, record)
            if isinstance(record, Event):
                track.on_event(record)
            elif isinstance(record, list):
                track.on_samples(record, t)
            frame_end = t + 0.5 if frame_end is None else frame_end
        writer.close(ended=reader.end + 1.0)


def frames(data: bytes) -> list[fmt.FrameHeader]:
    """The frames of an intact file, in order."""
    out = []
    pos = fmt.FILE_HEADER_SIZE
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        out.append(h)
        pos = h.end
    return out


def reframed(h: fmt.FrameHeader, payload: bytes, *, flags: int | None = None,
             raw_len: int | None = None) -> bytes:
    """``h``'s frame with another payload, its CRCs valid."""
    return fmt.frame(h.type, payload, flags=h.flags if flags is None else flags,
                     segment=h.segment, raw_len=h.raw_len if raw_len is None else raw_len,
                     t_first=h.t_first, t_last=h.t_last)


def replaced(data: bytes, h: fmt.FrameHeader, frame: bytes) -> bytes:
    return data[:h.offset] + frame + data[h.end:]


def padded_json(value: object, size: int) -> bytes:
    raw = orjson.dumps(value)
    assert len(raw) <= size, (len(raw), size)
    return raw + b" " * (size - len(raw))


def with_index(data: bytes, payload: bytes, *, raw_len: int = 0) -> bytes:
    """``data`` with its INDEX frame (its last) replaced by one of ``payload``, and a trailer
    pointing at it."""
    index = [h for h in frames(data) if h.type == fmt.INDEX][-1]
    frame = reframed(index, payload, raw_len=raw_len)
    return data[:index.offset] + frame + fmt.trailer(index.offset, len(frame))


def index_json(data: bytes) -> dict[str, object]:
    index = [h for h in frames(data) if h.type == fmt.INDEX][-1]
    found = orjson.loads(zstandard.ZstdDecompressor().decompress(data[index.payload_offset:
                                                                      index.end]))
    assert isinstance(found, dict)
    return found


def zstd_frame(blocks: bytes, declared: int | None) -> bytes:
    """A zstd frame header (a 128 KiB window; the content size ``declared``, 8 bytes, or
    none) followed by ``blocks``."""
    window = bytes([(17 - 10) << 3])
    if declared is None:
        return b"\x28\xb5\x2f\xfd" + b"\x00" + window
    return b"\x28\xb5\x2f\xfd" + b"\xc0" + window + struct.pack("<Q", declared)


def block(kind: int, size: int, content: bytes, *, last: bool) -> bytes:
    head = int(last) | kind << 1 | size << 3
    return head.to_bytes(3, "little") + content


def bomb_blocks(total: int, *, last: bool, fill: int = 0) -> bytes:
    """RLE blocks decompressing to ``total`` bytes of one byte (4 bytes of blocks for each
    128 KiB), then a raw block of ``fill`` bytes (to reach a length)."""
    out = bytearray()
    n, rest = divmod(total, _BLOCK)
    sizes = [_BLOCK] * n + ([rest] if rest else [])
    for i, size in enumerate(sizes):
        out += block(1, size, b"[", last=last and not fill and i == len(sizes) - 1)
    if fill:
        out += block(0, fill - 3, b" " * (fill - 3), last=last)
    return bytes(out)


def bomb_payload(size: int, *, declared: int, rle: int) -> bytes:
    """A one-shot zstd frame of exactly ``size`` bytes declaring ``declared`` bytes, holding
    ``rle`` bytes of RLE blocks and a raw block filling it up."""
    head = zstd_frame(b"", declared)
    blocks = bomb_blocks(rle, last=False)
    fill = size - len(head) - len(blocks)
    assert fill >= 3, (size, len(head), len(blocks))
    return head + blocks + block(0, fill - 3, b" " * (fill - 3), last=True)


def flipped(data: bytes, at: int, bit: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 1 << bit
    return bytes(out)


def damaged_copies(a: bytes, b: bytes) -> Iterator[Copy]:
    """Every copy of ``a`` the fuzz test reads (``b``: another recording, for splicing)."""
    yield from _cut(a)
    yield from _flips(a)
    yield from _forged_json(a)
    yield from _bombs(a)
    yield from _spliced(a, b)


def _chosen(a: bytes) -> list[fmt.FrameHeader]:
    """A frame of every kind, the second of its kind (the first where there is one only: the
    metadata, the index), and a data frame that does not start its segment."""
    fs = frames(a)
    out = []
    for kind in sorted({h.type for h in fs}):
        of_kind = [h for h in fs if h.type == kind]
        out.append(of_kind[min(1, len(of_kind) - 1)])
    out.append(_continuing(fs)[0])
    return out


def _continuing(fs: list[fmt.FrameHeader]) -> list[fmt.FrameHeader]:
    """The data frames that do not start their segment (a piece of its zstd stream)."""
    started: set[int] = set()
    out = []
    for h in fs:
        if h.type == fmt.DATA:
            if h.segment in started:
                out.append(h)
            started.add(h.segment)
    return out


def _cut(a: bytes) -> Iterator[Copy]:
    ends = {fmt.FILE_HEADER_SIZE - 3, len(a) - fmt.TRAILER_SIZE, len(a) - 10}
    for h in _chosen(a):
        ends |= {h.offset, h.offset + 20, h.payload_offset + h.payload_len // 2}
    for n in sorted(ends):
        yield Copy(f"cut at byte {n}", a[:n])


def _flips(a: bytes) -> Iterator[Copy]:
    rng = random.Random(29)
    for h in _chosen(a):
        at = h.offset + rng.randrange(4, fmt.FRAME_HEADER_SIZE)
        yield Copy(f"bit flipped in the header of frame type {h.type} at {h.offset}",
                   flipped(a, at, rng.randrange(8)))
        at = h.payload_offset + rng.randrange(h.payload_len)
        yield Copy(f"bit flipped in the payload of frame type {h.type} at {h.offset}",
                   flipped(a, at, rng.randrange(8)))
    trailer = len(a) - fmt.TRAILER_SIZE
    for field, (lo, hi) in (("magic", (0, 8)), ("index offset", (8, 16)),
                            ("index length", (16, 20)), ("CRC", (20, 24))):
        yield Copy(f"bit flipped in the trailer's {field}",
                   flipped(a, trailer + rng.randrange(lo, hi), rng.randrange(8)))
    yield Copy("bit flipped in the file header", flipped(a, 9, 3))


def _summary_forgeries(h: fmt.FrameHeader) -> Iterator[tuple[str, object]]:
    base = {"segment": h.segment, "offset": 16, "end": 16, "frames": 1, "samples": 1}
    yield "a list", [1, 2, 3]
    yield "null", None
    yield "a negative count", {**base, "samples": -5}
    yield "an event in the year 10^292", {**base, "events": [{"t": 1e300, "kind": "mark"}]}
    yield "figure frames with text times", {**base, "figures": [[100, "nan", "inf"]]}
    yield "stats blocks of the wrong shape", {**base, "blocks": [5, ["h", "x"]],
                                              "stats": [[1, 5], "x"]}


#: Events whose data have the wrong types, for each kind a reader of events looks into.
STRANGE_EVENTS = [
    {"kind": "step_start", "step": "x", "data": {"hosts": 5, "index": "a", "repeat": [],
                                                 "repeats": {}, "matrix": 3, "sweep": 7,
                                                 "tool": 9, "expected_seconds": "x"}},
    {"kind": "run_start", "host": "here", "step": "x", "data": {"command": 5}},
    {"kind": "run_end", "host": "here", "step": "x", "data": {"status": "x", "outcome": 5}},
    {"kind": "host_state", "host": "here", "data": {"state": 5}},
    {"kind": "facts", "host": "here", "data": {"facts": 5}},
    {"kind": "step_end", "step": "x", "data": {"seconds": "x", "silences": 5,
                                               "outcome": [], "ok": "yes"}},
    {"kind": "mark", "data": {"note": []}},
    {"kind": "session_end", "data": {"outcome": 5, "interrupted": "x"}},
    {"kind": 5, "level": [], "message": {}, "host": 3, "step": 4, "data": []},
]


def _strange_events(a: bytes, index: fmt.FrameHeader, summary: fmt.FrameHeader
                    ) -> Iterator[Copy]:
    """A summary (in the frames, read when there is no index; in the index) whose events'
    data have the wrong types: JSON that is valid, of an event's shape, with nonsense in it."""
    real = orjson.loads(zstandard.ZstdDecompressor().decompress(
        a[summary.payload_offset:summary.end]))
    t = real["t0"]
    events = [{"t": t + i / 10, "message": "m", "level": "info", **e}
              for i, e in enumerate(STRANGE_EVENTS)]
    forged = {**real, "events": real["events"] + events}
    plain = reframed(summary, orjson.dumps(forged), flags=0, raw_len=0)
    yield Copy("summary events of strange types, no index",
               replaced(a, summary, plain)[:index.offset + len(plain) - summary.end
                                           + summary.offset])
    doc = index_json(a)
    segments = doc["segments"]
    assert isinstance(segments, list)
    segments[summary.segment] = forged
    yield Copy("index events of strange types", with_index(
        a, zstandard.ZstdCompressor().compress(orjson.dumps(doc))))


def _forged_json(a: bytes) -> Iterator[Copy]:
    fs = frames(a)
    index = [h for h in fs if h.type == fmt.INDEX][-1]
    summary = [h for h in fs if h.type == fmt.SEGMENT_END][1]
    yield from _strange_events(a, index, summary)
    for what, value in _summary_forgeries(summary):
        plain = reframed(summary, padded_json(value, summary.payload_len), flags=0,
                         raw_len=summary.payload_len)
        forged = replaced(a, summary, plain)
        yield Copy(f"summary JSON is {what}", forged)
        yield Copy(f"summary JSON is {what}, no index", forged[:index.offset])
        doc = index_json(a)
        segments = doc["segments"]
        assert isinstance(segments, list)
        segments[1] = value
        yield Copy(f"index summary JSON is {what}", with_index(a, zstandard.ZstdCompressor()
                                                               .compress(orjson.dumps(doc))))
    meta = fs[0]
    for what, value in (("a list", [1]), ("a start that is text", {"name": "x", "started": "x"})):
        plain = reframed(meta, padded_json(value, meta.payload_len))
        yield Copy(f"metadata JSON is {what}", replaced(a, meta, plain))
        yield Copy(f"metadata JSON is {what}, no index", replaced(a, meta, plain)[:index.offset])
    compress = zstandard.ZstdCompressor().compress
    for what, value in (("a list", [1, 2]), ("a string", "index"),
                        ("meta that is a list", {"meta": [], "segments": []}),
                        ("segments that are an object", {"meta": index_json(a)["meta"],
                                                         "segments": {"a": 1}}),
                        ("a start that is text", {"meta": {"started": "x"}, "segments": []})):
        yield Copy(f"index JSON is {what}", with_index(a, compress(orjson.dumps(value))))
    deep = b"[" * 200_000 + b"]" * 200_000
    yield Copy("index JSON nested 200,000 deep", with_index(a, compress(deep)), bomb=True)


def _bombs(a: bytes) -> Iterator[Copy]:
    fs = frames(a)
    index = [h for h in fs if h.type == fmt.INDEX][-1]
    for h in [next(h for h in fs if h.type == t) for t in (fmt.SEGMENT_END, fmt.STATS,
                                                              fmt.FIGS)]:
        payload = bomb_payload(h.payload_len, declared=BOMB, rle=4 * _BLOCK)
        for raw_len, how in ((0, "declared in its zstd frame"), (BOMB, "declared twice"),
                             (h.raw_len, "its header declaring the real size")):
            forged = replaced(a, h, reframed(h, payload, raw_len=raw_len))
            yield Copy(f"zstd bomb in frame type {h.type}, {how}", forged, bomb=True)
            yield Copy(f"zstd bomb in frame type {h.type}, {how}, no index",
                       forged[:index.offset], bomb=True)
        # a real one, of no declared size: 4.2 GB of '[' in 128 KB of blocks (the file grows)
        real = zstd_frame(bomb_blocks(BOMB, last=True), None)
        yield Copy(f"undeclared zstd bomb in frame type {h.type}, no index",
                   replaced(a, h, reframed(h, real, raw_len=0))[
                       :index.offset + len(real) - h.payload_len], bomb=True)
    real = zstd_frame(bomb_blocks(BOMB, last=True), None)
    yield Copy("undeclared zstd bomb as the index", with_index(a, real), bomb=True)
    yield Copy("zstd bomb as the index, declared", with_index(
        a, zstd_frame(bomb_blocks(4 * _BLOCK, last=True), BOMB)), bomb=True)
    yield Copy("zstd bomb as the index, declared in its header too", with_index(
        a, zstd_frame(bomb_blocks(4 * _BLOCK, last=True), BOMB), raw_len=BOMB), bomb=True)
    yield from _data_bombs(a, fs)


def _data_bombs(a: bytes, fs: list[fmt.FrameHeader]) -> Iterator[Copy]:
    """A data frame (not its segment's first: blocks only) holding RLE blocks of far more
    than its raw length, filled up to its length."""
    h = max(_continuing(fs), key=lambda h: h.payload_len)
    room = h.payload_len - 3
    rle = (room // 4 - 1) * _BLOCK
    blocks = bomb_blocks(rle, last=False, fill=h.payload_len - (rle // _BLOCK) * 4)
    assert len(blocks) == h.payload_len
    for raw_len, how in ((h.raw_len, "its header declaring the real size"),
                         (BOMB, "its header declaring 4.2 GB"),
                         (900_000_000, "its header declaring 900 MB")):
        forged = replaced(a, h, reframed(h, blocks, raw_len=raw_len))
        yield Copy(f"zstd bomb in a data frame, {how}", forged, bomb=True)


def _spliced(a: bytes, b: bytes) -> Iterator[Copy]:
    index = [h for h in frames(a) if h.type == fmt.INDEX][-1]
    b_index = [h for h in frames(b) if h.type == fmt.INDEX][-1]
    b_frame = b[b_index.offset:b_index.end]
    yield Copy("another recording's index spliced on", a[:index.offset] + b_frame
               + fmt.trailer(index.offset, len(b_frame)), frames_win=True)
    compress = zstandard.ZstdCompressor().compress
    doc = index_json(a)
    segments = doc["segments"]
    assert isinstance(segments, list)
    meta = doc["meta"]
    assert isinstance(meta, dict)
    for what, changed in (
            ("listing no segments", {**doc, "segments": []}),
            ("leaving its second segment out", {**doc, "segments": segments[:1] + segments[2:]}),
            ("of another session id", {**doc, "meta": {**meta, "session_id": "another"}}),
            ("with its segments moved by a byte", {**doc, "segments": [
                {**s, "offset": s["offset"] + 1} for s in segments]})):
        yield Copy(f"an index {what}", with_index(a, compress(orjson.dumps(changed))),
                   frames_win=True)
    yield Copy("cat a.btr b.btr", a + b, frames_win=True)
    yield Copy("cat a.btr a.btr", a + a, frames_win=True)
    yield Copy("a.btr with b.btr's frames after it (no file header)",
               a[:index.offset] + b[fmt.FILE_HEADER_SIZE:], frames_win=True)
    yield Copy("a.btr cut in a frame, then b.btr", a[:index.offset - 30] + b)
    yield Copy("a.btr and 1000 random bytes", a + random.Random(1).randbytes(1000),
               frames_win=True)

