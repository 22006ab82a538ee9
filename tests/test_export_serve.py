"""``benchtui serve`` for real: a local plan with real fio and iostat on two local hosts, the
live /metrics checked by promtool while it runs, per-interval series gone once the step ended
(while the results and health stay, during --linger), and Ctrl-C during the linger keeping the
run's exit status."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.export_support import promtool_check
from tests.helpers import require_tool

PLAN = """
[session]
name = "serve-test"

[hosts.alpha]
local = true

[hosts.beta]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "rw"
tool = "fio"
hosts = "all"
args = "--filename={file} --size=16m --rw=randrw --bs=4k --runtime=2 --time_based"
"""


def write_plan(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(file=tmp_path / "fio.dat"), encoding="utf-8")
    return plan


class Lines:
    """A process's stderr, line by line, read on a thread so the test can wait with timeouts."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        assert proc.stderr is not None
        stream = proc.stderr

        def read() -> None:
            for line in stream:
                self._queue.put(line)

        threading.Thread(target=read, daemon=True).start()

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            for line in self.seen:
                m = re.search(pattern, line)
                if m:
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} on stderr in {timeout} s: {self.seen}")
            try:
                self.seen.append(self._queue.get(timeout=left))
            except queue.Empty:
                continue


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        body: bytes = response.read()
    return body.decode()


def poll(url: str, *patterns: str, absent: bool = False, timeout: float = 20) -> str:
    """/metrics once every pattern is in it (or, with ``absent``, none is)."""
    deadline = time.monotonic() + timeout
    while True:
        body = fetch(url)
        found = [re.search(p, body, re.M) is not None for p in patterns]
        if (not any(found)) if absent else all(found):
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"/metrics {'still has' if absent else 'never had'} "
                                 f"{patterns}:\n{body}")
        time.sleep(0.25)


@pytest.mark.slow
def test_serve_runs_the_plan_and_serves_live_values(tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchtui", "serve", str(write_plan(tmp_path)),
         "--listen", "127.0.0.1:0", "--linger", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = Lines(proc)
        url = err.wait_for(r"serving metrics on (http://127\.0\.0\.1:\d+/metrics)", 20).group(1)
        # While the step runs: its progress; then both hosts' live values (they stay 3 s
        # after fio's last interval), and promtool finds nothing to lint.
        poll(url, r'^benchtui_step_progress_ratio\{step="rw"\}', r'^benchtui_step_info\{')
        body = poll(url, *(rf'^benchtui_iops\{{.*host="{h}".*op="{op}"'
                           for h in ("alpha", "beta") for op in ("read", "write")),
                    *(rf'^{name}\{{.*host="{h}"' for h in ("alpha", "beta")
                      for name in ("benchtui_disk_util_ratio",
                                   "benchtui_op_latency_seconds_bucket")),
                    r"^benchtui_fleet_latency_seconds\{")
        checked = promtool_check(body)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        # After the step: the per-interval series go (3 s without a point), the rest stays.
        err.wait_for(r"the plan is done; serving its last values for 30 s more", 20)
        assert not any("unauthenticated" in line for line in err.seen)  # loopback: no warning
        body = poll(url, r"^benchtui_(iops|op_latency_seconds_count|disk_util_ratio)\{",
                    absent=True, timeout=4.5)
        for name in ("benchtui_result_iops", "benchtui_host_up", "benchtui_samples_total",
                     "benchtui_session_end_time_seconds"):
            assert re.search(rf"^{name}\b", body, re.M), name
        assert 'benchtui_steps_finished_total{result="ok"} 1.0' in body
        # Ctrl-C while lingering ends the wait; the run's exit status (0) stands.
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
        # ...and ends with a line saying so, as run does
        err.wait_for(r"^benchtui: serve-test: every step succeeded; stopped serving metrics "
                     r"\(linger cut short\)$", 5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stdout is not None and proc.stdout.read() == ""


@pytest.mark.slow
def test_serve_prints_its_end_line_when_the_linger_ends(tmp_path: Path) -> None:
    require_tool("fio")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.replace("--runtime=2", "--runtime=1").format(file=tmp_path / "f.dat"),
                    encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "benchtui", "serve", str(plan), "--listen",
                          "127.0.0.1:0", "--linger", "1"], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[-1] == \
        "benchtui: serve-test: every step succeeded; stopped serving metrics"
