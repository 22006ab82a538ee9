"""Many small integers in one Python int ("lanes"): how the recorder encodes a latency
histogram with a few dozen big-integer operations instead of a Python step per bucket.

A list of n numbers becomes one int whose bits ``i * width ... (i + 1) * width - 1`` hold
number i (``array(...).tobytes()`` and ``int.from_bytes``, both in C). An addition, a shift
or a mask then works on every lane at once (SIMD within a register, on a very wide
register), as long as no lane carries into the next: each step below says why it cannot.
Two more tricks:

- dropping lanes: a lane that must be kept has its top bit set, a lane to drop is zero, and
  ``bytes.replace`` removes every aligned run of ``width / 8`` zero bytes. A zero run cannot
  straddle lanes: a kept lane ends with a byte that has the top bit, and a run that starts
  inside a kept lane ends before that byte, too short to match;
- planed varints (``varint.put_uvarints``): the first plane is each lane's low 7 bits and a
  continuation bit; the lanes with more bytes (kept by the trick above) make the next plane.

``histcodec.HistogramEncoder`` is the user; tests/test_recording_encoders.py compares every byte
with the plain encoder's.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Final

from benchtui.store.recording.varint import put_uvarint

#: A histogram has at most this many buckets for the lane encoder (fio has 1856).
MAX_LANES: Final = 2048


class LaneWidth:
    """The constants of one lane width (32 or 64 bits), over ``MAX_LANES`` lanes: an and
    with one of them also cuts a lane int to its own length, an add or xor must not."""

    def __init__(self, bits: int, typecode: str) -> None:
        self.bits = bits
        self.bytes = bits // 8
        self.typecode = typecode
        assert array(typecode).itemsize == self.bytes
        self.zero_lane = bytes(self.bytes)
        self.lane_mask = (1 << bits) - 1
        #: Counts (and running sums) use the low ``count_bits``; 11 bits above them hold a
        #: fio bucket index (< 2048) and the top bit marks a lane to keep.
        self.count_bits = bits - 12
        self.ones = self.pattern(1)
        self.low7 = self.pattern(0x7F)
        self.above7 = self.pattern(((1 << bits) - 1) ^ 0x7F)
        self.count_mask = self.pattern((1 << self.count_bits) - 1)
        self.above_count = self.pattern(((1 << bits) - 1) ^ ((1 << self.count_bits) - 1))
        self.index_mask = self.pattern(0x7FF)
        self.top = self.pattern(1 << (bits - 1))
        self.not_ones = self.pattern((1 << bits) - 2)
        #: Lanes of ``varint_planes`` hold less than 2**(bits - 11); shifted by 7, less than
        #: 2**(bits - 18).
        self.more_bits = bits - 18
        self.more_mask = self.pattern((1 << self.more_bits) - 1)

    def pattern(self, lane: int) -> int:
        return int.from_bytes(lane.to_bytes(self.bytes, "little") * MAX_LANES, "little")

    def full(self, n: int) -> int:
        """Every bit of n lanes."""
        return (1 << self.bits * n) - 1

    def pack(self, values: Sequence[int]) -> int:
        """The lanes of ``values``; OverflowError when one does not fit (or is negative)."""
        return int.from_bytes(array(self.typecode, values).tobytes(), "little")

    def keep_marked(self, v: int, n: int) -> tuple[int, int]:
        """(the lanes of ``v``'s n lanes that are not zero, how many): the kept lanes must
        have the top bit set (see the module's docstring); it is left set."""
        data = v.to_bytes(self.bytes * n, "little").replace(self.zero_lane, b"")
        return int.from_bytes(data, "little"), len(data) // self.bytes

    def varint_planes(self, out: bytearray, v: int, n: int) -> None:
        """``varint.put_uvarints`` of the n lanes of ``v``, each < 2**(bits - 11)."""
        step = self.bytes
        while True:
            if not v & self.above7:  # every lane < 128: its low byte is all of it
                out += v.to_bytes(step * n, "little")[::step]
                return
            if not v >> self.bits & self.above7:  # only the first lane has more bytes (a
                # histogram's first bucket index or count): the rest of it is its varint
                first = v & self.lane_mask
                out.append(first & 0x7F | 0x80)
                out += (v >> self.bits).to_bytes(step * (n - 1), "little")[::step]
                put_uvarint(out, first >> 7)
                return
            full = self.full(n)
            hi = v >> 7 & self.more_mask  # lane >> 7 (the mask cuts what the next lane
            # shifted in); < 2**more_bits, so adding 2**more_bits - 1 cannot carry out:
            more = (hi + (self.more_mask & full)) >> self.more_bits & self.ones  # 1: hi > 0
            out += (v & self.low7 | more << 7).to_bytes(step * n, "little")[::step]
            v, n = self.keep_marked(hi | more << (self.bits - 1), n)
            v &= self.more_mask


LANES_32: Final = LaneWidth(32, "I")
LANES_64: Final = LaneWidth(64, "Q")
