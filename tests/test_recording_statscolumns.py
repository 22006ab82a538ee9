"""A STATS frame's pieces decoded together in numpy (``store/recording/statscolumns.py``) give
the rows ``statsframe._read_piece`` gives, value for value and type for type: values of every
kind (integral, decimal, fio buckets, raw doubles, -0.0, infinities, NaN, Python ints), times,
counts, partial intervals, histograms at every resolution, with other keys or counts too big
for int64 arithmetic; and a damaged piece (cut short, bytes changed) gives the same rows or
the same ``CodecError``."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Sequence

import pytest

from benchtui.model.fio_buckets import FIO_PLAT_BITS, MIN_BITS, bucket_values
from benchtui.model.histogram import LatencyHistogram
from benchtui.store.recording.blocks import Piece, PieceInfo
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.histcodec import FIO_BUCKETS
from benchtui.store.recording.series_stats import Partial, SeriesStats
from benchtui.store.recording.statscolumns import FrameColumns, _decimals
from benchtui.store.recording.statsframe import Row, StatsFrame, Table, _read_piece, encode
from benchtui.store.recording.varint import CodecError

Heads = list[tuple[PieceInfo, int, bytes, int]]
_ODD = [-0.0, 0.0, math.inf, -math.inf, math.nan, 1e300, 5e-324, 2.0**60, -(2.0**55),
        0.1 + 0.2, 1 / 3, 123456.789, 0.000305152]


def _value(rng: random.Random, python_ints: bool) -> float:
    kind = rng.randrange(6 if python_ints else 5)
    if kind == 0:
        return float(rng.randint(-10**12, 10**15))  # integral
    if kind == 1:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 9))  # decimal
    if kind == 2:
        return FIO_BUCKETS[rng.randrange(1, 900)] / 1e9  # a fio bucket in seconds
    if kind == 3:
        return rng.choice(_ODD)
    if kind == 4:
        return rng.uniform(-1e3, 1e9)  # 17 digits: raw, or a decimal
    return rng.choice((2**70, -(2**64) - 3, 7))  # a Python int


def _histogram(rng: random.Random) -> LatencyHistogram:
    bits = rng.choice((MIN_BITS, 4, 5, FIO_PLAT_BITS, None))
    keys = bucket_values(bits) if bits is not None else range(1, 10**7, 997)
    chosen = sorted(rng.sample(range(len(keys)), rng.randint(1, min(200, len(keys)))))
    top = 2**50 if rng.random() < 0.1 else 10**6  # past int64's comfort: left to Python
    return LatencyHistogram({keys[i]: rng.choice((0, 1, rng.randint(0, top))) for i in chosen})


def _stats(rng: random.Random, python_ints: bool) -> SeriesStats:
    lo, hi, total, total_sq = (_value(rng, python_ints) for _ in range(4))
    t = 1.7e9 + rng.randint(0, 10**6) / 8
    partial = Partial(rng.randint(1, 9), *(_value(rng, False) for _ in range(5))) \
        if rng.random() < 0.1 else None
    return SeriesStats(rng.randint(1, 2**40), total, total_sq, lo, hi, t,
                       t + rng.choice((0.0, 1.0, rng.random() * 99)),
                       _histogram(rng) if rng.random() < 0.3 else None, partial)


def _frame(seed: int, pieces: int = 12) -> StatsFrame:
    rng = random.Random(seed)
    made = []
    for p in range(pieces):
        host = f"h{p % 4}"
        series = [SeriesDef(host, "fio", "interval", f"m{i}", (("job", str(i % 3)),))
                  for i in range(rng.randint(1, 40))]
        python_ints = rng.random() < 0.2
        stats = {d: _stats(rng, python_ints) for d in series}
        made.append(Piece(PieceInfo(host, float(p), p, p + 1, 1.0, 2.0), stats))
    return StatsFrame(encode(made), {})


def _norm(rows: Sequence[Row] | str) -> object:
    """Rows comparable value for value (repr: -0.0, NaN, int or float)."""
    if isinstance(rows, str):
        return rows
    return [(row[0], *map(repr, row[1:8]), None if row[8] is None else row[8].as_dict(),
             repr(row[9])) for row in rows]


def _python(heads: Heads, tables: Sequence[Table], slot: int, pick: list[int]) -> object:
    _info, tid, raw, pos = heads[slot]
    try:
        return _norm(_read_piece(raw, pos, tables[tid], pick))
    except (IndexError, ValueError, struct.error):  # (what StatsFrame.rows turns to a CodecError)
        return "error"


def _columns(heads: Heads, tables: Sequence[Table], slot: int, pick: list[int]) -> object:
    frame = StatsFrame(encode([]), {})
    frame.heads, frame.tables = heads, list(tables)
    frame.decoded = FrameColumns(heads, tables).rows  # (as the reader does)
    try:
        return _norm(frame.rows(slot, lambda _table: pick))
    except CodecError:
        return "error"


@pytest.mark.parametrize("seed", range(6))
def test_every_piece_gives_the_rows_python_gives(seed: int) -> None:
    frame = _frame(seed)
    columns = FrameColumns(frame.heads, frame.tables)
    rng = random.Random(seed)
    in_numpy = 0
    for slot, (_info, tid, _raw, _pos) in enumerate(frame.heads):
        n = len(frame.tables[tid])
        picks = [list(range(n)), sorted(rng.sample(range(n), rng.randint(1, n))), [n - 1]]
        for pick in picks:
            assert _columns(frame.heads, frame.tables, slot, pick) == \
                _python(frame.heads, frame.tables, slot, pick)
        in_numpy += columns.rows(slot, frame.tables[tid], picks[0]) is not None
    assert in_numpy >= len(frame.heads) // 2  # (a piece with Python ints is read in Python)


def test_damaged_pieces_give_the_same_rows_or_the_same_error() -> None:
    frame = _frame(100, pieces=6)
    rng = random.Random(5)
    tried = failed = 0
    for slot, (info, tid, raw, pos) in enumerate(frame.heads):
        n = len(frame.tables[tid])
        variants = [raw[:i] for i in range(pos, len(raw), max(1, (len(raw) - pos) // 40))]
        for _ in range(40):
            b = bytearray(raw)
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(pos, len(b))] = rng.randrange(256)
            variants.append(bytes(b))
        for v in variants:
            heads = list(frame.heads)
            heads[slot] = (info, tid, v, pos)
            for pick in (list(range(n)), [0]):
                want = _python(heads, frame.tables, slot, pick)
                assert _columns(heads, frame.tables, slot, pick) == want
                tried += 1
                failed += want == "error"
    assert failed and failed < tried


def test_decimals_divide_as_python_divides_ints() -> None:
    """m / 10**k: in float64 where m and 10**k are exact doubles, by Python past them (a
    17-digit m, a large k): the same double as ``int / int`` either way."""
    import numpy as np

    rng = random.Random(3)
    m = [rng.choice((rng.randint(-2**53, 2**53), rng.randint(-2**62, 2**62),
                     rng.randint(-999, 999))) for _ in range(3000)]
    k = [rng.choice((rng.randint(0, 22), rng.randint(23, 63))) for _ in range(3000)]
    got = _decimals(np.array(m, np.int64), np.array(k, np.int64)).tolist()
    assert list(map(repr, got)) == [repr(a / 10**b) for a, b in zip(m, k, strict=True)]
