"""Decoding DATA frame bodies (the layout is in ``codec.py`` and docs/session-format.md).

A ``SegmentDecoder`` follows one segment from its first frame: each frame may define strings
and series the later ones use. A reader that wants only some frames still passes the earlier
ones to ``skip``, which reads their definitions and nothing else. Histograms are left encoded
(``RecordedHistogram``) until someone reads their counts.

A reader that wants only some of a frame's samples (replay's newest point of each series,
``newest.py``) reads the frame in two goes: ``scan`` (definitions, record table, each sample's
series) and ``finish`` with a mask of the samples to make: the others are never built.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat

import orjson

from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.store.recording.codec import (
    DEC,
    DEC_EXPONENTS,
    EVENT,
    FIO_NS,
    HAS_HISTOGRAM,
    INT,
    NS,
    OUTPUT,
    POW10,
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


@dataclass(frozen=True, slots=True)
class FrameScan:
    """A frame body read up to its sample columns: the records' kinds, times and table, and
    the series id of each sample (``SegmentDecoder.scan``)."""

    body: bytes
    #: Where the sample columns start (at the series ids).
    pos: int
    kinds: bytes
    times: tuple[float, ...]
    rec: list[int]
    sids: list[int]

    def batches(self) -> list[tuple[int, float, int, int]]:
        """(record index, time, first sample, end) of each batch of samples, in order."""
        out = []
        ri = si = 0
        rec = self.rec
        for i, (kind, t) in enumerate(zip(self.kinds, self.times, strict=True)):
            if kind == SAMPLES:
                out.append((i, t, si, si + rec[ri]))
                si += rec[ri]
            ri += 5 if kind == OUTPUT else 1
        return out


class SegmentDecoder:
    """Decodes the frames of one segment, in order: every frame must pass through ``decode``
    or ``skip`` (they define the strings and series later frames use)."""

    def __init__(self, series_filter: SeriesFilter | None = None) -> None:
        self.strings: list[str] = []
        self.series: list[SeriesDef] = []
        self._keep: list[bool] = []
        self._filter = series_filter
        #: A list of labels by the bytes of its string ids (a segment's hosts share them).
        self._labels: dict[bytes, tuple[tuple[str, str], ...]] = {}

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
        if not n:
            return end
        # A segment's first frame defines ~100 series a host: one byte a string id while a
        # segment has fewer than 128 strings (then no varint to undo), and the hosts share
        # their label lists (``_labels``, by their ids' bytes).
        found: list[SeriesDef] = []
        labels_of = self._labels
        get = strings.__getitem__
        try:
            for _ in range(n):
                head = defs[pos:pos + 5]
                if len(head) == 5 and max(head) < 0x80:
                    host, tool, kind, metric, nl = head
                    pos += 5
                else:
                    (host, tool, kind, metric, nl), pos = get_uvarints(defs, pos, 5)
                raw = defs[pos:pos + 2 * nl]
                if len(raw) == 2 * nl and (not nl or max(raw) < 0x80):
                    pos += 2 * nl
                    labels = labels_of.get(raw)
                    if labels is None:
                        labels = labels_of[raw] = tuple(
                            zip(map(get, raw[0::2]), map(get, raw[1::2]), strict=True))
                else:
                    ids, pos = get_uvarints(defs, pos, 2 * nl)
                    labels = tuple(zip(map(get, ids[0::2]), map(get, ids[1::2]), strict=True))
                found.append(SeriesDef(get(host), get(tool), get(kind), get(metric), labels))
        except IndexError:
            raise CodecError("unknown string id") from None
        self.series += found
        self._keep += [True] * n if self._filter is None else map(self._filter, found)
        return end

    def decode(self, body: bytes, *, samples: bool = True, events: bool = True,
               output: bool = True) -> list[TimedRecord]:
        """The frame's records in order (the kinds not wanted are left out; a batch of
        samples that the series filter empties is left out too)."""
        return self.finish(self.scan(body), samples=samples, events=events, output=output)

    def scan(self, body: bytes) -> FrameScan:
        """Read the frame's definitions and record table, and the series of its samples;
        ``finish`` decodes the rest. Frames are scanned in order (like ``decode``)."""
        try:
            pos = self._defs(body)
            n, pos = get_uvarint(body, pos)
            kinds = body[pos:pos + n]
            pos += n
            times = struct.unpack_from(f"<{n}d", body, pos)
            pos += 8 * n
            rec, pos = _get_uvarint_blob(body, pos)
            n_samples = _count_samples(kinds, rec)
            sids, _ = _get_uvarint_blob(body, pos)
        except (IndexError, ValueError, struct.error, UnicodeDecodeError) as exc:
            if isinstance(exc, CodecError):
                raise
            raise CodecError(f"malformed frame body: {exc}") from None
        if len(sids) != n_samples:
            raise CodecError("sample columns disagree")
        return FrameScan(body, pos, kinds, times, rec, sids)

    def finish(self, scan: FrameScan, *, samples: bool = True, events: bool = True,
               output: bool = True, mask: Sequence[bool] | None = None) -> list[TimedRecord]:
        """``decode`` of a scanned frame; with ``mask`` (one flag per sample), only the
        samples flagged are made (a batch left empty is left out)."""
        try:
            return self._decode(scan, samples, events, output, mask)
        except (IndexError, ValueError, struct.error, UnicodeDecodeError, orjson.JSONDecodeError,
                StopIteration) as exc:
            if isinstance(exc, CodecError):
                raise
            raise CodecError(f"malformed frame body: {exc}") from None

    def _decode(self, scan: FrameScan, want_samples: bool, want_events: bool,
                want_output: bool, mask: Sequence[bool] | None) -> list[TimedRecord]:
        body, kinds, times, rec = scan.body, scan.kinds, scan.times, scan.rec
        if want_samples and mask is not None and not any(mask):
            want_samples = False
        samples, pos = self._samples(body, scan.pos, scan.sids, want_samples, mask)
        jsons, pos = get_blob(body, pos)
        text, pos = get_blob(body, pos)
        if want_samples and pos < len(body):
            _set_durations(body, pos, samples)
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

    def _samples(self, body: bytes, pos: int, sids: list[int], want: bool,
                 mask: Sequence[bool] | None = None) -> tuple[list[Sample | None], int]:
        """The samples whose columns start at ``pos`` (their series ids, ``sids``, as
        ``scan`` read them), and the position after their columns."""
        n = len(sids)
        if not want:
            return [], _skip_samples(body, pos, n)
        _, pos = get_blob(body, pos)  # the series ids: read by ``scan``
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
        if not len(t_idx) == len(e_idx) == len(tags) == n:
            raise CodecError("sample columns disagree")
        if mask is not None and len(mask) != n:
            raise CodecError("sample mask disagrees with the samples")
        series = self.series
        keep = self._keep
        buckets = FIO_BUCKETS
        out: list[Sample | None] = []
        hpos = 0
        flags = repeat(True) if mask is None else mask  # lengths checked above
        for sid, ti, ei, tag, wanted in zip(sids, t_idx, e_idx, tags, flags, strict=False):
            kind = tag & 0x7F
            value: float
            if kind == RAW:
                value = next(raw_it)
            elif kind == INT:
                value = float(next(ints))
            elif kind == DEC:
                z, k = next(decs), next(decs)
                if k >= DEC_EXPONENTS:
                    raise CodecError(f"decimal exponent {k} out of range")
                value = (z >> 1 if not z & 1 else -((z + 1) >> 1)) / POW10[k]
            elif kind == FIO_NS:
                value = buckets[next(fios)] / NS
            elif kind == PYINT:
                value = next(ints)
            else:
                raise CodecError(f"unknown value tag {tag}")
            hist = None
            if tag & HAS_HISTOGRAM:
                blob, hpos = get_blob(hists, hpos)
                if wanted:
                    hist = RecordedHistogram(blob)
            if not (wanted and keep[sid]):
                out.append(None)
                continue
            d = series[sid]
            out.append(Sample(t_values[ti], d.tool, d.kind, d.metric, value, dict(d.labels),
                              d.host, e_values[ei], hist))
        return out, pos


def _set_durations(body: bytes, pos: int, samples: list[Sample | None]) -> None:
    """Read the frame's durations blob (``codec.write_durations_blob``) into its samples."""
    blob, _ = get_blob(body, pos)
    gaps, at = get_list(blob, 0)
    found = struct.unpack_from(f"<{len(gaps)}d", blob, at)
    i = 0
    for gap, d in zip(gaps, found, strict=True):
        i += gap
        if i >= len(samples):
            raise CodecError("a duration for a sample the frame does not have")
        s = samples[i]
        if s is not None:
            s.duration = d


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


#: An event's time beyond this many seconds from 1970 is damage (the year 5138).
_MOST_SECONDS = 1e11


def event_from_dict(d: object) -> Event:
    """An event from its ``to_dict()`` form; ``CodecError`` when it is not an object with a
    time (a finite one, within a few thousand years of 1970)."""
    t = d.get("t") if isinstance(d, dict) else None
    if not isinstance(t, int | float) or not -_MOST_SECONDS < t < _MOST_SECONDS:
        raise CodecError("malformed event")
    assert isinstance(d, dict)
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
