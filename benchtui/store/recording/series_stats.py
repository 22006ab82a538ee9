"""What a report needs of a stretch of a session, per series: how many samples, their sum,
min and max, and (for latency histogram series) the merged histogram.

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

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    @property
    def stdev(self) -> float:
        """Population standard deviation of the values."""
        if not self.count:
            return 0.0
        mean = self.total / self.count
        return math.sqrt(max(self.total_sq / self.count - mean * mean, 0.0))

    @classmethod
    def of(cls, t: float, s: Sample) -> SeriesStats:
        st = t if s.t is None else s.t
        hist = None
        if s.histogram is not None:
            hist = LatencyHistogram(dict(s.histogram.counts))
        return cls(1, s.value, s.value * s.value, s.value, s.value, st, st, hist)

    def add(self, t: float, s: Sample) -> None:
        v = s.value
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
