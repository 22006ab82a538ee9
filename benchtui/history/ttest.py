"""Student's two-sample t-test as Apache Otava computes it, without scipy.

Otava (``otava.analysis.TTestSignificanceTester``) passes each side's *population* standard
deviation (numpy's ``std``, ddof 0) to ``scipy.stats.ttest_ind_from_stats`` with equal
variances: a pooled variance over ``n1 + n2 - 2`` degrees of freedom and a two-sided p. The
same is computed here, the t distribution's tail from the regularized incomplete beta
function (a continued fraction, Numerical Recipes' ``betacf``), which is accurate far below
the p-values that matter (1e-3 and 1e-4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_EPS = 1e-15
_TINY = 1e-300


def _betacf(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    m = math.fsum(values) / n
    var = math.fsum((v - m) * (v - m) for v in values) / n if n >= 2 else 0.0
    return m, math.sqrt(var)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation (ddof 0), as numpy's defaults, of any finite
    figures (``_exponent``)."""
    e = _exponent(values)
    m, s = _mean_std([math.ldexp(v, -e) for v in values])
    return _times(m, e), _times(s, e)


def _exponent(values: Sequence[float]) -> int:
    """The binary exponent of the largest finite magnitude of ``values``: dividing by that
    power of two is exact (only the exponents change) and brings every value under 1, so
    that sums and squares of figures near the largest float (1e154 squared, 1e308 summed)
    do not overflow."""
    big = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    return math.frexp(big)[1] if big > 0 else 0


def _times(x: float, e: int) -> float:
    """``x`` x 2**``e``, infinite where that is beyond the largest float."""
    try:
        return math.ldexp(x, e)
    except OverflowError:
        return math.copysign(math.inf, x)


def ttest(left: Sequence[float], right: Sequence[float]
          ) -> tuple[float, float, float, float, float]:
    """(mean_l, mean_r, std_l, std_r, p) as Otava's ``TTestSignificanceTester.compare``.
    p is NaN where scipy's is (both sides constant and equal).

    Computed on the values scaled by a power of two (``_exponent``) and scaled back: the
    same results to the last bit where nothing overflows, and no OverflowError where the
    squares or sums of huge values would."""
    n1, n2 = len(left), len(right)
    e = _exponent([*left, *right])
    m1, s1 = _mean_std([math.ldexp(v, -e) for v in left])
    m2, s2 = _mean_std([math.ldexp(v, -e) for v in right])
    stats = (_times(m1, e), _times(m2, e), _times(s1, e), _times(s2, e))
    if n1 + n2 <= 2:
        return *stats, 1.0
    df = n1 + n2 - 2
    svar = ((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / df
    denom = math.sqrt(svar * (1.0 / n1 + 1.0 / n2))
    diff = m1 - m2
    if denom == 0.0:
        t = math.nan if diff == 0.0 else math.copysign(math.inf, diff)
    else:
        t = diff / denom
    return *stats, t_two_sided(t, df)
