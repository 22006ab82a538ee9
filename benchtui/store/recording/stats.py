"""What a segment holds, in summary: its time ranges, counts, events and gaps.

The writer keeps a ``SegmentStats`` while a segment is open and writes it as the segment's
SEGMENT_END frame (and, at close, in the index); a reader that finds a segment without one
(the recorder died while it was open) builds the same summary by decoding the segment. With
the summaries, ``info``, ``events()`` and ``gaps()`` never have to decode the samples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import attrgetter
from typing import Final

from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording.blocks import PieceInfo, Touched, piece_ok, touched_ok
from benchtui.store.recording.codec import TimedRecord
from benchtui.store.recording.decoder import event_from_dict
from benchtui.store.recording.model import Gap, Record
from benchtui.store.recording.varint import CodecError

_T, _HOST = attrgetter("t"), attrgetter("host")

#: A host that sent samples and then none for longer than this (seconds) has a gap.
GAP_SECONDS: Final = 2.0


@dataclass
class SegmentStats:
    """Summary of one segment. Times are epoch seconds: ``t0``/``t1`` the records' (arrival)
    times, ``st0``/``st1`` the samples' own times (arrival time for a sample without one)."""

    number: int
    #: File offsets: the first DATA frame, and the end of the last one.
    offset: int = 0
    end: int = 0
    frames: int = 0
    t0: float | None = None
    t1: float | None = None
    st0: float | None = None
    st1: float | None = None
    samples: int = 0
    output_lines: int = 0
    #: host -> samples in this segment
    hosts: dict[str, int] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    #: host -> arrival time of its latest batch of samples, as of the end of this segment
    #: (carried from segment to segment, to find gaps that span a boundary).
    last: dict[str, float] = field(default_factory=dict)
    #: The stats blocks this segment holds samples of (``blocks.py``); None when the segment
    #: has no block information (an older writer's, or rebuilt after a crash): then
    #: ``series_stats`` decodes it.
    blocks: list[Touched] | None = None
    #: The STATS frames written at this segment's end: (file offset, the pieces in it).
    stats: list[tuple[int, list[PieceInfo]]] = field(default_factory=list)
    #: The FIGS frames written at this segment's end (its figure track, ``figframe.py``):
    #: (file offset, first and last tick's time).
    figures: list[tuple[int, float, float]] = field(default_factory=list)

    @classmethod
    def after(cls, number: int, previous: SegmentStats | None) -> SegmentStats:
        return cls(number, last=dict(previous.last) if previous else {})

    def add(self, records: Iterable[TimedRecord]) -> None:
        for t, r in records:
            self.add_record(t, r)

    def add_record(self, t: float, r: Record) -> None:
        if self.t0 is None or t < self.t0:
            self.t0 = t
        if self.t1 is None or t > self.t1:
            self.t1 = t
        if isinstance(r, list):
            if r:
                self._add_samples(t, r)
        elif isinstance(r, Event):
            self.events.append(r)
        else:
            self.output_lines += len(r.lines)

    def _add_samples(self, t: float, samples: list[Sample]) -> None:
        self.samples += len(samples)
        times = list(map(_T, samples))
        if None in times:
            times = [t if st is None else st for st in times]
        # min and max fold as "if st < lo: lo = st" would, sample by sample (NaN included)
        self.st0 = min(times) if self.st0 is None else min(chain((self.st0,), times))
        self.st1 = max(times) if self.st1 is None else max(chain((self.st1,), times))
        names = list(map(_HOST, samples))
        per = ({names[0]: len(names)} if names.count(names[0]) == len(names)
               else Counter(names))
        hosts, last = self.hosts, self.last
        for host, n in per.items():
            hosts[host] = hosts.get(host, 0) + n
            before = last.get(host)
            if before is not None and t - before > GAP_SECONDS:
                self.gaps.append(Gap(host, before, t))
            if before is None or t > before:
                last[host] = t

    def to_json(self) -> dict[str, object]:
        return {"segment": self.number, "offset": self.offset, "end": self.end,
                "frames": self.frames, "t0": self.t0, "t1": self.t1, "st0": self.st0,
                "st1": self.st1, "samples": self.samples, "output_lines": self.output_lines,
                "hosts": self.hosts, "events": [e.to_dict() for e in self.events],
                "gaps": [[g.host, g.t0, g.t1] for g in self.gaps], "last": self.last,
                **({} if self.blocks is None else {"blocks": [list(b) for b in self.blocks]}),
                **({"stats": [[at, [list(p) for p in pieces]] for at, pieces in self.stats]}
                   if self.stats else {}),
                **({"figures": [list(f) for f in self.figures]} if self.figures else {})}

    @classmethod
    def from_json(cls, d: object, *, strict: bool = False) -> SegmentStats:
        """A summary from its JSON form; ``ValueError`` (its reason in words) when it is not
        what a summary must be: an object whose counts are whole numbers, whose times are
        finite, whose hosts, events, gaps and figure-track frames have their types. Its
        stats-block lists are checked only when ``strict`` (``info --verify``): a reader
        that opens a file checks them when it first needs them (``blockread.BlockIndex``),
        and uses none of a malformed list."""
        if not isinstance(d, Mapping):
            raise ValueError("its JSON is not an object")
        try:
            hosts, last = _mapping(d, "hosts"), _mapping(d, "last")
            events, gaps = _sequence(d, "events"), _sequence(d, "gaps")
            return cls(_count(d, "segment"), _count(d, "offset"), _count(d, "end"),
                       _count(d, "frames"), _time(d, "t0"), _time(d, "t1"), _time(d, "st0"),
                       _time(d, "st1"), _count(d, "samples"), _count(d, "output_lines", 0),
                       {str(k): _whole(v, "hosts") for k, v in hosts.items()},
                       [_event(e) for e in events],
                       [_gap(g) for g in gaps],
                       {str(k): _finite(v, "last") for k, v in last.items()},
                       *_blocks_from_json(d, strict), _figures_from_json(d))
        except TypeError as exc:  # (a list of the wrong shape, ...)
            raise ValueError(f"it is malformed ({exc})") from None


def _whole(v: object, key: str) -> int:
    if type(v) is not int or v < 0:
        raise ValueError(f"its '{key}' holds {v!r}, not a count")
    return v


def _count(d: Mapping[str, object], key: str, default: int | None = None) -> int:
    if key not in d and default is not None:
        return default
    if key not in d:
        raise ValueError(f"it has no '{key}'")
    return _whole(d[key], key)


def _finite(v: object, key: str) -> float:
    if type(v) not in (int, float) or not math.isfinite(v):  # type: ignore[arg-type]
        raise ValueError(f"its '{key}' holds {v!r}, not a time")
    return float(v)  # type: ignore[arg-type]


def _time(d: Mapping[str, object], key: str) -> float | None:
    v = d.get(key)
    return None if v is None else _finite(v, key)


def _triple(v: object, key: str) -> list[object]:
    if type(v) is not list or len(v) != 3:
        raise ValueError(f"its '{key}' holds {str(v)[:60]}, not a list of three")
    return v


def _gap(g: object) -> Gap:
    host, t0, t1 = _triple(g, "gaps")
    return Gap(str(host), _finite(t0, "gaps"), _finite(t1, "gaps"))


def _event(e: object) -> Event:
    try:
        return event_from_dict(e)
    except CodecError:
        raise ValueError(f"its 'events' holds {str(e)[:60]}, not an event") from None


def _mapping(d: Mapping[str, object], key: str) -> Mapping[str, object]:
    v = d.get(key) or {}
    if not isinstance(v, dict):
        raise ValueError(f"its '{key}' is not an object")
    return v


def _sequence(d: Mapping[str, object], key: str) -> list[object]:
    v = d.get(key) or []
    if not isinstance(v, list):
        raise ValueError(f"its '{key}' is not a list")
    return v


def _figures_from_json(d: Mapping[str, object]) -> list[tuple[int, float, float]]:
    """A summary's FIGS frames."""
    return [(_whole(at, "figures"), _finite(t0, "figures"), _finite(t1, "figures"))
            for at, t0, t1 in map(_triple, _sequence(d, "figures"), repeat("figures"))]


def _blocks_from_json(d: Mapping[str, object], strict: bool
                      ) -> tuple[list[Touched] | None, list[tuple[int, list[PieceInfo]]]]:
    """A summary's stats-block lists, as they are (a reader opening a file must not spend
    time on them: ``blockread.BlockIndex`` checks their types when ``series_stats`` first
    needs them); lists of the wrong length are dropped (the segment is decoded). ``strict``:
    ``ValueError`` for any entry of the wrong shape or type."""
    blocks, stats = d.get("blocks"), d.get("stats")
    try:
        touched = blocks if isinstance(blocks, list) else None  # (JSON lists: not copied)
        frames = [] if not isinstance(stats, list) else [
            (_whole(at, "stats"), list(map(PieceInfo._make, pieces))) for at, pieces in stats]
    except (TypeError, ValueError):
        if strict:
            raise ValueError("its stats-block lists ('blocks', 'stats') are malformed") from None
        return None, []
    if strict and ((blocks is not None and touched is None)
                   or not all(map(touched_ok, touched or ()))
                   or not all(piece_ok(p) for _, pieces in frames for p in pieces)):
        raise ValueError("its stats-block lists ('blocks', 'stats') are malformed")
    return touched, frames
