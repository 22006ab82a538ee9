"""Adding batches of samples to a stats block's figures, on the recorder's live path
(``blocks.py``).

A source sends the same series in the same order batch after batch, and the frame codec gives
such a batch the very list of series ids it gave the previous one (``SegmentEncoder
.batch_series``). ``BatchColumns`` keeps, for the batches of a block with one such list, each
batch's values and times (two C-level list copies a batch: the live path pays ~20 ns a
sample), and makes the figures of each series from them when the segment ends, with builtins
over each position's column (sum, sum of squares, min, max, first and last time): those
``SeriesStats.add`` gives sample by sample, the same comparisons in the same order for min
and max, sums perhaps in another order. A segment's values of a host (~130 series a second)
take ~250 KB until then.

A latency histogram held as running sums over the same keys as the one before it (fio's,
interval after interval) is added to the running sums, also by ``map``; any other is added
to the counts (``HistogramSum``).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import add, attrgetter, mul

from benchtui.model.histogram import LatencyHistogram, counts_from_sums
from benchtui.model.sample import Sample
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import Partial, SeriesStats

_VALUE, _T, _HISTOGRAM = attrgetter("value"), attrgetter("t"), attrgetter("histogram")
_DURATION = attrgetter("duration")
_PLAIN = frozenset({float, int})


class HistogramSum:
    """Histograms added up, as merging the recording's histograms would give them (the same
    buckets, zero counts included where the recording keeps them)."""

    __slots__ = ("_counts", "_cum", "_keys")

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self._keys: Sequence[int] | None = None
        self._cum: list[int] = []

    def add(self, h: LatencyHistogram) -> None:
        sums = h.running_sums()
        if sums is not None:
            keys, cum = sums
            # counts >= 0: the sums in order (sorting a sorted list of ints is one C pass,
            # 3x faster than comparing each with the next)
            if len(keys) == len(cum) and sorted(cum) == (cum if type(cum) is list else list(cum)):
                if keys is self._keys or (self._keys is not None and keys == self._keys):
                    self._cum = list(map(add, self._cum, cum))
                else:
                    self._settle()
                    self._keys, self._cum = keys, list(cum)
                return
            counts = counts_from_sums(keys, cum) if len(keys) == len(cum) else h.counts
        else:
            counts = h.counts
        into = self._counts
        get = into.get
        for k, c in counts.items():
            into[k] = get(k, 0) + c

    def _settle(self) -> None:
        if self._keys is not None:
            into = self._counts
            get = into.get
            for k, c in counts_from_sums(self._keys, self._cum).items():
                into[k] = get(k, 0) + c
            self._keys, self._cum = None, []

    def histogram(self) -> LatencyHistogram:
        self._settle()
        return LatencyHistogram(self._counts)


class BatchColumns:
    """The values and times of a block's batches that share one list of series ids
    (``sids``, held: its identity is the key), batch by batch, and the histograms added up
    by position; their figures are made when the segment ends (``fold_into``)."""

    __slots__ = ("hists", "partials", "sids", "times", "values")

    def __init__(self, sids: list[int]) -> None:
        self.sids = sids
        self.values: list[list[float]] = []
        self.times: list[list[float]] = []
        self.hists: dict[int, HistogramSum] = {}
        #: position -> its samples that cover a partial interval (``Sample.duration``)
        self.partials: dict[int, Partial] = {}

    def add(self, t: float, samples: list[Sample]) -> None:
        self.values.append(_values(samples))
        self.times.append(_times(t, samples))
        durations = list(map(_DURATION, samples))
        if durations.count(None) != len(durations):
            for i, (s, d) in enumerate(zip(samples, durations, strict=True)):
                if d is not None:
                    self.partials.setdefault(i, Partial()).add(s.value, d)
        histograms = list(map(_HISTOGRAM, samples))
        if histograms.count(None) == len(histograms):
            return
        for i, h in enumerate(histograms):
            if h is not None:
                acc = self.hists.get(i)
                if acc is None:
                    acc = self.hists[i] = HistogramSum()
                acc.add(h)

    def fold_into(self, stats: dict[SeriesDef, SeriesStats], keys: list[SeriesDef]) -> None:
        """Add the batches to ``stats`` (series id -> definition: ``keys``): each position's
        values in batch order, by builtins that take them in that order (``min`` keeps the
        first of equal values, as ``SeriesStats.add`` does)."""
        n = len(self.values)
        hists = self.hists
        columns = zip(self.sids, zip(*self.values, strict=True), zip(*self.times, strict=True),
                      strict=True)
        for i, (sid, col, tcol) in enumerate(columns):
            acc = hists.get(i)
            part = SeriesStats(n, sum(col), sum(map(mul, col, col)), min(col), max(col),
                               min(tcol), max(tcol), None if acc is None else acc.histogram(),
                               self.partials.get(i))
            have = stats.get(keys[sid])
            if have is None:
                stats[keys[sid]] = part
            else:
                have.merge(part)


def _values(samples: list[Sample]) -> list[float]:
    values = list(map(_VALUE, samples))
    if not set(map(type, values)) <= _PLAIN:  # a bool, a float subclass: as recorded
        values = [v if type(v) in _PLAIN else float(v) for v in values]
    return values


def _times(t: float, samples: list[Sample]) -> list[float]:
    times = list(map(_T, samples))
    if None in times:
        times = [t if x is None else x for x in times]
    return times
