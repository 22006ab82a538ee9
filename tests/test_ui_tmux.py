"""`benchtui demo` in a real terminal: tmux runs it, the test reads the screen and quits.

Everything is real: the console in a 120x40 tmux window (its own tmux server, on a socket in
the test's directory), the local transport, fio on a scratch file in a cache directory of the
test's own (XDG_CACHE_HOME), iostat. The test waits for fio's numbers on screen, checks the
header and the host pane, presses q, confirms with y (steps are still running), and checks that
benchtui exited with 130 and that no fio it started is left.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
#: fio's figures in the host pane: "IOPS    r 39.1k  w 16.8k".
PANE_IOPS = re.compile(r"IOPS\s+r\s+\d[\d.]*[kM]?\s+w\s+\d[\d.]*[kM]?")
#: The fleet totals in the header: "fleet IOPS r 39.1k w 16.8k   BW r 152 MiB/s w 65.5 MiB/s".
HEADER_TOTALS = re.compile(
    r"fleet IOPS r \d[\d.]*[kM]? w \d[\d.]*[kM]?\s+BW r \d[\d.]* [KMG]?i?B/s")
FIRST_DATA_LIMIT = 20.0  # seconds; the benchmark measures the real figure (target 3 s)


class Tmux:
    """A tmux server of the test's own, with one window."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def run(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True,
                              text=True, timeout=10, check=check)
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "demo", check=False)

    def wait_for(self, what: str, found: object, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if callable(found) and found(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} not on screen within {timeout:g} s; screen:\n{screen}")


def fio_processes(marker: str) -> list[str]:
    """fio processes whose command line names the test's own scratch directory."""
    done = subprocess.run(["pgrep", "-a", "fio"], capture_output=True, text=True, check=False)
    return [line for line in done.stdout.splitlines() if marker in line]


def test_demo_in_a_real_terminal_shows_fio_numbers_and_quits(tmp_path: Path) -> None:
    require_tool("tmux")
    require_tool("fio")
    cache = tmp_path / "cache"
    exit_file = tmp_path / "exit-code"
    tmux = Tmux(tmp_path / "tmux.sock")
    # Textual draws on stderr, so nothing is redirected; after the exit, the shell keeps the
    # window open, showing what benchtui printed last.
    # COLUMNS/LINES (pytest may set them) would override the window's size in Textual.
    command = (f"cd {ROOT} && unset COLUMNS LINES && XDG_CACHE_HOME={cache} "
               f"{sys.executable} -m benchtui demo "
               f"--seconds 15; echo $? > {exit_file}; sleep 60")
    started = time.monotonic()
    tmux.run("new-session", "-d", "-s", "demo", "-x", "120", "-y", "40", command)
    try:
        screen = tmux.wait_for("fio's numbers", PANE_IOPS.search, FIRST_DATA_LIMIT)
        first_data = time.monotonic() - started
        # the fleet header: session, step with progress, elapsed, hosts, fleet totals, latency
        assert re.search(r"demo\s+step randrw-4k .*\d+% ETA \d+s\s+elapsed \d+s\s+"
                         r"hosts 1/1 up", screen), screen
        screen = tmux.wait_for("the fleet totals", HEADER_TOTALS.search, 5)
        assert re.search(r"fleet lat p50/p99/p99\.9 r \d[\d.]* [nµm]?s/", screen), screen
        # the host pane: name, state, latency row; the footer's keys
        assert "localhost · running" in screen, screen
        assert re.search(r"lat r\s+\d", screen), screen
        assert "q Quit" in screen and "? Help" in screen, screen
        assert fio_processes(str(cache)), "fio is not running although its numbers show"

        # q while the step runs: asks first; y stops every process and quits
        tmux.run("send-keys", "-t", "demo", "q")
        tmux.wait_for("the quit question", lambda s: "Stop and quit" in s, 5)
        tmux.run("send-keys", "-t", "demo", "y")
        deadline = time.monotonic() + 10
        # (the shell creates the file before it writes the status: wait for both)
        while not (exit_file.exists() and exit_file.read_text().strip()) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert exit_file.exists(), f"benchtui did not exit; screen:\n{tmux.screen()}"
        assert exit_file.read_text().strip() == "130"
        assert "demo: interrupted; every process benchtui started was stopped" in tmux.screen()
        assert fio_processes(str(cache)) == [], "fio was left running"
    finally:
        tmux.run("kill-server", check=False)
    print(f"first fio numbers on screen after {first_data:.2f} s")
