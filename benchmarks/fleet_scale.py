"""How many hosts one controller can follow: fio json+ (2 jobs) and iostat at 1 Hz per host.

One real OpenSSH sshd on 127.0.0.1 serves every "host": the plan has N hosts, all
127.0.0.1:PORT under different names. On each, a monitor replays a real ``iostat -x -y -t 1``
capture and a step replays a real fio json+ capture (2 jobs, one document a second) for
``--seconds``, with ``benchmarks/replay_capture.py`` (real pace, counters advancing,
timestamps of the moment of printing). ``benchmarks/fleet_probe.py`` runs benchtui's
``Session`` on that plan in a process of its own and measures latency, CPU, samples/s and
memory (see there for what each number means).

The results are printed as a Markdown table and written into docs/benchmarks/fleet_scale.md,
between the markers of the variant that ran (the text around them is kept):

    .venv/bin/python benchmarks/fleet_scale.py [--hosts 64 256] [--seconds 30]
        [--pin] [--prerendered] [--old DIR] [--uvloop] [--variant NAME] [--profile FILE]
        [--json FILE] [--out FILE|-] [--recapture] [--quick] [--parts]

``--pin`` runs the controller (and its heartbeat process) on CPU 0 and sshd with everything
it starts (the "hosts") on the last CPU: the controller measured alone. ``--prerendered``:
the fio documents are rendered once beforehand (``replay_capture.py prerender``), so that a
simulated host costs a write a second. ``--old DIR`` runs the same probe on other code (a
worktree of the code before a change), alternately with this checkout's. ``--variant``
names the section of docs/benchmarks/fleet_scale.md the results go to. ``--uvloop`` (an
experiment: uvloop is not a dependency, install it in the venv first) adds a run of this
code with uvloop's event loop in the controller process ("this-uvloop"; its heartbeat
process keeps asyncio's). (The "lean host scripts" experiment of the first runs is now what
benchtui ships: benchtui/transport/hostscripts.py.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from fleet_probe import FIO_STEP, IOSTAT_MONITOR, SETTLE, machine_jiffies  # noqa: E402
from gc_pauses import words  # noqa: E402

CAPTURES = HERE / "captures"
FIO_CAPTURE = CAPTURES / "fio-json-plus-2jobs.json"
IOSTAT_CAPTURE = CAPTURES / "iostat-x-t.txt"
OUT_MD = ROOT / "docs" / "benchmarks" / "fleet_scale.md"


def start_sshd(fleet: Any, port: int, cpu: int | None) -> subprocess.Popen[bytes]:
    """One sshd for every simulated host: SshdFleet's settings, with room for hundreds of
    connections arriving at once (MaxStartups) and the followers' channels (MaxSessions)."""
    from tests.sshd import SSHD, TEST_USER, keygen, wait_for_port

    hostdir = fleet.directory / "fleet"
    hostdir.mkdir()
    hostdir.chmod(0o755)
    host_key = keygen(hostdir / "host_key", "benchtui-bench-fleet")
    config = hostdir / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {hostdir / 'host_key'}",
        f"PidFile {hostdir / 'sshd.pid'}", f"AuthorizedKeysFile {fleet.authorized_keys}",
        "StrictModes no", "UsePAM no", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "PubkeyAuthentication yes", "UseDNS no",
        "PermitRootLogin no", f"AllowUsers {TEST_USER}", "MaxSessions 64",
        "MaxStartups 4096", "LoginGraceTime 300", "LogLevel ERROR", "",
    ]))
    log = (hostdir / "sshd.log").open("wb")
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    if cpu is not None:  # every session process and command inherits it
        os.sched_setaffinity(process.pid, {cpu})
    fleet.known_hosts.write_text(f"[127.0.0.1]:{port} {host_key}\n")
    wait_for_port("127.0.0.1", port, process, hostdir / "sshd.log")
    return process


def write_plan(path: Path, hosts: int, seconds: int, port: int, user: str, identity: str,
               replay_dir: Path, prerendered: bool = False) -> None:
    replay = f"python3 -I -S {replay_dir}/replay_capture.py"
    fio = f"fio-prerendered {replay_dir}/fio-prerendered.json" if prerendered else \
        f"fio-json {replay_dir}/{FIO_CAPTURE.name}"
    lines = ["[session]", 'name = "fleet-scale"', ""]
    for i in range(1, hosts + 1):
        lines += [f"[hosts.h{i:03d}]", 'address = "127.0.0.1"', f"port = {port}",
                  f'user = "{user}"', f'identity = "{identity}"', ""]
    lines += ["[[monitor]]", f'name = "{IOSTAT_MONITOR}"', 'tool = "command"',
              f'command = "{replay} iostat {replay_dir}/{IOSTAT_CAPTURE.name}"',
              'parser = "iostat"', "",
              "[[step]]", f'name = "{FIO_STEP}"', 'tool = "command"',
              f'command = "{replay} {fio} --seconds {seconds}"', 'parser = "fio-json"',
              f"timeout = {seconds + 120}", ""]
    path.write_text("\n".join(lines))


def recapture() -> None:
    """Make the captures again with the real tools: fio (2 jobs) with iostat alongside."""
    work = Path(tempfile.mkdtemp(prefix="benchtui-capture-"))
    try:
        fio = subprocess.Popen(
            ["fio", "--ioengine=libaio", "--iodepth=16", "--direct=1", "--size=64M", "--bs=4k",
             "--rw=randrw", "--runtime=6", "--time_based", "--status-interval=1",
             "--output-format=json+", "--name=a", f"--filename={work}/a.dat", "--name=b",
             f"--filename={work}/b.dat"], stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        iostat = subprocess.run(["iostat", "-x", "-y", "-t", "1", "5"], capture_output=True,
                                text=True, check=True, env={**os.environ, "S_TIME_FORMAT": "ISO"})
        out, _ = fio.communicate()
        docs, pos = [], out.find("{\n")
        while pos >= 0 and (end := out.find("\n}\n", pos)) >= 0:
            docs.append(out[pos:end + 3])
            pos = out.find("{\n", end + 3)
        FIO_CAPTURE.write_text("".join(docs[1:5]))  # 4 status dumps, not the final report
        IOSTAT_CAPTURE.write_text(iostat.stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def machine_busy(seconds: float) -> float:
    """How busy the whole machine is over ``seconds``, in % of one core."""
    busy0, total0 = machine_jiffies()
    time.sleep(seconds)
    busy1, total1 = machine_jiffies()
    return 100 * (busy1 - busy0) / max(1, total1 - total0) * (os.cpu_count() or 1)


def wait_until_quiet(below: float, patience: float) -> float:
    """Wait (up to ``patience`` s) for the machine to be busy less than ``below`` % of a
    core (other work on it skews every number); the last measure."""
    give_up = time.monotonic() + patience
    while (busy := machine_busy(3.0)) >= below and time.monotonic() < give_up:
        print(f"  machine busy {busy:.0f}% of a core: waiting", file=sys.stderr, flush=True)
    return busy


def machine() -> dict[str, str]:
    import asyncssh

    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "?")
    mem = int(Path("/proc/meminfo").read_text().split()[1]) // 1024
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True, check=False).stderr
    return {"nproc": str(os.cpu_count()), "CPU": cpu, "memory": f"{mem} MiB",
            "kernel": platform.release(), "Python": platform.python_version(),
            "asyncssh": asyncssh.__version__, "OpenSSH": ssh.strip().split(",")[0]}


def _ms(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x * 1000:.0f}"


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| code | hosts | fio docs in store | e2e latency p50 / p99 / max (ms) | in "
            "controller p99 (ms) | loop lag p99 / max (ms) | controller CPU (% of 1 core) | "
            "CPU per sample (µs) | controller run-queue wait (%) | samples/s | RSS MiB (peak) "
            "| machine busy (% of 1 core) | connect+facts+preflight (s) | teardown (s) | GC "
            "in the steady part: collections / total ms / longest ms per generation | load "
            "average before |", "|" + "---|" * 16]
    for r in results:
        s = r.get("steady")
        docs = f"{r['fio_docs']}/{r['fio_docs_expected']}"
        if r["hosts_streaming"] < r["hosts"]:
            docs += f" ({r['hosts_streaming']} hosts streamed)"
        prep = f"{r['prepare']:.1f}" if r.get("prepare") is not None else "-"
        tear = f"{r['teardown']:.1f}" if r.get("teardown") is not None else "-"
        code, load = r.get("code", "this"), r.get("load_before", "-")
        if not s:
            e = r["e2e_all"]
            rows.append(f"| {code} | {r['hosts']} | {docs} | {_ms(e['p50'])} / "
                        f"{_ms(e['p99'])} / {_ms(e['max'])} (no steady part) | - | - | - | - "
                        f"| - | - | - | - | {prep} | {tear} | - | {load} |")
            continue
        e, i, g = s["e2e"], s["inside"], s["lag"]
        per_sample = 1e4 * s["cpu_pct"] / s["samples_per_s"] \
            if s.get("samples_per_s") and "cpu_pct" in s else float("nan")
        rows.append(
            f"| {code} | {r['hosts']} | {docs} | {_ms(e['p50'])} / {_ms(e['p99'])} / "
            f"{_ms(e['max'])} | {_ms(i['p99'])} | {_ms(g['p99'])} / {_ms(g['max'])} "
            f"| {s.get('cpu_pct', float('nan')):.1f} | {per_sample:.1f} "
            f"| {s.get('runqueue_wait_pct', float('nan')):.0f} "
            f"| {s.get('samples_per_s', 0):.0f} "
            f"| {s.get('rss', 0) / 2**20:.0f} ({r['peak_rss'] / 2**20:.0f}) "
            f"| {s.get('machine_busy_pct', float('nan')):.0f} | {prep} | {tear} "
            f"| {words(s.get('gc'))} | {load} |")
    return "\n".join(rows)


def report(results: list[dict[str, Any]], variant: str, command: str, seconds: int) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in machine().items())
    lines = [f"<!-- results {variant} -->", "",
             f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `{command}`", "",
             f"Machine: {facts}.", "", table(results), ""]
    for r in results:
        e = r["e2e_all"]
        lines.append(
            f"- {r['hosts']} hosts: machine busy {r.get('busy_before_pct', float('nan')):.0f}"
            "% of a core just before; all fio documents (start included): e2e p50 "
            f"{_ms(e['p50'])} ms, p99 {_ms(e['p99'])} ms, max {_ms(e['max'])} ms; controller "
            f"CPU {r['cpu_total']:.1f} s in {r['wall']:.1f} s (whole run); "
            + (f"{r['hosts_streaming']} of {r['hosts']} hosts streaming "
               f"{r['until_all_streaming']:.1f} s after the session started"
               if r.get("until_all_streaming") is not None
               else f"{r['hosts_streaming']} of {r['hosts']} hosts streamed")
            + (f"; steady: {r['steady']['chunks_per_s']:.0f} chunks/s of "
               f"{r['steady']['bytes_per_chunk'] / 1024:.1f} KiB from the transports"
               if (r.get("steady") or {}).get("chunks_per_s") else "")
            + (f"; failures: {'; '.join(r['failures'])}" if r["failures"] else ""))
    lines += ["", f"Every host streams for {seconds} s; the steady part starts {SETTLE:g} s "
              "after every host's first fio document and ends 0.5 s before the last one.", "",
              f"<!-- /results {variant} -->"]
    return "\n".join(lines)


def write_doc(path: Path, variant: str, section: str) -> None:
    """Replace the section of ``variant`` in ``path`` (append it if there is none)."""
    begin, end = f"<!-- results {variant} -->", f"<!-- /results {variant} -->"
    text = path.read_text() if path.exists() else "# Fleet scale\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    from tests.sshd import SshdFleet, free_port, stop_process

    fleet = SshdFleet()
    process = None
    home = Path(pwd.getpwnam(fleet.user.pw_name).pw_dir)
    results = []
    try:
        cpus = sorted(os.sched_getaffinity(0))
        process = start_sshd(fleet, port := free_port(), cpus[-1] if args.pin else None)
        replay_dir = fleet.directory / "replay"
        replay_dir.mkdir(mode=0o755)
        for f in (HERE / "replay_capture.py", FIO_CAPTURE, IOSTAT_CAPTURE):
            shutil.copy(f, replay_dir / f.name)
            (replay_dir / f.name).chmod(0o644)
        if args.prerendered:
            pre = replay_dir / "fio-prerendered.json"
            subprocess.run([sys.executable, str(replay_dir / "replay_capture.py"), "prerender",
                            str(FIO_CAPTURE), "--seconds", str(args.seconds + 1), str(pre)],
                           check=True)
            pre.chmod(0o644)
        codes = [("this", str(ROOT))] + ([("before", str(args.old))] if args.old else []) \
            + ([("this-uvloop", str(ROOT))] if args.uvloop else [])
        for n in args.hosts:
            for k, (label, code) in enumerate(codes if len(results) % 2 == 0
                                              else codes[::-1]):
                plan = fleet.directory / f"plan-{n}.toml"
                write_plan(plan, n, args.seconds, port, fleet.user.pw_name,
                           str(fleet.identity), replay_dir, args.prerendered)
                session_id = f"fleet-scale-{n}-{label}-{len(results)}-{os.getpid()}"
                result_file = fleet.directory / f"result-{n}-{k}.json"
                argv = [sys.executable, str(HERE / "fleet_probe.py"), "--plan", str(plan),
                        "--known-hosts", str(fleet.known_hosts), "--session-id", session_id,
                        "--hosts", str(n), "--seconds", str(args.seconds),
                        "--result", str(result_file), "--code", code]
                argv += ["--profile", f"{args.profile}.{n}.{label}"] if args.profile else []
                argv += ["--pin"] if args.pin else []
                argv += ["--uvloop"] if label == "this-uvloop" else []
                argv += ["--parts"] if args.parts else []
                busy = wait_until_quiet(args.quiet_below, args.patience)
                load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
                print(f"{n} hosts x {args.seconds} s, {label} code (machine busy before: "
                      f"{busy:.0f}% of a core, load {load})", file=sys.stderr, flush=True)
                subprocess.run(argv, check=True, timeout=args.seconds + 900)
                result = json.loads(result_file.read_text())
                result.update(busy_before_pct=busy, code=label, load_before=load)
                results.append(result)
                shutil.rmtree(home / ".cache" / "benchtui" / "runs" / session_id,
                              ignore_errors=True)
    finally:
        if process is not None:
            stop_process(process)
        fleet.close()
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--seconds", type=int, default=30, help="how long every host streams")
    ap.add_argument("--out", default=str(OUT_MD),
                    help="Markdown file to write the results into ('-': none)")
    ap.add_argument("--json", type=Path, help="also write the raw results to this file")
    ap.add_argument("--parts", action="store_true",
                    help="the probe's --parts: the main thread's CPU per fio document split "
                         "into asyncssh's socket reads, the chunks' ingestion (doc_path.py)")
    ap.add_argument("--profile", help="cProfile the controller (CPU time) into FILE.HOSTS")
    ap.add_argument("--pin", action="store_true",
                    help="experiment: controller on CPU 0, sshd and the hosts on the last CPU")
    ap.add_argument("--quiet-below", type=float, default=60.0,
                    help="wait for the machine to be busy less than this %% of a core")
    ap.add_argument("--patience", type=float, default=120.0,
                    help="how long to wait for that at most (s)")
    ap.add_argument("--recapture", action="store_true",
                    help="make the captures again with real fio and iostat first")
    ap.add_argument("--prerendered", action="store_true",
                    help="render the fio documents once beforehand (hosts cost less)")
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--variant", help="the section of the results file to write")
    ap.add_argument("--uvloop", action="store_true",
                    help="experiment: also run this code with uvloop's event loop in the "
                    "controller process (uvloop installed in the venv; not a dependency)")
    ap.add_argument("--quick", action="store_true",
                    help="64 and 256 hosts for 15 s, pinned, pre-rendered, no waiting for a "
                    "quiet machine (about 3 minutes)")
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.seconds, args.pin, args.prerendered = [64, 256], 15, True, True
        args.patience = 0.0
    from tests.sshd import sshd_unavailable

    if reason := sshd_unavailable():
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    if args.recapture:
        recapture()
    results = run_all(args)
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    if args.out != "-":
        variant = args.variant or ("pin" if args.pin else "stock")
        command = "benchmarks/fleet_scale.py " + " ".join(sys.argv[1:])
        write_doc(Path(args.out), variant, report(results, variant, command, args.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
