"""Stats blocks, the reader's side: which pieces answer ``series_stats(t0, t1)`` and which
samples must still be decoded (``blocks.py`` has the writer's side).

Every segment's summary lists the blocks it holds samples of, with their arrival times in it
(``Touched``); every piece says which block it sums over which segments (``PieceInfo``). For
a window ``[t0, t1)``, a block's samples in a segment are

- left out when their times are all outside the window;
- taken from the piece that covers them when all of that piece's samples are inside the
  window (its time range says so) and the piece can be read: the piece is merged once for
  all the segments it covers;
- decoded otherwise (the window cuts through the block, the piece was lost with a crash or
  is damaged, the segment has no block list: an older writer's, or rebuilt after a crash).

A piece that covers a segment the reader decodes whole (no block list) is never used: the
samples would count twice.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from benchtui.model.histogram import LatencyHistogram
from benchtui.store.recording.blocks import PieceInfo, Touched, piece_ok, touched_ok
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import Partial, SeriesStats
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.statsframe import Row, Table

if TYPE_CHECKING:
    from benchtui.store.recording.histmerge import PieceHistogram

SeriesFilter = Callable[[SeriesDef], bool]
_DEF = itemgetter(0)  # a row's series
BlockKey = tuple[str, float]


class PieceRef(NamedTuple):
    info: PieceInfo
    #: the STATS frame's file offset, and the piece's place in it
    at: int
    slot: int


@dataclass
class Plan:
    """What answers a window: pieces to merge, and (segment number -> blocks) to decode
    (None: the whole segment), each with the piece that covers it if any (its series table
    says whether the block has any series wanted at all)."""

    pieces: list[PieceRef] = field(default_factory=list)
    decode: dict[int, dict[BlockKey, PieceRef | None] | None] = field(default_factory=dict)

    def fall_back(self, ref: PieceRef, numbers: Collection[int]) -> None:
        """A piece could not be read: decode its block in the window's segments it covers."""
        key = (ref.info.host, ref.info.lo)
        for n in range(ref.info.first, ref.info.last + 1):
            if n in numbers:
                blocks = self.decode.setdefault(n, {})
                if blocks is not None:
                    blocks[key] = None


class BlockIndex:
    """The pieces of a file by block, built once from the segment summaries."""

    def __init__(self, segments: Sequence[SegmentStats]) -> None:
        self._numbers = {s.number: s for s in segments}
        pieces: dict[BlockKey, list[PieceRef]] = {}
        for seg in segments:
            if seg.blocks is not None and not all(map(touched_ok, seg.blocks)):
                seg.blocks = None  # a malformed list: the segment is decoded
            for at, infos in seg.stats:
                for i, p in enumerate(infos):
                    if piece_ok(p):
                        pieces.setdefault((p.host, p.lo), []).append(PieceRef(p, at, i))
        for refs in pieces.values():
            refs.sort(key=lambda r: r.info.first)
        self._pieces = pieces
        self._firsts = {k: [r.info.first for r in refs] for k, refs in pieces.items()}
        #: segment number -> host -> its blocks (``host_blocks``: made when first asked)
        self._by_host: dict[int, dict[str, list[Touched]]] = {}

    def host_blocks(self, seg: SegmentStats, host: str) -> Sequence[Touched]:
        """The blocks of one host that a segment lists: a report asks host by host, and a
        segment of 10,000 hosts lists 10,000 hosts' blocks."""
        by_host = self._by_host.get(seg.number)
        if by_host is None:
            by_host = self._by_host[seg.number] = {}
            for b in seg.blocks or ():
                by_host.setdefault(b[0], []).append(b)
        return by_host.get(host, ())

    def blocks_of(self, seg: SegmentStats, hosts: Collection[str]) -> list[Touched]:
        """The blocks of ``hosts`` that a segment lists."""
        return [b for h in hosts for b in self.host_blocks(seg, h)]

    def covering(self, key: BlockKey, number: int) -> PieceRef | None:
        refs = self._pieces.get(key)
        if refs is None:
            return None
        i = bisect_right(self._firsts[key], number) - 1
        if i < 0 or refs[i].info.last < number:
            return None
        return refs[i]

    def _whole(self, ref: PieceRef) -> bool:
        """No segment the piece covers would be decoded whole (it has no block list)."""
        numbers = self._numbers
        return all(numbers[n].blocks is not None for n in range(ref.info.first, ref.info.last + 1)
                   if n in numbers)

    def plan(self, segments: Sequence[SegmentStats], t0: float, t1: float,
             host: str | None = None) -> Plan:
        """The pieces to merge and the blocks to decode for ``[t0, t1)``; with ``host``, of
        that host's blocks only (the caller wants no other host's series)."""
        out = Plan()
        chosen: dict[tuple[int, int], PieceRef] = {}
        refused: set[tuple[int, int]] = set()
        for seg in segments:
            if seg.blocks is None:
                out.decode[seg.number] = None
                continue
            listed = seg.blocks if host is None else self.host_blocks(seg, host)
            for host_, lo, tmin, tmax in listed:
                if tmax < t0 or tmin >= t1:
                    continue
                ref = self.covering((host_, lo), seg.number)
                if ref is not None:
                    where = (ref.at, ref.slot)
                    if where in chosen:
                        continue
                    if (where not in refused and ref.info.tmin >= t0 and ref.info.tmax < t1
                            and self._whole(ref)):
                        chosen[where] = ref
                        continue
                    refused.add(where)
                blocks = out.decode.setdefault(seg.number, {})
                assert blocks is not None
                blocks[(host_, lo)] = ref
        out.pieces = list(chosen.values())
        return out


class BlockSieve:
    """Which decoded samples of a segment belong to the blocks to decode: a sample's block
    is the one of its host that starts last at or before its arrival time, among the blocks
    the segment lists (the writer's blocks partition each host's time). ``listed``: the
    blocks the segment lists of (at least) the hosts of ``blocks``."""

    def __init__(self, listed: Iterable[Touched], blocks: Collection[BlockKey]) -> None:
        starts: dict[str, list[float]] = {}
        self.t0, self.t1 = math.inf, -math.inf
        for host, lo, tmin, tmax in listed:
            starts.setdefault(host, []).append(lo)
            if (host, lo) in blocks:
                self.t0, self.t1 = min(self.t0, tmin), max(self.t1, tmax)
        self._starts = {h: sorted(los) for h, los in starts.items()}
        self._blocks = blocks
        self.hosts = {h for h, _ in blocks}

    def keeps(self, host: str, t: float) -> bool:
        starts = self._starts.get(host)
        if not starts:
            return False
        i = bisect_right(starts, t) - 1
        return i >= 0 and (host, starts[i]) in self._blocks


class TableMasks:
    """``series_stats``' filter applied to stats tables, once per table (tables are shared
    between frames by the reader: see ``StatsFrame``)."""

    def __init__(self, wanted: SeriesFilter | None) -> None:
        self.wanted = wanted
        self._memo: dict[int, tuple[Table, list[int]]] = {}

    def __call__(self, table: Table) -> Sequence[int]:
        found = self._memo.get(id(table))
        if found is not None and found[0] is table:
            return found[1]
        wanted = self.wanted
        pick = list(range(len(table))) if wanted is None else \
            [i for i, d in enumerate(table) if wanted(d)]
        if len(self._memo) >= 1024:
            self._memo.clear()
        self._memo[id(table)] = (table, pick)
        return pick


def _merged(hists: list[PieceHistogram]) -> dict[int, int]:
    from benchtui.store.recording.histmerge import merged  # (numpy: only where needed)

    return merged(hists)


def in_groups(refs: Sequence[PieceRef]) -> Iterator[tuple[int, list[PieceRef]]]:
    """Pieces by the STATS frame that holds them (each frame is read once)."""
    by_frame: dict[int, list[PieceRef]] = {}
    for ref in refs:
        by_frame.setdefault(ref.at, []).append(ref)
    yield from by_frame.items()


class PieceSums:
    """The pieces' figures of each series, gathered (a row a piece), then made one
    ``SeriesStats`` each with builtins over the rows in the order they came: what merging
    them one by one gives (the same min and max), without a ``SeriesStats`` per piece.
    A piece's histograms are added up with its series' others' (``histmerge.merged``)."""

    def __init__(self, *, histograms: bool = True, only: SeriesFilter | None = None) -> None:
        self._histograms = histograms
        self._only = only
        self._pieces: list[list[Row]] = []

    def add(self, rows: list[Row]) -> None:
        self._pieces.append(rows)

    def _by_series(self) -> Iterable[tuple[SeriesDef, Sequence[Row]]]:
        """Each series' rows, in the order the pieces came; the series in the order they
        first came. Consecutive pieces of one table (most of a run's) are turned into their
        series' rows in one ``zip``, not row by row."""
        groups: list[tuple[list[SeriesDef], list[list[Row]]]] = []
        for rows in self._pieces:
            defs = list(map(_DEF, rows))
            if groups and groups[-1][0] == defs:
                groups[-1][1].append(rows)
            else:
                groups.append((defs, [rows]))
        if len(groups) == 1:
            defs, pieces = groups[0]
            return zip(defs, zip(*pieces, strict=True), strict=True)
        found: dict[SeriesDef, tuple[Row, ...]] = {}
        for defs, pieces in groups:
            for d, rows_of in zip(defs, zip(*pieces, strict=True), strict=True):
                have = found.get(d)
                found[d] = rows_of if have is None else have + rows_of
        return found.items()

    def into(self, out: dict[SeriesDef, SeriesStats]) -> None:
        """Add the series' figures to ``out``."""
        if not self._pieces:
            return
        only = self._only
        for d, rows in self._by_series():
            if only is not None and not only(d):
                continue
            if len(rows) == 1:
                _d, count, total, total_sq, lo, hi, first, last, hist, part = rows[0]
                hists = None if hist is None else [hist]
                partials = None if part is None else [part]
            else:
                _ds, counts, totals, squares, los, his, firsts, lasts, hs, ps = zip(
                    *rows, strict=True)
                count, lo, hi, first, last = sum(counts), min(los), max(his), min(firsts), \
                    max(lasts)
                total = sum(totals[1:], totals[0])
                total_sq = sum(squares[1:], squares[0])
                hists = [h for h in hs if h is not None] if hs.count(None) < len(hs) else None
                partials = [p for p in ps if p is not None] if ps.count(None) < len(ps) \
                    else None
            partial: Partial | None = None
            for p in partials or ():
                partial = partial or Partial()
                partial.merge(Partial(*p))
            st = SeriesStats(count, total, total_sq, lo, hi, first, last,
                             None if hists is None or not self._histograms
                             else LatencyHistogram(_merged(hists)), partial)
            have = out.get(d)
            if have is None:
                out[d] = st
            else:
                have.merge(st)
