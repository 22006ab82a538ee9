"""The data model: samples, units and latency histograms. Stdlib only, no I/O."""

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import INTERVAL, SUMMARY, Sample, quantile_label

__all__ = ["INTERVAL", "SUMMARY", "LatencyHistogram", "Sample", "quantile_label"]
