"""Segment summaries (SEGMENT_END frames) are zstd-compressed, flagged so; the index is made
of them, streamed, and says exactly what they say; files of earlier writers, whose summaries
are plain JSON, are read as before, by their index and, without one, by walking the frames.
"""

from __future__ import annotations

import mmap
from dataclasses import asdict
from pathlib import Path

import orjson
import pytest
import zstandard

from benchtui.store.recording import SessionReader
from benchtui.store.recording import format as fmt
from benchtui.store.recording.stats import SegmentStats
from benchtui.store.recording.walk import walk_frames
from tests import stats_session

FIXTURES = Path(__file__).parent / "fixtures"
#: Files of earlier writers: plain JSON summaries (before-stats.btr: before stats blocks too).
OLD_FILES = [FIXTURES / "recording" / "before-stats.btr", FIXTURES / "baseline" / "old.btr",
             FIXTURES / "baseline" / "new.btr"]


def frames(data: bytes) -> list[fmt.FrameHeader]:
    out, pos = [], fmt.FILE_HEADER_SIZE
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        out.append(h)
        pos = h.end
    return out


def without_index(data: bytes) -> bytes:
    """The file as it was just before its INDEX frame: every frame, no index, no trailer (a
    recorder killed then)."""
    [index] = [h for h in frames(data) if h.type == fmt.INDEX]
    return data[:index.offset]


def walk(path: Path) -> dict[int, SegmentStats]:
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return walk_frames(mm, len(mm), fmt.SCHEMA_VERSION).summaries


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("summaries") / "s.btr"
    stats_session.write(path, stats_session.records(steps=3))
    return path


def test_summaries_are_compressed_and_flagged(written: Path) -> None:
    data = written.read_bytes()
    ends = [h for h in frames(data) if h.type == fmt.SEGMENT_END]
    assert len(ends) > 5
    for h in ends:
        payload = data[h.payload_offset:h.end]
        assert h.flags == fmt.ZSTD and payload.startswith(b"\x28\xb5\x2f\xfd")
        raw = zstandard.ZstdDecompressor().decompress(payload)
        summary = orjson.loads(raw)
        assert summary["segment"] == h.segment and summary["events"] is not None
        assert h.raw_len == len(raw) > len(payload)


def test_the_index_says_what_the_summaries_say(written: Path, tmp_path: Path) -> None:
    """The index (streamed from the compressed summaries at close) and the summaries read by
    walking the frames give the same segments and events; the index's JSON is the one the
    whole dict gives."""
    cut = tmp_path / "cut.btr"
    cut.write_bytes(without_index(written.read_bytes()))
    with SessionReader.open(str(written)) as indexed, SessionReader.open(str(cut)) as walked:
        assert indexed.complete and not walked.complete
        assert [s.to_json() for s in walked._segments][:-1] \
            == [s.to_json() for s in indexed._segments][:-1]
        assert walked.events() == indexed.events()
        assert len(indexed.events()) == 2 + 3 * (2 + 2 * 3)
        data = written.read_bytes()
        [h] = [h for h in frames(data) if h.type == fmt.INDEX]
        raw = zstandard.ZstdDecompressor().decompress(data[h.payload_offset:h.end])
        assert raw == orjson.dumps({"meta": asdict(indexed.meta),
                                    "segments": [s.to_json() for s in indexed._segments]},
                                   default=str, option=orjson.OPT_NON_STR_KEYS)


@pytest.mark.parametrize("old", OLD_FILES, ids=lambda p: p.name)
def test_plain_summaries_of_earlier_writers_are_read(old: Path, tmp_path: Path) -> None:
    """An earlier writer's file (plain JSON SEGMENT_END frames, no flag): by its index as
    before, and without one its summaries are read, not rebuilt by decoding."""
    data = old.read_bytes()
    ends = [h for h in frames(data) if h.type == fmt.SEGMENT_END]
    assert ends and all(h.flags == 0 for h in ends)
    cut = tmp_path / old.name
    cut.write_bytes(without_index(data))
    assert sorted(walk(cut)) == [h.segment for h in ends]
    with SessionReader.open(str(old)) as indexed, SessionReader.open(str(cut)) as walked:
        assert walked.events() == indexed.events() and indexed.events()
        assert walked.sample_count == indexed.sample_count
        assert [s.to_json() for s in walked._segments][:-1] \
            == [s.to_json() for s in indexed._segments][:-1]


def test_a_damaged_compressed_summary_is_rebuilt(written: Path, tmp_path: Path) -> None:
    """A summary whose payload checks out but does not decompress (a writer's bug) is
    rebuilt from the segment's data, as an unreadable plain one is."""
    data = bytearray(without_index(written.read_bytes()))
    h = [h for h in frames(bytes(data)) if h.type == fmt.SEGMENT_END][1]
    payload = b"\x28\xb5\x2f\xfd not zstd"
    frame = fmt.frame(fmt.SEGMENT_END, payload, flags=fmt.ZSTD, segment=h.segment,
                      t_first=h.t_first, t_last=h.t_last)
    path = tmp_path / "bad.btr"
    path.write_bytes(bytes(data[:h.offset]) + frame + bytes(data[h.end:]))
    assert h.segment not in walk(path)
    with SessionReader.open(str(path)) as r, SessionReader.open(str(written)) as good:
        assert r.events() == good.events()
        assert r._segments[1].blocks is None  # (rebuilt: decoded for series_stats)
