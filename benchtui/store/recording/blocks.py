"""Stats blocks, the writer's side: the per-series figures ``series_stats`` reads instead of
decoding every sample (docs/session-format.md, "Stats blocks").

Each host's time is cut into blocks:

- at every ``step_start``, ``step_end``, ``run_start`` and ``run_end`` event's ``t`` (an event
  with a host cuts that host's time, one without cuts every host's);
- after a step or a run starts, at the ``AFTER_START`` offsets from its start: every 5 s for
  the first minute, so that a report's window that skips 0, 5, 10 ... 60 s of ramp-up begins
  on a cut, then three times per doubling of the time since the start (75, 95, 120, 150 ...
  3840 s), so that a window can be split near its half or its last quarter, whatever its
  length, without decoding (``SessionReader.stats_split_near``). A report starts a host's
  window at its run's start, or at the step's when the host has no run events, so the
  step's offsets are dropped for a host when its run starts, and a run's when it ends (the
  ones not reached yet);
- at every multiple of ``STATS_SECONDS`` of the clock, so that no block is longer.

A batch of samples belongs to the block of its host that holds its arrival time (the time
axis of ``series_stats``). ``BlockKeeper`` keeps, per open block and series, the figures of
``SeriesStats`` (count, sum, sum of squares, min, max, first and last time, merged
histogram), and hands a block over as a ``Piece`` once it is over (``GRACE_SECONDS`` after its
end, for the records that arrive late): the writer writes the pieces of a segment's end in a
STATS frame. A piece covers the block's samples in a run of segments (``first`` to
``last``); every segment's summary lists the blocks it holds samples of, with their time
range (``Touched``), so that a reader knows which of its samples a piece covers and which it
must decode (a piece lost with a crash, a block that a window cuts through).

A cut that comes after samples at or past it were already added to the block it falls in is
not made (the block stays whole; a window starting there decodes it): blocks only ever hold
the samples whose time is in them.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Final, NamedTuple

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording.blockfold import BatchColumns
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import SeriesStats

#: Blocks are cut at every multiple of this many seconds of the clock.
STATS_SECONDS: Final = 1800.0
#: ... and at these many seconds after a step or a run starts.
AFTER_START: Final = (5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0,
                      75.0, 95.0, 120.0, 150.0, 190.0, 240.0, 300.0, 380.0, 480.0, 605.0, 760.0,
                      960.0, 1210.0, 1525.0, 1920.0, 2420.0, 3050.0, 3840.0)
#: A block is written this long (in record time) after its end; a cut this late is not made.
GRACE_SECONDS: Final = 10.0
#: Batches whose lists of series ids differ, at most this many a block (then added up).
_MAX_COLUMNS: Final = 64

_CUTS: Final = frozenset({ev.STEP_START, ev.STEP_END, ev.RUN_START, ev.RUN_END})
_STARTS: Final = frozenset({ev.STEP_START, ev.RUN_START})
_HOST = attrgetter("host")


#: A block a segment holds samples of: its host and start, and the arrival times of its
#: first and last batch in the segment (a plain tuple: a reader opening a file makes tens of
#: thousands of them).
Touched = tuple[str, float, float, float]


class PieceInfo(NamedTuple):
    """Where a piece's figures come from: block (host, start), the segments whose samples of
    the block it sums (``first`` to ``last``), and their arrival times' range."""

    host: str
    lo: float
    first: int
    last: int
    tmin: float
    tmax: float


def touched_ok(b: object) -> bool:
    """A summary's block entry (from its JSON) is a ``Touched``."""
    return type(b) is list and len(b) == 4 and type(b[0]) is str \
        and all(type(x) is float for x in b[1:])


def piece_ok(p: PieceInfo) -> bool:
    """A summary's piece (from its JSON) has the types of a ``PieceInfo``."""
    return (type(p.host) is str and type(p.first) is int and type(p.last) is int
            and all(type(x) is float for x in (p.lo, p.tmin, p.tmax)))


@dataclass(slots=True)
class Piece:
    info: PieceInfo
    stats: dict[SeriesDef, SeriesStats]


@dataclass(slots=True)
class _Block:
    host: str
    lo: float
    hi: float
    first: int
    last: int
    tmin: float = math.inf
    tmax: float = -math.inf
    stats: dict[SeriesDef, SeriesStats] = field(default_factory=dict)
    #: the open segment's batches, by their list of series ids (added to ``stats`` when
    #: the segment ends)
    columns: dict[int, BatchColumns] = field(default_factory=dict)


class BlockKeeper:
    """The open blocks of a recording, fed the records as the writer encodes them. A failure
    (a bug; or a record at a time that is not a finite number) stops the stats blocks for the
    rest of the recording: what has no piece is decoded by readers, so nothing is wrong,
    only slower."""

    def __init__(self, seconds: float = STATS_SECONDS) -> None:
        self.seconds = seconds
        self.failed = False
        self._cuts: dict[str, list[float]] = {}
        self._global: list[float] = []
        self._open: dict[tuple[str, float], _Block] = {}
        self._current: dict[str, _Block] = {}
        self._touched: dict[tuple[str, float], list[float]] = {}
        self._segment = 0
        #: the cuts after the last step start, and after each host's last run start
        self._step_grid: list[float] = []
        self._run_grid: dict[str, list[float]] = {}
        #: the open segment's series ids -> their definition with sorted labels
        self._keys: list[SeriesDef] = []
        self._max_t = -math.inf

    # --- the records ---------------------------------------------------------------------

    def start_segment(self, number: int) -> None:
        self._segment = number
        self._keys = []
        self._touched = {}
        self._current.clear()

    def saw(self, t: float) -> None:
        """A record arrived at ``t`` (any kind: the clock blocks are written by)."""
        if t > self._max_t:
            if math.isfinite(t):
                self._max_t = t
            elif not self.failed:
                self._fail()

    def event(self, e: Event) -> None:
        if self.failed or e.kind not in _CUTS:
            return
        try:
            t = float(e.t)
            if not math.isfinite(t):
                return
            hosts = [e.host] if e.host is not None else list(self._cuts)
            for host in hosts:  # a start brings its own offsets, an end needs none
                self._uncut(host, self._step_grid + self._run_grid.pop(host, []))
            grid = [t + dt for dt in AFTER_START] if e.kind in _STARTS else []
            if e.host is None:
                self._step_grid = grid
                i = bisect_left(self._global, t)
                if i == len(self._global) or self._global[i] != t:
                    self._global.insert(i, t)
            elif grid:
                self._run_grid[e.host] = grid
            for host in hosts:
                self._cut(host, t)
                for c in grid:
                    self._cut(host, c)
        except Exception:  # noqa: BLE001 (stats must never stop a recording)
            self._fail()

    def add_samples(self, t: float, samples: list[Sample], sids: list[int],
                    defs: list[SeriesDef]) -> None:
        """A batch of samples (arrived at ``t``), with their series ids in the segment and the
        segment's series definitions (``SegmentEncoder.defs``)."""
        if self.failed or not samples:
            return
        try:
            if not math.isfinite(t):
                self._fail()
                return
            keys = self._keys
            if len(keys) < len(defs):
                keys += [SeriesDef(d.host, d.tool, d.kind, d.metric, tuple(sorted(d.labels)))
                         for d in defs[len(keys):]]
            hosts = list(map(_HOST, samples))
            if hosts.count(hosts[0]) == len(hosts):
                self._fold(self._block(hosts[0], t), t, samples, sids)
                return
            for host in dict.fromkeys(hosts):
                at = [i for i, h in enumerate(hosts) if h == host]
                self._fold(self._block(host, t), t, [samples[i] for i in at],
                           [sids[i] for i in at])
        except Exception:  # noqa: BLE001 (stats must never stop a recording)
            self._fail()

    def end_segment(self, *, closing: bool = False
                    ) -> tuple[list[Touched] | None, list[Piece]]:
        """The blocks the segment just ended holds samples of (None: it has no block
        information, its samples must be decoded), and the pieces to write now: the blocks
        over for ``GRACE_SECONDS`` (every block when ``closing``)."""
        if self.failed:
            return None, []
        self._settle()
        touched = [(h, lo, a, b) for (h, lo), (a, b) in self._touched.items()]
        self._touched = {}
        self._current.clear()
        return touched, self.take_pieces(closing=closing)

    def take_pieces(self, *, closing: bool = False) -> list[Piece]:
        if self.failed:
            return []
        self._settle()
        pieces = []
        horizon = self._max_t - GRACE_SECONDS
        for key, blk in list(self._open.items()):
            if closing or blk.hi <= horizon:
                pieces.append(Piece(PieceInfo(blk.host, blk.lo, blk.first, blk.last, blk.tmin,
                                              blk.tmax), blk.stats))
                del self._open[key]
        return pieces

    # --- blocks ----------------------------------------------------------------------------

    def _fail(self) -> None:
        self.failed = True
        self._open.clear()
        self._current.clear()
        self._touched = {}

    def _bounds(self, host: str, t: float) -> tuple[float, float]:
        """The block of ``host`` that holds time ``t``: [lo, hi)."""
        p = self.seconds
        k = math.floor(t / p)
        if k * p > t:
            k -= 1
        elif (k + 1) * p <= t:
            k += 1
        lo, hi = k * p, (k + 1) * p
        cuts = self._host_cuts(host)
        i = bisect_right(cuts, t)
        if i:
            lo = max(lo, cuts[i - 1])
        if i < len(cuts):
            hi = min(hi, cuts[i])
        return lo, hi

    def _host_cuts(self, host: str) -> list[float]:
        cuts = self._cuts.get(host)
        if cuts is None:  # a host seen for the first time has the cuts made for every host
            cuts = self._cuts[host] = sorted({*self._global, *self._step_grid})
        return cuts

    def _cut(self, host: str, c: float) -> None:
        cuts = self._host_cuts(host)
        i = bisect_left(cuts, c)
        if i < len(cuts) and cuts[i] == c:
            return
        if c < self._max_t - GRACE_SECONDS:
            return  # too late: the block it falls in may be written already
        lo, _hi = self._bounds(host, c)
        if lo == c:
            return
        blk = self._open.get((host, lo))
        if blk is not None:
            if blk.tmax >= c:
                return  # samples at or past the cut are in the block already
            blk.hi = c
        cuts.insert(i, c)
        self._current.pop(host, None)

    def _uncut(self, host: str, grid: list[float]) -> None:
        """Drop the cuts of ``grid`` that no record of ``host`` has reached yet."""
        cuts = self._host_cuts(host)
        dropped: set[float] = set()
        for c in grid:
            i = bisect_left(cuts, c)
            if c > self._max_t and i < len(cuts) and cuts[i] == c:
                del cuts[i]
                dropped.add(c)
        if dropped:
            self._current.pop(host, None)
            # only a block that ended at a dropped cut can grow (the others' ends are still
            # cuts or the clock's): a session of many short steps keeps many blocks open
            for blk in self._open.values():
                if blk.hi in dropped and blk.host == host:
                    blk.hi = self._bounds(host, blk.lo)[1]

    def _block(self, host: str, t: float) -> _Block:
        blk = self._current.get(host)
        if blk is None or not blk.lo <= t < blk.hi:
            lo, hi = self._bounds(host, t)
            blk = self._open.get((host, lo))
            if blk is None:
                blk = self._open[(host, lo)] = _Block(host, lo, hi, self._segment,
                                                      self._segment)
            self._current[host] = blk
        blk.last = self._segment
        blk.tmin = min(blk.tmin, t)
        blk.tmax = max(blk.tmax, t)
        span = self._touched.get((host, blk.lo))
        if span is None:
            self._touched[(host, blk.lo)] = [t, t]
        elif t < span[0]:
            span[0] = t
        elif t > span[1]:
            span[1] = t
        return blk

    def _fold(self, blk: _Block, t: float, samples: list[Sample], sids: list[int]) -> None:
        columns = blk.columns.get(id(sids))  # (it holds ``sids``: not another list's id)
        if columns is None:
            if len(blk.columns) >= _MAX_COLUMNS:
                self._settle_block(blk)
            columns = blk.columns[id(sids)] = BatchColumns(sids)
        columns.add(t, samples)

    def _settle(self) -> None:
        """Add the open segment's batches to the blocks' figures (series ids are the
        segment's)."""
        for blk in self._open.values():
            if blk.columns:
                self._settle_block(blk)

    def _settle_block(self, blk: _Block) -> None:
        for columns in blk.columns.values():
            columns.fold_into(blk.stats, self._keys)
        blk.columns.clear()
