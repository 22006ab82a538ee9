"""Latency histograms in a recording: sparse, exact, small.

A per-interval fio histogram has a few hundred buckets with a count. fio's bucket values (ns)
come from a fixed table (``FIO_IO_U_PLAT_BITS`` = 6: 64 buckets per power of two, 29 groups),
so a bucket is written as its index in that table and the indexes as gaps from the previous
one (mostly 1: consecutive buckets), and each count as the difference from the previous
bucket's count, zigzag-mapped (neighbours are alike: ~13% smaller than the counts themselves
after zstd, measured on a real fio randrw run); all as planed varints (``varint.py``). Keys
that are not fio bucket values (other tools) are written as zigzag differences of the keys.

Decoding a histogram costs a few hundred varints, and replay or ``dump`` often never looks at
it: ``RecordedHistogram`` keeps the encoded bytes and builds its ``counts`` on first use.
"""

from __future__ import annotations

from operator import sub
from typing import Any, Final

from benchtui.model.histogram import LatencyHistogram
from benchtui.store.recording.varint import (
    CodecError,
    get_uvarint,
    get_uvarints,
    put_uvarint,
    put_uvarints,
    unzigzags,
    zigzags,
)

_PLAT_BITS: Final = 6
_PLAT_VAL: Final = 1 << _PLAT_BITS
_PLAT_GROUPS: Final = 29


def _fio_bucket_value(idx: int) -> int:
    """fio's ``plat_idx_to_val`` (stat.c), in integers (exact for every index)."""
    if idx < (_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> _PLAT_BITS) - 1
    base = 1 << (error_bits + _PLAT_BITS)
    k = idx % _PLAT_VAL
    return base + (k << error_bits) + (1 << (error_bits - 1))


#: fio bucket index -> value, and back.
FIO_BUCKETS: Final[tuple[int, ...]] = tuple(
    _fio_bucket_value(i) for i in range(_PLAT_GROUPS * _PLAT_VAL))
FIO_INDEX: Final[dict[int, int]] = {v: i for i, v in enumerate(FIO_BUCKETS)}

MODE_FIO: Final = 0
MODE_KEYS: Final = 1


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
    idxs = list(map(FIO_INDEX.get, keys))
    if None not in idxs:
        out.append(MODE_FIO)
        fio: list[int] = idxs  # type: ignore[assignment]  # no None in it
        put_uvarints(out, [fio[0], *map(sub, fio[1:], fio[:-1])])
    else:
        out.append(MODE_KEYS)
        put_uvarints(out, zigzags(map(sub, keys, [0, *keys[:-1]])))
    put_uvarints(out, zigzags(map(sub, values, [0, *values[:-1]])))


def decode_histogram(buf: bytes, pos: int = 0) -> tuple[dict[int, int], int]:
    """(bucket ns -> count, position after it)."""
    n, pos = get_uvarint(buf, pos)
    if n == 0:
        return {}, pos
    if pos >= len(buf):
        raise CodecError("truncated histogram")
    mode = buf[pos]
    pos += 1
    gaps, pos = get_uvarints(buf, pos, n)
    diffs, pos = get_uvarints(buf, pos, n)
    if mode == MODE_FIO:
        idx = 0
        keys = []
        buckets = FIO_BUCKETS
        try:
            for g in gaps:
                idx += g
                keys.append(buckets[idx])
        except IndexError:
            raise CodecError("histogram bucket out of range") from None
    elif mode == MODE_KEYS:
        keys = []
        k = 0
        for d in unzigzags(gaps):
            k += d
            keys.append(k)
    else:
        raise CodecError(f"unknown histogram mode {mode}")
    values = []
    c = 0
    for d in unzigzags(diffs):
        c += d
        values.append(c)
    return dict(zip(keys, values, strict=True)), pos


_COUNTS: Any = LatencyHistogram.__dict__["counts"]  # the slot that holds a histogram's counts


class RecordedHistogram(LatencyHistogram):
    """A ``LatencyHistogram`` read from a recording; ``counts`` is decoded on first use."""

    __slots__ = ("_encoded",)

    def __init__(self, encoded: bytes) -> None:  # the counts dict: on first use
        self._encoded: bytes | None = encoded

    @property
    def counts(self) -> dict[int, int]:
        encoded = self._encoded
        if encoded is not None:
            _COUNTS.__set__(self, decode_histogram(encoded)[0])
            self._encoded = None
        counts: dict[int, int] = _COUNTS.__get__(self)
        return counts

    @counts.setter
    def counts(self, value: dict[int, int]) -> None:
        _COUNTS.__set__(self, value)
        self._encoded = None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LatencyHistogram):
            return self.counts == other.counts
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RecordedHistogram(counts={self.counts!r})"
