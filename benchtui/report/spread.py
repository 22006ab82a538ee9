"""Many hosts as one distribution: what the HTML report plots past ``MANY_HOSTS`` hosts,
where a line (or a panel, or a bar) per host would be unreadable and its drawing would grow
faster than the hosts (docs/report-html.md, "Many hosts").

For a figure per second (IOPS, bandwidth, a latency percentile, network), ``spread`` puts
every host's points on a common grid of seconds since its run started (the nearest whole
interval) and gives, at each second, the hosts' median, their middle half (p25-p75) and 90%
of them (p5-p95), with the lowest and highest host. For one figure a host (a step's IOPS in
the overview), ``value_spread`` gives the same over the hosts' values.

The hosts furthest from the fleet are named, by one rule everywhere: a host's **distance** is
how far it lies from the fleet's median, relative to that median: ``|x - median| / median``
(at each second, then the median over its seconds: a host that is off for a moment is not
off). Of the hosts whose distance is more than twice the fleet's typical distance (the median
of all hosts' distances) and more than 5%, the ``MAX_NAMED`` furthest are named, each with
its signed deviation (``-75%``: a quarter of the median; ``+300%``: four times it). When no
host passes, none is named: the hosts are alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from benchtui.report.series import Points

#: Hosts in a plot from which it draws their distribution rather than a line (or a panel,
#: or a bar) per host: past 20 a host's colour repeats (``plot.style``'s palette), and the
#: small multiples of latency (a panel per host) grow past a screen.
MANY_HOSTS = 20
#: Hosts named as furthest from the fleet, at most.
MAX_NAMED = 5
#: A host is named when its distance is more than this many times the typical one ...
_TIMES_TYPICAL = 2.0
#: ... and more than this (relative to the median).
_MIN_DISTANCE = 0.05
#: The quantiles across hosts a spread gives, by name.
QUANTILES = (("p5", 0.05), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p95", 0.95))


@dataclass(frozen=True, slots=True)
class Named:
    """A host that lies far from the fleet (module doc)."""

    name: str
    #: The median of its relative distances from the fleet's median (>= 0).
    distance: float
    #: The median of its signed relative deviations (-0.75: a quarter of the median).
    deviation: float
    #: Its own points (time plots) or value (a step's).
    points: Points | None = None
    value: float | None = None

    @property
    def label(self) -> str:
        """``host0007 (-75%)``."""
        return f"{self.name} ({self.deviation:+.0%})"


@dataclass(frozen=True, slots=True)
class Spread:
    """The hosts' distribution of one figure per second."""

    times: tuple[float, ...]
    #: "p5", "p25", "p50", "p75", "p95", "min", "max" -> a value per time
    quantiles: Mapping[str, tuple[float, ...]]
    #: Hosts with a point at each time.
    counts: tuple[int, ...]
    hosts: int
    named: tuple[Named, ...]


@dataclass(frozen=True, slots=True)
class ValueSpread:
    """The hosts' distribution of one figure (a step's IOPS, ...)."""

    quantiles: Mapping[str, float]
    hosts: int
    named: tuple[Named, ...]


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, linearly interpolated (numpy's default)."""
    at = q * (len(ordered) - 1)
    lo = math.floor(at)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)


def _summary(ordered: Sequence[float]) -> dict[str, float]:
    out = {name: quantile(ordered, q) for name, q in QUANTILES}
    out["min"], out["max"] = ordered[0], ordered[-1]
    return out


def _relative(x: float, median: float) -> float | None:
    return (x - median) / abs(median) if median and math.isfinite(median) else None


def _named(candidates: Iterable[tuple[str, list[float], Points | None, float | None]]
           ) -> tuple[Named, ...]:
    """The hosts to name, furthest first, from (name, signed deviations, points, value)."""
    found = []
    for name, deviations, points, value in candidates:
        if not deviations:
            continue
        distance = _median([abs(d) for d in deviations])
        found.append(Named(name, distance, _median(deviations), points, value))
    if not found:
        return ()
    typical = _median([n.distance for n in found])
    bar = max(_TIMES_TYPICAL * typical, _MIN_DISTANCE)
    far = sorted((n for n in found if n.distance > bar), key=lambda n: -n.distance)
    return tuple(far[:MAX_NAMED])


def _median(values: list[float]) -> float:
    return quantile(sorted(values), 0.5)


def _grid(lines: Iterable[Points]) -> float:
    """The grid's step: the median spacing of the lines' points (1 s for per-second lines;
    a long run's lines averaged down have wider ones)."""
    gaps = sorted(b - a for p in lines for a, b in zip(p.times, p.times[1:], strict=False)
                  if b > a)
    return max(quantile(gaps, 0.5), 1e-3) if gaps else 1.0


def spread(lines: Mapping[str, Points]) -> Spread | None:
    """The distribution of ``lines`` (host name -> its points), second by second (module
    doc); None when no host has a point."""
    lines = {name: p for name, p in lines.items() if len(p)}
    if not lines:
        return None
    step = _grid(lines.values())
    by_slot: dict[int, list[float]] = {}
    per_host: dict[str, dict[int, float]] = {}
    for name, points in lines.items():
        own: dict[int, list[float]] = {}
        for t, v in zip(points.times, points.values, strict=True):
            if math.isfinite(v):
                own.setdefault(round(t / step), []).append(v)
        mine = per_host[name] = {slot: sum(vs) / len(vs) for slot, vs in own.items()}
        for slot, v in mine.items():
            by_slot.setdefault(slot, []).append(v)
    slots = sorted(by_slot)
    summaries = [_summary(sorted(by_slot[s])) for s in slots]
    medians = {s: summary["p50"] for s, summary in zip(slots, summaries, strict=True)}
    named = _named(
        (name, [d for slot, v in mine.items()
                if (d := _relative(v, medians[slot])) is not None], lines[name], None)
        for name, mine in per_host.items())
    names = [name for name, _q in QUANTILES] + ["min", "max"]
    return Spread(tuple(s * step for s in slots),
                  {k: tuple(summary[k] for summary in summaries) for k in names},
                  tuple(len(by_slot[s]) for s in slots), len(lines), named)


def value_spread(values: Mapping[str, float]) -> ValueSpread | None:
    """The distribution of one value per host (host name -> value); None without any."""
    kept = {name: v for name, v in values.items() if math.isfinite(v)}
    if not kept:
        return None
    summary = _summary(sorted(kept.values()))
    median = summary["p50"]
    named = _named((name, [d] if (d := _relative(v, median)) is not None else [], None, v)
                   for name, v in kept.items())
    return ValueSpread(summary, len(kept), named)
