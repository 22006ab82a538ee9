"""One-off runs: a point far from the level on *both* sides of it (a bad night among good
ones, a burst of two or three), found before the change points are looked for.

A transient is never a change, and it is left out of the levels either side of a change:
kept in the mean and variance of the runs before a later change, one bad night shrinks the
change and inflates the variance, so the t-test needs many more runs at the new level to
pass (issue 28: a -7.5% change reported as -6.0%, and confirmed at the 9th run at the new
level instead of the 5th).

The test is a two-sided Hampel filter. Each point is compared with the level before it and
the level after it, each side taken over its 3 and its ``span`` nearest points (the median;
of one or two points, the one nearest the point: the median of two is their mean, which one
outlier moves halfway); it is a transient when, for one of these pairs, it lies on the same
side of both levels, farther than ``threshold`` times the noise and than ``floor`` (1%,
relative) from each. The noise is the series' own, robust to level shifts and to the
outliers themselves (``noise``), estimated again without the transients found, which are
nobody's neighbour either.

So:

- the first point of a real change is not one (the points after it are at its level), nor
  a point between two levels (a step of a staircase: above one side, below the other);
- an outlier just before a change is (the 3 points after it are still at the old level);
- a burst of two or three points is, point by point; a longer one is the change points'
  business (a short segment between two changes is a transient *change*, ``analysis``);
- more than one point in three is never set apart: that is a noise of two levels or more
  (a latency from cache hits and misses), not odd runs among good ones;
- the newest point is never a transient: nothing after it tells whether it is the first run
  of a new level. When it is that far from the level before it (and from the point just
  before it), it is *pending*; once one run follows it back at the old level, it is a
  transient.
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Points farther than this many standard deviations of the noise from the level on both
#: sides are transients: Gaussian noise gives about one in two million (the levels either
#: side are medians of a few points: a few more), an outlier of 10% on 2% noise (5 sd) is
#: found half the time (the other half hardly moves the levels), one of 15% always.
THRESHOLD = 5.0
#: Nor is a point a transient (or pending) unless it is this far from the level (relative):
#: a rate-held run's noise is 0.05%, and a run 0.3% off it, 6 times its noise, is no bad
#: night to tell anyone about (nor does it hide a change of a few percent).
FLOOR = 0.01
#: The median difference of consecutive points -> the noise's standard deviation (1.4826
#: / sqrt 2), and the median distance of a point from the median of the 5 points around it
#: -> the same (for Gaussian noise: 1 / 0.491, by simulation).
_DIFF_TO_SD = 1.4826 / 2 ** 0.5
_RESIDUAL_TO_SD = 2.036


@dataclass(frozen=True, slots=True)
class Transient:
    #: Index into the values given.
    index: int
    #: The level around it: the median of its neighbours (``span`` each side).
    level: float
    #: Its value relative to that level (value / level - 1).
    deviation: float


def noise(values: Sequence[float]) -> float:
    """The noise's standard deviation, robust to level shifts and outliers.

    Two estimates, each scaled to a standard deviation: the median difference of
    consecutive points (a shift moves one difference, an outlier two: it holds while fewer
    than one point in four is odd), and the median distance of each point from the median
    of the 5 points around it, itself and 2 each side (a shift hardly moves these medians,
    nor an outlier its neighbours': it holds while fewer than one point in three is odd, but
    it is the less steady of the two on a few dozen points, and a point that is its own
    median counts as no noise at all). The first, unless it is more than twice the second:
    then more than a quarter of the differences are odd (a machine whose load slowed one
    night in three), and the second is the noise."""
    if len(values) < 3:
        return 0.0
    steps = _DIFF_TO_SD * statistics.median(abs(b - a) for a, b in itertools.pairwise(values))
    local = _RESIDUAL_TO_SD * statistics.median(
        abs(v - statistics.median(values[max(0, i - 2):i + 3])) for i, v in enumerate(values))
    return steps if steps <= 2 * local else local


@dataclass(slots=True)
class Odd:
    """What ``transients`` found."""

    transients: list[Transient]
    #: The newest point when it is far from the level of the runs before it: a transient or
    #: the first run of a new level, which the next run tells apart. Else None.
    pending: Transient | None = None
    #: The noise's standard deviation (``noise``, without the transients).
    sd: float = 0.0


def transients(values: Sequence[float], *, span: int, floor: float = FLOOR, log: bool = False,
               threshold: float = THRESHOLD) -> Odd:
    """The one-off points of ``values`` (in order), and whether the newest one is pending;
    none when more than one point in three would be.
    ``log``: the values are logarithms (latency): ``Transient.level`` and ``deviation``
    are given for the values themselves.

    Set apart a few at a time, the farthest first: of points apart from their neighbours
    within ``span`` of each other (a burst), only the farthest, then the others looked at
    again without it, and the noise estimated again without those set apart (each outlier
    moves two consecutive differences: one night in twenty makes the estimate a third too
    large). A burst of three bad nights before a change would otherwise make the good
    nights between them and the change look odd: their levels either side, a burst and a
    new level, both lie below them."""
    if len(values) < 3:
        return Odd([])
    found: dict[int, Transient] = {}
    sd = noise(values)
    while True:
        candidates = [t for t in _outside(values, set(found), span=span,
                                          limit_sd=threshold * sd, floor=floor, log=log)
                      if t.index not in found]
        if not candidates:
            break
        for burst in _bursts(candidates, span):
            farthest = max(burst, key=lambda t: abs(t.deviation))
            found[farthest.index] = farthest
        if len(found) * 3 > len(values):
            # more than one point in three: not one level with odd runs among its runs,
            # but a noise of two levels or more (a latency from cache hits and misses),
            # which the noise estimate does not see either
            return Odd([], None, noise(values))
        sd = noise([v for i, v in enumerate(values) if i not in found])
    odd = sorted(found.values(), key=lambda t: t.index)
    return Odd(odd, _pending(values, set(found), span=span, limit_sd=threshold * sd,
                             floor=floor, log=log), sd)


def _bursts(candidates: Sequence[Transient], span: int) -> list[list[Transient]]:
    """``candidates`` (in order) in groups of those less than ``span`` apart."""
    out: list[list[Transient]] = []
    for t in candidates:
        if out and t.index - out[-1][-1].index < span:
            out[-1].append(t)
        else:
            out.append([t])
    return out


def _pending(values: Sequence[float], skip: set[int], *, span: int, limit_sd: float,
             floor: float, log: bool) -> Transient | None:
    """The newest point when it is apart from the level before it, over the point just
    before it, the 3 and the ``span`` points before it (all on the same side)."""
    before = [v for i, v in enumerate(values[:-1]) if i not in skip][-span:]
    if len(before) < 3:
        return None
    newest, level = values[-1], statistics.median(before)
    limit = _limit(limit_sd, floor, level, log)
    offs = [newest - _level(newest, before[-b:]) for b in sorted({1, min(3, span), span})]
    if all(d > limit for d in offs) or all(d < -limit for d in offs):
        return _transient(len(values) - 1, newest, level, log)
    return None


def _limit(limit_sd: float, floor: float, level: float, log: bool) -> float:
    """How far from ``level`` a point is apart from it: farther than the noise allows and
    than ``floor`` (relative; of logarithms, the logarithm of 1 + ``floor``)."""
    return max(limit_sd, math.log1p(floor) if log else floor * abs(level))


def _transient(i: int, v: float, level: float, log: bool) -> Transient | None:
    if log:
        return Transient(i, math.exp(level), math.expm1(v - level))
    return Transient(i, level, v / level - 1.0) if level != 0 else None


def _outside(values: Sequence[float], skip: set[int], *, span: int, limit_sd: float,
             floor: float, log: bool) -> list[Transient]:
    """The points apart from their neighbours (those in ``skip``, transients already
    found, are nobody's neighbour)."""
    kept = [i for i in range(len(values)) if i not in skip]
    spans = sorted({min(3, span), span})
    out: list[Transient] = []
    for i in range(1, len(values) - 1):
        k = bisect.bisect_left(kept, i)
        nxt = k + 1 if k < len(kept) and kept[k] == i else k
        before = [values[j] for j in kept[max(0, k - span):k]]
        after = [values[j] for j in kept[nxt:nxt + span]]
        if not before or not after:
            continue
        v = values[i]
        # a side's levels are within its points' range: a point less than ``limit_sd`` above
        # its lowest and below its highest is apart from none (most points: checked first)
        if (v - min(before) <= limit_sd and max(before) - v <= limit_sd) or \
                (v - min(after) <= limit_sd and max(after) - v <= limit_sd):
            continue
        level = statistics.median([*before, *after])
        limit = _limit(limit_sd, floor, level, log)
        offs_b = [v - _level(v, before[-b:]) for b in spans]
        offs_a = [v - _level(v, after[:a]) for a in spans]
        if not any((b > 0) == (a > 0) and min(abs(b), abs(a)) > limit
                   for b in offs_b for a in offs_a):
            continue
        t = _transient(i, v, level, log)
        if t is not None:
            out.append(t)
    return out


def _level(v: float, side: Sequence[float]) -> float:
    """The level of one side: its median; of one or two points (the newest runs), the one
    nearest ``v`` (the median of two is their mean: one outlier would move it halfway)."""
    if len(side) >= 3:
        return statistics.median(side)
    return min(side, key=lambda x: abs(x - v))
