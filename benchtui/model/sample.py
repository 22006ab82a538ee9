"""The sample: one number a tool printed, in base units, with the labels that identify its series.

The shape is the public contract of docs/SAMPLES.md. A sample of metric ``latency_histogram``
also carries the per-interval latency distribution it summarises (``histogram``), so that the
store can merge the histograms of many hosts and take exact fleet-wide percentiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from benchtui.model.histogram import LatencyHistogram

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

INTERVAL: Final = "interval"
SUMMARY: Final = "summary"

#: The metric name of a sample that carries a latency histogram; ``value`` is its count.
HISTOGRAM_METRIC: Final = "latency_histogram"


@dataclass(slots=True)
class Sample:
    """One value over one interval (or a whole run) of one series."""

    t: float | None
    tool: str
    kind: str
    metric: str
    value: float
    labels: dict[str, str] = field(default_factory=dict)
    host: str = "-"
    elapsed: float | None = None
    histogram: LatencyHistogram | None = None
    #: Seconds of work the value covers, when the tool says so and it is not the nominal
    #: interval: a partial last interval (fio's final report, iperf3's last sub-second line,
    #: rados bench's last row). ``None``: the tool's nominal interval (or a whole run).
    #: Every consumer that combines interval values weights them by this duration.
    duration: float | None = None

    def series_key(self) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
        """What identifies the series this sample belongs to (host, tool, metric, labels)."""
        return (self.host, self.tool, self.metric, tuple(sorted(self.labels.items())))

    def to_dict(self) -> dict[str, object]:
        """The sample as the JSON object of docs/SAMPLES.md (key order as documented)."""
        out: dict[str, object] = {"t": self.t}
        if self.elapsed is not None:
            out["elapsed"] = self.elapsed
        if self.duration is not None:
            out["duration"] = self.duration
        out["host"] = self.host
        out["tool"] = self.tool
        out["kind"] = self.kind
        out["metric"] = self.metric
        out["value"] = self.value
        out["labels"] = self.labels
        if self.histogram is not None:
            out["buckets"] = self.histogram.to_json_buckets()
        return out


@lru_cache(maxsize=256)
def quantile_label(percentile: str | float) -> str:
    """fio's ``99.900000`` (a percentile) -> ``"0.999"`` (a quantile, no trailing zeros)."""
    from decimal import Decimal  # (here: importing it costs ~5.6 M instructions)

    d = Decimal(str(percentile).strip()) / 100
    text = format(d.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"
