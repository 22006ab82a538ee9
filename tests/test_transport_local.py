"""LocalTransport with real processes: runs, detached starts, follow/resume, stop, deadline."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from benchtui.transport import (
    EXIT_UNKNOWN,
    LinkState,
    LocalTransport,
    RemoteRun,
    RunHandle,
    hostscripts,
)
from tests import transport_checks as checks
from tests.helpers import require_tool


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[LocalTransport]:
    transport = LocalTransport("here", runs_dir=str(tmp_path / "runs"))
    await transport.connect()
    yield transport
    await transport.close()


async def test_run_reports_exit_status_stdout_stderr_and_timeout(local: LocalTransport
                                                                  ) -> None:
    await checks.check_run(local)


async def test_start_and_follow_stream_lines_live(local: LocalTransport) -> None:
    await checks.check_live_follow(local)


@pytest.mark.parametrize("stdbuf", ["works", "fails"])
async def test_follow_and_drain_scripts_give_every_byte_live(
        stdbuf: str, local: LocalTransport, tmp_path: Path) -> None:
    """The host scripts an SSH follower runs (FOLLOW, then DRAIN from the offset reached),
    run here as a host's shell runs them: their ``tail`` under ``stdbuf -o1M`` (large writes)
    where that works, the plain ``tail`` where ``stdbuf`` cannot run (its preload library
    missing): either way every byte, each line as it is printed, not when the run ends."""
    env = dict(os.environ)
    if stdbuf == "fails":
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        fake = bin_dir / "stdbuf"
        fake.write_text("#!/bin/sh\necho \"stdbuf: failed to find 'libstdbuf.so'\" >&2\n"
                        "exit 125\n")
        fake.chmod(0o755)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    handle = await local.start(RemoteRun(checks.run_id(), checks.counter(8), deadline=30))
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *hostscripts.follow_argv(handle, 0), stdout=asyncio.subprocess.PIPE, env=env)
    assert proc.stdout is not None
    followed = bytearray()
    arrival: list[float] = []
    while data := await proc.stdout.read(1 << 16):
        followed += data
        arrival.append(time.monotonic() - started)
    assert await proc.wait() == 0
    drain = await asyncio.create_subprocess_exec(
        *hostscripts.drain_argv(handle, len(followed)), stdout=asyncio.subprocess.PIPE, env=env)
    rest, _ = await drain.communicate()
    assert drain.returncode == 0
    whole = (Path(handle.directory) / "out").read_bytes()
    assert bytes(followed) + rest == whole
    assert whole.decode().splitlines() == [f"count {i}" for i in range(8)]
    assert arrival[0] < 1.5 and arrival[-1] - arrival[0] > 0.8, arrival  # (live)


async def test_run_files_are_in_the_session_directory(local: LocalTransport,
                                                      tmp_path: Path) -> None:
    handle = await local.start(RemoteRun("files", "echo hello", deadline=10))
    await checks.collect(local, handle)
    directory = tmp_path / "runs" / local.session_id / "files"
    assert Path(handle.directory) == directory
    assert (directory / "out").read_bytes() == b"hello\n"
    assert (directory / "rc").read_text() == "0\n"
    wrapper, pgid = map(int, (directory / "pid").read_text().split())
    assert (wrapper, pgid) == (handle.wrapper_pid, handle.pgid)
    with pytest.raises(Exception, match="already used"):
        await local.start(RemoteRun("files", "echo again", deadline=10))


async def test_resume_from_an_offset_loses_and_repeats_nothing(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    first = LocalTransport("here", runs_dir=runs, session_id="resume")
    second = LocalTransport("here", runs_dir=runs, session_id="resume")
    await first.connect()
    await checks.check_resume_by_offset(first, second)


async def test_stop_ends_fio_and_its_setsid_workers(local: LocalTransport) -> None:
    require_tool("fio")
    await checks.check_stop_ends_fio_workers(local)


async def test_exit_status_while_running_after_and_past_the_deadline(local: LocalTransport
                                                                     ) -> None:
    await checks.check_exit_status(local)


async def test_exit_status_is_unknown_when_the_wrapper_was_killed(local: LocalTransport
                                                                  ) -> None:
    handle = await local.start(RemoteRun(checks.run_id(), ["sleep", "30"], deadline=30))
    os.kill(handle.wrapper_pid, signal.SIGKILL)
    await asyncio.sleep(0.2)
    assert await local.exit_status(handle) == EXIT_UNKNOWN
    await local.stop(handle, grace=0.5)
    assert checks.processes_with(handle.tag) == []


async def test_injection_runs_nothing(local: LocalTransport) -> None:
    await checks.check_injection_runs_nothing(local)


def test_bad_ids_and_env_names_are_refused() -> None:
    with pytest.raises(ValueError, match="run id"):
        RemoteRun("../x", ["true"], deadline=1)
    with pytest.raises(ValueError, match="environment variable"):
        RemoteRun("ok", ["true"], deadline=1, env={"A;B": "1"})
    with pytest.raises(ValueError, match="session id"):
        LocalTransport(session_id="a b")


async def test_state_callback_sees_up_and_down(tmp_path: Path) -> None:
    seen: list[tuple[str, LinkState]] = []
    transport = LocalTransport("here", runs_dir=str(tmp_path),
                               on_state=lambda name, state: seen.append((name, state)))
    await transport.connect()
    await transport.close()
    assert seen == [("here", LinkState.UP), ("here", LinkState.DOWN)]


CONTROLLER = """
import asyncio, json, sys
from benchtui.transport import LocalTransport, RemoteRun
async def main():
    t = LocalTransport("here", runs_dir=sys.argv[1])
    h = await t.start(RemoteRun("guarded", sys.argv[2], deadline=1.5))
    print(json.dumps([h.directory, h.wrapper_pid, h.pgid, h.tag]), flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
"""


async def test_deadline_ends_a_run_whose_controller_was_killed(tmp_path: Path) -> None:
    """The controller is SIGKILLed right after starting the run: the host's timeout guard
    still ends it at its deadline."""
    marker = f"guard-{checks.run_id()}"
    controller = subprocess.Popen(
        [sys.executable, "-c", CONTROLLER, str(tmp_path), f"{checks.counter(1000)} # {marker}"],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1])
    assert controller.stdout is not None
    directory, wrapper, pgid, tag = json.loads(controller.stdout.readline())
    started = time.monotonic()
    controller.kill()
    controller.wait()
    handle = RunHandle("here", "guarded", directory, wrapper, pgid, tag)
    assert checks.processes_with(marker), "the run should outlive its controller"
    survivor = LocalTransport("here", runs_dir=str(tmp_path))
    output, _ = await checks.collect(survivor, handle)
    assert await survivor.exit_status(handle) == 124
    assert 1.3 < time.monotonic() - started < 4
    assert checks.processes_with(marker) == []
    assert output.startswith(b"count 0\n")
