"""What a segment holds, in summary: its time ranges, counts, events and gaps.

The writer keeps a ``SegmentStats`` while a segment is open and writes it as the segment's
SEGMENT_END frame (and, at close, in the index); a reader that finds a segment without one
(the recorder died while it was open) builds the same summary by decoding the segment. With
the summaries, ``info``, ``events()`` and ``gaps()`` never have to decode the samples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Final

from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording.blocks import PieceInfo, Touched
from benchtui.store.recording.codec import TimedRecord
from benchtui.store.recording.decoder import event_from_dict
from benchtui.store.recording.model import Gap, Record

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
    def from_json(cls, d: Mapping[str, object]) -> SegmentStats:
        """Raises KeyError/TypeError/ValueError on a malformed summary."""
        def opt(key: str) -> float | None:
            v = d.get(key)
            return None if v is None else float(v)  # type: ignore[arg-type]

        hosts = d.get("hosts") or {}
        last = d.get("last") or {}
        events = d.get("events") or []
        gaps = d.get("gaps") or []
        if not (isinstance(hosts, dict) and isinstance(last, dict) and isinstance(events, list)
                and isinstance(gaps, list)):
            raise TypeError("malformed segment summary")
        return cls(int(d["segment"]), int(d["offset"]), int(d["end"]),  # type: ignore[call-overload]
                   int(d["frames"]), opt("t0"), opt("t1"),  # type: ignore[call-overload]
                   opt("st0"), opt("st1"), int(d["samples"]),  # type: ignore[call-overload]
                   int(d.get("output_lines", 0)),  # type: ignore[call-overload]
                   {str(k): int(v) for k, v in hosts.items()},
                   [event_from_dict(e) for e in events],
                   [Gap(str(h), float(a), float(b)) for h, a, b in gaps],
                   {str(k): float(v) for k, v in last.items()},
                   *_blocks_from_json(d), _figures_from_json(d))


def _figures_from_json(d: Mapping[str, object]) -> list[tuple[int, float, float]]:
    """A summary's FIGS frames; none when the list is malformed (the ghost then computes
    the figures from the samples)."""
    figures = d.get("figures")
    if not isinstance(figures, list):
        return []
    try:
        return [(int(at), float(t0), float(t1)) for at, t0, t1 in figures]
    except (TypeError, ValueError):
        return []


def _blocks_from_json(d: Mapping[str, object]
                      ) -> tuple[list[Touched] | None, list[tuple[int, list[PieceInfo]]]]:
    """A summary's stats-block lists, as they are (a reader opening a file must not spend
    time on them: ``blockread.BlockIndex`` checks their types when ``series_stats`` first
    needs them); lists of the wrong length are dropped (the segment is decoded)."""
    blocks, stats = d.get("blocks"), d.get("stats")
    try:
        touched = blocks if isinstance(blocks, list) else None  # (JSON lists: not copied)
        frames = [] if not isinstance(stats, list) else [
            (int(at), list(map(PieceInfo._make, pieces))) for at, pieces in stats]
    except (TypeError, ValueError):
        return None, []
    return touched, frames
