"""Did a run's per-second IOPS settle? A step whose IOPS never settled is flagged in the
report, because short runs on SSDs mislead (the seeds learnt it: a fresh SSD's first minutes
of random writes are its cache, not its steady state).

The test follows the idea of SNIA's Solid State Storage Performance Test Specification
(steady state: the data's excursion and its slope small against the mean over the last part
of the run), on what a recording holds:

- the *variation*: the coefficient of variation (standard deviation / mean) of the host's
  per-second IOPS over the last half of the window must be at most ``CV_LIMIT`` (10%);
- the *trend*: the mean of the last quarter of the window must be within ``TREND_LIMIT`` (10%)
  of the mean of the quarter before it.

A host's IOPS are the sum of its jobs' (and ops'); their variance is taken as the sum of the
jobs' variances (jobs treated as independent: exact for one job, which is what most steps
run). Fewer than ``MIN_POINTS`` per-second points in the last half give no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import Partial, SeriesStats

CV_LIMIT = 0.10
TREND_LIMIT = 0.10
MIN_POINTS = 4

Stats = Mapping[SeriesDef, SeriesStats]


@dataclass(frozen=True, slots=True)
class Steadiness:
    steady: bool
    #: Coefficient of variation of the host's IOPS over the last half of the window.
    cv: float
    #: Relative change of the mean IOPS from the third to the fourth quarter of the window.
    trend: float
    #: Per-second points in the last half.
    points: int

    def describe(self) -> str:
        if self.steady:
            return "steady"
        reasons = []
        if self.cv > CV_LIMIT:
            reasons.append(f"IOPS varies by {self.cv:.0%} (CV of the last half)")
        if abs(self.trend) > TREND_LIMIT:
            reasons.append(f"IOPS still moving ({self.trend:+.0%} from the third quarter "
                           "to the last)")
        return "not steady: " + "; ".join(reasons)


def _iops_series(stats: Stats) -> dict[SeriesDef, SeriesStats]:
    per_job = {d: st for d, st in stats.items() if d.metric == "iops" and d.kind == "interval"
               and st.count and not dict(d.labels).get("job", "").startswith(("all", "group "))}
    return per_job or {d: st for d, st in stats.items() if d.metric == "iops"
                       and d.kind == "interval" and st.count}


def _mean_var(series: Mapping[SeriesDef, SeriesStats]) -> tuple[float, float, int]:
    mean = sum(st.mean for st in series.values())
    var = sum(st.stdev ** 2 for st in series.values())
    points = min((st.count for st in series.values()), default=0)
    return mean, var, points


def steadiness(third: Stats, fourth: Stats) -> Steadiness | None:
    """The verdict from the window's third and fourth quarters' per-series statistics;
    None when the run has no per-second IOPS or too few points to tell."""
    q3, q4 = _iops_series(third), _iops_series(fourth)
    if not q3 or not q4:
        return None
    half: dict[SeriesDef, SeriesStats] = {}
    for part in (q3, q4):
        for d, st in part.items():
            if d in half:
                half[d].merge(st)
            else:
                half[d] = SeriesStats(st.count, st.total, st.total_sq, st.minimum, st.maximum,
                                      st.first_t, st.last_t, None,
                                      None if st.partial is None
                                      else Partial(*st.partial.astuple()))
    mean, var, points = _mean_var(half)
    if points < MIN_POINTS or mean <= 0:
        return None
    m3, _v3, _ = _mean_var(q3)
    m4, _v4, _ = _mean_var(q4)
    cv = math.sqrt(var) / mean
    trend = (m4 - m3) / m3 if m3 > 0 else 0.0
    return Steadiness(cv <= CV_LIMIT and abs(trend) <= TREND_LIMIT, cv, trend, points)
