"""How `benchtui report` and `benchtui import` grow with hosts and steps (issue 20): a report
must grow linearly, a 10,000-host session reporting in under 15 s; an import of 10^5 steps
must take under a minute and make a session file no bigger than a few times its input.

Wide and long sessions are generated here (``make_wide``): H hosts x S steps of fio, each run
a few seconds of per-second samples (IOPS, bandwidth, clat mean, p50/p99/p99.9 per job and op,
as the fio json parser gives them, no histograms) and its end-of-run summary, with the events
a live session has. Then, each in a process of its own (wall and CPU time from ``os.wait4``;
peak RSS from the process's own ``VmHWM``: ``ru_maxrss`` of a child started by vfork, as
``subprocess`` starts it, counts this script's memory before the exec, and this script holds
~200 MB once it has made the 10,000-host session):

- ``benchtui report SESSION --format md -o /dev/null`` and ``--format csv``;
- ``benchtui import REPORT --map MAP -o FILE`` of a saved report of S steps on H hosts
  (``make_import``: each run's mbw output under a map marker line, two samples a run), and
  the size of the session file it makes against the report's.

    .venv/bin/python benchmarks/report_scale.py [--hosts 1000,3000,10000] [--steps 1]
        [--long-steps 10000,100000] [--import-steps 10000,100000] [--profile]
        [--doc docs/benchmarks/report_scale.md]

``--profile`` runs the largest report under cProfile and prints its 25 costliest functions
(how the quadratic spots were found).
"""

from __future__ import annotations

import argparse
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

from benchtui import __version__  # noqa: E402
from benchtui.model import events as ev  # noqa: E402
from benchtui.model.events import Event  # noqa: E402
from benchtui.model.sample import Sample  # noqa: E402
from benchtui.store.recording import SCHEMA_VERSION, Record, SessionMeta, SessionWriter  # noqa: E402

START = 1_793_491_200.0
SECONDS = 3


def _interval(host: str, step: str, t: float, elapsed: float, iops: float) -> list[Sample]:
    labels = {"job": step, "op": "read", "step": step}
    out = [Sample(t, "fio", "interval", "iops", iops, labels, host, elapsed),
           Sample(t, "fio", "interval", "bandwidth_bytes", iops * 4096, labels, host, elapsed),
           Sample(t, "fio", "interval", "latency_mean_seconds", 1e-4,
                  {**labels, "measure": "clat"}, host, elapsed)]
    for q, v in (("50", 9e-5), ("99", 3e-4), ("99.9", 8e-4)):
        out.append(Sample(t, "fio", "interval", "latency_seconds", v,
                          {**labels, "measure": "clat", "quantile": q}, host, elapsed))
    return out


def make_wide(path: Path, hosts_n: int, steps_n: int) -> None:
    """A session of ``hosts_n`` hosts running ``steps_n`` steps, each SECONDS long."""
    names = [f"h{i:05d}" for i in range(hosts_n)]
    meta = SessionMeta(SCHEMA_VERSION, "scale", "scale-1", "", None, START, None,
                       hosts=names, writer=__version__)
    writer = SessionWriter(str(path), meta)
    t = START
    batch: list[tuple[float, Record]] = []

    def flush() -> None:
        writer.append(batch)
        batch.clear()

    def event(at: float, kind: str, message: str, **kw: object) -> None:
        batch.append((at, Event(at, kind, message, **kw)))  # type: ignore[arg-type]

    event(t, ev.SESSION_START, "session scale")
    for s in range(steps_n):
        step = f"step-{s:06d}"
        t0 = t + 1
        event(t0, ev.STEP_START, f"step {step}", step=step,
              data={"hosts": names, "tool": "fio", "index": s, "repeat": 1})
        for h in names:
            event(t0 + 0.01, ev.RUN_START, f"{h}: fio started", host=h, step=step,
                  data={"command": "fio ..."})
        for i in range(1, SECONDS + 1):
            for n, h in enumerate(names):
                batch.append((t0 + i, _interval(h, step, t0 + i, float(i), 1000.0 + n % 97)))
            if len(batch) > 20000:
                flush()
        t1 = t0 + SECONDS + 0.2
        for h in names:
            event(t1, ev.RUN_END, f"{h}: fio exited with status 0", host=h, step=step,
                  data={"status": 0})
        event(t1 + 0.01, ev.STEP_END, f"step {step} done", step=step, data={"ok": True})
        t = t1 + 0.5
        if len(batch) > 20000:
            flush()
    event(t + 1, ev.SESSION_END, "done")
    flush()
    writer.close(t + 1)


#: One mbw run (one test, one run): an interval line and its average, two samples; about
#: 140 bytes a step with its marker, as the report of issue 20 (14 MB for 10^5 steps).
MBW_TEXT = "0\tMethod: MEMCPY\tElapsed: 0.01959\tMiB: 100.00000\tCopy: {rate:.3f} MiB/s\n" \
    "AVG\tMethod: MEMCPY\tElapsed: 0.01959\tMiB: 100.00000\tCopy: {rate:.3f} MiB/s\n"


def make_import(directory: Path, hosts_n: int, steps_n: int) -> tuple[Path, Path]:
    """A saved report of mbw outputs, one per (step, host), each under a marker line
    ``## step S on host H``, and the map that cuts it."""
    report = directory / f"import-{steps_n}.txt"
    with report.open("w") as f:
        for s in range(steps_n):
            for h in range(hosts_n):
                f.write(f"## step s{s:06d} on host h{h:03d}\n")
                f.write(MBW_TEXT.format(rate=5000 + (s * 7 + h) % 500))
    imap = directory / "import.toml"
    imap.write_text('[step]\nmarker = "line"\nmatch = \'^## step (\\S+) on host\'\n\n'
                    '[host]\nmarker = "line"\nmatch = \'^## step \\S+ on host (\\S+)$\'\n')
    return report, imap


#: Runs ``python -m benchtui ARGS`` and writes the process's peak RSS (``VmHWM``, kB: the
#: memory of this process image alone, after the exec) to the file named first.
HWM = """import atexit, runpy, sys
out = sys.argv.pop(1)
def hwm():
    with open("/proc/self/status") as f:
        kb = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    with open(out, "w") as f:
        f.write(kb)
atexit.register(hwm)
sys.argv[0] = "benchtui"
runpy.run_module("benchtui", run_name="__main__", alter_sys=True)
"""


def timed(argv: list[str], cwd: Path = ROOT) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stderr) of ``python -m benchtui ...`` (``argv``) in a
    process of its own, run in ``cwd`` (a checkout: its ``benchtui`` is the one run)."""
    assert argv[1:3] == ["-m", "benchtui"], argv
    fd, hwm_path = tempfile.mkstemp(prefix="benchtui-hwm-")
    os.close(fd)
    argv = [argv[0], "-c", HWM, hwm_path, *argv[3:]]
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err[-2000:]}")
    hwm_kb = Path(hwm_path).read_text().strip()
    os.unlink(hwm_path)
    return wall, usage.ru_utime + usage.ru_stime, int(hwm_kb) / 1024, err


def write_doc(path: Path, lines: list[str],
              title: str = "`report` and `import` at scale (issue 20)") -> None:
    """The results between the doc's ``<!-- results -->`` markers (the rest of it kept), or
    a new doc of them under ``title``."""
    table = "<!-- results -->\n" + "\n".join(lines) + "\n<!-- /results -->"
    text = path.read_text() if path.exists() else ""
    start, end = text.find("<!-- results -->"), text.find("<!-- /results -->")
    if start < 0 or end < start:
        text = f"# {title}\n\n{table}\n"
    else:
        text = text[:start] + table + text[end + len("<!-- /results -->"):]
    path.write_text(text)


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", default="1000,3000,10000")
    ap.add_argument("--steps", type=int, default=1, help="steps of the wide sessions")
    ap.add_argument("--long-steps", default="10000,100000",
                    help="steps of the long (one host) sessions")
    ap.add_argument("--import-steps", default="10000,100000")
    ap.add_argument("--import-hosts", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--doc", default=None, help="write the results to this Markdown file")
    args = ap.parse_args()
    py = sys.executable
    lines = [f"- machine: {platform.node()}, {os.cpu_count()} CPUs, Python "
             f"{platform.python_version()}, benchtui {__version__}; **shared with other "
             "developers' builds and tests while measured**: times are upper bounds",
             f"- command: `.venv/bin/python benchmarks/report_scale.py {' '.join(sys.argv[1:])}`",
             "- load: the machine's load average (1, 5, 15 min) when the row was measured",
             "", "| session | samples | report md: wall / CPU / RSS | report csv: wall / CPU "
             "| load |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="benchtui-scale-") as tmp:
        d = Path(tmp)
        shapes = [(int(h), args.steps) for h in args.hosts.split(",") if h] \
            + [(1, int(s)) for s in args.long_steps.split(",") if s]
        largest = None
        for hosts_n, steps_n in shapes:
            path = d / f"wide-{hosts_n}x{steps_n}.btr"
            t = time.perf_counter()
            make_wide(path, hosts_n, steps_n)
            made = time.perf_counter() - t
            samples = hosts_n * steps_n * SECONDS * 6
            md = timed([py, "-m", "benchtui", "report", str(path), "--skip", "0", "-o",
                        "/dev/null"])
            csv = timed([py, "-m", "benchtui", "report", str(path), "--skip", "0", "--format",
                         "csv", "-o", "/dev/null"])
            row = (f"| {hosts_n} hosts x {steps_n} steps | {samples:,} | {md[0]:.1f} s / "
                   f"{md[1]:.1f} s / {md[2]:.0f} MB | {csv[0]:.1f} s / {csv[1]:.1f} s | "
                   f"{_load()} |")
            print(row, f"(made in {made:.0f} s)", flush=True)
            lines.append(row)
            largest = path
        lines += ["", "| import | report size | wall / CPU / RSS | session file | file / report "
                  "| load |", "|---|---|---|---|---|---|"]
        for steps_n in [int(s) for s in args.import_steps.split(",") if s]:
            report, imap = make_import(d, args.import_hosts, steps_n)
            out = d / f"imported-{steps_n}.btr"
            r = timed([py, "-m", "benchtui", "import", str(report), "--map", str(imap), "-o",
                       str(out)])
            size, file_size = report.stat().st_size, out.stat().st_size
            row = (f"| {steps_n} steps x {args.import_hosts} hosts | {size / 1e6:.1f} MB | "
                   f"{r[0]:.1f} s / {r[1]:.1f} s / {r[2]:.0f} MB | {file_size / 1e6:.1f} MB | "
                   f"{file_size / size:.2f} | {_load()} |")
            print(row, flush=True)
            lines.append(row)
            report.unlink()
            out.unlink()
        if args.profile and largest is not None:
            subprocess.run([py, "-m", "cProfile", "-s", "cumulative", "-m", "benchtui", "report",
                            str(largest), "--skip", "0", "-o", "/dev/null"], cwd=ROOT,
                           check=False)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"(this script: {usage.ru_maxrss / 1024:.0f} MB peak)")
    if args.doc:
        write_doc(Path(args.doc), lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
