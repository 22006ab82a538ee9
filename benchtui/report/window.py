"""The time a run's tool really ran, and the window a run's figures are taken over.

A run's events say when benchtui started its process and when the process ended; the tool
itself starts later (fio lays out its files, iperf3 connects) and, in a step whose command
does more than run the tool (a shell that sleeps after fio), ends earlier. Every figure of
a run, the tool's own and the monitors' beside it (disk, CPU, network), is taken over the
time the tool ran: from the start of its first interval (its first sample's time less the
interval) to the end of its last (its last sample's time); ``--skip`` counts from the
tool's own start.

A sample stands for the interval that ends when it reached benchtui (the recording's time
axis: a tool's own clock says less, ``iostat -t`` prints whole seconds). It counts in a
window when its interval lies in the window: it arrived at least an interval after the
window's start and by its end, give or take a quarter of an interval (``JITTER``, of the
one-second intervals benchtui runs its tools and monitors at: a line arrives a little after
its tool printed it). So an iostat second that is partly after fio's last report, or partly
before its first, is left out, and ``--skip 5`` leaves out exactly five of fio's seconds.
The tool's own samples are stamped as they arrive: their times say when it ran.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import SeriesStats

#: The figures a step's tool prints (a monitor's are ``disk_*``, ``cpu_ratio``): when they
#: start and stop is when the tool ran.
TOOL_METRICS = frozenset({
    "iops", "bandwidth_bytes", "latency_histogram", "latency_seconds", "latency_mean_seconds",
    "net_bandwidth_bytes", "mem_bandwidth_bytes", "benchmark_score"})
#: The interval the tools and monitors report at as benchtui runs them (fio
#: --status-interval=1, iperf3 -i 1, iostat 1), seconds.
INTERVAL = 1.0
#: How far a sample's arrival may be from its interval's end (a quarter of an interval: at
#: least three quarters of the interval it stands for lies in the window).
JITTER = INTERVAL / 4

Stats = Mapping[SeriesDef, SeriesStats]


@dataclass(frozen=True, slots=True)
class ToolSpan:
    """When a run's tool ran (epoch seconds): from its first interval's start to its last
    interval's end."""

    start: float
    end: float

    def window(self, skip: float) -> tuple[float, float, bool]:
        """(from, to, cut): the figures' window after ``skip`` seconds of the tool's run, on
        the recording's time axis (``JITTER``: ``series_stats`` takes ``[from, to)``); the
        whole run (``cut`` False) when what is left would be shorter than the skip."""
        cut = skip > 0 and self.end - self.start - skip >= skip
        start = self.start + (skip if cut else 0.0)
        return start + INTERVAL - JITTER, self.end + JITTER, cut

    def shown(self, skip: float) -> tuple[float, float]:
        """The window as a report says it: from ``skip`` after the tool's start (its start,
        for a run shorter than twice the skip) to its end."""
        cut = skip > 0 and self.end - self.start - skip >= skip
        return self.start + (skip if cut else 0.0), self.end


def _interval(st: SeriesStats) -> float:
    """A series' interval: ``INTERVAL``, unless its samples are plainly further apart (a
    command that reports every 10 s)."""
    spacing = st.interval
    return spacing if spacing > 1.5 * INTERVAL else INTERVAL


def tool_span(stats: Stats) -> ToolSpan | None:
    """When the tool of a run ran, from the run's statistics (every series of the run's
    step on its host: the tool's own interval series say it); None when the tool printed no
    interval (a tool that prints only at its end, an imported summary)."""
    found = [st for d, st in stats.items()
             if d.kind == "interval" and d.metric in TOOL_METRICS and st.count]
    if not found:
        return None
    return ToolSpan(min(st.first_t - _interval(st) for st in found),
                    max(st.last_t for st in found))


def without_part(stats: MutableMapping[SeriesDef, SeriesStats], part_stats: Stats) -> bool:
    """``stats`` of a stretch less those of a part of it (its first or last seconds), in
    place: the counts, sums and sums of squares a mean and a deviation are made of, and
    the histograms (a series' minimum, maximum, first and last times stay the whole
    stretch's). False, with ``stats`` untouched, when the part holds what cannot be taken
    back (a partial interval: its weight depends on the series' times) or what ``stats``
    does not."""
    for d, part in part_stats.items():
        whole = stats.get(d)
        if part.partial is not None or whole is None or whole.count < part.count \
                or (part.histogram is not None and (
                    whole.histogram is None or whole.histogram.is_reset_from(part.histogram))):
            return False
    for d, part in part_stats.items():
        whole = stats[d]
        whole.count -= part.count
        whole.total -= part.total
        whole.total_sq -= part.total_sq
        if whole.histogram is not None and part.histogram is not None:
            whole.histogram = whole.histogram.delta(part.histogram)
        if not whole.count:
            del stats[d]
    return True
