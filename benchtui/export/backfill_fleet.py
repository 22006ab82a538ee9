"""Exact fleet percentiles for a backfill, as the live exporter computes them at each scrape.

Live, ``benchtui_fleet_latency_seconds`` is, at each scrape, the quantiles of the merged latest
interval histograms of every fresh host (never an average of percentiles). For
``dump --format openmetrics --histograms`` the same is done once per whole second of the
recording: ``FleetQuantiles.add`` takes the interval histograms in time order; each time a
second begins, the quantiles of every group (tool and labels but the host) are taken over the
latest histogram of each host that reported within ``STALE_SECONDS`` (3 intervals of 1 s, the
live rule for 1 Hz tools).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from benchtui.export.metric_names import FLEET_QUANTILES
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample

#: A host's histogram is part of the fleet this long after it arrived (seconds).
STALE_SECONDS = 3.0

Group = tuple[str, tuple[tuple[str, str], ...]]


class FleetQuantiles:
    """``add(sample)`` yields the points of the seconds that ended before it; ``finish()``
    those of the last one. A point is (time, tool, labels without host, quantile, value)."""

    def __init__(self) -> None:
        self._latest: dict[Group, dict[str, tuple[float, LatencyHistogram]]] = {}
        self._second: int | None = None

    def add(self, s: Sample) -> Iterator[tuple[float, str, dict[str, str], float, float]]:
        if s.histogram is None or s.t is None:
            return
        second = math.floor(s.t)
        if self._second is not None and second > self._second:
            yield from self._points(float(second))
        # a sample out of time order (another fixture, a late host) emits nothing twice
        self._second = second if self._second is None else max(self._second, second)
        group = (s.tool, tuple(sorted((k, v) for k, v in s.labels.items())))
        self._latest.setdefault(group, {})[s.host] = (s.t, s.histogram)

    def finish(self) -> Iterator[tuple[float, str, dict[str, str], float, float]]:
        if self._second is not None:
            yield from self._points(float(self._second + 1))
            self._second = None

    def _points(self, t: float) -> Iterator[tuple[float, str, dict[str, str], float, float]]:
        for (tool, labels), hosts in self._latest.items():
            fresh = [h for when, h in hosts.values() if t - when <= STALE_SECONDS]
            if not fresh:
                continue
            for q, value in LatencyHistogram.merged(fresh).quantiles(FLEET_QUANTILES).items():
                yield t, tool, dict(labels), q, value
