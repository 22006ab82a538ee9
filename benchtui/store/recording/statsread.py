"""Reading a session file's stats blocks: what ``SessionReader.series_stats`` and
``stats_split_near`` answer from (``blocks.py`` writes them; docs/session-format.md, "Stats
blocks").

``StatsReader.series_stats`` merges the pieces of the STATS frames that cover a window
exactly (``blockread.BlockIndex`` plans which) and decodes the rest of the window's samples
(a block the window cuts through, a segment without block lists, a piece lost with a crash);
the same figures either way. It reads the file through its ``SessionReader``: the segments
overlapping a window and their decoded records.
"""

from __future__ import annotations

import contextlib
import math
import mmap
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence

from benchtui.model.sample import Sample
from benchtui.store.recording import format as fmt
from benchtui.store.recording.blockread import (
    BlockIndex,
    BlockSieve,
    PieceRef,
    PieceSums,
    TableMasks,
    in_groups,
)
from benchtui.store.recording.codec import SeriesDef, TimedRecord
from benchtui.store.recording.decoder import SeriesFilter
from benchtui.store.recording.inflate import zstd_payload
from benchtui.store.recording.series_stats import SeriesStats, accumulate_stats
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.statsframe import StatsFrame, Table
from benchtui.store.recording.varint import CodecError

__all__ = ["StatsReader"]

_CACHED_STATS_FRAMES = 64
#: ``SessionReader._overlapping`` and ``_decode``: the segments with records in [t0, t1),
#: and one segment's records in [t0, t1) (with the decoder's options).
Overlapping = Callable[[float, float], Iterator[SegmentStats]]
Decode = Callable[..., Iterator[TimedRecord]]


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
        self._masks = TableMasks(None)

    def close(self) -> None:
        self._stats_frames.clear()

    def series_stats(self, t0: float, t1: float, wanted: SeriesFilter | None = None,
                     host: str | None = None) -> dict[SeriesDef, SeriesStats]:
        """Per series (those ``wanted`` accepts, all when None): count, sum, min, max and the
        merged histogram of the samples that reached the sinks in ``[t0, t1)``
        (``series_stats.py``): what a report needs of a step's window. Read from the file's
        stats blocks where they cover the window exactly (``blockread.py``), decoded where
        they do not (a window that cuts through a block, an older file, a crash's last
        minutes): the same figures either way. ``host``: ``wanted`` accepts only that host's
        series, and only its blocks are looked at (a report asks host by host: without it
        every query would walk every host's blocks)."""
        out: dict[SeriesDef, SeriesStats] = {}
        segments = list(self._overlapping(t0, t1))
        if not segments:
            return out
        plan = self._blocks().plan(segments, t0, t1, host)
        if self._masks.wanted is not wanted:
            self._masks = TableMasks(wanted)
        numbers = {s.number for s in segments}
        sums = PieceSums()
        for at, refs in in_groups(plan.pieces):
            frame = self._stats_frame(at)
            for ref in refs:
                found = None
                if frame is not None and ref.slot < len(frame.heads) \
                        and frame.heads[ref.slot][0] == ref.info:
                    with contextlib.suppress(CodecError):
                        found = frame.rows(ref.slot, self._masks)
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
                blocks = {key: ref for key, ref in blocks.items() if self._may_want(ref)}
                if not blocks:
                    continue
            self._decode_stats(seg, blocks, (t0, t1), wanted, out)
        return out

    def _blocks(self) -> BlockIndex:
        if self._block_index is None:
            self._block_index = BlockIndex(self._segments)
        return self._block_index

    def _may_want(self, ref: PieceRef | None) -> bool:
        """False when the piece that covers a block to decode says that the block has no
        series ``series_stats`` wants (its table has all the block's series)."""
        if ref is None:
            return True
        frame = self._stats_frame(ref.at)
        if frame is None or ref.slot >= len(frame.heads) or frame.heads[ref.slot][0] != ref.info:
            return True
        return bool(self._masks(frame.tables[frame.heads[ref.slot][1]]))

    def _decode_stats(self, seg: SegmentStats, blocks: Collection[tuple[str, float]] | None,
                      window: tuple[float, float], wanted: SeriesFilter | None,
                      out: dict[SeriesDef, SeriesStats]) -> None:
        """Add the samples of ``seg`` in [t0, t1) to ``out``: those of ``blocks`` (all when
        None)."""
        sieve = None if blocks is None else BlockSieve(seg, blocks)
        t0, t1 = window
        lo, hi, series_filter = t0, t1, wanted
        if sieve is not None:
            lo, hi = max(t0, sieve.t0), min(t1, math.nextafter(sieve.t1, math.inf))
            series_filter = sieve.series_filter(wanted)
        def batches() -> Iterator[tuple[float, list[Sample]]]:
            for t, batch in self._decode(seg, lo, hi, events=False, output=False,
                                         series_filter=series_filter, to_end=True):
                if isinstance(batch, list):
                    yield t, batch if sieve is None else [
                        s for s in batch if sieve.keeps(s.host, t)]

        accumulate_stats(batches(), into=out)

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
