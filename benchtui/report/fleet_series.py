"""The fleet's latency per second over a step's runs: at each second since the hosts' runs
started, the quantiles of every host's clat histograms of that second merged (exact fleet
percentiles, never an average of percentiles), for the HTML report's fleet plot.

``FleetLatency`` is fed the runs' histograms as they are read, by ``series.run_series`` on
its way (``series_source.SeriesSource``: one decoding for both) or by ``fleet_latency``
alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from benchtui.model.histogram import LatencyHistogram, merged_quantiles
from benchtui.model.sample import Sample
from benchtui.report.figures import QUANTILES
from benchtui.report.model import Row
from benchtui.report.series import OPS, Points, points_of, run_window, running
from benchtui.session.compare import RunWindow
from benchtui.store.recording import SessionReader

#: The fleet's histograms of a second are merged once samples this much newer have been
#: read (records reach a file up to this much out of order: ``format.LATE_SECONDS``).
_LATE = 5.0


class FleetLatency:
    """The fleet's latency per second of its runs (``fleet_latency``), fed the runs' clat
    histograms as they are read. A second's histograms (every host's, each at its second
    since its own run started) are kept until the samples read have moved ``_LATE`` s past
    it, then its quantiles are taken from them merged (``merged_quantiles``: a binary search
    over their running sums, without adding up every bucket). A histogram that comes for a
    second already done (records ``_LATE`` s out of order: a clock stepped back) sets
    ``late``: the caller then reads again with ``merge`` (each histogram added into its
    second's as it comes, whatever the order)."""

    def __init__(self, starts: Iterable[float], *, merge: bool = False) -> None:
        self.latest = max(starts, default=0.0)
        self.merge = merge
        #: second -> op -> the histograms of that second
        self.open: dict[int, dict[str, list[LatencyHistogram]]] = {}
        self.merged: dict[str, dict[int, LatencyHistogram]] = defaultdict(dict)
        #: op -> name -> the second's end -> seconds
        self.found: dict[str, dict[str, dict[float, float]]] = defaultdict(
            lambda: defaultdict(dict))
        self.done_below = -math.inf  # the seconds before this one are done
        self.newest = -math.inf
        self.late = False

    def feed(self, s: Sample, start: float) -> None:
        h = s.histogram
        if s.t is None or s.kind != "interval" or h is None \
                or s.labels.get("measure", "clat") != "clat":
            return
        op = s.labels.get("op", "total")
        second = math.floor(s.t - start)
        if self.merge:
            have = self.merged[op].get(second)
            if have is None:
                self.merged[op][second] = have = LatencyHistogram()
            have.merge(h)
            return
        if second < self.done_below:
            self.late = True
            return
        self.open.setdefault(second, {}).setdefault(op, []).append(h)
        if s.t > self.newest:
            self.newest = s.t
            limit = math.floor(s.t - self.latest - _LATE)
            if limit > self.done_below:
                self._finish(limit)

    def _finish(self, limit: float) -> None:
        qs = [q for q, _ in QUANTILES]
        for second in sorted(k for k in self.open if k < limit):
            for op, parts in self.open.pop(second).items():
                self._keep(op, second, merged_quantiles(parts, qs))
        self.done_below = limit

    def _keep(self, op: str, second: int, found: dict[float, float]) -> None:
        for q, name in QUANTILES:
            if q in found:
                self.found[op][name][second + 1.0] = found[q]  # the second's end, as the hosts'

    def lines(self) -> dict[str, dict[str, Points]]:
        self._finish(math.inf)
        qs = [q for q, _ in QUANTILES]
        for op, by_second in self.merged.items():
            for second, h in by_second.items():
                self._keep(op, second, h.quantiles(qs))
        self.merged.clear()
        return {op: {name: points_of(by_t, 0.0) for name, by_t in self.found[op].items()}
                for op in OPS if self.found.get(op)}


def fleet_latency(reader: SessionReader, pairs: Sequence[tuple[Row, RunWindow]]
                  ) -> dict[str, dict[str, Points]]:
    """The fleet's latency percentiles second by second over these hosts' runs of one step:
    op -> {"p50", "p99", "p999"} -> points, each the quantile of every host's clat
    histograms of that second (seconds since each host's run started; the hosts of a step
    start together) merged: exact fleet percentiles, never an average of percentiles.
    {} when the runs have no histograms."""
    if len(pairs) < 2:
        return {}
    starts = {(run.host, run.label): run.t0 for _row, run in pairs}
    t0, t1 = run_window(reader, pairs)
    for merge in (False, True):  # (merged as they come only when read out of order)
        fleet = FleetLatency(starts.values(), merge=merge)
        for s in reader.samples(hosts={run.host for _row, run in pairs},
                                metrics=("latency_histogram",), t0=t0, t1=t1):
            start = starts.get((s.host, s.labels.get("step", "")))
            if start is not None:
                if s.histogram is not None:
                    s.histogram = running(s.histogram)
                fleet.feed(s, start)
        if not fleet.late:
            break
    return fleet.lines()
