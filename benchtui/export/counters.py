"""``benchtui_ops_total`` and ``benchtui_bytes_total``: operations and bytes done, by host,
tool and op, counted from the per-interval rates so that ``rate(benchtui_ops_total[5m])``
works over any scrape interval (the per-interval gauges are only sampled by a scrape).

Each interval adds ``value x seconds``: the seconds are the sample's ``duration`` when the
tool says the interval was partial (docs/SAMPLES.md), else the gap since the series' previous
point (the tool's interval, 1 s for the tools benchtui runs), 1 s for a series' first point.
Rows that add up other rows (fio's text ``all`` and ``group N`` jobs) are left out, so nothing
is counted twice. Shared by the live collector and the OpenMetrics dump.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from benchtui.model.sample import INTERVAL, Sample

#: Sample metric -> the counter family (without ``_total``) and its help.
COUNTED: Final = {
    "iops": ("benchtui_ops", "Operations completed (from the per-interval IOPS x the "
                             "interval's seconds), by host, tool and op."),
    "bandwidth_bytes": ("benchtui_bytes", "Bytes transferred (from the per-interval bandwidth "
                                          "x the interval's seconds), by host, tool and op."),
}
#: Longest gap taken as one interval (a longer one is a pause: counted as 1 s).
MAX_GAP = 60.0


def _is_total_row(labels: Mapping[str, str]) -> bool:
    job = labels.get("job", "")
    return job == "all" or job.startswith("group ") or labels.get("op") == "total"


class OpsCounters:
    """Running totals: ``add(sample)`` for every sample; ``totals`` (family, host, tool, op)
    -> value."""

    def __init__(self) -> None:
        self.totals: dict[tuple[str, str, str, str], float] = {}
        self._last_t: dict[tuple[object, ...], float] = {}

    def add(self, s: Sample) -> tuple[tuple[str, str, str, str], float] | None:
        """Count ``s``; returns (its counter, what it added), or None when not counted."""
        counted = COUNTED.get(s.metric)
        if counted is None or s.kind != INTERVAL or _is_total_row(s.labels):
            return None
        t = s.t if s.t is not None else (s.elapsed or 0.0)
        seen = (s.host, s.tool, s.metric, tuple(s.labels.items()))
        previous = self._last_t.get(seen)
        self._last_t[seen] = t
        seconds = s.duration
        if seconds is None:
            gap = t - previous if previous is not None else 0.0
            seconds = gap if 0.0 < gap <= MAX_GAP else 1.0
        key = (counted[0], s.host, s.tool, s.labels.get("op", ""))
        added = max(s.value, 0.0) * seconds
        self.totals[key] = self.totals.get(key, 0.0) + added
        return key, added


def whole_interval_rate(value: float, seconds: float, previous: float, interval: float
                        ) -> float:
    """The rate over the last whole ``interval`` when the newest point (``value``) covers
    only ``seconds`` of it: that point for its seconds, the point before (``previous``) for the
    rest. A partial interval then never looks like a whole second at its own rate."""
    seconds = min(max(seconds, 0.0), interval)
    if seconds >= interval or interval <= 0:
        return value
    return (value * seconds + previous * (interval - seconds)) / interval


def counter_labels(key: tuple[str, str, str, str]) -> dict[str, str]:
    _family, host, tool, op = key
    return {"host": host, "tool": tool, "op": op} if op else {"host": host, "tool": tool}
