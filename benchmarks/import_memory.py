"""How much memory ``benchtui import`` needs against the size of its input (issue 29): a
file at the documented 512 MiB limit must import within 2 GB.

The input is ``iostat -x -t 1`` on 8 devices, the sysstat 12 layout of
``benchmarks/iostat_speed.py`` (~6.9 MB and ~570,000 samples an hour), as long as each size
asks, written to a file as it is generated. Each import runs in a process of its own
(``benchtui import LOG --host h --step s -o OUT``, with the console's figure track as the
CLI writes it): wall and CPU time, and peak RSS (the child's own ``VmHWM``, read at its
exit: ``report_scale.timed``). With ``--before DIR`` (a checkout of the code before, e.g.
``git worktree add /tmp/before main``) the same import runs there too, side by side, for the
sizes up to ``--before-max-mib`` (it held every sample as an object: ~30x its input).

    .venv/bin/python benchmarks/import_memory.py [--mib 7,28,92,256,512] [--devices 8]
        [--before DIR] [--before-max-mib 100] [--doc docs/benchmarks/import_memory.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.iostat_speed import generate_lines  # noqa: E402
from benchmarks.report_scale import timed, write_doc  # noqa: E402
from benchtui import __version__  # noqa: E402

#: Bytes of the capture a second of it takes on 8 devices (an hour is 6,926,341 bytes).
_BYTES_PER_DEVICE_SECOND = 6_926_341 / 3600 / 8


def write_log(path: Path, mib: float, devices: int) -> int:
    """A capture of about ``mib`` MiB at ``path``; its size."""
    seconds = max(int(mib * 2**20 / (_BYTES_PER_DEVICE_SECOND * devices)), 1)
    with path.open("w", encoding="utf-8") as f:
        for line in generate_lines(seconds, devices):
            f.write(line)
            f.write("\n")
    return path.stat().st_size


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _run(log: Path, out: Path, cwd: Path) -> tuple[float, float, float]:
    if out.exists():
        out.unlink()
    wall, cpu, peak, _err = timed([sys.executable, "-m", "benchtui", "import", str(log),
                                   "--host", "h", "--step", "s", "-o", str(out)], cwd)
    out.unlink()
    return wall, cpu, peak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", default="7,28,92,256,512", help="input sizes (MiB)")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--before", type=Path, default=None,
                    help="a checkout of the code before, run side by side")
    ap.add_argument("--before-max-mib", type=float, default=100.0)
    ap.add_argument("--doc", type=Path, default=None, help="write the results to this file")
    args = ap.parse_args()
    lines = [f"- machine: {platform.node()}, {os.cpu_count()} CPUs, Python "
             f"{platform.python_version()}, benchtui {__version__}",
             f"- command: `.venv/bin/python benchmarks/import_memory.py "
             f"{' '.join(sys.argv[1:])}`",
             "- input: `iostat -x -t 1` on "
             f"{args.devices} devices (benchmarks/iostat_speed.py's layout); peak RSS is the "
             "child's own VmHWM; load: the machine's load average (1, 5, 15 min) at the row",
             "", "| input | after: wall / CPU / peak RSS | RSS / input | before: wall / CPU / "
             "peak RSS | RSS / input | load |", "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory(prefix="benchtui-import-memory-") as tmp:
        d = Path(tmp)
        for mib in [float(m) for m in args.mib.split(",") if m]:
            log = d / f"iostat-{mib:g}MiB.txt"
            size = write_log(log, mib, args.devices)
            wall, cpu, peak = _run(log, d / "after.btr", ROOT)
            before = "not run"
            ratio_before = ""
            if args.before is not None and mib <= args.before_max_mib:
                b_wall, b_cpu, b_peak = _run(log, d / "before.btr", args.before)
                before = f"{b_wall:.1f} s / {b_cpu:.1f} s / {b_peak:.0f} MB"
                ratio_before = f"{b_peak * 2**20 / size:.1f}x"
            row = (f"| {size / 2**20:.0f} MiB | {wall:.1f} s / {cpu:.1f} s / {peak:.0f} MB | "
                   f"{peak * 2**20 / size:.2f}x | {before} | {ratio_before} | {_load()} |")
            print(row, flush=True)
            lines.append(row)
            log.unlink()
    if args.doc is not None:
        write_doc(args.doc, lines, "`import` memory against input size (issue 29)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
