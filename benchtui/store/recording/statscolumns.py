"""A STATS frame's pieces decoded together, in numpy (``statsframe.py`` has the layout).

A piece's figures are ~800 planed varints (its series' counts, the columns of their values,
their times' indexes) and its latency histograms' ~400 more: in Python, a list
comprehension per plane of each list, ~0.1 ms a piece and ~50% of a 24-hour report's time.
Read here, every piece of a frame (a segment's hosts' pieces: ~30, up to ~200) is walked once
in Python to find where its lists' planes are (a slice and a ``bytes.translate`` a plane), the
planes of all the frame's lists are put end to end, level by level, and decoded as one list
in a few whole-array operations: a list's n-th plane is where the (n-1)-th plane's bytes
with their high bit set continue, in the same order, so lists put end to end decode as
one. The values are then made from their columns by tag, and each series' six figures
gathered into one array, from which a piece's rows are taken by index.

The figures are those ``statsframe._read_piece`` makes, value for value: integers and
histogram counts in int64 far from overflow, an integral value converted as ``float()``
does (both round to nearest), a decimal m / 10**k divided in float64 only where both are
exact doubles (then both divisions are correctly rounded; otherwise by Python's), a fio
bucket from the same table. Whatever this does not take (a piece with a value kept as a
Python int, lists deeper than int64, a histogram ``histmerge`` leaves to Python, anything
damaged) is left to the Python path: a piece to ``_read_piece``, a histogram to
``read_histogram``, so a damaged piece raises the same ``CodecError`` as before.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from benchtui.model.fio_buckets import FIO_PLAT_BITS, MIN_BITS
from benchtui.store.recording.codec import DEC, DEC_EXPONENTS, FIO_NS, INT, NS, RAW
from benchtui.store.recording.histcodec import FIO_BUCKETS, MODE_FIO, MODE_FIO_BITS
from benchtui.store.recording.histmerge import (
    BIG_COUNT,
    BIG_PLANES,
    GAP_PLANES,
    MAX_BUCKETS,
    PieceHistogram,
    read_histogram,
    table_of,
)
from benchtui.store.recording.statsframe import PartialRow, Row, Table
from benchtui.store.recording.varint import CodecError, get_list, get_uvarint, unshuffle

I64 = NDArray[np.int64]
#: The lists of a frame, by kind: each kind's lists are put end to end, piece after piece.
_COUNTS, _INTS, _DECS, _FIOS, _INDEX, _GAPS, _DIFFS = range(7)
_KINDS: Final = 7
#: Planes an int64 holds (9 x 7 = 63 bits): deeper value lists go to the Python path; so do
#: histograms' deeper lists (``histmerge._read``: bucket gaps past every table, counts that
#: int64 sums may not hold).
_MAX_PLANES: Final = 9
_DEPTH: Final = (*[_MAX_PLANES] * 5, GAP_PLANES - 1, BIG_PLANES - 1)
_ALL_KINDS: Final = tuple(range(_KINDS))
_HISTOGRAM_KINDS: Final = (_GAPS, _DIFFS)
#: Decimal values whose m and 10**k are exact doubles: |m| <= 2**53, k <= 22.
_EXACT_M: Final = 1 << 53
_EXACT_K: Final = 22
_HIGH_BYTES: Final = bytes(range(0x80, 0x100))
_FAST_TAGS: Final = bytes((RAW, INT, DEC, FIO_NS))
_FIO_SECONDS: Final = np.array([b / NS for b in FIO_BUCKETS], dtype=np.float64)
_POW10: Final = np.array([float(10 ** k) for k in range(_EXACT_K + 1)], dtype=np.float64)


class _Walk(Exception):
    """A piece (or histogram) the walk leaves to the Python path."""


class _Piece:
    """Where one piece's figures are in its frame's arrays."""

    __slots__ = ("hists", "partials", "start")

    def __init__(self, start: int) -> None:
        self.start = start  # its first series' place in the frame's arrays
        #: (series index, the histogram or its bytes for ``read_histogram``), in order
        self.hists: list[tuple[int, PieceHistogram | bytes]] = []
        self.partials: dict[int, PartialRow] = {}


class _Lists:
    """The planes of a frame's lists, kind by kind and level by level."""

    def __init__(self) -> None:
        self.levels: list[list[list[bytes]]] = [
            [[] for _ in range(_DEPTH[kind])] for kind in range(_KINDS)]
        self.sizes = [0] * _KINDS

    def planes(self, kind: int, raw: bytes, pos: int, count: int) -> int:
        """Add the ``count`` planed varints at ``raw[pos:]`` to the lists of ``kind``: the
        position after them (``IndexError`` for one deeper than the kind's lists may be,
        ``_Walk`` for one cut short)."""
        levels = self.levels[kind]
        self.sizes[kind] += count
        i = 0
        while count:
            plane = raw[pos:pos + count]
            if len(plane) != count:
                raise _Walk
            levels[i].append(plane)
            i += 1
            pos += count
            count -= len(plane.translate(None, _HIGH_BYTES))
        return pos

    def mark(self, kinds: Sequence[int] = _ALL_KINDS) -> list[tuple[int, list[int], int]]:
        """Where the lists of ``kinds`` are: ``undo`` takes away what was added since."""
        return [(kind, list(map(len, self.levels[kind])), self.sizes[kind]) for kind in kinds]

    def undo(self, mark: list[tuple[int, list[int], int]]) -> None:
        for kind, lengths, size in mark:
            for level, n in zip(self.levels[kind], lengths, strict=True):
                del level[n:]
            self.sizes[kind] = size

    def decode(self) -> list[I64]:
        """Each kind's lists' values, end to end."""
        joined = [b"".join(plane for kind in self.levels if i < len(kind) for plane in kind[i])
                  for i in range(_MAX_PLANES)]
        first = np.frombuffer(joined[0], np.uint8)
        values = (first & 0x7F).astype(np.int64)
        at = np.flatnonzero(first >= 0x80)
        for shift, plane in enumerate(joined[1:], 1):
            if not plane:
                break
            data = np.frombuffer(plane, np.uint8)
            values[at] |= (data & 0x7F).astype(np.int64) << (7 * shift)
            at = at[data >= 0x80]
        ends = np.cumsum(self.sizes)
        return np.split(values, ends[:-1])


def _unzigzag(z: I64) -> I64:
    return (z >> 1) ^ -(z & 1)


class _Frame:
    """What the walk finds in a frame's pieces, to decode at once: their lists' planes,
    and their tags, raw values and times, end to end."""

    def __init__(self) -> None:
        self.lists = _Lists()
        self.tags: list[bytes] = []
        self.raws: list[bytes] = []
        self.times: list[bytes] = []
        self.time_counts: list[int] = []
        #: the histograms to decode: (piece, its entry, size, bits)
        self.hists: list[tuple[_Piece, int, int, int]] = []
        self.size = 0  # the pieces' series

    def walk(self, raw: bytes, pos: int, n: int) -> _Piece:
        """A piece of ``n`` series at ``raw[pos:]`` found and added (all of it, or nothing
        and ``_Walk``, ``CodecError``, ``IndexError``)."""
        mark = self.lists.mark()
        try:
            return self._walk(raw, pos, n)
        except (_Walk, CodecError, IndexError):
            self.lists.undo(mark)
            raise

    def _walk(self, raw: bytes, pos: int, n: int) -> _Piece:
        lists = self.lists
        count, pos = get_uvarint(raw, pos)
        if count != n:
            raise _Walk
        pos = lists.planes(_COUNTS, raw, pos, n)
        tags = raw[pos:pos + 4 * n]
        pos += 4 * n
        if len(tags) != 4 * n or tags.translate(None, _FAST_TAGS):
            raise _Walk
        for kind, size in ((_INTS, tags.count(INT)), (_DECS, 2 * tags.count(DEC)),
                           (_FIOS, tags.count(FIO_NS))):
            count, pos = get_uvarint(raw, pos)
            if count != size:
                raise _Walk
            pos = lists.planes(kind, raw, pos, count)
        n_raw = 8 * tags.count(RAW)
        raws = raw[pos:pos + n_raw]
        pos += n_raw
        m, pos = get_uvarint(raw, pos)
        times = raw[pos:pos + 8 * m]
        pos += 8 * m
        count, pos = get_uvarint(raw, pos)
        if len(raws) != n_raw or len(times) != 8 * m or count != 2 * n:
            raise _Walk
        pos = lists.planes(_INDEX, raw, pos, count)
        piece = _Piece(self.size)
        hists: list[tuple[_Piece, int, int, int]] = []
        with_hist, pos = get_list(raw, pos)
        for i in with_hist:
            size, pos = get_uvarint(raw, pos)
            blob = raw[pos:pos + size]
            if len(blob) != size:
                raise _Walk
            pos += size
            piece.hists.append((i, blob))  # (replaced by its PieceHistogram once decoded)
            mark = lists.mark(_HISTOGRAM_KINDS)
            try:
                bits, buckets = _walk_histogram(blob, lists)
            except (_Walk, CodecError, IndexError):
                lists.undo(mark)
                continue  # (read_histogram reads it, if it is wanted)
            hists.append((piece, len(piece.hists) - 1, buckets, bits))
        if pos < len(raw):  # the series' partial intervals (``_read_piece``)
            with_partial, pos = get_list(raw, pos)
            try:
                figures = struct.unpack_from(f"<{6 * len(with_partial)}d", raw, pos)
            except struct.error:
                raise _Walk from None
            for k, i in enumerate(with_partial):
                c, *rest = figures[6 * k:6 * k + 6]
                piece.partials[i] = (int(c), *rest)
        self.tags.append(tags)
        self.raws.append(unshuffle(raws, 8))
        self.times.append(times)
        self.time_counts.append(m)
        self.hists += hists
        self.size += n
        return piece

    def figures(self, ints: I64, decs: I64, fios: I64, index: I64) -> NDArray[np.float64]:
        """The six figures of every series of the pieces, one row each (min, max, sum, sum
        of squares, first and last time), each piece's series after the piece before's;
        ``CodecError`` where a piece's lists point outside their tables."""
        tag = np.frombuffer(b"".join(self.tags), np.uint8)
        values = np.empty(len(tag), np.float64)
        values[tag == INT] = _unzigzag(ints).astype(np.float64)
        values[tag == DEC] = _decimals(_unzigzag(decs[0::2]), decs[1::2])
        if len(fios) and int(fios.max()) >= len(_FIO_SECONDS):
            raise CodecError("fio bucket out of range")
        values[tag == FIO_NS] = _FIO_SECONDS[fios]
        values[tag == RAW] = np.frombuffer(b"".join(self.raws), np.float64)
        sizes = np.array([len(t) // 4 for t in self.tags], np.int64)
        piece = np.repeat(np.arange(len(sizes)), sizes)
        firsts = np.cumsum(sizes) - sizes
        local = np.arange(self.size) - firsts[piece]
        n = sizes[piece]
        m = np.array(self.time_counts, np.int64)
        if len(index) and bool((index >= np.repeat(m, 2 * sizes)).any()):
            raise CodecError("time index out of range")
        times = np.frombuffer(b"".join(self.times), np.float64)[
            index + np.repeat(np.cumsum(m) - m, 2 * sizes)]
        at = 4 * firsts[piece] + local
        at_time = 2 * firsts[piece] + local
        return np.stack([values[at], values[at + n], values[at + 2 * n], values[at + 3 * n],
                         times[at_time], times[at_time + n]])

    def histograms(self, gaps: I64, diffs: I64) -> None:
        """The histograms walked, decoded: each one's entry in its piece replaced by its
        ``PieceHistogram``, but where ``histmerge._read`` would leave it to Python or raise
        (then ``read_histogram`` reads it, if it is wanted)."""
        if not self.hists:
            return
        sizes = np.array([h[2] for h in self.hists], np.int64)
        starts = np.cumsum(sizes) - sizes
        idx = _segment_cumsum(gaps, starts, sizes)
        counts = _segment_cumsum(_unzigzag(diffs), starts, sizes)
        zero = gaps == 0
        zero[starts] = False
        twice = (np.add.reduceat(zero, starts) > 0).tolist()  # a bucket twice
        last = idx[starts + sizes - 1].tolist()
        big = (np.maximum.reduceat(np.abs(counts), starts) >= BIG_COUNT).tolist()
        for k, (piece, entry, size, bits) in enumerate(self.hists):
            if twice[k] or big[k] or last[k] >= len(table_of(bits)):
                continue
            s = int(starts[k])
            piece.hists[entry] = (piece.hists[entry][0],
                                  PieceHistogram(bits, idx[s:s + size], counts[s:s + size]))


class FrameColumns:
    """Every piece of a STATS frame decoded (module docstring); ``rows`` answers for one."""

    def __init__(self, heads: Sequence[tuple[object, int, bytes, int]],
                 tables: Sequence[Table]) -> None:
        frame = _Frame()
        self._pieces: list[_Piece | None] = []
        for _info, tid, raw, pos in heads:
            try:
                self._pieces.append(frame.walk(raw, pos, len(tables[tid])))
            except (_Walk, CodecError, IndexError):
                self._pieces.append(None)
        counts, ints, decs, fios, index, gaps, diffs = frame.lists.decode()
        self._counts = counts.copy()  # (not a view keeping every list of the frame)
        try:
            self._figures = frame.figures(ints, decs, fios, index)
        except CodecError:  # (damage: each piece is read in Python, and says what it is)
            self._pieces = [None] * len(heads)
            return
        frame.histograms(gaps, diffs)

    def rows(self, slot: int, table: Table, pick: Sequence[int]) -> list[Row] | None:
        """Piece ``slot``'s rows of the series ``pick`` lists (as ``_read_piece`` makes
        them); None: the piece is left to ``_read_piece``."""
        piece = self._pieces[slot]
        if piece is None:
            return None
        at = np.asarray(pick, np.int64) + piece.start
        lo, hi, total, total_sq, first, last = self._figures[:, at].tolist()
        counts = self._counts[at].tolist()
        hists: list[PieceHistogram | None] = [None] * len(pick)
        if piece.hists:
            where = {i: k for k, i in enumerate(pick)}
            for i, h in piece.hists:
                k = where.get(i)
                if k is not None:
                    hists[k] = h if isinstance(h, PieceHistogram) else read_histogram(h)
        partials = [piece.partials.get(i) for i in pick] if piece.partials else \
            [None] * len(pick)
        return list(zip(map(table.__getitem__, pick), counts, total, total_sq, lo, hi, first,
                        last, hists, partials, strict=True))


def _walk_histogram(blob: bytes, lists: _Lists) -> tuple[int, int]:
    """A histogram's two lists added, found with ``histmerge._read``'s checks: (its bits,
    its buckets); ``_Walk``, ``CodecError`` or ``IndexError`` for one that
    ``read_histogram`` must read."""
    n, pos = get_uvarint(blob, 0)
    if n == 0 or n > MAX_BUCKETS or pos >= len(blob):
        raise _Walk
    mode = blob[pos]
    pos += 1
    if mode == MODE_FIO:
        bits = FIO_PLAT_BITS
    elif mode == MODE_FIO_BITS and pos < len(blob) and MIN_BITS <= blob[pos] < FIO_PLAT_BITS:
        bits = blob[pos]
        pos += 1
    else:
        raise _Walk
    pos = lists.planes(_GAPS, blob, pos, n)
    lists.planes(_DIFFS, blob, pos, n)
    return bits, n


def _decimals(m: I64, k: I64) -> NDArray[np.float64]:
    """m / 10**k, as Python divides the ints (correctly rounded)."""
    if len(k) and int(k.max()) >= DEC_EXPONENTS:
        raise CodecError("stats piece decimal exponent out of range")
    exact = (np.abs(m) <= _EXACT_M) & (k <= _EXACT_K)
    out = m.astype(np.float64) / _POW10[np.where(exact, k, 0)]
    for j in np.flatnonzero(~exact).tolist():
        out[j] = int(m[j]) / 10 ** int(k[j])
    return out


def _segment_cumsum(values: I64, starts: I64, sizes: I64) -> I64:
    """The running sum of each segment of ``values`` (int64 wraps the same way both ways:
    each segment's sums are exact while they fit)."""
    total = np.cumsum(values)
    before = np.repeat(total[starts] - values[starts], sizes)
    return total - before
