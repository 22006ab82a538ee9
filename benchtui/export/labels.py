"""The Prometheus labels of a sample's series: one set of rules for the live exporter and the
OpenMetrics dump (docs/prometheus.md, *Labels*, lists them for users).

* ``host`` and ``tool`` first, then the sample's labels as Prometheus label names.
* A tool's job name (fio's job, the rados bench pool, the rbd bench image) is ``fio_job``:
  ``job`` is the Prometheus scrape job's, and must mean one thing in every series.
* Host and device series (``disk_*``, ``cpu_ratio`` per interval: what monitors measure) carry
  no ``step``: a device keeps one identity across steps; join the step from
  ``benchtui_step_info`` by time.
* The series of a sweep's step carry each matrix key as a label (``bs="4k"``), so that
  ``sum by (bs)`` works; a key that would clash with a label benchtui sets is ``matrix_KEY``.
* iperf's stream is its index in the run (``0``, ``1``, ...: the order the streams were first
  seen for that host and step), not the socket number the tool prints (which changes at every
  run); the ``[SUM]`` stream stays ``sum``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Final

from benchtui.model.events import STEP_START, Event
from benchtui.model.sample import SUMMARY

#: The sample label renamed, and its name in Prometheus.
RENAMED: Final = {"job": "fio_job"}
#: Per-interval metrics of hosts and devices: exported without ``step``.
HOST_METRIC_PREFIXES: Final = ("disk_", "cpu_ratio")
_STREAM_TOOLS = frozenset({"iperf3", "iperf2"})
_LABEL_NAME = re.compile(r"[^a-zA-Z0-9_]")
_REPEAT = re.compile(r"#\d+$")
#: Labels a matrix key may not take (benchtui's own and the Prometheus reserved ones).
_TAKEN = frozenset({"host", "tool", "step", "fio_job", "op", "measure", "quantile", "device",
                    "mode", "stream", "direction", "method", "test", "unit", "copies", "side",
                    "run", "le", "job", "instance", "__name__"})


@lru_cache(maxsize=4096)
def label_name(key: str) -> str:
    """A sample label key as a Prometheus label name (they are already; this is a guard)."""
    name = _LABEL_NAME.sub("_", key) or "_"
    name = f"_{name}" if name[0].isdigit() else name
    return RENAMED.get(name, name)


def is_host_series(metric: str, kind: str) -> bool:
    """A per-interval value of a host or device (kept without ``step``)."""
    return kind != SUMMARY and metric.startswith(HOST_METRIC_PREFIXES)


def matrix_labels(values: Mapping[str, str]) -> dict[str, str]:
    """A step's matrix values as labels (a clashing key as ``matrix_KEY``)."""
    out: dict[str, str] = {}
    for key, value in values.items():
        name = _LABEL_NAME.sub("_", key)
        out[f"matrix_{name}" if name in _TAKEN else name] = value
    return out


class SeriesLabels:
    """``of(...)``: a series' labels. ``matrix``: step name (as the plan's step, without a
    repeat's ``#N``) -> its matrix values; the stream indices are remembered across calls."""

    def __init__(self, matrix: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.matrix = {step: matrix_labels(values) for step, values in (matrix or {}).items()
                       if values}
        self._streams: dict[tuple[str, str, str], dict[str, int]] = {}

    def of(self, host: str, tool: str, labels: Mapping[str, str], *, metric: str = "",
           kind: str = "") -> dict[str, str]:
        out = {"host": host, "tool": tool}
        drop_step = is_host_series(metric, kind)
        step = labels.get("step", "")
        for key, value in labels.items():
            if key == "step" and drop_step:
                continue
            name = label_name(key)
            if name in out or name == "le":
                continue
            if key == "stream" and tool in _STREAM_TOOLS and value.isdigit():
                out[name] = self._stream_index(host, tool, step, value)
            else:
                out[name] = value
        if not drop_step and step:
            for name, value in self.matrix.get(_REPEAT.sub("", step), {}).items():
                out.setdefault(name, value)
        return out

    def step_labels(self, step: str) -> dict[str, str]:
        """The matrix labels of a step (``NAME#2`` too); empty for a step without one."""
        return dict(self.matrix.get(_REPEAT.sub("", step), {}))

    def _stream_index(self, host: str, tool: str, step: str, socket: str) -> str:
        seen = self._streams.setdefault((host, tool, step), {})
        if socket not in seen:
            seen[socket] = len(seen)
        return str(seen[socket])


def matrix_of_steps(steps: Iterable[tuple[str, Mapping[str, str]]]
                    ) -> dict[str, dict[str, str]]:
    """(step name, matrix values) pairs -> the ``matrix`` of ``SeriesLabels`` (steps
    without values left out; a repeat's ``#N`` taken off the name)."""
    return {_REPEAT.sub("", name): dict(values) for name, values in steps if values}


def matrix_of_events(events: Iterable[Event]) -> dict[str, dict[str, str]]:
    """The sweep values of every step a session started (its ``step_start`` events)."""
    pairs: list[tuple[str, Mapping[str, str]]] = []
    for event in events:
        values = event.data.get("matrix") if event.kind == STEP_START else None
        if event.step and isinstance(values, dict):
            pairs.append((event.step, {str(k): str(v) for k, v in values.items()}))
    return matrix_of_steps(pairs)
