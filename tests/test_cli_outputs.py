"""Every command with its standard output on ``/dev/full`` (ENOSPC), on a pipe whose reader
is gone (EPIPE) and closed (``>&-``: EBADF), as real processes: never a traceback, one sentence
on stderr, the README's exit status (1: the output failed at run time). Commands whose results
go elsewhere (``record``, ``import``, ``report -o``, ``plot``) are not disturbed by it and exit
0. Standard error that cannot be written (full, a reader gone, closed) stops nothing: a
recording is still made, standard output is whole, and the exit status is 1. Paths that cannot
be written are usage errors (exit 2) in every command that takes one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import require_tool

FIXTURE = Path(__file__).parent / "fixtures" / "disk" / "seed003_iostat_x_grep_1copy_qd8_aio.txt"

PLAN = """
[session]
name = "outputs"

[hosts.alpha]
local = true

[[step]]
name = "rw"
tool = "fio"
hosts = "all"
args = "--filename={file} --size=8m --rw=randrw --bs=4k --runtime=2 --time_based"
"""

COMMANDS = ("parse", "check", "run", "demo", "record", "replay", "dump", "info", "import",
            "report", "plot", "serve", "history", "examples", "themes", "completion")


def benchtui(*args: str, stdout: int | None = subprocess.PIPE, stderr: int | None =
             subprocess.PIPE, closed: str = "", timeout: float = 120
             ) -> subprocess.CompletedProcess[str]:
    """``closed``: shell redirections that close descriptors first (``>&-``, ``2>&-``)."""
    argv = [sys.executable, "-m", "benchtui", *args]
    if closed:  # a real shell closes them, as a user's does
        argv = ["sh", "-c", f'exec "$@" {closed}', "sh", *argv]
    return subprocess.run(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                          text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tool("fio")
    d = tmp_path_factory.mktemp("outputs")
    (d / "plan.toml").write_text(PLAN.format(file=d / "fio.dat"), encoding="utf-8")
    done = benchtui("record", str(d / "plan.toml"), "-o", str(d / "s.btr"))
    assert done.returncode == 0, done.stderr
    done = benchtui("history", "import", str(d / "s.btr"), "--catalog", str(d / "h.sqlite"))
    assert done.returncode == 0, done.stderr
    return d


def _full() -> Iterator[int]:
    fd = os.open("/dev/full", os.O_WRONLY)
    try:
        yield fd
    finally:
        os.close(fd)


def _closed_pipe() -> Iterator[int]:
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first byte
    try:
        yield w
    finally:
        os.close(w)


def _closed() -> Iterator[int | None]:
    yield None  # (benchtui() closes it)


SINKS = {"dev-full": (_full, "cannot write to standard output: No space left on device"),
         "closed-pipe": (_closed_pipe, "standard output was closed by the program reading it"),
         "closed": (_closed, "standard output is closed: nothing could be written")}


def _writers(d: Path) -> list[tuple[str, ...]]:
    s = str(d / "s.btr")
    return [("parse", str(FIXTURE)), ("parse", "--list"), ("--help",), ("--version",),
            ("examples",), ("themes",), ("completion", "bash"), ("completion", "zsh"),
            ("check", str(d / "plan.toml")),
            ("info", s), ("info", s, "--json"),
            ("dump", s), ("dump", s, "--format", "csv"), ("dump", s, "--format", "openmetrics"),
            ("report", s), ("report", s, "--format", "json"), ("report", s, "--format", "csv"),
            ("report", s, "--format", "html"),
            *(("history", c, "outputs", "--catalog", str(d / "h.sqlite"), *more)
              for c, *more in (("show",), ("analyze",), ("analyze", "--format", "json"),
                               ("export", "--csv"), ("gate",))),
            *((c, "--help") for c in COMMANDS)]


def _quiet(d: Path, sink: str) -> list[tuple[str, ...]]:
    s = str(d / "s.btr")
    return [("import", str(FIXTURE), "--host", "h", "--step", "x", "-o", str(d / f"i-{sink}.btr")),
            ("report", s, "-o", str(d / f"r-{sink}.md")),
            ("plot", s, "--step", "rw", "-o", str(d / f"p-{sink}.svg")),
            ("record", str(d / "plan.toml"), "-o", str(d / f"rec-{sink}.btr")),
            ("serve", str(d / "plan.toml"), "--listen", "127.0.0.1:0", "--linger", "0")]


@pytest.mark.slow
@pytest.mark.parametrize("sink", sorted(SINKS))
def test_every_command_with_stdout_that_cannot_be_written(work: Path, sink: str) -> None:
    opener, sentence = SINKS[sink]

    def into_sink(argv: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
        for fd in opener():
            return benchtui(*argv, stdout=fd, closed=">&-" if fd is None else "")
        raise AssertionError("no sink")

    # (the writers only read the session: four at a time)
    with ThreadPoolExecutor(4) as pool:
        ran = list(zip(_writers(work), pool.map(into_sink, _writers(work)), strict=True))
    for argv, done in ran:
        where = f"benchtui {' '.join(argv)} > {sink}: {done.stderr}"
        assert "Traceback" not in done.stderr, where
        assert "Exception ignored" not in done.stderr, where
        assert done.returncode == 1, where
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"benchtui: {sentence}"), where
    for argv in _quiet(work, sink):
        for fd in opener():
            done = benchtui(*argv, stdout=fd, closed=">&-" if fd is None else "")
        where = f"benchtui {' '.join(argv)} > {sink}: {done.stderr}"
        assert "Traceback" not in done.stderr, where
        assert done.returncode == 0, where


def test_every_command_covered() -> None:
    from benchtui.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices or ()) == set(COMMANDS)


@pytest.mark.slow
def test_paths_that_cannot_be_written_are_usage_errors(work: Path) -> None:
    s, plan, bad = str(work / "s.btr"), str(work / "plan.toml"), "/nonexistent/x"
    for argv in [("import", str(FIXTURE), "--host", "h", "--step", "x", "-o", bad),
                 ("report", s, "-o", bad), ("plot", s, "--step", "rw", "-o", bad + ".png"),
                 ("record", plan, "-o", bad), ("check", plan, "--facts", bad),
                 ("run", plan, "--jsonl", "--record", bad),
                 ("serve", plan, "--record", bad, "--listen", "127.0.0.1:0"),
                 ("demo", "--record", bad)]:
        done = benchtui(*argv)
        where = f"benchtui {' '.join(argv)}: {done.stderr}"
        assert "Traceback" not in done.stderr, where
        assert done.returncode == 2, where
        assert done.stderr.strip().splitlines()[-1].startswith("benchtui: "), where
        assert "/nonexistent/x" in done.stderr, where


def _session_ended(path: Path) -> tuple[str, int]:
    """(how the recording says the session ended, its samples)."""
    from benchtui.model import events as ev
    from benchtui.store.recording import SessionReader

    with SessionReader.open(str(path)) as reader:
        end = [e for e in reader.events() if e.kind == ev.SESSION_END]
        closed = reader.complete and reader.meta.ended is not None
        outcome = ev.outcome_of(end[-1]) if end and closed else "not closed"
        return outcome, reader.sample_count


@pytest.mark.slow
def test_standard_error_that_cannot_be_written_stops_nothing(work: Path) -> None:
    # record 2>&- (issue 27: it crashed and recorded nothing), record 2>/dev/full: the
    # recording is made and closed, nothing goes to stdout, and the exit status says it.
    plan = str(work / "plan.toml")
    for name, opener, closed in (("closed", _closed, "2>&-"), ("full", _full, "")):
        recording = work / f"stderr-{name}.btr"
        for fd in opener():
            done = benchtui("record", plan, "-o", str(recording), stderr=fd, closed=closed)
        assert done.returncode == 1 and done.stdout == "", (name, done.stdout)
        outcome, samples = _session_ended(recording)
        assert outcome == "completed" and samples > 0, (name, outcome, samples)
    # run --jsonl with stderr's reader gone: every sample is on stdout, exit 1.
    for fd in _closed_pipe():
        done = benchtui("run", plan, "--jsonl", stderr=fd)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1
    assert any(r["tool"] == "fio" and r["metric"] == "iops" for r in rows)


@pytest.mark.slow
def test_closed_stdout_stops_a_run_and_keeps_its_recording(work: Path) -> None:
    # run --jsonl >&- (issue 27: exit 0, every sample lost without a word).
    recording = work / "stdout-closed.btr"
    done = benchtui("run", str(work / "plan.toml"), "--jsonl", "--record", str(recording),
                    closed=">&-")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "benchtui: standard output is closed: no sample can be written; the session was "
        "stopped, and every process benchtui started with it")
    assert _session_ended(recording)[0] == "interrupted"
    # parse - <&-: standard input closed is one sentence too.
    done = benchtui("parse", "--tool", "iostat", "-", closed="<&-")
    assert (done.returncode, done.stderr) == (
        2, "benchtui: -: standard input is closed; give a file name, or pipe the tool's "
           "output in\n")
