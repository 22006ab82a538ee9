"""The per-second series of a report's runs, for plots: IOPS, bandwidth and latency
percentiles of each host over its run, x in seconds since its tool started on that host
(``window.py``: its first interval's start).

They are decoded from the session's samples of the run (``SessionReader.samples`` by host,
metric and the run's window, keeping the samples labelled with the run's step label), and
follow the console's rules (``store/series_rules.py``, ``store/figures.py``) point by point,
as the report's tables follow them over a window (``figures.py``):

- IOPS and bandwidth per op: the jobs' values of one interval added up (fio's whole-run
  ``job="all"`` lines only when there is no per-job series; ``group N`` lines never:
  ``store.series_rules.rate_parts``); a partial interval (``Sample.duration``: fio's last,
  after its last status dump) is a point at its own rate, marked as partial in the plots,
  and weighs its duration where points are averaged down;
- latency per op: p50, p99 and p99.9 of the interval's histograms merged across the jobs
  (clat, fio's own measure, where a tool gives several); without histograms, the tool's own
  percentile series, the worst job's; without those, the worst job's mean.

A line longer than ``MAX_POINTS`` is shortened by averaging consecutive points in equal
buckets (a 55-minute step at one point a second is 3300 points: about two per bucket).

Which runs are plotted (``plot_groups``): the rows the report's tables show. A step run
once is one plot; a repeated step under ``select = "all"`` is one plot per run; under
``median`` one plot of each host's median of its runs, by the tables' rule second by second
(``median_lines``: each line's point of a second is the median of the runs' points of that
second, counted from each run's own start); under ``best`` one plot of each host's best run
(hosts may differ in which run that is: the legend says it).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchtui.model.histogram import LatencyHistogram, merged_quantiles
from benchtui.model.sample import Sample
from benchtui.report.figures import QUANTILES
from benchtui.report.lines import Lines, median_lines, together
from benchtui.report.model import Report, Row
from benchtui.session.compare import FLEET
from benchtui.store.recording import SessionReader
from benchtui.store.recording.histcodec import RecordedHistogram
from benchtui.store.series_rules import job_kind, latency_measure_ok

#: Points per line above which a line is averaged down to about this many.
MAX_POINTS = 2000
#: The sample metrics a plot reads: first these (every run) ...
METRICS = ("iops", "bandwidth_bytes", "latency_histogram", "net_bandwidth_bytes")
#: ... then these, for the runs that have an op without histograms (latency from the tool's
#: own percentiles, else its means): fio's json+ gives 22 samples a job and second, of which
#: 16 are these, and reading them for every run of a thousand hosts doubled the decoding.
FALLBACK_METRICS = ("latency_seconds", "latency_mean_seconds")
#: Seconds a run's last samples may arrive after its run_end event (as the tables' summary).
_SLACK = 1.0
#: An interval's histograms are merged once samples this much newer have arrived (jobs of
#: one interval arrive together; this only bounds what is held).
_LAG = 2.0
#: The ops a run's I/O figures are drawn for, in order.
OPS = ("read", "write", "trim", "total")
_QUANTILE_NAMES = {str(q): name for q, name in QUANTILES}


@dataclass(frozen=True, slots=True)
class Points:
    """One line: seconds since the tool started, and values in base units."""

    times: tuple[float, ...]
    values: tuple[float, ...]
    #: Per point, the seconds a partial interval covered (None: a nominal one); empty when
    #: every point is nominal (and after averaging down).
    durations: tuple[float | None, ...] = ()

    def __len__(self) -> int:
        return len(self.times)

    def partial(self) -> tuple[list[float], list[float]]:
        """The times and values of the points that cover a partial interval."""
        picked = [(t, v) for t, v, d in zip(self.times, self.values, self.durations,
                                             strict=False) if d is not None]
        return [t for t, _ in picked], [v for _, v in picked]


@dataclass(slots=True)
class RunSeries:
    """One host's run of a step (or the median of its runs), per second."""

    row: Row
    #: When its x = 0 is (epoch seconds): when its tool started (its first run's, for the
    #: median of several runs: each run is counted from its own tool's start).
    origin: float
    #: op -> IOPS (ops/s), and bandwidth (bytes/s)
    iops: dict[str, Points] = field(default_factory=dict)
    bandwidth: dict[str, Points] = field(default_factory=dict)
    #: op -> {"p50", "p99", "p999"} (or {"mean"}) -> seconds
    latency: dict[str, dict[str, Points]] = field(default_factory=dict)
    #: op -> "histogram" | "percentiles" | "mean"
    latency_source: dict[str, str] = field(default_factory=dict)
    #: direction ("send", "receive") -> network bandwidth (bytes/s): iperf3's [SUM] line
    #: where it prints one, else its streams added up (the tables' rule)
    net: dict[str, Points] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return self.row.host

    @property
    def window_start(self) -> float:
        """Where the tables' window begins, in seconds since the tool started (the end of
        the ramp-up left out of the tables)."""
        return max(0.0, self.row.t0 - self.origin)

    @property
    def seconds(self) -> float:
        """How long its tool ran, as far as its figures go (its last point's time)."""
        ends = [p.times[-1] for p in self._lines() if p.times]
        return max(ends) if ends else max(0.0, self.row.t1 - self.origin)

    def _lines(self) -> list[Points]:
        return [*self.iops.values(), *self.bandwidth.values(), *self.net.values(),
                *(p for by in self.latency.values() for p in by.values())]

    @property
    def empty(self) -> bool:
        return not (self.iops or self.bandwidth or self.latency or self.net)

    @property
    def longest(self) -> int:
        """The most points any of its lines has (a run too short to plot has < 3)."""
        return max((len(p) for p in self._lines()), default=0)


def downsample(times: Sequence[float], values: Sequence[float], limit: int = MAX_POINTS,
               durations: Sequence[float | None] | None = None) -> Points:
    """At most about ``limit`` points: consecutive points averaged in buckets of equal size,
    each weighted by the time it covered (``durations``: a partial interval's seconds,
    None for a nominal one, which counts as the line's nominal interval)."""
    n = len(times)
    if durations is None or not any(d is not None for d in durations):
        durations = None
    if n <= limit:
        return Points(tuple(times), tuple(values),
                      tuple(durations) if durations is not None else ())
    nominal = _nominal(times, durations)
    k = math.ceil(n / limit)
    out_t: list[float] = []
    out_v: list[float] = []
    for i in range(0, n, k):
        part_t, part_v = times[i:i + k], values[i:i + k]
        if durations is None:
            weights = [1.0] * len(part_v)
        else:
            weights = [nominal if d is None else d for d in durations[i:i + k]]
        w = sum(weights) or 1.0
        out_t.append(sum(part_t) / len(part_t))
        out_v.append(sum(v * x for v, x in zip(part_v, weights, strict=True)) / w)
    return Points(tuple(out_t), tuple(out_v))


def _nominal(times: Sequence[float], durations: Sequence[float | None] | None) -> float:
    """A line's nominal interval: the median spacing of its nominal points (1 s without)."""
    gaps = sorted(b - a for a, b, d in zip(times, times[1:], (durations or [None] * len(times))[1:],
                                          strict=False) if d is None and b > a)
    return gaps[len(gaps) // 2] if gaps else 1.0


def points_of(by_t: dict[float, float], t0: float,
            durations: dict[float, float] | None = None) -> Points:
    keys = sorted(by_t)
    found = durations or {}
    return downsample([t - t0 for t in keys], [by_t[t] for t in keys],
                      durations=[found.get(t) for t in keys] if found else None)


class _Accumulator:
    """One run's samples, reduced interval by interval as they are read."""

    def __init__(self) -> None:
        #: (metric, op, whole) -> t -> sum over jobs (whole: fio's job="all" lines)
        self.sums: dict[tuple[str, str, bool], dict[float, float]] = defaultdict(dict)
        #: (op, measure) -> t -> the jobs' histograms of that interval, not merged yet
        self.open: dict[tuple[str, str], dict[float, list[LatencyHistogram]]] = \
            defaultdict(dict)
        #: (op, measure) -> name -> t -> seconds
        self.quantiles: dict[tuple[str, str], dict[str, dict[float, float]]] = \
            defaultdict(lambda: defaultdict(dict))
        #: (op, name) -> t -> the worst job's percentile; op -> t -> the worst job's mean
        self.percentiles: dict[tuple[str, str], dict[float, float]] = defaultdict(dict)
        self.means: dict[str, dict[float, float]] = defaultdict(dict)
        #: (metric, op, whole) -> t -> seconds the interval covered, for partial ones
        self.durations: dict[tuple[str, str, bool], dict[float, float]] = defaultdict(dict)
        #: (direction, port, sum stream) -> (t, elapsed) -> the streams' rate added up, and
        #: the seconds of partial intervals: a network test's (an iperf3 server runs one
        #: per client)
        self.net: dict[tuple[str, str, bool], dict[tuple[float, float], float]] = \
            defaultdict(dict)
        self.net_durations: dict[tuple[str, str, bool], dict[tuple[float, float], float]] = \
            defaultdict(dict)
        self.newest = -math.inf

    def feed(self, s: Sample) -> None:
        t = s.t
        if t is None or s.kind != "interval":
            return
        labels = s.labels
        op = labels.get("op", "total")
        metric = s.metric
        if metric in ("iops", "bandwidth_bytes"):
            kind = job_kind(labels)  # the console's rule (``store.series_rules.rate_parts``)
            if kind == "group":
                return
            rate = (metric, op, kind == "whole")
            acc = self.sums[rate]
            acc[t] = acc.get(t, 0.0) + s.value
            if s.duration is not None:  # a partial interval: drawn as one, weighted by it
                self.durations[rate][t] = s.duration
        elif metric == "latency_histogram":
            if s.histogram is not None:
                key = (op, labels.get("measure", "clat"))
                self.open[key].setdefault(t, []).append(s.histogram)
                if t > self.newest:
                    self.newest = t
                    self._merge_older_than(t - _LAG)
        elif metric == "latency_seconds":
            name = _QUANTILE_NAMES.get(labels.get("quantile", ""))
            if name is not None and latency_measure_ok(labels):
                acc = self.percentiles[(op, name)]
                acc[t] = max(acc.get(t, 0.0), s.value)
        elif metric == "net_bandwidth_bytes":
            stream = labels.get("stream", "")
            if stream.startswith("sum") and stream != "sum":
                return
            test = (labels.get("direction", "total"), labels.get("port", ""), stream == "sum")
            # two intervals of one test may arrive at once (iperf3's last whole one and its
            # tail, 4.00-4.03 sec): each at its own end, by the tool's elapsed seconds
            at = (t, s.elapsed if s.elapsed is not None else 0.0)
            rates = self.net[test]
            rates[at] = rates.get(at, 0.0) + s.value
            if s.duration is not None:
                self.net_durations[test][at] = s.duration
        elif metric == "latency_mean_seconds" and latency_measure_ok(labels, "lat"):
            acc = self.means[op]
            acc[t] = max(acc.get(t, 0.0), s.value)

    def _merge_older_than(self, limit: float) -> None:
        qs = [q for q, _ in QUANTILES]
        for key, by_t in self.open.items():
            for t in [t for t in by_t if t < limit]:
                found = merged_quantiles(by_t.pop(t), qs)
                for q, name in QUANTILES:
                    if q in found:
                        self.quantiles[key][name][t] = found[q]

    def lacks_histograms(self) -> bool:
        """Whether an op of the run has no latency histogram (its latency then comes from
        the tool's percentiles or means: ``FALLBACK_METRICS``)."""
        with_histograms = {op for op, _measure in [*self.open, *self.quantiles]}
        ops = {op for (_metric, op, _whole) in self.sums}
        return not with_histograms or not ops <= with_histograms

    def lines(self) -> Lines:
        """The run's lines, at the samples' own times (epoch seconds)."""
        self._merge_older_than(math.inf)
        out = Lines()
        for metric, kind in (("iops", "iops"), ("bandwidth_bytes", "bandwidth")):
            for op in OPS:
                whole = not self.sums.get((metric, op, False))
                by_t = self.sums.get((metric, op, whole))
                if by_t:
                    out.add((kind, op), by_t, self.durations.get((metric, op, whole)))
        for direction in ("send", "receive"):
            tests = []
            for port in dict.fromkeys(p for d, p, _w in self.net if d == direction):
                whole = (direction, port, True) in self.net
                tests.append(_at_their_ends(self.net[(direction, port, whole)],
                                            self.net_durations.get((direction, port, whole),
                                                                   {})))
            if tests:
                out.add(("net", direction), *together(tests))
        for op in OPS:
            measures = sorted((m for o, m in self.quantiles if o == op),
                              key=lambda m: m != "clat")
            if measures:
                found = self.quantiles[(op, measures[0])]
                for _q, name in QUANTILES:
                    if found.get(name):
                        out.add(("latency", op, name), found[name])
                out.latency_source[op] = "histogram"
            elif any((op, name) in self.percentiles for _q, name in QUANTILES):
                for _q, name in QUANTILES:
                    if (op, name) in self.percentiles:
                        out.add(("latency", op, name), self.percentiles[(op, name)])
                out.latency_source[op] = "percentiles"
            elif self.means.get(op):
                out.add(("latency", op, "mean"), self.means[op])
                out.latency_source[op] = "mean"
        return out


def _at_their_ends(by_at: dict[tuple[float, float], float],
                   durations: dict[tuple[float, float], float]
                   ) -> tuple[dict[float, float], dict[float, float]]:
    """A test's points by (arrival, elapsed) at their own ends: of the intervals that
    arrived together, each before the last by its elapsed seconds less the last's."""
    last: dict[float, float] = {}
    for t, elapsed in by_at:
        last[t] = max(last.get(t, elapsed), elapsed)

    def end(at: tuple[float, float]) -> float:
        return at[0] - (last[at[0]] - at[1])
    return ({end(at): v for at, v in by_at.items()},
            {end(at): d for at, d in durations.items()})


def _series(lines: Lines, row: Row, origin: float) -> RunSeries:
    """A run's (or runs') lines as the plots take them: counted from ``origin``, long ones
    averaged down."""
    out = RunSeries(row, origin, latency_source=dict(lines.latency_source))
    for key, by_t in lines.points.items():
        points = points_of(by_t, origin, lines.durations.get(key, {}))
        if key[0] == "latency":
            out.latency.setdefault(key[1], {})[key[2]] = points
        else:
            {"iops": out.iops, "bandwidth": out.bandwidth, "net": out.net}[key[0]][
                key[1]] = points
    return out


def read_window(reader: SessionReader, rows: Sequence[Row]) -> tuple[float, float]:
    """The times a read of these rows' runs covers: from their tools' first start to
    their last end (and the summaries that follow it)."""
    t0 = min(start for row in rows for start in row.runs.values())
    t1 = max(min(row.t1, reader.end) for row in rows) + _SLACK
    return t0, t1


def running(histogram: LatencyHistogram) -> LatencyHistogram:
    """A recorded histogram as running sums (decoded in C-level passes, and what
    ``merged_quantiles`` searches without merging); any other as it is."""
    return histogram.with_running_sums() if isinstance(histogram, RecordedHistogram) \
        else histogram


def run_series(reader: SessionReader, rows: Sequence[Row], *,
               also: Callable[[Sample], None] | None = None) -> list[RunSeries]:
    """The series of each row (of one run, or the median of its runs: ``Row.runs``),
    decoding the runs' samples once (and the metrics of ``FALLBACK_METRICS`` again for the
    runs that need them); ``also`` is given each sample of ``METRICS`` read for a run (the
    fleet's latency is computed on the way: ``fleet_series.FleetLatency``)."""
    rows = [r for r in rows if r.runs]
    if not rows:
        return []
    accs = {(row.host, label): _Accumulator() for row in rows for label in row.runs}
    t0, t1 = read_window(reader, rows)
    for s in reader.samples(hosts={row.host for row in rows}, metrics=METRICS, t0=t0, t1=t1):
        acc = accs.get((s.host, s.labels.get("step", "")))
        if acc is not None:
            if s.histogram is not None:
                s.histogram = running(s.histogram)  # decoded once, for both
            acc.feed(s)
            if also is not None:
                also(s)
    again = {key for key, acc in accs.items() if acc.lacks_histograms()}
    if again:
        for s in reader.samples(hosts={host for host, _label in again},
                                metrics=FALLBACK_METRICS, t0=t0, t1=t1):
            key = (s.host, s.labels.get("step", ""))
            if key in again:
                accs[key].feed(s)
    out = []
    for row in rows:
        runs = [(start, accs[(row.host, label)].lines()) for label, start in row.runs.items()]
        if len(runs) == 1:
            out.append(_series(runs[0][1], row, runs[0][0]))
        else:
            out.append(_series(median_lines(runs), row, min(o for o, _lines in runs)))
    return out


@dataclass(frozen=True)
class PlotGroup:
    """Runs drawn in one plot: one step of one session (one run of it, or each host's row of
    its runs)."""

    session: str
    step: str
    title: str
    rows: tuple[Row, ...]


def _group_title(step: str, rows: Sequence[Row]) -> str:
    first = rows[0]
    if first.combined:
        title = f"{step}: each host's median of {first.selected_from} runs"
    elif first.selected_from > 1:
        title = f"{step}: each host's {first.selected_by or 'selected'} run of " \
            f"{first.selected_from}"
    elif first.label != step:
        title = f"{step}, run {first.repeat}"
    else:
        title = step
    marks = [f"{r.host} {', '.join(r.flags())}" for r in rows if r.flags()]
    return title + (f" [{'; '.join(marks)}]" if marks else "")


def plot_groups(report: Report) -> list[PlotGroup]:
    """The plots a report's step sections hold, in the tables' order (module doc)."""
    groups: list[PlotGroup] = []
    for session in report.sessions:
        for step in report.steps():
            by_key: dict[str, list[Row]] = {}
            for r in report.rows:
                if r.session == session and r.step == step and r.host != FLEET:
                    by_key.setdefault(r.label if r.selected_from == 1 else "", []).append(r)
            for rows in by_key.values():
                groups.append(PlotGroup(session, step, _group_title(step, rows), tuple(rows)))
    return groups
