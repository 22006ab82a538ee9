"""A host's link cut while a session runs (a host in a network namespace whose veth goes
down, as in test_session_engine.py): shorter than ``controller_grace``, the run is unaffected
and no sample is lost; longer, the host's watchdog stops fio there by itself, and once the
link is back the session reports the host failed, saying why."""

from __future__ import annotations

import asyncio
import math
import os
import time
from pathlib import Path

import pytest

from benchtui.errors import PlanError
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session, SessionOptions
from benchtui.session.hosts import SshOptions
from benchtui.transport import LocalTransport
from benchtui.transport.ssh import SshTransport
from benchtui.transport.watchdog import BEAT_SILENCE
from tests import transport_checks as checks
from tests.helpers import require_tool
from tests.sshd import NetnsLab, SshdHost
from tests.test_session_engine import (
    Collector,
    assert_continuous,
    fio_step,
    host_tables,
    scratch_dir,
)


def _options(host: SshdHost, grace: float) -> SessionOptions:
    return SessionOptions(ssh=SshOptions(known_hosts=host.known_hosts, connect_timeout=5),
                          controller_grace=grace)


async def _start(host: SshdHost, tmp_path: Path, seconds: int, grace: float
                 ) -> tuple[Session, Collector, asyncio.Task[object], Path]:
    d = scratch_dir()
    plan_file = tmp_path / "cut.toml"
    plan_file.write_text('[session]\nname = "cut-grace"\n\n' + host_tables([host])
                         + fio_step(d, seconds))
    got = Collector()
    session = Session(load_plan(plan_file), options=_options(host, grace),
                      on_samples=got.add, on_event=got.event)
    task: asyncio.Task[object] = asyncio.create_task(session.run())
    give_up = time.monotonic() + 15
    while not any(s.tool == "fio" for s in got.samples) and time.monotonic() < give_up:
        await asyncio.sleep(0.2)
    assert got.samples, "no sample before the cut"
    return session, got, task, d


@pytest.mark.slow
async def test_a_cut_shorter_than_the_grace_changes_nothing(netns_lab: NetnsLab,
                                                            tmp_path: Path) -> None:
    require_tool("fio")
    host = netns_lab.hosts[0]
    grace = 5.0
    session, got, task, d = await _start(host, tmp_path, 14, grace)
    netns_lab.cut(host)
    try:
        await asyncio.sleep(4.0)  # no beat for 4 s: gone for 1 s of a 5 s grace
    finally:
        netns_lab.restore(host)
    result = await asyncio.wait_for(task, 90)
    assert result.ok, result.failures  # type: ignore[attr-defined]
    assert_continuous(got, minimum=13, host=host, marker=str(d))
    assert session.host_state[host.name] == "done"


@pytest.mark.slow
async def test_a_cut_longer_than_the_grace_stops_the_host_and_fails_it(
        netns_lab: NetnsLab, tmp_path: Path) -> None:
    require_tool("fio")
    host = netns_lab.hosts[1]
    grace = 2.0
    session, got, task, d = await _start(host, tmp_path, 40, grace)
    netns_lab.cut(host)
    cut_at = time.monotonic()
    try:
        # the host alone (its link is down) stops fio: silence, grace, a tick, the stop
        while checks.processes_with(str(d)) and time.monotonic() - cut_at < 20:
            await asyncio.sleep(0.2)
        stopped_after = time.monotonic() - cut_at
        assert checks.processes_with(str(d)) == [], "fio outlived the grace on the host"
        assert BEAT_SILENCE + grace - 1 < stopped_after < BEAT_SILENCE + grace + 5
    finally:
        netns_lab.restore(host)
    result = await asyncio.wait_for(task, 90)
    assert not result.ok  # type: ignore[attr-defined]
    failures = result.failures  # type: ignore[attr-defined]
    assert any("the host's watchdog stopped fio" in f and "controller_grace 2 s" in f
               for f in failures), failures
    assert session.host_state[host.name] == "failed"
    ends = [e for e in got.events if e.kind == "run_end" and e.host == host.name]
    assert ends and "stopped by the host's watchdog" in ends[-1].message
    assert not any("exited with status" in f for f in failures), failures


@pytest.mark.slow
async def test_a_cut_longer_than_the_reconnect_window_gives_the_host_up(
        netns_lab: NetnsLab, tmp_path: Path) -> None:
    """The link stays down (packets dropped, nothing closed): noticed by keepalives (20 s
    of silence), the host is given up once the window (10 s, counted from its last word) is
    over, its fio failed with why; the session ends by itself, and the host's watchdog has
    stopped fio there meanwhile."""
    require_tool("fio")
    host = netns_lab.hosts[0]
    d = scratch_dir()
    plan_file = tmp_path / "lost.toml"
    plan_file.write_text('[session]\nname = "lost"\nreconnect_window = 10\n\n'
                         + host_tables([host]) + fio_step(d, 60))
    got = Collector()
    session = Session(load_plan(plan_file), options=_options(host, 2.0), on_samples=got.add,
                      on_event=got.event)
    task = asyncio.create_task(session.run())
    give_up = time.monotonic() + 15
    while not any(s.tool == "fio" for s in got.samples) and time.monotonic() < give_up:
        await asyncio.sleep(0.2)
    netns_lab.cut(host)
    cut_at = time.monotonic()
    try:
        result = await asyncio.wait_for(task, 60)
        ended_after = time.monotonic() - cut_at
        assert checks.processes_with(str(d)) == [], "fio outlived the grace on the host"
    finally:
        netns_lab.restore(host)
    assert not result.ok and session.host_state[host.name] == "failed"
    # keepalives: 5 s x (3 + 1) of silence; then one last attempt of at most 2 s
    assert ended_after < 20 + 2 + 5, ended_after
    ends = [e for e in got.events if e.kind == "run_end" and e.host == host.name]
    assert [e.data.get("outcome") for e in ends] == ["failed", None], ends
    assert "given up after" in str(ends[0].data["reason"]), ends[0]
    assert "could not stop fio: the host was given up" in ends[1].message, ends[1]


@pytest.mark.parametrize(("option", "plan_says", "watched"), [
    (None, "", 60.0), (None, 'controller_grace = "5m"\n', 300.0),
    (7.0, 'controller_grace = "5m"\n', 7.0),
    (math.inf, "", math.inf), (None, 'controller_grace = "off"\n', math.inf)])
def test_the_option_wins_over_the_plan(tmp_path: Path, option: float | None, plan_says: str,
                                       watched: float) -> None:
    """The transports watch their runs with --controller-grace, else the plan's value; the
    local one by this process, the SSH one by its keeper's beats."""
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(f'[session]\nname = "p"\n{plan_says}\n[hosts.here]\nlocal = true\n\n'
                         '[hosts.far]\naddress = "192.0.2.1"\n\n'
                         '[[step]]\ntool = "mbw"\nhosts = "all"\nargs = "8"\n')
    session = Session(load_plan(plan_file), options=SessionOptions(controller_grace=option))
    assert session.controller_grace == watched
    local, far = session.transports["here"], session.transports["far"]
    assert isinstance(local, LocalTransport) and isinstance(far, SshTransport)
    assert (local.watch.grace, local.watch.mode, local.watch.pid) == \
        (watched, "pid", os.getpid())
    assert (far.watch.grace, far.watch.mode, far.watch.name, far.watch.label) == \
        (watched, "beat", "far", "p")
    assert far.reconnect_timeout == (330.0 if watched == 300 else 120.0)


@pytest.mark.parametrize(("option", "plan_says", "window"), [
    (None, "", 120.0), (None, 'controller_grace = "5m"\n', 330.0),
    (None, 'reconnect_window = "20s"\n', 20.0), (45.0, "reconnect_window = 20\n", 45.0),
    (None, 'controller_grace = "5m"\nreconnect_window = 20\n', 20.0)])
def test_the_reconnect_window_from_the_option_the_plan_or_the_grace(
        tmp_path: Path, option: float | None, plan_says: str, window: float) -> None:
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(f'[session]\nname = "p"\n{plan_says}\n'
                         '[hosts.far]\naddress = "192.0.2.1"\n\n'
                         '[[step]]\ntool = "mbw"\nhosts = "all"\nargs = "8"\n')
    session = Session(load_plan(plan_file), options=SessionOptions(reconnect_window=option))
    far = session.transports["far"]
    assert isinstance(far, SshTransport)
    assert session.reconnect_window == far.reconnect_timeout == window


@pytest.mark.parametrize(("value", "says"), [
    ('"off"', "cannot be off"), ("0", "must be more than zero seconds"),
    ('"soon"', "is not a duration")])
def test_a_bad_reconnect_window_is_a_plan_error(tmp_path: Path, value: str, says: str) -> None:
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(f'[session]\nname = "p"\nreconnect_window = {value}\n\n'
                         '[hosts.here]\nlocal = true\n\n[[step]]\ntool = "mbw"\nargs = "8"\n')
    with pytest.raises(PlanError) as caught:
        load_plan(plan_file)
    text = str(caught.value)
    assert text.startswith(f"{plan_file}:3: reconnect_window {value} of [session] {says}")
    assert text.endswith('; write reconnect_window = "2m" (how long a host may stay '
                         'unreachable before it is given up)'), text
