"""The newest point of every series in a span of a recording: what replay shows at once after
a seek (``SessionReader.newest_records``).

What the console shows as current values is each series' newest point (and each host's newest
latency histogram), taken when that point is at most a few seconds old. So the state shown
right after a seek needs, of the last seconds before the place, every event and raw output
record but of the samples only each series' last one: ``newest_records`` gives the records of
a span as ``SessionReader.timed_records`` does, in the same order, with each batch of samples
keeping only the samples that no later sample of the span supersedes (every end-of-run summary
is kept: the store keeps them all). Fed to a ``FleetState``, they give it the same current
values, latency histograms, host states and times as all the span's records would, for about
a third of the samples made and fed (1 Hz tools, 3 s).

It reads each frame of the span in two goes (``SegmentDecoder.scan``, then ``finish`` with a
mask): the series of every sample first, newest frame first, to find each series' last
sample; then only those samples are made. Frames before the span in its first segment are
only skipped (their definitions), as ``timed_records`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from benchtui.model.sample import SUMMARY
from benchtui.store.recording import format as fmt
from benchtui.store.recording.codec import SeriesDef, TimedRecord
from benchtui.store.recording.decoder import FrameScan, SegmentDecoder
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.varint import CodecError


class Frames(Protocol):
    """What is read of a recording (``SessionReader``'s, which calls ``newest_records``;
    named here so that this module does not import the reader that imports it)."""

    def _overlapping(self, t0: float, t1: float) -> Iterator[SegmentStats]: ...

    def _bodies(self, seg: SegmentStats) -> Iterable[tuple[fmt.FrameHeader, bytes]]: ...

    def _warn_damage(self, seg: SegmentStats, h: fmt.FrameHeader | None,
                     at: int | None = None) -> None: ...

#: What a series id of a segment is, once met in the backwards pass.
_UNSEEN, _SUPERSEDED, _SUMMARY = 0, 1, 2


def newest_records(reader: Frames, t0: float, t1: float) -> list[TimedRecord]:
    """The records of ``[t0, t1)``, each batch of samples holding only the samples that are
    the last of their series in the span (and every summary sample); events and raw output
    whole. A batch left empty is left out."""
    scans = _scan(reader, t0, t1)
    masks = _masks(scans, t0, t1)
    out: list[TimedRecord] = []
    for (decoder, scan), mask in zip(scans, masks, strict=True):
        try:
            records = decoder.finish(scan, mask=mask)
        except CodecError:  # the scan read this frame whole: damage shows there already
            continue
        out.extend((t, r) for t, r in records if t0 <= t < t1)
    return out


def _scan(reader: Frames, t0: float, t1: float
          ) -> list[tuple[SegmentDecoder, FrameScan]]:
    """Every frame with records in the span, scanned (with its segment's decoder)."""
    scans: list[tuple[SegmentDecoder, FrameScan]] = []
    for seg in reader._overlapping(t0, t1):
        decoder = SegmentDecoder()
        for h, body in reader._bodies(seg):
            if h.t_first >= t1 + fmt.LATE_SECONDS:
                break
            try:
                if h.t_last < t0 or h.t_first >= t1:
                    decoder.skip(body)
                    continue
                scans.append((decoder, decoder.scan(body)))
            except CodecError:
                reader._warn_damage(seg, h)
                break
    return scans


def _masks(scans: list[tuple[SegmentDecoder, FrameScan]], t0: float,
           t1: float) -> list[list[bool]]:
    """For each scanned frame, which of its samples to make: walking the span backwards,
    the first sample met of each series (its last), and every summary."""
    seen: set[SeriesDef] = set()
    met: dict[int, bytearray] = {}  # per decoder (segment): series id -> _UNSEEN ...
    masks: list[list[bool]] = []
    for decoder, scan in reversed(scans):
        series = decoder.series
        state = met.get(id(decoder))
        if state is None or len(state) < len(series):
            grown = bytearray(len(series))
            if state is not None:
                grown[:len(state)] = state
            state = met[id(decoder)] = grown
        sids = scan.sids
        mask = [False] * len(sids)
        for _i, t, first, end in reversed(scan.batches()):
            if not t0 <= t < t1:
                continue
            for i in range(end - 1, first - 1, -1):
                sid = sids[i]
                how = state[sid]
                if how == _SUPERSEDED:
                    continue
                if how == _UNSEEN:
                    d = series[sid]
                    if d.kind == SUMMARY:
                        how = state[sid] = _SUMMARY
                    else:
                        state[sid] = _SUPERSEDED
                        if d in seen:
                            continue
                        seen.add(d)
                mask[i] = True
        masks.append(mask)
    masks.reverse()
    return masks
