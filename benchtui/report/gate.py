"""The regression gate: ``--fail-below 95%`` and ``--fail-above p99=110%``.

A threshold is a percentage of the baseline, for one metric (``iops=95%``) or, without a
name, for a family: ``--fail-below`` for the throughput figures (IOPS, bandwidth, network,
memory, scores: lower is worse), ``--fail-above`` for the latency figures (higher is worse).
Every value of every row that has a baseline is checked; the values that fall past a
threshold are the *regressions* the command prints and exits 3 for.

Only runs that completed are compared, against baseline runs that completed: a run cut short
(interrupted, stopped by the host's watchdog, cut by its deadline, failed, or with no end in
its recording) has figures of only part of its work. Such runs are *left out* and named; a
gate that left a run out cannot pass (exit 3 as well), since it could not check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchtui.errors import UsageError
from benchtui.model.events import COMPLETED
from benchtui.model.format import format_metric
from benchtui.report.model import Report, Row, Value

#: Names a threshold may give, and the metrics they stand for.
ALIASES: dict[str, tuple[str, ...]] = {
    "iops": ("iops",),
    "bw": ("bandwidth_bytes",), "bandwidth": ("bandwidth_bytes",),
    "net": ("net_bandwidth_bytes",), "mem": ("mem_bandwidth_bytes",),
    "score": ("benchmark_score",),
    "mean": ("latency_mean_seconds",), "p50": ("latency_p50_seconds",),
    "p99": ("latency_p99_seconds",), "p99.9": ("latency_p999_seconds",),
    "p999": ("latency_p999_seconds",),
    "latency": ("latency_mean_seconds", "latency_p50_seconds", "latency_p99_seconds",
                "latency_p999_seconds"),
    "await": ("disk_await_seconds",), "util": ("disk_util_ratio",),
    "retransmits": ("net_retransmits",),
}
THROUGHPUT = ("iops", "bandwidth_bytes", "net_bandwidth_bytes", "mem_bandwidth_bytes",
              "benchmark_score")
LATENCY = ALIASES["latency"]
BELOW, ABOVE = "below", "above"

_THRESHOLD = re.compile(
    r"^(?:(?P<name>[A-Za-z_][\w.]*)\s*=\s*)?(?P<pct>\d+(?:\.\d+)?)\s*(?P<sign>%?)$")


@dataclass(frozen=True, slots=True)
class Threshold:
    direction: str          #: BELOW or ABOVE
    metrics: tuple[str, ...]
    percent: float
    text: str               #: as the user gave it

    def fails(self, v: Value) -> bool:
        pct = v.percent
        if pct is None or v.metric not in self.metrics:
            return False
        return pct < self.percent if self.direction == BELOW else pct > self.percent


def parse_threshold(text: str, direction: str) -> Threshold:
    """``95%``, ``iops=95%``, ``p99=110%`` -> Threshold; UsageError (one sentence) for
    anything else, ``95`` too: a bare number could be a ratio (0.95) or a value (95 IOPS),
    so the form is shown rather than a guess taken."""
    option = f"--fail-{direction}"
    m = _THRESHOLD.match(text.strip())
    if m is None:
        raise UsageError(f"{option} {text!r} is not a threshold: give a percentage of the "
                         f"baseline, alone or for a metric (e.g. {option} "
                         f"{'95%' if direction == BELOW else 'p99=110%'})")
    if not m.group("sign"):
        name = f"{m.group('name')}=" if m.group("name") else ""
        raise UsageError(f"{option} {text.strip()!r} needs its percent sign: write {option} "
                         f"{name}{m.group('pct')}% (a percentage of the baseline's value)")
    name = (m.group("name") or "").lower()
    if name:
        metrics = ALIASES.get(name) or ((name,) if name.endswith(
            ("_seconds", "_bytes", "_ratio")) or name in THROUGHPUT else None)
        if metrics is None:
            raise UsageError(f"{option}: {name!r} is not a metric a report has; give one of "
                             f"{', '.join(ALIASES)} (or a metric name of docs/report.md)")
    else:
        metrics = THROUGHPUT if direction == BELOW else LATENCY
    return Threshold(direction, metrics, float(m.group("pct")), text.strip())


@dataclass(frozen=True, slots=True)
class Regression:
    row: Row
    value: Value
    threshold: Threshold


def comparable(row: Row) -> bool:
    """The row and its baseline row both completed: the gate may compare them."""
    return row.completed and row.baseline_outcome == COMPLETED


def left_out(report: Report) -> list[Row]:
    """The rows with a baseline that the gate does not compare (``comparable``); a fleet
    row only when none of its hosts' rows is listed (it did not complete because they did
    not)."""
    rows = [r for r in report.rows if r.baseline and not comparable(r)]
    hosts = {(r.session, r.label) for r in rows if not r.is_fleet}
    return [r for r in rows if not r.is_fleet or (r.session, r.label) not in hosts]


def why_left_out(row: Row) -> str:
    """``randrw / host1: interrupted (Ctrl-C (SIGINT))``, or what its baseline did."""
    where = f"{row.label} / {row.host}"
    if not row.completed:
        how = row.outcome or "no end recorded"
        return f"{where}: {how}" + (f" ({row.reason})" if row.reason else "")
    return f"{where}: its baseline {row.baseline} did not complete " \
        f"({row.baseline_outcome or 'no end recorded'})"


def silent(report: Report) -> list[Row]:
    """Compared rows whose tool fell silent past its ``silence`` for a while."""
    return [r for r in report.rows if r.baseline and comparable(r) and r.silent_seconds > 0]


def regressions(report: Report, thresholds: list[Threshold]) -> list[Regression]:
    """Every value past a threshold, in the report's order; rows that are not
    ``comparable`` are left out (``left_out`` lists them)."""
    out: list[Regression] = []
    for row in report.rows:
        if not comparable(row):
            continue
        for v in row.values:
            for th in thresholds:
                if th.fails(v):
                    out.append(Regression(row, v, th))
                    break
    return out


def describe(found: list[Regression], sessions: int) -> list[str]:
    """The regressions as lines of a plain-text table (step, host, metric, baseline, now,
    percent, the threshold crossed)."""
    header = ("step", "host", "metric", "baseline", "now", "%", "threshold")
    rows = []
    for r in found:
        host = r.row.host if sessions <= 1 else f"{r.row.session} / {r.row.host}"
        metric = r.value.metric + (f" {r.value.op}" if r.value.op else "") \
            + (f" {r.value.item}" if r.value.item else "")
        pct = r.value.percent
        rows.append((r.row.label, host, metric,
                     format_metric(r.value.metric, r.value.baseline),
                     format_metric(r.value.metric, r.value.value),
                     f"{pct:.1f}%" if pct is not None else "",
                     f"{r.threshold.direction} {r.threshold.text}"))
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in (header, *rows)]
