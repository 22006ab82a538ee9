"""Reading a session's figure track: the FIGS frames its segments' summaries list
(``figframe.py``; docs/session-format.md, "Figure track").

``FigureTrackReader.ticks`` gives the ticks of a window, reading only the FIGS frames whose
time range meets it (a few per minute of a step, however many hosts), never the samples. A
file without a track (an older writer's, an imported session, a recorder without one) has no
reader; a file cut short by a crash has a track up to its last whole segment (``until``): the
rest is computed from the samples by whoever needs it.
"""

from __future__ import annotations

import contextlib
import mmap
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

from benchtui.store.recording import figframe
from benchtui.store.recording import format as fmt
from benchtui.store.recording.inflate import zstd_payload
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.varint import CodecError

__all__ = ["FigureTrackReader"]

#: FIGS frames kept decoded (a ghost reads a stretch of ~30 s at a time: one or two frames).
_CACHED: Final = 4
#: A tick is written with the segment open when it was computed, a little after its time: a
#: window this close to a frame's time range may have ticks in it.
_SLACK: Final = 5.0


class FigureTrackReader:
    """The figure track of a session file (module docstring)."""

    def __init__(self, mm: mmap.mmap, size: int, digest: str,
                 segments: Sequence[SegmentStats]) -> None:
        self.digest = digest
        self._mm, self._size = mm, size
        frames = sorted((t0, t1, at) for seg in segments for at, t0, t1 in seg.figures)
        self._frames = frames
        self._firsts = [f[0] for f in frames]
        #: The time of the last tick (None: the file has no FIGS frame at all).
        self.until: float | None = max((f[1] for f in frames), default=None)
        self._decoded: OrderedDict[int, list[figframe.Tick] | None] = OrderedDict()

    def ticks(self, t0: float, t1: float) -> list[figframe.Tick] | None:
        """The ticks with a time in [t0, t1), in time order; None when a FIGS frame that may
        hold some cannot be read (damage): the caller computes them instead."""
        out: list[figframe.Tick] = []
        end = bisect_left(self._firsts, t1 + _SLACK)
        for first, last, at in self._frames[:end]:
            if last < t0 - _SLACK or first >= t1 + _SLACK:
                continue
            ticks = self._frame(at)
            if ticks is None:
                return None
            out.extend(figframe.within(ticks, t0, t1))
        out.sort(key=_time)
        return out

    def _frame(self, at: int) -> list[figframe.Tick] | None:
        if at in self._decoded:
            self._decoded.move_to_end(at)
            return self._decoded[at]
        ticks = None
        body = zstd_payload(self._mm, self._size, at, fmt.FIGS)
        if body is not None:
            with contextlib.suppress(CodecError):
                ticks = figframe.decode(body)
        self._decoded[at] = ticks
        if len(self._decoded) > _CACHED:
            self._decoded.popitem(last=False)
        return ticks


def _time(tick: figframe.Tick) -> float:
    return tick[0]
