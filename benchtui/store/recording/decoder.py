"""Decoding DATA frame bodies (the layout is in ``codec.py`` and docs/session-format.md).

A ``SegmentDecoder`` follows one segment from its first frame: each frame may define strings
and series the later ones use. A reader that wants only some frames still passes the earlier
ones to ``skip``, which reads their definitions and nothing else. Histograms are left encoded
(``RecordedHistogram``) until someone reads their counts.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import orjson

from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.store.recording.codec import (
    DEC,
    EVENT,
    FIO_NS,
    HAS_HISTOGRAM,
    INT,
    NS,
    OUTPUT,
    PYINT,
    RAW,
    SAMPLES,
    SeriesDef,
    TimedRecord,
)
from benchtui.store.recording.histcodec import FIO_BUCKETS, RecordedHistogram
from benchtui.store.recording.varint import (
    CodecError,
    get_blob,
    get_list,
    get_uvarint,
    get_uvarints,
    unshuffle,
    unzigzags,
)

SeriesFilter = Callable[[SeriesDef], bool]


class SegmentDecoder:
    """Decodes the frames of one segment, in order: every frame must pass through ``decode``
    or ``skip`` (they define the strings and series later frames use)."""

    def __init__(self, series_filter: SeriesFilter | None = None) -> None:
        self.strings: list[str] = []
        self.series: list[SeriesDef] = []
        self._keep: list[bool] = []
        self._filter = series_filter

    def skip(self, body: bytes) -> None:
        self._defs(body)

    def _defs(self, body: bytes) -> int:
        defs, end = get_blob(body, 0)
        n, pos = get_uvarint(defs, 0)
        strings = self.strings
        for _ in range(n):
            raw, pos = get_blob(defs, pos)
            strings.append(raw.decode("utf-8", "surrogatepass"))
        n, pos = get_uvarint(defs, pos)
        try:
            for _ in range(n):
                (host, tool, kind, metric, nl), pos = get_uvarints(defs, pos, 5)
                ids, pos = get_uvarints(defs, pos, 2 * nl)
                labels = tuple((strings[ids[i]], strings[ids[i + 1]]) for i in range(0, 2 * nl, 2))
                d = SeriesDef(strings[host], strings[tool], strings[kind], strings[metric], labels)
                self.series.append(d)
                self._keep.append(self._filter is None or self._filter(d))
        except IndexError:
            raise CodecError("unknown string id") from None
        return end

    def decode(self, body: bytes, *, samples: bool = True, events: bool = True,
               output: bool = True) -> list[TimedRecord]:
        """The frame's records in order (the kinds not wanted are left out; a batch of
        samples that the series filter empties is left out too)."""
        try:
            return self._decode(body, samples, events, output)
        except (IndexError, ValueError, struct.error, UnicodeDecodeError, orjson.JSONDecodeError,
                StopIteration) as exc:
            if isinstance(exc, CodecError):
                raise
            raise CodecError(f"malformed frame body: {exc}") from None

    def _decode(self, body: bytes, want_samples: bool, want_events: bool,
                want_output: bool) -> list[TimedRecord]:
        pos = self._defs(body)
        n, pos = get_uvarint(body, pos)
        kinds = body[pos:pos + n]
        pos += n
        times = struct.unpack_from(f"<{n}d", body, pos)
        pos += 8 * n
        rec, pos = _get_uvarint_blob(body, pos)
        n_samples = _count_samples(kinds, rec)
        samples, pos = self._samples(body, pos, n_samples, want_samples)
        jsons, pos = get_blob(body, pos)
        text, pos = get_blob(body, pos)
        out: list[TimedRecord] = []
        strings = self.strings
        ri = si = ji = ti = 0
        for kind, t in zip(kinds, times, strict=True):
            if kind == SAMPLES:
                count = rec[ri]
                ri += 1
                batch = samples[si:si + count]
                si += count
                if want_samples:
                    kept = [s for s in batch if s is not None]
                    if kept:
                        out.append((t, kept))
            elif kind == EVENT:
                size = rec[ri]
                ri += 1
                if want_events:
                    out.append((t, event_from_dict(orjson.loads(jsons[ji:ji + size]))))
                ji += size
            elif kind == OUTPUT:
                host, step, tool, role, nlines = rec[ri:ri + 5]
                ri += 5
                lines = []
                for _ in range(nlines):
                    raw, ti = get_blob(text, ti)
                    lines.append(raw)
                if want_output:
                    out.append((t, OutputLines(
                        t, strings[host], strings[step], strings[tool], strings[role],
                        tuple(x.decode("utf-8", "surrogatepass") for x in lines))))
            else:
                raise CodecError(f"unknown record kind {kind}")
        return out

    def _samples(self, body: bytes, pos: int, n: int,
                 want: bool) -> tuple[list[Sample | None], int]:
        if not want:
            return [], _skip_samples(body, pos, n)
        sids, pos = _get_uvarint_blob(body, pos)
        tables = []
        for _ in range(2):
            count, pos = get_uvarint(body, pos)
            values = (None, *struct.unpack_from(f"<{count}d", body, pos))
            pos += 8 * count
            idx, pos = _get_uvarint_blob(body, pos)
            tables.append((values, idx))
        tags = body[pos:pos + n]
        pos += n
        ints_l, pos = _get_uvarint_blob(body, pos)
        decs_l, pos = _get_uvarint_blob(body, pos)
        fios_l, pos = _get_uvarint_blob(body, pos)
        n_raw = sum(1 for tag in tags if tag & 0x7F == RAW)
        raws = struct.unpack(f"<{n_raw}d", unshuffle(body[pos:pos + 8 * n_raw], 8))
        pos += 8 * n_raw
        hists, pos = get_blob(body, pos)
        (t_values, t_idx), (e_values, e_idx) = tables
        ints = iter(unzigzags(ints_l))
        decs = iter(decs_l)
        fios = iter(fios_l)
        raw_it = iter(raws)
        if not len(sids) == len(t_idx) == len(e_idx) == len(tags) == n:
            raise CodecError("sample columns disagree")
        series = self.series
        keep = self._keep
        buckets = FIO_BUCKETS
        out: list[Sample | None] = []
        hpos = 0
        for sid, ti, ei, tag in zip(sids, t_idx, e_idx, tags, strict=True):
            kind = tag & 0x7F
            value: float
            if kind == RAW:
                value = next(raw_it)
            elif kind == INT:
                value = float(next(ints))
            elif kind == DEC:
                z = next(decs)
                value = (z >> 1 if not z & 1 else -((z + 1) >> 1)) / 10 ** next(decs)
            elif kind == FIO_NS:
                value = buckets[next(fios)] / NS
            elif kind == PYINT:
                value = next(ints)
            else:
                raise CodecError(f"unknown value tag {tag}")
            hist = None
            if tag & HAS_HISTOGRAM:
                blob, hpos = get_blob(hists, hpos)
                hist = RecordedHistogram(blob)
            if not keep[sid]:
                out.append(None)
                continue
            d = series[sid]
            out.append(Sample(t_values[ti], d.tool, d.kind, d.metric, value, dict(d.labels),
                              d.host, e_values[ei], hist))
        return out, pos


def _skip_samples(body: bytes, pos: int, n: int) -> int:
    """The position after the sample columns of ``n`` samples, without decoding them."""
    _, pos = get_blob(body, pos)
    for _ in range(2):
        count, pos = get_uvarint(body, pos)
        pos += 8 * count
        _, pos = get_blob(body, pos)
    tags = body[pos:pos + n]
    pos += n
    for _ in range(3):
        _, pos = get_blob(body, pos)
    pos += 8 * sum(1 for tag in tags if tag & 0x7F == RAW)
    _, pos = get_blob(body, pos)
    return pos


def _count_samples(kinds: bytes, rec: list[int]) -> int:
    """How many samples the frame's batches hold (and a check of the record table)."""
    n = ri = 0
    for kind in kinds:
        if kind == SAMPLES:
            n += rec[ri]
        ri += 5 if kind == OUTPUT else 1
    if ri != len(rec):
        raise CodecError("record table disagrees with the record kinds")
    return n


def event_from_dict(d: object) -> Event:
    """An event from its ``to_dict()`` form."""
    if not isinstance(d, dict) or not isinstance(d.get("t"), int | float):
        raise CodecError("malformed event")
    data, host, step = d.get("data"), d.get("host"), d.get("step")
    return Event(float(d["t"]), str(d.get("kind", "")), str(d.get("message", "")),
                 str(d.get("level", "info")), host if isinstance(host, str) else None,
                 step if isinstance(step, str) else None, data if isinstance(data, dict) else {})


def _get_uvarint_blob(buf: bytes, pos: int) -> tuple[list[int], int]:
    blob, pos = get_blob(buf, pos)
    values, end = get_list(blob, 0)
    if end != len(blob):
        raise CodecError("list length disagrees with its blob")
    return values, pos
