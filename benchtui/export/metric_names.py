"""Which Prometheus metric each sample metric becomes: one table, shared by the live collector
(``export/prometheus.py``) and the OpenMetrics dump (``export/openmetrics.py``), so that a
backfilled session and a live scrape have the same names, labels and units.

Rules (docs/prometheus.md explains them to users):

* A sample's identity goes in labels, never in the name: ``host`` (the plan's host name),
  ``tool`` (the tool that printed the value: fio and iostat can both report a device's
  utilisation), then the sample's own labels (``step``, ``job``, ``op``, ``device``, ...).
* Names keep the sample metric's base unit suffix: ``iops`` -> ``benchtui_iops``,
  ``disk_await_seconds`` -> ``benchtui_disk_await_seconds``.
* A per-interval value (kind ``interval``) is ``benchtui_<metric>``; a tool's end-of-run figure
  (kind ``summary``) is ``benchtui_result_<metric>``: a whole-run mean is not the same quantity
  as the last second's value, and summing the two would double count.
* Per-interval latency histograms (fio json+) become one Prometheus histogram,
  ``benchtui_op_latency_seconds``, with the fixed bucket layout ``LATENCY_BUCKETS``
  (export/latency_buckets.py; fio's ~1,800 buckets would be too many series), so that
  ``histogram_quantile`` works across hosts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from prometheus_client.utils import floatToGoString

from benchtui.export.labels import SeriesLabels
from benchtui.model.sample import HISTOGRAM_METRIC, SUMMARY, Sample

PREFIX: Final = "benchtui_"
RESULT_PREFIX: Final = "benchtui_result_"
HISTOGRAM_NAME: Final = "benchtui_op_latency_seconds"
#: The exact fleet percentiles (a summary without host), and the quantiles it has.
FLEET_LATENCY_NAME: Final = "benchtui_fleet_latency_seconds"
FLEET_QUANTILES: Final = (0.5, 0.9, 0.99, 0.999, 0.9999)
FLEET_LATENCY_HELP: Final = ("Latency percentile (label quantile) of the whole fleet: quantile "
                             "of the merged latest interval histograms of every fresh host.")
#: Labels benchtui adds to every series; a sample label of the same name is dropped.
IDENTITY_LABELS: Final = ("host", "tool")


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """How one sample metric is exported."""

    #: The sample metric (docs/SAMPLES.md).
    metric: str
    #: OpenMetrics unit: only where the value is exactly in that unit ("" otherwise, e.g.
    #: bytes per second).
    unit: str
    #: What one value means, for ``# HELP``.
    help: str
    #: Prometheus type: ``gauge``, or ``summary`` for percentiles (a ``quantile`` label is
    #: only allowed on summaries: a summary's quantiles over a one-interval window).
    type: str = "gauge"

    @property
    def name(self) -> str:
        """The name of the per-interval family."""
        return PREFIX + self.metric

    @property
    def result_name(self) -> str:
        """The name of the end-of-run (summary) family."""
        return RESULT_PREFIX + self.metric


_SPECS: tuple[MetricSpec, ...] = (
    # Workload: fio, rados bench, rbd bench, fbbench.
    MetricSpec("iops", "", "Completed operations per second."),
    MetricSpec("bandwidth_bytes", "", "Bytes transferred per second."),
    MetricSpec("latency_seconds", "seconds",
               "Latency percentile (label quantile) of the host's operations.", "summary"),
    MetricSpec("latency_mean_seconds", "seconds", "Mean latency of the operations."),
    MetricSpec("latency_min_seconds", "seconds", "Smallest latency of the operations."),
    MetricSpec("latency_max_seconds", "seconds", "Largest latency of the operations."),
    MetricSpec("latency_stddev_seconds", "seconds", "Standard deviation of the latency."),
    MetricSpec("latency_last_seconds", "seconds",
               "Latency of the last operation of the interval (rados bench last lat)."),
    MetricSpec("latency_running_mean_seconds", "seconds",
               "Mean latency since the tool started, as it prints it (rados bench avg lat)."),
    MetricSpec("ops_in_flight", "", "Operations outstanding (rados bench Cur ops)."),
    MetricSpec("bandwidth_min_bytes", "", "Smallest of the tool's own bandwidth samples, "
               "bytes per second."),
    MetricSpec("bandwidth_max_bytes", "", "Largest of the tool's own bandwidth samples, "
               "bytes per second."),
    MetricSpec("bandwidth_mean_bytes", "", "Mean of the tool's own bandwidth samples, "
               "bytes per second."),
    MetricSpec("bandwidth_stddev_bytes", "", "Standard deviation of the tool's own bandwidth "
               "samples, bytes per second."),
    MetricSpec("iops_min", "", "Smallest of the tool's own IOPS samples."),
    MetricSpec("iops_max", "", "Largest of the tool's own IOPS samples."),
    MetricSpec("iops_mean", "", "Mean of the tool's own IOPS samples."),
    MetricSpec("iops_stddev", "", "Standard deviation of the tool's own IOPS samples."),
    # Disks: iostat, /proc/diskstats, SPDK iostat.py, fio's disk stats.
    MetricSpec("disk_iops", "", "Device operations completed per second."),
    MetricSpec("disk_bandwidth_bytes", "", "Device bytes per second."),
    MetricSpec("disk_await_seconds", "seconds", "Mean time per device request, queue included."),
    MetricSpec("disk_queue_depth", "", "Average device queue size (aqu-sz)."),
    MetricSpec("disk_util_ratio", "ratio", "Share of time the device was busy (%util / 100)."),
    MetricSpec("disk_merged_iops", "", "Device requests merged per second."),
    MetricSpec("disk_request_size_bytes", "bytes", "Average device request size."),
    MetricSpec("disk_service_time_seconds", "seconds", "iostat svctm (sysstat 12.0 and older)."),
    # CPU and memory.
    MetricSpec("cpu_ratio", "ratio", "Share of CPU time in a mode (label mode)."),
    MetricSpec("mem_bandwidth_bytes", "", "Memory copy rate, bytes per second (mbw)."),
    # Network: iperf3, iperf 2.
    MetricSpec("net_bandwidth_bytes", "", "Network payload bytes per second."),
    MetricSpec("net_retransmits", "", "TCP retransmits (a count, not a rate)."),
    MetricSpec("net_jitter_seconds", "seconds", "UDP jitter seen by the receiver."),
    MetricSpec("net_loss_ratio", "ratio", "Share of UDP datagrams lost."),
    MetricSpec("net_cwnd_bytes", "bytes", "TCP congestion window."),
    MetricSpec("net_rtt_seconds", "seconds", "TCP round-trip time."),
    # Scores.
    MetricSpec("benchmark_score", "", "A tool's own score, in its own unit (label unit)."),
)

#: Sample metric -> how it is exported. ``latency_histogram`` is not here: it becomes the
#: ``HISTOGRAM_NAME`` histogram.
METRICS: Final[dict[str, MetricSpec]] = {spec.metric: spec for spec in _SPECS}


def is_exported(sample: Sample) -> bool:
    """True when the sample has a family (the histogram metric counts)."""
    return sample.metric == HISTOGRAM_METRIC or sample.metric in METRICS


def family_name(sample: Sample) -> str | None:
    """The family a sample's value belongs to; None for a metric with no mapping."""
    if sample.metric == HISTOGRAM_METRIC:
        return HISTOGRAM_NAME if sample.kind != SUMMARY else None
    spec = METRICS.get(sample.metric)
    if spec is None:
        return None
    return spec.result_name if sample.kind == SUMMARY else spec.name


def family_spec(name: str) -> MetricSpec | None:
    """The spec of a family name made by ``family_name`` (None for the histogram)."""
    metric = name.removeprefix(RESULT_PREFIX) if name.startswith(RESULT_PREFIX) else \
        name.removeprefix(PREFIX)
    return METRICS.get(metric)


def family_help(name: str) -> str:
    """``# HELP`` text of a family made by ``family_name``."""
    spec = family_spec(name)
    if spec is None:
        return ("Latency distribution of the host's operations, counted since the series "
                "appeared (fio json+ interval histograms in fixed buckets).")
    if name.startswith(RESULT_PREFIX):
        return f"End-of-run figure printed by the tool: {spec.help[0].lower()}{spec.help[1:]}"
    return f"{spec.help[:-1]}, over one reporting interval of the tool."


def series_labels(sample: Sample) -> dict[str, str]:
    """The Prometheus labels of a sample's series (``labels.SeriesLabels`` without a matrix
    and with a fresh stream numbering: use a ``SeriesLabels`` to label a whole session)."""
    return SeriesLabels().of(sample.host, sample.tool, sample.labels, metric=sample.metric,
                             kind=sample.kind)


def labels_of(host: str, tool: str, labels: Mapping[str, str], *, metric: str = "",
              kind: str = "") -> dict[str, str]:
    """host, tool, then ``labels`` as Prometheus labels (``labels.SeriesLabels`` rules)."""
    return SeriesLabels().of(host, tool, labels, metric=metric, kind=kind)


def format_value(value: float) -> str:
    """A value as the exposition formats write it (Go's float format, as Prometheus reads)."""
    text: str = floatToGoString(value)  # type: ignore[no-untyped-call]
    return text
