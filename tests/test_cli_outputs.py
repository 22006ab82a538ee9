"""Every command with its standard output on ``/dev/full`` (ENOSPC) and on a pipe whose reader
is gone (EPIPE), as real processes: never a traceback, one sentence on stderr, the README's exit
status (1: the output failed at run time). Commands whose results go elsewhere (``record``,
``import``, ``report -o``, ``plot``) are not disturbed by it and exit 0. Paths that cannot be
written are usage errors (exit 2) in every command that takes one."""

from __future__ import annotations

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


def benchtui(*args: str, stdout: int | None = subprocess.PIPE,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                          timeout=timeout, check=False)


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


SINKS = {"dev-full": (_full, "cannot write to standard output: No space left on device"),
         "closed-pipe": (_closed_pipe, "standard output was closed by the program reading it")}


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
            return benchtui(*argv, stdout=fd)
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
            done = benchtui(*argv, stdout=fd)
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
