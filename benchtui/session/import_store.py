"""What ``benchtui import`` keeps of a run between parsing it and writing it: its samples
and its raw text, compact (docs/import.md, "Memory").

A run's samples are placed in time only once all of them are known (the run lasts as long
as its longest ``elapsed``, its clock times are offsets from its first), and its step only
once every step before it is placed, so an import holds every run until it writes it. Held
as ``Sample`` objects (~400 bytes each, ~12 samples a line of ``iostat -x``) an iostat log
cost ~30 times its size: a file at the 512 MiB limit would have needed ~16 GB. Here a run's
samples are kept in chunks of ``CHUNK``, each a few columns (series id, time, elapsed,
value; the few durations and histograms apart, a histogram encoded as a recording encodes
it) ``marshal``-led and zstd-compressed: ~6 bytes a sample, made and read back ~4 times
faster than by the recording's own codec (measured on an hour of ``iostat -x``), and back
exactly as they went in (the value's type, the labels in their order, the histogram's
counts). The series (tool, kind, metric, labels, host) are numbered once for the whole
import (``SeriesTable``): a host's series repeat from step to step. A run's raw text is kept
the same way: lines in zstd-compressed chunks.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from operator import attrgetter
from typing import Final

import zstandard

from benchtui.model.sample import Sample
from benchtui.store.recording.histcodec import HistogramEncoder, RecordedHistogram

#: Samples in a chunk (the ones of a chunk being filled are held as objects).
CHUNK: Final = 4096
#: Characters of text in a chunk of lines.
TEXT_CHUNK: Final = 1 << 20
#: zstd level: the chunks live only until the import writes them.
_LEVEL: Final = 1
_compressor = zstandard.ZstdCompressor(level=_LEVEL)
_decompress = zstandard.ZstdDecompressor().decompress
_T, _E, _V = attrgetter("t"), attrgetter("elapsed"), attrgetter("value")
_KEY = attrgetter("tool", "kind", "metric", "labels", "host")
#: A series: tool, kind, metric, labels (in their order), host.
SeriesKey = tuple[str, str, str, tuple[tuple[str, str], ...], str]


def _compress(raw: bytes) -> bytes:
    # (a copy: zstandard's bytes keeps the allocation of its bound, about the raw size)
    return memoryview(_compressor.compress(raw)).tobytes()


class SeriesTable:
    """The series of an import, numbered."""

    def __init__(self) -> None:
        self.ids: dict[SeriesKey, int] = {}
        self.keys: list[SeriesKey] = []

    def id_of(self, sample: Sample) -> int:
        tool, kind, metric, labels, host = _KEY(sample)
        key = (tool, kind, metric, tuple(labels.items()), host)
        sid = self.ids.get(key)
        if sid is None:
            sid = self.ids[key] = len(self.keys)
            self.keys.append(key)
        return sid


class SampleStore:
    """A run's samples, in the order they were added, each with the stream (an index the
    caller gives: which file and parser) that gave it."""

    __slots__ = ("_chunks", "_open", "_stream", "_table", "count")

    def __init__(self, table: SeriesTable) -> None:
        self._table = table
        self._chunks: list[tuple[int, int, bytes]] = []  # (stream, samples, the chunk)
        self._open: list[Sample] = []
        self._stream = -1
        self.count = 0

    def add(self, stream: int, sample: Sample) -> None:
        if stream != self._stream:
            self.seal()
            self._stream = stream
        self._open.append(sample)
        self.count += 1
        if len(self._open) >= CHUNK:
            self.seal()

    def seal(self) -> None:
        """Keep the samples added since the last chunk as a chunk."""
        samples = self._open
        if not samples:
            return
        extra = [(i, s.duration, s.histogram) for i, s in enumerate(samples)
                 if s.duration is not None or s.histogram is not None]
        histograms = HistogramEncoder()
        extras = []
        for i, duration, histogram in extra:
            blob = None
            if histogram is not None:
                out = bytearray()
                histograms.encode(out, histogram)
                blob = bytes(out)
            extras.append((i, duration, blob))
        columns = (list(map(self._table.id_of, samples)), list(map(_T, samples)),
                   list(map(_E, samples)), list(map(_V, samples)), extras)
        self._chunks.append((self._stream, len(samples), _compress(marshal.dumps(columns))))
        self._open = []

    def extend_store(self, other: SampleStore) -> None:
        """Take ``other``'s samples after these (its streams are its own)."""
        self.seal()
        other.seal()
        self._chunks += other._chunks
        self.count += other.count

    def stream_count(self, stream: int) -> int:
        """How many samples ``stream`` gave."""
        return sum(n for s, n, _ in self._chunks if s == stream) \
            + (len(self._open) if self._stream == stream else 0)

    def __iter__(self) -> Iterator[tuple[int, Sample]]:
        """(stream, sample) of every sample: the samples of each stream in the order they
        were added, the streams in their order (the samples are new objects: read twice, a
        store gives equal samples, not the same ones)."""
        return self.iter_from(0)

    def iter_from(self, start: int) -> Iterator[tuple[int, Sample]]:
        """As iterating the store, from its ``start``-th sample on (the chunks before it
        are not read)."""
        self.seal()
        keys = self._table.keys
        at = 0
        for stream, n, chunk in sorted(self._chunks, key=_stream_of):  # (a stable sort)
            if at + n <= start:
                at += n
                continue
            sids, ts, es, vs, extras = marshal.loads(_decompress(chunk))
            out = []
            for sid, t, e, v in zip(sids, ts, es, vs, strict=True):
                tool, kind, metric, labels, host = keys[sid]
                out.append(Sample(t, tool, kind, metric, v, dict(labels), host, e))
            for i, duration, blob in extras:
                out[i].duration = duration
                if blob is not None:
                    out[i].histogram = RecordedHistogram(blob)
            for s in out[max(start - at, 0):]:
                yield stream, s
            at += n


def _stream_of(chunk: tuple[int, int, bytes]) -> int:
    return chunk[0]


class TextStore:
    """A run's raw text: its lines, in order, in compressed chunks."""

    __slots__ = ("_chunks", "_open", "_size", "lines")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._open: list[str] = []
        self._size = 0
        self.lines = 0

    def extend(self, lines: list[str]) -> None:
        self._open.extend(lines)
        self.lines += len(lines)
        self._size += sum(map(len, lines))
        if self._size >= TEXT_CHUNK:
            self.seal()

    def extend_store(self, other: TextStore) -> None:
        """Take ``other``'s lines after these."""
        self.seal()
        other.seal()
        self._chunks += other._chunks
        self.lines += other.lines

    def seal(self) -> None:
        if self._open:
            text = "\n".join(self._open).encode("utf-8", "surrogatepass")
            self._chunks.append(_compress(text))
            self._open, self._size = [], 0

    def chunks(self) -> Iterator[list[str]]:
        """The lines, a chunk (about ``TEXT_CHUNK`` characters) at a time; one empty chunk
        for a run without text."""
        self.seal()
        if not self._chunks:
            yield []
            return
        for chunk in self._chunks:
            yield _decompress(chunk).decode("utf-8", "surrogatepass").split("\n")
