"""Session files survive: kill -9 of the recorder, truncation anywhere, flipped bits. The valid
part is read, a warning says where the file ends, and there is never a traceback."""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtui.errors import RecordingError
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.store.recording import SessionReader
from benchtui.store.recording import format as fmt
from tests.test_recording_roundtrip import (
    Timed,
    assert_same_records,
    assert_same_samples,
    real_records,
    write,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[Timed]]:
    """A closed file of several segments, and what was written into it."""
    records = real_records("db1") + real_records("db2", shift=6.0)
    path = tmp_path_factory.mktemp("dmg") / "ok.btr"
    write(path, records, per_frame=2, segment_seconds=3.0)
    return path.read_bytes(), records


def read_all(path: Path) -> tuple[list[Timed], list[str]] | str:
    """Everything a reader gets from the file (records, events, gaps, samples, info), or the
    one sentence it refused it with."""
    try:
        with SessionReader.open(str(path)) as r:
            got = list(r.timed_records(-math.inf, math.inf))
            r.events()
            r.gaps()
            list(r.samples())
            _ = (r.sample_count, r.host_count, r.start, r.end, r.meta.name)
            return got, list(r.warnings)
    except RecordingError as exc:
        assert "\n" not in str(exc)
        return str(exc)


def assert_prefix_of(got: list[Timed], want: list[Timed]) -> None:
    """What was read is what was written, in order, with whole records missing only (from
    where the damage is: a damaged segment's later records, or the end)."""
    it = iter(want)
    for t, record in got:
        for tw, w in it:
            if tw == t and type(w) is type(record):
                assert_same_records([(t, record)], [(tw, w)])
                break
        else:
            raise AssertionError(f"record at {t} was not written, or not in this order")


def test_truncated_anywhere(recorded: tuple[bytes, list[Timed]], tmp_path: Path) -> None:
    data, records = recorded
    rng = random.Random(5)
    offsets = sorted(set(range(80)) | set(rng.sample(range(len(data)), 150)))
    path = tmp_path / "t.btr"
    last_count = 0
    for n in offsets:
        path.write_bytes(data[:n])
        result = read_all(path)
        if isinstance(result, str):
            assert n < fmt.FILE_HEADER_SIZE, (n, result)
            continue
        got, warnings = result
        assert warnings, n
        ends = ("ends at", "cut short", "holds no records")
        assert any(x in w for w in warnings for x in ends), (n, warnings)
        assert_prefix_of(got, records)
        assert len(got) >= last_count  # a longer file never gives less
        last_count = len(got)
    assert last_count > len(records) * 0.8


def test_truncated_inside_the_trailer(recorded: tuple[bytes, list[Timed]],
                                      tmp_path: Path) -> None:
    """A file that ends inside its trailer is cut short, not damaged: every record is read
    (the index is whole before it)."""
    data, records = recorded
    path = tmp_path / "t.btr"
    for cut in range(1, fmt.TRAILER_SIZE):
        path.write_bytes(data[:-cut])
        result = read_all(path)
        assert not isinstance(result, str), (cut, result)
        got, warnings = result
        # (with its magic there, it says so; without, the frames just end there)
        assert any("cut short" in w for w in warnings), (cut, warnings)
        if cut <= fmt.TRAILER_SIZE - len(fmt.TRAILER_MAGIC):
            assert any("cut short in its trailer" in w for w in warnings), (cut, warnings)
        assert not any("damaged" in w for w in warnings), (cut, warnings)
        assert len(got) == len(records)


def test_flipped_bits(recorded: tuple[bytes, list[Timed]], tmp_path: Path) -> None:
    data, records = recorded
    rng = random.Random(7)
    path = tmp_path / "f.btr"
    for _ in range(150):
        at = rng.randrange(fmt.FILE_HEADER_SIZE, len(data))
        damaged = bytearray(data)
        damaged[at] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        result = read_all(path)
        assert not isinstance(result, str), (at, result)
        got, warnings = result
        assert_prefix_of(got, records)
        if not warnings:  # the flip hit a part that is not read (a segment summary)
            assert len(got) == len(records), at


def test_garbage_in_the_middle_is_skipped(recorded: tuple[bytes, list[Timed]],
                                          tmp_path: Path) -> None:
    data, records = recorded
    path = tmp_path / "g.btr"
    end = len(data) - fmt.TRAILER_SIZE - 200  # damage the index too: the file is walked
    cut = len(data) // 3
    path.write_bytes(data[:cut] + os.urandom(3000) + data[cut + 3000:end])
    result = read_all(path)
    assert not isinstance(result, str)
    got, warnings = result
    assert any("damaged and were skipped" in w for w in warnings), warnings
    assert_prefix_of(got, records)
    # records after the damage are read again from the next segment on
    assert got[-1][0] > records[len(records) // 2][0]


def test_a_damaged_header_byte_is_damage_and_every_frame_is_still_read(
        recorded: tuple[bytes, list[Timed]], tmp_path: Path) -> None:
    """Every bit of the 16-byte header flipped in turn (128 copies), and each byte replaced
    by random values: the header's CRC proves damage (never "a newer benchtui"), and every
    frame after it is read, so every record comes back."""
    data, records = recorded
    path = tmp_path / "h.btr"
    rng = random.Random(11)
    changes = [(at, data[at] ^ (1 << bit)) for at in range(fmt.FILE_HEADER_SIZE)
               for bit in range(8)]
    changes += [(at, rng.choice([v for v in range(256) if v != data[at]]))
                for at in range(fmt.FILE_HEADER_SIZE) for _ in range(4)]
    for at, value in changes:
        damaged = bytearray(data)
        damaged[at] = value
        path.write_bytes(bytes(damaged))
        result = read_all(path)
        assert not isinstance(result, str), (at, value, result)
        got, warnings = result
        assert any("file header (its first 16 bytes) is damaged" in w for w in warnings), \
            (at, value, warnings)
        assert len(got) == len(records), (at, value)
        assert_prefix_of(got, records)
    # the same with the index gone too: the frames are walked from byte 16
    for at in (0, 8, 9, 12):
        damaged = bytearray(data[:len(data) - fmt.TRAILER_SIZE - 100])
        damaged[at] ^= 0x10
        path.write_bytes(bytes(damaged))
        result = read_all(path)
        assert not isinstance(result, str), (at, result)
        assert_prefix_of(result[0], records)
        assert len(result[0]) > len(records) * 0.8


def test_a_newer_schema_or_a_foreign_file_is_still_refused(
        recorded: tuple[bytes, list[Timed]], tmp_path: Path) -> None:
    data, _ = recorded
    path = tmp_path / "n.btr"
    path.write_bytes(fmt.file_header(fmt.SCHEMA_VERSION + 1) + data[fmt.FILE_HEADER_SIZE:])
    assert "was written by a newer benchtui (schema 3" in str(read_all(path))
    path.write_bytes(b"not a session file at all, just text\n" * 10)
    assert str(read_all(path)).endswith("is not a benchtui session file")


CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
from benchtui.model.events import Event, OutputLines
from benchtui.store.recording import Recorder
from tests.test_recording_roundtrip import meta, real_records

rec = Recorder(sys.argv[1], meta())
seq = 0
while True:
    for _t, r in real_records("db1"):
        seq += 1
        now = time.time()
        if isinstance(r, list):
            for s in r:
                s.labels = {**s.labels, "seq": str(seq)}
            rec.on_samples(r)
        elif isinstance(r, Event):
            rec.on_event(Event(now, r.kind, f"seq {seq}", r.level, r.host, r.step, r.data))
        else:
            rec.on_output(OutputLines(now, r.host, f"seq {seq}", r.tool, r.role, r.lines))
        print(seq, time.time(), flush=True)
        time.sleep(0.02)
"""


def test_kill_9_loses_at_most_the_last_second(tmp_path: Path) -> None:
    path = tmp_path / "killed.btr"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(ROOT)],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    sent: list[tuple[int, float]] = []
    assert child.stdout is not None
    deadline = math.inf  # 4 s of writing, counted from the child's first record (its
    for line in child.stdout:  # start-up, imports included, can take seconds on a loaded box)
        seq, t = line.split()
        sent.append((int(seq), float(t)))
        if not math.isfinite(deadline):
            deadline = time.time() + 4.0
        if time.time() > deadline:
            break
    killed_at = time.time()
    child.send_signal(signal.SIGKILL)
    child.wait()
    with SessionReader.open(str(path)) as r:
        assert not r.complete and any("not closed" in w for w in r.warnings)
        got = list(r.records(-math.inf, math.inf))
    seqs = []
    for rec in got:
        if isinstance(rec, list):
            seqs.append(int(rec[0].labels["seq"]))
        elif isinstance(rec, Event):
            seqs.append(int(rec.message.split()[1]))
        else:
            seqs.append(int(rec.step.split()[1]))
    assert seqs == list(range(1, len(seqs) + 1))  # in order, none missing, none invented
    must_have = [seq for seq, t in sent if t < killed_at - 1.0]
    assert len(must_have) > 50
    assert seqs[-1] >= must_have[-1], (seqs[-1], must_have[-1], killed_at - sent[-1][1])
    # and what is there is exact
    samples = [s for rec in got if isinstance(rec, list) for s in rec]
    want = [s for _, x in real_records("db1") if isinstance(x, list) for s in x]
    n = len(want)
    for i in range(0, len(samples) - n + 1, n):
        assert_same_samples([_without_seq(s) for s in samples[i:i + n]], want)


def _without_seq(s: Sample) -> Sample:
    s.labels.pop("seq")
    return s


def test_a_device_or_a_pipe_is_not_opened_as_a_session(tmp_path: Path) -> None:
    """/dev/zero would read as empty (or endlessly), a FIFO would block the open: both are
    refused before opening, in one sentence."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        with pytest.raises(RecordingError, match=r"is not a file \(a device, a pipe or a "
                           r"socket\): a session file is a regular file"):
            SessionReader.open(path)
