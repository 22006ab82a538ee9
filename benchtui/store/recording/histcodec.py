"""Latency histograms in a recording: sparse, exact, small.

A per-interval fio histogram has a few hundred buckets with a count. fio's bucket values (ns)
come from a fixed table (``FIO_IO_U_PLAT_BITS`` = 6: 64 buckets per power of two, 29 groups;
a session's histograms are kept at its ``histogram_bits``, the same scheme with fewer buckets
per power of two: ``benchtui.model.fio_buckets``), so a bucket is written as its index in that
table and the indexes as gaps from the previous one (mostly 1: consecutive buckets), and each
count as the difference from the previous bucket's count, zigzag-mapped (neighbours are
alike: ~13% smaller than the counts themselves after zstd, measured on a real fio randrw run);
all as planed varints (``varint.py``). Keys that are not fio bucket values (other tools) are
written as zigzag differences of the keys.

The recorder encodes fio's histograms with ``HistogramEncoder``: from the parser's running
sums, with lane arithmetic (``lanes.py``), to the same bytes.

Decoding a histogram costs a few hundred varints, and replay or ``dump`` often never looks at
it: ``RecordedHistogram`` keeps the encoded bytes and builds its ``counts`` on first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate, repeat
from operator import and_, lt, neg, rshift, sub, xor
from typing import Final

from benchtui.model.fio_buckets import (
    DEFAULT_BITS,
    FIO_PLAT_BITS,
    MIN_BITS,
    bucket_index,
    bucket_values,
)
from benchtui.model.histogram import LatencyHistogram, LazyHistogram, RunningSumsHistogram
from benchtui.store.recording.lanes import LANES_32, LANES_64, MAX_LANES, LaneWidth
from benchtui.store.recording.varint import (
    CodecError,
    get_uvarint,
    get_uvarints,
    put_uvarint,
    put_uvarints,
    unzigzags,
    zigzags,
)

#: fio bucket index -> value, and back (fio's own resolution: 6 bits).
FIO_BUCKETS: Final[tuple[int, ...]] = bucket_values(FIO_PLAT_BITS)
FIO_INDEX: Final[dict[int, int]] = bucket_index(FIO_PLAT_BITS)

MODE_FIO: Final = 0
MODE_KEYS: Final = 1
#: Keys are buckets of fio's scheme at fewer bits (a session's declared ``histogram_bits``);
#: a byte with the bits follows the mode.
MODE_FIO_BITS: Final = 2

#: Resolutions tried, in this order, when encoding: fio's own, then benchtui's default.
_BITS_TRIED: Final = (FIO_PLAT_BITS, DEFAULT_BITS,
                      *(b for b in range(FIO_PLAT_BITS - 1, MIN_BITS - 1, -1)
                        if b != DEFAULT_BITS))
_MODE_BYTES: Final = {b: bytes((MODE_FIO,)) if b == FIO_PLAT_BITS else bytes((MODE_FIO_BITS, b))
                      for b in _BITS_TRIED}


def _bucket_indexes(keys: list[int] | Sequence[int]) -> tuple[bytes, list[int]] | None:
    """(the mode bytes, the bucket indexes) of the first resolution of fio's scheme whose
    buckets hold every key; None when none does (not fio's buckets)."""
    if not keys:
        return None
    for bits in _BITS_TRIED:
        index = bucket_index(bits)
        if keys[-1] not in index:
            continue
        idxs = list(map(index.get, keys))
        if None not in idxs:
            return _MODE_BYTES[bits], idxs  # type: ignore[return-value]  # no None in it
    return None


def encode_histogram(out: bytearray, counts: dict[int, int]) -> None:
    """Append one histogram: varint n, mode byte, n key gaps, n count differences."""
    keys = list(counts)
    if keys == sorted(keys):  # fio's order: ascending (then the values are in order too)
        values = list(counts.values())
    else:
        keys.sort()
        values = [counts[k] for k in keys]
    put_uvarint(out, len(keys))
    if not keys:
        return
    found = _bucket_indexes(keys)
    if found is not None:
        mode, fio = found
        out += mode
        fio[1:] = map(sub, fio[1:], fio[:-1])
        put_uvarints(out, fio)
    else:
        out.append(MODE_KEYS)
        put_uvarints(out, zigzags(list(map(sub, keys, [0, *keys[:-1]]))))
    put_uvarints(out, zigzags(list(map(sub, values, [0, *values[:-1]]))))


class HistogramEncoder:
    """``encode_histogram`` for the recorder: a histogram that holds running sums (fio's,
    ``LatencyHistogram.running_sums``) is encoded from them with lane arithmetic
    (``lanes.py``), without making its counts dict; the bytes are the same. It remembers the
    fio bucket indexes of the key lists it saw (a fio job's list is shared by all its
    intervals while no new bucket appears; forgotten all at once past ``capacity``). One
    thread at a time."""

    def __init__(self, capacity: int = 1024) -> None:
        self._indexes: dict[int, tuple[Sequence[int], tuple[bytes, int, int] | None]] = {}
        self._capacity = capacity

    def encode(self, out: bytearray, histogram: LatencyHistogram) -> None:
        sums = histogram.running_sums()
        if sums is None or not self._encode_sums(out, *sums):
            encode_histogram(out, histogram.counts)

    def _index_lanes(self, keys: Sequence[int]) -> tuple[bytes, int, int] | None:
        """The mode bytes and the keys' fio bucket indexes in lanes of 32 and 64 bits (with
        the keep mark), or None when they are not ascending buckets of fio's scheme."""
        found = self._indexes.get(id(keys))
        if found is not None and found[0] is keys:
            return found[1]
        indexes = _bucket_indexes(keys)
        lanes = None
        if indexes is not None and len(keys) <= MAX_LANES \
                and all(map(lt, indexes[1], indexes[1][1:])):
            mode, fio = indexes
            w32, w64 = LANES_32, LANES_64
            lanes = (mode,
                     w32.pack([1 << (w32.bits - 1) | i << w32.count_bits for i in fio]),
                     w64.pack([1 << (w64.bits - 1) | i << w64.count_bits for i in fio]))
        if len(self._indexes) >= self._capacity:
            self._indexes.clear()
        self._indexes[id(keys)] = (keys, lanes)
        return lanes

    def _encode_sums(self, out: bytearray, keys: Sequence[int], cum: Sequence[int]) -> bool:
        """Encode from running sums; False (nothing written) when the lanes do not apply."""
        n = len(cum)
        if n != len(keys) or n > MAX_LANES:
            return False
        index_lanes = self._index_lanes(keys)
        if index_lanes is None:
            return False
        if n == 0:
            put_uvarint(out, 0)
            return True
        small = 0 <= cum[-1] < 1 << LANES_32.count_bits
        mode = index_lanes[0]
        for width, index in ((LANES_32, index_lanes[1]), (LANES_64, index_lanes[2])):
            if width is LANES_32 and not small:
                continue
            try:
                sums = width.pack(cum)
            except OverflowError:  # a negative sum, or one too big for the width
                continue
            if self._encode_lanes(out, width, index, sums, n, mode=mode):
                return True
        return False

    @staticmethod
    def _encode_lanes(out: bytearray, w: LaneWidth, index: int, sums: int, n: int, *,
                      mode: bytes) -> bool:
        cb, bits = w.count_bits, w.bits
        full = w.full(n)
        if sums & w.above_count:  # a running sum over count_bits
            return False
        counts = sums - (sums << bits & full)  # each lane: its sum minus the previous one
        if counts < 0 or counts & w.above_count:  # a count went down (borrows): the dict
            return False
        # 1 where the count is not 0: count + (2**cb - 1) reaches bit cb (no carry further)
        nonzero = (counts + (w.count_mask & full)) >> cb & w.ones
        kept, m = w.keep_marked(index & ((nonzero << bits) - nonzero) | counts, n)
        put_uvarint(out, m)
        if not m:
            return True
        out += mode
        full = w.full(m)
        idx = kept >> cb & w.index_mask
        w.varint_planes(out, idx - (idx << bits & full), m)  # ascending: gaps >= 1
        counts = kept & w.count_mask
        top = w.top & full
        # count - previous count in two's complement per lane: (count + 2**(bits-1)) cannot
        # borrow from the next lane; the xor puts the top bit right.
        diffs = ((counts | top) - (counts << bits & full)) ^ top
        sign = diffs >> (bits - 1) & w.ones
        w.varint_planes(out, (diffs << 1 & w.not_ones & full) ^ ((sign << bits) - sign), m)
        return True


def _decode_keys(buf: bytes, pos: int) -> tuple[list[int], list[int], int]:
    """A histogram's bucket keys (ns, ascending) and its zigzagged count deltas, and the
    position after them: what ``decode_histogram`` and ``decode_running_sums`` share."""
    n, pos = get_uvarint(buf, pos)
    if n == 0:
        return [], [], pos
    if pos >= len(buf):
        raise CodecError("truncated histogram")
    mode = buf[pos]
    pos += 1
    buckets = FIO_BUCKETS
    if mode == MODE_FIO_BITS:
        if pos >= len(buf) or not MIN_BITS <= buf[pos] < FIO_PLAT_BITS:
            raise CodecError("histogram resolution out of range")
        buckets = bucket_values(buf[pos])
        pos += 1
    gaps, pos = get_uvarints(buf, pos, n)
    diffs, pos = get_uvarints(buf, pos, n)
    if mode in (MODE_FIO, MODE_FIO_BITS):
        try:
            keys = list(map(buckets.__getitem__, accumulate(gaps)))
        except IndexError:
            raise CodecError("histogram bucket out of range") from None
    elif mode == MODE_KEYS:
        keys = list(accumulate(unzigzags(gaps)))
    else:
        raise CodecError(f"unknown histogram mode {mode}")
    return keys, list(diffs), pos


def _unzigzagged(diffs: list[int]) -> Iterator[int]:
    """The zigzag undone in C-level passes: (z >> 1) ^ -(z & 1)."""
    return map(xor, map(rshift, diffs, repeat(1)), map(neg, map(and_, diffs, repeat(1))))


def decode_histogram(buf: bytes, pos: int = 0) -> tuple[dict[int, int], int]:
    """(bucket ns -> count, position after it)."""
    keys, diffs, pos = _decode_keys(buf, pos)
    return dict(zip(keys, accumulate(_unzigzagged(diffs)), strict=True)), pos


def decode_running_sums(buf: bytes, pos: int = 0) -> tuple[list[int], list[int], int]:
    """(bucket ns ascending, running sums of their counts, position after it): what
    ``decode_histogram`` decodes, as the parsers hold a histogram, in C-level passes."""
    keys, diffs, pos = _decode_keys(buf, pos)
    return keys, list(accumulate(accumulate(_unzigzagged(diffs)))), pos


class RecordedHistogram(LazyHistogram):
    """A ``LatencyHistogram`` read from a recording; ``counts`` is decoded on first use."""

    __slots__ = ()

    def __init__(self, encoded: bytes) -> None:  # the counts dict: on first use
        super().__init__(encoded)

    def _make(self, pending: bytes) -> dict[int, int]:
        return decode_histogram(pending)[0]

    def with_running_sums(self) -> LatencyHistogram:
        """The histogram as one holding running sums (``RunningSumsHistogram``, what the
        parsers give): quantiles of merged histograms take a binary search over them
        instead of merging (``model.histogram.merged_quantiles``). Itself once decoded."""
        pending = self._pending
        if not isinstance(pending, bytes):
            return self
        keys, cum, _pos = decode_running_sums(pending)
        return RunningSumsHistogram(keys, cum)
