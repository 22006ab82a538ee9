"""The console following wide fio jobs: are its keys answered within 100 ms? (issue 32)

The same fleet as ``fleet_wide.py`` (one real sshd on 127.0.0.1, N hosts each printing the
real 32-job json+ capture at 1 Hz, pre-rendered), followed by the console itself: ``benchtui
run PLAN`` in a real pseudo-terminal of 200 x 60 (TERM=xterm-256color), as a user runs it.
Once every host streams, ``p`` (pause) is typed every 2 s; the time from the key's byte
written to the terminal until the console's output holds the header's ``PAUSED`` badge is
how long the key took to be answered (read, handled, drawn, written). ``p`` again resumes
(not measured). The controller's CPU (its process and its heartbeat process, psutil) and the
hosts' beat files (``fleet_wide.BeatWatch``) are read meanwhile.

``--old DIR`` runs the same on other code (``PYTHONPATH=DIR``), alternately, in the same run.

    .venv/bin/python benchmarks/fleet_console.py [--hosts 32] [--seconds 40] [--old DIR]
        [--out FILE|-] [--json FILE] [--quick]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import pwd
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from fleet_scale import machine, start_sshd, write_doc  # noqa: E402
from fleet_wide import BeatWatch, loadavg, prerender, write_plan  # noqa: E402

OUT_MD = ROOT / "docs" / "benchmarks" / "fleet_scale.md"
BADGE = b"PAUSED"


class Terminal(threading.Thread):
    """Reads the console's terminal output; notes when ``BADGE`` first appears after each
    ``expect``."""

    def __init__(self, master: int) -> None:
        super().__init__(daemon=True)
        self.master = master
        self.tail = b""
        self.seen = threading.Event()
        self.seen_at = 0.0
        self.bytes = 0

    def expect(self) -> None:
        self.tail = b""
        self.seen.clear()

    def run(self) -> None:
        while True:
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not data:
                return
            self.bytes += len(data)
            if not self.seen.is_set():
                self.tail = self.tail[-len(BADGE):] + data
                if BADGE in self.tail:
                    self.seen_at = time.monotonic()
                    self.seen.set()


def cpu_seconds(proc: psutil.Process) -> float:
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system
    return total


def run_one(args: argparse.Namespace, code: str, plan: Path, known_hosts: Path, runs: Any
            ) -> dict[str, Any]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": code, "COLUMNS": "200",
           "LINES": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "run", str(plan),
                             "--known-hosts", str(known_hosts), "--controller-grace",
                             str(args.grace)], stdin=slave, stdout=slave, stderr=slave,
                            env=env, cwd=code, start_new_session=True)
    os.close(slave)
    term = Terminal(master)
    term.start()
    watch = BeatWatch(runs)
    watch.start()
    me = psutil.Process(proc.pid)
    latencies: list[float] = []
    missed = 0
    try:
        give_up = time.monotonic() + 120
        while not watch.seen and time.monotonic() < give_up:  # the first beats: runs started
            time.sleep(0.2)
        time.sleep(args.settle)
        cpu0, t0 = cpu_seconds(me), time.monotonic()
        until = t0 + args.seconds
        spy = profile(args, proc.pid, code)
        while time.monotonic() < until and proc.poll() is None:
            term.expect()
            pressed = time.monotonic()
            os.write(master, b"p")
            if term.seen.wait(5.0):
                latencies.append(term.seen_at - pressed)
            else:
                missed += 1
            time.sleep(0.5)
            os.write(master, b"p")  # resume
            time.sleep(1.5)
        cpu = (cpu_seconds(me) - cpu0) / (time.monotonic() - t0)
        if spy is not None:
            spy.wait(timeout=60)
    finally:
        with_watchdog = sorted(p.parent.name for p in runs.glob("*/watchdog"))
        watch.done.set()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: stop the session, quit
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        os.close(master)
    latencies.sort()
    return {"keys": len(latencies), "missed": missed, "cpu_pct": 100 * cpu,
            "p50": latencies[len(latencies) // 2] if latencies else None,
            "p99": latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
            if latencies else None, "max": latencies[-1] if latencies else None,
            "beat_gap_max": watch.longest(), "watchdog": with_watchdog,
            "output_mb": term.bytes / 1e6}


def profile(args: argparse.Namespace, pid: int, code: str) -> subprocess.Popen[bytes] | None:
    """``--profile PREFIX``: py-spy (on PATH) samples the console's process while keys are
    typed, into PREFIX-<code's directory name>.txt (collapsed stacks, flamegraph.pl's
    input). For finding where the time goes only: py-spy's sampling costs the process some."""
    if args.profile is None:
        return None
    out = f"{args.profile}-{Path(code).name}.txt"
    return subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--rate", "250",
                             "--duration", str(int(args.seconds)), "--format", "raw",
                             "--output", out], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f}"


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| code | hosts | keys answered | key to screen p50 / p99 / max (ms) | controller "
            "CPU (% of 1 core, with its heartbeat process) | longest time between two beats "
            "(s) | runs stopped by their watchdog | load average before / after |",
            "|" + "---|" * 8]
    for r in results:
        gap = r.get("beat_gap_max")
        rows.append(f"| {r['code']} | {r['hosts']} | {r['keys']}/{r['keys'] + r['missed']} | "
                    f"{_ms(r['p50'])} / {_ms(r['p99'])} / {_ms(r['max'])} | "
                    f"{r['cpu_pct']:.1f} | {'-' if gap is None else f'{gap:.1f}'} | "
                    f"{len(r['watchdog'])} | {r['load_before']} / {r['load_after']} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[32])
    ap.add_argument("--seconds", type=int, default=40, help="how long keys are typed")
    ap.add_argument("--settle", type=float, default=8.0,
                    help="seconds after the first beats before the first key")
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--grace", type=float, default=5.0, help="controller_grace (s)")
    ap.add_argument("--out", default=str(OUT_MD),
                    help="Markdown file to write the results into ('-': none)")
    ap.add_argument("--json", type=Path, help="also write the raw results to this file")
    ap.add_argument("--profile", metavar="PREFIX",
                    help="sample the console with py-spy while keys are typed (profile())")
    ap.add_argument("--quick", action="store_true",
                    help="32 hosts, keys typed for 16 s (about 1 minute a code)")
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.seconds, args.settle = [32], 16, 6.0
    from tests.sshd import SshdFleet, free_port, sshd_unavailable, stop_process

    if reason := sshd_unavailable():
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    fleet = SshdFleet()
    home = Path(pwd.getpwnam(fleet.user.pw_name).pw_dir)
    results: list[dict[str, Any]] = []
    sshd = None
    try:
        sshd = start_sshd(fleet, port := free_port(), None)
        replay_dir = fleet.directory / "replay"
        replay_dir.mkdir(mode=0o755)
        shutil.copy(HERE / "replay_capture.py", replay_dir / "replay_capture.py")
        (replay_dir / "replay_capture.py").chmod(0o644)
        stream = args.settle + args.seconds + 30
        prerender(replay_dir, int(stream))
        codes = [("this", str(ROOT))] + ([("before", str(args.old))] if args.old else [])
        for n in args.hosts:
            for label, code in codes:
                plan = fleet.directory / f"plan-{n}-{label}.toml"
                write_plan(plan, n, int(stream), port, fleet.user.pw_name,
                           str(fleet.identity), replay_dir)
                text = plan.read_text().replace('name = "fleet-wide"',
                                                f'name = "fleet-console-{label}-{n}"')
                plan.write_text(text)
                before = set((home / ".cache" / "benchtui" / "runs").glob("*"))
                load_before = loadavg()
                print(f"{n} hosts, {label} code (load {load_before})", file=sys.stderr,
                      flush=True)
                runs_root = home / ".cache" / "benchtui" / "runs"
                runs = _NewSession(runs_root, before)
                result = run_one(args, code, plan, fleet.known_hosts, runs)
                result.update(code=label, hosts=n, load_before=load_before,
                              load_after=loadavg())
                results.append(result)
                runs.remove()
    finally:
        if sshd is not None:
            stop_process(sshd)
        fleet.close()
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    if args.out != "-":
        command = "benchmarks/fleet_console.py " + " ".join(sys.argv[1:])
        facts = ", ".join(f"{k} {v}" for k, v in machine().items())
        section = "\n".join([
            "<!-- results console -->", "",
            f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `{command}`", "",
            f"Machine: {facts}. controller_grace {args.grace:g} s; `p` typed every 2 s "
            f"for {args.seconds} s once every host streamed.", "", table(results), "",
            "<!-- /results console -->"])
        write_doc(Path(args.out), "console", section)
    return 0


class _NewSession:
    """The runs directory of the session that starts after ``before`` was listed (the
    console's session id is its own), as a ``Path`` for ``BeatWatch``."""

    def __init__(self, root: Path, before: set[Path]) -> None:
        self.root, self.before = root, before

    def _found(self) -> Path | None:
        new = [p for p in self.root.glob("*") if p not in self.before]
        return new[0] if new else None

    def glob(self, pattern: str) -> list[Path]:
        found = self._found()
        return [] if found is None else list(found.glob(pattern))

    def remove(self) -> None:
        found = self._found()
        if found is not None:
            shutil.rmtree(found, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
