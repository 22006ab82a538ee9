"""Writing samples as JSON Lines (docs/SAMPLES.md) or CSV, one sample per line, streaming."""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

import orjson

from benchtui import compiled
from benchtui.model.sample import Sample

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Protocol, TextIO

    class SampleWriter(Protocol):
        def write(self, samples: Iterable[Sample]) -> int: ...

#: Label keys that get a CSV column of their own, in this order; others go to ``other_labels``.
CSV_LABEL_COLUMNS = (
    "step", "job", "op", "measure", "quantile", "device", "mode", "stream", "direction",
    "method", "test", "unit",
)
#: ``duration`` last (added after the others: a reader by position keeps its columns).
CSV_COLUMNS = ("t", "elapsed", "host", "tool", "kind", "metric", "value",
               *CSV_LABEL_COLUMNS, "other_labels", "duration")

FORMATS = ("jsonl", "csv")


def load_lines() -> ModuleType | None:
    """The compiled writer of JSON Lines, or None: not built (no compiler where benchtui
    was installed) or not wanted (``BENCHTUI_PURE_PYTHON`` set to anything but 0)."""
    if not compiled.wanted():
        return None
    try:
        from benchtui.export import _jsonl_lines
    except ImportError:
        return None
    _jsonl_lines.bind(Sample)
    return _jsonl_lines


#: The compiled writer this process uses (None: pure Python). Tests set it to run both paths.
LINES: ModuleType | None = load_lines()


class JsonlWriter:
    """One JSON object per line; ``histograms`` adds each histogram sample's ``buckets``.

    Each line is orjson's of ``Sample.to_dict()``. Where ``_jsonl_lines`` is built, it writes
    the lines of the samples without a histogram (of plain types), their numbers formatted
    by orjson in one ``dumps`` of the batch's; the others, and all of them in pure Python,
    are orjson's one by one (docs/architecture.md, "The second compiled part").
    """

    def __init__(self, out: TextIO, *, histograms: bool = False) -> None:
        self._out = out
        self._histograms = histograms

    def write(self, samples: Iterable[Sample]) -> int:
        if LINES is None:
            return self._write_python(samples)
        batch = samples if type(samples) is list else list(samples)
        numbers, others = LINES.numbers(batch)
        keep_histograms = self._histograms
        dumps = orjson.dumps
        written = [dumps(s.to_dict()) if keep_histograms or s.histogram is None else None
                   for s in map(batch.__getitem__, others)]
        text: str
        count: int
        text, count = LINES.lines(batch, dumps(numbers), written)
        if text:
            self._out.write(text)
        return count

    def _write_python(self, samples: Iterable[Sample]) -> int:
        keep_histograms = self._histograms
        dumps = orjson.dumps
        # Each line is decoded at once: orjson's bytes keep a 4 KiB buffer each until freed.
        lines = [dumps(s.to_dict()).decode() for s in samples
                 if keep_histograms or s.histogram is None]
        if lines:
            self._out.write("\n".join(lines) + "\n")
        return len(lines)


class CsvWriter:
    """A header row, then one row per sample; the common labels have their own columns."""

    def __init__(self, out: TextIO) -> None:
        import csv  # (here: `benchtui parse` of JSON Lines, the default, does not need it)

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
