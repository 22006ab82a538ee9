"""What SPDK's two benchmarks, ``bdevperf`` and ``spdk_nvme_perf``, share: the op of a workload,
the options of their command line, and their latency tables (``-l``/``-L`` percentiles,
``-ll``/``-LL`` histograms), printed by the same code in both (examples/bdev/bdevperf/bdevperf.c
and app/spdk_nvme_perf/perf.c: ``check_cutoff`` and ``print_bucket`` over
``spdk_histogram_data_iterate``)::

     1.00000% :    10.240us            "%9.5f%% : %9.3fus\\n"      (a bucket's end)
       10.240 -    10.301:    0.0123%  (       17)     "%9.3f - %9.3f: %9.4f%%  (%9ju)\\n"

Private to the SPDK parsers (the registry skips modules whose name starts with ``_``).
"""

from __future__ import annotations

import re
from typing import Final

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC, SUMMARY, Sample, quantile_label
from benchtui.parsers.base import Parser

#: Workload (bdevperf ``-w``/``workload:``, spdk_nvme_perf ``-w``) -> the ``op`` label. The
#: others (rw, randrw, verify, reset, flush, ...) mix operations and print one figure: total.
WORKLOAD_OPS: Final = {"read": "read", "randread": "read", "write": "write",
                       "randwrite": "write", "write_zeroes": "write", "unmap": "trim"}

#: One percentile line: percent, latency in microseconds.
CUTOFF: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)%\s*:\s*(\d+(?:\.\d+)?)us\s*$")
#: One histogram line: start and end in microseconds, cumulative percent, the bucket's count.
BUCKET: Final = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?):\s*\d+(?:\.\d+)?%\s*\(\s*(\d+)\)\s*$")
#: An option and its value on a command line (``-w randread``, ``--time=10``).
_OPTION: Final = re.compile(r"(?:^|\s)(-[A-Za-z]|--[a-z-]+)(?:=|\s+)(?!-)(\S+)")

US: Final = 1e-6


def op_of(workload: str | None) -> str:
    """The ``op`` label of a workload name ("total" when it mixes operations or is unknown)."""
    return WORKLOAD_OPS.get(workload or "", "total")


def options(line: str) -> dict[str, str]:
    """The options of a command line: ``{"-w": "randread", "-t": "10", "--time": "10"}``."""
    return {m.group(1): m.group(2).strip("'\"") for m in _OPTION.finditer(line)}


def number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


class LatencyTable:
    """The percentile lines or the histogram lines of one job, as they come; ``samples`` gives
    its summary samples at the table's end: ``latency_seconds`` with a ``quantile`` label per
    percentile, and one ``latency_histogram`` (buckets keyed by their end, the value SPDK's
    percentiles report; the value is the count of I/Os) when the parser makes histograms."""

    __slots__ = ("buckets", "elapsed", "labels", "quantiles")

    def __init__(self, labels: dict[str, str], elapsed: float | None) -> None:
        self.labels = labels
        self.elapsed = elapsed
        self.quantiles: list[tuple[str, float]] = []
        self.buckets: dict[int, int] = {}

    def line(self, line: str) -> bool:
        """Take one line of the table; False when it is not one of its lines."""
        m = CUTOFF.match(line)
        if m is not None:
            self.quantiles.append((quantile_label(m.group(1)), float(m.group(2)) * US))
            return True
        m = BUCKET.match(line)
        if m is not None:
            end_ns = round(float(m.group(2)) * 1000)
            self.buckets[end_ns] = self.buckets.get(end_ns, 0) + int(m.group(3))
            return True
        return False

    def samples(self, parser: Parser, t: float | None) -> list[Sample]:
        out = [parser.sample("latency_seconds", value, {**self.labels, "quantile": q}, t,
                             kind=SUMMARY, elapsed=self.elapsed) for q, value in self.quantiles]
        if self.buckets and parser.histograms:
            hist = LatencyHistogram(dict(sorted(self.buckets.items())))
            out.append(Sample(t, parser.tool, SUMMARY, HISTOGRAM_METRIC, float(hist.total()),
                              dict(self.labels), parser.host, self.elapsed, hist))
        return out
