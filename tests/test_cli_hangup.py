"""The terminal going away (SIGHUP) stops a session as Ctrl-C does, unless the run was
started under ``nohup``: headless (`run --jsonl`) with real fio, and the console in a real
terminal (tmux) whose window is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from benchtui.session.stop_signals import detach_from_terminal, is_hangup, stop_signals
from tests.helpers import FROM_A_TERMINAL, require_tool

ROOT = Path(__file__).resolve().parents[1]


def _plan(tmp_path: Path, seconds: int) -> tuple[Path, str]:
    marker = f"benchtui-hup-{uuid.uuid4().hex[:8]}"
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "hangup"\n\n[hosts.here]\nlocal = true\n\n'
        '[[monitor]]\ntool = "iostat"\n\n'
        '[[step]]\nname = "long"\ntool = "fio"\nhosts = "all"\n'
        f'args = "--filename=/var/tmp/{marker}.dat --size=16m --rw=randrw --bs=4k '
        f'--ioengine=psync --runtime={seconds} --time_based"\n')
    return plan, marker


def _left(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True,
                         check=False)
    return [line for line in out.stdout.splitlines() if "pgrep" not in line]


def _wait_until_gone(marker: str, seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _left(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_stop_signals_include_hangup_unless_ignored() -> None:
    before = signal.getsignal(signal.SIGHUP)
    try:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        assert stop_signals() == (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup leaves it
        assert stop_signals() == (signal.SIGINT, signal.SIGTERM)
    finally:
        signal.signal(signal.SIGHUP, before)
    assert is_hangup(signal.SIGHUP) and not is_hangup(signal.SIGTERM)


def test_detaching_leaves_redirected_streams_alone(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    code = ("import os, sys\nfrom benchtui.session.stop_signals import detach_from_terminal\n"
            "detach_from_terminal()\nprint('still here', flush=True)\n")
    with out.open("w") as f:
        done = subprocess.run([sys.executable, "-c", code], stdout=f, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "still here\n"
    assert detach_from_terminal is not None


@pytest.mark.slow
def test_hangup_stops_a_headless_run(tmp_path: Path) -> None:
    require_tool("fio")
    plan, marker = _plan(tmp_path, 120)
    out = tmp_path / "samples.jsonl"
    with out.open("w") as f:
        proc = subprocess.Popen([*FROM_A_TERMINAL, sys.executable, "-m", "benchtui", "run",
                                 str(plan), "--jsonl"],
                                stdout=f, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            deadline = time.monotonic() + 30
            while '"tool":"fio"' not in out.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.2)
            assert _left(marker), "fio is not running"
            proc.send_signal(signal.SIGHUP)
            rc = proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    assert rc == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert _wait_until_gone(marker, 3) == []
    # the samples written before the hangup are whole lines
    assert all(line.startswith("{") and line.endswith("}")
               for line in out.read_text().splitlines())


@pytest.mark.slow
def test_nohup_keeps_a_headless_run_going(tmp_path: Path) -> None:
    require_tool("fio")
    plan, marker = _plan(tmp_path, 120)

    # nohup itself: it leaves SIGHUP ignored for what it runs
    proc = subprocess.Popen(["nohup", sys.executable, "-m", "benchtui", "run", str(plan),
                             "--jsonl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("{")
        proc.send_signal(signal.SIGHUP)
        time.sleep(1.5)
        assert proc.poll() is None, "a run under nohup ended on SIGHUP"
        assert _left(marker)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _wait_until_gone(marker, 3) == []


@pytest.mark.slow
def test_closing_the_console_terminal_stops_everything(tmp_path: Path) -> None:
    require_tool("tmux")
    require_tool("fio")
    cache = tmp_path / "cache"
    socket = tmp_path / "tmux.sock"
    pid_file = tmp_path / "pid"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-S", str(socket), *args], capture_output=True,
                              text=True, timeout=10, check=False).stdout

    # exec: the window's process is benchtui itself, so killing the window hangs it up
    command = (f"cd {ROOT} && unset COLUMNS LINES && echo $$ > {pid_file} && "
               f"XDG_CACHE_HOME={cache} exec {sys.executable} -m benchtui demo --seconds 60")
    tmux("new-session", "-d", "-s", "hup", "-x", "100", "-y", "30", command)
    try:
        deadline = time.monotonic() + 30
        while not _left(str(cache)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _left(str(cache)), f"fio did not start; screen:\n{tmux('capture-pane', '-p')}"
        pid = int(pid_file.read_text())
        time.sleep(1.0)  # the console is up and drawing
        tmux("kill-server")  # the terminal goes away: SIGHUP
        deadline = time.monotonic() + 20
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "benchtui hung after its terminal went away"
        assert _wait_until_gone(str(cache), 3) == [], "fio was left running"
    finally:
        tmux("kill-server")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by tmux) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False
