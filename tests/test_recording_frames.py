"""How the recorder cuts and compresses its frames (issue 32: the reference session back
under 3.5 MB per host-hour): a frame is sealed ``flush_seconds`` after its first record
arrived (so records that arrive close together share a frame and its header), and a segment
that follows a small one is compressed with ``SMALL_PARAMETERS`` (a window sized to it),
while a busy one after it ends early and goes back to the default level. What is read back
is what was written either way."""

from __future__ import annotations

import mmap
import time
from pathlib import Path

import zstandard

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.store.recording import Recorder, SessionReader, SessionWriter
from benchtui.store.recording import format as fmt
from benchtui.store.recording.writer import SMALL_SEGMENT_BYTES
from tests.test_recording_roundtrip import T0, assert_same_records, meta


def _data_frames(path: Path) -> list[fmt.FrameHeader]:
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        out = []
        pos = fmt.FILE_HEADER_SIZE
        while (h := fmt.read_frame_header(data, pos, pos)) is not None:
            if h.type == fmt.DATA:
                out.append(h)
            pos = h.end
        return out


def test_records_close_together_share_a_frame_sealed_after_the_first(tmp_path: Path) -> None:
    path = tmp_path / "r.btr"
    rec = Recorder(str(path), meta(), flush_seconds=1.5)
    try:
        first = time.monotonic()
        rec.on_event(Event(time.time(), ev.MARK, "one"))
        time.sleep(0.1)
        rec.on_event(Event(time.time(), ev.MARK, "two"))
        # on disk once the first record is flush_seconds old, not later (a generous bound
        # for a loaded machine: the thread wakes at that deadline)
        while not [h for h in _data_frames(path) if h.raw_len]:
            assert time.monotonic() - first < 10.0, "the frame was never written"
            time.sleep(0.05)
        written = time.monotonic() - first
        frames = [h for h in _data_frames(path) if h.raw_len]
        assert len(frames) == 1 and written >= 1.5
        # the next record starts a frame of its own, sealed flush_seconds after it
        rec.on_event(Event(time.time(), ev.MARK, "three"))
    finally:
        rec.close()
    with SessionReader.open(str(path)) as r:
        assert [e.message for e in r.events()] == ["one", "two", "three"]
    assert len([h for h in _data_frames(path) if h.raw_len]) == 2


def _samples(host: str, t: float, n: int) -> list[Sample]:
    return [Sample(t, "fio", "interval", "iops", 1000.0 + (i * 7919 + int(t)) % 997,
                   {"job": f"j{i}", "op": "read"}, host, t - T0) for i in range(n)]


def test_a_small_segment_makes_the_next_compressed_harder_a_busy_one_ends_early(
        tmp_path: Path) -> None:
    path = tmp_path / "w.btr"
    writer = SessionWriter(str(path), meta(), segment_seconds=10.0)
    written: list[tuple[float, list[Sample]]] = []

    def second(t: float, n: int) -> None:
        batch = _samples("db1", t, n)
        written.append((t, batch))
        writer.append([(t, batch)])

    for i in range(12):  # segment 0: small, at the default level
        second(T0 + i, 4)
    for i in range(12, 24):  # segment 1: after a small one
        second(T0 + i, 4)
    for i in range(24, 34):  # a burst of output: segment 2 ends early, well before its 10 s
        t = T0 + i
        second(t, 4)
        writer.append([(t, OutputLines(t, "db1", "s", "tool", "step",
                                       tuple(f"{t} line {k} " + "x" * 90 for k in range(1000))))])
    writer.close()
    frames = _data_frames(path)
    firsts: dict[int, fmt.FrameHeader] = {}
    raw: dict[int, int] = {}
    for h in frames:
        firsts.setdefault(h.segment, h)
        raw[h.segment] = raw.get(h.segment, 0) + h.raw_len
    with path.open("rb") as f:
        data = f.read()

    def window(seg: int) -> int:
        h = firsts[seg]
        return zstandard.get_frame_parameters(data[h.payload_offset:h.end]).window_size

    assert window(1) == 2 ** 18 and window(2) == 2 ** 18  # SMALL_PARAMETERS
    assert window(0) > 2 ** 18  # the first segment's size is not known: the default
    # the busy segment ended once it passed twice the small size, and the next went back
    assert 2 * SMALL_SEGMENT_BYTES <= raw[2] < 3 * SMALL_SEGMENT_BYTES
    assert window(3) > 2 ** 18
    with SessionReader.open(str(path)) as r:
        assert_same_records([(t, rec) for t, rec in r.timed_records(-1e18, 1e18)
                             if isinstance(rec, list)], written)
