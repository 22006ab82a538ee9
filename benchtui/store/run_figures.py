"""A run's own figures: what the tool printed at its end (fio's ``read: IOPS=...``, iperf3's
summary lines, mbw's ``AVG``), shown once the run is over instead of dashes, and in the
detail view's Jobs tab. A run's figure is the tool's own where it printed one; of the last
step only (a step that has started shows none of the previous one's).
"""

from __future__ import annotations

from collections import defaultdict

from benchtui.model.sample import Sample
from benchtui.store.fleet import FleetState
from benchtui.store.series_rules import OPS, Latency, _ops, index_of, latency_measure_ok, rate_parts


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


#: A job's figures: (step, job, op) -> {"iops", "bw", "mean", "0.5", "0.99", "0.999"}.
JobKey = tuple[str, str, str]


def job_figures(state: FleetState, host: str) -> dict[JobKey, tuple[dict[str, float], bool]]:
    """Every (step, job, op) of ``host``: its figures and whether they are the tool's own
    end-of-run figures (True: fio's ``read: IOPS=...`` of the finished run) rather than its
    newest interval's. A run's figure is the tool's own where it printed one. A network
    tool's tests are jobs too: (step, ``port 5201``, send or receive) and their rate (an
    iperf3 server of several clients has a test per client, each on its port)."""
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
    # a network tool's tests (an iperf3 server has one per client, each on its port)
    for key, rate in _net_tests([(s.labels, s.last) for s in index.find(
            "net_bandwidth_bytes", host) if s.last is not None]).items():
        found[key] = {"bw": rate}
    net_ends = _net_tests([(s.labels, s.value) for s in state.store.summaries
                           if s.host == host and s.metric == "net_bandwidth_bytes"])
    for key, rate in net_ends.items():
        found[key] = {"bw": rate}
        final.add(key)
    return {k: (v, k in final) for k, v in found.items()}


def _net_tests(rates: list[tuple[dict[str, str], float]]) -> dict[JobKey, float]:
    """(step, ``port N`` (the test's server port; else ``stream S``), direction) -> its rate:
    the test's ``sum`` stream where iperf printed one, else its streams added up."""
    by_test: dict[JobKey, list[tuple[str, float]]] = defaultdict(list)
    for labels, value in rates:
        port = labels.get("port")
        test = f"port {port}" if port else "streams"
        by_test[(labels.get("step", "-"), test, labels.get("direction", "-"))].append(
            (labels.get("stream", ""), value))
    out = {}
    for key, found in by_test.items():
        sums = [v for stream, v in found if stream == "sum"]
        rest = [v for stream, v in found if not stream.startswith("sum")]
        if sums or rest:
            out[key] = sum(sums or rest)
    return out
