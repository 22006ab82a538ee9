"""The windowed e-divisive means method with a Student t-test, as Apache Otava (formerly
DataStax Hunter) publishes it: Fleming et al., "Hunter: Using Change Point Detection to Hunt
for Performance Regressions" (ICPE 2023), built on Matteson and James's e-divisive.

1. *Split*: windows of ``window`` points, each half a window after the last (or from the
   last change point found); in each, e-divisive's divergence ``Q`` picks the split that
   best separates the window's pieces, and a t-test between the two pieces either side of it
   keeps it when p <= 10 x ``max_p`` (a "weak" change point); the window is split again
   until no split is significant. Every window's weak change points are put together.
2. *Merge*: each weak change point is tested again against its neighbours' segments over
   the whole series; the one with the largest p above ``max_p`` is removed and its
   neighbours tested again, until every p is below ``max_p``; then the smallest change
   below ``min_magnitude`` is removed the same way.

This is a re-implementation in numpy of ``otava.analysis.compute_change_points`` (0.8.0);
tests/test_history_method.py holds it to Otava's own output on a set of series
(tests/fixtures/history/otava_changes.json, made by benchmarks/history_otava_fixture.py).
Differences, by design:

- a p that scipy gives as NaN (both sides constant and equal) is taken as 1 (never
  significant) instead of depending on list order in ``max``;
- the relative change that ``min_magnitude`` is compared with may be computed on another
  series than the tested one (``display``): latency is tested on its logarithm and its
  change is still a change of the latency itself;
- figures near the largest float are scaled by a power of two before their distances are
  summed (exactly: the same results where nothing overflows).

``change_points(exact=False)`` (what ``analysis`` runs) adds benchtui's step 3
(``recover``) and gives each change the figures of the segments either side of it in the
end.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from benchtui.history.ttest import mean_std, ttest

Array = NDArray[np.float64]


@dataclass(slots=True)
class Change:
    """A change point: ``index`` is the first point of the new level."""

    index: int
    mean_before: float
    mean_after: float
    sd_before: float
    sd_after: float
    pvalue: float
    #: Relative change of the (display) means, after / before - 1.
    forward: float
    #: Otava's magnitude: max(|after/before - 1|, |before/after - 1|).
    magnitude: float


def _q_matrix(p: Array, s: int, e: int) -> Array:
    """Otava's Q matrix for ``z[s:e]`` from the 2-D prefix sums ``p`` of the pairwise
    distances: row i is the split tau = s + i + 1, column j the end kappa = s + j + 2; the
    entries below the diagonal (kappa <= tau) are 0, as in Otava."""
    taus = np.arange(s + 1, e)[:, None]
    kappas = np.arange(s + 2, e + 1)[None, :]
    n = (taus - s).astype(np.float64)
    m = (kappas - taus).astype(np.float64)
    between = p[taus, kappas] - p[s, kappas] - p[taus, taus] + p[s, taus]
    wx = (p[taus, taus] - 2 * p[s, taus] + p[s, s]) / 2.0
    wy = (p[kappas, kappas] - 2 * p[taus, kappas] + p[taus, taus]) / 2.0
    total = n + m
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(n > 1, 2.0 * m / (total * (n - 1)), 0.0)
        c = np.where(m > 1, 2.0 * n / (total * (m - 1)), 0.0)
        q = 2.0 / total * between - b * wx - c * wy
    return np.where(m >= 1, q, 0.0)


class _Calculator:
    def __init__(self, z: Array) -> None:
        # divided by a power of two (exact: the same Q but for its exponent, the same
        # argmax) so that the sums of distances between figures near the largest float
        # do not overflow
        finite = np.abs(z[np.isfinite(z)])
        if finite.size and finite.max() > 0:
            z = np.ldexp(z, -int(np.frexp(finite.max())[1]))
        d = np.abs(z[:, None] - z[None, :])
        p = np.zeros((len(z) + 1, len(z) + 1))
        p[1:, 1:] = d.cumsum(axis=0).cumsum(axis=1)
        self.p = p

    def candidate(self, intervals: Sequence[tuple[int, int]]) -> tuple[int, float] | None:
        best: tuple[int, float] | None = None
        for s, e in intervals:
            if e - s <= 1:
                continue
            q = _q_matrix(self.p, s, e)
            i, _j = np.unravel_index(int(np.argmax(q)), q.shape)
            cand = (int(i) + 1 + s, float(q.max()))
            if best is None or cand[1] > best[1]:
                best = cand
        return best


def _intervals(indexes: Sequence[int], n: int) -> list[tuple[int, int]]:
    bounds = [0, *indexes, n]
    return [(a, b) for a, b in itertools.pairwise(bounds) if a != b]


def stats(z: Sequence[float], display: Sequence[float], left: tuple[int, int],
          right: tuple[int, int], index: int) -> Change:
    """The change at ``index`` between the points ``left`` and ``right`` (slices) of ``z``:
    the t-test on ``z``, the means and deviations of ``display``."""
    m1, m2, s1, s2, p = ttest(z[left[0]:left[1]], z[right[0]:right[1]])
    if math.isnan(p):
        p = 1.0
    if display is not z:
        m1, s1 = mean_std(display[left[0]:left[1]])
        m2, s2 = mean_std(display[right[0]:right[1]])
    forward = m2 / m1 - 1.0 if m1 else 0.0
    backward = m1 / m2 - 1.0 if m2 else 0.0
    return Change(index, m1, m2, s1, s2, p, forward, max(abs(forward), abs(backward)))


def _at(index: int, z: Sequence[float], display: Sequence[float],
        intervals: Sequence[tuple[int, int]]) -> Change:
    """A change point's statistics against the intervals around it (Otava's
    ``change_point``: between the two intervals meeting at it, or splitting the one that
    holds it)."""
    for k, (s, e) in enumerate(intervals):
        if e == index:
            return stats(z, display, (s, e), intervals[k + 1], index)
        if s < index < e:
            return stats(z, display, (s, index), (index, e), index)
    raise ValueError(f"index {index} is in no interval")


def _window_changes(window: list[float], max_p: float) -> list[int]:
    calc = _Calculator(np.asarray(window, dtype=np.float64))
    found: list[int] = []
    while True:
        intervals = _intervals(found, len(window))
        cand = calc.candidate(intervals)
        if cand is None:
            break
        change = _at(cand[0], window, window, intervals)
        if change.pvalue <= max_p:
            found.append(cand[0])
            found.sort()
        else:
            break
    return found


def split(z: Sequence[float], window: int, max_p: float,
          display: Sequence[float] | None = None) -> list[Change]:
    """The weak change points of ``z`` (step 1)."""
    if window < 2:
        raise ValueError("the window must be at least 2 points")
    values = list(z)
    shown = values if display is None else list(display)
    step = window // 2
    start = 0
    found: list[int] = []
    while start < len(values):
        end = min(start + window, len(values))
        new = [start + i for i in _window_changes(values[start:end], max_p)]
        start = max(new[-1] if new else 0, start + step)
        found.extend(i for i in new if i not in found)
    found.sort()
    intervals = _intervals(found, len(values))
    return [_at(i, values, shown, intervals) for i in found]


def merge(changes: list[Change], z: Sequence[float], max_p: float, min_magnitude: float,
          display: Sequence[float] | None = None) -> list[Change]:
    """The change points that hold (step 2)."""
    values = list(z)
    shown = values if display is None else list(display)
    changes = list(changes)
    while changes:
        weakest = max(changes, key=lambda c: c.pvalue)
        if weakest.pvalue < max_p:
            weakest = min(changes, key=lambda c: c.magnitude)
            if weakest.magnitude > min_magnitude:
                return changes
        k = changes.index(weakest)
        del changes[k]
        intervals = _intervals([c.index for c in changes], len(values))
        for j in (k, k + 1):
            if 0 <= j < len(changes):
                changes[j] = _at(changes[j].index, values, shown, intervals)
    return changes


def recover(changes: list[Change], weak: Sequence[Change], z: Sequence[float], *,
            max_p: float, min_magnitude: float, display: Sequence[float] | None = None
            ) -> list[Change]:
    """The weak change points that ``merge`` dropped but hold against the change points it
    kept (benchtui's, not Otava's: step 3).

    ``merge`` tests each weak change point against its neighbours' segments and drops the
    weakest first: a real change a few runs before the end, with a spurious weak change
    point just before it (a low run, an outlier), is tested against that short segment,
    dropped, and the spurious one after it: nothing is left, where the real one alone would
    pass the test by far. So each dropped one, strongest first, is tried again alone
    against the kept ones: it is kept when ``merge`` of the kept ones and it keeps them all.
    """
    values = list(z)
    shown = values if display is None else list(display)
    kept = list(changes)
    for cand in sorted(weak, key=lambda c: c.pvalue):
        indexes = sorted({c.index for c in kept} | {cand.index})
        if len(indexes) == len(kept):
            continue
        intervals = _intervals(indexes, len(values))
        trial = merge([_at(i, values, shown, intervals) for i in indexes], values, max_p,
                      min_magnitude, shown)
        if len(trial) == len(indexes):
            kept = trial
    return kept


def change_points(z: Sequence[float], *, window: int = 50, max_p: float = 0.001,
                  min_magnitude: float = 0.0, display: Sequence[float] | None = None,
                  exact: bool = True) -> list[Change]:
    """Otava's ``compute_change_points``: the weak change points at a relaxed p (10 x
    ``max_p`` below 0.05), merged at ``max_p``; unless ``exact``, the dropped ones that hold
    alone recovered (``recover``), and every change's figures those of the segments either
    side of it in the end."""
    if len(z) < 2:
        return []
    first = max_p * 10 if max_p < 0.05 else (max_p * 2 if max_p < 0.5 else max_p)
    weak = split(z, window, first, display)
    kept = merge(weak, z, max_p, min_magnitude, display)
    if exact:
        return kept
    kept = recover(kept, weak, z, max_p=max_p, min_magnitude=min_magnitude, display=display)
    # merge tests again the change points after the one it drops, not the one before it
    # (Otava's): that one keeps the figures of a segment that is no longer there (a level
    # of one run). Each change's figures are those of the segments either side of it.
    values = list(z)
    shown = values if display is None else list(display)
    intervals = _intervals([c.index for c in kept], len(values))
    return [_at(c.index, values, shown, intervals) for c in kept]
