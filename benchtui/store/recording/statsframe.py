"""The payload of a STATS frame: the figures of the stats-block pieces written at the end of
a segment (``blocks.py``; the layout is in docs/session-format.md, "Stats blocks").

A payload (zstd) holds series tables, then the pieces. A table is one host's list of series,
self-contained (its own strings), so that a reader recognises a table it has seen in an earlier
frame by its bytes and reuses what it made of it, and tests ``series_stats``' filter once per
table, not once per piece. A piece names its table and gives, for each of the table's series in
order, the count, then by columns the min, max, sum and sum of squares (stored as the frame
bodies store sample values: exact), the first and last time, and the merged histograms.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import truediv
from typing import TYPE_CHECKING, Final

from benchtui.store.recording.blocks import Piece, PieceInfo
from benchtui.store.recording.codec import (
    DEC,
    DEC_EXPONENTS,
    FIO_NS,
    INT,
    NS,
    POW10,
    PYINT,
    RAW,
    SeriesDef,
    ValueColumns,
)
from benchtui.store.recording.histcodec import FIO_BUCKETS, encode_histogram
from benchtui.store.recording.series_stats import SeriesStats
from benchtui.store.recording.varint import (
    CodecError,
    get_blob,
    get_list,
    get_uvarint,
    get_uvarints,
    put_blob,
    put_list,
    put_uvarint,
    put_uvarints,
    shuffle,
    unshuffle,
    unzigzags,
    zigzags,
)

if TYPE_CHECKING:
    from benchtui.store.recording.histmerge import PieceHistogram

Table = tuple[SeriesDef, ...]
#: What a series' partial intervals add (``series_stats.Partial.astuple``), or None.
PartialRow = tuple[int, float, float, float, float, float] | None
#: A series' figures in a piece: (series, count, sum, sum of squares, min, max, first and
#: last time, histogram or None, partial intervals or None).
Row = tuple[SeriesDef, int, float, float, float, float, float, float, "PieceHistogram | None",
            PartialRow]
#: A piece's figures stored as values (``codec.ValueColumns``), and as times (f64, by index
#: into the piece's table of distinct times: a host's series share a few).
_VALUES: Final = ("minimum", "maximum", "total", "total_sq")
_TIMES: Final = ("first_t", "last_t")
_PIECE_HEAD = struct.Struct("<3d")
#: Tables a reader keeps (a step's hosts' few each: ~440 in a 24 h, 16-host session); past
#: this many they are all forgotten.
_INTERNED: Final = 1024
#: The writer's side: a host's list of series -> its table's bytes (a host's pieces share
#: their table segment after segment; a table of a 32-job host's ~1,600 series takes ~10 ms
#: to make). Past ``_INTERNED`` lists, all forgotten.
_TABLE_BYTES: dict[tuple[SeriesDef, ...], bytes] = {}


def encode(pieces: Sequence[Piece]) -> bytes:
    """The (uncompressed) payload for ``pieces``."""
    tables: dict[bytes, int] = {}
    table_blobs: list[bytes] = []
    piece_blobs: list[bytes] = []
    for piece in pieces:
        series = tuple(piece.stats)
        table = _TABLE_BYTES.get(series)
        if table is None:
            if len(_TABLE_BYTES) >= _INTERNED:
                _TABLE_BYTES.clear()
            table = _TABLE_BYTES[series] = _table_bytes(series)
        tid = tables.get(table)
        if tid is None:
            tid = tables[table] = len(table_blobs)
            table_blobs.append(table)
        piece_blobs.append(_piece_bytes(piece.info, tid, [piece.stats[d] for d in series]))
    out = bytearray()
    put_uvarint(out, len(table_blobs))
    for blob in table_blobs:
        put_blob(out, blob)
    put_uvarint(out, len(piece_blobs))
    for blob in piece_blobs:
        put_blob(out, blob)
    return bytes(out)


def _table_bytes(series: Sequence[SeriesDef]) -> bytes:
    strings: dict[str, int] = {}

    def sid(s: str) -> int:
        found = strings.get(s)
        if found is None:
            found = strings[s] = len(strings)
        return found

    ids: list[int] = []
    for d in series:
        ids += (sid(d.host), sid(d.tool), sid(d.kind), sid(d.metric), len(d.labels))
        for k, v in d.labels:
            ids += (sid(k), sid(v))
    out = bytearray()
    put_uvarint(out, len(strings))
    for s in strings:
        put_blob(out, s.encode("utf-8", "surrogatepass"))
    put_uvarint(out, len(series))
    put_list(out, ids)
    return bytes(out)


def _piece_bytes(info: PieceInfo, table: int, stats: list[SeriesStats]) -> bytes:
    out = bytearray()
    put_blob(out, info.host.encode("utf-8", "surrogatepass"))
    put_uvarints(out, [table, info.first, info.last])
    out += _PIECE_HEAD.pack(info.lo, info.tmin, info.tmax)
    put_list(out, [st.count for st in stats])
    values = ValueColumns()
    tag = values.tag
    for name in _VALUES:
        out += bytes([tag(getattr(st, name)) for st in stats])
    for column in (zigzags(values.ints), values.decs, values.fios):
        put_list(out, column)
    out += shuffle(struct.pack(f"<{len(values.raws)}d", *values.raws), 8)
    times: dict[float, int] = {}
    index = [times.setdefault(float(getattr(st, name)), len(times))
             for name in _TIMES for st in stats]
    put_uvarint(out, len(times))
    out += struct.pack(f"<{len(times)}d", *times)
    put_list(out, index)
    with_hist = [i for i, st in enumerate(stats) if st.histogram is not None]
    put_list(out, with_hist)
    for i in with_hist:
        blob = bytearray()
        hist = stats[i].histogram
        assert hist is not None
        encode_histogram(blob, hist.counts)
        put_blob(out, blob)
    with_partial = [i for i, st in enumerate(stats) if st.partial is not None]
    if with_partial:  # only then: a piece without reads as pieces always did
        put_list(out, with_partial)
        figures: list[float] = []
        for i in with_partial:
            p = stats[i].partial
            assert p is not None
            figures += p.astuple()
        out += struct.pack(f"<{len(figures)}d", *figures)
    return bytes(out)


class StatsFrame:
    """A STATS payload, decompressed: its pieces' heads read; a piece's figures are read
    when asked for. ``tables`` are shared through ``interned`` (a reader's: table bytes ->
    the table), so that equal tables of different frames are the same object."""

    def __init__(self, body: bytes, interned: dict[bytes, Table]) -> None:
        try:
            n, pos = get_uvarint(body, 0)
            self.tables: list[Table] = []
            for _ in range(n):
                raw, pos = get_blob(body, pos)
                table = interned.get(raw)
                if table is None:
                    if len(interned) >= _INTERNED:
                        interned.clear()
                    table = interned[raw] = _read_table(raw)
                self.tables.append(table)
            n, pos = get_uvarint(body, pos)
            self.heads: list[tuple[PieceInfo, int, bytes, int]] = []
            for _ in range(n):
                raw, pos = get_blob(body, pos)
                host, at = get_blob(raw, 0)
                (tid, first, last), at = get_uvarints(raw, at, 3)
                lo, tmin, tmax = _PIECE_HEAD.unpack_from(raw, at)
                if tid >= len(self.tables):
                    raise CodecError("unknown series table")
                info = PieceInfo(host.decode("utf-8", "surrogatepass"), lo, first, last, tmin,
                                 tmax)
                self.heads.append((info, tid, raw, at + _PIECE_HEAD.size))
        except (IndexError, ValueError, struct.error, UnicodeDecodeError) as exc:
            if isinstance(exc, CodecError):
                raise
            raise CodecError(f"malformed stats frame: {exc}") from None
        #: (piece, its table, the series wanted) -> its rows, or None for a piece to read
        #: here (``statscolumns.FrameColumns.rows``, set by the reader: numpy is imported by
        #: a reader of stats pieces, never by the recorder, which writes them)
        self.decoded: Callable[[int, Table, Sequence[int]], list[Row] | None] | None = None

    def rows(self, i: int, wanted: Callable[[Table], Sequence[int]]) -> list[Row]:
        """Piece ``i``'s figures of the series ``wanted(table)`` lists (indexes into the
        piece's table, ascending): from ``decoded`` (the frame's pieces decoded at once, in
        numpy: ``statscolumns.py``, set by the reader), or read here in Python
        (``_read_piece``) where that leaves the piece alone: the same rows either way."""
        _info, tid, raw, pos = self.heads[i]
        table = self.tables[tid]
        pick = wanted(table)
        if not pick:
            return []
        try:
            found = None if self.decoded is None else self.decoded(i, table, pick)
            return found if found is not None else _read_piece(raw, pos, table, pick)
        except (IndexError, ValueError, struct.error) as exc:
            if isinstance(exc, CodecError):
                raise
            raise CodecError(f"malformed stats piece: {exc}") from None


def _read_table(raw: bytes) -> Table:
    n, pos = get_uvarint(raw, 0)
    strings = []
    for _ in range(n):
        s, pos = get_blob(raw, pos)
        strings.append(s.decode("utf-8", "surrogatepass"))
    count, pos = get_uvarint(raw, pos)
    ids, _ = get_list(raw, pos)
    out = []
    at = 0
    get = strings.__getitem__
    #: a table's series share a few label lists (ids -> labels: made once each)
    made: dict[tuple[int, ...], tuple[tuple[str, str], ...]] = {}
    for _ in range(count):
        host, tool, kind, metric, nl = ids[at:at + 5]
        end = at + 5 + 2 * nl
        pairs = tuple(ids[at + 5:end])
        if len(pairs) != 2 * nl:
            raise CodecError("truncated series table")
        at = end
        labels = made.get(pairs)
        if labels is None:
            labels = made[pairs] = tuple(zip(map(get, pairs[0::2]), map(get, pairs[1::2]),
                                             strict=True))
        out.append(_new_def(SeriesDef, (get(host), get(tool), get(kind), get(metric), labels)))
    if at != len(ids):
        raise CodecError("series table length disagrees")
    return tuple(out)


def _read_piece(raw: bytes, pos: int, table: Table, pick: Sequence[int]) -> list[Row]:
    n = len(table)
    counts, pos = get_list(raw, pos)
    if len(counts) != n:
        raise CodecError("stats piece disagrees with its table")
    tags = raw[pos:pos + 4 * n]
    pos += 4 * n
    zz, pos = get_list(raw, pos)
    decs, pos = get_list(raw, pos)
    fios, pos = get_list(raw, pos)
    n_raw = tags.count(RAW)
    raws = struct.unpack(f"<{n_raw}d", unshuffle(raw[pos:pos + 8 * n_raw], 8))
    pos += 8 * n_raw
    values = _values(tags, unzigzags(zz), decs, fios, raws)
    if len(values) != 4 * n:
        raise CodecError("truncated stats piece")
    m, pos = get_uvarint(raw, pos)
    times = struct.unpack_from(f"<{m}d", raw, pos)
    pos += 8 * m
    index, pos = get_list(raw, pos)
    with_hist, pos = get_list(raw, pos)
    hists: dict[int, PieceHistogram] = {}
    if with_hist:
        from benchtui.store.recording.histmerge import read_histogram  # (numpy: when needed)

        wanted = set(pick)
        for i in with_hist:
            blob, pos = get_blob(raw, pos)
            if i in wanted:
                hists[i] = read_histogram(blob)
    partials: dict[int, PartialRow] = {}
    if pos < len(raw):  # the series' partial intervals (written when there are some)
        with_partial, pos = get_list(raw, pos)
        figures = struct.unpack_from(f"<{6 * len(with_partial)}d", raw, pos)
        for k, i in enumerate(with_partial):
            c, *rest = figures[6 * k:6 * k + 6]
            partials[i] = (int(c), *rest)
    get = hists.get
    return [(table[i], counts[i], values[2 * n + i], values[3 * n + i], values[i],
             values[n + i], times[index[i]], times[index[n + i]], get(i), partials.get(i))
            for i in pick]


def _values(tags: bytes, ints: list[int], decs: list[int], fios: list[int],
            raws: Sequence[float]) -> list[float]:
    """The values of ``tags`` from their lists (``codec.ValueColumns``): each kind's values
    made in C-level passes, then taken in the tags' order (``next`` of the tag's kind's
    iterator, for each tag)."""
    int_tags = tags.translate(_INT_TAGS_ONLY, _NOT_INT_TAGS)
    if len(int_tags) != len(ints) or len(decs) % 2 or tags.translate(None, _KNOWN_TAGS):
        raise CodecError("stats piece values disagree with their tags")
    if PYINT in int_tags:
        of_int: list[float] = [float(v) if tag == INT else v
                               for v, tag in zip(ints, int_tags, strict=True)]
    else:
        of_int = list(map(float, ints))
    exponents = decs[1::2]
    if exponents and max(exponents) >= DEC_EXPONENTS:  # (damage: 10**k would take for ever)
        raise CodecError("stats piece decimal exponent out of range")
    of_dec = list(map(truediv, unzigzags(decs[0::2]), map(POW10.__getitem__, exponents)))
    of_fio = list(map(truediv, map(FIO_BUCKETS.__getitem__, fios), repeat(NS)))
    int_iter = iter(of_int)  # INT and PYINT: one list
    by_tag = [iter(raws), int_iter, iter(of_dec), iter(of_fio), int_iter]
    values = list(map(next, map(by_tag.__getitem__, tags)))  # (stops short when one runs out)
    if len(values) != len(tags):
        raise CodecError("stats piece values disagree with their tags")
    return values


#: The value tags a piece may hold.
_KNOWN_TAGS: Final = bytes((RAW, INT, DEC, FIO_NS, PYINT))


#: A ``SeriesDef`` made from a tuple (without ``NamedTuple.__new__``'s Python frame).
_new_def: Final = tuple.__new__
#: ``bytes.translate`` arguments that keep the INT and PYINT tags only.
_INT_TAGS_ONLY: Final = bytes(range(256))
_NOT_INT_TAGS: Final = bytes(t for t in range(256) if t not in (INT, PYINT))
