"""The controller's heartbeat process (transport/heartbeats.py, beat_process.py) with a real
sshd host: it beats while the controller's event loop turns, however late, and while the
loop stands still for less than its stall limit; once the loop has not turned for that
limit, the beats stop and the host's watchdog stops the run as it would a dead
controller's; killed or stopped (SIGSTOP: it stops answering the ticks), the heartbeat
process is ended and hands the beats back to the transport (the run goes on) and says so.
(A controller killed with SIGKILL takes its heartbeat process with it:
tests/test_cli_watchdog.py.)"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import pwd
import shutil
import signal
import time
from pathlib import Path

import pytest

from benchtui.transport import RemoteRun, RunHandle
from benchtui.transport.heartbeats import Heartbeats, Watched
from benchtui.transport.ssh import SshTransport
from tests import transport_checks as checks
from tests.sshd import TEST_USER, SshdHost, free_port


def beat_file(transport: SshTransport) -> Path:
    home = Path(pwd.getpwnam(TEST_USER).pw_dir)
    return home / ".cache" / "benchtui" / "runs" / transport.session_id / ".beat-db1"


async def wait_for_beats(transport: SshTransport) -> str:
    """Until a keeper fed by this controller wrote a beat (not the run's start's own); the
    beat file's text."""
    path = beat_file(transport)
    give_up = time.monotonic() + 30
    while time.monotonic() < give_up:
        if path.exists() and (text := path.read_text()).split()[1:] \
                and text.split()[1] == "open" and text.split()[2] != "start":
            return text
        await asyncio.sleep(0.1)
    raise AssertionError("no beat reached the host")


async def wait_ended(transport: SshTransport, handle: RunHandle, seconds: float) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if await transport.exit_status(handle) is not None:
            return True
        await asyncio.sleep(0.2)
    return False


def uptime_of(beat: str) -> float:
    """The host's uptime (seconds) a beat line was written at."""
    return int(beat.split(maxsplit=1)[0]) / 100


async def test_a_stalled_loop_keeps_beating_until_the_limit_then_is_taken_for_gone(
        sshd_hosts: list[SshdHost]) -> None:
    beats = Heartbeats(stall_limit=8.0)
    transport = SshTransport("db1", sshd_hosts[0].target(), controller_grace=1.0,
                             heartbeats=beats)
    await transport.connect()
    try:
        handle = await transport.start(RemoteRun(checks.run_id(), ["sleep", "120"],
                                                 deadline=150))
        before = uptime_of(await wait_for_beats(transport))
        # The event loop stands still for 6 s: with the beats on it, the host would have
        # had none for 3 s + the 1 s grace and stopped the run. The heartbeat process beats.
        time.sleep(6.0)
        beat = beat_file(transport).read_text()
        assert beat.split()[1] == "open" and uptime_of(beat) >= before + 5, (before, beat)
        assert not await wait_ended(transport, handle, 1), "a busy controller taken for gone"
        # It stands still past the stall limit: hung, not busy; the beats stop and after
        # 3 s without one and the 1 s grace, the host's watchdog stops the run.
        time.sleep(16.0)
        assert await wait_ended(transport, handle, 10), "the run outlived a hung controller"
        outcome = await transport.outcome(handle)
        assert outcome.watchdog is not None and outcome.watchdog.grace == 1.0
    finally:
        await transport.close()
        await beats.close()
        shutil.rmtree(beat_file(transport).parent, ignore_errors=True)


@pytest.mark.parametrize(("sig", "said"), [
    (signal.SIGKILL, "the heartbeat process ended (exit status -9"),
    (signal.SIGSTOP, "has not answered for"),
])
async def test_a_killed_or_stopped_heartbeat_process_hands_the_beats_back(
        sshd_hosts: list[SshdHost], sig: signal.Signals, said: str) -> None:
    troubles: list[str] = []
    beats = Heartbeats(on_trouble=troubles.append)
    transport = SshTransport("db1", sshd_hosts[1].target(), controller_grace=5.0,
                             heartbeats=beats)
    await transport.connect()
    try:
        handle = await transport.start(RemoteRun(checks.run_id(), ["sleep", "120"],
                                                 deadline=150))
        first = await wait_for_beats(transport)
        pid = beats.pid
        assert pid is not None
        give_up = time.monotonic() + 5
        while not beats.ready and time.monotonic() < give_up:  # (its answer read)
            await asyncio.sleep(0.1)
        assert beats.ready
        os.kill(pid, sig)
        await asyncio.sleep(10.0)  # past 3 s without a beat and the 5 s grace
        assert await transport.exit_status(handle) is None, "the run was stopped"
        assert len(troubles) == 1, troubles
        assert said in troubles[0], troubles
        assert "heartbeats come from this controller's event loop" in troubles[0]
        beat = beat_file(transport).read_text().split()
        assert beat[1] == "open" and beat[2] != first.split()[2]  # another keeper beats
        with pytest.raises(ProcessLookupError):  # (a stuck one was ended)
            os.kill(pid, 0)
        await transport.stop(handle)
    finally:
        await transport.close()
        await beats.close()
        shutil.rmtree(beat_file(transport).parent, ignore_errors=True)


async def test_a_host_the_heartbeat_process_cannot_reach_is_beaten_by_its_transport(
        sshd_hosts: list[SshdHost]) -> None:
    troubles: list[str] = []
    handed_back: list[str] = []
    beats = Heartbeats(on_trouble=troubles.append)
    closed = free_port()  # nothing listens there: the process's connection is refused
    target = dataclasses.replace(sshd_hosts[0].target(), port=closed)
    try:
        beats.watch(Watched("db9", target, "~/.cache/benchtui/runs", "s1", 60.0),
                    lambda: handed_back.append("db9"))
        give_up = time.monotonic() + 20
        while not handed_back and time.monotonic() < give_up:
            await asyncio.sleep(0.1)
        assert handed_back == ["db9"], troubles
        assert len(troubles) == 1 and troubles[0].startswith(
            "db9: the heartbeat process cannot reach the host ("), troubles
        assert beats.failed is None  # (the process goes on for the other hosts)
        beats.watch(Watched("db9", target, "~/.cache/benchtui/runs", "s1", 60.0),
                    lambda: handed_back.append("again"))  # a new link: still its transport's
        assert handed_back == ["db9", "again"]
    finally:
        await beats.close()
