"""Damaged and forged recordings read every way (issue 29): ``info``, ``info --verify``,
``dump``, ``report``, ``history import`` and replay's player (``recording_readers.py``), on
copies of a real recording cut anywhere, with a bit flipped in every kind of frame and in
the trailer, with JSON of the wrong types (valid CRCs), zstd bombs in every kind of
compressed frame, indexes that do not describe the file's frames, and files appended to one
another (``recording_forgery.py``).

Every copy: no traceback (each command exits with its documented status, one sentence for
what it refuses), ``info --verify`` exits 1 and names what is wrong, and where the frames
are intact but something else claims otherwise (a spliced index, an appended file) the
frames win: the file's own session, every one of its samples. The commands run in this
process; the zstd bombs run again in a child process under an address-space limit (a bomb
that went off could not take the machine's memory), whose peak memory must stay under
500 MB."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from benchtui.store.recording import format as fmt
from benchtui.store.recording.stats import SegmentStats
from tests.recording_forgery import STRANGE_EVENTS, Copy, damaged_copies, frames, resegment
from tests.recording_readers import command, read_every_way
from tests.replay_recording import RecordedRun

ROOT = Path(__file__).resolve().parents[1]
#: The peak memory (VmHWM) of a child that read every bomb every way.
MEMORY_LIMIT_MB = 500
#: Its address space (a bomb that went off fails there, at once).
ADDRESS_SPACE = 3 * 2**30


@pytest.fixture(scope="module")
def sessions(recorded: RecordedRun, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[bytes, bytes]:
    """The real recording written again in 2-s segments (a.btr: each segment with its data,
    stats, figure-track and summary frames), and as another session (b.btr)."""
    d = tmp_path_factory.mktemp("fuzz")
    resegment(recorded.path, d / "a.btr")
    resegment(recorded.path, d / "b.btr", session_id="0ther5e55i0n", name="other-night")
    return (d / "a.btr").read_bytes(), (d / "b.btr").read_bytes()


def _read(copy: Copy, work: Path) -> tuple[dict[str, object] | None, str]:
    path = work / "copy.btr"
    path.write_bytes(copy.data)
    try:
        return read_every_way(path), ""
    except Exception:  # noqa: BLE001 (a traceback is what the test looks for)
        return None, traceback.format_exc()


def _judge(copy: Copy, got: dict[str, object] | str, whole: dict[str, object]) -> str | None:
    """What is wrong with how ``copy`` was read (None: nothing)."""
    if isinstance(got, str):
        return f"a traceback:\n{got}"
    if got["verify"] != 1:
        return f"info --verify exited {got['verify']}: {got['verify_err']}"
    doc = got["doc"]
    if copy.frames_win and not (isinstance(doc, dict)
                                and doc["session_id"] == whole["session_id"]
                                and doc["sample_count"] == whole["sample_count"]
                                and doc["readable_samples"] == whole["sample_count"]):
        return f"the frames did not win: {doc}"
    return None


def test_every_damaged_copy_is_read_every_way_and_verify_names_it(
        sessions: tuple[bytes, bytes], tmp_path: Path) -> None:
    a, b = sessions
    intact, trace = _read(Copy("intact", a), tmp_path)
    assert intact is not None, trace
    assert intact["verify"] == 0, intact["verify_err"]
    whole = intact["doc"]
    assert isinstance(whole, dict) and whole["sample_count"] > 100
    copies = [c for c in damaged_copies(a, b) if not c.bomb]  # (bombs: in a child, below)
    failures = []
    for copy in copies:
        got, trace = _read(copy, tmp_path)
        why = _judge(copy, got if got is not None else trace, whole)
        if why is not None:
            failures.append(f"{copy.name}: {why}")
    assert not failures, f"{len(failures)} of {len(copies)} copies:\n" + "\n".join(failures)


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_zstd_bombs_cost_little_memory(sessions: tuple[bytes, bytes], tmp_path: Path) -> None:
    """Every bomb copy read every way in one child process: each is refused before it is
    decompressed, so the child's peak stays that of reading a small file."""
    a, b = sessions
    bombs = {}
    for i, copy in enumerate(c for c in damaged_copies(a, b) if c.bomb):
        path = tmp_path / f"bomb-{i}.btr"
        path.write_bytes(copy.data)
        bombs[str(path)] = copy
    assert len(bombs) >= 20
    done = subprocess.run([sys.executable, "-m", "tests.recording_readers", *bombs],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          preexec_fn=_limit_address_space)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    results = found["results"]
    assert isinstance(results, dict)
    whole = {"session_id": None, "sample_count": None}
    failures = [f"{copy.name}: {why}" for p, copy in bombs.items()
                if (why := _judge(copy, results[p], whole)) is not None]
    assert not failures, "\n".join(failures)
    assert found["peak_mb"] < MEMORY_LIMIT_MB, found["peak_mb"]


@pytest.mark.parametrize("summary", [
    "summary", 7, None, [1], {"segment": 1}, {"segment": -1, "offset": 0, "end": 0, "frames": 0,
                                              "samples": 0},
    *({"segment": 1, "offset": 16, "end": 16, "frames": 1, "samples": 1, **extra} for extra in (
        {"hosts": [1, 2]}, {"hosts": {"h": "many"}}, {"frames": "many"}, {"samples": True},
        {"samples": 1e30}, {"t0": "nan"}, {"t1": float("inf")}, {"st0": []},
        {"events": {"a": 1}}, {"events": [[1, 2]]}, {"events": [{"t": "x"}]},
        {"events": [{"kind": "mark"}]}, {"events": [{"t": 1e300}]}, {"gaps": [[1], "ab"]},
        {"gaps": [["h", "x", 1.0]]}, {"gaps": 5}, {"last": {"h": "x"}}, {"last": [1]},
        {"figures": [[1, 2]]}, {"figures": [["x", 1.0, 2.0]]}, {"figures": [[-1, 1.0, 2.0]]},
        {"output_lines": -2}))])
def test_a_summary_of_the_wrong_shape_is_one_sentence(summary: object) -> None:
    """What the fuzz copies' summaries do not all try (their file costs more): each wrong
    type a summary can hold is a ValueError in words, never another exception."""
    with pytest.raises(ValueError, match=r"^(its|it) "):
        SegmentStats.from_json(summary, strict=True)


def _info(path: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = command(["info", str(path), *args])
    return code, out, err


def test_what_the_user_is_told(sessions: tuple[bytes, bytes], tmp_path: Path) -> None:
    """The sentences of the issue's cases: where, and what is wrong; and the frames win."""
    a, b = sessions
    by_name = {c.name: c for c in damaged_copies(a, b)}
    path = tmp_path / "c.btr"

    def told(name: str, *args: str) -> tuple[int, str, str]:
        path.write_bytes(by_name[name].data)
        return _info(path, *args)

    code, out, err = told("summary JSON is a list, no index")
    assert code == 0 and "Traceback" not in err
    assert re.search(r"warning   the summary of segment 1 at byte \d+ is not what it must be: its "
                     r"JSON is a list, not an object; it was rebuilt from the segment's data",
                     out), out
    code, out, _ = told("zstd bomb as the index, declared")
    assert re.search(r"the file's index \(at byte \d+, where its trailer points\) is not what "
                     r"it must be: it declares 4.2 GB once decompressed, more than such a "
                     r"frame may hold \(1.1 GB\); the file was read frame by frame instead", out)
    code, out, _ = told("an index listing no segments")
    assert "does not describe this file's frames: the data frame of segment 0 at byte" in out
    counted = re.search(r"size .*, (\d+) samples", out)
    path.write_bytes(a)
    assert counted is not None and int(counted.group(1)) == \
        json.loads(_info(path, "--json")[1])["sample_count"]  # (the frames', not the index's)
    code, out, _ = told("cat a.btr b.btr")
    assert code == 0 and out.startswith("session   replay-test ")
    assert f"starts another session file (other-night, id 0ther5e55i0n) appended to this one: " \
           f"it was not read (tail -c +{len(a) + 1} {path} > other.btr cuts it out)" in out
    assert "damaged" not in out.replace("DAMAGED", "")
    code, out, _ = told("another recording's index spliced on")
    assert "it is another session's (other-night, id 0ther5e55i0n), not this file's " \
           "(replay-test, id " in out
    code, out, _ = told("bit flipped in the trailer's CRC", "--verify")
    assert code == 1 and re.search(r"the file's trailer \(the 24 bytes at byte \d+\) is damaged",
                                   out)
    code, out, _ = told("index events of strange types", "--verify")
    lie = re.search(r"the summary of segment 1 in the index does not hold what its data frames "
                    r"\(bytes \d+ to \d+\) hold: it counts (\d+) samples and (\d+) events, "
                    r"they hold (\d+) and (\d+)", out)
    assert code == 1 and lie is not None, out
    said, held = [int(x) for x in lie.groups()[:2]], [int(x) for x in lie.groups()[2:]]
    assert said == [held[0], held[1] + len(STRANGE_EVENTS)]
    # a recording killed before its first segment was sealed: no track written, and why
    first = next(h for h in frames(a) if h.type == fmt.FIGS)
    path.write_bytes(a[:first.offset])
    code, out, _ = _info(path)
    assert "figures   figure track (ghost/2) not in the file: the recording stopped before its " \
           "first segment (a minute) was sealed" in out
