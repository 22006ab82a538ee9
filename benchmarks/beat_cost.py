"""The heartbeat process's CPU: N watched hosts, one beat a second each, nothing else.

Issue 32: the controller's heartbeat process (``benchtui/transport/beat_process.py``) costs
a share of a core that grows with the hosts (fleet_scale.md: ~1.5% of a core plus ~40 µs a
host-second, read off the live runs). This measures it alone: one real OpenSSH sshd on
127.0.0.1 (pinned to the last CPU with what it starts: the hosts' keepers), the heartbeat
process (pinned to CPU 0) started as ``Heartbeats`` starts it, told to watch N hosts (all
that sshd under different names), ticked every 0.5 s as the controller's event loop ticks
it; after a settling time, its CPU time (user and system, /proc) and how often it woke
(voluntary context switches) over ``--seconds``:

    .venv/bin/python benchmarks/beat_cost.py [--hosts 64 256] [--seconds 20]
        [--old DIR] [--repeat R]

``--old DIR`` runs the same with benchtui imported from DIR (a worktree of the code before
a change), alternately with this checkout. Prints one line of JSON per run and a Markdown
table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from fleet_scale import start_sshd  # noqa: E402

#: Seconds given to the connections to open and the keepers to start, before measuring.
SETTLE = 8.0
TICK = 0.5


def proc_cpu(pid: int) -> tuple[float, float, int]:
    """(user s, system s, voluntary context switches) of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    hz = os.sysconf("SC_CLK_TCK")
    switches = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches"):
            switches = int(line.split()[1])
    return int(fields[11]) / hz, int(fields[12]) / hz, switches


def measure(code: Path, fleet: Any, port: int, hosts: int, seconds: float,
            runs_dir: str) -> dict[str, Any]:
    from benchtui.transport.heartbeats import Watched
    from benchtui.transport.sshtarget import SshTarget

    env = {**os.environ, "PYTHONPATH": str(code)}
    process = subprocess.Popen([sys.executable, "-m", "benchtui.transport.beat_process",
                                "30.0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env, cwd="/")
    assert process.stdin is not None and process.stdout is not None
    os.sched_setaffinity(process.pid, {0})
    os.set_blocking(process.stdout.fileno(), False)
    session = f"beat-cost-{os.getpid()}-{time.monotonic_ns()}"
    Path(runs_dir, session).mkdir(mode=0o777)
    os.chmod(Path(runs_dir, session), 0o777)

    def send(message: dict[str, object]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()

    def tick_for(duration: float) -> None:
        end = time.monotonic() + duration
        while time.monotonic() < end:
            send({"op": "tick"})
            with contextlib.suppress(BlockingIOError):
                os.read(process.stdout.fileno(), 1 << 16)  # type: ignore[union-attr]
            time.sleep(TICK)

    try:
        target = SshTarget(host="127.0.0.1", port=port, user=fleet.user.pw_name,
                           identity=str(fleet.identity), known_hosts=str(fleet.known_hosts))
        for i in range(1, hosts + 1):
            send(Watched(f"h{i:04d}", target, runs_dir, session, 120.0).message())
        tick_for(SETTLE + hosts / 50)
        beats = sum(1 for f in Path(runs_dir, session).iterdir()
                    if f.name.startswith(".beat-") and f.name.count(".") == 1)
        u0, s0, w0 = proc_cpu(process.pid)
        t0 = time.monotonic()
        tick_for(seconds)
        u1, s1, w1 = proc_cpu(process.pid)
        wall = time.monotonic() - t0
    finally:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    cpu = (u1 - u0) + (s1 - s0)
    return {"hosts": hosts, "beating": beats, "seconds": wall,
            "cpu_pct": 100 * cpu / wall, "user_pct": 100 * (u1 - u0) / wall,
            "system_pct": 100 * (s1 - s0) / wall, "wakes_per_s": (w1 - w0) / wall,
            "us_per_host_second": 1e6 * cpu / wall / hosts,
            "load": " ".join(Path("/proc/loadavg").read_text().split()[:3])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    from tests.sshd import SshdFleet, free_port, stop_process

    fleet = SshdFleet()
    sshd = None
    rows = []
    try:
        cpus = sorted(os.sched_getaffinity(0))
        sshd = start_sshd(fleet, port := free_port(), cpus[-1])
        runs_dir = tempfile.mkdtemp(prefix="beat-cost-", dir="/tmp")
        os.chmod(runs_dir, 0o777)
        codes = [("this", ROOT)] + ([("before", args.old)] if args.old else [])
        for n in args.hosts:
            for r in range(args.repeat):
                for label, code in (codes if r % 2 == 0 else codes[::-1]):
                    row = {"code": label, **measure(code, fleet, port, n, args.seconds,
                                                    runs_dir)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    finally:
        if sshd is not None:
            stop_process(sshd)
        fleet.close()
    print("\n| code | hosts | beating | CPU (% of a core) | user / system (%) | wakes a second "
          "| µs a host-second | load average |\n|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['code']} | {row['hosts']} | {row['beating']} | {row['cpu_pct']:.2f} | "
              f"{row['user_pct']:.2f} / {row['system_pct']:.2f} | {row['wakes_per_s']:.0f} | "
              f"{row['us_per_host_second']:.0f} | {row['load']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
