"""How fast the iostat text parser reads one hour of ``iostat -x -t 1`` on 8 devices.

Generates the capture (sysstat 12 layout, the header and column widths of sysstat 12.6's
output, C-locale ``-t`` timestamps advancing 1 s per report, values drawn around realistic
levels per device), then times:

1. in-process, as ``benchtui parse`` runs the parser: ``IostatParser().feed_text`` on blocks of
   about 1 MiB of whole lines (``parse_cmd.text_blocks``) + ``finish()``, with the cyclic
   garbage collector paused as ``benchtui parse`` pauses it (best of ``--repeat`` runs);
2. the same with the collector running, as in a long-lived process (informational);
3. the CLI: ``benchtui parse --tool iostat FILE > /dev/null`` (wall and CPU time, peak RSS).

Target: under 1 s in-process. Usage::

    .venv/bin/python benchmarks/iostat_speed.py [--seconds 3600] [--devices 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.cli.parse_cmd import text_blocks  # noqa: E402
from benchtui.parsers.iostat import IostatParser  # noqa: E402

#: sysstat 12.6.1's -x header, as printed on this machine.
HEADER = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s"
    "   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz"
    "     f/s f_await  aqu-sz  %util"
)
CPU_HEADER = "avg-cpu:  %user   %nice %system %iowait  %steal   %idle"


def _widths(header: str) -> list[int]:
    """Each column's width: from the previous column's end to this one's (right-aligned)."""
    ends, pos = [], 0
    for word in header.split()[1:]:
        pos = header.index(word, pos) + len(word)
        ends.append(pos)
    first_end = 13  # the device column: %-13s
    return [end - start for start, end in zip([first_end, *ends[:-1]], ends, strict=True)]


def generate(seconds: int, devices: int, seed: int = 7) -> str:
    return "\n".join(generate_lines(seconds, devices, seed)) + "\n"


def generate_lines(seconds: int, devices: int, seed: int = 7) -> Iterator[str]:
    """The capture's lines, one report (a second) at a time (``generate`` joins them;
    benchmarks/import_memory.py writes hundreds of MB of them to a file as they come)."""
    rng = random.Random(seed)
    widths = _widths(HEADER)
    names = [f"nvme{i}n1" for i in range(devices)]
    levels = [(rng.uniform(200, 20000), rng.uniform(100, 40000)) for _ in names]
    start = datetime(2026, 11, 22, 3, 0, 0, tzinfo=UTC).timestamp()
    yield "Linux 6.1.0-26-amd64 (bench)\t11/22/26\t_x86_64_\t(64 CPU)"
    yield ""
    for k in range(seconds):
        out: list[str] = []
        stamp = datetime.fromtimestamp(start + k + 1, UTC).strftime("%m/%d/%y %H:%M:%S")
        out.append(stamp)
        out.append(CPU_HEADER)
        user, system, iowait = rng.uniform(5, 40), rng.uniform(2, 20), rng.uniform(0, 15)
        idle = max(0.0, 100.0 - user - system - iowait)
        out.append(f"{'':10}{user:>6.2f}{0.0:>8.2f}{system:>8.2f}{iowait:>8.2f}"
                   f"{0.0:>8.2f}{idle:>8.2f}")
        out.append("")
        out.append(HEADER)
        for name, (r_level, w_level) in zip(names, levels, strict=True):
            r = r_level * rng.uniform(0.8, 1.2)
            w = w_level * rng.uniform(0.8, 1.2)
            rsz, wsz = rng.choice((4.0, 8.0, 128.0)), rng.choice((4.0, 16.0, 64.0))
            rrqm, wrqm = r * rng.uniform(0, 0.05), w * rng.uniform(0, 0.2)
            f = rng.uniform(0, 50)
            values = [
                r, r * rsz, rrqm, 100 * rrqm / (r + rrqm), rng.uniform(0.05, 2), rsz,
                w, w * wsz, wrqm, 100 * wrqm / (w + wrqm), rng.uniform(0.01, 1), wsz,
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                f, rng.uniform(0, 0.5), rng.uniform(0.1, 30), rng.uniform(10, 100),
            ]
            # sysstat prints " %*.2f": a space before every value, even one too wide.
            out.append(f"{name:<13}" + "".join(
                f" {v:>{w_ - 1}.2f}" for v, w_ in zip(values, widths, strict=True)))
        out.append("")
        out.append("")
        yield from out


def time_in_process(text: str, repeat: int, *, collector: bool) -> tuple[float, float, int]:
    """Best wall time, best CPU time (process_time: what the parser costs, whatever else the
    machine is running) and the number of samples of parsing ``text`` as ``benchtui parse``
    does: in blocks of whole lines (``text_blocks``), each block's samples dropped before the
    next. ``collector=False`` pauses the cyclic garbage collector as ``benchtui parse`` does;
    True leaves it running (as in a long-lived process)."""
    best_wall = best_cpu = float("inf")
    count = 0
    for _ in range(repeat):
        gc.collect()
        if not collector:
            gc.disable()
        parser = IostatParser()
        wall, cpu = time.perf_counter(), time.process_time()
        count = 0
        for block in text_blocks(text):
            count += len(parser.feed_text(block))
        count += len(parser.finish())
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
        gc.enable()
    return best_wall, best_cpu, count


def time_cli(path: Path, repeat: int) -> tuple[float, float, float]:
    """Best wall time and best CPU time (user + system) of the CLI, and its peak RSS (MiB)."""
    exe = ROOT / ".venv" / "bin" / "benchtui"
    cmd = [str(exe) if exe.exists() else "benchtui", "parse", "--tool", "iostat", str(path)]
    best = best_cpu = float("inf")
    rss = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        with open(os.devnull, "w") as sink:
            proc = subprocess.Popen(cmd, stdout=sink)
            _pid, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{cmd} failed")
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, usage.ru_utime + usage.ru_stime)
        rss = max(rss, usage.ru_maxrss / 1024)
    return best, best_cpu, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=3600)
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    text = generate(args.seconds, args.devices)
    lines = text.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "iostat-x-t-1h.txt"
        path.write_text(text)
        in_proc, in_proc_cpu, count = time_in_process(text, args.repeat, collector=False)
        _wall, gc_cpu, _count = time_in_process(text, args.repeat, collector=True)
        cli, cli_cpu, cli_rss = time_cli(path, args.repeat)
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    print(f"machine: {platform.machine()} {model}, {os.cpu_count()} CPUs, "
          f"Linux {platform.release()}, Python {platform.python_version()}")
    print(f"capture: {args.seconds} reports x {args.devices} devices, {lines} lines, "
          f"{len(text) / 1e6:.1f} MB")
    print(f"load average (1 min) before timing: {load:.2f}")
    print(f"in-process, as benchtui parse runs it (blocks, cyclic GC paused): {in_proc:.3f} s "
          f"wall, {in_proc_cpu:.3f} s CPU, {count} samples ({count / in_proc_cpu / 1e6:.2f} M "
          f"samples per CPU second, {lines / in_proc_cpu / 1e3:.0f} k lines per CPU second)")
    print(f"in-process, the cyclic GC running: {gc_cpu:.3f} s CPU")
    print(f"CLI benchtui parse --tool iostat FILE >/dev/null: {cli:.3f} s wall, {cli_cpu:.3f} s "
          f"CPU (parse + JSON Lines out + start), peak RSS {cli_rss:.0f} MiB")
    print("target (in-process < 1 s CPU):", "met" if in_proc_cpu < 1.0 else "NOT met")


if __name__ == "__main__":
    main()
