"""What a sink made of a batch of samples, kept for the next batch alike.

A source sends the same series in the same order batch after batch: a fio document's jobs,
an iostat report. A sink that works out something per sample (the live store: where each
goes) can work it out once per batch shape instead: the next
batch of the same host, tool and size, with the same hosts, tools, kinds, metrics, labels
and histograms present, gets what the last one got. The comparison is of whole lists, in C
(a few tens of nanoseconds a sample); working it out again sample by sample, with a tuple
key per sample, is several times that.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Generic, TypeVar

from benchtui.model.sample import Sample

T = TypeVar("T")

_HOST, _TOOL, _KIND, _METRIC, _LABELS, _HISTOGRAM = (attrgetter(name) for name in (
    "host", "tool", "kind", "metric", "labels", "histogram"))
#: Shapes kept at most (hosts x tools x batch sizes); past it, all are forgotten.
MAX_SHAPES = 1 << 14


@dataclass(slots=True)
class _Shape(Generic[T]):
    hosts: list[str]
    tools: list[str]
    kinds: list[str]
    metrics: list[str]
    labels: list[dict[str, str]]
    histograms: list[bool]
    made: T

    def fits(self, batch: list[Sample]) -> bool:
        return (list(map(_METRIC, batch)) == self.metrics
                and list(map(_LABELS, batch)) == self.labels
                and list(map(_HOST, batch)) == self.hosts
                and list(map(_TOOL, batch)) == self.tools
                and list(map(_KIND, batch)) == self.kinds
                and [h is not None for h in map(_HISTOGRAM, batch)] == self.histograms)


class BatchShapes(Generic[T]):
    """What was made of the last batch of each (host, tool, size)."""

    def __init__(self) -> None:
        self._shapes: dict[tuple[str, str, int], _Shape[T]] = {}

    def find(self, batch: list[Sample]) -> T | None:
        """What was made of the last batch like ``batch`` (not empty); None if it was unlike
        it, or there was none."""
        first = batch[0]
        shape = self._shapes.get((first.host, first.tool, len(batch)))
        return shape.made if shape is not None and shape.fits(batch) else None

    def keep(self, batch: list[Sample], made: T) -> None:
        """``made`` is what ``batch`` (not empty) gives, and a batch like it."""
        if len(self._shapes) >= MAX_SHAPES:
            self._shapes.clear()
        first = batch[0]
        self._shapes[first.host, first.tool, len(batch)] = _Shape(
            list(map(_HOST, batch)), list(map(_TOOL, batch)), list(map(_KIND, batch)),
            list(map(_METRIC, batch)), [dict(s.labels) for s in batch],
            [h is not None for h in map(_HISTOGRAM, batch)], made)


def one_host(batch: list[Sample]) -> bool:
    """Whether every sample of ``batch`` (not empty) is of the same host."""
    hosts = list(map(_HOST, batch))
    return hosts.count(hosts[0]) == len(hosts)
