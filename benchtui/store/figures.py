"""A host's and the fleet's figures, read out of a ``FleetState``: plain numbers, the one
definition of what a figure is (IOPS and bandwidth sums, latency percentiles from merged
histograms, device utilisation, network rates), used by the console (``ui/figures.py``
re-exports it), the recorder's figure track and the baseline's ghost
(``session.figure_track``, ``session.ghost_digest``) and the report's per-second plots
(``report.series``).

The widgets format and draw; this module decides which series a number comes from. Rules:

* Only *fresh* series count: a series whose newest point is older than ``STALE_AFTER``
  seconds before the console's clock is left out of current values, so a finished step, a
  failed host or a monitor between steps never keeps adding its last value to the totals;
  nor one whose newest point is older than the current step (``oldest``: a figure shown
  belongs to the step it is shown under).
* Fleet and host latency percentiles are quantiles of merged per-interval histograms (every
  job, and for the fleet every host), never an average of percentiles; tools without
  histograms fall back to their own percentile series (the worst job's), then to the mean.
* Values stay in base units (operations/s, bytes/s, seconds, ratios).
"""

from __future__ import annotations

import itertools
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from operator import add, gt
from typing import TypeVar

from benchtui.model.sample import Sample
from benchtui.store.fleet import FleetState, StepView
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


@dataclass(slots=True)
class DeviceFigures:
    """One block device on one host (iostat, /proc/diskstats, SPDK)."""

    name: str
    util: float | None = None
    await_read: float | None = None
    await_write: float | None = None
    iops_read: float | None = None
    iops_write: float | None = None
    bw_read: float | None = None
    bw_write: float | None = None
    queue: float | None = None

    @property
    def busy(self) -> bool:
        return bool(self.util) or bool(self.iops_read) or bool(self.iops_write)


@dataclass(frozen=True, slots=True)
class Versus:
    """Current figures as shares of a baseline's at the same step-elapsed second (1.0: the
    same; ``benchtui.ui.ghost``), per op; an op is absent where either has no current value.
    ``latency`` compares p99 (or the mean, for tools that give only a mean)."""

    iops: dict[str, float] = field(default_factory=dict)
    bandwidth: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    #: Network rates per direction ("send", "receive": iperf3, iperf).
    net: dict[str, float] = field(default_factory=dict)
    #: Shares within this of 1.0 count as the same (``--tolerance``, 0.05 by default).
    tolerance: float = 0.05

    def judge(self, share: float, *, lower_is_better: bool = False) -> int:
        """1 when ``share`` is better than the baseline by more than the tolerance, -1 when
        worse, 0 within it (for latency, higher is worse)."""
        if abs(share - 1.0) <= self.tolerance:
            return 0
        return 1 if (share < 1.0) == lower_is_better else -1


@dataclass(slots=True)
class HostFigures:
    """Everything a host pane shows, current values only."""

    name: str
    state: str
    reason: str = ""
    #: No sample for ``STALE_AFTER`` seconds while the host should be producing.
    stale: bool = False
    iops: dict[str, float] = field(default_factory=dict)
    bandwidth: dict[str, float] = field(default_factory=dict)
    latency: dict[str, Latency] = field(default_factory=dict)
    devices: list[DeviceFigures] = field(default_factory=list)
    net_send: float | None = None
    net_receive: float | None = None
    retransmits: float | None = None
    #: iperf printed ``[SUM]`` lines (several streams): charts use them, not the streams.
    net_has_sum: bool = False
    #: The network rates are the last run's end-of-run figures (iperf3's, the run is over).
    net_final: bool = False
    #: Memory copy rate per mbw method, bytes/s (latest run or AVG).
    memory: dict[str, float] = field(default_factory=dict)
    #: (test, unit, score) of benchmark tools (UnixBench), as printed.
    scores: list[tuple[str, str, float]] = field(default_factory=list)
    cpu_busy: float | None = None
    warnings: int = 0
    tools: tuple[str, ...] = ()
    #: What the host has reported at all (current or not), so that a pane keeps its rows,
    #: showing "–", when the values go stale: directions of IOPS/bandwidth and of latency,
    #: and the metric names.
    io_ops: tuple[str, ...] = ()
    latency_ops: tuple[str, ...] = ()
    metrics: frozenset[str] = frozenset()
    #: The numbers are the last run's end-of-run summary (the host is not running now).
    final: bool = False
    #: Against the baseline's figures at the same step-elapsed second (``--baseline``).
    versus: Versus | None = None

    @property
    def has_io(self) -> bool:
        return bool(self.iops or self.bandwidth)


@dataclass(slots=True)
class FleetFigures:
    """The header: the session, its step, its hosts and fleet totals."""

    name: str
    step: StepView | None
    progress: float | None
    eta: float | None
    elapsed: float
    hosts_up: int
    hosts_total: int
    iops: dict[str, float]
    bandwidth: dict[str, float]
    latency: dict[str, Latency]
    started: bool
    ended: bool
    ok: bool | None
    warnings: int
    errors: int
    #: The last step (when none runs now), to say what just finished.
    last_step: StepView | None = None
    #: Against the baseline's fleet at the same step-elapsed second (``--baseline``).
    versus: Versus | None = None


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

    def _catch_up(self) -> None:
        series = self._series
        if len(series) == self._seen:
            return
        for s in itertools.islice(series.values(), self._seen, None):
            self._by_host.setdefault(s.host, {}).setdefault(s.metric, []).append(s)
            self._by_metric.setdefault(s.metric, []).append(s)
        self._seen = len(series)
        self._found.clear()

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


def latency(store: LiveStore, now: float, op: str, host: str | None = None, *,
            quantiles: tuple[float, ...] = QUANTILES) -> Latency:
    """p50/p99/p99.9 of ``op`` for one host or (``host=None``) the whole fleet (those of
    ``quantiles`` only: the others are None when they come from histograms)."""
    hosts = None if host is None else (host,)
    first = oldest(store, now)
    # completion latency's histograms (fio's own percentile measure) where a tool gives
    # several, as the report's tables and plots take them
    merged = store.fleet_latency(quantiles, since=first, hosts=hosts, op=op, measure="clat") \
        or store.fleet_latency(quantiles, since=first, hosts=hosts, op=op)
    if merged:
        return Latency(merged.get(0.5), merged.get(0.99), merged.get(0.999), "histogram")
    worst: dict[str, float] = {}
    for s in fresh(store, "latency_seconds", host, now, op=op):
        q = s.labels.get("quantile")
        if q in ("0.5", "0.99", "0.999") and s.last is not None \
                and latency_measure_ok(s.labels):
            worst[q] = max(worst.get(q, 0.0), s.last)
    if worst:
        return Latency(worst.get("0.5"), worst.get("0.99"), worst.get("0.999"), "percentiles")
    means = [s.last for s in fresh(store, "latency_mean_seconds", host, now, op=op)
             if s.last is not None and latency_measure_ok(s.labels, "lat")]
    if means:
        return Latency(max(means), None, None, "mean")
    return Latency()


def io_figures(store: LiveStore, host: str | None, now: float, *,
               quantiles: tuple[float, ...] = QUANTILES
               ) -> tuple[dict[str, float], dict[str, float], dict[str, Latency]]:
    """IOPS and bandwidth per op (summed over jobs, and for the fleet over hosts) and
    latency percentiles per op (``latency``) of one host or (``host=None``) the fleet, as
    current at ``now``: what a pane's and the header's numbers are, and what a baseline's
    ghost computes from the baseline's samples (``benchtui.ui.ghost``, p99 only)."""
    iops = _ops(rate_sums(fresh(store, "iops", host, now)))
    bandwidth = _ops(rate_sums(fresh(store, "bandwidth_bytes", host, now)))
    lat = {op: latency(store, now, op, host, quantiles=quantiles)
           for op in OPS if op in iops or op in bandwidth}
    return iops, bandwidth, {op: v for op, v in lat.items() if not v.empty}


def fleet_figures(state: FleetState, now: float) -> FleetFigures:
    iops, bandwidth, lat = io_figures(state.store, None, now)
    step = state.current_step
    return FleetFigures(
        name=state.name, step=step,
        progress=step.progress(now) if step else None, eta=step.eta(now) if step else None,
        elapsed=state.elapsed(now), hosts_up=state.hosts_up(), hosts_total=len(state.hosts),
        iops=iops, bandwidth=bandwidth, latency=lat, started=state.started is not None,
        ended=state.ended is not None, ok=state.ok, warnings=state.warnings_total,
        errors=state.errors_total, last_step=state.steps[-1] if state.steps else None)


def devices(store: LiveStore, host: str, now: float) -> list[DeviceFigures]:
    """Every device ``host`` reported, by name (values None where not current)."""
    found: dict[str, DeviceFigures] = {
        name: DeviceFigures(name) for name in sorted(
            {s.labels.get("device", "") for s in index_of(store).find("disk_util_ratio", host)}
            | {s.labels.get("device", "") for s in index_of(store).find("disk_iops", host)})}

    def dev(name: str) -> DeviceFigures:
        d = found.get(name)
        if d is None:
            d = found[name] = DeviceFigures(name)
        return d

    for name, v in latest_by(fresh(store, "disk_util_ratio", host, now), "device").items():
        dev(name).util = v
    for name, v in latest_by(fresh(store, "disk_queue_depth", host, now), "device").items():
        dev(name).queue = v
    per_op = (("disk_await_seconds", "await"), ("disk_iops", "iops"),
              ("disk_bandwidth_bytes", "bw"))
    for metric, attr in per_op:
        for op in ("read", "write"):
            values = latest_by(fresh(store, metric, host, now, op=op), "device")
            for name, v in values.items():
                setattr(dev(name), f"{attr}_{op}", v)
        if metric != "disk_await_seconds":
            for name, v in latest_by(fresh(store, metric, host, now, op="total"),
                                     "device").items():
                d = dev(name)
                if getattr(d, f"{attr}_read") is None:
                    setattr(d, f"{attr}_read", v)
    return [found[k] for k in sorted(found)]


def net_rates(store: LiveStore, host: str, now: float) -> tuple[float | None, float | None]:
    """(send, receive) bytes/s of ``host`` current at ``now``: the ``sum`` stream where iperf
    printed one, else its streams added up."""
    rates: dict[str, float] = {}
    for direction in ("send", "receive"):
        series = list(fresh(store, "net_bandwidth_bytes", host, now, direction=direction))
        sums = [s for s in series if s.labels.get("stream") == "sum"]
        values = sum_by(sums or [s for s in series
                                 if not s.labels.get("stream", "").startswith("sum")], "")
        if values:
            rates[direction] = values[""]
    return rates.get("send"), rates.get("receive")


def _net(store: LiveStore, host: str, now: float) -> tuple[float | None, float | None,
                                                           float | None]:
    """(send, receive) bytes/s (``net_rates``) and retransmits."""
    send, receive = net_rates(store, host, now)
    retr_series = list(fresh(store, "net_retransmits", host, now))
    retr_sums = [s for s in retr_series if s.labels.get("stream") == "sum"]
    retr = sum_by(retr_sums or [s for s in retr_series
                                if not s.labels.get("stream", "").startswith("sum")], "")
    return send, receive, retr.get("")


def host_figures(state: FleetState, host: str, now: float) -> HostFigures:
    store = state.store
    view = state.host(host)
    iops, bandwidth, lat = io_figures(store, host, now)
    send, receive, retr = _net(store, host, now)
    memory = latest_by(fresh(store, "mem_bandwidth_bytes", host, now), "method")
    memory.update(_summary_latest(state, host, "mem_bandwidth_bytes", "method"))
    scores = [(s.labels.get("test", "?"), s.labels.get("unit", ""), s.value)
              for s in _step_summaries(state, host) if s.metric == "benchmark_score"]
    idle = latest_by(fresh(store, "cpu_ratio", host, now, mode="idle"), "mode").get("idle")
    running = view.state in ("running", "reconnecting")
    final = False
    if not running and not iops and not bandwidth:
        # The run is over: its end-of-run figures rather than dashes.
        iops, bandwidth, lat = end_of_run(state, host)
        final = bool(iops or bandwidth)
    net_final = False
    if not running and send is None and receive is None:
        # as for fio: the network tool's own end-of-run figures rather than dashes
        send, receive, end_retr = net_end_of_run(state, host)
        net_final = send is not None or receive is not None
        retr = end_retr if net_final else retr
    stale = running and (view.last_sample_t is None or view.last_sample_t < since(now))
    index = index_of(store)
    seen_io = {s.labels.get("op", "") for m in ("iops", "bandwidth_bytes")
               for s in index.find(m, host)}
    seen_lat = {s.labels.get("op", "") for m in ("latency_seconds", "latency_mean_seconds")
                for s in index.find(m, host)}
    return HostFigures(
        name=host, state=view.state, reason=view.reason, stale=stale, iops=iops,
        bandwidth=bandwidth, latency={op: v for op, v in lat.items() if not v.empty},
        devices=devices(store, host, now), net_send=send, net_receive=receive,
        retransmits=retr, memory=memory, scores=scores,
        cpu_busy=None if idle is None else max(0.0, 1.0 - idle), warnings=view.warnings,
        tools=tuple(view.tools), io_ops=tuple(op for op in OPS if op in seen_io),
        latency_ops=tuple(op for op in OPS if op in seen_lat and op in seen_io),
        metrics=frozenset(index.metrics(host)),
        net_has_sum=any(s.labels.get("stream") == "sum"
                        for s in index.find("net_bandwidth_bytes", host)),
        final=final, net_final=net_final)


def end_of_run(state: FleetState, host: str) -> tuple[dict[str, float], dict[str, float],
                                                      dict[str, Latency]]:
    """IOPS, bandwidth (summed over jobs) and latency percentiles (the worst job's: a run's
    summary has no histogram to merge) of the host's last run, from the tool's own summary;
    of the last step's run only (a step that has started shows none of the previous one's)."""
    summaries = _step_summaries(state, host)
    newest: float | None = None
    for s in summaries:
        if s.metric in ("iops", "bandwidth_bytes") and s.t is not None \
                and (newest is None or s.t > newest):
            newest = s.t
    if newest is None:
        return {}, {}, {}
    last = [s for s in summaries if s.t == newest]
    iops: dict[str, float] = defaultdict(float)
    bandwidth: dict[str, float] = defaultdict(float)
    worst: dict[str, dict[str, float]] = defaultdict(dict)
    for into, metric in ((iops, "iops"), (bandwidth, "bandwidth_bytes")):
        rates = [s for s in last if s.metric == metric and "job" in s.labels]
        for (_host, op), parts in rate_parts(rates, lambda s: s.labels, default_op="").items():
            into[op] += sum(s.value for s in parts)
    for s in last:
        op = s.labels.get("op", "")
        if s.metric == "latency_seconds" and latency_measure_ok(s.labels):
            q = s.labels.get("quantile", "")
            worst[op][q] = max(worst[op].get(q, 0.0), s.value)
    lat = {op: Latency(v.get("0.5"), v.get("0.99"), v.get("0.999"), "percentiles")
           for op, v in worst.items() if op in OPS}
    return _ops(dict(iops)), _ops(dict(bandwidth)), lat


def _streams(samples: list[Sample]) -> float | None:
    """The rate of several streams: their ``sum`` where the tool printed one, else the
    streams added up (None: none)."""
    sums = [s.value for s in samples if s.labels.get("stream") == "sum"]
    if sums:
        return sum(sums)
    rest = [s.value for s in samples if not s.labels.get("stream", "").startswith("sum")]
    return sum(rest) if rest else None


def net_end_of_run(state: FleetState, host: str) -> tuple[float | None, float | None,
                                                          float | None]:
    """(send, receive) bytes/s and retransmits of the host's last network run in the last
    step, from the tool's own end-of-run figures (iperf3's summary lines)."""
    summaries = [s for s in _step_summaries(state, host)
                 if s.metric in ("net_bandwidth_bytes", "net_retransmits") and s.t is not None]
    if not summaries:
        return None, None, None
    newest = max(s.t for s in summaries if s.t is not None)
    # one figure per series (a host that is both server and client prints the receiving
    # side twice: the client's report of the server, and the server's own)
    by_series: dict[tuple[object, ...], Sample] = {}
    for s in summaries:
        if s.t is not None and s.t >= newest - 1.0:
            by_series[s.series_key()] = s
    last = list(by_series.values())
    send = _streams([s for s in last if s.metric == "net_bandwidth_bytes"
                     and s.labels.get("direction") == "send"])
    receive = _streams([s for s in last if s.metric == "net_bandwidth_bytes"
                        and s.labels.get("direction") == "receive"])
    retr = _streams([s for s in last if s.metric == "net_retransmits"])
    return send, receive, retr


def _step_summaries(state: FleetState, host: str) -> list[Sample]:
    """The end-of-run samples of ``host`` in the last step (all of them for samples without a
    step label: a session fed by hand)."""
    step = state.steps[-1].name if state.steps else None
    return [s for s in state.store.summaries if s.host == host
            and (step is None or s.labels.get("step", step) == step)]


def _summary_latest(state: FleetState, host: str, metric: str, label: str) -> dict[str, float]:
    """The newest end-of-run figure per ``label`` value (mbw's AVG lines, for instance), of
    the last step."""
    out: dict[str, float] = {}
    for s in _step_summaries(state, host):
        if s.metric == metric:
            out[s.labels.get(label, "")] = s.value
    return out


@dataclass(slots=True)
class Points:
    """Times and values of a series drawn by a chart (``charts.Points``)."""

    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


def combined(series: Iterable[Series], start: float, *, worst: bool = False
             ) -> Series | Points | None:
    """Several series as one for a chart, from ``start`` on: values at the same time added
    (jobs of one fio, steps one after another), or the largest taken (``worst``: latency
    percentiles, which must not be added or averaged). One series is returned as it is."""
    found = [s for s in series if s.times and s.times[-1] >= start]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    aligned = _aligned(found, start, worst=worst)
    if aligned is not None:
        return aligned
    merged: dict[float, float] = {}
    for s in found:
        times, values = s.times, s.values
        for i in range(len(times) - 1, -1, -1):
            t = times[i]
            if t < start:
                break
            v = values[i]
            if t in merged:
                merged[t] = max(merged[t], v) if worst else merged[t] + v
            else:
                merged[t] = v
    keys = sorted(merged)
    return Points(keys, [merged[t] for t in keys])


def _aligned(found: list[Series], start: float, *, worst: bool) -> Points | None:
    """``combined`` for series whose points from ``start`` on have the same times (the jobs
    of one fio): added (or the largest taken) point by point, without a dict; None when the
    times differ or repeat."""
    tails: list[tuple[list[float], list[float]]] = []
    for s in found:
        times = s.times
        n = 0
        for t in reversed(times):  # as ``combined``: from the newest back to the first older
            if t < start:
                break
            n += 1
        tails.append((list(islice(reversed(times), n)), list(islice(reversed(s.values), n))))
    times0, values = tails[0]
    if any(times != times0 for times, _ in tails[1:]) \
            or not all(map(gt, times0, islice(times0, 1, None))):
        return None
    combine = max if worst else add
    for _, other in tails[1:]:
        values = list(map(combine, values, other))
    return Points(times0[::-1], values[::-1])


#: A job's figures: (step, job, op) -> {"iops", "bw", "mean", "0.5", "0.99", "0.999"}.
JobKey = tuple[str, str, str]


def job_figures(state: FleetState, host: str) -> dict[JobKey, tuple[dict[str, float], bool]]:
    """Every (step, job, op) of ``host``: its figures and whether they are the tool's own
    end-of-run figures (True: fio's ``read: IOPS=...`` of the finished run) rather than its
    newest interval's. A run's figure is the tool's own where it printed one."""
    index = index_of(state.store)
    found: dict[JobKey, dict[str, float]] = {}
    final: set[JobKey] = set()

    def key_of(labels: dict[str, str]) -> JobKey:
        return (labels.get("step", "-"), labels.get("job", "-"), labels.get("op", "-"))

    def name_of(metric: str, labels: dict[str, str]) -> str | None:
        if metric == "iops":
            return "iops"
        if metric == "bandwidth_bytes":
            return "bw"
        if metric == "latency_seconds":
            q = labels.get("quantile")
            if q in ("0.5", "0.99", "0.999") and labels.get("measure") in (None, "clat", "lat"):
                return q
            return None
        if metric == "latency_mean_seconds" and labels.get("measure") == "clat":
            return "mean"
        return None

    for metric in ("iops", "bandwidth_bytes", "latency_seconds", "latency_mean_seconds"):
        for s in index.find(metric, host):
            name = name_of(metric, s.labels)
            if name is not None and s.last is not None:
                found.setdefault(key_of(s.labels), {})[name] = s.last
    summaries: dict[JobKey, dict[str, float]] = {}
    for sample in state.store.summaries:
        job = sample.labels.get("job")
        if sample.host != host or job is None or job == "all" or job.startswith("group "):
            continue
        name = name_of(sample.metric, sample.labels)
        if name is not None:
            summaries.setdefault(key_of(sample.labels), {})[name] = sample.value
    for key, values in summaries.items():
        if "iops" in values or "bw" in values:
            found[key] = {**found.get(key, {}), **values}
            final.add(key)
    return {k: (v, k in final) for k, v in found.items()}
