"""The stats pieces' histograms (``statsframe.py``), decoded in numpy and added up by bucket.

A report merges each latency series' histograms over every piece of a run's window: ~30,000
histograms of ~190 buckets for a 24-hour, 16-host session. Decoded to dicts and added key by
key in Python (``histcodec.decode_histogram``) that is ~65 us each, a quarter of the report;
here a piece's histogram is decoded to arrays of bucket indexes and counts (its planed
varints' planes are whole-array operations: ~20 us), and a series' pieces are added up in
one ``np.add.at`` per resolution. The counts are exactly those of ``decode_histogram`` added
up (int64 arithmetic, kept far from overflow: a histogram whose numbers are too big for that
is decoded by ``decode_histogram``, as is one whose keys are not fio's buckets), and a
malformed histogram raises the ``CodecError`` that ``decode_histogram`` raises. numpy is
matplotlib's, already installed; ``history/edivisive.py`` uses it too.

The merged dict's keys are in ascending order rather than in the order the pieces first
held them: a histogram's figures (quantiles, mean, JSON buckets) do not depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Final

import numpy as np
from numpy.typing import NDArray

from benchtui.model.fio_buckets import FIO_PLAT_BITS, MIN_BITS, bucket_values
from benchtui.store.recording.histcodec import MODE_FIO, MODE_FIO_BITS, decode_histogram
from benchtui.store.recording.varint import CodecError, get_uvarint

Array = NDArray[np.int64]
#: Count differences of this many planes or more (>= 2**42) go through ``decode_histogram``
#: (Python ints), and so do histograms of more than ``MAX_BUCKETS`` entries: then no sum in
#: int64 can overflow (a piece's counts stay below 2**62, and ``_MAX_PIECES`` pieces'
#: counts below 2**63 once a piece with a count of 2**48 or more is also left to Python).
BIG_PLANES: Final = 6
MAX_BUCKETS: Final = 1 << 20
BIG_COUNT: Final = 1 << 48
_MAX_PIECES: Final = 1 << 14
#: Index gaps of this many planes (>= 2**21) are past every bucket table.
GAP_PLANES: Final = 3


class PieceHistogram:
    """One piece's histogram of one series: bucket indexes and counts at ``bits`` (numpy
    arrays), or, where those would not be exact (``exact``), its counts as Python ints."""

    __slots__ = ("bits", "counts", "exact", "idx")

    def __init__(self, bits: int, idx: Array | None, counts: Array | None,
                 exact: dict[int, int] | None = None) -> None:
        self.bits, self.idx, self.counts, self.exact = bits, idx, counts, exact

    def as_dict(self) -> dict[int, int]:
        if self.exact is not None:
            return dict(self.exact)
        assert self.idx is not None and self.counts is not None
        return dict(zip(table_of(self.bits)[self.idx].tolist(), self.counts.tolist(),
                        strict=True))


class _Python(Exception):
    """The histogram is left to ``decode_histogram``."""


def read_histogram(buf: bytes) -> PieceHistogram:
    """The histogram encoded in ``buf`` (``histcodec.encode_histogram``); ``CodecError`` when
    it does not decode."""
    try:
        return _read(buf)
    except _Python:
        return PieceHistogram(0, None, None, decode_histogram(buf)[0])


def _read(buf: bytes) -> PieceHistogram:
    n, pos = get_uvarint(buf, 0)
    if n == 0 or n > MAX_BUCKETS:
        raise _Python
    if pos >= len(buf):
        raise CodecError("truncated histogram")
    mode = buf[pos]
    pos += 1
    if mode == MODE_FIO:
        bits = FIO_PLAT_BITS
    elif mode == MODE_FIO_BITS:
        if pos >= len(buf) or not MIN_BITS <= buf[pos] < FIO_PLAT_BITS:
            raise CodecError("histogram resolution out of range")
        bits = buf[pos]
        pos += 1
    else:
        raise _Python  # other keys, or an unknown mode (decode_histogram says which)
    data = np.frombuffer(buf, np.uint8)
    gaps, pos, planes = _uvarints(data, pos, n)
    table = table_of(bits)
    if planes >= GAP_PLANES:
        raise CodecError("histogram bucket out of range")
    if np.count_nonzero(gaps[1:]) != n - 1:
        raise _Python  # a key twice (damage): decode_histogram keeps its last count
    idx = np.cumsum(gaps)
    diffs, pos, planes = _uvarints(data, pos, n)
    if planes >= BIG_PLANES:
        raise _Python
    if int(idx[-1]) >= len(table):
        raise CodecError("histogram bucket out of range")
    counts = np.cumsum((diffs >> 1) ^ -(diffs & 1))
    if int(np.abs(counts).max()) >= BIG_COUNT:
        raise _Python
    return PieceHistogram(bits, idx, counts)


def _uvarints(data: NDArray[np.uint8], pos: int, count: int) -> tuple[Array, int, int]:
    """``varint.get_uvarints`` in whole-array operations: (the values, the position after
    them, how many planes they took)."""
    plane = data[pos:pos + count]
    if len(plane) != count:
        raise CodecError("truncated varint list")
    pos += count
    more = plane >= 0x80
    values = (plane & 0x7F).astype(np.int64)
    m = int(np.count_nonzero(more))
    if not m:
        return values, pos, 1
    high, pos, planes = _uvarints(data, pos, m)
    if planes >= BIG_PLANES:  # (no deeper: the caller leaves such lists to Python)
        return values, pos, planes + 1
    values[more] |= high << 7
    return values, pos, planes + 1


@cache
def table_of(bits: int) -> Array:
    return np.array(bucket_values(bits), dtype=np.int64)


def merged(hists: Sequence[PieceHistogram]) -> dict[int, int]:
    """The histograms added up, bucket ns -> count (every key any of them has, with its
    count even when 0)."""
    if len(hists) == 1:
        return hists[0].as_dict()
    if len(hists) > _MAX_PIECES or any(h.exact is not None for h in hists):
        out = hists[0].as_dict()
        get = out.get
        for h in hists[1:]:
            for k, c in h.as_dict().items():
                out[k] = get(k, 0) + c
        return out
    by_bits: dict[int, list[PieceHistogram]] = {}
    for h in hists:
        by_bits.setdefault(h.bits, []).append(h)
    out = {}
    for bits, group in sorted(by_bits.items()):
        table = table_of(bits)
        idx = np.concatenate([h.idx for h in group if h.idx is not None])
        acc = np.zeros(len(table), np.int64)
        np.add.at(acc, idx, np.concatenate([h.counts for h in group if h.counts is not None]))
        present = np.zeros(len(table), np.bool_)
        present[idx] = True
        keys = np.flatnonzero(present)
        found = dict(zip(table[keys].tolist(), acc[keys].tolist(), strict=True))
        if out:
            get = out.get
            for k, c in found.items():
                out[k] = get(k, 0) + c
        else:
            out = found
    return out
