"""A controller that dies, as a user meets it: ``benchtui record`` on this machine and
``benchtui run --jsonl`` on real sshd hosts, killed with SIGKILL mid-step: every process of
the step and the monitors is gone within the grace + 5 s. A new run of the same plan while a
dead controller's processes are still alive is refused by preflight (host, PIDs, the way out);
``--stop-leftovers`` stops them and goes on."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from benchtui.store.recording import SessionReader
from tests.helpers import require_tool
from tests.sshd import TEST_USER, SshdHost

ROOT = Path(__file__).resolve().parents[1]
GRACE = 2
WITHIN = GRACE + 5.0


def plan_text(name: str, hosts: str, data: str, seconds: int = 30) -> str:
    return (f'[session]\nname = "{name}"\n\n{hosts}'
            '[[monitor]]\ntool = "iostat"\nhosts = "all"\n\n'
            '[[step]]\nname = "long"\ntool = "fio"\nhosts = "all"\n'
            f'args = "--filename={data} --size=16m --rw=randrw --bs=4k --ioengine=psync '
            f'--runtime={seconds} --time_based --numjobs=2"\n')


def ssh_hosts(hosts: list[SshdHost]) -> str:
    return "".join(
        f'[hosts.{h.name}]\naddress = "{h.address}"\nport = {h.port}\nuser = "{h.user}"\n'
        f'identity = "{h.identity}"\n\n' for h in hosts)


def session_processes(session: Path) -> list[tuple[int, str]]:
    """The live processes of the session whose runs are in ``session``: tagged with its id
    (the commands, fio's workers, keepers), or naming its directory (wrappers, watchdogs)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status", "environ", "name"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE or proc.pid == os.getpid():
            continue
        tag = (proc.info["environ"] or {}).get("BENCHTUI_RUN", "")
        cmdline = " ".join(proc.info["cmdline"] or [])
        if tag.split("/")[0] == session.name or str(session) in cmdline:
            found.append((proc.pid, proc.info["name"]))
    return found


def fio_count(session: Path) -> int:
    return len([pid for pid, name in session_processes(session) if name == "fio"])


def wait_until(check: object, seconds: float) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return bool(check())  # type: ignore[operator]


def session_runs(runs: Path, plan: str) -> Path:
    """The runs directory of the session of ``plan`` under ``runs``."""
    for controller in runs.glob("*/*/controller"):
        if controller.read_text().split()[0] == plan:
            return controller.parent.parent
    raise AssertionError(f"no session of plan {plan} under {runs}")


@pytest.mark.slow
def test_record_killed_leaves_nothing_running_on_this_machine(tmp_path: Path) -> None:
    """The issue's own try: `benchtui record PLAN -o s.btr`, fio for 30 s, `kill -9` of
    benchtui after the step started: fio (and its workers) and iostat stop on their own."""
    require_tool("fio")
    require_tool("iostat")
    home = tmp_path / "home"
    home.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text("killed", '[hosts.here]\nlocal = true\n\n',
                              str(tmp_path / "fio.dat")))
    session_file = tmp_path / "s.btr"
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "record", str(plan), "-o",
                             str(session_file), "--controller-grace", str(GRACE)],
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    runs = home / ".cache" / "benchtui" / "runs"
    try:
        assert wait_until(lambda: list(runs.glob("*/*/controller")), 20), "nothing started"
        runs = session_runs(runs, "killed")
        assert wait_until(lambda: fio_count(runs) >= 3, 20), "fio did not start"
        time.sleep(1.5)
    finally:
        proc.kill()
        proc.wait()
    killed_at = time.monotonic()
    assert wait_until(lambda: not session_processes(runs), WITHIN), session_processes(runs)
    assert time.monotonic() - killed_at > GRACE - 0.5
    for out in runs.glob("*/out"):
        assert out.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1].endswith(
            b"stopped by the host's watchdog"), out
    with SessionReader.open(str(session_file)) as reader:  # the recording is fine
        assert reader.sample_count > 0


ORPHAN_MAKER = """
setsid sh -c 'trap "" TERM; exec sleep 300' &
sleep 300 &
echo started
wait
"""


def test_a_run_is_swept_when_its_main_process_ends_whoever_ended_it(tmp_path: Path) -> None:
    """The issue's orphan: the controller killed with kill -9, then the run's main process
    ended by another hand (SIGTERM), leaving a job process in its own session that ignores
    SIGTERM (as fio's, blocked in io_getevents) and a child in its group: the run's wrapper
    sweeps both (SIGTERM, SIGKILL after the grace) as the main process ends, and says so."""
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "orphans.sh"
    script.write_text(ORPHAN_MAKER)
    plan = tmp_path / "plan.toml"
    plan.write_text('[session]\nname = "orphans"\n\n[hosts.here]\nlocal = true\n\n'
                    f'[[step]]\nname = "s"\ntool = "command"\nparser = "mbw"\n'
                    f'command = "sh {script}"\n')
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "record", str(plan), "-o",
                             str(tmp_path / "s.btr"), "--controller-grace", str(GRACE)],
                            stderr=subprocess.DEVNULL, cwd=ROOT,
                            env={**os.environ, "HOME": str(home)})
    runs = home / ".cache" / "benchtui" / "runs"
    try:
        assert wait_until(lambda: list(runs.glob("*/*/controller")), 20), "nothing started"
        runs = session_runs(runs, "orphans")
        assert wait_until(lambda: [n for _, n in session_processes(runs)].count("sleep") == 2,
                          20), session_processes(runs)
    finally:
        proc.kill()
        proc.wait()
    killed_at = time.monotonic()
    main = next(p for p in psutil.process_iter(["cmdline"])
                if p.info["cmdline"] == ["sh", str(script)])
    main.terminate()  # the other hand
    assert wait_until(lambda: not session_processes(runs), WITHIN), session_processes(runs)
    assert time.monotonic() - killed_at < GRACE + 2 + 3
    out = next(runs.glob("*/out")).read_text()
    assert "benchtui: processes of the run still running after it ended were stopped: " in out


@pytest.mark.slow
def test_run_killed_leaves_nothing_running_on_ssh_hosts(sshd_hosts: list[SshdHost],
                                                        tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    hosts = sshd_hosts[:2]
    name = f"killed-{uuid.uuid4().hex[:6]}"
    data = _scratch() / "fio.dat"
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(name, ssh_hosts(hosts), str(data)))
    proc = _run(plan, hosts[0], "--controller-grace", str(GRACE))
    try:
        _first_sample(proc)
        runs = session_runs(_ssh_runs(), name)
        # (the first sample may be iostat's: fio may still be starting on a busy machine)
        assert wait_until(lambda: fio_count(runs) >= 6, 20), session_processes(runs)
        time.sleep(1.0)
    finally:
        proc.kill()
        proc.wait()
    killed_at = time.monotonic()
    assert wait_until(lambda: not session_processes(runs), WITHIN), session_processes(runs)
    assert time.monotonic() - killed_at > GRACE - 0.5
    assert len(list(runs.glob("*/watchdog"))) == 4  # fio and iostat on each host


@pytest.mark.slow
def test_leftovers_are_refused_then_stopped(sshd_hosts: list[SshdHost],
                                            tmp_path: Path) -> None:
    """A dead controller's processes (grace 30 s): a new run of the plan is refused with the
    host, the PIDs and the way out; `--stop-leftovers` stops them and the run goes on."""
    require_tool("fio")
    host = sshd_hosts[0]
    name = f"leftover-{uuid.uuid4().hex[:6]}"
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(name, ssh_hosts([host]), str(_scratch() / "fio.dat")))
    first = _run(plan, host, "--controller-grace", "30")
    try:
        _first_sample(first)
        runs = session_runs(_ssh_runs(), name)
        # (the first sample may be iostat's: fio may still be starting on a busy machine)
        assert wait_until(lambda: fio_count(runs) >= 3, 20), session_processes(runs)
    finally:
        first.kill()
        first.wait()
    fio_pids = [pid for pid, name in session_processes(runs) if name == "fio"]
    assert len(fio_pids) >= 3

    refused = subprocess.run(
        [sys.executable, "-m", "benchtui", "run", str(plan), "--jsonl", "--known-hosts",
         host.known_hosts], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert refused.returncode == 1, refused.stderr
    assert refused.stdout == "" and "Traceback" not in refused.stderr
    message = next(line for line in refused.stderr.splitlines()
                   if "earlier run" in line and "error" in line)
    assert f'plan "{name}"' in message and runs.name in message
    assert all(str(pid) in message for pid in fio_pids), (fio_pids, message)
    assert "the host's watchdog stops them in" in message and "--stop-leftovers" in message
    assert "nothing was started" in refused.stderr

    again = _run(plan, host, "--stop-leftovers")
    try:
        _first_sample(again)
        assert not session_processes(runs), "the leftovers are still running"
        again.send_signal(signal.SIGINT)
        assert again.wait(timeout=30) == 130
    finally:
        if again.poll() is None:
            again.kill()
    err = again.stderr.read() if again.stderr else ""
    assert f"{host.name}: stopped " in err and f"left running by session {runs.name}" in err


def _scratch() -> Path:
    directory = Path("/tmp") / f"benchtui-wd-{uuid.uuid4().hex[:8]}"
    directory.mkdir(mode=0o777)
    directory.chmod(0o777)
    return directory


def _ssh_runs() -> Path:
    return Path(pwd.getpwnam(TEST_USER).pw_dir) / ".cache" / "benchtui" / "runs"


def _run(plan: Path, host: SshdHost, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchtui", "run", str(plan), "--jsonl", "--known-hosts",
         host.known_hosts, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=ROOT)


def _first_sample(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("{"):
        proc.kill()
        raise AssertionError(proc.stderr.read() if proc.stderr else "no sample")


@pytest.mark.parametrize("value", ["soon", "-5s", "5 parsecs"])
def test_a_bad_controller_grace_option_is_one_sentence(tmp_path: Path, value: str) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text("bad", '[hosts.here]\nlocal = true\n\n', "/tmp/x.dat"))
    out = subprocess.run([sys.executable, "-m", "benchtui", "run", str(plan), "--jsonl",
                          f"--controller-grace={value}"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith(
        "benchtui run: error: argument --controller-grace: ")
    assert f"{value!r}" in out.stderr and '"off"' in out.stderr
