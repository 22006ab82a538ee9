"""Which series a figure reads, and how series add up: the rules every figure of benchtui
follows (``store.figures`` for the console, the figure track and the ghost; ``report`` for
the tables and plots).

* Only *fresh* series count: a series whose newest point is older than ``STALE_AFTER``
  seconds before the console's clock is left out of current values, nor one whose newest
  point is older than the current step (``oldest``: a figure shown belongs to the step it is
  shown under).
* IOPS and bandwidth add up over a tool's jobs (``rate_parts``: fio's whole-run line only
  without per-job series, its group lines never).
* Latency figures read completion or total latency, never submission (``latency_measure_ok``).
"""

from __future__ import annotations

import itertools
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from benchtui.store.live import LiveStore, Series

T = TypeVar("T")

#: Seconds without a new point after which a series no longer counts as current.
STALE_AFTER = 5.0
#: The quantiles the console shows (p50, p99, p99.9).
QUANTILES = (0.5, 0.99, 0.999)
#: fio's own op names; ``total`` stands for tools that do not split reads and writes.
OPS = ("read", "write", "total")

@dataclass(frozen=True, slots=True)
class Latency:
    """p50/p99/p99.9 in seconds; ``source`` says where they came from (for honest labels)."""

    p50: float | None = None
    p99: float | None = None
    p999: float | None = None
    #: "histogram" (exact, merged), "percentiles" (the tool's own, worst job), "mean".
    source: str = ""

    @property
    def empty(self) -> bool:
        return self.p50 is None and self.p99 is None and self.p999 is None


class SeriesIndex:
    """The store's series by host and metric, so a pane reads its own series without
    scanning every host's (``LiveStore.find`` walks them all). Series are only ever added to
    a store, so the index catches up by reading the new ones, and what a query found stays
    what it finds until a series is added (a host's figures ask some 80 queries a second)."""

    def __init__(self, store: LiveStore) -> None:
        # the store's dict, not the store: the index is the value of a weak dictionary keyed
        # by the store, which must not keep its own key alive (a replay makes a new state,
        # and store, on every seek)
        self._series = store.series
        self._seen = 0
        self._by_host: dict[str, dict[str, list[Series]]] = {}
        self._by_metric: dict[str, list[Series]] = {}
        self._found: dict[tuple[object, ...], tuple[Series, ...]] = {}
        self._kept: dict[tuple[object, ...], object] = {}

    def _catch_up(self) -> None:
        series = self._series
        if len(series) == self._seen:
            return
        for s in itertools.islice(series.values(), self._seen, None):
            self._by_host.setdefault(s.host, {}).setdefault(s.metric, []).append(s)
            self._by_metric.setdefault(s.metric, []).append(s)
        self._seen = len(series)
        self._found.clear()
        self._kept.clear()

    def find(self, metric: str, host: str | None = None, **labels: str) -> Iterator[Series]:
        """As ``LiveStore.find`` with a metric: the series matching host and labels."""
        return iter(self.found(metric, host, **labels))

    def found(self, metric: str, host: str | None = None, **labels: str
              ) -> tuple[Series, ...]:
        """``find``'s series as a tuple (kept until a series is added to the store)."""
        self._catch_up()
        key = (metric, host, *labels.items())
        hit = self._found.get(key)
        if hit is not None:
            return hit
        if host is None:
            candidates = self._by_metric.get(metric, ())
        else:
            candidates = self._by_host.get(host, {}).get(metric, ())
        hit = self._found[key] = tuple(
            series for series in candidates
            if all(series.labels.get(k) == v for k, v in labels.items()))
        return hit

    def kept(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        """``make()``, kept (under ``key``) until a series is added to the store: for what
        depends only on which series there are (a host's ops and metrics)."""
        self._catch_up()
        if key in self._kept:
            return self._kept[key]  # type: ignore[return-value]
        value = self._kept[key] = make()
        return value

    def metrics(self, host: str) -> set[str]:
        self._catch_up()
        return set(self._by_host.get(host, ()))

_INDEXES: weakref.WeakKeyDictionary[LiveStore, SeriesIndex] = weakref.WeakKeyDictionary()


def index_of(store: LiveStore) -> SeriesIndex:
    """The (cached) index of ``store``."""
    if _LAST and _LAST[0][0]() is store:
        return _LAST[0][1]
    index = _INDEXES.get(store)
    if index is None:
        index = _INDEXES[store] = SeriesIndex(store)
    _LAST[:] = [(weakref.ref(store), index)]
    return index


#: The store asked for last and its index (the same store is asked thousands of times).
_LAST: list[tuple[weakref.ref[LiveStore], SeriesIndex]] = []


def since(now: float) -> float:
    """The oldest newest-point a series may have to count as current at ``now`` (for a host:
    whether it is stale)."""
    return now - STALE_AFTER


def oldest(store: LiveStore, now: float) -> float:
    """The oldest point a figure may be read from at ``now``: ``STALE_AFTER`` seconds back,
    and never before the store's scope (the current step's start, the last step's end
    between steps: ``LiveStore.scope``), so that a figure shown belongs to the step it is
    shown under: at a step change the previous step's figures leave at once, and "–" is
    shown until the new step's first interval arrives."""
    floor = now - STALE_AFTER
    scope = store.scope
    return floor if scope is None or scope < floor else scope


def fresh(store: LiveStore, metric: str, host: str | None, now: float,
          **labels: str) -> Iterable[Series]:
    """Series of ``metric`` (on ``host``, with ``labels``) that have a point newer than
    ``STALE_AFTER`` before ``now``."""
    first = oldest(store, now)
    for series in index_of(store).found(metric, host, **labels):
        times = series.times
        if times and times[-1] >= first:
            yield series


def latency_measure_ok(labels: Mapping[str, str], default: str = "clat") -> bool:
    """Whether a latency series is one a figure reads: completion latency (fio's own
    percentile measure) or total latency, never submission latency (``slat``)."""
    return labels.get("measure", default) in ("clat", "lat")


def job_kind(labels: Mapping[str, str]) -> str:
    """What a rate series stands for: "job" (one of a tool's jobs, or a tool without jobs),
    "whole" (fio's ``job="all"`` line: every job at once) or "group" (fio's ``Run status
    group N`` lines, never added to the jobs')."""
    job = labels.get("job", "")
    if job == "all":
        return "whole"
    return "group" if job.startswith("group ") else "job"


def rate_parts(items: Iterable[T], labels: Callable[[T], Mapping[str, str]], *,
               default_op: str = "total") -> dict[tuple[str, str], list[T]]:
    """(host, op) -> the items whose values add up to the host's rate of ``op``: its jobs';
    fio's whole-run line only for an op with no per-job item; group lines never. The one
    rule for IOPS and bandwidth sums: the console's (``io_figures``, ``end_of_run``), the
    report's tables (``report.figures``) and plots (``report.series``)."""
    per_job: dict[tuple[str, str], list[T]] = defaultdict(list)
    whole: dict[tuple[str, str], list[T]] = defaultdict(list)
    for item in items:
        lab = labels(item)
        kind = job_kind(lab)
        if kind == "group":
            continue
        key = (lab.get("host", ""), lab.get("op", default_op))
        (per_job if kind == "job" else whole)[key].append(item)
    return {key: per_job.get(key) or whole[key] for key in set(per_job) | set(whole)}


def rate_sums(series: Iterable[Series]) -> dict[str, float]:
    """op -> the newest values added up (over jobs, and hosts) by ``rate_parts``' rule (in
    one pass: this runs for every pane and every figure-track point)."""
    jobs: dict[str, float] = {}
    whole: dict[tuple[str, str], float] = {}
    has_jobs: set[tuple[str, str]] = set()
    for s in series:
        values = s.values
        if not values:
            continue
        labels = s.labels
        op = labels.get("op", "")
        job = labels.get("job")
        if job is not None and (job == "all" or job.startswith("group ")):
            if job == "all":
                key = (s.host, op)
                whole[key] = whole.get(key, 0.0) + values[-1]
            continue
        jobs[op] = jobs.get(op, 0.0) + values[-1]
        has_jobs.add((s.host, op))
    for (host, op), v in whole.items():
        if (host, op) not in has_jobs:
            jobs[op] = jobs.get(op, 0.0) + v
    return jobs


def sum_by(series: Iterable[Series], label: str) -> dict[str, float]:
    """The latest values summed per value of ``label`` (jobs and hosts add up)."""
    out: dict[str, float] = defaultdict(float)
    for s in series:
        if s.values:
            out[s.labels.get(label, "")] += s.values[-1]
    return dict(out)


def latest_by(series: Iterable[Series], label: str) -> dict[str, float]:
    """The newest value per value of ``label`` (no summing: devices, methods)."""
    newest: dict[str, tuple[float, float]] = {}
    for s in series:
        t, v = s.last_t, s.last
        if t is None or v is None:
            continue
        key = s.labels.get(label, "")
        if key not in newest or t >= newest[key][0]:
            newest[key] = (t, v)
    return {k: v for k, (_t, v) in newest.items()}


def _ops(values: dict[str, float]) -> dict[str, float]:
    return {op: values[op] for op in OPS if op in values}
