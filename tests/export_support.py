"""Shared pieces of the exporter tests: real fixture outputs through the real parsers, a
FleetState fed with them, a clock the tests move, and promtool."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.store.fleet import FleetState
from tests.helpers import FIXTURES, require_tool

#: One real output per tool family, every one parsed by its real parser.
TOOL_FIXTURES = (
    "fio_json/randread_randwrite.jsonplus.txt",
    "fio_json/latpct.jsonplus.txt",
    "disk/real_sysstat12_x_t_iso_y.txt",
    "disk/diskstats_dd_direct.txt",
    "disk/seed003_spdk_iostat_2copy_qd8_nvme.txt",
    "net/local_iperf3-3.12_json_udpP2_server.txt",
    "net/local_iperf3-3.12_tcp_client.txt",
    "net/local_iperf2-2.1.8_eP2_client.txt",
    "ceph/real-ceph16-rados-write.txt",
    "ceph/real-ceph16-rbd-write.txt",
    "fbbench/fbbench_2rep_qd8_nvme.txt",
    "mem_cpu/local_mbw-1.2.2_n3_64.txt",
    "mem_cpu/unixbench_seed000_vm.txt",
    "fio_text/fio333_normal_eta_2jobs.txt",
)


class Clock:
    """A monotonic clock that only moves when the test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def fixture_samples(relpath: str, host: str = "-", *, t0: float | None = 1.8e9,
                    step: str | None = "s1") -> list[Sample]:
    """Every sample the real parsers find in a fixture; line i arrives at t0 + i/100 s."""
    text = (FIXTURES / relpath).read_text(encoding="utf-8", errors="replace")
    out: list[Sample] = []
    for cls in registry.detect(text):
        parser = cls(host=host, source=relpath)
        for i, line in enumerate(text.split("\n")):
            out.extend(parser.feed(line, None if t0 is None else t0 + i / 100))
        out.extend(parser.finish())
    assert out, f"no samples in {relpath}"
    if step is not None:
        for s in out:
            s.labels = {**s.labels, "step": step}
    return out


def session_events(state: FleetState, hosts: list[str], t: float = 1.8e9) -> None:
    """A session that started, with hosts up and a step of known length running."""
    state.on_event(Event(t, ev.SESSION_START, "session demo"))
    for h in hosts:
        state.on_event(Event(t, ev.HOST_STATE, f"{h}: running", host=h,
                             data={"state": "running"}))
    state.on_event(Event(t, ev.STEP_START, "step s1", step="s1",
                         data={"hosts": hosts, "tool": "fio", "expected_seconds": 60}))


def promtool_check(text: str | bytes) -> subprocess.CompletedProcess[str]:
    """``promtool check metrics`` on an exposition, as Prometheus' own linter."""
    promtool = require_tool("promtool")
    data = text if isinstance(text, str) else text.decode()
    return subprocess.run([promtool, "check", "metrics"], input=data, capture_output=True,
                          text=True, timeout=30, check=False)


def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


def which(name: str) -> str | None:
    return shutil.which(name)
