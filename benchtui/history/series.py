"""What a series is: a plan's step (by its effective arguments), a metric, an op, a scope
(the fleet or one host) and an environment (the hosts' stable facts).

Changing a step's arguments (iodepth, block size, runtime) or its hosts' hardware, kernel
(major.minor) or tool versions starts a new series rather than a false change; commit,
branch, version and build are attributes of a run, never of a series.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from benchtui.session.compare import FLEET

__all__ = ["FLEET", "METRICS", "OPS", "Metric", "args_key", "column", "env_facts", "env_key",
           "fleet_env_key", "metric_named"]


@dataclass(frozen=True, slots=True)
class Metric:
    #: The report's metric name (docs/report.md).
    name: str
    #: The short name used in columns and on the command line.
    short: str
    label: str
    unit: str
    #: A rise is good (IOPS, bandwidth) or bad (latency, utilisation).
    higher_is_better: bool
    #: Analysed on a log scale (latency: its noise grows with its level).
    log: bool
    #: Its fleet series gate (utilisation is shown, not gated).
    gated: bool = True


METRICS: tuple[Metric, ...] = (
    Metric("iops", "iops", "IOPS", "ops/s", True, False),
    Metric("bandwidth_bytes", "bw", "bandwidth", "B/s", True, False),
    Metric("latency_mean_seconds", "lat_mean", "mean latency", "s", False, True),
    Metric("latency_p99_seconds", "lat_p99", "p99 latency", "s", False, True),
    Metric("disk_util_ratio", "util", "util", "ratio", False, False, gated=False),
)
_BY_NAME = {m.name: m for m in METRICS} | {m.short: m for m in METRICS}
#: The ops a series may have (fio's, ``total`` for tools that do not split them); utilisation
#: has none ("").
OPS = ("read", "write", "trim", "total")


def metric_named(name: str) -> Metric | None:
    """A metric by its report name or short name (``iops``, ``bw``, ``lat_p99``...)."""
    return _BY_NAME.get(name) or _BY_NAME.get({"bandwidth": "bw", "p99": "lat_p99",
                                               "mean": "lat_mean", "latency": "lat_p99"}
                                              .get(name, ""))


def column(metric: str, op: str) -> str:
    """The view column of a metric and op: ``iops_read``, ``lat_p99_write``, ``util``."""
    m = _BY_NAME[metric]
    return f"{m.short}_{op}" if op else m.short


def _digest(doc: object) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def args_key(identity: Mapping[str, object]) -> str:
    """The key of a step's effective arguments (``ingest.step_identity``)."""
    return _digest(identity)


def _kernel(release: object) -> str:
    found = re.match(r"(\d+)\.(\d+)", str(release or ""))
    return f"{found.group(1)}.{found.group(2)}" if found else str(release or "")


def env_facts(facts: Mapping[str, object]) -> dict[str, object]:
    """A host's stable facts: CPU model and count, memory (GiB), block devices' models and
    sizes, kernel major.minor, tool versions. What changes from boot to boot (free memory,
    mounts, file sizes, the hostname) is left out."""
    devices = facts.get("block_devices")
    devs = {}
    if isinstance(devices, Mapping):
        for name, d in devices.items():
            if isinstance(d, Mapping):
                devs[str(name)] = {"model": d.get("model", ""), "size": d.get("size_bytes", 0)}
    mem = facts.get("mem_bytes")
    tools = facts.get("tools")
    return {"cpu_model": facts.get("cpu_model", ""), "cpu_count": facts.get("cpu_count", 0),
            "mem_gib": round(mem / 2**30) if isinstance(mem, int | float) else None,
            "devices": devs, "kernel": _kernel(facts.get("kernel")),
            "tools": dict(tools) if isinstance(tools, Mapping) else {}}


def env_key(facts: Mapping[str, object]) -> str:
    return _digest(env_facts(facts))


def fleet_env_key(host_keys: Iterable[str]) -> str:
    """The fleet's environment: its hosts' (a host added or re-imaged is a new fleet)."""
    return _digest(sorted(host_keys))
