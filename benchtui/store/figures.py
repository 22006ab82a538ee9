"""A host's and the fleet's figures, read out of a ``FleetState``: plain numbers, the one
definition of what a figure is (IOPS and bandwidth sums, latency percentiles from merged
histograms, device utilisation, network rates), used by the console (``ui/figures.py``
re-exports it), the recorder's figure track and the baseline's ghost
(``session.figure_track``, ``session.ghost_digest``) and the report's per-second plots
(``report.series``).

The widgets format and draw; this module decides which series a number comes from, by the
rules of ``store.series_rules`` (re-exported here), with a run's own end-of-run figures from
``store.run_figures`` once it is over. Rules:

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

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from operator import add, gt

from benchtui.store.fleet import FleetState, StepView
from benchtui.store.live import LiveStore, Series
from benchtui.store.run_figures import (
    JobKey,
    _step_summaries,
    _summary_latest,
    end_of_run,
    job_figures,
    net_end_of_run,
)
from benchtui.store.series_rules import (
    OPS,
    QUANTILES,
    STALE_AFTER,
    Latency,
    SeriesIndex,
    _ops,
    fresh,
    index_of,
    job_kind,
    latency_measure_ok,
    latest_by,
    oldest,
    rate_parts,
    rate_sums,
    since,
    sum_by,
)

__all__ = [
    "OPS", "QUANTILES", "STALE_AFTER", "DeviceFigures", "FleetFigures", "HostFigures", "IoFigures",
    "JobKey", "Latency", "Points", "SeriesIndex", "Versus", "combined", "devices",
    "end_of_run", "fleet_figures", "fresh", "host_figures", "index_of", "io_figures",
    "job_figures", "job_kind", "latency", "latency_measure_ok", "latest_by", "net_end_of_run",
    "net_rates", "oldest", "rate_parts", "rate_sums", "since", "sum_by",
]


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


#: The fleet's IOPS, bandwidth and latency per op (``io_figures``).
IoFigures = tuple[dict[str, float], dict[str, float], dict[str, Latency]]


def fleet_figures(state: FleetState, now: float, io: IoFigures | None = None
                  ) -> FleetFigures:
    """The header's figures at ``now``; ``io``: the fleet's I/O figures as computed before
    (the header takes them when the data changed, the clock's figures every second)."""
    iops, bandwidth, lat = io if io is not None else io_figures(state.store, None, now)
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
    index = index_of(store)
    found: dict[str, DeviceFigures] = {
        name: DeviceFigures(name) for name in sorted(
            {s.labels.get("device", "") for s in index.found("disk_util_ratio", host)}
            | {s.labels.get("device", "") for s in index.found("disk_iops", host)})}

    def dev(name: str) -> DeviceFigures:
        d = found.get(name)
        if d is None:
            d = found[name] = DeviceFigures(name)
        return d

    first = oldest(store, now)
    util = _latest_by_device(index.found("disk_util_ratio", host), first, False)
    for name, v in util.get(None, {}).items():
        dev(name).util = v
    queue = _latest_by_device(index.found("disk_queue_depth", host), first, False)
    for name, v in queue.get(None, {}).items():
        dev(name).queue = v
    per_op = (("disk_await_seconds", "await"), ("disk_iops", "iops"),
              ("disk_bandwidth_bytes", "bw"))
    for metric, attr in per_op:
        by_op = _latest_by_device(index.found(metric, host), first, True)
        for op in ("read", "write"):
            for name, v in by_op.get(op, {}).items():
                setattr(dev(name), f"{attr}_{op}", v)
        if metric != "disk_await_seconds":
            for name, v in by_op.get("total", {}).items():
                d = dev(name)
                if getattr(d, f"{attr}_read") is None:
                    setattr(d, f"{attr}_read", v)
    return [found[k] for k in sorted(found)]


def _latest_by_device(series: Iterable[Series], first: float, op: bool
                      ) -> dict[str | None, dict[str, float]]:
    """``latest_by(fresh(...), "device")`` (points at or after ``first``), with ``op`` for
    each value of the ``op`` label at once (a query per op walked a host's series again),
    without it under None."""
    newest: dict[str | None, dict[str, tuple[float, float]]] = {}
    for s in series:
        times, values = s.times, s.values
        if not times or times[-1] < first or not values:
            continue
        t = times[-1]
        labels = s.labels
        group = newest.setdefault(labels.get("op") if op else None, {})
        key = labels.get("device", "")
        known = group.get(key)
        if known is None or t >= known[0]:
            group[key] = (t, values[-1])
    return {k: {name: v for name, (_t, v) in group.items()} for k, group in newest.items()}


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
    io_ops, latency_ops, metrics, net_has_sum = index_of(store).kept(
        ("host series", host), lambda: _host_series(store, host))
    return HostFigures(
        name=host, state=view.state, reason=view.reason, stale=stale, iops=iops,
        bandwidth=bandwidth, latency={op: v for op, v in lat.items() if not v.empty},
        devices=devices(store, host, now), net_send=send, net_receive=receive,
        retransmits=retr, memory=memory, scores=scores,
        cpu_busy=None if idle is None else max(0.0, 1.0 - idle), warnings=view.warnings,
        tools=tuple(view.tools), io_ops=io_ops, latency_ops=latency_ops, metrics=metrics,
        net_has_sum=net_has_sum,
        final=final, net_final=net_final)


def _host_series(store: LiveStore, host: str
                 ) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str], bool]:
    """What ``host``'s series are, as ``HostFigures`` says it (io and latency ops, metrics,
    whether iperf gives a sum stream): the same until a series is added to the store."""
    index = index_of(store)
    seen_io = {s.labels.get("op", "") for m in ("iops", "bandwidth_bytes")
               for s in index.find(m, host)}
    seen_lat = {s.labels.get("op", "") for m in ("latency_seconds", "latency_mean_seconds")
                for s in index.find(m, host)}
    return (tuple(op for op in OPS if op in seen_io),
            tuple(op for op in OPS if op in seen_lat and op in seen_io),
            frozenset(index.metrics(host)),
            any(s.labels.get("stream") == "sum" for s in index.find("net_bandwidth_bytes", host)))


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
