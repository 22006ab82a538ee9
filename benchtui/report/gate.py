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


#: How the gate's lines name a metric.
_SHORT = {"iops": "IOPS", "bandwidth_bytes": "BW", "latency_mean_seconds": "mean",
          "latency_p50_seconds": "p50", "latency_p99_seconds": "p99",
          "latency_p999_seconds": "p99.9", "net_bandwidth_bytes": "net",
          "net_retransmits": "retransmits", "mem_bandwidth_bytes": "mem",
          "benchmark_score": "score", "disk_await_seconds": "await",
          "disk_util_ratio": "util"}
_OP = {"read": "r", "write": "w", "trim": "t", "total": "", "receive": "recv"}
#: Bandwidth mirrors IOPS when the bytes per op (bandwidth / IOPS) of the run and of its
#: baseline agree within this share: the same block size, so the same regression.
MIRROR_SHARE = 0.10


def _bytes_per_op(v: Value, iops: Value) -> tuple[float, float] | None:
    if not iops.value or not iops.baseline or v.baseline is None:
        return None
    return v.value / iops.value, v.baseline / iops.baseline


def without_mirrors(found: list[Regression]) -> list[Regression]:
    """The regressions without the bandwidth that only mirrors a regressed IOPS of the same
    run and op: bandwidth = IOPS x the block size, and the block size is the same in the
    run and its baseline (their bytes per op agree within ``MIRROR_SHARE``)."""
    iops = {(id(r.row), r.value.op): r.value for r in found if r.value.metric == "iops"}
    out = []
    for r in found:
        twin = iops.get((id(r.row), r.value.op))
        if r.value.metric == "bandwidth_bytes" and twin is not None:
            sizes = _bytes_per_op(r.value, twin)
            if sizes is not None and sizes[1] > 0 \
                    and abs(sizes[0] / sizes[1] - 1.0) <= MIRROR_SHARE:
                continue
        out.append(r)
    return out


def metric_name(v: Value) -> str:
    """``IOPS w``, ``p99 r``, ``net send``, ``mem MEMCPY``."""
    parts = [_SHORT.get(v.metric, v.metric), _OP.get(v.op, v.op), v.item]
    return " ".join(p for p in parts if p)


def _run_name(row: Row, sessions: int) -> str:
    host = "the fleet" if row.is_fleet else row.host
    where = f"{row.run_name()} on {host}"
    return f"{where} ({row.session})" if sessions > 1 else where


def _badness(r: Regression) -> float:
    """How far past 100% a value is, as a factor (39% -> 2.56; 150% -> 1.5)."""
    pct = r.value.percent or 0.0
    if r.threshold.direction == BELOW:
        return 100.0 / pct if pct > 0 else float("inf")
    return pct / 100.0


def summary(found: list[Regression], sessions: int) -> str:
    """The gate's first line: ``91 values regressed in 9 steps on 4 hosts; worst: 39% of
    baseline, IOPS w, rand bs=4k rw=randwrite #2 on h3``."""
    steps = {(r.row.session, r.row.step) for r in found}
    hosts = {(r.row.session, r.row.host) for r in found if not r.row.is_fleet}
    worst = max(found, key=_badness)
    pct = worst.value.percent
    values = "value" if len(found) == 1 else "values"
    where = f"{len(steps)} step{'s' if len(steps) != 1 else ''}"
    if hosts:
        where += f" on {len(hosts)} host{'s' if len(hosts) != 1 else ''}"
    else:
        where += " (fleet rows)"
    return (f"{len(found)} {values} regressed in {where}; worst: "
            f"{pct:.0f}% of baseline, {metric_name(worst.value)}, "
            f"{_run_name(worst.row, sessions)}")


def describe(found: list[Regression], sessions: int) -> list[str]:
    """The regressions as lines of a plain-text table, one per regressed run and figure
    (step, host, figure, baseline, now, percent, the threshold crossed)."""
    header = ("step", "host", "figure", "baseline", "now", "%", "threshold")
    rows = []
    for r in found:
        host = "fleet" if r.row.is_fleet else r.row.host
        host = host if sessions <= 1 else f"{r.row.session} / {host}"
        pct = r.value.percent
        rows.append((r.row.run_name(), host, metric_name(r.value),
                     format_metric(r.value.metric, r.value.baseline),
                     format_metric(r.value.metric, r.value.value),
                     f"{pct:.1f}%" if pct is not None else "",
                     f"{r.threshold.direction} {r.threshold.text}"))
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in (header, *rows)]
