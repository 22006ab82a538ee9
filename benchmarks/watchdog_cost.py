"""What the host's watchdog costs (benchtui/transport/watchdog.py): CPU on the host, and the
controller's heartbeat, for runs that do nothing themselves (``sleep``).

Four variants, one after the other, each with ``--runs`` runs started through a real
transport and measured for ``--seconds`` once settled:

- ``local, off`` / ``local, 60 s``: ``LocalTransport`` with ``controller_grace`` off, then on
  (each run's watchdog watches this process by its PID);
- ``ssh, off`` / ``ssh, 60 s``: ``SshTransport`` to one real sshd on 127.0.0.1 (tests/sshd.py;
  needs root), off then on (the watchdogs read the beat file; the controller feeds the
  host's keeper one line a second through the connection).

Measured, in % of one core over the window: the watchdog shells (their own CPU and the
``sleep 1`` each reaps every second), the keeper, the sshd processes of the connection (which
carry the beats), and this process (the controller: asyncio idle plus the heartbeat). The
result is printed as Markdown and written into docs/benchmarks/watchdog.md between markers:

    .venv/bin/python benchmarks/watchdog_cost.py [--runs 8] [--seconds 30] [--out FILE|-]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.transport import LocalTransport, RemoteRun, RunHandle, Transport  # noqa: E402

if TYPE_CHECKING:
    from tests.sshd import SshdFleet, SshdHost

OUT_MD = ROOT / "docs" / "benchmarks" / "watchdog.md"
SETTLE = 3.0


@dataclass
class Cost:
    """CPU seconds used over the window by each part."""

    watchdogs: float = 0.0
    keeper: float = 0.0
    sshd: float = 0.0
    controller: float = 0.0


def _cpu(proc: psutil.Process, children: bool = True) -> float:
    """CPU seconds of ``proc``: its own from /proc/PID/schedstat (nanoseconds; the clock
    ticks of cpu_times would round a watchdog's few milliseconds to nothing), plus what the
    children it reaped used (clock ticks, summed over many ``sleep``)."""
    try:
        t = proc.cpu_times()
        own = int(Path(f"/proc/{proc.pid}/schedstat").read_text().split()[0]) / 1e9
    except (psutil.NoSuchProcess, OSError):
        return 0.0
    return own + ((t.children_user + t.children_system) if children else 0.0)


def _watchdogs(handles: list[RunHandle]) -> list[psutil.Process]:
    found = []
    for handle in handles:
        path = Path(handle.directory) / "watchdog.pid"
        if path.exists():
            found.append(psutil.Process(int(path.read_text().split()[0])))
    return found


def _keepers(session_id: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["environ"]):
        tag = (proc.info["environ"] or {}).get("BENCHTUI_RUN", "")
        if tag.startswith(f"{session_id}/.keeper-"):
            found.append(proc)
    return found


def _sshd_sessions(listener: int | None) -> list[psutil.Process]:
    if listener is None:
        return []
    return [p for p in psutil.Process(listener).children(recursive=True) if p.name() == "sshd"]


def _snapshot(handles: list[RunHandle], session_id: str, listener: int | None
              ) -> tuple[dict[int, float], dict[int, float], dict[int, float], float]:
    return ({p.pid: _cpu(p) for p in _watchdogs(handles)},
            {p.pid: _cpu(p, children=False) for p in _keepers(session_id)},
            {p.pid: _cpu(p, children=False) for p in _sshd_sessions(listener)},
            time.process_time())


def _delta(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(after[pid] - before.get(pid, 0.0) for pid in after)


async def measure(transport: Transport, runs: int, seconds: float, listener: int | None
                  ) -> Cost:
    await transport.connect()
    handles = [await transport.start(RemoteRun(f"w{i}", ["sleep", "3600"], deadline=3600))
               for i in range(runs)]
    try:
        await asyncio.sleep(SETTLE)
        session_id = handles[0].tag.split("/")[0]
        w0, k0, s0, c0 = _snapshot(handles, session_id, listener)
        await asyncio.sleep(seconds)
        w1, k1, s1, c1 = _snapshot(handles, session_id, listener)
        return Cost(_delta(w0, w1), _delta(k0, k1), _delta(s0, s1), c1 - c0)
    finally:
        await asyncio.gather(*(transport.stop(h, grace=0.5) for h in handles))
        await transport.close()


def start_sshd() -> tuple[SshdFleet, SshdHost]:
    from tests.sshd import SshdFleet, sshd_unavailable

    reason = sshd_unavailable()
    if reason:
        raise SystemExit(f"watchdog_cost: {reason}")
    fleet = SshdFleet()
    return fleet, fleet.start("bench")


async def run(runs: int, seconds: float) -> list[tuple[str, Cost]]:
    results = []
    runs_dir = tempfile.mkdtemp(prefix="benchtui-wdcost-")
    try:
        for label, grace in (("local, off", math.inf), ("local, 60 s", 60.0)):
            print(f"watchdog_cost: {label} ...", file=sys.stderr, flush=True)
            transport = LocalTransport("here", runs_dir=runs_dir, controller_grace=grace)
            results.append((label, await measure(transport, runs, seconds, None)))
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    from benchtui.transport.ssh import SshTransport

    fleet, host = start_sshd()
    try:
        for label, grace in (("ssh, off", math.inf), ("ssh, 60 s", 60.0)):
            print(f"watchdog_cost: {label} ...", file=sys.stderr, flush=True)
            remote = SshTransport("bench", host.target(), controller_grace=grace)
            results.append((label, await measure(remote, runs, seconds, host.process.pid)))
    finally:
        fleet.close()
    return results


def report(results: list[tuple[str, Cost]], runs: int, seconds: float) -> str:
    load = os.getloadavg()[0]
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.machine())

    def pct(cpu_seconds: float) -> str:
        return f"{100 * cpu_seconds / seconds:.2f}%"

    lines = [
        "<!-- results -->", "",
        f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `.venv/bin/python "
        f"benchmarks/watchdog_cost.py --runs {runs} --seconds {seconds:g}` on "
        f"{os.cpu_count()} x {cpu} (load average {load:.1f} at the end).", "",
        f"{runs} runs of `sleep 3600` per variant, measured over {seconds:g} s, in % of one "
        "core.", "",
        "| variant | watchdogs, all | per run | keeper | sshd (connection) | controller |",
        "|---|---|---|---|---|---|",
    ]
    for label, cost in results:
        lines.append(f"| {label} | {pct(cost.watchdogs)} | {pct(cost.watchdogs / runs)} | "
                     f"{pct(cost.keeper)} | {pct(cost.sshd)} | {pct(cost.controller)} |")
    lines += ["", "<!-- /results -->"]
    return "\n".join(lines)


def write_results(path: Path, section: str) -> None:
    text = path.read_text() if path.exists() else "<!-- results -->\n<!-- /results -->\n"
    begin, end = "<!-- results -->", "<!-- /results -->"
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    path.write_text(head + section + tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--out", default=str(OUT_MD),
                        help="the Markdown file to update, or - to print only")
    args = parser.parse_args()
    results = asyncio.run(run(args.runs, args.seconds))
    section = report(results, args.runs, args.seconds)
    print(section)
    if args.out != "-":
        write_results(Path(args.out), section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
