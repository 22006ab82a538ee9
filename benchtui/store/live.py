"""The live store: every series' recent points, each host's latest values, and fleet-wide
latency percentiles from merged histograms.

Bounded memory: each series keeps at most ``window`` points (a ring buffer), whatever the
session's length. Series are keyed by (host, tool, metric, labels). Fleet percentiles are never
averages of percentiles: for each (metric labels without host), the store keeps every host's
latest per-interval histogram and merges them on demand.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field

from benchtui.model.histogram import LatencyHistogram, merged_quantiles
from benchtui.model.sample import HISTOGRAM_METRIC, SUMMARY, Sample
from benchtui.store.batch_shape import BatchShapes, one_host

SeriesKey = tuple[str, str, str, tuple[tuple[str, str], ...]]
#: Labels of a histogram across hosts: (tool, sorted labels without host).
FleetKey = tuple[str, tuple[tuple[str, str], ...]]

DEFAULT_WINDOW = 3600
FLEET_QUANTILES = (0.5, 0.99, 0.999)


@dataclass(slots=True)
class Series:
    """One series' recent points, oldest first."""

    host: str
    tool: str
    metric: str
    labels: dict[str, str]
    kind: str
    times: deque[float] = field(default_factory=deque)
    values: deque[float] = field(default_factory=deque)

    @property
    def last(self) -> float | None:
        return self.values[-1] if self.values else None

    @property
    def last_t(self) -> float | None:
        return self.times[-1] if self.times else None


#: A key's latest histogram per host: (its time, the histogram).
_PerHost = dict[str, tuple[float, LatencyHistogram]]
#: Where a sample goes: its series, its histogram key's hosts, or None (a summary).
_Target = Series | _PerHost | None


class LiveStore:
    """Fed by the session (live) or by replay: the same code path either way."""

    def __init__(self, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("window must be at least 1 point")
        self.window = window
        self.series: dict[SeriesKey, Series] = {}
        self.summaries: list[Sample] = []
        self.host_last_t: dict[str, float] = {}
        self.samples_total = 0
        self.version = 0
        #: Figures are read from points at or after this time only (``store.figures``): the
        #: current step's start, or the last step's end between steps (set by
        #: ``FleetState``); None: no step yet, any point counts.
        self.scope: float | None = None
        self._histograms: dict[FleetKey, _PerHost] = {}
        #: ``_matching``'s answers by query, and how many keys they were made of.
        self._matches: dict[tuple[tuple[str, str], ...], list[_PerHost]] = {}
        self._matched_keys = 0
        #: (host, tool, metric, *labels in their own order) -> series: ``add``'s fast look-up.
        self._seen: dict[tuple[object, ...], Series] = {}
        #: Where the samples of each batch shape went (``add``).
        self._shapes: BatchShapes[list[_Target]] = BatchShapes()

    def add(self, samples: Iterable[Sample]) -> int:
        """Take samples in; returns how many. Summary samples are kept whole (few per run).

        A batch of one host like the last one of its shape goes where that one went
        (``batch_shape``); only a batch unlike it is placed sample by sample."""
        batch = samples if isinstance(samples, list) else list(samples)
        n = len(batch)
        if not n:
            return 0
        targets = self._shapes.find(batch)
        if targets is None and one_host(batch):
            targets = [self._target(s) for s in batch]
            self._shapes.keep(batch, targets)
        if targets is None:
            self._add_each(batch)
        else:
            self._add_planned(batch, targets)
        self.samples_total += n
        self.version += 1
        return n

    def _add_planned(self, batch: list[Sample], targets: list[_Target]) -> None:
        """A batch of one host, with where each of its samples goes."""
        times = [(s.elapsed or 0.0) if s.t is None else s.t for s in batch]
        host = batch[0].host
        newest = max(times)
        last = self.host_last_t.get(host)
        if last is None or newest > last:
            self.host_last_t[host] = newest
        self._place(batch, times, targets)

    def _add_each(self, batch: list[Sample]) -> None:
        """A batch of several hosts: each sample's host and place looked up on its own."""
        times = [(s.elapsed or 0.0) if s.t is None else s.t for s in batch]
        host_last_t = self.host_last_t
        for s, t in zip(batch, times, strict=True):
            last = host_last_t.get(s.host)
            if last is None or t > last:
                host_last_t[s.host] = t
        self._place(batch, times, [self._target(s) for s in batch])

    def _place(self, batch: list[Sample], times: list[float], targets: list[_Target]) -> None:
        """Each sample at its time into its target: its series, the hosts of its histogram
        key, or the summaries (None)."""
        for s, t, target in zip(batch, times, targets, strict=True):
            if type(target) is Series:
                target.times.append(t)
                target.values.append(s.value)
            elif target is None:
                self.summaries.append(s)
            else:
                target[s.host] = (t, s.histogram)  # type: ignore[index,assignment]  # (not None)

    def _target(self, s: Sample) -> _Target:
        """Where a sample goes: its series, its histogram key's hosts, or None (a summary:
        kept whole)."""
        if s.kind == SUMMARY:
            return None
        if s.metric == HISTOGRAM_METRIC and s.histogram is not None:
            fkey = (s.tool, tuple(sorted(s.labels.items())))
            return self._histograms.setdefault(fkey, {})
        # Labels in the order the parser wrote them: no sort for a series already seen.
        fast = (s.host, s.tool, s.metric, *s.labels.items())
        series = self._seen.get(fast)
        if series is None:
            key = (s.host, s.tool, s.metric, tuple(sorted(s.labels.items())))
            series = self.series.get(key)
            if series is None:
                series = Series(s.host, s.tool, s.metric, s.labels, s.kind,
                                deque(maxlen=self.window), deque(maxlen=self.window))
                self.series[key] = series
            self._seen[fast] = series
        return series

    def find(self, metric: str | None = None, host: str | None = None,
             **labels: str) -> Iterator[Series]:
        """The series matching a metric, a host and label values (None matches anything)."""
        for series in self.series.values():
            if metric is not None and series.metric != metric:
                continue
            if host is not None and series.host != host:
                continue
            if any(series.labels.get(k) != v for k, v in labels.items()):
                continue
            yield series

    def hosts(self) -> list[str]:
        return sorted(self.host_last_t)

    def fleet_histogram(self, *, since: float | None = None,
                        hosts: Collection[str] | None = None,
                        **labels: str) -> LatencyHistogram:
        """Every host's latest interval histogram matching ``labels`` (and newer than
        ``since``; only ``hosts`` when given: one host's jobs merged), merged."""
        return LatencyHistogram.merged(self.latest_histograms(since=since, hosts=hosts,
                                                              **labels))

    def latest_histograms(self, *, since: float | None = None,
                          hosts: Collection[str] | None = None,
                          **labels: str) -> list[LatencyHistogram]:
        """The histograms ``fleet_histogram`` merges (do not modify them)."""
        out: list[LatencyHistogram] = []
        for per_host in self._matching(labels):
            if hosts is not None and len(hosts) < len(per_host):
                found = ((h, per_host[h]) for h in hosts if h in per_host)
            else:
                found = ((h, v) for h, v in per_host.items()
                         if hosts is None or h in hosts)
            for _host, (t, hist) in found:
                if since is None or t >= since:
                    out.append(hist)
        return out

    def _matching(self, labels: dict[str, str]) -> list[_PerHost]:
        """The per-host histograms of every key whose labels match ``labels``, in the
        store's order: the matching is kept until a histogram key is added (the console
        asks this for every host's latency at each of its updates)."""
        if self._matched_keys != len(self._histograms):
            self._matches.clear()
            self._matched_keys = len(self._histograms)
        query = tuple(labels.items())
        found = self._matches.get(query)
        if found is None:
            found = self._matches[query] = [
                per_host for (_tool, key_labels), per_host in self._histograms.items()
                if all(dict(key_labels).get(k) == v for k, v in query)]
        return found

    def fleet_latency(self, quantiles: Iterable[float] = FLEET_QUANTILES, *,
                      since: float | None = None, hosts: Collection[str] | None = None,
                      **labels: str) -> dict[float, float]:
        """Fleet-wide latency quantiles (seconds) from merged histograms; {} if none yet."""
        parts = self.latest_histograms(since=since, hosts=hosts, **labels)
        if len(parts) == 1 and parts[0].running_sums() is None:  # its own, no merged copy
            return parts[0].quantiles(quantiles)
        return merged_quantiles(parts, quantiles)

    def fleet_sum(self, metric: str, *, since: float | None = None, **labels: str) -> float:
        """Sum over hosts and series of the latest value (fleet IOPS, bandwidth); with
        ``since``, only series with a point at or after it (a finished step or a silent host
        no longer counts)."""
        return sum(s.values[-1] for s in self.find(metric, **labels)
                   if s.values and (since is None or s.times[-1] >= since))
