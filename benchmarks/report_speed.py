"""How fast a report reads a big session (issue 11): `benchtui report` on the 24 h / 16-host
session of benchmarks/make_session.py must finish in under 10 s and 500 MB (issue 32: under
3 s), which it can only if it reads the stats blocks the recorder wrote
(docs/session-format.md, "Stats blocks") instead of decoding every sample.

Measured, each in a process of its own (wall time, CPU time, peak RSS from ``os.wait4``):

- ``SessionReader.series_stats`` of every run's window (run start + 5 s to run end; each
  host's samples labelled with the run's step), as a report's rows need it;
- the same windows read by decoding their samples, for a few runs (``--decode-runs``): what
  it costs without stats blocks, and a check that both give the same figures;
- ``benchtui report SESSION --format csv``, as a user runs it (and with ``--skip 30``, on a
  stats-block cut, and ``--skip 7``, not on one).

    .venv/bin/python benchmarks/report_speed.py [--session /var/tmp/benchtui-24h-16hosts.btr]
        [--hosts 16 --hours 24] [--decode-runs 3] [--doc docs/benchmarks/report.md]
        [--code /tmp/old-checkout [--same]]

``--code DIR`` runs the same CSV report with another checkout's code too (a worktree of the
commit before), and says whether its rows are the same; with ``--same``, whether the
Markdown, CSV and JSON reports at ``--skip`` 0, 5, 7 and 30 are byte for byte the same.

Without ``--session`` (or when the file is missing) the session is made first with
make_session.py (25-40 min of one core for 24 h x 16 hosts), under a temporary name renamed
when complete.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchtui.store.recording import SessionReader  # noqa: E402
from benchtui.store.recording.codec import SeriesDef  # noqa: E402
from benchtui.store.recording.series_stats import SeriesStats, series_def  # noqa: E402

SKIP = 5.0
DEFAULT_SESSION = Path("/var/tmp/benchtui-24h-16hosts.btr")


def windows(reader: SessionReader) -> list[tuple[str, str, float, float]]:
    """(host, step, w0, t1) of every run: its start + SKIP to its end (run events)."""
    starts: dict[tuple[str, str], float] = {}
    out = []
    for e in reader.events():
        if e.host is None or e.step is None:
            continue
        if e.kind == "run_start":
            starts[(e.host, e.step)] = e.t
        elif e.kind == "run_end" and (e.host, e.step) in starts:
            t0 = starts.pop((e.host, e.step))
            out.append((e.host, e.step, t0 + SKIP, e.t))
    return out


def _wanted(host: str, step: str):  # type: ignore[no-untyped-def]
    pair = ("step", step)
    return lambda d: d.host == host and pair in d.labels


def _digest(stats: dict[SeriesDef, SeriesStats]) -> list[object]:
    """The figures of a window, to compare two ways of reading it (sums rounded: their order
    of summation differs)."""
    return sorted([list(map(str, d)), st.count, float(f"{st.total:.12g}"), st.minimum,
                   st.maximum, st.first_t, st.last_t,
                   sorted(st.histogram.counts.items()) if st.histogram else None]
                  for d, st in stats.items())


def _sampled(found: list[tuple[str, str, float, float]], runs: int) -> set[int]:
    """Which of the windows are also decoded (``runs`` of them, spread over the session)."""
    return set(range(len(found))[:: max(1, len(found) // runs)][:runs]) if runs else set()


def child(mode: str, path: str, runs: int) -> None:
    """One measurement, in this (child) process: prints a JSON line (the figures of the
    sampled windows, to compare the two ways of reading them)."""
    t, c = time.perf_counter(), time.process_time()
    digests = {}
    with SessionReader.open(path) as reader:
        found = windows(reader)
        sampled = _sampled(found, runs)
        if mode == "decode":
            found = [w for i, w in enumerate(found) if i in sampled]
            sampled = set(range(len(found)))
        samples = 0
        for i, (host, step, w0, t1) in enumerate(found):
            wanted = _wanted(host, step)
            if mode == "decode":
                stats: dict[SeriesDef, SeriesStats] = {}
                for rt, rec in reader.timed_records(w0 - 5.0, t1 + 5.0):
                    if isinstance(rec, list) and w0 <= rt < t1:
                        for s in rec:
                            key = series_def(s)
                            if wanted(key):
                                if key in stats:
                                    stats[key].add(rt, s)
                                else:
                                    stats[key] = SeriesStats.of(rt, s)
            else:
                stats = reader.series_stats(w0, t1, wanted)
            samples += sum(st.count for st in stats.values())
            if i in sampled:
                digests[f"{host} {step} {w0!r}"] = _digest(stats)
    print(json.dumps({"windows": len(found), "samples": samples,
                      "wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "digests": digests}))


def measure(cmd: list[str], cwd: Path = ROOT) -> tuple[dict[str, float], str]:
    """Run ``cmd``; its wall time, CPU time and peak RSS, and stdout. Through GNU time when
    there is one: a child's peak RSS counts the parent's pages it had between fork and exec,
    so the process that forks it must be small."""
    fd, timing = tempfile.mkstemp(prefix="report-speed-", suffix=".time")
    os.close(fd)
    timed = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", timing, *cmd] \
        if os.access("/usr/bin/time", os.X_OK) else cmd
    t = time.perf_counter()
    try:
        done = subprocess.run(timed, capture_output=True, text=True, cwd=cwd, check=False)
        wall = time.perf_counter() - t
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
        if timed is cmd:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                    "rss_mib": usage.ru_maxrss / 1024}, done.stdout
        e, u, sy, m = Path(timing).read_text().split()[-4:]
    finally:
        Path(timing).unlink(missing_ok=True)
    return {"wall": float(e), "cpu": float(u) + float(sy), "rss_mib": int(m) / 1024}, \
        done.stdout


def make(path: Path, hosts: int, hours: float) -> None:
    from make_session import make as make_session

    part = path.with_name(path.name + f".part-{os.getpid()}")
    print(f"making {path} ({hosts} hosts x {hours:g} h) ...", file=sys.stderr, flush=True)
    try:
        make_session(part, hosts, hours)
        part.rename(path)
    finally:
        part.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--session", type=Path, default=DEFAULT_SESSION)
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--decode-runs", type=int, default=3,
                    help="runs read by decoding too (0: none)")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "benchmarks" / "report.md"),
                    help="Markdown file to write the numbers into ('-': none)")
    ap.add_argument("--code", type=Path, default=None,
                    help="another checkout (the code before) whose report is run beside")
    ap.add_argument("--same", action="store_true",
                    help="with --code: compare the reports' Markdown, CSV and JSON at --skip "
                         "0, 5, 7 and 30 byte for byte with the code before's")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    if not args.session.exists():
        make(args.session, args.hosts, args.hours)
    me = [sys.executable, str(Path(__file__).resolve())]
    load0 = os.getloadavg()[0]
    stats_m, out = measure([*me, "--child", "stats", str(args.session),
                            str(args.decode_runs)])
    stats_r = json.loads(out)
    lines = []
    with SessionReader.open(str(args.session)) as r:
        about = (f"{r.host_count} hosts x {(r.end - r.start) / 3600:.1f} h, "
                 f"{r.sample_count:,} samples, {r.size_bytes / 2**30:.2f} GiB, "
                 f"{len(windows(r))} runs")
    report_m, csv = measure([*me[:1], "-m", "benchtui", "report", str(args.session),
                             "--format", "csv"])
    rows = max(0, len(csv.splitlines()) - 1)
    lines.append(f"| `benchtui report SESSION --format csv` ({rows} rows) | "
                 f"{report_m['wall']:.1f} s ({report_m['cpu']:.1f} s CPU) | "
                 f"{report_m['rss_mib']:.0f} MiB | < 3 s, < 500 MB | "
                 f"{_verdict(report_m)} |")
    if args.code is not None:  # python -m benchtui from the checkout imports its package
        old_m, old_csv = measure([*me[:1], "-m", "benchtui", "report", str(args.session),
                                  "--format", "csv"], cwd=args.code)
        lines.append(f"| the same, the code before (`{args.code}`) | {old_m['wall']:.1f} s "
                     f"({old_m['cpu']:.1f} s CPU) | {old_m['rss_mib']:.0f} MiB | | same rows: "
                     f"{'yes' if old_csv == csv else '**NO**'} |")
    outputs = {("csv", 5.0): csv}
    for skip, why in ((30, "on a cut: 5 s steps for the first minute"),
                      (7, "not on a cut: the 5 s block it falls in is decoded")):
        m, outputs[("csv", skip)] = measure([*me[:1], "-m", "benchtui", "report",
                                             str(args.session), "--format", "csv", "--skip",
                                             str(skip)])
        lines.append(f"| the same with `--skip {skip}` ({why}) | {m['wall']:.1f} s "
                     f"({m['cpu']:.1f} s CPU) | {m['rss_mib']:.0f} MiB | | |")
    if args.code is not None and args.same:
        lines.append(f"| outputs byte for byte the same as the code before's | | | | "
                     f"{_same_outputs(me[0], args.session, args.code, outputs)} |")
    lines.append(f"| `series_stats` of every run's window ({stats_r['windows']} windows, "
                 f"{stats_r['samples']:,} samples summed) | {stats_m['wall']:.1f} s "
                 f"({stats_m['cpu']:.1f} s CPU) | {stats_m['rss_mib']:.0f} MiB | | |")
    if args.decode_runs:
        dec_m, out = measure([*me, "--child", "decode", str(args.session),
                              str(args.decode_runs)])
        dec_r = json.loads(out)
        per = dec_m["cpu"] / max(1, dec_r["windows"])
        same = dec_r["digests"] == stats_r["digests"] and bool(dec_r["digests"])
        lines.append(f"| the same windows decoded, {dec_r['windows']} of them "
                     f"({dec_r['samples']:,} samples) | {dec_m['wall']:.1f} s "
                     f"({dec_m['cpu']:.1f} s CPU: {per:.1f} s a window, ~"
                     f"{per * stats_r['windows'] / 60:.0f} min for all) | "
                     f"{dec_m['rss_mib']:.0f} MiB | | same figures: "
                     f"{'yes' if same else '**NO**'} |")
        if not same:
            print("the decoded windows' figures differ from series_stats'", file=sys.stderr)
    machine = (f"Machine: {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
               f"Python {platform.python_version()}, Linux {platform.release()}; load average "
               f"{load0:.2f} before and {os.getloadavg()[0]:.2f} after (other work shares the "
               "machine).")
    command = ".venv/bin/python benchmarks/report_speed.py" + (
        "" if args.session == DEFAULT_SESSION else f" --session {args.session}") + (
        "" if args.code is None else f" --code {args.code}") + (
        " --same" if args.same else "") + (
        "" if args.decode_runs == 3 else f" --decode-runs {args.decode_runs}")
    text = "\n".join([
        "<!-- report-speed -->", "", f"Run on {time.strftime('%Y-%m-%d %H:%M')}: `{command}`.",
        "", f"Session: `{args.session}`: {about}.", machine, "",
        "| what | time | peak RSS | target | |", "|---|---|---|---|---|", *lines, "",
        "<!-- /report-speed -->"])
    print(text)
    if args.doc != "-":
        from recording_size import write_section

        write_section(Path(args.doc), "report-speed", text)
    return 0


def _same_outputs(python: str, session: Path, code: Path,
                  known: dict[tuple[str, float], str]) -> str:
    """Whether the report's outputs (Markdown, CSV, JSON; ``--skip`` 0, 5, 7 and 30) are
    byte for byte those of the code in ``code``: "yes", or the ones that differ."""
    differ = []
    for fmt in ("md", "csv", "json"):
        for skip in (0.0, 5.0, 7.0, 30.0):
            cmd = [python, "-m", "benchtui", "report", str(session), "--format", fmt,
                   "--skip", f"{skip:g}"]
            outs = []
            for cwd in (ROOT, code):
                if cwd is ROOT and (fmt, skip) in known:
                    outs.append(known[(fmt, skip)])
                    continue
                done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd,
                                      check=False)
                if done.returncode != 0:
                    raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
                outs.append(done.stdout)
            if outs[0] != outs[1]:
                differ.append(f"{fmt} --skip {skip:g}")
    return "yes (md, csv, json; --skip 0, 5, 7, 30)" if not differ else \
        "**NO**: " + ", ".join(differ)


def _verdict(m: dict[str, float]) -> str:
    ok = m["wall"] < 3.0 and m["rss_mib"] * 2**20 < 500e6
    return "**met**" if ok and math.isfinite(m["wall"]) else "**not met**"


if __name__ == "__main__":
    sys.exit(main())
