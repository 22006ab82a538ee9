"""The session file's byte layout: file header, frames, trailer (docs/session-format.md).

A session file is a 16-byte file header followed by frames, appended and never rewritten:

    file header  b"BTUISESS" | u16 schema | u16 header size (16) | u32 CRC-32 of bytes 0..11
    frame        44-byte frame header | payload
    ...
    trailer      (only when the recorder closed the file) 24 bytes at the very end

Every frame header carries a sync word (so that a reader can find the next frame after damaged
bytes), the frame's type, the time range of the records in it, and two CRC-32s: one of the
header itself (so that a reader can walk the frames without reading the payloads) and one of
the payload. All integers and floats are little-endian.
"""

from __future__ import annotations

import mmap
import struct
import zlib
from dataclasses import dataclass
from typing import Final

#: The schema this benchtui writes, and the newest it reads.
SCHEMA_VERSION: Final = 2

MAGIC: Final = b"BTUISESS"
FILE_HEADER = struct.Struct("<8sHHI")
FILE_HEADER_SIZE: Final = FILE_HEADER.size  # 16

SYNC: Final = b"\xb7FRM"
#: sync, type, flags, reserved, segment, payload length, raw length, t_first, t_last,
#: payload CRC, header CRC (of the 40 bytes before it).
FRAME_HEADER = struct.Struct("<4sBBHIIIddII")
FRAME_HEADER_SIZE: Final = FRAME_HEADER.size  # 44

TRAILER_MAGIC: Final = b"BTUIEND\x00"
#: magic, offset of the index frame, length of the index frame (header + payload), CRC-32 of
#: the 20 bytes before it.
TRAILER = struct.Struct("<8sQII")
TRAILER_SIZE: Final = TRAILER.size  # 24

# Frame types.
META: Final = 1          # JSON: the session's metadata (a later META replaces an earlier one)
DATA: Final = 2          # a piece of a segment's zstd stream: the records of about a second
SEGMENT_END: Final = 3   # JSON (zstd; plain from older writers): summary of the segment just
                         # ended (time range, events, gaps)
INDEX: Final = 4         # zstd JSON: every segment summary and the final metadata; at close
STATS: Final = 5         # zstd: stats-block pieces written at a segment's end (statsframe.py)
FIGS: Final = 6          # zstd: the figure track of a segment, written at its end (figframe.py)

#: What a frame of each type is, in a sentence ("the index at byte 20263 ...").
KIND_NAMES: Final = {META: "the session's metadata", DATA: "the data frame",
                     SEGMENT_END: "the segment summary", INDEX: "the index",
                     STATS: "the stats frame", FIGS: "the figure-track frame"}

# Frame flags.
ZSTD: Final = 1          # the payload is zstd (DATA: part of the segment's stream)
LAST: Final = 2          # DATA: the last piece of its segment (the zstd frame ends in it)

#: Records reach a file a little out of their time order (an event is stamped when it
#: happened, a batch of samples when it arrived; frames are sealed by arrival): a frame that
#: starts after a window's end may be followed by one with a record inside it. A reader
#: looking for a window's records goes on through frames that start up to this many seconds
#: past its end (skipping them: they are not decoded, only decompressed, which the next
#: window needs anyway).
LATE_SECONDS: Final = 5.0
#: A frame payload larger than this is damage, not data (a reader must not allocate it).
MAX_PAYLOAD: Final = 256 * 1024 * 1024


def file_header(schema: int = SCHEMA_VERSION) -> bytes:
    head = struct.pack("<8sHH", MAGIC, schema, FILE_HEADER_SIZE)
    return head + struct.pack("<I", zlib.crc32(head))


@dataclass(frozen=True, slots=True)
class FileHeader:
    schema: int
    crc_ok: bool
    magic_ok: bool = True

    @property
    def damaged(self) -> bool:
        """The CRC proves that a byte of the header changed; which one it cannot say, so
        none of its fields is trusted (the schema field of a damaged header is not the
        writer's)."""
        return not (self.crc_ok and self.magic_ok)


def read_file_header(data: bytes | mmap.mmap) -> FileHeader | None:
    """The file header at the start of ``data``; None when ``data`` does not start with one
    at all: too short, or neither the magic nor a frame right after the header's 16 bytes
    (a header with a damaged magic is still a session file's when its first frame follows)."""
    if len(data) < FILE_HEADER_SIZE:
        return None
    magic, schema, _size, crc = FILE_HEADER.unpack_from(data)
    magic_ok = magic == MAGIC
    if not magic_ok and read_frame_header(data, FILE_HEADER_SIZE, FILE_HEADER_SIZE) is None:
        return None
    return FileHeader(schema, zlib.crc32(data[:12]) == crc, magic_ok)


@dataclass(frozen=True, slots=True)
class FrameHeader:
    """A frame's header as read (``offset``: where the header starts in the file)."""

    offset: int
    type: int
    flags: int
    segment: int
    payload_len: int
    raw_len: int
    t_first: float
    t_last: float
    payload_crc: int

    @property
    def payload_offset(self) -> int:
        return self.offset + FRAME_HEADER_SIZE

    @property
    def end(self) -> int:
        return self.offset + FRAME_HEADER_SIZE + self.payload_len


def frame(type_: int, payload: bytes, *, flags: int = 0, segment: int = 0, raw_len: int = 0,
          t_first: float = 0.0, t_last: float = 0.0) -> bytes:
    """A whole frame (header + payload), ready to append."""
    head = struct.pack("<4sBBHIIIddI", SYNC, type_, flags, 0, segment, len(payload), raw_len,
                       t_first, t_last, zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload


def read_frame_header(data: bytes | mmap.mmap, pos: int, offset: int) -> FrameHeader | None:
    """The frame header at ``data[pos:]`` (file offset ``offset``), or None when there is no
    valid one there (short, wrong sync word, bad CRC, absurd length). A type this reader does
    not know is returned: callers skip it (a newer writer's addition)."""
    if len(data) - pos < FRAME_HEADER_SIZE or data[pos:pos + 4] != SYNC:
        return None
    (_sync, type_, flags, _res, segment, plen, raw_len, t_first, t_last, pcrc,
     hcrc) = FRAME_HEADER.unpack_from(data, pos)
    if zlib.crc32(data[pos:pos + FRAME_HEADER_SIZE - 4]) != hcrc:
        return None
    if plen > MAX_PAYLOAD:
        return None
    return FrameHeader(offset, type_, flags, segment, plen, raw_len, t_first, t_last, pcrc)


def named(h: FrameHeader) -> str:
    """A frame in words, with where it is ("the index at byte 20263")."""
    kind = f"the summary of segment {h.segment}" if h.type == SEGMENT_END else \
        KIND_NAMES.get(h.type, f"a frame of type {h.type}")
    return f"{kind} at byte {h.offset}"


def payload_ok(header: FrameHeader, payload: bytes | memoryview) -> bool:
    return len(payload) == header.payload_len and zlib.crc32(payload) == header.payload_crc


def trailer(index_offset: int, index_len: int) -> bytes:
    head = struct.pack("<8sQI", TRAILER_MAGIC, index_offset, index_len)
    return head + struct.pack("<I", zlib.crc32(head))


def read_trailer(data: bytes) -> tuple[int, int] | None:
    """(index frame offset, its length) from the last ``TRAILER_SIZE`` bytes, if valid."""
    if len(data) != TRAILER_SIZE or not data.startswith(TRAILER_MAGIC):
        return None
    _magic, offset, length, crc = TRAILER.unpack(data)
    if zlib.crc32(data[:20]) != crc:
        return None
    return offset, length
