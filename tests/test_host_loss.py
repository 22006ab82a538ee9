"""A host lost mid-step, as a nightly ``benchtui record`` meets it (issue 27), with real sshd
hosts: while another host runs, the host's sshd is killed (its listener and its connection
processes: a machine that died) or frozen with SIGSTOP (a machine that hangs, a link that
drops packets without closing anything).

Left alone, the session gives the host up once it has been unreachable for the reconnect
window (20 s, from the plan or ``--reconnect-window``), records its runs as failed with why,
runs the remaining step on the host still up, closes its recording and exits 1: within 40 s
of the loss. SIGTERM 15 s after the loss ends it within 5 s, the recording closed and the
step's outcome written. Then the lost host's own watchdog stops what ran there, once the
controller has been gone for ``controller_grace``.

The four sessions run at once, each with a host of its own to lose, to keep the suite short.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.store.recording import SessionReader
from tests.helpers import require_tool
from tests.sshd import SshdFleet, SshdHost
from tests.test_cli_outcomes import Benchtui

WINDOW = 20
GRACE = 2
#: The loss comes this long after the lost host's fio started.
LOSS_AFTER = 2.0
SIGTERM_AFTER = 15.0


def host_table(name: str, host: SshdHost) -> str:
    return (f'[hosts.{name}]\naddress = "{host.address}"\nport = {host.port}\n'
            f'user = "{host.user}"\nidentity = "{host.identity}"\n\n')


def plan_text(name: str, up: SshdHost, gone: SshdHost, data: Path, window: str) -> str:
    fio = (f"--filename={data}/{{host}}.dat --size=4m --rw=randread --bs=4k --ioengine=psync "
           "--rate_iops=50 --time_based")
    return (f'[session]\nname = "{name}"\ncontroller_grace = {GRACE}\n{window}\n'
            + host_table("up", up) + host_table("gone", gone)
            + '[[monitor]]\ntool = "iostat"\n\n'
            f'[[step]]\nname = "one"\ntool = "fio"\nargs = "{fio} --runtime=10"\n\n'
            f'[[step]]\nname = "two"\ntool = "fio"\nargs = "{fio} --runtime=2"\n')


def sshd_processes(host: SshdHost) -> list[psutil.Process]:
    """The host's sshd: its listener and its connection processes (not what they run: the
    keeper of the controller's heartbeat lives on, as it does on a host whose sshd died)."""
    listener = psutil.Process(host.process.pid)
    return [listener, *(p for p in listener.children(recursive=True) if p.name() == "sshd")]


@dataclass
class Scenario:
    """One session, and the host it loses: ``how`` "kill" or "freeze"."""

    name: str
    how: str
    sigterm: bool
    host: SshdHost
    file: Path
    run: Benchtui
    lost_at: float = 0.0
    ended_at: float = 0.0
    code: int | None = None
    session_id: str = ""
    frozen: list[psutil.Process] = field(default_factory=list)

    def lose(self) -> None:
        self.lost_at = time.monotonic()
        for proc in sshd_processes(self.host):
            if self.how == "kill":
                proc.kill()
            else:
                proc.suspend()
                self.frozen.append(proc)

    def thaw(self) -> None:
        for proc in self.frozen:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.resume()


def events(path: Path) -> list[Event]:
    with SessionReader.open(str(path)) as reader:
        assert reader.complete, f"{path} was not closed"
        return reader.events()


def the(found: list[Event], kind: str, step: str | None = None, host: str | None = None
        ) -> list[Event]:
    return [e for e in found if e.kind == kind and (step is None or e.step == step)
            and (host is None or e.host == host)]


def tagged_with(session_ids: list[str]) -> list[tuple[int, str]]:
    """Processes of these sessions still alive on this machine (every sshd host is it)."""
    found = []
    for proc in psutil.process_iter(["environ", "name", "status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        tag = (proc.info["environ"] or {}).get("BENCHTUI_RUN", "")
        if tag and tag.split("/")[0] in session_ids:
            found.append((proc.pid, proc.info["name"]))
    return found


@pytest.mark.slow
def test_a_lost_host_is_given_up_and_the_session_ends(sshd_fleet: SshdFleet, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    require_tool("fio")
    require_tool("iostat")
    up = sshd_fleet.hosts[0]
    home = tmp_path / "home"
    home.mkdir()
    data = Path("/tmp") / f"benchtui-loss-{uuid.uuid4().hex[:8]}"
    data.mkdir(mode=0o777)
    data.chmod(0o777)
    request.addfinalizer(lambda: shutil.rmtree(data, ignore_errors=True))
    cases = [("killed", "kill", False, f"reconnect_window = {WINDOW}", []),
             ("killed-term", "kill", True, "", []),
             ("frozen", "freeze", False, "", ["--reconnect-window", f"{WINDOW}s"]),
             ("frozen-term", "freeze", True, "", [])]
    scenarios: list[Scenario] = []
    try:
        for name, how, sigterm, window, options in cases:
            gone = sshd_fleet.start(f"loss-{name}-{uuid.uuid4().hex[:4]}")
            plan = tmp_path / f"{name}.toml"
            plan.write_text(plan_text(f"loss-{name}", up, gone, data / name, window))
            (data / name).mkdir(mode=0o777)
            (data / name).chmod(0o777)
            file = tmp_path / f"{name}.btr"
            run = Benchtui(home, "record", str(plan), "-o", str(file), "--known-hosts",
                           up.known_hosts, *options)
            scenarios.append(Scenario(name, how, sigterm, gone, file, run))
        for s in scenarios:
            s.run.wait_for("gone: fio started", 60)
        time.sleep(LOSS_AFTER)
        for s in scenarios:
            s.lose()
        lost_at = max(s.lost_at for s in scenarios)
        time.sleep(max(lost_at + SIGTERM_AFTER - time.monotonic(), 0))
        for s in scenarios:
            if s.sigterm:
                assert s.run.proc.poll() is None, s.run.stderr()
                s.run.proc.send_signal(signal.SIGTERM)
                termed = time.monotonic()
                s.code = s.run.finish(30)
                s.ended_at = time.monotonic()
                assert s.ended_at - termed < 5.0, (s.name, s.run.stderr())
        for s in scenarios:
            if not s.sigterm:
                s.code = s.run.finish(90)
                s.ended_at = time.monotonic()
    finally:
        for s in scenarios:
            if s.run.proc.poll() is None:
                s.run.proc.kill()
            s.thaw()
    for s in scenarios:
        err = s.run.stderr()
        assert "Traceback" not in err, err
        match = re.search(r"session loss-\S+ \((\S+)\)", err)
        assert match, err
        s.session_id = match.group(1)
        found = events(s.file)
        step_one = the(found, ev.STEP_END, "one")
        session_end = the(found, ev.SESSION_END)
        assert len(step_one) == 1 and len(session_end) == 1, (s.name, err)
        if s.sigterm:
            assert s.code == 130, (s.name, err)
            assert ev.outcome_of(step_one[0]) == ev.INTERRUPTED, step_one
            assert ev.outcome_of(session_end[0]) == ev.INTERRUPTED
            assert ev.reason_of(session_end[0]) == "SIGTERM"
            assert not the(found, ev.STEP_START, "two")
            continue
        # left alone: given up after the window, the rest of the plan on the host still up
        assert s.code == 1, (s.name, err)
        assert s.ended_at - s.lost_at < 2 * WINDOW, (s.name, s.ended_at - s.lost_at, err)
        lost = the(found, ev.RUN_END, "one", "gone")
        assert len(lost) == 1 and ev.outcome_of(lost[0]) == ev.FAILED, lost
        assert "given up after" in ev.reason_of(lost[0]) and "reconnect_window" in \
            ev.reason_of(lost[0]), lost[0]
        assert ev.outcome_of(step_one[0]) == ev.FAILED, (s.name, step_one[0].message, err)
        assert "gone: fio was lost: given up" in ev.reason_of(step_one[0])
        failed = [e for e in the(found, ev.HOST_STATE, host="gone")
                  if e.data.get("state") == "failed"]
        assert len(failed) == 1, failed
        assert the(found, ev.STEP_START, "two")[0].data["hosts"] == ["up"]
        two = the(found, ev.STEP_END, "two")
        assert ev.outcome_of(two[0]) == ev.COMPLETED, two
        assert ev.outcome_of(session_end[0]) == ev.FAILED
        assert "gone: could not stop fio: the host was given up; the host's watchdog " \
            "stops them once this controller has been gone for 2 s" in err, err
    # the lost hosts' watchdogs stop what ran there, the controller being gone: at once for
    # a killed sshd (its keeper's connection closed), 3 s without a beat for a frozen one
    sessions = [s.session_id for s in scenarios]
    give_up = time.monotonic() + GRACE + 10
    while tagged_with(sessions) and time.monotonic() < give_up:
        time.sleep(0.2)
    assert tagged_with(sessions) == []


def test_sigterm_ends_a_session_whose_local_tool_hangs(tmp_path: Path) -> None:
    """A tool on this machine that ignores SIGTERM (hung, or busy in a loop): SIGTERM ends
    the session within 5 s, the tool killed after the grace, the recording closed."""
    home = tmp_path / "home"
    home.mkdir()
    marker = f"benchtui-hang-{uuid.uuid4().hex[:8]}"
    plan = tmp_path / "hang.toml"
    plan.write_text('[session]\nname = "hang"\n\n[hosts.here]\nlocal = true\n\n'
                    '[[step]]\nname = "hang"\ntool = "command"\nparser = "mbw"\n'
                    f"command = \"sh -c 'trap \\\"\\\" TERM; echo {marker}; "
                    "while :; do sleep 1; done'\"\n")
    file = tmp_path / "hang.btr"
    run = Benchtui(home, "record", str(plan), "-o", str(file))
    try:
        run.wait_for("here: command started", 30)
        time.sleep(1.0)
        run.proc.send_signal(signal.SIGTERM)
        termed = time.monotonic()
        code = run.finish(30)
        assert time.monotonic() - termed < 5.0, run.stderr()
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
    assert code == 130, run.stderr()
    assert "every process benchtui started was stopped" in run.stderr()
    found = events(file)
    assert ev.outcome_of(the(found, ev.STEP_END, "hang")[0]) == ev.INTERRUPTED
    assert not [p for p in psutil.process_iter(["cmdline"])
                if marker in " ".join(p.info["cmdline"] or [])]
