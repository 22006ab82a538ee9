"""Decompressing a frame's payload within what it declares: a forged or damaged payload (a
zstd bomb, a size that lies) is refused before it costs memory (docs/session-format.md,
"What a reader checks").

A compressed payload says how big it is once decompressed: in the frame header's raw length
(DATA and SEGMENT_END frames; every compressed kind since issue 29) and, for a payload that is
one whole zstd frame (SEGMENT_END, INDEX, STATS, FIGS), in that zstd frame's own header. A
reader checks, before it decompresses anything, that

- the size is declared, and where both say it, they agree;
- it is sane for the kind: at most ``Bound.most``, and at most ``Bound.ratio`` times the
  compressed payload once it is past ``Bound.floor`` (JSON, the summaries' and the index's,
  compresses ~3-16x: measured on recordings and on imports of 10^4 steps; a bomb ~10^4x; a
  JSON document costs ~10-25 times its size once parsed, so its size must be kept near what
  the file's own bytes justify);
- decompressing gives that many bytes and no more. A one-shot frame is decompressed into a
  buffer of its declared size (zstd refuses a frame that would overflow it). A DATA piece is
  part of its segment's stream and has no size of its own: the headers of its zstd blocks are
  read first (a handful a piece), and what they can decompress to (a raw or RLE block its size,
  a compressed one at most 128 KiB) must stay within twice its raw length and a MiB.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from typing import Final

import orjson
import zstandard

from benchtui.store.recording import format as fmt
from benchtui.store.recording.varint import CodecError

#: What a compressed zstd block decompresses to at most (zstd's Block_Maximum_Size).
_BLOCK_MAX: Final = 128 * 1024
_RAW, _RLE, _COMPRESSED = 0, 1, 2


class FrameError(CodecError):
    """A frame's payload is not what it must be; ``reason`` says why, as a clause ("it
    declares 4.2 GB once decompressed, ...") after one that names the frame ("the index at
    byte 20263 is not what it must be: ")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Bound:
    """The largest decompressed size a frame of a kind may declare: at most ``most``, and
    at most ``ratio`` times its payload when that is more than ``floor``."""

    most: int
    floor: int
    ratio: int

    def limit(self, payload_len: int) -> int:
        return min(self.most, max(self.floor, self.ratio * payload_len))


#: Per frame type. A DATA body is decoded frame by frame; a segment ends at 32 MiB of them
#: (``writer.SEGMENT_RAW_BYTES``), but an older ``benchtui import`` wrote a run's whole text
#: in one frame (up to the 512 MiB an input may be): 1 GiB, and past 32 MiB at most 1024x its
#: payload (text compresses ~3-20x; an idle fleet's samples far more, in frames far smaller).
BOUNDS: Final = {
    fmt.DATA: Bound(1 << 30, 32 << 20, 1024),
    fmt.SEGMENT_END: Bound(256 << 20, 1 << 20, 64),
    fmt.INDEX: Bound(1 << 30, 1 << 20, 64),
    fmt.STATS: Bound(256 << 20, 1 << 20, 64),
    fmt.FIGS: Bound(256 << 20, 1 << 20, 64),
}


def _size(n: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def check_declared(h: fmt.FrameHeader, declared: int) -> None:
    """``FrameError`` when ``declared`` (bytes once decompressed) is more than a frame of
    its kind may hold."""
    bound = BOUNDS.get(h.type)
    if bound is None or declared <= bound.limit(h.payload_len):
        return
    if declared > bound.most:
        raise FrameError(f"it declares {_size(declared)} once decompressed, more than such a "
                         f"frame may hold ({_size(bound.most)})")
    times = declared // max(h.payload_len, 1)
    raise FrameError(f"it declares {_size(declared)} once decompressed, {times} times its "
                     f"{_size(h.payload_len)} (a zstd bomb, or damage)")


def inflate(h: fmt.FrameHeader, payload: bytes | memoryview) -> bytes:
    """The payload of a one-shot zstd frame (SEGMENT_END, INDEX, STATS, FIGS), decompressed
    within its declared size; ``FrameError`` when it does not declare one, when its two
    declarations disagree, when the size is not sane for the kind, or when it does not
    decompress to exactly that."""
    try:
        declared = zstandard.frame_content_size(payload)
    except zstandard.ZstdError:
        raise FrameError("it is not a zstd frame") from None
    if declared < 0:
        raise FrameError("it does not say how big it is once decompressed")
    if h.raw_len and h.raw_len != declared:
        raise FrameError(f"it says {_size(h.raw_len)} once decompressed in its header but "
                         f"{_size(declared)} in its zstd frame")
    check_declared(h, declared)
    try:
        out = zstandard.ZstdDecompressor().decompress(payload)
    except zstandard.ZstdError as exc:
        raise FrameError(f"it does not decompress ({exc})") from None
    if len(out) != declared:
        raise FrameError(f"it decompresses to {len(out)} bytes, not the {declared} it declares")
    return out


class PieceCheck:
    """The DATA pieces of one segment's zstd stream, checked before they are decompressed
    (the module's doc): ``check`` each piece in order."""

    __slots__ = ("_checksum", "_started")

    def __init__(self) -> None:
        self._started = False
        self._checksum = False

    def check(self, h: fmt.FrameHeader, piece: bytes | memoryview) -> None:
        """``FrameError`` when the piece may decompress to more than its raw length
        allows."""
        check_declared(h, h.raw_len)
        pos = 0
        if not self._started:
            try:
                pos = zstandard.frame_header_size(piece)
                self._checksum = zstandard.get_frame_parameters(piece).has_checksum
            except zstandard.ZstdError:
                raise FrameError("it does not start its segment's zstd stream") from None
            self._started = True
        most = _blocks_bound(piece, pos, self._checksum)
        if most > 2 * h.raw_len + (1 << 20):
            raise FrameError(f"it may decompress to {_size(most)}, though its header says "
                             f"{_size(h.raw_len)} (a zstd bomb, or damage)")


def _blocks_bound(piece: bytes | memoryview, pos: int, checksum: bool) -> int:
    """What the zstd blocks from ``pos`` on can decompress to at most; ``FrameError`` when
    they are not whole blocks."""
    end = len(piece)
    most = 0
    while pos < end:
        if end - pos < 3:
            raise FrameError("it ends inside a zstd block header")
        head = piece[pos] | piece[pos + 1] << 8 | piece[pos + 2] << 16
        kind, size = head >> 1 & 3, head >> 3
        pos += 3
        if kind == _RAW:
            most += size
            pos += size
        elif kind == _RLE:
            most += size
            pos += 1
        elif kind == _COMPRESSED:
            most += _BLOCK_MAX
            pos += size
        else:
            raise FrameError("it holds a zstd block of a reserved type")
        if head & 1:  # the stream's last block
            pos += 4 if checksum else 0
            break
    if pos != end:
        raise FrameError("it is not whole zstd blocks")
    return most


def zstd_payload(data: mmap.mmap, size: int, at: int, type_: int) -> bytes | None:
    """The decompressed payload of the zstd frame of type ``type_`` whose header is at file
    offset ``at`` (STATS and FIGS frames, which summaries point at); None when there is no
    such frame there, or it is damaged or not what it must be."""
    h = fmt.read_frame_header(data, at, at) if 0 <= at < size else None
    if h is None or h.type != type_ or h.end > size:
        return None
    payload = data[h.payload_offset:h.end]
    if not fmt.payload_ok(h, payload):
        return None
    try:
        return inflate(h, payload)
    except FrameError:
        return None


def plain_payload(h: fmt.FrameHeader, payload: bytes | memoryview) -> bytes:
    """A checked payload as its writer made it: decompressed (``inflate``) when its flags
    say zstd (a SEGMENT_END's since summaries are compressed; an older writer's is plain
    JSON). ``FrameError`` when it is not what it must be."""
    if h.flags & fmt.ZSTD:
        return inflate(h, payload)
    return bytes(payload)


def json_object(h: fmt.FrameHeader, payload: bytes | memoryview) -> dict[str, object]:
    """A JSON frame's payload (META, SEGMENT_END, INDEX) as the object it must be;
    ``FrameError`` when it does not decompress within bounds, is not JSON, or is JSON of
    another type (a list, a string ...)."""
    raw = plain_payload(h, payload)
    try:
        found = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise FrameError(f"its payload is not JSON ({exc})") from None
    if not isinstance(found, dict):
        raise FrameError(f"its JSON is {_json_type(found)}, not an object")
    return found


def _json_type(value: object) -> str:
    names = {list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)
