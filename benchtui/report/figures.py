"""A report row's figures, taken from per-series statistics over the row's window.

The rules are the console's (``store/series_rules.py``, ``store/figures.py``), applied to a
window instead of the newest point: IOPS and bandwidth are summed over a tool's jobs per op;
latency percentiles are quantiles of the merged per-interval histograms (every job, and for
a fleet row every host), never averages of percentiles; tools without histograms fall back
to their own percentiles (the worst job's), then to the mean. A window's mean is the mean of
the per-interval values in it, each weighted by the time it covered (``SeriesStats``); a
run's figure is the tool's own end-of-run figure where it printed one (``io_figures``'
``prefer_summary``, the report's default).

Everything here is plain numbers in base units; formats turn them into words.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from benchtui.model.fio_buckets import FIO_PLAT_BITS
from benchtui.model.histogram import LatencyHistogram
from benchtui.report.model import Row, Value
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import SeriesStats
from benchtui.store.series_rules import latency_measure_ok, rate_parts

#: The latency percentiles a report gives (p50, p99, p99.9), as metric name suffixes.
QUANTILES = ((0.5, "p50"), (0.99, "p99"), (0.999, "p999"))
#: fio's op names; ``total`` for tools that do not split reads and writes.
OPS = ("read", "write", "trim", "total")
INTERVAL, SUMMARY = "interval", "summary"
#: Every metric a row's figures are made of (the functions below, and ``steady.py``'s
#: IOPS): what a report reads of a run (a host's iostat alone has ~80 other series).
METRICS = frozenset({
    "iops", "bandwidth_bytes", "latency_histogram", "latency_seconds", "latency_mean_seconds",
    "disk_util_ratio", "disk_await_seconds", "disk_queue_depth", "net_bandwidth_bytes",
    "net_retransmits", "mem_bandwidth_bytes", "benchmark_score"})

Stats = Mapping[SeriesDef, SeriesStats]


def _labels(d: SeriesDef) -> dict[str, str]:
    return dict(d.labels)


def _job_series(stats: Stats, metric: str, kind: str) -> dict[str, list[tuple[SeriesDef,
                                                                            SeriesStats]]]:
    """op -> the series of ``metric`` to add up: a tool's jobs; fio's whole-run lines
    (``job="all"``) only when there is no per-job series for that op; ``group N`` lines
    never (``store.series_rules.rate_parts``: the console's rule)."""
    found = [(d, st) for d, st in stats.items()
             if d.metric == metric and d.kind == kind and st.count]
    return {op: parts for (_host, op), parts in rate_parts(found, lambda x: dict(x[0].labels))
            .items()}


def summed(stats: Stats, metric: str, kind: str) -> dict[str, float]:
    """op -> the sum over jobs of each job's mean over the window (IOPS, bandwidth)."""
    return {op: sum(st.mean for _d, st in series)
            for op, series in _job_series(stats, metric, kind).items() if series}


def merged_histograms(stats: Stats, kind: str = INTERVAL) -> dict[str, LatencyHistogram]:
    """op -> every job's latency histograms over the window added up (clat, fio's own
    percentile measure, where a tool gives several)."""
    by_measure: dict[tuple[str, str], LatencyHistogram] = {}
    for d, st in stats.items():
        if d.metric != "latency_histogram" or d.kind != kind or st.histogram is None:
            continue
        labels = _labels(d)
        key = (labels.get("op", "total"), labels.get("measure", "clat"))
        h = by_measure.get(key)
        if h is None:
            h = by_measure[key] = LatencyHistogram()
        h.merge(st.histogram)
    out: dict[str, LatencyHistogram] = {}
    # clat first (fio's own percentile measure), then whatever else the tool gives
    for (op, _measure), h in sorted(by_measure.items(), key=lambda kv: kv[0][1] != "clat"):
        if op not in out and h.total():
            out[op] = h
    return out


def _latency_measure_ok(labels: Mapping[str, str]) -> bool:
    return latency_measure_ok(labels)


def percentiles(stats: Stats, kind: str) -> dict[str, dict[str, float]]:
    """op -> {p50, p99, p999} from the tool's own percentile series: the worst job's (a
    summary's run percentiles; for intervals, the mean of the per-interval percentiles)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    wanted = {str(q): name for q, name in QUANTILES}
    for d, st in stats.items():
        if d.metric != "latency_seconds" or d.kind != kind or not st.count:
            continue
        labels = _labels(d)
        name = wanted.get(labels.get("quantile", ""))
        if name is None or not _latency_measure_ok(labels):
            continue
        op = labels.get("op", "total")
        out[op][name] = max(out[op].get(name, 0.0), st.mean)
    return dict(out)


def mean_latency(stats: Stats, kind: str) -> dict[str, float]:
    """op -> the mean latency (clat where the tool gives it, else lat), the jobs' means
    weighted by their IOPS over the window when known."""
    iops = {(op, _labels(d).get("job", "")): st.mean
            for op, series in _job_series(stats, "iops", kind).items() for d, st in series}
    weighted: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for d, st in stats.items():
        if d.metric != "latency_mean_seconds" or d.kind != kind or not st.count:
            continue
        labels = _labels(d)
        measure = labels.get("measure", "lat")
        if measure not in ("clat", "lat"):
            continue
        op = labels.get("op", "total")
        w = iops.get((op, labels.get("job", "")), 1.0) or 1.0
        acc = weighted[op].setdefault(measure, [0.0, 0.0])
        acc[0] += st.mean * w
        acc[1] += w
    out: dict[str, float] = {}
    for op, measures in weighted.items():
        pair = measures.get("clat") or measures.get("lat")
        if pair and pair[1]:
            out[op] = pair[0] / pair[1]
    return out


@dataclass(frozen=True, slots=True)
class IoFigures:
    """A window's I/O figures per op, and where the latency came from."""

    iops: Mapping[str, float]
    bandwidth: Mapping[str, float]
    mean: Mapping[str, float]
    #: op -> {p50, p99, p999}
    quantiles: Mapping[str, Mapping[str, float]]
    #: op -> "histogram" | "summary" | "percentiles" | "mean"
    latency_source: Mapping[str, str]
    #: op -> merged histogram (what a fleet row merges)
    histograms: Mapping[str, LatencyHistogram]
    #: "interval" or "summary": where IOPS and bandwidth came from.
    source: str


def io_figures(window: Stats, summary: Stats | None, *, prefer_summary: bool) -> IoFigures:
    """IOPS, bandwidth and latency of one host's window (``summary``: the run's end-of-run
    figures, or None when not read)."""
    sources = [(SUMMARY, summary), (INTERVAL, window)] if prefer_summary \
        else [(INTERVAL, window), (SUMMARY, summary)]
    iops: dict[str, float] = {}
    bandwidth: dict[str, float] = {}
    source = ""
    for kind, stats in sources:
        if stats is None:
            continue
        iops, bandwidth = summed(stats, "iops", kind), summed(stats, "bandwidth_bytes", kind)
        if iops or bandwidth:
            source = kind
            break
    hists = merged_histograms(window)
    quantiles: dict[str, dict[str, float]] = {}
    lat_source: dict[str, str] = {}
    for op, h in hists.items():
        qs = h.quantiles([q for q, _ in QUANTILES])
        quantiles[op] = {name: qs[q] for q, name in QUANTILES if q in qs}
        lat_source[op] = "histogram"
    for kind, stats, label in ((SUMMARY, summary, "summary"),
                               (INTERVAL, window, "percentiles")):
        if stats is None:
            continue
        for op, values in percentiles(stats, kind).items():
            if op not in quantiles and values:
                quantiles[op] = values
                lat_source[op] = label
    mean: dict[str, float] = {}
    for kind, stats in sources:
        if stats is not None:
            for op, v in mean_latency(stats, kind).items():
                mean.setdefault(op, v)
    for op in mean:
        lat_source.setdefault(op, "mean")
    for op, h in hists.items():
        if op not in mean:
            m = h.mean()
            if m is not None:
                mean[op] = m
    return IoFigures(iops, bandwidth, mean, quantiles, lat_source, hists, source)


def io_values(f: IoFigures) -> list[Value]:
    """The I/O figures as report values (ops in fio's order)."""
    out: list[Value] = []
    for op in OPS:
        if op in f.iops:
            out.append(Value("iops", op, f.iops[op], "ops/s", source=f.source))
        if op in f.bandwidth:
            out.append(Value("bandwidth_bytes", op, f.bandwidth[op], "B/s", source=f.source))
        if op in f.mean:
            out.append(Value("latency_mean_seconds", op, f.mean[op], "s",
                             source=f.latency_source.get(op, "")))
        for name, v in f.quantiles.get(op, {}).items():
            out.append(Value(f"latency_{name}_seconds", op, v, "s",
                             source=f.latency_source.get(op, "")))
    return out


def fleet_io(parts: Iterable[IoFigures]) -> IoFigures:
    """A step's fleet row from its hosts' rows: IOPS and bandwidth add up, percentiles are
    quantiles of the hosts' histograms merged (exact), the mean latency is weighted by IOPS.
    Hosts without histograms give no fleet percentiles (averaging percentiles would lie)."""
    parts = list(parts)
    iops: dict[str, float] = defaultdict(float)
    bandwidth: dict[str, float] = defaultdict(float)
    weighted: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    hists: dict[str, list[LatencyHistogram]] = defaultdict(list)
    for p in parts:
        for op, v in p.iops.items():
            iops[op] += v
        for op, v in p.bandwidth.items():
            bandwidth[op] += v
        for op, v in p.mean.items():
            w = p.iops.get(op) or 1.0
            weighted[op][0] += v * w
            weighted[op][1] += w
        for op, h in p.histograms.items():
            hists[op].append(h)
    quantiles: dict[str, dict[str, float]] = {}
    merged: dict[str, LatencyHistogram] = {}
    lat_source: dict[str, str] = {}
    for op, hs in hists.items():
        if len(hs) != sum(1 for p in parts if op in p.iops or op in p.bandwidth):
            continue  # a host without histograms: no honest fleet percentile
        h = LatencyHistogram.merged(hs)
        merged[op] = h
        qs = h.quantiles([q for q, _ in QUANTILES])
        quantiles[op] = {name: qs[q] for q, name in QUANTILES if q in qs}
        lat_source[op] = "histogram"
    mean = {op: s / w for op, (s, w) in weighted.items() if w}
    for op in mean:
        lat_source.setdefault(op, "mean")
    sources = {p.source for p in parts if p.source}
    return IoFigures(dict(iops), dict(bandwidth), mean, quantiles, lat_source, merged,
                     sources.pop() if len(sources) == 1 else "mixed" if sources else "")


def device_values(window: Stats) -> list[Value]:
    """Per device: utilisation, await per direction and queue depth, means over the window
    (``item`` names the device)."""
    out: list[Value] = []
    by_device: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    for d, st in window.items():
        if d.kind != INTERVAL or not st.count:
            continue
        labels = _labels(d)
        device = labels.get("device")
        if device is None:
            continue
        if d.metric == "disk_util_ratio":
            by_device[device][("disk_util_ratio", "")] = st.mean
        elif d.metric == "disk_await_seconds":
            by_device[device][("disk_await_seconds", labels.get("op", "total"))] = st.mean
        elif d.metric == "disk_queue_depth":
            by_device[device][("disk_queue_depth", "")] = st.mean
    units = {"disk_util_ratio": "ratio", "disk_await_seconds": "s", "disk_queue_depth": "count"}
    for device in sorted(by_device):
        for (metric, op), v in sorted(by_device[device].items()):
            out.append(Value(metric, op, v, units[metric], item=device))
    return out


def _net_by_port(stats: Stats, metric: str, kind: str, direction: str | None
                 ) -> dict[str, list[SeriesStats]]:
    """The series of a network figure to add up, by the server's port of their test (the
    ``port`` label; "" without one): each test's ``sum`` stream where iperf printed one,
    else its streams."""
    by_port: dict[str, list[tuple[SeriesDef, SeriesStats]]] = defaultdict(list)
    for d, st in stats.items():
        if d.metric == metric and d.kind == kind and st.count and (
                direction is None or _labels(d).get("direction") == direction):
            by_port[_labels(d).get("port", "")].append((d, st))
    out = {}
    for port, found in by_port.items():
        sums = [st for d, st in found if _labels(d).get("stream") == "sum"]
        out[port] = sums or [st for d, st in found
                             if not _labels(d).get("stream", "").startswith("sum")]
    return {port: series for port, series in out.items() if series}


def other_values(window: Stats, summary: Stats | None, *, prefer_summary: bool,
                 clients: Mapping[str, str] | None = None) -> list[Value]:
    """Network (iperf3, iperf), memory (mbw) and score (UnixBench) figures: the tool's own
    end-of-run figures where it printed them and they are preferred, else window means.
    A host that ran several tests at once (an iperf3 server with a server per client) has
    its figures added up, and each test's apart, its ``item`` the client (``clients``:
    port -> client host; else ``port N``)."""
    out: list[Value] = []
    kinds = [(SUMMARY, summary), (INTERVAL, window)] if prefer_summary \
        else [(INTERVAL, window), (SUMMARY, summary)]
    # each end of a connection reports what it measured itself: a client its send (its
    # summary's "receiver" line is the server's figure), a server its receive; a host
    # without per-second lines (an imported report) keeps its summary's directions
    own = {d for d in ("send", "receive")
           if _net_by_port(window, "net_bandwidth_bytes", INTERVAL, d)}
    for direction in ("send", "receive"):
        if own and direction not in own:
            continue
        for kind, stats in kinds:
            if stats is None:
                continue
            by_port = {port: sum(s.mean for s in series) for port, series in
                       _net_by_port(stats, "net_bandwidth_bytes", kind, direction).items()}
            if by_port:
                out.append(Value("net_bandwidth_bytes", direction, sum(by_port.values()),
                                 "B/s", source=kind))
                if len(by_port) > 1:
                    out += [Value("net_bandwidth_bytes", direction, v, "B/s",
                                  item=(clients or {}).get(port) or f"port {port}",
                                  source=kind) for port, v in sorted(by_port.items())]
                break
    retransmits = _net_by_port(window, "net_retransmits", INTERVAL, None)
    if retransmits:
        out.append(Value("net_retransmits", "", sum(s.total for series in retransmits.values()
                                                    for s in series), "count",
                         source=INTERVAL))
    # memory and scores: the tool's summary (mbw's AVG, UnixBench's index) before the window
    for metric, label, unit in (("mem_bandwidth_bytes", "method", "B/s"),
                                ("benchmark_score", "test", "")):
        found: dict[str, tuple[float, str]] = {}
        for kind, stats in ((SUMMARY, summary), (INTERVAL, window)):
            if stats is None:
                continue
            for d, st in stats.items():
                if d.metric == metric and d.kind == kind and st.count:
                    labels = _labels(d)
                    key = labels.get(label, "")
                    if metric == "benchmark_score" and labels.get("copies"):
                        key = f"{key} ({labels['copies']} copies)"
                    found.setdefault(key, (st.mean if kind == INTERVAL else st.maximum
                                           if metric == "benchmark_score" else st.mean,
                                           kind))
        for key in sorted(found):
            v, kind = found[key]
            out.append(Value(metric, "", v, unit or "score", item=key, source=kind))
    return out


def fleet_net(rows: Iterable[Row]) -> list[Value]:
    """A step's fleet network figures from its hosts' rows: each direction's figures added
    up over the hosts (each host's own end: the clients' sends, the servers' receives),
    and their retransmits."""
    rows = list(rows)
    out = []
    for metric, op, unit in (("net_bandwidth_bytes", "send", "B/s"),
                             ("net_bandwidth_bytes", "receive", "B/s"),
                             ("net_retransmits", "", "count")):
        found = [v for r in rows for v in (r.get(metric, op),) if v is not None]
        if found:
            sources = {v.source for v in found}
            out.append(Value(metric, op, sum(v.value for v in found), unit,
                             source=sources.pop() if len(sources) == 1 else "mixed"))
    return out


def bucket_width(bits: int) -> float:
    """The relative width of a latency bucket at ``bits`` sub-bucket bits per power of two
    (fio's scheme, ``model.fio_buckets``): a bucket at the bottom of its power of two spans
    2^-bits of its value, so a percentile read from such histograms moves in steps of up to
    that much (6 bits, fio's own: 1.6%; benchtui's default 4: 6.25%)."""
    return 2.0 ** -bits


def resolution_sentence(bits: int | None) -> str:
    """What a report says of a session's histograms: their resolution."""
    b = FIO_PLAT_BITS if bits is None else bits
    width = bucket_width(b)
    return (f"latency histograms kept at `histogram_bits` {b}: a bucket is up to "
            f"{width:.2%} wide, so percentiles move in steps of up to {width:.2%}")


def sources_sentences(rows: Iterable[Row]) -> list[str]:
    """Which figures are fio's (a tool's own end-of-run figures) and which are benchtui's
    (computed from the per-second figures), as the rows' values say (``Value.source``)."""
    io: set[str] = set()
    lat: set[str] = set()
    for row in rows:
        for v in row.values:
            if v.metric in ("iops", "bandwidth_bytes", "net_bandwidth_bytes"):
                io.add(v.source)
            elif v.metric.startswith("latency_p"):
                lat.add(v.source)
    out: list[str] = []
    if SUMMARY in io:
        out.append("IOPS and bandwidth: **the tool's own** end-of-run figures (fio's "
                   "`read: IOPS=...`, over its whole run; `source` summary in CSV/JSON)")
    if INTERVAL in io:
        out.append(("where a tool printed none, " if SUMMARY in io else "IOPS and bandwidth: ")
                   + "**benchtui's**: means of the per-second figures over the window, each "
                   "interval weighted by the time it covered (`source` interval)")
    if "histogram" in lat:
        out.append("latency percentiles: **benchtui's**: quantiles of the merged per-second "
                   "histograms over the window (`source` histogram)")
    if lat & {"summary", "percentiles"}:
        out.append("latency percentiles without histograms: **the tool's own** (the worst "
                   "job's; `source` summary or percentiles)")
    return out


def coarse_threshold_warnings(percent: float, metrics: Iterable[str],
                              bits: Mapping[str, int | None]) -> list[str]:
    """A ``--fail-above`` threshold on latency percentiles finer than the sessions'
    histograms can tell (``percent`` of the baseline, e.g. 105): one sentence per
    resolution (``bits``: session -> its ``histogram_bits``)."""
    if not any(m in ("latency_p50_seconds", "latency_p99_seconds", "latency_p999_seconds")
               for m in metrics):
        return []
    margin = abs(percent - 100.0) / 100.0
    out = []
    for b in sorted({FIO_PLAT_BITS if v is None else v for v in bits.values()}):
        width = bucket_width(b)
        if margin < width:
            names = ", ".join(n for n, v in bits.items()
                              if (FIO_PLAT_BITS if v is None else v) == b)
            way = (f"record with --histogram-bits {b + 1} or more, or allow more"
                   if b < FIO_PLAT_BITS else "fio's own resolution, the finest there is: "
                   "allow more")
            out.append(f"{percent:g}% is finer than the latency histograms of {names} can "
                       f"tell: at histogram_bits {b} a bucket is up to {width:.2%} wide, so a "
                       f"percentile moves in steps of up to {width:.2%} ({way})")
    return out
