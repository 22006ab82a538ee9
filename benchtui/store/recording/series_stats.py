"""What a report needs of a stretch of a session, per series: how many samples, their sum,
min and max, and (for latency histogram series) the merged histogram.

Interval values are weighted by the time they cover: a sample with a ``duration`` (a partial
last interval, ``Sample.duration``) counts for ``duration / interval`` of a nominal one, where
the nominal interval is the series' own (its nominal samples' spacing, about a second for the
tools benchtui runs). Its sums are kept apart (``Partial``) so that the weighting is exact
when stretches are merged.

``SessionReader.series_stats(t0, t1, wanted)`` answers it for the records that reached the
sinks in ``[t0, t1)`` (the recording's time axis, as ``records`` uses). A mean over the
stretch is ``total / count``; a percentile over the stretch is a quantile of ``histogram``:
exact, as fleet percentiles are (merged histograms, never averaged percentiles).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample
from benchtui.store.recording.codec import SeriesDef

#: The nominal interval assumed for a series with fewer than two nominal samples (seconds).
NOMINAL_INTERVAL = 1.0


@dataclass(slots=True)
class Partial:
    """The samples of a series that cover a partial interval (``Sample.duration``)."""

    count: int = 0
    #: Sum of their values and of their squares (as ``SeriesStats.total``, ``total_sq``).
    total: float = 0.0
    total_sq: float = 0.0
    #: Sum of their durations (seconds), of value x duration, and of value^2 x duration.
    seconds: float = 0.0
    weighted: float = 0.0
    weighted_sq: float = 0.0

    def add(self, v: float, d: float) -> None:
        self.count += 1
        self.total += v
        self.total_sq += v * v
        self.seconds += d
        self.weighted += v * d
        self.weighted_sq += v * v * d

    def merge(self, other: Partial) -> None:
        self.count += other.count
        self.total += other.total
        self.total_sq += other.total_sq
        self.seconds += other.seconds
        self.weighted += other.weighted
        self.weighted_sq += other.weighted_sq

    def astuple(self) -> tuple[int, float, float, float, float, float]:
        return (self.count, self.total, self.total_sq, self.seconds, self.weighted,
                self.weighted_sq)


@dataclass(slots=True)
class SeriesStats:
    """One series over a stretch of a session."""

    count: int
    total: float
    #: Sum of the squares of the values (with ``total`` and ``count``: the variance).
    total_sq: float
    minimum: float
    maximum: float
    #: Times of the first and the last sample (the sample's own ``t``, else its arrival).
    first_t: float
    last_t: float
    #: The series' histograms added up (histogram series only).
    histogram: LatencyHistogram | None = None
    #: Its samples that cover a partial interval (None: none did).
    partial: Partial | None = None

    @property
    def interval(self) -> float:
        """The series' nominal interval in seconds: the spacing of its nominal samples
        (the time between the first and the last sample, less the partial intervals')."""
        p = self.partial
        if p is None or self.count - p.count < 2:
            return NOMINAL_INTERVAL
        span = self.last_t - self.first_t - p.seconds
        return span / (self.count - p.count - 1) if span > 0 else NOMINAL_INTERVAL

    def _weighted(self) -> tuple[float, float, float]:
        """(weight, sum of weight x value, sum of weight x value^2); a nominal sample
        weighs 1, a partial one its duration over the nominal interval."""
        p = self.partial
        if p is None:
            return float(self.count), self.total, self.total_sq
        k = 1.0 / self.interval
        return (self.count - p.count + p.seconds * k, self.total - p.total + p.weighted * k,
                self.total_sq - p.total_sq + p.weighted_sq * k)

    @property
    def mean(self) -> float:
        """The mean of the values, each weighted by the time it covers."""
        if not self.count:
            return 0.0
        w, total, _ = self._weighted()
        return total / w if w > 0 else self.total / self.count

    @property
    def stdev(self) -> float:
        """Population standard deviation of the values (weighted as ``mean``)."""
        if not self.count:
            return 0.0
        w, total, total_sq = self._weighted()
        if w <= 0:
            return 0.0
        mean = total / w
        return math.sqrt(max(total_sq / w - mean * mean, 0.0))

    @classmethod
    def of(cls, t: float, s: Sample) -> SeriesStats:
        st = t if s.t is None else s.t
        hist = None
        if s.histogram is not None:
            hist = LatencyHistogram(dict(s.histogram.counts))
        partial = None
        if s.duration is not None:
            partial = Partial()
            partial.add(s.value, s.duration)
        return cls(1, s.value, s.value * s.value, s.value, s.value, st, st, hist, partial)

    def add(self, t: float, s: Sample) -> None:
        v = s.value
        if s.duration is not None:
            if self.partial is None:
                self.partial = Partial()
            self.partial.add(v, s.duration)
        self.count += 1
        self.total += v
        self.total_sq += v * v
        self.minimum = min(self.minimum, v)
        self.maximum = max(self.maximum, v)
        st = t if s.t is None else s.t
        self.first_t = min(self.first_t, st)
        self.last_t = max(self.last_t, st)
        if s.histogram is not None:
            if self.histogram is None:
                self.histogram = LatencyHistogram()
            self.histogram.merge(s.histogram)

    def merge(self, other: SeriesStats) -> None:
        """Add another stretch of the same series."""
        self.count += other.count
        self.total += other.total
        self.total_sq += other.total_sq
        self.minimum = min(self.minimum, other.minimum)
        self.maximum = max(self.maximum, other.maximum)
        self.first_t = min(self.first_t, other.first_t)
        self.last_t = max(self.last_t, other.last_t)
        if other.histogram is not None:
            if self.histogram is None:
                self.histogram = LatencyHistogram()
            self.histogram.merge(other.histogram)
        if other.partial is not None:
            if self.partial is None:
                self.partial = Partial()
            self.partial.merge(other.partial)


def series_def(s: Sample) -> SeriesDef:
    """The series a sample belongs to, as the recording names it (labels sorted)."""
    return SeriesDef(s.host, s.tool, s.kind, s.metric, tuple(sorted(s.labels.items())))


def accumulate_stats(timed_batches: Iterable[tuple[float, list[Sample]]],
                     into: dict[SeriesDef, SeriesStats] | None = None
                     ) -> dict[SeriesDef, SeriesStats]:
    """Add batches of samples (with their arrival times) to per-series stats."""
    out: dict[SeriesDef, SeriesStats] = {} if into is None else into
    for t, batch in timed_batches:
        for s in batch:
            key = series_def(s)
            st = out.get(key)
            if st is None:
                out[key] = SeriesStats.of(t, s)
            else:
                st.add(t, s)
    return out
