"""What recording costs the live path: the engine's fleet benchmark with and without a recorder.

This is ``benchmarks/fleet_scale.py`` (read its docstring: one real sshd, N simulated hosts
each replaying a real fio json+ capture with 2 jobs and an iostat -x capture at 1 Hz, the
controller measured by ``benchmarks/fleet_probe.py`` in a process of its own) run twice per
round: once as it is, once with benchtui's recorder attached to the session exactly as
``benchtui run --record`` attaches it (``benchtui.cli.record_cmd.recording``). Each round runs
both, and the rounds take turns at which goes first (off then on, then on then off, ...), so
that a drift (the machine's other work, the simulated hosts warming up) hits both alike. The
controller's CPU is its process CPU time (every thread: the recorder's sinks, which encode on the
event loop, and its writer thread) in the steady part.

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
import tempfile
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
    from benchtui.session.figure_track import FigureRecorder
    from benchtui.store.recording import Recorder

    record = argv[argv.index("--record") + 1] if "--record" in argv else None
    if "--gc-stats" in argv:
        argv.remove("--gc-stats")
        _gc_stats()
    if "--breakdown" in argv:
        argv.remove("--breakdown")
        _breakdown()
    if "--profile-recorder" in argv:
        argv.remove("--profile-recorder")
        _profile_recorder_thread(str(Path(tempfile.gettempdir()) / "recording-cost-thread"))
    if record is not None:
        i = argv.index("--record")
        del argv[i:i + 2]

        class RecordedSession(Session):
            async def run(self) -> SessionResult:
                with recording(self, record, on_close=note_recorder):
                    return await super().run()

        sinks_cpu = _time_the_sinks(Recorder, ("on_samples", "on_event", "on_output"))
        track_cpu = _time_the_sinks(FigureRecorder, ("on_samples", "on_event"))

        def note_recorder(recorder: Recorder) -> None:
            Path(record + ".cpu").write_text(json.dumps(
                {"thread": recorder.thread_cpu, "sinks": sinks_cpu[0],
                 "figures": track_cpu[0]}))

        fleet_probe.Session = RecordedSession  # type: ignore[misc]
    if "--profile-main" in argv:
        argv.remove("--profile-main")
        _profile_main_thread(fleet_probe, str(Path(tempfile.gettempdir()) / (
            "recording-cost-" + ("on" if record else "off"))))
    sys.argv = ["fleet_probe.py", *argv]
    return fleet_probe.main()


def _time_the_sinks(recorder_class: Any, names: tuple[str, ...]) -> list[float]:
    """Add up the CPU time (thread time) the sinks ``names`` of ``recorder_class`` take (the
    recorder's three, the figure track's two), on the event loop: [seconds], updated as they
    run. A couple of hundred calls a second: the clock reads cost ~0.05% of a core."""
    spent = [0.0]

    def timed(sink: Any) -> Any:
        def run(self: Any, arg: Any) -> None:
            t0 = time.thread_time()
            sink(self, arg)
            spent[0] += time.thread_time() - t0
        return run

    for name in names:
        setattr(recorder_class, name, timed(getattr(recorder_class, name)))
    return spent


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
            print(f"main-thread profile ({stem}.main.prof):", file=sys.stderr)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(22)

    fleet_probe.asyncio.run = profiled_run


def _breakdown() -> None:
    """Print at exit the thread time of the recorder's main steps (a few hundred calls a
    second in all: the clock reads cost little)."""
    import atexit

    from benchtui.store.recording.codec import SegmentEncoder
    from benchtui.store.recording.histcodec import HistogramEncoder
    from benchtui.store.recording.outputfilter import JsonOutputFilter
    from benchtui.store.recording.writer import SessionWriter

    spent: dict[str, float] = {}

    def timed(name: str, step: Any) -> Any:
        def run(*args: Any) -> Any:
            t0 = time.thread_time()
            try:
                return step(*args)
            finally:
                spent[name] = spent.get(name, 0.0) + time.thread_time() - t0
        return run

    for cls, name in ((SegmentEncoder, "batch_series"), (HistogramEncoder, "encode"),
                      (JsonOutputFilter, "__call__"), (SessionWriter, "add_record"),
                      (SessionWriter, "seal_frame"), (SessionWriter, "write_sealed")):
        setattr(cls, name, timed(f"{cls.__name__}.{name}", getattr(cls, name)))
    atexit.register(lambda: print("breakdown (CPU s): " + ", ".join(
        f"{k} {v:.2f}" for k, v in spent.items()), file=sys.stderr))


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
            for recorded in ((False, True) if round_ % 2 == 0 else (True, False)):
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
                argv += ["--breakdown"] if args.breakdown and recorded else []
                argv += ["--profile-main"] if args.profile_main else []
                busy = wait_until_quiet(args.quiet_below, args.patience)
                print(f"round {round_ + 1}, recorder {'on' if recorded else 'off'} (machine "
                      f"busy before: {busy:.0f}% of a core)", file=sys.stderr, flush=True)
                subprocess.run(argv, check=True, timeout=args.seconds + 900)
                result = json.loads(result_file.read_text())
                cpu_file = Path(str(record_file) + ".cpu")
                cpu = json.loads(cpu_file.read_text()) if recorded else {}
                result.update(recorded=recorded, round=round_, busy_before_pct=busy,
                              loadavg=os.getloadavg()[0],
                              file_bytes=record_file.stat().st_size if recorded else None,
                              recorder_cpu=cpu.get("thread"), sinks_cpu=cpu.get("sinks"),
                              figures_cpu=cpu.get("figures"))
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

    rows = ["| round | recorder | controller CPU (% of 1 core) | whole run: controller CPU, of "
            "which the recorder's sinks, its writer thread, the figure track (% of 1 core) "
            "| samples/s "
            "| e2e p99 (ms) | RSS MiB | machine busy during (% of 1 core; 200 = both) "
            "| load avg after | file |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        e2e = ((r.get("steady") or {}).get("e2e") or {}).get("p99", float("nan"))
        size = f"{r['file_bytes'] / 1e6:.2f} MB" if r.get("file_bytes") else "-"
        whole = f"{100 * r['cpu_total'] / r['wall']:.1f}"
        if r.get("sinks_cpu") is not None:
            whole += (f", {100 * r['sinks_cpu'] / r['wall']:.1f}, "
                      f"{100 * r['recorder_cpu'] / r['wall']:.1f}, "
                      f"{100 * (r.get('figures_cpu') or 0.0) / r['wall']:.1f}")
        rows.append(f"| {r['round'] + 1} | {'on' if r['recorded'] else 'off'} "
                    f"| {steady(r, 'cpu_pct'):.1f} | {whole} "
                    f"| {steady(r, 'samples_per_s'):.0f} "
                    f"| {e2e * 1000:.0f} | {steady(r, 'rss') / 2**20:.0f} "
                    f"| {steady(r, 'machine_busy_pct'):.0f} | {r.get('loadavg', float('nan')):.1f} "
                    f"| {size} |")
    off = [steady(r, "cpu_pct") for r in results if not r["recorded"]]
    on = [steady(r, "cpu_pct") for r in results if r["recorded"]]
    ratio = statistics.mean(on) / statistics.mean(off)
    per_round = [f"{b / a:.2f}x" for a, b in zip(off, on, strict=False)]
    verdict = "within" if ratio <= 1.5 else "OVER"
    return "\n".join([
        "<!-- cost -->", "",
        f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `{command}` ({hosts} hosts, {seconds} s "
        "each run; 2 cores shared with the simulated hosts' sshd and replays, and with other "
        "work on the machine).", "", *rows, "",
        f"- Controller CPU with the recorder / without: mean {statistics.mean(on):.1f}% / "
        f"{statistics.mean(off):.1f}% of a core = **{ratio:.2f}x** (target <= 1.5x: "
        f"{verdict}); medians {statistics.median(on):.1f}% / {statistics.median(off):.1f}%; "
        f"round by round {', '.join(per_round)}.",
        "- The controller's CPU is its process CPU time over the steady part, every thread "
        "included. The recorder encodes in its sinks, on the event loop (their thread time, "
        "added up around each call); its writer thread only compresses and writes; the "
        "figure track (`session.figure_track.FigureRecorder`, a sink beside them) computes "
        "the console's figures for a later run's ghost. Those three are over the whole run "
        "(connect and teardown included), so they are set beside the controller's CPU over "
        "the whole run.",
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
    ap.add_argument("--breakdown", action="store_true",
                    help="print the CPU time of the recorder's main steps on stderr")
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
