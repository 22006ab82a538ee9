"""A run's per-second lines as points at epoch times, and how several become one: a host's
network tests added up (an iperf3 server runs one per client), a repeated step's runs taken
as their median second by second (``repeats``' rule). ``series.py`` reads them from a
session and lays them out for plots.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchtui.report.repeats import median

#: A line of a run: ("iops" | "bandwidth", op), ("net", direction) or ("latency", op, name).
_Line = tuple[str, ...]


@dataclass(slots=True)
class Lines:
    """A run's lines as points at epoch times (what ``RunSeries`` holds, before it counts
    from the run's start and averages long lines down)."""

    points: dict[_Line, dict[float, float]] = field(default_factory=dict)
    #: line -> t -> the seconds a partial interval covered
    durations: dict[_Line, dict[float, float]] = field(default_factory=dict)
    latency_source: dict[str, str] = field(default_factory=dict)

    def add(self, key: _Line, by_t: dict[float, float],
            durations: dict[float, float] | None = None) -> None:
        self.points[key] = by_t
        if durations:
            self.durations[key] = durations


def _second(t: float, duration: float | None) -> float:
    """Which of a run's intervals a point is, counted from the run's start: a nominal one
    by the second it ends at (2.005 s: 2), a partial one (fio's first and last) by the
    second it starts at, plus a half (2.13 s after 0.117 s: 2.5), so that runs' points of
    the same interval meet and a partial one never takes a whole second's place."""
    return float(round(t)) if duration is None else round(t - duration) + 0.5


def median_lines(runs: Sequence[tuple[float, Lines]]) -> Lines:
    """Several runs' lines as one (``repeats``' rule, second by second): each line's point
    of a second is the median of the runs' points of that second (seconds since each run's
    tool started: ``(origin, lines)``), each line on its own; of an even number of runs the
    mean of the two middle ones. A point is drawn at the runs' mean time of it (a partial
    last interval: 2.3 s), counted from the earliest origin, and is partial when every
    run's is (its duration their mean)."""
    origin = min(o for o, _lines in runs)
    # a run's partial intervals by time, for its lines that do not say (latency)
    partials = [{t: d for by_t in lines.durations.values() for t, d in by_t.items()}
                for _o, lines in runs]
    out = Lines()
    durations_of = {k for _o, lines in runs for k in lines.durations}
    for key in dict.fromkeys(k for _o, lines in runs for k in lines.points):
        #: interval (``_second``) -> [(time since the start, value, duration)], one a run
        seconds: dict[float, list[tuple[float, float, float | None]]] = defaultdict(list)
        for (start, lines), partial_at in zip(runs, partials, strict=True):
            durations = lines.durations.get(key, partial_at)
            mine: dict[float, list[tuple[float, float, float | None]]] = defaultdict(list)
            for t, v in lines.points.get(key, {}).items():
                d = durations.get(t)
                mine[_second(t - start, d)].append((t - start, v, d))
            for second, found in mine.items():  # (one a run, unless it printed two)
                seconds[second].append(found[-1])
        points: dict[float, float] = {}
        partial: dict[float, float] = {}
        for _interval, found in sorted(seconds.items()):
            t = origin + sum(x for x, _v, _d in found) / len(found)
            points[t] = median([v for _x, v, _d in found])
            spans = [d for _x, _v, d in found if d is not None]
            if len(spans) == len(found):
                partial[t] = sum(spans) / len(spans)
        out.add(key, points, partial if key in durations_of else None)
    for _o, lines in runs:
        for op, source in lines.latency_source.items():
            out.latency_source.setdefault(op, source)
    return out


def together(tests: list[tuple[dict[float, float], dict[float, float]]]
             ) -> tuple[dict[float, float], dict[float, float]]:
    """Several tests' rates of one host as one line (an iperf3 server's, one test per
    client): the points of the same interval (within half a second of each other, one a
    test) added up, at their mean time; partial when every one of them is (the mean of
    their seconds)."""
    if len(tests) == 1:
        return tests[0]
    points = sorted((t, i, v, durations.get(t)) for i, (by_t, durations) in enumerate(tests)
                    for t, v in by_t.items())
    groups: list[list[tuple[float, int, float, float | None]]] = []
    for p in points:
        group = groups[-1] if groups else None
        if group is None or p[0] - group[0][0] > 0.5 or any(q[1] == p[1] for q in group):
            groups.append([p])
        else:
            group.append(p)
    line: dict[float, float] = {}
    partial: dict[float, float] = {}
    for group in groups:
        t = sum(p[0] for p in group) / len(group)
        line[t] = sum(p[2] for p in group)
        spans = [p[3] for p in group if p[3] is not None]
        if len(spans) == len(group):
            partial[t] = sum(spans) / len(spans)
    return line, partial
