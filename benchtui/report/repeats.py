"""A repeated step's runs on one host (or its fleet) as one row: the rule every place that
stands a step's repeats by one figure follows (the report's rows, its per-second plots,
its baselines and gate, the history catalog's points).

- ``median`` (the default): each figure is the median of the runs' figures, each figure on
  its own (the median IOPS and the median p99 may come from different runs); of an even
  number of runs, the mean of the two middle ones. The row is of no single run: it says
  how many runs it stands for, and every value carries the runs' range (``Value.low``,
  ``Value.high``).
- ``best``: the run with the most IOPS (else bandwidth, network, memory, score), with the
  same ranges beside its values.

Only the runs that completed count (``typical``): a run cut short (interrupted, failed, out
of time) has figures of part of its work; when none completed, all of them do, and the row
says how it ended.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import replace

from benchtui.model import events as ev
from benchtui.report.model import Row, Value
from benchtui.report.steady import Steadiness

#: How a repeated step's runs are shown: every run, their median, the best of them.
SELECTS = ("all", "median", "best")
#: The figures whose range over a step's runs a row carries for its ops' total
#: (``Row.spread``: the overview's ``[min–max]``).
SPREAD = ("iops", "bandwidth_bytes", "net_bandwidth_bytes")
_SIZE = ("iops", "bandwidth_bytes", "net_bandwidth_bytes", "mem_bandwidth_bytes",
         "benchmark_score")


def median(values: Sequence[float]) -> float:
    """The middle value; of an even count, the mean of the two middle ones."""
    return statistics.median(values)


def typical(values: Iterable[tuple[float, bool]]) -> float:
    """What a figure of a repeated step is: the median of its runs' values (``(value,
    completed)`` each) that completed, of them all when none did."""
    pairs = list(values)
    return median([v for v, done in pairs if done] or [v for v, _done in pairs])


def counted(runs: Sequence[Row]) -> list[Row]:
    """The runs a repeated step's row is made of: those that completed, all when none
    did."""
    return [r for r in runs if r.completed] or list(runs)


def total(row: Row, metric: str) -> float | None:
    """A row's ``metric`` over its ops (``Row.parts``: read + write, ...)."""
    found = row.parts(metric)
    return sum(v.value for v in found) if found else None


def size(row: Row) -> float:
    """What ``best`` ranks runs by: total IOPS, else bandwidth, network, memory, score,
    else the first value."""
    for metric in _SIZE:
        found = total(row, metric)
        if found is not None:
            return found
    return row.values[0].value if row.values else 0.0


def _worst_steadiness(runs: Sequence[Row]) -> Steadiness | None:
    """The least steady run's verdict: a row of runs is steady only when each was."""
    found = [r.steadiness for r in runs if r.steadiness is not None]
    return min(found, key=lambda s: (s.steady, -s.cv)) if found else None


def _ranges(runs: Sequence[Row]) -> dict[tuple[str, str, str], list[Value]]:
    """Each figure's values over the runs, in the order the runs first give them."""
    by_key: dict[tuple[str, str, str], list[Value]] = {}
    for r in runs:
        for v in r.values:
            by_key.setdefault(v.key, []).append(v)
    return by_key


def _spread(runs: Sequence[Row]) -> dict[str, tuple[float, float]]:
    out = {}
    for metric in SPREAD:
        totals = [t for r in runs for t in (total(r, metric),) if t is not None]
        if totals:
            out[metric] = (min(totals), max(totals))
    return out


def _median_row(runs: Sequence[Row]) -> Row:
    first = runs[0]
    values = []
    for found in _ranges(runs).values():
        numbers = [v.value for v in found]
        sources = {v.source for v in found}
        values.append(Value(found[0].metric, found[0].op, median(numbers), found[0].unit,
                            found[0].item, sources.pop() if len(sources) == 1 else "mixed",
                            low=min(numbers), high=max(numbers)))
    ends = [r.outcome for r in runs]
    outcome = None if None in ends else ev.worst([e for e in ends if e is not None])
    return Row(first.session, first.step, first.host, first.step, 0,
               min(r.t0 for r in runs), max(r.t1 for r in runs), values,
               _worst_steadiness(runs), len(runs), "median",
               ok=None if any(r.ok is None for r in runs) else all(r.ok for r in runs),
               outcome=outcome, reason="; ".join(r.reason for r in runs if r.reason),
               silent_seconds=max(r.silent_seconds for r in runs), matrix=first.matrix,
               role=first.role, spread=_spread(runs),
               runs={k: v for r in runs for k, v in r.runs.items()})


def _best_row(runs: Sequence[Row]) -> Row:
    best = max(runs, key=size)
    ranges = _ranges(runs)
    values = [replace(v, low=min(x.value for x in ranges[v.key]),
                      high=max(x.value for x in ranges[v.key])) for v in best.values]
    return replace(best, values=values, selected_from=len(runs), selected_by="best",
                   spread=_spread(runs))


def combine(runs: Sequence[Row], select: str) -> list[Row]:
    """A step's runs on one host (or its fleet rows), in repeat order, as the report shows
    them under ``select`` (``SELECTS``): every run, or one row (module doc). A row of
    several runs stands for those that completed (``counted``); a lone one left is shown
    as itself."""
    if len(runs) <= 1 or select == "all":
        return list(runs)
    kept = counted(runs)
    if len(kept) == 1:
        return kept
    return [_median_row(kept) if select == "median" else _best_row(kept)]


def left_out(runs: Sequence[Row], select: str) -> list[Row]:
    """The runs ``combine`` leaves out of a row of several: those that did not complete."""
    if len(runs) <= 1 or select == "all":
        return []
    kept = {id(r) for r in counted(runs)}
    return [r for r in runs if id(r) not in kept]
