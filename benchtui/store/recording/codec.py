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
from collections.abc import Sequence
from math import copysign
from operator import attrgetter
from typing import Final, NamedTuple, cast

import orjson

from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording.histcodec import (
    FIO_BUCKETS,
    FIO_INDEX,
    encode_histogram,
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

_HOST, _TOOL, _KIND, _METRIC, _LABELS, _T, _ELAPSED, _VALUE, _HISTOGRAM = map(
    attrgetter, ("host", "tool", "kind", "metric", "labels", "t", "elapsed", "value",
                 "histogram"))
_MAX_EXACT: Final = 2**53
NS: Final = 1e9


class SeriesDef(NamedTuple):
    host: str
    tool: str
    kind: str
    metric: str
    labels: tuple[tuple[str, str], ...]


def _float_key(x: float) -> object:
    """A dict key that tells 0.0 from -0.0 (equal as floats, not as stored bytes)."""
    return x if x else struct.pack("<d", x)


class SegmentEncoder:
    """Encodes the frames of one segment, in order (its string and series tables grow)."""

    def __init__(self) -> None:
        self._strings: dict[str, int] = {}
        self.series_ids: dict[tuple[object, ...], int] = {}
        #: Series whose values were stored raw: the next ones are too, without the tries
        #: (any value may be stored raw; the others are only smaller).
        self.raw_series: set[int] = set()
        self._new_strings: list[str] = []
        self._new_series: list[SeriesDef] = []

    def _string(self, s: str) -> int:
        sid = self._strings.get(s)
        if sid is None:
            sid = self._strings[s] = len(self._strings)
            self._new_strings.append(s)
        return sid

    def encode(self, records: Sequence[TimedRecord]) -> bytes:
        kinds = bytearray()
        rec: list[int] = []
        text = bytearray()
        jsons = bytearray()
        cols = _SampleColumns(self)
        for _t, r in records:
            if isinstance(r, list):
                kinds.append(SAMPLES)
                rec.append(len(r))
                cols.add(r)
            elif isinstance(r, Event):
                kinds.append(EVENT)
                j = orjson.dumps(r.to_dict(), default=str, option=orjson.OPT_NON_STR_KEYS)
                rec.append(len(j))
                jsons += j
            else:
                kinds.append(OUTPUT)
                rec += (self._string(r.host), self._string(r.step), self._string(r.tool),
                        self._string(r.role), len(r.lines))
                for line in r.lines:
                    put_blob(text, line.encode("utf-8", "surrogatepass"))
        body = bytearray()
        put_blob(body, self._defs())
        put_uvarint(body, len(records))
        body += kinds
        body += struct.pack(f"<{len(records)}d", *(t for t, _ in records))
        _put_uvarint_blob(body, rec)
        cols.write(body)
        put_blob(body, jsons)
        put_blob(body, text)
        return bytes(body)

    def _defs(self) -> bytes:
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

    def series_id(self, key: tuple[str, str, str, str, tuple[tuple[str, str], ...]]) -> int:
        """The id of the series (host, tool, kind, metric, labels), defined if new."""
        sid = self.series_ids.get(key)
        if sid is None:
            d = SeriesDef(*key)
            for part in (d.host, d.tool, d.kind, d.metric):
                self._string(part)
            for k, v in d.labels:
                self._string(k)
                self._string(v)
            sid = self.series_ids[key] = len(self.series_ids)
            self._new_series.append(d)
        return sid


class _SampleColumns:
    """The samples of one frame, split into columns as they are added."""

    def __init__(self, enc: SegmentEncoder) -> None:
        self.enc = enc
        self.sids: list[int] = []
        self.t_idx: list[int] = []
        self.e_idx: list[int] = []
        self.t_table: dict[object, int] = {}
        self.e_table: dict[object, int] = {}
        self.t_values: list[float] = []
        self.e_values: list[float] = []
        self.tags = bytearray()
        self.ints: list[int] = []
        self.decs: list[int] = []
        self.fios: list[int] = []
        self.raws: list[float] = []
        self.hists = bytearray()

    def add(self, samples: list[Sample]) -> None:
        """Split ``samples`` into the columns. The recorder's thread spends its time here, so
        the per-sample attribute reads, series and time lookups are ``map`` calls (C loops);
        only the choice of each value's encoding is a Python loop."""
        enc = self.enc
        keys = list(zip(map(_HOST, samples), map(_TOOL, samples), map(_KIND, samples),
                        map(_METRIC, samples), map(tuple, map(dict.items, map(_LABELS, samples))),
                        strict=True))
        found_sids = list(map(enc.series_ids.get, keys))
        sids: list[int] = [enc.series_id(k) if sid is None else sid
                           for sid, k in zip(found_sids, keys, strict=True)] \
            if None in found_sids else cast(list[int], found_sids)
        self.sids += sids
        for attr, table, values, column in ((_T, self.t_table, self.t_values, self.t_idx),
                                            (_ELAPSED, self.e_table, self.e_values, self.e_idx)):
            times = list(map(attr, samples))
            found = list(map(table.get, times))
            if None in found:  # new times, None, zeros (kept by their bytes), NaN
                column.extend([self._time_index(x, table, values) if i is None else i
                               for i, x in zip(found, times, strict=True)])
            else:
                column.extend(cast(list[int], found))
        raw_sids = enc.raw_series
        raws = self.raws
        tags = self.tags
        value_tag = self._value
        for sid, v, h in zip(sids, map(_VALUE, samples), map(_HISTOGRAM, samples), strict=True):
            if sid in raw_sids and type(v) is float:
                raws.append(v)  # a series of noisy floats (fio's iops): no need to try more
                tag = RAW
            else:
                tag = value_tag(v)
                if tag == RAW:
                    raw_sids.add(sid)
            if h is not None:
                tag |= HAS_HISTOGRAM
                blob = bytearray()
                encode_histogram(blob, h.counts)
                put_blob(self.hists, blob)
            tags.append(tag)

    @staticmethod
    def _time_index(x: float | None, table: dict[object, int], values: list[float]) -> int:
        if x is None:
            return 0
        found = table.get(_float_key(x))
        return found if found is not None else _SampleColumns._new_time(x, table, values)

    @staticmethod
    def _new_time(x: float, table: dict[object, int], values: list[float]) -> int:
        values.append(x)
        i = table[_float_key(x)] = len(values)  # indexes from 1: 0 is None
        return i

    def _value(self, v: float) -> int:
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
        elif 0.0 < v < 1000.0:
            idx = FIO_INDEX.get(round(v * NS))
            if idx is not None and FIO_BUCKETS[idx] / NS == v:
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


def _put_uvarint_blob(out: bytearray, values: Sequence[int]) -> None:
    """A list of numbers in a blob (so that a reader can skip it without decoding it)."""
    b = bytearray()
    put_list(b, values)
    put_blob(out, b)
