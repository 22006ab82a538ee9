"""Each job's figures, for a pane with room: under the IOPS, bandwidth and latency rows'
numbers, beside the lower lines of their charts (lines that would be blank), one line per job
and direction: ``rread    r 28.5k``, ``rread    p99 66.0 µs``.

Only when the host runs two jobs or more now (with one, the row's own numbers are the job's),
from the store's per-job series whose newest point is current and of the current step
(``figures.oldest``: the last 5 s, never before the step's start, the rule every pane figure
follows), so a job of a step that ended is not shown.
"""

from __future__ import annotations

from rich.segment import Segment

from benchtui.model.format import format_byte_rate, format_count, format_latency
from benchtui.store.fleet import FleetState
from benchtui.ui import figures as fig
from benchtui.ui.pane_rows import Cells, ChartSpec, PaneStyles

JOB_WIDTH = 9


def job_lines(state: FleetState, host: str, spec: ChartSpec, *, now: float,
              styles: PaneStyles, most: int) -> list[Cells]:
    """At most ``most`` lines of per-job figures for a row charting ``spec`` (IOPS,
    bandwidth: each job's read and write; latency: each job's p99 of the row's direction);
    none for other rows, or when fewer than two jobs report now."""
    if most <= 0 or spec.metric not in ("iops", "bandwidth_bytes", "latency_seconds"):
        return []
    index = fig.index_of(state.store)
    fresh = fig.oldest(state.store, now)  # current, and of the step shown (its scope)
    if spec.metric == "latency_seconds":
        found = index.find("latency_seconds", host, op=spec.labels.get("op", ""),
                           quantile="0.99")
    else:
        found = index.find(spec.metric, host)
    values: dict[tuple[str, str], float] = {}
    for s in found:
        job, op = s.labels.get("job"), s.labels.get("op")
        t = s.last_t
        if job is None or op is None or t is None or t < fresh or s.last is None:
            continue
        if spec.metric == "latency_seconds" and s.labels.get("measure") not in (
                None, "clat", "lat"):
            continue
        key = (job, op)
        values[key] = max(values.get(key, s.last), s.last) if spec.metric == \
            "latency_seconds" else values.get(key, 0.0) + s.last
    if len({job for job, _op in values}) < 2:
        return []
    lines: list[Cells] = []
    for (job, op), value in sorted(values.items()):
        name = Segment(job[:JOB_WIDTH - 1].ljust(JOB_WIDTH), styles.muted)
        style = styles.write if op == "write" else styles.read
        if spec.metric == "latency_seconds":
            lines.append([name, Segment("p99 ", styles.muted),
                          Segment(format_latency(value), styles.p99)])
        else:
            text = format_count(value) if spec.metric == "iops" else format_byte_rate(value)
            lines.append([name, Segment(f"{op[0]} ", styles.muted), Segment(text, style)])
    if len(lines) > most:  # the first ones, and how many more
        lines = [*lines[:most - 1],
                 [Segment(f"+{len(lines) - most + 1} more jobs", styles.muted)]]
    return lines
