"""The segments' summaries as the writer keeps them: each one compressed once, for its
SEGMENT_END frame, and held compressed (not as objects) until the index is written at close.

A summary holds its segment's events (a step of an import has six: step and run start and
end, the host's running and done states), so a session of 10^5 steps has 6 x 10^5 of them:
kept as ``Event`` objects until close, and then as one index dict, they were most of an
import's memory (~3 KB a step); kept as the compressed bytes already written, they take ~90
bytes a step. The index is then made by streaming the summaries, decompressed one by one,
through one zstd compressor: the very JSON ``{"meta": ..., "segments": [...]}`` a dict of
them would have given, without ever holding it whole.

The last segment's summary is kept as its ``SegmentStats``: the pieces and the figure track
written at close, with no segment open, are listed in it (in the index only).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Final

import orjson
import zstandard

from benchtui.store.recording.model import SessionMeta
from benchtui.store.recording.stats import SegmentStats

_OPTIONS: Final = orjson.OPT_NON_STR_KEYS


def summary_json(seg: SegmentStats) -> bytes:
    """A segment's summary as JSON (``SegmentStats.to_json``)."""
    return orjson.dumps(seg.to_json(), default=str, option=_OPTIONS)


class SummaryLog:
    """The summaries of the segments written so far, in order (``add``), and the index made
    of them (``index``). For one thread (the writer's writing side)."""

    def __init__(self, level: int) -> None:
        self._cctx = zstandard.ZstdCompressor(level=level, write_checksum=False)
        #: every summary but the last one's: (zstd payload, raw length)
        self._sealed: list[tuple[bytes, int]] = []
        self._last: tuple[bytes, int] | None = None
        #: the last segment written (its summary may still grow at close)
        self.last: SegmentStats | None = None

    def __len__(self) -> int:
        return len(self._sealed) + (self._last is not None)

    def add(self, seg: SegmentStats) -> tuple[bytes, int]:
        """Keep ``seg``'s summary; the zstd payload of its SEGMENT_END frame, and the size of
        its JSON."""
        raw = summary_json(seg)
        # (a copy: zstandard's bytes keeps the allocation of the bound, ~the raw size)
        payload = memoryview(self._cctx.compress(raw)).tobytes()
        if self._last is not None:
            self._sealed.append(self._last)
        self._last, self.last = (payload, len(raw)), seg
        return payload, len(raw)

    def index(self, meta: SessionMeta) -> tuple[bytes, int]:
        """The INDEX payload (zstd): ``{"meta": meta, "segments": [summary, ...]}``, the
        last segment's summary as it is now; and the size of that JSON."""
        last = summary_json(self.last) if self.last is not None else None
        head = b'{"meta":' + orjson.dumps(asdict(meta), default=str, option=_OPTIONS) \
            + b',"segments":['
        tail = b"]}"
        commas = max(len(self) - 1, 0)
        size = (len(head) + sum(n for _, n in self._sealed) + commas
                + (len(last) if last is not None else 0) + len(tail))
        out = self._cctx.compressobj(size=size)  # (the size goes in the frame's header)
        dctx = zstandard.ZstdDecompressor()
        parts = [out.compress(head)]
        for i, (payload, n) in enumerate(self._sealed):
            parts.append(out.compress(b"," if i else b""))
            parts.append(out.compress(dctx.decompress(payload, max_output_size=n)))
        if last is not None:
            parts.append(out.compress(b"," + last if self._sealed else last))
        parts.append(out.compress(tail))
        parts.append(out.flush())
        return b"".join(parts), size
