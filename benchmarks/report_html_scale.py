"""How `benchtui report --format html` grows with the hosts (issue 32): it must grow
linearly, 1,000 hosts in under 30 s. Before issue 32 it grew with the square of the hosts
(25 hosts 4.9 s, 100 hosts 28.8 s, 200 hosts 123 s, 1,000 not done in 10 minutes): one
matplotlib panel per host in the latency small multiples, sharing axes under a constrained
layout, and a line and a legend entry per host in every other plot.

Sessions are generated here (``make_fleet``): H hosts running one fio step of ``--seconds``
(default 60) per-second intervals, 2 jobs of random reads, with the samples the fio json+
parser gives (IOPS, bandwidth, clat/slat/lat means, clat percentiles, the interval's latency
histogram at the session's 4 bits: ``benchmarks/make_session.py``'s ``fio_samples``), the
events a live session has, written with the recorder's own ``SessionWriter``. A few hosts are
made slow (a quarter of the IOPS, four times the latency: ``SLOW``) so that a plot of the
hosts' distribution has outliers to name.

Each report runs in a process of its own (wall and CPU time from ``os.wait4``, peak RSS from
the process's own ``VmHWM``: ``report_scale.timed``), with ``--timeout`` as a bound.
``--code DIR`` runs the same reports with another checkout's code as well (a worktree of the
commit before, ``git worktree add /tmp/rep32-old main``), the two alternately, size by size,
on the same files:

    .venv/bin/python benchmarks/report_html_scale.py [--hosts 25,100,200,1000]
        [--seconds 60] [--code /tmp/rep32-old] [--timeout 600] [--formats html,md]
        [--doc docs/benchmarks/report_scale.md]

``--formats html,md`` times the Markdown report too (its tables alone, no plots: what grew
with the square of the hosts after issue 30, when every host's window edges were decoded
through the whole fleet's segment).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from make_session import Host, facts, fio_samples, histogram_pool  # noqa: E402
from report_scale import HWM  # noqa: E402

from benchtui import __version__  # noqa: E402
from benchtui.model import events as ev  # noqa: E402
from benchtui.model.events import Event  # noqa: E402
from benchtui.model.histogram import LatencyHistogram  # noqa: E402
from benchtui.store.recording import (  # noqa: E402
    SCHEMA_VERSION,
    Record,
    SessionMeta,
    SessionReader,
    SessionWriter,
)

START = 1_793_491_200.0
WORKLOAD = ("randread-4k", 4096, 1.0, 20_000)
#: Every SLOW-th host (from the 7th) runs at a quarter of the IOPS.
SLOW = 97


def make_fleet(path: Path, hosts_n: int, seconds: int, seed: int = 1) -> None:
    """A session of ``hosts_n`` hosts running one fio step for ``seconds`` per-second
    intervals (module doc)."""
    rng = random.Random(seed)
    pool = histogram_pool(rng, 200)
    names = [f"host{i:04d}" for i in range(hosts_n)]
    hosts = [Host(n, random.Random(rng.random())) for n in names]
    meta = SessionMeta(SCHEMA_VERSION, "fleet", "fleet-1", "", None, START, None,
                       hosts=names, writer=__version__, histogram_bits=4)
    writer = SessionWriter(str(path), meta)
    batch: list[tuple[float, Record]] = []

    def event(at: float, kind: str, message: str, **kw: object) -> None:
        batch.append((at, Event(at, kind, message, **kw)))  # type: ignore[arg-type]

    for h in hosts:
        event(START, ev.HOST_STATE, f"{h.name}: up", host=h.name, data={"state": "up"})
        event(START + 0.2, ev.FACTS, f"{h.name}: facts", host=h.name,
              data={"facts": facts(h.name)})
    event(START + 0.5, ev.SESSION_START, "session fleet")
    t0 = START + 1
    step = WORKLOAD[0]
    event(t0, ev.STEP_START, f"step {step}", step=step,
          data={"hosts": names, "tool": "fio", "index": 0, "repeat": 1})
    for h in hosts:
        h.step = step
        event(t0 + 0.05, ev.RUN_START, f"{h.name}: fio started", host=h.name, step=step,
              data={"command": "fio ..."})
    writer.append(batch)
    batch.clear()
    for i in range(1, seconds + 1):
        for n, h in enumerate(hosts):
            slow = n % SLOW == 7
            load = (WORKLOAD[0], WORKLOAD[1], WORKLOAD[2],
                    WORKLOAD[3] // 4 if slow else WORKLOAD[3])
            t = round(t0 + i + h.rng.uniform(0.0, 0.3), 3)
            samples = fio_samples(h, t, float(i), load, pool)
            if slow:
                for s in samples:
                    if s.metric.startswith("latency") and s.histogram is None:
                        s.value *= 4
                    elif s.histogram is not None:
                        # x4 maps a bucket's midpoint onto the midpoint two octaves up
                        s.histogram = LatencyHistogram({
                            k * 4: c for k, c in s.histogram.counts.items()})
            batch.append((t, samples))
        writer.append(batch)
        batch.clear()
    t1 = t0 + seconds + 0.5
    for h in hosts:
        event(t1, ev.RUN_END, f"{h.name}: fio exited with status 0", host=h.name, step=step,
              data={"status": 0})
    event(t1 + 0.1, ev.STEP_END, f"step {step} done", step=step, data={"ok": True})
    event(t1 + 1, ev.SESSION_END, "done")
    writer.append(batch)
    writer.close(t1 + 1)


def timed(args: list[str], code: Path, timeout: float) -> tuple[float, float, float] | None:
    """(wall s, CPU s, peak RSS MB) of ``python -m benchtui ARGS`` run from ``code`` (a
    checkout: its ``benchtui`` package is the one imported), None when it did not finish
    within ``timeout`` s (it is killed)."""
    fd, hwm_path = tempfile.mkstemp(prefix="benchtui-hwm-")
    os.close(fd)
    cpu0 = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", HWM, hwm_path, *args], cwd=code,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        os.unlink(hwm_path)
        return None
    wall = time.perf_counter() - t
    cpu = _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"report {' '.join(args)} failed ({code}): {err[-2000:]}")
    hwm_kb = Path(hwm_path).read_text().strip()
    os.unlink(hwm_path)
    return wall, cpu, int(hwm_kb) / 1024


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _cell(found: tuple[float, float, float] | None, timeout: float) -> str:
    if found is None:
        return f"not done in {timeout:.0f} s"
    wall, cpu, rss = found
    return f"{wall:.1f} s / {cpu:.1f} s / {rss:.0f} MB"


def write_doc(path: Path, lines: list[str]) -> None:
    """The results between the doc's ``<!-- html-scale -->`` markers (added at its end when
    missing)."""
    start_mark, end_mark = "<!-- html-scale -->", "<!-- /html-scale -->"
    table = start_mark + "\n" + "\n".join(lines) + "\n" + end_mark
    text = path.read_text() if path.exists() else ""
    start, end = text.find(start_mark), text.find(end_mark)
    if start < 0 or end < start:
        text = text.rstrip("\n") + "\n\n" + table + "\n"
    else:
        text = text[:start] + table + text[end + len(end_mark):]
    path.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", default="25,100,200,1000")
    ap.add_argument("--seconds", type=int, default=60, help="per-second intervals a run")
    ap.add_argument("--code", type=Path, default=None,
                    help="another checkout to measure beside this one (the code before)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--keep", type=Path, default=None,
                    help="directory to keep the sessions and pages in")
    ap.add_argument("--doc", default=None, help="write the results into this Markdown file")
    ap.add_argument("--formats", default="html",
                    help="report formats to time, e.g. html,md (md: the tables alone)")
    args = ap.parse_args()
    formats = [f for f in args.formats.split(",") if f]

    codes = [("this code", ROOT)] + ([("before", args.code)] if args.code else [])
    head = "| hosts | format | samples | output | " + " | ".join(
        f"{name}: wall / CPU / RSS" for name, _ in codes) + " | load (1/5/15 min) |"
    lines = [f"- machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, benchtui "
             f"{__version__}; {time.strftime('%Y-%m-%d %H:%M')} UTC",
             "- command: `.venv/bin/python benchmarks/report_html_scale.py "
             f"{' '.join(sys.argv[1:])}`",
             f"- each session: one fio step of {args.seconds} per-second intervals on every "
             "host, 2 jobs, latency histograms at 4 bits", "",
             head, "|" + "---|" * (5 + len(codes))]
    with tempfile.TemporaryDirectory(prefix="benchtui-html-") as tmp:
        d = args.keep or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        for hosts_n in [int(h) for h in args.hosts.split(",") if h]:
            path = d / f"fleet-{hosts_n}x{args.seconds}.btr"
            if not path.exists():
                part = path.with_name(path.name + ".part")
                make_fleet(part, hosts_n, args.seconds)
                part.rename(path)
            with SessionReader.open(str(path)) as reader:
                samples = reader.sample_count
            for form in formats:
                cells = []
                size = 0
                for name, code in codes:
                    page = d / f"fleet-{hosts_n}-{name.replace(' ', '-')}.{form}"
                    found = timed(["report", str(path), "--format", form, "-o", str(page)],
                                  code, args.timeout)
                    cells.append(_cell(found, args.timeout))
                    if code == ROOT and page.exists():
                        size = page.stat().st_size
                row = (f"| {hosts_n} | {form} | {samples:,} | {size / 1e6:.1f} MB | "
                       + " | ".join(cells) + f" | {_load()} |")
                print(row, flush=True)
                lines.append(row)
    if args.doc:
        write_doc(Path(args.doc), lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
