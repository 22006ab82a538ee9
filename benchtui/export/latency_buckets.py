"""The fixed latency bucket layout of the exported histograms, and counters kept in it.

fio's json+ histograms have ~1,800 possible buckets (values in ns); exporting each as a
Prometheus ``le`` series would be far too many series per host and job. benchtui folds them
into ``LATENCY_BUCKETS``: the same layout on every host and in every session, so that
``histogram_quantile(q, sum by (le) (rate(..._bucket[1m])))`` works across hosts and against
backfilled sessions. A fio bucket is counted in the first exported bucket whose upper bound is
at least the fio bucket's value (the value fio itself uses for its percentiles).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from operator import mul
from typing import Final

from benchtui.model.histogram import NS_PER_SECOND, LatencyHistogram

#: Upper bounds (seconds) of the exported buckets: 1, 1.5, 2, 3, 5, 7 per decade from 1 us to
#: 7 s, then 10 s (and +Inf): 44 series per histogram. histogram_quantile interpolates inside a
#: bucket, so its answer is within the bucket's bounds: at most 1.67x apart (3 to 5).
LATENCY_BUCKETS: Final[tuple[float, ...]] = (
    *(float(f"{m}e{e}") for e in range(-6, 1) for m in (1, 1.5, 2, 3, 5, 7)), 10.0)
#: The same bounds in nanoseconds (fio's bucket values are integer nanoseconds).
LATENCY_BUCKETS_NS: Final[tuple[int, ...]] = tuple(round(b * NS_PER_SECOND)
                                                   for b in LATENCY_BUCKETS)
#: Number of counters: one per bound plus +Inf.
SLOTS: Final = len(LATENCY_BUCKETS) + 1

def bucket_index(value_ns: int) -> int:
    """Index of the exported bucket a latency (ns) falls in; ``SLOTS - 1`` is +Inf."""
    return bisect_left(LATENCY_BUCKETS_NS, value_ns)


@dataclass(slots=True)
class BucketCounts:
    """Completions per exported bucket, summed over every interval added (a Prometheus
    histogram's counters), with their count and sum."""

    counts: list[int] = field(default_factory=lambda: [0] * SLOTS)
    count: int = 0
    #: Sum of the latencies in nanoseconds, each completion taken at its fio bucket's value
    #: (an integer: sums over hours stay exact).
    sum_ns: int = 0

    @property
    def sum_seconds(self) -> float:
        return self.sum_ns / NS_PER_SECOND

    def add(self, histogram: LatencyHistogram) -> None:
        """Add one interval's histogram. A json+ interval has hundreds of fio buckets: they
        are sorted and summed at C speed, then cut at the 43 bounds by bisection."""
        raw = histogram.counts
        keys = sorted(raw)
        values = [raw[k] for k in keys]
        if values and min(values) <= 0:
            keys = [k for k in keys if raw[k] > 0]
            values = [raw[k] for k in keys]
        if not keys:
            return
        running = list(accumulate(values))
        counts = self.counts
        below = 0
        for i, bound in enumerate(LATENCY_BUCKETS_NS):
            j = bisect_right(keys, bound)
            upto = running[j - 1] if j else 0
            counts[i] += upto - below
            below = upto
        counts[-1] += running[-1] - below
        self.count += running[-1]
        self.sum_ns += sum(map(mul, keys, values))

    def cumulative(self) -> list[int]:
        """Counts of ``le`` buckets: completions at or under each bound, +Inf last."""
        return list(accumulate(self.counts))

    def copy(self) -> BucketCounts:
        return BucketCounts(list(self.counts), self.count, self.sum_ns)
