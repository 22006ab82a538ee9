"""The host's watchdog (transport/watchdog.py) with real processes: a controller process that
starts fio (workers that call setsid) and a monitor-like loop, locally or over real sshd, is
killed with SIGKILL: every process of the runs is gone within the grace + 5 s, each output
ends with the watchdog's line, and a later controller reads the stop from the run and finds
(then stops) what a dead controller left."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import pwd
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from benchtui.transport import (
    Leftover,
    LocalTransport,
    RemoteRun,
    RunHandle,
    Transport,
    WatchdogStop,
)
from benchtui.transport.hostscripts import parse_outcome
from benchtui.transport.ssh import SshTransport
from benchtui.transport.watchdog import parse_leftovers
from tests import transport_checks as checks
from tests.helpers import require_tool
from tests.sshd import TEST_USER, SshdHost, follow_dropping

ROOT = Path(__file__).resolve().parents[1]
#: The grace the tests give (seconds), and what "gone within the grace + 5 s" allows.
GRACE = 2.0
WITHIN = GRACE + 5.0
LINE = b"benchtui: controller gone for "

CONTROLLER = """
import asyncio, json, sys
from benchtui.transport import LocalTransport, RemoteRun
from benchtui.transport.ssh import SshTransport
from benchtui.transport.sshtarget import SshTarget
async def main():
    c = json.loads(sys.argv[1])
    grace = float(c["grace"])
    if c["target"] is None:
        t = LocalTransport("here", runs_dir=c["runs_dir"], controller_grace=grace,
                           label="plan-x")
    else:
        t = SshTransport("db1", SshTarget(**c["target"]), controller_grace=grace,
                         label="plan-x")
    await t.connect()
    handles = [await t.start(RemoteRun(f"r{i}", argv, deadline=120))
               for i, argv in enumerate(c["runs"])]
    print(json.dumps([[h.directory, h.wrapper_pid, h.pgid, h.tag] for h in handles]),
          flush=True)
    await asyncio.sleep(300)
asyncio.run(main())
"""


def fio_argv(directory: Path) -> list[str]:
    return ["fio", f"--directory={directory}", "--size=4m", "--rw=randread", "--bs=4k",
            "--ioengine=psync", "--runtime=90", "--time_based", "--numjobs=2",
            "--status-interval=1", "--output-format=json+", "--name=a"]


def loop_argv(marker: str) -> str:
    """A monitor-like shell loop that prints a line every 0.2 s; ``marker`` names it."""
    return f"{checks.counter(100000, 0.2)} # {marker}"


def start_controller(runs: list[Any], *, grace: float = GRACE, target: Any = None,
                     runs_dir: str = "") -> tuple[subprocess.Popen[str], list[RunHandle]]:
    """A controller process that started ``runs``; their handles."""
    config = {"grace": grace, "target": target, "runs_dir": runs_dir, "runs": runs}
    proc = subprocess.Popen([sys.executable, "-c", CONTROLLER, json.dumps(config)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        raise AssertionError("the controller did not start its runs")
    host = "here" if target is None else "db1"
    handles = [RunHandle(host, f"r{i}", d, w, g, t)
               for i, (d, w, g, t) in enumerate(json.loads(line))]
    return proc, handles


def kill(proc: subprocess.Popen[str]) -> float:
    """SIGKILL the controller; the monotonic time it died."""
    proc.kill()
    proc.wait()
    return time.monotonic()


async def wait_gone(markers: list[str], seconds: float) -> list[str]:
    """Wait up to ``seconds`` for no process to carry any of ``markers``; what is left."""
    give_up = time.monotonic() + seconds
    while True:
        left = [m for m in markers if checks.processes_with(m)]
        if not left or time.monotonic() > give_up:
            return left
        await asyncio.sleep(0.1)


async def wait_started(markers: list[str], minimum: int) -> None:
    give_up = time.monotonic() + 10
    while sum(len(checks.processes_with(m)) for m in markers) < minimum:
        assert time.monotonic() < give_up, "the runs did not start"
        await asyncio.sleep(0.1)


async def check_killed_controller(survivor: Transport, handles: list[RunHandle],
                                  markers: list[str], killed_at: float) -> None:
    """Every process of the runs goes within the grace + 5 s; each output ends with the
    watchdog's line; the survivor reads the stop as the run's outcome."""
    assert await wait_gone(markers, WITHIN) == [], "processes outlived the grace"
    gone_after = time.monotonic() - killed_at
    assert gone_after > GRACE - 0.5, f"stopped before the grace: {gone_after:.1f} s"
    for handle in handles:
        out = await checks.read_out(survivor, handle)
        last = out.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        assert last.startswith(LINE) and b"(controller_grace 2 s)" in last, last
        assert last.endswith(b"stopped by the host's watchdog"), last
        outcome = await survivor.outcome(handle)
        assert outcome.status not in (None, 0)
        assert outcome.watchdog is not None and outcome.watchdog.grace == GRACE
        assert outcome.watchdog.gone_for >= GRACE
        assert checks.processes_with(handle.tag) == [], "a watchdog or wrapper was left"


@pytest.fixture
async def survivors() -> AsyncIterator[Callable[[Transport], Transport]]:
    made: list[Transport] = []

    def keep(transport: Transport) -> Transport:
        made.append(transport)
        return transport

    yield keep
    for transport in made:
        await transport.close()


async def test_local_runs_stop_once_their_controller_was_killed(
        tmp_path: Path, survivors: Callable[[Transport], Transport]) -> None:
    require_tool("fio")
    directory = checks.workdir()
    marker = f"loop-{checks.run_id()}"
    proc, handles = start_controller([fio_argv(directory), loop_argv(marker)],
                                     runs_dir=str(tmp_path))
    try:
        await wait_started([str(directory)], 3)  # fio's main process and its 2 workers
    finally:
        killed_at = kill(proc)
    survivor = survivors(LocalTransport("here", runs_dir=str(tmp_path)))
    await check_killed_controller(survivor, handles, [str(directory), marker], killed_at)
    shutil.rmtree(directory, ignore_errors=True)


async def test_ssh_runs_stop_once_their_controller_was_killed(
        sshd_hosts: list[SshdHost], survivors: Callable[[Transport], Transport]) -> None:
    require_tool("fio")
    host = sshd_hosts[2]
    directory = checks.workdir(TEST_USER)
    marker = f"loop-{checks.run_id()}"
    proc, handles = start_controller([fio_argv(directory), loop_argv(marker)],
                                     target=dataclasses.asdict(host.target()))
    try:
        await wait_started([str(directory)], 3)
        await asyncio.sleep(1.5)  # a few beats reached the host's keeper
    finally:
        killed_at = kill(proc)
    survivor = survivors(SshTransport("db1", host.target()))
    await survivor.connect()
    await check_killed_controller(survivor, handles, [str(directory), marker], killed_at)
    shutil.rmtree(directory, ignore_errors=True)
    _remove_session(handles[0])


async def test_a_dropped_connection_back_within_the_grace_changes_nothing(
        sshd_hosts: list[SshdHost]) -> None:
    """sshd's connections are killed twice (the keeper's connection closes each time): the
    transport is back within the grace, the run ends by itself, every byte read once."""
    host = sshd_hosts[1]
    transport = SshTransport("db1", host.target(), controller_grace=GRACE)
    await transport.connect()
    try:
        handle = await transport.start(RemoteRun(checks.run_id(), checks.counter(40, 0.2),
                                                 deadline=60))
        data, drops = await follow_dropping(transport, handle, host, every=100)
        assert drops == 2 and transport.reconnects >= 2
        assert bytes(data).decode().splitlines() == [f"count {i}" for i in range(40)]
        assert bytes(data) == await checks.read_out(transport, handle)
        outcome = await transport.outcome(handle)
        assert (outcome.status, outcome.watchdog) == (0, None)
    finally:
        await transport.close()
        _remove_session(handle)


async def test_grace_off_leaves_the_runs_to_their_deadline(tmp_path: Path) -> None:
    marker = f"loop-{checks.run_id()}"
    proc, handles = start_controller([loop_argv(marker)], grace=math.inf,
                                     runs_dir=str(tmp_path))
    kill(proc)
    await asyncio.sleep(GRACE + 1.5)
    assert checks.processes_with(marker), "nothing should have stopped the run"
    survivor = LocalTransport("here", runs_dir=str(tmp_path))
    assert (Path(handles[0].directory) / "controller").read_text().split()[:2] == \
        ["plan-x", "off"]
    await survivor.stop(handles[0], grace=0.5)
    assert await wait_gone([marker], 2) == []


async def test_leftovers_of_a_dead_controller_are_listed_and_stopped(tmp_path: Path) -> None:
    """A controller dies with a grace of 30 s: a later transport lists its run (plan, PIDs,
    how long the controller has been gone) and stops it; its own runs are not listed."""
    marker = f"loop-{checks.run_id()}"
    proc, handles = start_controller([loop_argv(marker)], grace=30,
                                     runs_dir=str(tmp_path))
    later = LocalTransport("here", runs_dir=str(tmp_path), label="plan-y")
    alive_marker = f"alive-{checks.run_id()}"
    own = await later.start(RemoteRun("mine", loop_argv(alive_marker), deadline=60))
    try:
        before = await later.leftovers()
        assert [(each.session_id, each.gone_for) for each in before] == \
            [(handles[0].tag.split("/")[0], None)], "its controller was still alive"
        kill(proc)
        await asyncio.sleep(1.2)
        found = await later.leftovers()
        assert len(found) == 1
        leftover = found[0]
        assert leftover.handle == handles[0] and leftover.plan == "plan-x"
        assert leftover.grace == 30 and leftover.gone_for is not None
        assert 0 <= leftover.gone_for < 5
        names = [name for _, name in leftover.processes]
        assert "timeout" in names and "sh" in names, leftover.processes
        assert leftover.handle.pgid in leftover.pids  # timeout leads the run's group
        await later.stop(leftover.handle)
        assert await wait_gone([marker], 2) == []
        assert await later.leftovers() == []
        assert checks.processes_with(alive_marker), "the transport's own run was stopped"
    finally:
        if proc.poll() is None:
            kill(proc)
        await later.stop(own, grace=0.5)


def test_parse_leftovers_keeps_whole_records_only() -> None:
    text = ("run\ts1\tr1\t/h/s1/r1\t10\t11\tfleet\t6000\t250\n"
            "proc\t11\ttimeout\nproc\t12\tfio\nproc\tx\tbad\n"
            "run\ts2\tr2\t/h/s2/r2\t20\t21\t-\toff\t-1\n"
            "run\tbroken\n"
            "run\ts3\tr3\t/h/s3/r3\tnan\t31\t-\toff\t-1\nproc\t32\tsh\n")
    found = parse_leftovers("db1", text)
    assert found == [
        Leftover(RunHandle("db1", "r1", "/h/s1/r1", 10, 11, "s1/r1"), "s1", "fleet",
                 ((11, "timeout"), (12, "fio")), 60.0, 2.5),
        Leftover(RunHandle("db1", "r2", "/h/s2/r2", 20, 21, "s2/r2"), "s2", "", (),
                 math.inf, None),
    ]
    assert found[0].pids == (11, 12)


def test_parse_outcome_reads_the_status_and_the_watchdogs_stop() -> None:
    assert parse_outcome("running\n").status is None
    assert parse_outcome("rc 0\n").watchdog is None
    stopped = parse_outcome("rc 143\nwatchdog 6150 6000\n")
    assert (stopped.status, stopped.watchdog) == (143, WatchdogStop(61.5, 60.0))
    assert parse_outcome("lost\nwatchdog garbled\n").watchdog is None


def _remove_session(handle: RunHandle) -> None:
    runs = Path(pwd.getpwnam(TEST_USER).pw_dir) / ".cache" / "benchtui" / "runs"
    session = handle.tag.split("/")[0]
    if session:
        shutil.rmtree(runs / session, ignore_errors=True)
