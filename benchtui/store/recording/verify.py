"""``info --verify``: every frame of a session file read and checked, and what the file
says of itself held against what its frames hold (docs/replay.md, docs/session-format.md
"What a reader checks").

Opening a closed file reads its index only; reading a segment checks the frames it reads.
Verifying reads everything:

- every frame, walked from the file header to the trailer (``walk.walk_frames``, thorough):
  both CRCs of each, the metadata and every summary decompressed within bounds and checked
  as JSON of its type, every stats and figure-track frame decompressed and decoded, the
  trailer, damaged bytes between frames, another session appended;
- the index the file was opened by, again, with every list of its summaries checked;
- every data frame of every segment, decompressed and decoded as replay and dump do;
- each segment's summary (the index's, or the frames' own) against its decoded data: the
  samples and events it counts must be those its data frames hold (a summary that lies, a
  forged index, is said; the data are what dump and replay give).
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Iterator
from typing import Protocol

from benchtui.model.events import Event
from benchtui.store.recording.codec import TimedRecord
from benchtui.store.recording.index import UnusableIndex, read_index
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.walk import walk_frames


class Verified(Protocol):
    """What is verified of an open file (``SessionReader``'s, which calls ``verify_frames``;
    named here so that this module does not import the reader that imports it)."""

    path: str
    warnings: list[str]
    size_bytes: int
    _mm: mmap.mmap
    _schema: int
    _segments: list[SegmentStats]
    _damaged: set[int]
    _index_frame: tuple[int, int] | None

    def _decode(self, seg: SegmentStats, t0: float, t1: float, *, samples: bool = True,
                events: bool = True, output: bool = True,
                to_end: bool = False) -> Iterator[TimedRecord]: ...


def verify_frames(reader: Verified) -> int:
    """Check every frame of ``reader``'s file (the module's doc), adding to its warnings;
    the number of samples that could be read."""
    walk = walk_frames(reader._mm, reader.size_bytes, reader._schema, thorough=True)
    found = walk.warnings + walk.appended_sentences(reader.path)
    if reader._index_frame is not None:  # read by its index: now every list of it too
        at, end = reader._index_frame
        try:
            read_index(reader._mm, end, reader._schema, strict=True, at=at)
        except UnusableIndex as exc:
            found.append(exc.sentence)
    reader.warnings += [w for w in found if w not in reader.warnings]
    readable = 0
    source = "the index" if reader._index_frame is not None else "the file"
    for seg in reader._segments:
        damaged = len(reader._damaged)
        samples = 0
        events: list[tuple[float, str]] = []
        for t, r in reader._decode(seg, -math.inf, math.inf, to_end=True, output=False):
            if isinstance(r, list):
                samples += len(r)
            elif isinstance(r, Event):
                events.append((t, r.kind))
        readable += samples
        said = sorted((e.t, e.kind) for e in seg.events)
        if len(reader._damaged) == damaged and (samples != seg.samples
                                               or sorted(events) != said):
            reader.warnings.append(
                f"the summary of segment {seg.number} in {source} does not hold what its "
                f"data frames (bytes {seg.offset} to {seg.end}) hold: it counts "
                f"{seg.samples} samples and {len(said)} events, they hold {samples} and "
                f"{len(events)}{'' if len(said) != len(events) else ' other ones'}")
    return readable
