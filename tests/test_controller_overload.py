"""A controller starved of CPU falls behind and says so; its hosts' work goes on (issue 32).

``benchtui run --jsonl`` follows fio json+ (16 jobs, 1 Hz) on real sshd hosts with a
``controller_grace`` of 1 s: each host's watchdog stops fio once it has had no beat for
3 s + 1 s. The controller's process is then starved as ``cpulimit`` starves one (SIGSTOP,
SIGCONT): it runs 0.3 s in every 6.3 s, three times over, its event loop unable to turn for
6 s at a time. Its hosts' watchdogs must never fire (the beats come from a process of their
own), every fio document must reach the output once it catches up, and stderr must say that
it was behind, and by how much.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from tests.helpers import require_tool
from tests.sshd import SshdHost
from tests.test_cli_watchdog import (
    ROOT,
    _scratch,
    _ssh_runs,
    session_runs,
    ssh_hosts,
    wait_until,
)

SECONDS = 22
GRACE = 1


def _plan(name: str, hosts: list[SshdHost], directory: Path) -> str:
    return (f'[session]\nname = "{name}"\n\n{ssh_hosts(hosts)}'
            '[[step]]\nname = "wide"\ntool = "fio"\nhosts = "all"\n'
            f'args = "--directory={directory} --size=4m --rw=randread --bs=4k '
            f'--ioengine=psync --rate_iops=100 --runtime={SECONDS} --time_based '
            '--numjobs=16 --name=w"\n')


@pytest.mark.slow
def test_a_starved_controller_falls_behind_and_its_hosts_work_goes_on(
        sshd_hosts: list[SshdHost], tmp_path: Path) -> None:
    require_tool("fio")
    hosts = sshd_hosts[:2]
    name = f"starved-{os.getpid()}"
    plan = tmp_path / "plan.toml"
    plan.write_text(_plan(name, hosts, _scratch()))
    out, err = tmp_path / "samples.jsonl", tmp_path / "stderr.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "benchtui", "run", str(plan), "--jsonl", "--known-hosts",
             hosts[0].known_hosts, "--controller-grace", str(GRACE)],
            stdout=stdout, stderr=stderr, cwd=ROOT)
    try:
        assert wait_until(lambda: b'"fio"' in out.read_bytes(), 30), err.read_text()
        for _ in range(3):  # as cpulimit does: runs 0.3 s in every 6.3 s
            proc.send_signal(signal.SIGSTOP)
            time.sleep(6.0)
            proc.send_signal(signal.SIGCONT)
            time.sleep(0.3)
        status = proc.wait(timeout=SECONDS + 60)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
    said = err.read_text()
    runs = session_runs(_ssh_runs(), name)
    assert not list(runs.glob("*/watchdog")), f"a host's watchdog stopped fio:\n{said}"
    assert "watchdog" not in said, said
    assert status == 0, said
    # every document, once it caught up: one interval per second per job and host
    seconds: dict[str, set[float]] = defaultdict(set)
    for line in out.read_bytes().splitlines():
        sample = orjson.loads(line)
        if sample["tool"] == "fio" and sample["kind"] == "interval":
            seconds[sample["host"]].add(sample["t"])
    assert sorted(seconds) == sorted(h.name for h in hosts)
    for host, stamps in seconds.items():
        assert len(stamps) >= SECONDS - 3, (host, len(stamps))
    # it said that it was behind, by how much, and that it caught up
    behind = [float(x) for x in re.findall(r"behind by (\d+(?:\.\d+)?) s", said)]
    assert behind and max(behind) >= 4, said
    assert "caught up" in said, said
