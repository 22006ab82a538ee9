"""The session engine end to end, with real sshd hosts, real fio and iostat.

Proves what issue 3 asks: samples arrive from every host every second; Ctrl-C leaves no
process on any host within 3 s; a refused destructive write starts nothing; a shell-injection
plan value runs nothing; a link cut for 10 s loses no sample. And that a session's controller
runs under the garbage-collector policy (issue 32, ``gc_policy``), put back when it ends.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import os
import pwd
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from benchtui import gc_policy
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session, SessionOptions
from benchtui.session.hosts import SshOptions
from tests.helpers import check_invariants, require_tool
from tests.sshd import NetnsLab, SshdHost, kill_sessions


def host_tables(hosts: list[SshdHost]) -> str:
    return "".join(
        f'[hosts.{h.name}]\naddress = "{h.address}"\nport = {h.port}\nuser = "{h.user}"\n'
        f'identity = "{h.identity}"\n\n' for h in hosts)


def scratch_dir() -> Path:
    d = Path("/tmp") / f"benchtui-e2e-{uuid.uuid4().hex[:8]}"
    d.mkdir(mode=0o777)
    d.chmod(0o777)
    return d


def fio_step(directory: Path, seconds: int, name: str = "randrw", hosts: str = '"all"') -> str:
    return (f'[[step]]\nname = "{name}"\ntool = "fio"\nhosts = {hosts}\n'
            f'args = "--filename={directory}/fio.dat --size=16m --rw=randrw --bs=4k '
            f'--ioengine=psync --direct=1 --runtime={seconds} --time_based"\n\n')


class Collector:
    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.events: list[Event] = []

    def add(self, samples: list[Sample]) -> None:
        self.samples.extend(samples)

    def event(self, event: Event) -> None:
        self.events.append(event)

    def interval_times(self, metric: str, tool: str) -> dict[tuple[str, str], list[float]]:
        out: dict[tuple[str, str], list[float]] = defaultdict(list)
        for s in self.samples:
            if s.metric == metric and s.tool == tool and s.kind == "interval" and s.t:
                out[(s.host, s.labels.get("op", ""))].append(s.t)
        return out


def options(hosts: list[SshdHost]) -> SessionOptions:
    return SessionOptions(ssh=SshOptions(known_hosts=hosts[0].known_hosts, connect_timeout=5))


@pytest.mark.slow
async def test_samples_from_every_host_every_second(sshd_hosts: list[SshdHost],
                                                    tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    d = scratch_dir()
    plan_file = tmp_path / "fleet.toml"
    plan_file.write_text('[session]\nname = "e2e"\n\n' + host_tables(sshd_hosts)
                         + '[[monitor]]\ntool = "iostat"\nhosts = "all"\n\n' + fio_step(d, 5))
    got = Collector()
    collector: set[tuple[tuple[int, int, int], bool]] = set()  # (while samples arrive)
    session = Session(load_plan(plan_file), options=options(sshd_hosts), on_samples=got.add,
                      on_event=got.event)
    session.add_sample_sink(
        lambda _: collector.add((gc.get_threshold(), gc.get_freeze_count() > 0)))
    before = gc.get_threshold(), gc.get_freeze_count()
    result = await session.run()
    assert result.ok, result.failures
    # The controller's garbage-collector policy while it ran (gc_policy), put back after
    assert collector == {(gc_policy.THRESHOLDS, True)}
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    check_invariants(got.samples)
    names = {h.name for h in sshd_hosts}
    assert {s.host for s in got.samples if s.tool == "fio"} == names
    assert {s.host for s in got.samples if s.tool == "iostat"} == names
    assert all(s.labels.get("step") for s in got.samples)
    for (host, op), times in got.interval_times("iops", "fio").items():
        times.sort()
        assert len(times) >= 4, (host, op, times)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert max(gaps) < 1.6, (host, op, gaps)
    for host in names:
        assert session.host_state[host] == "done"
        facts = result.facts[host]
        assert facts["tools"]["fio"].startswith("fio-")
    kinds = [e.kind for e in got.events]
    assert kinds.index("step_start") < kinds.index("step_end")


@pytest.mark.slow
def test_ctrl_c_leaves_no_process_on_any_host(sshd_hosts: list[SshdHost],
                                              tmp_path: Path) -> None:
    require_tool("fio")
    d = scratch_dir()
    plan_file = tmp_path / "long.toml"
    plan_file.write_text('[session]\nname = "interrupt"\n\n' + host_tables(sshd_hosts)
                         + fio_step(d, 120).replace("--time_based", "--time_based --numjobs=2"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchtui", "run", str(plan_file), "--jsonl", "--known-hosts",
         sshd_hosts[0].known_hosts], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("{"), proc.stderr.read() if proc.stderr else ""
        assert _fio_processes(d) >= len(sshd_hosts)
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=20)
        stopped_at = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 130
    err = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in err and "interrupted" in err
    while _fio_processes(d) and time.monotonic() - stopped_at < 3:
        time.sleep(0.1)
    assert _fio_processes(d) == 0


def _fio_processes(directory: Path) -> int:
    out = subprocess.run(["pgrep", "-f", f"fio.*{directory}"], capture_output=True, text=True,
                         check=False)
    return len(out.stdout.split())


async def test_refused_destructive_write_starts_nothing(sshd_hosts: list[SshdHost],
                                                        tmp_path: Path) -> None:
    plan_file = tmp_path / "danger.toml"
    plan_file.write_text(
        '[session]\nname = "danger"\n\n' + host_tables(sshd_hosts[:1])
        + '[[step]]\nname = "wipe"\ntool = "fio"\nhosts = "all"\n'
        'args = "--filename=/dev/nvme9n1 --rw=write --bs=1m --size=1g"\n')
    got = Collector()
    session = Session(load_plan(plan_file), options=options(sshd_hosts), on_samples=got.add,
                      on_event=got.event)
    result = await session.run()
    assert not result.ok
    refusals = [e for e in got.events if e.kind == "preflight" and e.level == "error"]
    assert refusals and "/dev/nvme9n1" in refusals[0].message
    assert refusals[0].host == sshd_hosts[0].name and refusals[0].step == "wipe"
    assert not [e for e in got.events if e.kind in ("run_start", "step_start")]
    assert got.samples == []


async def test_shell_injection_in_plan_values_runs_nothing(sshd_hosts: list[SshdHost],
                                                           tmp_path: Path) -> None:
    marker = Path("/tmp") / f"benchtui-pwned-{uuid.uuid4().hex[:8]}"
    plan_file = tmp_path / "inject.toml"
    plan_file.write_text(
        '[session]\nname = "inject"\n\n' + host_tables(sshd_hosts[:1])
        + f'[[step]]\nname = "evil"\ntool = "command"\nparser = "mbw"\nhosts = "all"\n'
        f'command = "echo x; touch {marker}"\n\n'
        f'[[step]]\nname = "evil2"\ntool = "mbw"\nhosts = "all"\n'
        f'args = "8 $(touch {marker}) `touch {marker}`"\n')
    got = Collector()
    session = Session(load_plan(plan_file), options=options(sshd_hosts), on_samples=got.add,
                      on_event=got.event)
    await session.run()
    await asyncio.sleep(0.5)
    assert not marker.exists()


@pytest.mark.slow
async def test_link_cut_for_ten_seconds_loses_no_sample(netns_lab: NetnsLab,
                                                        tmp_path: Path) -> None:
    require_tool("fio")
    host = netns_lab.hosts[0]
    d = scratch_dir()
    plan_file = tmp_path / "cut.toml"
    plan_file.write_text('[session]\nname = "cut"\n\n' + host_tables([host]) + fio_step(d, 22))
    got = Collector()
    session = Session(load_plan(plan_file), options=options([host]), on_samples=got.add,
                      on_event=got.event)
    task = asyncio.create_task(session.run())
    deadline = time.monotonic() + 15
    while not any(s.tool == "fio" for s in got.samples) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert got.samples, "no sample before the cut"
    netns_lab.cut(host)
    await asyncio.sleep(10)
    netns_lab.restore(host)
    result = await asyncio.wait_for(task, 90)
    assert result.ok, result.failures
    assert_continuous(got, minimum=20, host=host, marker=str(d))


def assert_continuous(got: Collector, minimum: int, host: SshdHost, marker: str) -> None:
    """Every status document fio wrote on the host reached the session once: none lost, none
    counted twice. The host's own output file (the run's ``out``, which the transport follows)
    parsed whole gives the same interval times as the samples that came live. fio's own clock
    decides when it writes a status (on a loaded machine a dump can come 1.9 s after the one
    before it); a document lost on the way, and only that, leaves its time out of the live
    samples."""
    series = got.interval_times("iops", "fio")
    assert series
    for (_h, op), times in series.items():
        assert len(times) == len(set(times)), f"duplicate samples for {op}"
        assert len(times) >= minimum, (op, len(times))
    wrote = host_output(host, marker)
    assert {op: sorted(times) for (_h, op), times in series.items()} == wrote


def host_output(host: SshdHost, marker: str) -> dict[str, list[float]]:
    """The interval times per op of the one fio run whose output file on ``host`` names
    ``marker`` (its scratch directory), parsed by ``benchtui parse``."""
    home = Path(pwd.getpwnam(host.user).pw_dir)
    outs = [p for p in home.glob(".cache/benchtui/runs/*/*/out")
            if marker in p.read_text(errors="replace")]
    assert len(outs) == 1, outs
    done = subprocess.run([sys.executable, "-m", "benchtui", "parse", "--tool", "fio", "--quiet",
                           str(outs[0])], capture_output=True, text=True, check=True)
    wrote: dict[str, list[float]] = defaultdict(list)
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if row["metric"] == "iops" and row["kind"] == "interval" and row["t"]:
            wrote[row["labels"].get("op", "")].append(row["t"])
    return {op: sorted(times) for op, times in wrote.items()}


@pytest.mark.slow
async def test_dropped_connection_reconnects_and_resumes(sshd_hosts: list[SshdHost],
                                                         tmp_path: Path) -> None:
    """sshd's connection processes die mid-run: the host shows `reconnecting`, benchtui
    reconnects and resumes the output where it was."""
    require_tool("fio")
    host = sshd_hosts[1]
    d = scratch_dir()
    plan_file = tmp_path / "drop.toml"
    plan_file.write_text('[session]\nname = "drop"\n\n' + host_tables([host]) + fio_step(d, 8))
    got = Collector()
    session = Session(load_plan(plan_file), options=options([host]), on_samples=got.add,
                      on_event=got.event)
    task = asyncio.create_task(session.run())
    deadline = time.monotonic() + 15
    while not any(s.tool == "fio" for s in got.samples) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert kill_sessions(host) > 0
    result = await asyncio.wait_for(task, 60)
    assert result.ok, result.failures
    states = [e.data.get("state") for e in got.events if e.kind == "host_state"]
    assert "reconnecting" in states
    assert_continuous(got, minimum=7, host=host, marker=str(d))


def test_no_leftover_processes_after_tests() -> None:
    """Runs last in this file: nothing of the e2e runs is left on the machine (once the
    processes of the last run, ended as its session ended, have had a few seconds to go on a
    loaded machine)."""
    deadline = time.monotonic() + 15
    while True:
        out = subprocess.run(["pgrep", "-af", "benchtui-e2e-"], capture_output=True,
                             text=True, check=False).stdout.splitlines()
        left = [line for line in out if "pgrep" not in line]
        if not left or os.environ.get("BENCHTUI_KEEP") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert left == [] or os.environ.get("BENCHTUI_KEEP"), left
