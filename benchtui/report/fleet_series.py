"""The fleet's latency per second over a step's runs: at each second since the hosts' tools
started, the quantiles of every host's clat histograms of that second merged (exact fleet
percentiles, never an average of percentiles), for the HTML report's fleet plot; for rows of
several runs (a median of repeats), the median over the runs of each run's fleet percentile
of the second (``lines.median_lines``).

``FleetLatency`` is fed the runs' histograms as they are read, by ``series.run_series`` on
its way (``series_source.SeriesSource``: one decoding for both) or by ``fleet_latency``
alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from benchtui.model.histogram import LatencyHistogram, merged_quantiles
from benchtui.model.sample import Sample
from benchtui.report.figures import QUANTILES
from benchtui.report.lines import Lines, median_lines
from benchtui.report.model import Row
from benchtui.report.series import OPS, Points, points_of, read_window, running
from benchtui.store.recording import SessionReader

#: The fleet's histograms of a second are merged once samples this much newer have been
#: read (records reach a file up to this much out of order: ``format.LATE_SECONDS``).
_LATE = 5.0


class FleetLatency:
    """The fleet's latency per second of its runs (``fleet_latency``), fed the runs' clat
    histograms as they are read (``starts``: (host, step label) -> when its tool started).
    A second's histograms (every host's run of a label, each at its second since its own
    tool started) are kept until the samples read have moved ``_LATE`` s past
    it, then its quantiles are taken from them merged (``merged_quantiles``: a binary search
    over their running sums, without adding up every bucket). A histogram that comes for a
    second already done (records ``_LATE`` s out of order: a clock stepped back) sets
    ``late``: the caller then reads again with ``merge`` (each histogram added into its
    second's as it comes, whatever the order)."""

    def __init__(self, starts: dict[tuple[str, str], float], *, merge: bool = False) -> None:
        self.starts = starts
        self.latest = max(starts.values(), default=0.0)
        self.merge = merge
        #: second -> (label, op) -> the histograms of that second
        self.open: dict[int, dict[tuple[str, str], list[LatencyHistogram]]] = {}
        self.merged: dict[tuple[str, str], dict[int, LatencyHistogram]] = defaultdict(dict)
        #: label -> ("latency", op, name) -> the second's end -> seconds
        self.found: dict[str, dict[tuple[str, ...], dict[float, float]]] = defaultdict(
            lambda: defaultdict(dict))
        self.done_below = -math.inf  # the seconds before this one are done
        self.newest = -math.inf
        self.late = False

    def feed(self, s: Sample) -> None:
        h = s.histogram
        if s.t is None or s.kind != "interval" or h is None \
                or s.labels.get("measure", "clat") != "clat":
            return
        label = s.labels.get("step", "")
        start = self.starts.get((s.host, label))
        if start is None:
            return
        key = (label, s.labels.get("op", "total"))
        second = math.floor(s.t - start)
        if self.merge:
            have = self.merged[key].get(second)
            if have is None:
                self.merged[key][second] = have = LatencyHistogram()
            have.merge(h)
            return
        if second < self.done_below:
            self.late = True
            return
        self.open.setdefault(second, {}).setdefault(key, []).append(h)
        if s.t > self.newest:
            self.newest = s.t
            limit = math.floor(s.t - self.latest - _LATE)
            if limit > self.done_below:
                self._finish(limit)

    def _finish(self, limit: float) -> None:
        qs = [q for q, _ in QUANTILES]
        for second in sorted(k for k in self.open if k < limit):
            for key, parts in self.open.pop(second).items():
                self._keep(key, second, merged_quantiles(parts, qs))
        self.done_below = limit

    def _keep(self, key: tuple[str, str], second: int, found: dict[float, float]) -> None:
        label, op = key
        for q, name in QUANTILES:
            if q in found:  # at the second's end, as the hosts' points
                self.found[label][("latency", op, name)][second + 1.0] = found[q]

    def lines(self) -> dict[str, dict[str, Points]]:
        self._finish(math.inf)
        qs = [q for q, _ in QUANTILES]
        for key, by_second in self.merged.items():
            for second, h in by_second.items():
                self._keep(key, second, h.quantiles(qs))
        self.merged.clear()
        runs = [(0.0, Lines(points=dict(found))) for found in self.found.values()]
        if not runs:
            return {}
        merged = runs[0][1] if len(runs) == 1 else median_lines(runs)
        out: dict[str, dict[str, Points]] = {}
        for op in OPS:
            for _q, name in QUANTILES:
                by_t = merged.points.get(("latency", op, name))
                if by_t:
                    out.setdefault(op, {})[name] = points_of(by_t, 0.0)
        return out


def fleet_latency(reader: SessionReader, rows: Sequence[Row]) -> dict[str, dict[str, Points]]:
    """The fleet's latency percentiles second by second over these hosts' rows of one step:
    op -> {"p50", "p99", "p999"} -> points, each the quantile of every host's clat
    histograms of that second (seconds since each host's tool started) merged: exact fleet
    percentiles, never an average of percentiles; for rows of several runs (a median), the
    median over the runs of each run's fleet percentile of the second. {} when the runs
    have no histograms."""
    rows = [r for r in rows if r.runs]
    if len(rows) < 2:
        return {}
    starts = starts_of(rows)
    t0, t1 = read_window(reader, rows)
    for merge in (False, True):  # (merged as they come only when read out of order)
        fleet = FleetLatency(starts, merge=merge)
        for s in reader.samples(hosts={row.host for row in rows},
                                metrics=("latency_histogram",), t0=t0, t1=t1):
            if s.histogram is not None:
                s.histogram = running(s.histogram)
            fleet.feed(s)
        if not fleet.late:
            break
    return fleet.lines()


def starts_of(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """(host, step label) -> when its tool started, of each run of these rows."""
    return {(row.host, label): start for row in rows for label, start in row.runs.items()}
