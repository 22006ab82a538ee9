"""Writing samples as JSON Lines (docs/SAMPLES.md) or CSV, one sample per line, streaming."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Protocol, TextIO

import orjson

from benchtui.model.sample import Sample

#: Label keys that get a CSV column of their own, in this order; others go to ``other_labels``.
CSV_LABEL_COLUMNS = (
    "step", "job", "op", "measure", "quantile", "device", "mode", "stream", "direction",
    "method", "test", "unit",
)
#: ``duration`` last (added after the others: a reader by position keeps its columns).
CSV_COLUMNS = ("t", "elapsed", "host", "tool", "kind", "metric", "value",
               *CSV_LABEL_COLUMNS, "other_labels", "duration")

FORMATS = ("jsonl", "csv")


class SampleWriter(Protocol):
    def write(self, samples: Iterable[Sample]) -> int: ...


class JsonlWriter:
    """One JSON object per line; ``histograms`` adds each histogram sample's ``buckets``."""

    def __init__(self, out: TextIO, *, histograms: bool = False) -> None:
        self._out = out
        self._histograms = histograms

    def write(self, samples: Iterable[Sample]) -> int:
        keep_histograms = self._histograms
        dumps = orjson.dumps
        # Each line decoded at once: orjson's bytes keep a 4 KiB buffer each until freed.
        # The usual sample (an interval's: elapsed, no duration, no histogram) as one dict
        # display, made at its size, in to_dict's order (~1,000 instructions less a sample).
        lines = [dumps({"t": s.t, "elapsed": s.elapsed, "host": s.host, "tool": s.tool,
                        "kind": s.kind, "metric": s.metric, "value": s.value,
                        "labels": s.labels}).decode()
                 if s.duration is None and s.elapsed is not None and s.histogram is None
                 else dumps(s.to_dict()).decode()
                 for s in samples if keep_histograms or s.histogram is None]
        if lines:
            self._out.write("\n".join(lines) + "\n")
        return len(lines)


class CsvWriter:
    """A header row, then one row per sample; the common labels have their own columns."""

    def __init__(self, out: TextIO) -> None:
        self._writer = csv.writer(out, lineterminator="\n")
        self._writer.writerow(CSV_COLUMNS)

    def write(self, samples: Iterable[Sample]) -> int:
        n = 0
        for s in samples:
            if s.histogram is not None:
                continue
            labels = s.labels
            extra = ";".join(f"{k}={v}" for k, v in sorted(labels.items())
                             if k not in CSV_LABEL_COLUMNS)
            self._writer.writerow((
                "" if s.t is None else repr(s.t),
                "" if s.elapsed is None else repr(s.elapsed),
                s.host, s.tool, s.kind, s.metric, repr(s.value),
                *(labels.get(k, "") for k in CSV_LABEL_COLUMNS),
                extra,
                "" if s.duration is None else repr(s.duration),
            ))
            n += 1
        return n


def writer_for(fmt: str, out: TextIO, *, histograms: bool = False) -> SampleWriter:
    if fmt == "csv":
        return CsvWriter(out)
    return JsonlWriter(out, histograms=histograms)
