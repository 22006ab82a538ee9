"""What recording costs the live path: the engine's fleet benchmark with and without a recorder.

This is ``benchmarks/fleet_scale.py`` (read its docstring: one real sshd, N simulated hosts
each replaying a real fio json+ capture with 2 jobs and an iostat -x capture at 1 Hz, the
controller measured by ``benchmarks/fleet_probe.py`` in a process of its own) run twice per
round: once as it is, once with benchtui's recorder attached to the session exactly as
``benchtui run --record`` attaches it (``benchtui.cli.record_cmd.recording``). The rounds
alternate (off, on, off, on, ...) so that the machine's other work hits both alike. The
controller's CPU is its process CPU time (the recorder's thread included) in the steady part.

    .venv/bin/python benchmarks/recording_cost.py [--hosts 64] [--seconds 30] [--rounds 2]
        [--out docs/benchmarks/recording.md|-]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

OUT_MD = ROOT / "docs" / "benchmarks" / "recording.md"


def probe_main(argv: list[str]) -> int:
    """In the probe process: fleet_probe, with the recorder attached when --record is given."""
    import fleet_probe

    from benchtui.cli.record_cmd import recording
    from benchtui.session.engine import Session, SessionResult
    from benchtui.store.recording import Recorder

    record = argv[argv.index("--record") + 1] if "--record" in argv else None
    if "--gc-stats" in argv:
        argv.remove("--gc-stats")
        _gc_stats()
    if "--profile-recorder" in argv:
        argv.remove("--profile-recorder")
        _profile_recorder_thread(record or "recorder")
    if record is not None:
        i = argv.index("--record")
        del argv[i:i + 2]

        class RecordedSession(Session):
            async def run(self) -> SessionResult:
                with recording(self, record, on_close=note_recorder):
                    return await super().run()

        def note_recorder(recorder: Recorder) -> None:
            Path(record + ".cpu").write_text(str(recorder.thread_cpu))

        fleet_probe.Session = RecordedSession  # type: ignore[misc]
    if "--profile-main" in argv:
        argv.remove("--profile-main")
        _profile_main_thread(fleet_probe, record or "plain")
    sys.argv = ["fleet_probe.py", *argv]
    return fleet_probe.main()


def _profile_main_thread(fleet_probe: Any, stem: str) -> None:
    """cProfile (thread CPU time: not the recorder's) the probe's event loop."""
    import asyncio
    import cProfile
    import pstats

    real_run = asyncio.run

    def profiled_run(coro: Any) -> Any:
        profiler = cProfile.Profile(time.thread_time)
        try:
            return profiler.runcall(real_run, coro)
        finally:
            profiler.dump_stats(stem + ".main.prof")
            print(f"main-thread profile ({stem}):", file=sys.stderr)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(22)

    fleet_probe.asyncio.run = profiled_run


def _gc_stats() -> None:
    """Print at exit how much CPU the cyclic garbage collector took, per generation."""
    import atexit
    import gc
    import threading

    spent = [0.0, 0.0, 0.0]
    runs = [0, 0, 0]
    started: dict[int, float] = {}

    def callback(phase: str, info: dict[str, int]) -> None:
        me = threading.get_ident()
        if phase == "start":
            started[me] = time.thread_time()
        elif me in started:
            spent[info["generation"]] += time.thread_time() - started.pop(me)
            runs[info["generation"]] += 1

    gc.callbacks.append(callback)
    atexit.register(lambda: print(f"gc: runs {runs}, CPU s {[round(x, 2) for x in spent]}",
                                  file=sys.stderr))


def _profile_recorder_thread(stem: str) -> None:
    """cProfile (thread CPU time) the recorder's thread into STEM.prof, printed at exit."""
    import cProfile
    import pstats

    from benchtui.store.recording import Recorder

    run = Recorder._run

    def profiled(self: Recorder) -> None:
        profiler = cProfile.Profile(time.thread_time)
        profiler.runcall(run, self)
        profiler.dump_stats(stem + ".prof")
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(25)

    Recorder._run = profiled  # type: ignore[method-assign]


def run_rounds(args: argparse.Namespace) -> list[dict[str, Any]]:
    from fleet_scale import (
        FIO_CAPTURE,
        IOSTAT_CAPTURE,
        start_sshd,
        wait_until_quiet,
        write_plan,
    )

    from tests.sshd import SshdFleet, free_port, stop_process

    fleet = SshdFleet()
    process = None
    results: list[dict[str, Any]] = []
    try:
        process = start_sshd(fleet, port := free_port(), None)
        replay_dir = fleet.directory / "replay"
        replay_dir.mkdir(mode=0o755)
        for f in (HERE / "replay_capture.py", FIO_CAPTURE, IOSTAT_CAPTURE):
            shutil.copy(f, replay_dir / f.name)
            (replay_dir / f.name).chmod(0o644)
        plan = fleet.directory / "plan.toml"
        write_plan(plan, args.hosts, args.seconds, port, fleet.user.pw_name,
                   str(fleet.identity), replay_dir)
        for round_ in range(args.rounds):
            for recorded in (False, True):
                session_id = f"rec-cost-{round_}-{int(recorded)}-{os.getpid()}"
                result_file = fleet.directory / f"{session_id}.json"
                record_file = fleet.directory / f"{session_id}.btr"
                argv = [sys.executable, str(Path(__file__).resolve()), "--probe", "--plan",
                        str(plan), "--known-hosts", str(fleet.known_hosts), "--session-id",
                        session_id, "--hosts", str(args.hosts), "--seconds",
                        str(args.seconds), "--result", str(result_file)]
                if recorded:
                    argv += ["--record", str(record_file)]
                    argv += ["--profile-recorder"] if args.profile_recorder else []
                argv += ["--gc-stats"] if args.gc_stats else []
                argv += ["--profile-main"] if args.profile_main else []
                busy = wait_until_quiet(args.quiet_below, args.patience)
                print(f"round {round_ + 1}, recorder {'on' if recorded else 'off'} (machine "
                      f"busy before: {busy:.0f}% of a core)", file=sys.stderr, flush=True)
                subprocess.run(argv, check=True, timeout=args.seconds + 900)
                result = json.loads(result_file.read_text())
                cpu_file = Path(str(record_file) + ".cpu")
                result.update(recorded=recorded, round=round_, busy_before_pct=busy,
                              file_bytes=record_file.stat().st_size if recorded else None,
                              recorder_cpu=float(cpu_file.read_text()) if recorded else None)
                results.append(result)
                record_file.unlink(missing_ok=True)
    finally:
        if process is not None:
            stop_process(process)
        fleet.close()
    return results


def report(results: list[dict[str, Any]], command: str, hosts: int, seconds: int) -> str:
    def steady(r: dict[str, Any], key: str) -> float:
        return float((r.get("steady") or {}).get(key, float("nan")))

    rows = ["| round | recorder | controller CPU (% of 1 core) | of which the recorder's thread "
            "| samples/s | e2e p99 (ms) | RSS MiB | machine busy before (% of 1 core) | file |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        e2e = ((r.get("steady") or {}).get("e2e") or {}).get("p99", float("nan"))
        size = f"{r['file_bytes'] / 1e6:.2f} MB" if r.get("file_bytes") else "-"
        thread = f"{100 * r['recorder_cpu'] / r['wall']:.1f}" if r.get("recorder_cpu") else "-"
        rows.append(f"| {r['round'] + 1} | {'on' if r['recorded'] else 'off'} "
                    f"| {steady(r, 'cpu_pct'):.1f} | {thread} "
                    f"| {steady(r, 'samples_per_s'):.0f} "
                    f"| {e2e * 1000:.0f} | {steady(r, 'rss') / 2**20:.0f} "
                    f"| {r['busy_before_pct']:.0f} | {size} |")
    off = [steady(r, "cpu_pct") for r in results if not r["recorded"]]
    on = [steady(r, "cpu_pct") for r in results if r["recorded"]]
    ratio = statistics.mean(on) / statistics.mean(off)
    verdict = "within" if ratio <= 1.5 else "OVER"
    return "\n".join([
        "<!-- cost -->", "",
        f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `{command}` ({hosts} hosts, {seconds} s "
        "each run; 2 cores shared with the simulated hosts' sshd and replays, and with other "
        "work on the machine).", "", *rows, "",
        f"- Controller CPU with the recorder / without: mean {statistics.mean(on):.1f}% / "
        f"{statistics.mean(off):.1f}% of a core = **{ratio:.2f}x** (target <= 1.5x: "
        f"{verdict}); medians {statistics.median(on):.1f}% / {statistics.median(off):.1f}%. "
        "The recorder's thread column is over the whole run (connect and teardown "
        "included), the controller's over the steady part.",
        "", "<!-- /cost -->"])


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        return probe_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=str(OUT_MD))
    ap.add_argument("--quiet-below", type=float, default=60.0)
    ap.add_argument("--patience", type=float, default=120.0)
    ap.add_argument("--json", type=Path, help="also write the raw results to this file")
    ap.add_argument("--profile-main", action="store_true",
                    help="print a profile of the controller's event loop (thread CPU time)")
    ap.add_argument("--gc-stats", action="store_true",
                    help="print the garbage collector's runs and CPU on stderr")
    ap.add_argument("--profile-recorder", action="store_true",
                    help="print a profile of the recorder's thread (CPU time) on stderr")
    args = ap.parse_args()
    from tests.sshd import sshd_unavailable

    if reason := sshd_unavailable():
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    results = run_rounds(args)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    md = report(results, "benchmarks/recording_cost.py " + " ".join(sys.argv[1:]), args.hosts,
                args.seconds)
    print(md)
    if args.out != "-":
        from recording_size import write_section

        write_section(Path(args.out), "cost", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
