"""Small integer encodings of the session codec: varints, planed varint lists, zigzag, byte
shuffling.

Most numbers in a recording are small (series ids, bucket index gaps, count differences).
A single number (a length, a count) is an unsigned LEB128 varint: 7 bits a byte, high bit set
when more bytes follow. A list of numbers is the same LEB128 bytes rearranged in planes: first
every number's first byte (n bytes), then the second byte of the numbers that have one, and so
on. It holds exactly the same bytes as plain LEB128, compresses as well, and is built and read
by list comprehensions and ``bytes()`` rather than a Python loop per byte (2-3x faster here).
Signed numbers are zigzag-mapped first (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import rshift
from typing import Final


class CodecError(ValueError):
    """A frame body does not decode (damage the CRCs did not catch, or a bug)."""


def zigzag(n: int) -> int:
    return n + n if n >= 0 else -n - n - 1


def unzigzag(z: int) -> int:
    return z >> 1 if not z & 1 else -((z + 1) >> 1)


#: zigzag(n) for -2**15 <= n < 2**15, indexed by n itself (a negative n from the end).
_ZIGZAG: Final[list[int]] = [*range(0, 1 << 16, 2), *range((1 << 16) - 1, 0, -2)]
#: A planed varint's byte in its first plane, for 0 <= v < 2**16.
_FIRST_BYTE: Final = bytes(v if v < 0x80 else (v & 0x7F) | 0x80 for v in range(1 << 16))
_MORE: Final = (0x7F).__lt__  # v > 0x7F: v has a byte in the next plane


def zigzags(values: Iterable[int]) -> list[int]:
    """zigzag of each value. Count differences are small: table look-ups in C for them."""
    vs = values if isinstance(values, list) else list(values)
    if vs and min(vs) >= -0x8000 and max(vs) < 0x8000:
        return list(map(_ZIGZAG.__getitem__, vs))
    return [n + n if n >= 0 else -n - n - 1 for n in vs]


def unzigzags(values: Iterable[int]) -> list[int]:
    return [z >> 1 if not z & 1 else -((z + 1) >> 1) for z in values]


def put_uvarint(out: bytearray, n: int) -> None:
    if n < 0:
        raise ValueError(f"negative varint {n}")
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def put_uvarints(out: bytearray, values: Sequence[int]) -> None:
    """Append ``values`` (each >= 0) as planed varints (the count is not written)."""
    if not values:
        return
    top = max(values)
    if min(values) < 0:
        raise ValueError(f"negative varint {min(values)}")
    vs = values
    while top >= 0x80:  # plane by plane, in C: filter, map and table look-ups
        big = list(filter(_MORE, vs))
        if top < 0x10000:
            out += bytes(map(_FIRST_BYTE.__getitem__, vs))
        else:
            out += bytes([v if v < 0x80 else (v & 0x7F) | 0x80 for v in vs])
        vs = list(map(rshift, big, repeat(7)))
        top >>= 7
    out += bytes(vs)  # the common case (every number < 128) goes straight here


def put_list(out: bytearray, values: Sequence[int]) -> None:
    """A count, then the values as planed varints."""
    put_uvarint(out, len(values))
    put_uvarints(out, values)


def put_blob(out: bytearray, data: bytes | bytearray) -> None:
    """A length-prefixed byte string."""
    put_uvarint(out, len(data))
    out += data


def get_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it)."""
    result = 0
    shift = 0
    try:
        while True:
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, pos
            shift += 7
            if shift > 70:
                raise CodecError("varint too long")
    except IndexError:
        raise CodecError("truncated varint") from None


def get_uvarints(buf: bytes, pos: int, count: int) -> tuple[list[int], int]:
    """``count`` planed varints from ``buf[pos:]``: (values, position after them)."""
    plane = buf[pos:pos + count]
    if len(plane) != count:
        raise CodecError("truncated varint list")
    pos += count
    if not plane or max(plane) < 0x80:
        return list(plane), pos
    more = count - len(plane.translate(None, _HIGH_BYTES))
    high, pos = get_uvarints(buf, pos, more)
    it = iter(high)
    return [b if b < 0x80 else (b & 0x7F) | (next(it) << 7) for b in plane], pos


def get_list(buf: bytes, pos: int) -> tuple[list[int], int]:
    count, pos = get_uvarint(buf, pos)
    return get_uvarints(buf, pos, count)


_HIGH_BYTES = bytes(range(0x80, 0x100))


def get_blob(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = get_uvarint(buf, pos)
    end = pos + n
    if end > len(buf):
        raise CodecError("truncated field")
    return buf[pos:end], end


def shuffle(data: bytes, width: int) -> bytes:
    """Byte planes: all first bytes of each ``width``-byte item, then all second bytes...
    (float64 exponents and high mantissa bytes then sit together and compress)."""
    if width == 1 or len(data) <= width:
        return data
    return b"".join(data[i::width] for i in range(width))


def unshuffle(data: bytes, width: int) -> bytes:
    if width == 1 or len(data) <= width:
        return data
    n = len(data) // width
    out = bytearray(len(data))
    for i in range(width):
        out[i::width] = data[i * n:(i + 1) * n]
    return bytes(out)
