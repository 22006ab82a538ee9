"""The end-of-run figures of a fio JSON report (the last document of the stream).

fio's own whole-run numbers, per job and direction: ``iops``, ``bw_bytes`` (``bw`` KiB/s before
fio 3.2), the percentiles of its ``percentile`` objects, min/max/mean latencies (ns blocks of fio
3.x, us blocks of fio 2.x: see ``_fio_json_units``); per job the CPU shares (``usr_cpu``,
``sys_cpu``, percent of one CPU); per device ``disk_util``. Used by ``fio_json.FioJsonParser``.
"""

from __future__ import annotations

import math

from benchtui.model.sample import SUMMARY, Sample, quantile_label
from benchtui.parsers._fio_json_units import (
    bandwidth_bytes,
    io_bytes,
    latency_blocks,
    percentile_key,
)

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any

    from benchtui.parsers.base import Parser

OPS = ("read", "write", "trim")
_NS = 1e9
_SAMPLED = (
    ("bw", (("bw_min", "bandwidth_min_bytes", 1024), ("bw_max", "bandwidth_max_bytes", 1024),
            ("bw_mean", "bandwidth_mean_bytes", 1024), ("bw_dev", "bandwidth_stddev_bytes", 1024))),
    ("iops", (("iops_min", "iops_min", 1), ("iops_max", "iops_max", 1),
              ("iops_mean", "iops_mean", 1), ("iops_stddev", "iops_stddev", 1))),
)


def _num(x: object) -> float | None:
    if type(x) is int or type(x) is float:
        value = float(x)
        return value if math.isfinite(value) else None
    return None


def _quantile(key: str) -> str | None:
    """fio's percentile key ("99.900000") as a quantile label, None for garbage."""
    try:
        p = float(key)
    except ValueError:
        return None
    if not 0 <= p <= 100:
        return None
    return quantile_label(key)


def _fallback_elapsed(jobs: list[Any]) -> float:
    """The run's length when the report has no timestamp: fio's ``elapsed`` (whole seconds since
    fio started), or where fio 2.x did not print it, the longest direction ``runtime`` (ms)."""
    longest = 0.0
    ran = 0.0
    for job in jobs:
        if isinstance(job, dict):
            e = _num(job.get("elapsed"))
            if e is not None and e > longest:
                longest = e
            for op in OPS:
                d = job.get(op)
                r = _num(d.get("runtime")) if isinstance(d, dict) else None
                if r is not None and r / 1000 > ran:
                    ran = r / 1000
    return longest or ran


def summary_samples(parser: Parser, doc: dict[str, Any], labels: list[str], t: float | None,
                    elapsed: float | None) -> list[Sample]:
    """kind=summary samples of one fio JSON document (normally the final report)."""
    jobs: list[Any] = doc["jobs"]
    if elapsed is None:
        elapsed = _fallback_elapsed(jobs)
    out: list[Sample] = []

    def add(metric: str, value: float, labels: dict[str, str]) -> None:
        out.append(parser.sample(metric, value, labels, t, kind=SUMMARY, elapsed=elapsed))

    for label, job in zip(labels, jobs, strict=True):
        if not isinstance(job, dict):
            continue
        ran = False
        for op in OPS:
            d = job.get(op)
            if isinstance(d, dict):
                ran = _direction(add, label, op, d) or ran
        if not ran:
            continue  # a job that did no I/O (it failed at once): nothing to show
        for key, mode in (("usr_cpu", "user"), ("sys_cpu", "system")):
            pct = _num(job.get(key))
            if pct is None:
                continue
            if 0 <= pct <= 100:
                add("cpu_ratio", pct / 100, {"job": label, "mode": mode})
            else:
                parser.warn(f"job {label!r}: {key} {pct} is not a percentage (ignored)")
    disks = doc.get("disk_util")
    if isinstance(disks, list):
        for disk in disks:
            if not isinstance(disk, dict) or not isinstance(disk.get("name"), str):
                continue
            util = _num(disk.get("util"))
            if util is not None and 0 <= util <= 100:
                add("disk_util_ratio", util / 100, {"device": disk["name"]})
            elif util is not None:
                parser.warn(f"disk {disk['name']!r}: util {util} is not a percentage (ignored)")
    return out


def _direction(add: Any, label: str, op: str, d: dict[str, Any]) -> bool:
    """The samples of one direction, if it did any I/O (then True)."""
    io = io_bytes(d) or 0.0
    measured = latency_blocks(d) if io > 0 or (_num(d.get("total_ios")) or 0) > 0 else []
    if io <= 0 and not measured:
        return False  # this direction did no I/O: no write=0 series for a read-only job
    iops, bw = _num(d.get("iops")), bandwidth_bytes(d)
    if iops is not None and iops >= 0:
        add("iops", iops, {"job": label, "op": op})
    if bw is not None and bw >= 0:
        add("bandwidth_bytes", bw, {"job": label, "op": op})
    # fio's statistics of its own periodic bandwidth and IOPS samples (bw_* in KiB/s); all
    # zero (or ``*_samples`` 0) when it took none, e.g. fio 2.x with group_reporting
    for family, keys in _SAMPLED:
        if _num(d.get(f"{family}_samples")) == 0 or not _num(d.get(keys[1][0])):
            continue
        for key, metric, mult in keys:
            v = _num(d.get(key))
            if v is not None and v >= 0:
                add(metric, v * mult, {"job": label, "op": op})
    for measure, x, scale in measured:
        lab = {"job": label, "op": op, "measure": measure}
        for key, metric in (("min", "latency_min_seconds"), ("max", "latency_max_seconds"),
                            ("mean", "latency_mean_seconds"), ("stddev", "latency_stddev_seconds")):
            v = _num(x.get(key))
            if v is not None and v >= 0:
                add(metric, v / (_NS / scale), dict(lab))
        pct = x.get("percentile")
        if isinstance(pct, dict):
            for key, value in pct.items():
                q, v = _quantile(key), _num(value)
                if q is not None and v is not None and v >= 0 and percentile_key(key, v):
                    add("latency_seconds", v / (_NS / scale), {**lab, "quantile": q})
    return True
