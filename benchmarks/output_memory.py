"""What a tool's garbage output costs the controller, on this machine and over SSH.

A step prints SIZE MB of random bytes (garbage lines: a line end every ~128 bytes; the same
bytes, from a file, every time) through ``benchtui run PLAN --jsonl``, once on the local
host and once on a real OpenSSH sshd on 127.0.0.1 (tests/sshd.py, as root), read by the
parsers given (``mbw``: a parser that keeps nothing, so the figure is the transport's and
the engine's; ``fio-json``: fio's, the usual one). For each, the controller's peak resident
memory (its own, as the only child of a fresh process: RUSAGE_CHILDREN) and its wall time.

``--tree DIR`` runs another checkout's benchtui beside this one (``git worktree add
/tmp/old-main main``), in the same run, so that before and after are measured together:

    .venv/bin/python benchmarks/output_memory.py [--size 100] [--parsers mbw fio-json]
        [--tree /tmp/old-main] [--out docs/benchmarks/output_memory.md|-]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PEAK = ("import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL).returncode\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n")


def plan_text(hosts: str, parser: str, garbage: Path) -> str:
    return (f'[session]\nname = "garbage"\n\n{hosts}'
            f'[[step]]\nname = "garbage"\ntool = "command"\nparser = "{parser}"\n'
            f'command = "cat {garbage}"\n')


def measure(tree: Path, plan: Path, *options: str) -> tuple[float, float, int]:
    """(peak MiB, seconds, exit status) of ``benchtui run PLAN --jsonl`` from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "benchtui", "run",
                           str(plan), "--jsonl", *options], capture_output=True, text=True,
                          cwd=tree, env=env, check=True)
    seconds = time.monotonic() - started
    kib, code = done.stdout.split()
    return int(kib) / 1024, seconds, int(code)


def _commit(tree: Path) -> str:
    """The checkout's commit, as a row names it (this one first)."""
    done = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True, check=False)
    return (done.stdout.strip()[:60] or str(tree)).replace("|", "/")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100, help="MB of garbage (default 100)")
    parser.add_argument("--parsers", nargs="+", default=["mbw", "fio-json"])
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="another checkout to measure beside this one")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" /
                                            "output_memory.md"))
    args = parser.parse_args()
    from tests.sshd import SshdFleet

    fleet = SshdFleet()
    rows = []
    try:
        host = fleet.start("garbage")
        ssh = (f'[hosts.h]\naddress = "{host.address}"\nport = {host.port}\n'
               f'user = "{host.user}"\nidentity = "{host.identity}"\n\n')
        with tempfile.TemporaryDirectory(prefix="benchtui-garbage-") as scratch:
            os.environ["HOME"] = scratch  # this machine's runs, out of the user's home
            Path(scratch).chmod(0o755)  # (the SSH host's user reads the garbage too)
            garbage = Path(scratch) / "random.bin"
            garbage.write_bytes(os.urandom(args.size * 1_000_000))
            for name in args.parsers:
                for where, hosts, options in (
                        ("this machine", "[hosts.h]\nlocal = true\n\n", ()),
                        ("SSH", ssh, ("--known-hosts", host.known_hosts))):
                    plan = Path(scratch) / f"{name}-{where.split()[0]}.toml"
                    plan.write_text(plan_text(hosts, name, garbage))
                    for tree in [ROOT, *args.tree]:
                        mib, seconds, code = measure(tree, plan, *options)
                        rows.append(f"| {_commit(tree)} | {name} | {where} | {mib:.0f} | "
                                    f"{seconds:.1f} | {code} |")
                        print(rows[-1], flush=True)
    finally:
        fleet.close()
    load = Path("/proc/loadavg").read_text().split()[:3]
    text = "\n".join([
        "# A tool's garbage output: the controller's memory",
        "",
        f"`{args.size}` MB of random bytes (the same every time) printed by a step, read "
        "through `benchtui run --jsonl` on this machine and over SSH (one real sshd on "
        "127.0.0.1): the peak resident memory of the controller and its wall time. Issue 27 "
        "measured 1.25 GB over SSH against 73 MB here for 100 MB of garbage: the final read "
        "of a run over SSH took whatever the follower had not read yet in one piece.",
        "",
        "```",
        "sudo .venv/bin/python benchmarks/output_memory.py " + " ".join(sys.argv[1:]),
        "```",
        "",
        f"Load average when it ran: {' '.join(load)} ({os.cpu_count()} CPUs).",
        "",
        "| benchtui (commit) | parser | host | peak MiB | seconds | exit |",
        "| --- | --- | --- | ---: | ---: | ---: |",
        *rows, "",
        "Read it by pairs: over SSH the controller should hold what it holds on this machine, "
        "plus asyncssh's own (~18 MiB). The test that holds it: "
        "`tests/test_output_bounds.py` (over SSH under twice the local peak).", ""])
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
