"""The body of a DATA frame: about a second of records, columnar (docs/session-format.md);
this module encodes it, ``decoder.py`` decodes it.

A segment (about a minute) is one zstd stream; each DATA frame carries the next piece of it,
and that piece decompresses to one frame body: the records that reached the recorder since the
previous frame, in arrival order. Strings and series (host, tool, kind, metric, labels) are
numbered per segment: a frame defines the ones it is the first to use, so a segment decodes on
its own. Samples are stored by column (series ids, times, values by kind of number,
histograms), which is what makes the file small:

- a value that is an integer (counts, iostat r/s) is a zigzag varint; one that is a fio
  latency bucket in seconds (percentiles) is that bucket's index; one whose shortest decimal
  form has at most 15 digits (iostat's ``2.73``) is mantissa and exponent; anything else is
  its 8 bytes, byte-shuffled. Each is checked to decode to the very same float.
- a sample time or elapsed is an index into the frame's table of distinct values (a batch of
  samples shares one or two).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from math import copysign, isnan
from operator import attrgetter
from typing import Final, NamedTuple, cast

import orjson

from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording.histcodec import (
    FIO_BUCKETS,
    HistogramEncoder,
)
from benchtui.store.recording.model import Record
from benchtui.store.recording.varint import (
    put_blob,
    put_list,
    put_uvarint,
    put_uvarints,
    shuffle,
    zigzags,
)

TimedRecord = tuple[float, Record]

# Record kinds.
SAMPLES: Final = 0
EVENT: Final = 1
OUTPUT: Final = 2

# Value tags (one byte per sample; HAS_HISTOGRAM is or-ed in).
RAW: Final = 0       # 8 bytes, shuffled
INT: Final = 1       # an integral float: zigzag varint
DEC: Final = 2       # m / 10**k: zigzag varint m, varint k
FIO_NS: Final = 3    # FIO_BUCKETS[i] / 1e9: varint i
PYINT: Final = 4     # a Python int (not a float): zigzag varint
HAS_HISTOGRAM: Final = 0x80
#: The exponents a DEC value may have (a writer's have at most ~20: ``ValueColumns`` stores as
#: decimals the values whose repr has no exponent), and 10 ** k for them: a reader refuses a
#: larger one as damage (10 ** k of a damaged k would take for ever).
DEC_EXPONENTS: Final = 64
POW10: Final = tuple(10 ** k for k in range(DEC_EXPONENTS))

_HOST, _TOOL, _KIND, _METRIC, _LABELS, _T, _ELAPSED, _VALUE, _HISTOGRAM, _DURATION = map(
    attrgetter, ("host", "tool", "kind", "metric", "labels", "t", "elapsed", "value",
                 "histogram", "duration"))
_MAX_EXACT: Final = 2**53
NS: Final = 1e9
#: A fio bucket in seconds -> its index: the values stored as FIO_NS (the ones in (0, 1000)
#: that are not integers: those are INT).
_FIO_SECONDS: Final[dict[float, int]] = {
    b / NS: i for i, b in enumerate(FIO_BUCKETS) if 0.0 < b / NS < 1000.0 and b % 10**9}


class SeriesDef(NamedTuple):
    host: str
    tool: str
    kind: str
    metric: str
    labels: tuple[tuple[str, str], ...]


class _Batch(NamedTuple):
    """A batch of samples as ``SegmentEncoder.batch_series`` compares the next with it."""

    hosts: list[str]
    tools: list[str]
    kinds: list[str]
    metrics: list[str]
    labels: list[dict[str, str]]
    label_order: list[tuple[str, ...]]
    sids: list[int]


def _float_key(x: float) -> object:
    """A dict key that tells 0.0 from -0.0 (equal as floats, not as stored bytes)."""
    return x if x else struct.pack("<d", x)


class SegmentEncoder:
    """Encodes the frames of one segment, in order (its string and series tables grow)."""

    def __init__(self, histograms: HistogramEncoder | None = None) -> None:
        #: Shared by a writer's segments (it remembers fio's bucket lists).
        self.histograms = histograms or HistogramEncoder()
        self._strings: dict[str, int] = {}
        self.series_ids: dict[tuple[object, ...], int] = {}
        #: series id -> its definition (labels in the order the samples gave them)
        self.defs: list[SeriesDef] = []
        #: Series whose values were stored raw: the next ones are too, without the tries
        #: (any value may be stored raw; the others are only smaller).
        self.raw_series: set[int] = set()
        self._new_strings: list[str] = []
        self._new_series: list[SeriesDef] = []
        #: (host, tool, size) -> the last batch of it (its series)
        self._batches: dict[tuple[str, str, int], _Batch] = {}

    def string_id(self, s: str) -> int:
        sid = self._strings.get(s)
        if sid is None:
            sid = self._strings[s] = len(self._strings)
            self._new_strings.append(s)
        return sid

    def encode(self, records: Iterable[TimedRecord]) -> bytes:
        """One frame's body: ``records`` (time, record), in order."""
        frame = FrameBuilder(self)
        for t, r in records:
            frame.add(t, r)
        return frame.body()

    def take_definitions(self) -> bytes:
        """The strings and series defined since the last call, encoded (a frame's head)."""
        out = bytearray()
        put_uvarint(out, len(self._new_strings))
        for s in self._new_strings:
            put_blob(out, s.encode("utf-8", "surrogatepass"))
        put_uvarint(out, len(self._new_series))
        for d in self._new_series:
            put_uvarints(out, [self._strings[d.host], self._strings[d.tool],
                               self._strings[d.kind], self._strings[d.metric], len(d.labels)])
            ids: list[int] = []
            for k, v in d.labels:
                ids += (self._strings[k], self._strings[v])
            put_uvarints(out, ids)
        self._new_strings = []
        self._new_series = []
        return bytes(out)

    def batch_series(self, samples: list[Sample]) -> list[int]:
        """The series id of each sample of a batch. A source sends the same series in the same
        order batch after batch (a fio job's interval, an iostat report), so a batch is first
        compared with the previous one of its host, tool and size, by C-level comparisons of
        whole lists (the labels' order too); only a batch unlike it is looked up sample by
        sample (which makes a tuple key per sample: several times slower)."""
        if not samples:
            return []
        hosts, tools, kinds, metrics, labels = (
            list(map(get, samples)) for get in (_HOST, _TOOL, _KIND, _METRIC, _LABELS))
        where = (hosts[0], tools[0], len(samples))
        last = self._batches.get(where)
        if (last is not None and metrics == last.metrics and labels == last.labels
                and hosts == last.hosts and tools == last.tools and kinds == last.kinds
                and list(map(tuple, labels)) == last.label_order):
            return last.sids
        keys = list(zip(hosts, tools, kinds, metrics, map(tuple, map(dict.items, labels)),
                        strict=True))
        found = list(map(self.series_ids.get, keys))
        sids = [self.series_id(k) if sid is None else sid
                for sid, k in zip(found, keys, strict=True)] \
            if None in found else cast(list[int], found)
        self._batches[where] = _Batch(hosts, tools, kinds, metrics,
                                      list(map(dict.copy, labels)),
                                      list(map(tuple, labels)), sids)
        return sids

    def series_id(self, key: tuple[str, str, str, str, tuple[tuple[str, str], ...]]) -> int:
        """The id of the series (host, tool, kind, metric, labels), defined if new."""
        sid = self.series_ids.get(key)
        if sid is None:
            d = SeriesDef(*key)
            for part in (d.host, d.tool, d.kind, d.metric):
                self.string_id(part)
            for k, v in d.labels:
                self.string_id(k)
                self.string_id(v)
            sid = self.series_ids[key] = len(self.series_ids)
            self._new_series.append(d)
            self.defs.append(d)
        return sid


class FrameBuilder:
    """The body of one DATA frame, built a record at a time: the recorder's sinks add each
    record as it arrives (so that no sample stays alive waiting for the frame), its thread
    takes the body when it writes the frame."""

    def __init__(self, enc: SegmentEncoder) -> None:
        self.enc = enc
        self.kinds = bytearray()
        self.times: list[float] = []
        self.rec: list[int] = []
        self.text = bytearray()
        self.jsons = bytearray()
        self.cols = _SampleColumns(enc)

    def __len__(self) -> int:
        return len(self.kinds)

    def add(self, t: float, r: Record) -> list[int] | None:
        """Add a record; for a batch of samples, the series id of each sample."""
        self.times.append(t)
        if isinstance(r, list):
            self.kinds.append(SAMPLES)
            self.rec.append(len(r))
            return self.cols.add(r)
        if isinstance(r, Event):
            self.kinds.append(EVENT)
            j = orjson.dumps(r.to_dict(), default=str, option=orjson.OPT_NON_STR_KEYS)
            self.rec.append(len(j))
            self.jsons += j
        else:
            string = self.enc.string_id
            self.kinds.append(OUTPUT)
            self.rec += (string(r.host), string(r.step), string(r.tool), string(r.role),
                         len(r.lines))
            text = self.text
            for line in r.lines:
                put_blob(text, line.encode("utf-8", "surrogatepass"))
        return None

    def body(self) -> bytes:
        """The frame's bytes, with the strings and series first used in it."""
        body = bytearray()
        put_blob(body, self.enc.take_definitions())
        put_uvarint(body, len(self.kinds))
        body += self.kinds
        body += struct.pack(f"<{len(self.times)}d", *self.times)
        _put_uvarint_blob(body, self.rec)
        self.cols.write(body)
        put_blob(body, self.jsons)
        put_blob(body, self.text)
        self.cols.write_durations(body)
        return bytes(body)


class ValueColumns:
    """Values split by how they are stored: ``tag`` puts a value in the list its tag says
    (the stats blocks store their figures this way too: ``statsframe.py``)."""

    def __init__(self) -> None:
        self.ints: list[int] = []
        self.decs: list[int] = []
        self.fios: list[int] = []
        self.raws: list[float] = []

    def tag(self, v: float) -> int:
        """Store ``v``: its value tag."""
        if type(v) is not float:
            if type(v) is int:
                self.ints.append(v)
                return PYINT
            v = float(v)  # a bool or a float subclass: stored as the float it equals
        if v.is_integer():
            if abs(v) < _MAX_EXACT and (v or copysign(1.0, v) > 0):
                self.ints.append(int(v))
                return INT
            if not v:  # -0.0: only its 8 bytes tell it from 0.0
                self.raws.append(v)
                return RAW
        elif (idx := _FIO_SECONDS.get(v)) is not None:
            self.fios.append(idx)
            return FIO_NS
        r = repr(v)
        if "e" not in r and "n" not in r:
            whole, _, frac = r.partition(".")
            m = int(whole + frac)
            if abs(m) < _MAX_EXACT and m / 10 ** len(frac) == v:
                self.decs += (m + m if m >= 0 else -m - m - 1, len(frac))
                return DEC
        self.raws.append(v)
        return RAW


class _SampleColumns(ValueColumns):
    """The samples of one frame, split into columns as they are added."""

    def __init__(self, enc: SegmentEncoder) -> None:
        super().__init__()
        self.enc = enc
        self.sids: list[int] = []
        self.t_idx: list[int] = []
        self.e_idx: list[int] = []
        self.t_table: dict[object, int] = {None: 0}
        self.e_table: dict[object, int] = {None: 0}
        self.t_values: list[float] = []
        self.e_values: list[float] = []
        self.tags = bytearray()
        self.hists = bytearray()
        #: (index of the sample in the frame, its duration): the few samples with one.
        self.durations: list[tuple[int, float]] = []

    def add(self, samples: list[Sample]) -> list[int]:
        """Split ``samples`` into the columns; their series ids. This runs in the recorder's
        sink, on the live path, so the per-sample attribute reads, series and time lookups are
        ``map`` calls (C loops); only the choice of each value's encoding is a Python loop."""
        enc = self.enc
        sids = enc.batch_series(samples)
        self.sids += sids
        _index_times(list(map(_T, samples)), self.t_table, self.t_values, self.t_idx)
        _index_times(list(map(_ELAPSED, samples)), self.e_table, self.e_values, self.e_idx)
        raw_sids = enc.raw_series
        raws = self.raws
        tags = self.tags
        start = len(tags)
        fios = self.fios
        fio_index = _FIO_SECONDS.get
        value_tag = self.tag
        for sid, v in zip(sids, map(_VALUE, samples), strict=True):
            if type(v) is float:  # the common cases first, inline
                if sid in raw_sids:
                    raws.append(v)  # a series of noisy floats (fio's iops): no more tries
                    tags.append(RAW)
                    continue
                idx = fio_index(v)
                if idx is not None:  # a fio latency percentile
                    fios.append(idx)
                    tags.append(FIO_NS)
                    continue
            tag = value_tag(v)
            if tag == RAW:
                raw_sids.add(sid)
            tags.append(tag)
        durations = list(map(_DURATION, samples))
        if durations.count(None) != len(durations):
            self.durations += [(i, float(d)) for i, d in enumerate(durations, start)
                               if d is not None]
        histograms = list(map(_HISTOGRAM, samples))
        if histograms.count(None) != len(histograms):
            encode = enc.histograms.encode
            for i, h in enumerate(histograms, start):
                if h is not None:
                    tags[i] |= HAS_HISTOGRAM
                    blob = bytearray()
                    encode(blob, h)
                    put_blob(self.hists, blob)
        return sids

    def write(self, body: bytearray) -> None:
        _put_uvarint_blob(body, self.sids)
        for idx, values in ((self.t_idx, self.t_values), (self.e_idx, self.e_values)):
            put_uvarint(body, len(values))
            body += struct.pack(f"<{len(values)}d", *values)
            _put_uvarint_blob(body, idx)
        body += self.tags
        _put_uvarint_blob(body, zigzags(self.ints))
        _put_uvarint_blob(body, self.decs)
        _put_uvarint_blob(body, self.fios)
        body += shuffle(struct.pack(f"<{len(self.raws)}d", *self.raws), 8)
        put_blob(body, self.hists)

    def write_durations(self, body: bytearray) -> None:
        """The durations blob, after the output lines, when a sample has a duration (a
        frame without one ends as frames always did: older readers stop before it)."""
        if self.durations:
            write_durations_blob(body, self.durations)


def write_durations_blob(out: bytearray, durations: Sequence[tuple[int, float]]) -> None:
    """The frame's optional last blob: the samples that cover a partial interval
    (``Sample.duration``), as index gaps (list) then their durations (f64 each)."""
    b = bytearray()
    gaps: list[int] = []
    prev = 0
    for i, _d in durations:
        gaps.append(i - prev)
        prev = i
    put_list(b, gaps)
    b += struct.pack(f"<{len(durations)}d", *(d for _i, d in durations))
    put_blob(out, b)


def _index_times(times: list[float | None], table: dict[object, int], values: list[float],
                 column: list[int]) -> None:
    """Append the index of each time in the frame's table of times (``values``; index 0 is
    None), adding the new ones. A batch shares one or two times: a new one is looked up once,
    not once per sample."""
    found = list(map(table.get, times))
    if None in found:
        for x in dict.fromkeys(times):  # the distinct times, in order
            if x and not isnan(x) and x not in table:  # zeros and NaN: below, one by one
                values.append(x)
                table[x] = len(values)
        found = list(map(table.get, times))
        if None in found:  # 0.0 and -0.0 (told apart by their bytes), NaN
            found = [i if i is not None else _zero_or_nan_index(x, table, values)
                     for i, x in zip(found, times, strict=True)]
    column += cast(list[int], found)


def _zero_or_nan_index(x: float | None, table: dict[object, int], values: list[float]) -> int:
    key = _float_key(cast(float, x))
    found = table.get(key)
    if found is None:
        values.append(cast(float, x))
        found = table[key] = len(values)
    return found


def _put_uvarint_blob(out: bytearray, values: Sequence[int]) -> None:
    """A list of numbers in a blob (so that a reader can skip it without decoding it)."""
    b = bytearray()
    put_list(b, values)
    put_blob(out, b)
