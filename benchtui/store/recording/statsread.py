"""Reading a session file's stats blocks: what ``SessionReader.series_stats`` and
``stats_split_near`` answer from (``blocks.py`` writes them; docs/session-format.md, "Stats
blocks").

``StatsReader.series_stats`` merges the pieces of the STATS frames that cover a window
exactly (``blockread.BlockIndex`` plans which) and decodes the rest of the window's samples
(a block the window cuts through, a segment without block lists, a piece lost with a crash);
the same figures either way. It reads the file through its ``SessionReader``: the segments
overlapping a window and their decoded records. ``series_stats_many`` answers many windows
at once, decoding each segment once for all of them (a report's hosts' windows start and
end in the same segments).
"""

from __future__ import annotations

import contextlib
import math
import mmap
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import NamedTuple

from benchtui.model.sample import Sample
from benchtui.store.recording import format as fmt
from benchtui.store.recording.blockread import (
    BlockIndex,
    BlockKey,
    BlockSieve,
    PieceRef,
    PieceSums,
    TableMasks,
    in_groups,
)
from benchtui.store.recording.codec import SeriesDef, TimedRecord
from benchtui.store.recording.decoder import SeriesFilter
from benchtui.store.recording.inflate import zstd_payload
from benchtui.store.recording.series_stats import SeriesStats, series_def
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.statsframe import Row, StatsFrame, Table
from benchtui.store.recording.varint import CodecError

__all__ = ["Query", "StatsReader"]

_CACHED_STATS_FRAMES = 64
#: Pieces' rows kept (a step's 16 hosts' hour-long runs: ~30,000, read for their whole and
#: then their window: kept for both), and filters.
_CACHED_ROWS = 131072
_KEPT_FILTERS = 4096
#: ``SessionReader._overlapping`` and ``_decode``: the segments with records in [t0, t1),
#: and one segment's records in [t0, t1) (with the decoder's options).
Overlapping = Callable[[float, float], Iterator[SegmentStats]]
Decode = Callable[..., Iterator[TimedRecord]]


class Query(NamedTuple):
    """One ``series_stats`` question (``StatsReader.series_stats_many``)."""

    t0: float
    t1: float
    wanted: SeriesFilter | None = None
    host: str | None = None
    histograms: bool = True
    #: Of the series ``wanted`` accepts, only these (None: all). Unlike ``wanted``, it does
    #: not change which pieces' rows are read: a query with the same ``wanted`` as one
    #: before it reuses them (a report reads a run's pieces for its whole, then its window).
    only: SeriesFilter | None = None


class _Need:
    """What one query must decode of one segment: its samples in ``[lo, hi)`` that belong
    to its blocks to decode (``sieve``; all, when None) and that it wants."""

    __slots__ = ("_memo", "_only", "_out", "_sieve", "_wanted", "hi", "hosts", "lo")

    def __init__(self, q: Query, out: dict[SeriesDef, SeriesStats],
                 sieve: BlockSieve | None) -> None:
        self._out = out
        self._sieve = sieve
        self._wanted = q.wanted
        self._only = q.only
        self.lo, self.hi = q.t0, q.t1
        self.hosts: Collection[str | None] = [q.host]
        if sieve is not None:
            self.lo, self.hi = max(q.t0, sieve.t0), min(q.t1, math.nextafter(sieve.t1,
                                                                               math.inf))
            self.hosts = sieve.hosts
        self._memo: dict[SeriesDef, bool] = {}

    def keeps(self, host: str, t: float) -> bool:
        return self._sieve is None or self._sieve.keeps(host, t)

    def accepts(self, d: SeriesDef) -> bool:
        found = self._memo.get(d)
        if found is None:
            found = self._memo[d] = (self._sieve is None or d.host in self._sieve.hosts) \
                and (self._wanted is None or self._wanted(d)) \
                and (self._only is None or self._only(d))
        return found

    def add(self, t: float, s: Sample, key: SeriesDef) -> None:
        st = self._out.get(key)
        if st is None:
            self._out[key] = SeriesStats.of(t, s)
        else:
            st.add(t, s)


class StatsReader:
    """The stats blocks of one open session file (module docstring)."""

    def __init__(self, mm: mmap.mmap, size: int, segments: Sequence[SegmentStats],
                 stats_seconds: float | None, *, overlapping: Overlapping,
                 decode: Decode) -> None:
        self._mm, self._size = mm, size
        self._segments = segments
        self._period = stats_seconds
        self._overlapping = overlapping
        self._decode = decode
        self._block_index: BlockIndex | None = None
        self._stats_frames: OrderedDict[int, StatsFrame | None] = OrderedDict()
        self._tables: dict[bytes, Table] = {}
        #: the filters of the queries lately asked, and the pieces' rows they picked
        #: (a report reads a run's pieces twice: its whole and its window)
        self._masks: dict[SeriesFilter | None, TableMasks] = {}
        self._rows: OrderedDict[tuple[int, int, TableMasks], list[Row]] = OrderedDict()
        self._rows_held = 0

    def close(self) -> None:
        self._stats_frames.clear()
        self._rows.clear()

    def series_stats(self, t0: float, t1: float, wanted: SeriesFilter | None = None,
                     host: str | None = None, *, histograms: bool = True
                     ) -> dict[SeriesDef, SeriesStats]:
        """Per series (those ``wanted`` accepts, all when None): count, sum, min, max and the
        merged histogram of the samples that reached the sinks in ``[t0, t1)``
        (``series_stats.py``): what a report needs of a step's window. Read from the file's
        stats blocks where they cover the window exactly (``blockread.py``), decoded where
        they do not (a window that cuts through a block, an older file, a crash's last
        minutes): the same figures either way. ``host``: ``wanted`` accepts only that host's
        series, and only its blocks are looked at (a report asks host by host: without it
        every query would walk every host's blocks). ``histograms`` False: no series has
        its histogram (the pieces' are not decoded)."""
        return self.series_stats_many([Query(t0, t1, wanted, host, histograms)])[0]

    def series_stats_many(self, queries: Sequence[Query]) -> list[dict[SeriesDef, SeriesStats]]:
        """``series_stats`` of each query, the same figures, with the samples every query
        must decode read in one decoding of each segment for all of them (a report's hosts'
        windows start and end in the same segments: asked one by one, each would decode
        the segment, every host's records in it, from its start)."""
        outs: list[dict[SeriesDef, SeriesStats]] = []
        needs: dict[int, tuple[SegmentStats, list[_Need]]] = {}
        for q in queries:
            out: dict[SeriesDef, SeriesStats] = {}
            outs.append(out)
            for seg, blocks in self._from_pieces(q, out):
                need = _Need(q, out, None if blocks is None else BlockSieve(
                    self._blocks().blocks_of(seg, {h for h, _ in blocks}), blocks))
                needs.setdefault(seg.number, (seg, []))[1].append(need)
        for seg, group in sorted(needs.values(), key=lambda sg: sg[0].offset):
            self._decode_many(seg, group)
        for q, out in zip(queries, outs, strict=True):
            if not q.histograms:
                for st in out.values():
                    st.histogram = None
        return outs

    def _from_pieces(self, q: Query, out: dict[SeriesDef, SeriesStats]
                     ) -> Iterator[tuple[SegmentStats, dict[BlockKey, PieceRef | None] | None]]:
        """Add the pieces that answer ``q`` to ``out``; then the segments whose samples must
        still be decoded for it, each with its blocks to decode (None: all of it)."""
        segments = list(self._overlapping(q.t0, q.t1))
        if not segments:
            return
        plan = self._blocks().plan(segments, q.t0, q.t1, q.host)
        masks = self._masks_of(q.wanted)
        numbers = {s.number for s in segments}
        sums = PieceSums(histograms=q.histograms, only=q.only)
        for _at, refs in in_groups(plan.pieces):
            for ref in refs:
                found = self._piece_rows(ref, masks)
                if found is None:
                    plan.fall_back(ref, numbers)
                    continue
                sums.add(found)
        sums.into(out)
        for seg in segments:
            if seg.number not in plan.decode:
                continue
            blocks = plan.decode[seg.number]
            if blocks is not None:
                blocks = {key: ref for key, ref in blocks.items() if self._may_want(ref, masks)}
                if not blocks:
                    continue
            yield seg, blocks

    def _blocks(self) -> BlockIndex:
        if self._block_index is None:
            self._block_index = BlockIndex(self._segments)
        return self._block_index

    def _masks_of(self, wanted: SeriesFilter | None) -> TableMasks:
        masks = self._masks.get(wanted)
        if masks is None:
            if len(self._masks) >= _KEPT_FILTERS:
                self._masks.clear()
                self._rows.clear()
                self._rows_held = 0
            masks = self._masks[wanted] = TableMasks(wanted)
        return masks

    def _piece_rows(self, ref: PieceRef, masks: TableMasks) -> list[Row] | None:
        """A piece's rows of the series ``masks`` picks (None: it cannot be read)."""
        key = (ref.at, ref.slot, masks)
        found = self._rows.get(key)
        if found is not None:
            self._rows.move_to_end(key)
            return found
        frame = self._stats_frame(ref.at)
        if frame is None or ref.slot >= len(frame.heads) or frame.heads[ref.slot][0] != ref.info:
            return None
        if frame.decoded is None:  # every piece of the frame decoded at once, in numpy
            from benchtui.store.recording.statscolumns import FrameColumns

            frame.decoded = FrameColumns(frame.heads, frame.tables).rows
        try:
            found = frame.rows(ref.slot, masks)
        except CodecError:
            return None
        self._rows[key] = found
        self._rows_held += len(found)
        while self._rows_held > _CACHED_ROWS:
            self._rows_held -= len(self._rows.popitem(last=False)[1])
        return found

    def _may_want(self, ref: PieceRef | None, masks: TableMasks) -> bool:
        """False when the piece that covers a block to decode says that the block has no
        series ``series_stats`` wants (its table has all the block's series)."""
        if ref is None:
            return True
        frame = self._stats_frame(ref.at)
        if frame is None or ref.slot >= len(frame.heads) or frame.heads[ref.slot][0] != ref.info:
            return True
        return bool(masks(frame.tables[frame.heads[ref.slot][1]]))

    def _decode_many(self, seg: SegmentStats, needs: list[_Need]) -> None:
        """Add the samples of ``seg`` each need asks for to its figures, decoding the
        segment once (from the earliest time asked for to the latest)."""
        by_host: dict[str | None, list[_Need]] = {}
        for need in needs:
            for h in need.hosts:
                by_host.setdefault(h, []).append(need)
        anywhere = by_host.pop(None, [])

        def series_filter(d: SeriesDef) -> bool:
            return any(n.accepts(d) for n in (*by_host.get(d.host, ()), *anywhere))

        lo, hi = min(n.lo for n in needs), max(n.hi for n in needs)
        for t, batch in self._decode(seg, lo, hi, events=False, output=False,
                                     series_filter=series_filter, to_end=True):
            if not isinstance(batch, list):
                continue
            for s in batch:
                key: SeriesDef | None = None
                for need in (*by_host.get(s.host, ()), *anywhere):
                    if need.lo <= t < need.hi and need.keeps(s.host, t):
                        if key is None:
                            key = series_def(s)
                        if need.accepts(key):
                            need.add(t, s, key)

    def _stats_frame(self, at: int) -> StatsFrame | None:
        """The STATS frame at file offset ``at`` (None: not one, or damaged)."""
        if at in self._stats_frames:
            self._stats_frames.move_to_end(at)
            return self._stats_frames[at]
        frame = None
        body = zstd_payload(self._mm, self._size, at, fmt.STATS)
        if body is not None:
            with contextlib.suppress(CodecError):
                frame = StatsFrame(body, self._tables)
        self._stats_frames[at] = frame
        if len(self._stats_frames) > _CACHED_STATS_FRAMES:
            self._stats_frames.popitem(last=False)
        return frame

    def split_near(self, t: float, within: float, host: str | None = None) -> float:
        """The time nearest ``t``, at most ``within`` seconds from it, at which
        ``series_stats`` splits a window without decoding: where every host's stats blocks
        start (the clock period they were cut at), or with ``host``, where one of that host's
        does (after a run starts they are 5 s apart for a minute, then three per doubling of
        the time since the start: ``blocks.py``). ``t`` itself when there is none (a file
        without stats blocks)."""
        if not math.isfinite(t) or not math.isfinite(within):
            return t
        lo, hi = t - within, t + within
        found: list[float] = []
        period = self._period
        if period:
            n = math.floor(t / period)
            found += [i * period for i in (n - 1, n, n + 1, n + 2)]
        if host is not None:
            index = self._blocks()  # (checks the block lists)
            found += [b[1] for seg in self._overlapping(lo, math.nextafter(hi, math.inf))
                      for b in index.host_blocks(seg, host)]
        near = [c for c in found if lo <= c <= hi]
        return min(near, key=lambda c: (abs(c - t), c)) if near else t
