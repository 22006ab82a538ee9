"""Wide fio jobs live: N hosts each streaming fio json+ with 32 jobs (no group_reporting) at 1 Hz.

Issue 32: follow 32 hosts x 32 jobs live, every document, lag p99 <= 250 ms, the controller
under 50% of one core, and the hosts' watchdogs never stopping a workload because the
controller's heartbeats waited behind its parsing.

One real OpenSSH sshd on 127.0.0.1 serves every "host" (``fleet_scale.start_sshd``). Each runs a
step that prints the real 32-job capture (``benchmarks/captures/fio-json-plus-32jobs-20s.json.xz``,
fio 3.33, ``--numjobs=32 --status-interval=1 --output-format=json+``), continued by
``replay_capture.py`` with its counters advancing, pre-rendered once (``prerender``) so that a
simulated host costs a write a second: ~880 KB and ~34,000 lines per document (the capture's
last dump, every latency bucket fio had added by then). ``fleet_probe.py`` runs benchtui's
``Session`` on that plan in a process of its own, with ``run --jsonl``'s sink (to /dev/null) and
a live store, and ``controller_grace`` 5 s, as the issue's measurement did.

While the probe runs, this script reads every host's beat file (``.beat-HOST``, which the
keeper rewrites at each heartbeat) every 0.1 s: the longest time between two beats is how late
the heartbeat came (the keeper expects one a second; the host's watchdog counts the controller
gone 3 s after the last one, and stops the workload ``controller_grace`` later).

``--old DIR`` runs the same probe on other code (a worktree of the code before the change:
``git worktree add /tmp/live32-old COMMIT``), alternately with this checkout's, in the same run.

    .venv/bin/python benchmarks/fleet_wide.py [--hosts 16 32] [--seconds 30] [--old DIR]
        [--pin] [--grace 5] [--out FILE|-] [--json FILE] [--quick]

``--lockstep``: every host prints its document on the whole second of the clock, as fio
instances started together do: every run gets the same burst (without it, the hosts print
as far apart as their runs' starts were, which moves from run to run: 140-1,000 ms measured,
and the lag with it).
``--parts``: every document's lag split into its parts (``doc_path.py``): host side,
transfer, the follower's read, the intake's queue, the parse.
``--profile DIR``: each controller run under cProfile (CPU time), into DIR.
``--pin``: the controller on CPU 0, sshd and the simulated hosts on the last CPU.
``--parse-workers 0 1``: this code once parsing in process and once with one parse worker
(``session/parse_pool.py``); the CPU is the controller's with all its processes, and split
into its main process, its parse workers and its heartbeat process.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import pwd
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from doc_path import PARTS  # noqa: E402
from fleet_probe import FIO_STEP  # noqa: E402
from fleet_scale import machine, start_sshd, write_doc  # noqa: E402
from gc_pauses import words  # noqa: E402
from replay_capture import split_fio_documents  # noqa: E402

CAPTURE = HERE / "captures" / "fio-json-plus-32jobs-20s.json.xz"
OUT_MD = ROOT / "docs" / "benchmarks" / "fleet_scale.md"


class BeatWatch(threading.Thread):
    """Reads every beat file of a session every ``period`` s; the longest gap between two
    beats of each host (seconds) while its run lives (until the run's ``rc`` is written:
    after that, no watchdog is left to stop anything)."""

    def __init__(self, directory: Path, period: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.directory = directory
        self.period = period
        self.seen: dict[str, tuple[str, float]] = {}  # host -> (beat text, when first seen)
        self.gaps: dict[str, float] = {}
        self.ended: set[str] = set()
        self.done = threading.Event()

    def run_ended(self, host: str) -> bool:
        """Whether a run of ``host`` (its run id ends with the host's name) has ended."""
        return any(self.directory.glob(f"*-{host}/rc"))

    def run(self) -> None:
        while not self.done.wait(self.period):
            now = time.monotonic()
            try:
                files = list(self.directory.glob(".beat-*"))
            except OSError:
                continue
            for f in files:
                try:
                    text = f.read_text()
                except OSError:
                    continue
                fields = text.split()
                if len(fields) < 2 or fields[1] != "open":
                    continue
                host = f.name.removeprefix(".beat-")
                if "." in host:  # (a keeper's file being written: .beat-HOST.PID)
                    continue
                if host in self.ended or self.run_ended(host):
                    self.ended.add(host)
                    continue
                before = self.seen.get(host)
                if before is None or before[0] != text:
                    self.seen[host] = (text, now)
                if before is not None:  # (a gap that is still open counts too)
                    self.gaps[host] = max(self.gaps.get(host, 0.0), now - before[1])

    def longest(self) -> float | None:
        return max(self.gaps.values(), default=None)


def write_plan(path: Path, hosts: int, seconds: int, port: int, user: str, identity: str,
               replay_dir: Path, lockstep: bool = False) -> None:
    replay = f"python3 -I -S {replay_dir}/replay_capture.py fio-prerendered"
    replay += " --on-the-second" if lockstep else ""
    lines = ["[session]", 'name = "fleet-wide"', ""]
    for i in range(1, hosts + 1):
        lines += [f"[hosts.h{i:03d}]", 'address = "127.0.0.1"', f"port = {port}",
                  f'user = "{user}"', f'identity = "{identity}"', ""]
    lines += ["[[step]]", f'name = "{FIO_STEP}"', 'tool = "command"',
              f'command = "{replay} {replay_dir}/wide.json --seconds {seconds}"',
              'parser = "fio-json"', f"timeout = {seconds + 120}", ""]
    path.write_text("\n".join(lines))


def prerender(replay_dir: Path, seconds: int) -> int:
    """The capture's status dumps (not its final report), continued for ``seconds`` and
    rendered into replay_dir/wide.json; the size of one document."""
    text = lzma.decompress(CAPTURE.read_bytes()).decode()
    docs = split_fio_documents(text)[:-1]  # the last is fio's final report
    status = replay_dir / "capture.json"
    status.write_text("".join(json.dumps(d, indent=2, separators=(",", " : ")) + "\n"
                              for d in docs))
    out = replay_dir / "wide.json"
    subprocess.run([sys.executable, str(replay_dir / "replay_capture.py"), "prerender",
                    str(status), "--seconds", str(seconds + 1), str(out)], check=True)
    out.chmod(0o644)
    return out.stat().st_size // (seconds + 1)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run_all(args: argparse.Namespace) -> tuple[list[dict[str, Any]], int]:
    from tests.sshd import SshdFleet, free_port, stop_process

    fleet = SshdFleet()
    process = None
    home = Path(pwd.getpwnam(fleet.user.pw_name).pw_dir)
    results = []
    these = [("this", str(ROOT), None)] if not args.parse_workers else [
        (f"this, {n} parse workers", str(ROOT), n) for n in args.parse_workers]
    codes = these + ([("before", str(args.old), None)] if args.old else [])
    try:
        cpus = sorted(os.sched_getaffinity(0))
        process = start_sshd(fleet, port := free_port(), cpus[-1] if args.pin else None)
        replay_dir = fleet.directory / "replay"
        replay_dir.mkdir(mode=0o755)
        shutil.copy(HERE / "replay_capture.py", replay_dir / "replay_capture.py")
        (replay_dir / "replay_capture.py").chmod(0o644)
        doc_bytes = prerender(replay_dir, args.seconds)
        for n in args.hosts:
            for repeat in range(args.repeat):
                for label, code, workers in (codes if repeat % 2 == 0 else codes[::-1]):
                    plan = fleet.directory / f"plan-{n}.toml"
                    write_plan(plan, n, args.seconds, port, fleet.user.pw_name,
                               str(fleet.identity), replay_dir, args.lockstep)
                    tag = label.replace(", ", "-").replace(" ", "_")
                    session_id = f"fleet-wide-{n}-{tag}-{repeat}-{os.getpid()}"
                    result_file = fleet.directory / f"result-{n}-{tag}.json"
                    runs = home / ".cache" / "benchtui" / "runs" / session_id
                    argv = [sys.executable, str(HERE / "fleet_probe.py"), "--plan", str(plan),
                            "--known-hosts", str(fleet.known_hosts), "--session-id",
                            session_id, "--hosts", str(n), "--seconds", str(args.seconds),
                            "--result", str(result_file), "--code", code, "--grace",
                            str(args.grace), "--jsonl"]
                    argv += ["--pin"] if args.pin else []
                    argv += ["--parts"] if args.parts else []
                    argv += ["--profile", str(args.profile / f"{tag}-{repeat}.prof")] \
                        if args.profile else []
                    argv += [] if workers is None else ["--parse-workers", str(workers)]
                    load_before = loadavg()
                    print(f"{n} hosts, {label} code (load {load_before})", file=sys.stderr,
                          flush=True)
                    watch = BeatWatch(runs)
                    watch.start()
                    try:
                        subprocess.run(argv, check=True, timeout=args.seconds + 900)
                    finally:
                        watch.done.set()
                        watch.join()
                    result = json.loads(result_file.read_text())
                    result.update(code=label, load_before=load_before, load_after=loadavg(),
                                  beat_gap_max=watch.longest(),
                                  beat_gaps_over_2s=sum(g > 2 for g in watch.gaps.values()))
                    results.append(result)
                    shutil.rmtree(runs, ignore_errors=True)
    finally:
        if process is not None:
            stop_process(process)
        fleet.close()
    return results, doc_bytes


def _ms(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x * 1000:.0f}"


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| code | hosts | fio docs in store | lag p50 / p99 / max (ms) | controller CPU "
            "(% of 1 core, all its processes) | main process / its parse workers / its "
            "heartbeat process | longest time between two beats (s) | "
            "hosts whose watchdog stopped fio | loop lag p99 / max (ms) | samples/s | RSS MiB "
            "(growth over the steady part) | GC in the steady part: collections / total ms / "
            "longest ms per generation | cyclic garbage waiting at the end (objects) | load "
            "average before / after |", "|" + "---|" * 14]
    for r in results:
        s = r.get("steady") or {}
        e = s.get("e2e") or r["e2e_all"]
        g = s.get("lag") or {}
        docs = f"{r['fio_docs']}/{r['fio_docs_expected']}"
        gap = r.get("beat_gap_max")
        rows.append(
            f"| {r['code']} | {r['hosts']} | {docs} | {_ms(e['p50'])} / {_ms(e['p99'])} / "
            f"{_ms(e['max'])} | {s.get('cpu_pct', float('nan')):.1f} | "
            f"{s.get('main_cpu_pct', float('nan')):.1f} / {s.get('workers_cpu_pct', 0.0):.1f}"
            f" / {s.get('beat_cpu_pct', 0.0):.1f} | {'-' if gap is None else f'{gap:.1f}'} | "
            f"{len(r.get('watchdog_stops', []))} | {_ms(g.get('p99'))} / {_ms(g.get('max'))} "
            f"| {s.get('samples_per_s', 0):.0f} | {s.get('rss', 0) / 2**20:.0f} "
            f"({s.get('rss_growth', 0) / 2**20:+.0f}) | {words(s.get('gc'))} | "
            f"{r.get('garbage_at_end', {}).get('objects', '-')} | "
            f"{r['load_before']} / {r['load_after']} |")
    return "\n".join(rows)


def parts_table(results: list[dict[str, Any]]) -> str:
    """Where the documents' lag went (``--parts``, benchmarks/doc_path.py): each part's p50 /
    p99 and its mean over the worst 1% of documents; the bursts of one second's documents."""
    names = [name for name, _, _ in PARTS]
    rows = ["| code | docs | " + " | ".join(f"{n} p50 / p99 (worst 1%)" for n in names)
            + " | chunks / packets a document (mean) | a second's burst, p50 (max): stamps "
            "apart, first packet, last packet, last stored (ms from the first stamp) | "
            "stored in the order the last packets came | while a document waited: the "
            "controller ran / waited for a CPU / slept (%) | socket reads a second, mean kB "
            "(% of them 256 KiB) | main thread's CPU a document (ms): all / asyncssh / "
            "parse and sinks (of which the live store and --jsonl) / the other chunks | lag "
            "on one ideal core at that CPU a document, p50 / p99 (ms) |",
            "|" + "---|" * (len(names) + 9)]
    for r in results:
        p = (r.get("steady") or {}).get("parts") or {}
        if not p:
            continue
        b = p.get("bursts") or {}
        cells = [f"{_ms(p[n]['p50'])} / {_ms(p[n]['p99'])} ({_ms(p['worst'][n])})"
                 for n in names]
        burst = ", ".join(f"{_ms(b[k]['p50'])} ({_ms(b[k]['max'])})" for k in (
            "stamps", "first_net", "last_net", "last_stored")) if b else "-"
        order = f"{b['in_order']['p50']:.2f}" if b else "-"
        u = p.get("busy") or {}
        busy = (f"{100 * u['ran']:.0f} / {100 * u['waited']:.0f} / {100 * u['slept']:.0f}"
                if u else "-")
        k = p.get("cpu") or {}
        reads = (f"{k['reads_per_s']:.0f}, {k['read_mean'] / 1000:.0f} "
                 f"({100 * k['reads_full']:.0f})" if k else "-")
        m = p.get("one_core") or {}
        ideal = f"{_ms(m['p50'])} / {_ms(m['p99'])}" if m else "-"
        cpu = (f"{1000 * k['main']:.2f} / {1000 * k['asyncssh']:.2f} / "
               f"{1000 * k['parse']:.2f} ({1000 * k['store_jsonl']:.2f}) / "
               f"{1000 * k['other_chunks']:.2f}" if k else "-")
        rows.append(f"| {r['code']} | {p['docs']} | " + " | ".join(cells)
                    + f" | {p['chunks']['mean']:.1f} / {p['packets']['mean']:.1f} | {burst}"
                    f" | {order} | {busy} | {reads} | {cpu} | {ideal} |")
    return "\n".join(rows)


def report(results: list[dict[str, Any]], command: str, doc_bytes: int, args: argparse.Namespace
           ) -> str:
    facts = ", ".join(f"{k} {v}" for k, v in machine().items())
    lines = ["<!-- results wide -->", "",
             f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `{command}`", "",
             f"Machine: {facts}. One document: {doc_bytes / 1000:.0f} kB. controller_grace "
             f"{args.grace:g} s. " + ("Controller pinned to CPU 0, sshd and the hosts to the "
                                      "last CPU." if args.pin else "Nothing pinned."),
             "", table(results), ""]
    if args.parts:
        lines += [parts_table(results), ""]
    for r in results:
        notes = []
        if r.get("watchdog_stops"):
            notes.append(f"stopped by their watchdog: {', '.join(r['watchdog_stops'])}")
        if r.get("failures"):
            notes.append(f"failures: {'; '.join(r['failures'][:3])}")
        if r.get("behind"):
            notes.append("said: " + "; ".join(f"at {t:g} s: {m.split(':')[0]}"
                                               for t, m in r["behind"][:6]))
        if notes:
            lines.append(f"- {r['code']}, {r['hosts']} hosts: " + "; ".join(notes))
    lines += ["", "Lag: the time a document's samples reach the store minus its `timestamp_ms` "
              "(when the replay printed it), in the steady part (every host streaming, the "
              "first 2 s and the last 0.5 s left out; the first document of each run, which "
              "the parser holds until the second, left out).", "", "<!-- /results wide -->"]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--seconds", type=int, default=30, help="how long every host streams")
    ap.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each size and code")
    ap.add_argument("--grace", type=float, default=5.0, help="controller_grace (s)")
    ap.add_argument("--pin", action="store_true",
                    help="controller on CPU 0, sshd and the hosts on the last CPU")
    ap.add_argument("--out", default=str(OUT_MD),
                    help="Markdown file to write the results into ('-': none)")
    ap.add_argument("--json", type=Path, help="also write the raw results to this file")
    ap.add_argument("--parse-workers", type=int, nargs="+", metavar="N",
                    help="run this code once with each of these numbers of parse workers "
                    "(0: parse in process); default: once, with the code's own choice")
    ap.add_argument("--lockstep", action="store_true",
                    help="every host prints on the whole second (fio's timers in step): "
                    "the worst burst, the same in every run")
    ap.add_argument("--parts", action="store_true",
                    help="split every document's lag into its parts (benchmarks/doc_path.py)")
    ap.add_argument("--profile", type=Path, metavar="DIR",
                    help="cProfile each controller (CPU time) into DIR/CODE-REPEAT.prof")
    ap.add_argument("--quick", action="store_true",
                    help="32 hosts for 15 s (about 2 minutes with --old)")
    args = ap.parse_args()
    if args.quick:
        args.hosts, args.seconds = [32], 15
    from tests.sshd import sshd_unavailable

    if reason := sshd_unavailable():
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    results, doc_bytes = run_all(args)
    print(table(results))
    if args.parts:
        print(parts_table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    if args.out != "-":
        command = "benchmarks/fleet_wide.py " + " ".join(sys.argv[1:])
        write_doc(Path(args.out), "wide", report(results, command, doc_bytes, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
