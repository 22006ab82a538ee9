"""The Prometheus collector: every scrape reads a ``FleetState`` as it is at that moment.

No global registry and no client-library metric objects that keep old values: ``collect()``
builds the families from the state each time, so a series that stopped getting points simply
stops being exported. The staleness rule (docs/prometheus.md):

* A per-interval series is exported while its newest point arrived less than
  ``STALE_INTERVALS`` of its own intervals ago (the gap between its last two points, clamped to
  1..60 s; 1 s when it has one point), measured on the controller's clock when the point
  arrived, not on the host's clock (hosts' clocks drift, and a skewed host must not look dead).
  So a 1 Hz series drops 3 s after its host stopped reporting or its fio job ended.
* A host marked failed drops all its series at once.
* When a monitor's series continues under a new ``step`` label (the next step began), the
  older one is dropped at once, so sums over ``step`` never count a device twice.
* End-of-run figures (``benchtui_result_*``) describe a finished run: they stay for the rest
  of the session (but go with a failed host).

Latency histograms need every interval, not the latest one: the collector listens to the
state's batches (``FleetState.sample_listeners``) and adds each interval's histogram to its
host's counters in the fixed bucket layout (export/latency_buckets.py). Fleet percentiles are
quantiles of the merged latest histograms of the hosts that are fresh, never averages.

Scrapes run on the HTTP server's threads while the event loop feeds the state: the collector
only reads the state through C-level copies (``list(dict.values())``, ``deque[-1]``) and
guards its own tables with a lock.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import Metric

from benchtui.export.counters import (
    COUNTED,
    OpsCounters,
    counter_labels,
    whole_interval_rate,
)
from benchtui.export.exposition import Family, label_text, render
from benchtui.export.health import health_families
from benchtui.export.labels import SeriesLabels
from benchtui.export.latency_buckets import LATENCY_BUCKETS, BucketCounts
from benchtui.export.metric_names import (
    FLEET_LATENCY_HELP,
    FLEET_LATENCY_NAME,
    FLEET_QUANTILES,
    HISTOGRAM_NAME,
    METRICS,
    family_help,
    format_value,
)
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, SUMMARY, Sample
from benchtui.store.fleet import FAILED, FleetState
from benchtui.store.live import Series, SeriesKey

STALE_INTERVALS = 3
MIN_INTERVAL = 1.0
MAX_INTERVAL = 60.0
_PRUNE_EVERY = 4096
_LABEL_CACHE_MAX = 200_000
_LE = (*(format_value(b) for b in LATENCY_BUCKETS), "+Inf")


def _interval(last: float, previous: float | None) -> float:
    """A series' reporting interval from its last two points (data time, one clock)."""
    if previous is None:
        return MIN_INTERVAL
    return min(max(last - previous, MIN_INTERVAL), MAX_INTERVAL)


@dataclass(slots=True)
class _HostHistogram:
    """One host's latency histogram series (host, tool and labels as in its samples)."""

    key: SeriesKey
    host: str
    tool: str
    labels: dict[str, str]
    latest: LatencyHistogram
    t: float
    interval: float
    arrived: float
    counters: BucketCounts = field(default_factory=BucketCounts)
    _buckets: list[tuple[dict[str, str], str]] | None = None

    def bucket_labels(self, labels: dict[str, str]) -> list[tuple[dict[str, str], str]]:
        """The labels (and text) of each ``le`` bucket, made once."""
        if self._buckets is None:
            self._buckets = []
            for le in _LE:
                with_le = {**labels, "le": le}
                self._buckets.append((with_le, label_text(with_le)))
        return self._buckets


class FleetCollector:
    """A collector over a ``FleetState``: ``render()`` is what ``/metrics`` serves, and
    ``collect()`` offers the same families to prometheus_client (a registry, generate_latest).

    ``attach()`` starts listening to the state's sample batches (call it before the session
    starts, from the feeding thread or before it runs); ``detach()`` stops. ``clock`` is the
    monotonic clock of arrivals and staleness, ``wall`` the epoch clock of step progress;
    tests pass their own. ``matrix``: each sweep step's values (step name -> option -> value),
    which label its series (export/labels.py).
    """

    def __init__(self, state: FleetState, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 matrix: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.state = state
        self.labeler = SeriesLabels(matrix)
        self._counters = OpsCounters()
        #: series -> (time, duration) of its newest point when that point was a partial
        #: interval (``Sample.duration``): its gauge is blended with the point before.
        self._partial: dict[SeriesKey, tuple[float, float]] = {}
        self._clock = clock
        self._wall = wall
        self._lock = threading.Lock()
        #: (host, tool, data time) -> when the batch that carried points of that time arrived:
        #: a series' newest point arrived when its (host, tool, t) did. Far cheaper per sample
        #: than a key per series; entries older than any series can stay fresh are pruned.
        self._arrived: dict[tuple[str, str, float], float] = {}
        self._prune_at = _PRUNE_EVERY
        self._host_arrived: dict[str, float] = {}
        self._histograms: dict[SeriesKey, _HostHistogram] = {}
        #: (metric, reason) -> samples not exported: a metric with no name (a parser newer than
        #: the table), or a histogram that could not be read.
        self._skipped: Counter[tuple[str, str]] = Counter()
        #: series -> (labels, label text): rendering a scrape is then one string per sample.
        self._label_cache: dict[object, tuple[dict[str, str], str]] = {}

    # --- feeding (the state's thread) ----------------------------------------------------------

    def attach(self) -> None:
        if self.on_samples not in self.state.sample_listeners:
            self.state.sample_listeners.append(self.on_samples)

    def detach(self) -> None:
        if self.on_samples in self.state.sample_listeners:
            self.state.sample_listeners.remove(self.on_samples)

    def on_samples(self, samples: list[Sample]) -> None:
        """Note when the batch arrived; count each interval histogram."""
        now = self._clock()
        with self._lock:
            arrived = self._arrived
            last: tuple[str, str, float] | None = None
            for s in samples:
                when = (s.host, s.tool, s.t if s.t is not None else (s.elapsed or 0.0))
                if when != last:
                    last = when
                    arrived[when] = now
                    self._host_arrived[s.host] = now
                if s.duration is not None and s.kind == INTERVAL:
                    self._partial[s.series_key()] = (when[2], s.duration)
                if s.metric in COUNTED:
                    self._counters.add(s)
                if s.metric == HISTOGRAM_METRIC:
                    if s.histogram is not None and s.kind != SUMMARY:
                        try:
                            self._add_histogram(s, now)
                        except Exception:  # noqa: BLE001 - never let the exporter stop a run
                            self._skipped[s.metric, "unreadable histogram"] += 1
                elif s.metric not in METRICS:
                    self._skipped[s.metric, "no exported name"] += 1
            if len(arrived) >= self._prune_at:
                horizon = now - STALE_INTERVALS * MAX_INTERVAL
                self._arrived = {k: v for k, v in arrived.items() if v >= horizon}
                self._prune_at = len(self._arrived) + _PRUNE_EVERY

    def _add_histogram(self, s: Sample, now: float) -> None:
        assert s.histogram is not None
        key = s.series_key()
        t = s.t if s.t is not None else (s.elapsed or 0.0)
        entry = self._histograms.get(key)
        if entry is None:
            entry = self._histograms[key] = _HostHistogram(
                key, s.host, s.tool, dict(s.labels), s.histogram, t, MIN_INTERVAL, now)
        else:
            entry.interval = _interval(t, entry.t)
            entry.latest, entry.t, entry.arrived = s.histogram, t, now
        # This also builds the histogram's counts (parsers make them lazily) here, under the
        # lock, before a scrape's thread can read ``latest``.
        entry.counters.add(s.histogram)

    # --- scraping (the HTTP server's threads) --------------------------------------------------

    def families(self) -> list[Family]:
        """Every family as the state is now, sorted by name."""
        now = self._clock()
        hosts = list(self.state.hosts.values())
        failed = {h.name for h in hosts if h.state == FAILED}
        with self._lock:
            arrived = dict(self._arrived)
            host_arrived = dict(self._host_arrived)
            histograms = [(h, h.counters.copy()) for h in self._histograms.values()
                          if h.host not in failed and self._fresh(now, h.arrived, h.interval)]
            skipped = dict(self._skipped)
            totals = dict(self._counters.totals)
            partial = dict(self._partial)
        families: dict[str, Family] = {}
        self._interval_values(families, arrived, failed, now, partial)
        for key, total in sorted(totals.items()):
            if key[1] in failed:
                continue
            name, doc = COUNTED["iops" if key[0] == "benchtui_ops" else "bandwidth_bytes"]
            family = _family(families, name, "counter", "", doc)
            family.add(name + "_total", counter_labels(key), total)
        self._results(families, failed)
        self._histogram_families(families, histograms)
        ages = {h: now - t for h, t in host_arrived.items()}
        for family in health_families(self.state, hosts, ages, skipped, self._wall(),
                                      step_labels=self.labeler.step_labels):
            families[family.name] = family
        return [families[name] for name in sorted(families)]

    def render(self, *, openmetrics: bool = False) -> bytes:
        """The scrape's body (export/exposition.py)."""
        return render(self.families(), openmetrics=openmetrics)

    def collect(self) -> Iterator[Metric]:
        """The prometheus_client collector protocol: the same families as ``Metric``s."""
        for family in self.families():
            yield family.to_metric()

    @staticmethod
    def _fresh(now: float, arrived: float, interval: float) -> bool:
        return now - arrived <= STALE_INTERVALS * interval

    def _labels(self, key: object, host: str, tool: str, labels: dict[str, str], *,
                metric: str = "", kind: str = "") -> tuple[dict[str, str], str]:
        """A series' Prometheus labels and their text, made once per series."""
        cached = self._label_cache.get(key)
        if cached is None:
            if len(self._label_cache) >= _LABEL_CACHE_MAX:
                self._label_cache.clear()
            made = self.labeler.of(host, tool, labels, metric=metric, kind=kind)
            cached = self._label_cache[key] = (made, label_text(made))
        return cached

    def _interval_values(self, families: dict[str, Family],
                         arrived: dict[tuple[str, str, float], float],
                         failed: set[str], now: float,
                         partial: dict[SeriesKey, tuple[float, float]]) -> None:
        """The newest value of every fresh series; one series per identity without step. A
        newest point that covers a partial interval (``duration`` shorter than the series'
        interval) is blended with the point before it, by time: the gauge is then the rate
        over the last whole interval, not a short interval's rate standing for a whole one."""
        chosen: dict[tuple[object, ...], tuple[float, SeriesKey, Series]] = {}
        for key, series in list(self.state.store.series.items()):
            if series.host in failed or series.metric not in METRICS:
                continue
            times = series.times
            if not times:
                continue
            last = times[-1]
            when = arrived.get((series.host, series.tool, last))
            if when is None:
                continue
            previous = times[-2] if len(times) > 1 else None
            if not self._fresh(now, when, _interval(last, previous)):
                continue
            ident = (series.host, series.tool, series.metric,
                     tuple(kv for kv in key[3] if kv[0] != "step"))
            held = chosen.get(ident)
            if held is None or (when, last) > (held[0], held[2].times[-1]):
                chosen[ident] = (when, key, series)
        for _when, key, series in chosen.values():
            if not series.values:
                continue
            spec = METRICS[series.metric]
            family = _family(families, spec.name, spec.type, spec.unit)
            labels, text = self._labels(key, series.host, series.tool, series.labels,
                                        metric=series.metric, kind=series.kind)
            # a rate is blended over the last whole interval; a percentile is not a rate
            # (as the dump's OpenMetrics: ``openmetrics.OpenMetricsWriter``)
            blend = None if "quantile" in series.labels else partial.get(key)
            family.add(spec.name, labels, _weighted_last(series, blend), text)

    def _results(self, families: dict[str, Family], failed: set[str]) -> None:
        latest: dict[SeriesKey, Sample] = {}
        for s in list(self.state.store.summaries):
            if s.metric in METRICS and s.host not in failed:
                latest[s.series_key()] = s
        for key, s in latest.items():
            spec = METRICS[s.metric]
            family = _family(families, spec.result_name, spec.type, spec.unit)
            labels, text = self._labels(("result", key), s.host, s.tool, s.labels,
                                        metric=s.metric, kind=s.kind)
            family.add(spec.result_name, labels, s.value, text)

    def _histogram_families(self, families: dict[str, Family],
                            histograms: list[tuple[_HostHistogram, BucketCounts]]) -> None:
        fleet: dict[tuple[str, tuple[tuple[str, str], ...]], LatencyHistogram] = {}
        for entry, counters in histograms:
            family = _family(families, HISTOGRAM_NAME, "histogram", "seconds")
            labels, text = self._labels(("histogram", entry.key), entry.host, entry.tool,
                                        entry.labels, metric=HISTOGRAM_METRIC, kind=INTERVAL)
            for (le_labels, le_text), n in zip(entry.bucket_labels(labels),
                                               counters.cumulative(), strict=True):
                family.add(HISTOGRAM_NAME + "_bucket", le_labels, n, le_text)
            family.add(HISTOGRAM_NAME + "_count", labels, counters.count, text)
            family.add(HISTOGRAM_NAME + "_sum", labels, counters.sum_seconds, text)
            group = (entry.tool, tuple(sorted(entry.labels.items())))
            fleet.setdefault(group, LatencyHistogram()).merge(entry.latest)
        for (tool, group_labels), merged in fleet.items():
            quantiles = merged.quantiles(FLEET_QUANTILES)
            if not quantiles:
                continue
            family = _family(families, FLEET_LATENCY_NAME, "summary", "seconds",
                             FLEET_LATENCY_HELP)
            base = self.labeler.of("", tool, dict(group_labels))
            del base["host"]
            for q, value in quantiles.items():
                family.add(FLEET_LATENCY_NAME, {**base, "quantile": format_value(q)}, value)


def _weighted_last(series: Series, partial: tuple[float, float] | None) -> float:
    """The series' newest value; when that point covers only part of an interval, the mean
    rate over the last whole interval (``counters.whole_interval_rate``)."""
    last = series.values[-1]
    if partial is None or partial[0] != series.times[-1] or len(series.values) < 2:
        return last
    return whole_interval_rate(last, partial[1], series.values[-2],
                               _interval(series.times[-1], series.times[-2]))


def _family(families: dict[str, Family], name: str, typ: str, unit: str,
            documentation: str | None = None) -> Family:
    family = families.get(name)
    if family is None:
        family = families[name] = Family(name, typ, unit, documentation or family_help(name))
    return family
