"""What reading line prefixes (pdsh's ``host: ``, loggers' stamps) costs ``benchtui parse``.

1. Plain outputs, the code before and after side by side: ``benchtui parse FILE > /dev/null``
   run from two source trees (``--old DIR``: a checkout of the code before, e.g. ``git worktree
   add /tmp/parse-old main``; this tree is the new one), interleaved, best of ``--reps``:
   one hour of ``iostat -x -t 1`` on 8 devices (benchmarks/iostat_speed.py's generator) and a
   fio json+ stream (benchmarks/parse_speed.py's: a real fio capture extended).
2. The same iostat hour with prefixes, new code only: pdsh's ``host: `` over 4 hosts (each a
   quarter of the hour, interleaved line by line: as many lines as the plain hour) and
   ``ts '%Y-%m-%d %H:%M:%S'`` stamps on every line.
3. In-process: ``find_prefixes`` (the look every plain stream pays) on each input's 2 MiB head.

Writes docs/benchmarks/parse_prefixes.md.

    .venv/bin/python benchmarks/parse_prefixes.py --old /tmp/parse-old [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.iostat_speed import generate  # noqa: E402
from benchmarks.parse_speed import capture, extend, machine, timed  # noqa: E402
from benchtui.parsers._prefixes import find_prefixes  # noqa: E402
from benchtui.parsers.registry import DETECT_HEAD_BYTES  # noqa: E402

OUT_MD = ROOT / "docs" / "benchmarks" / "parse_prefixes.md"


def pdsh(text: str, hosts: int) -> str:
    """``text`` split in ``hosts`` consecutive parts, each a host's, interleaved by line as
    pdsh prints them (``n1: ...``)."""
    lines = text.split("\n")
    part = len(lines) // hosts
    streams = [lines[k * part:(k + 1) * part] for k in range(hosts)]
    out = [f"n{k + 1}: {line}" for i in range(part) for k, s in enumerate(streams)
           for line in (s[i],)]
    return "\n".join(out) + "\n"


def stamped(text: str, start: float) -> str:
    """Every line stamped as ts would, a second per iostat report (its ``avg-cpu`` line)."""
    out, t = [], start
    for line in text.split("\n"):
        if line.startswith("avg-cpu:"):
            t += 1
        out.append(datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S ") + line)
    return "\n".join(out) + "\n"


def cli(tree: Path, path: Path, tool: str | None) -> Any:
    """``benchtui parse`` of the code in ``tree``: Python without its site hooks and without
    the current folder on its path (the editable install's finder, or the folder, would import
    this tree's code), the tree and the installed packages on its path; both trees run so."""
    site = next(p for p in sys.path if p.endswith("site-packages"))
    argv = [sys.executable, "-P", "-S", "-m", "benchtui", "parse",
            *(["--tool", tool] if tool else []), str(path)]
    env = {**os.environ, "PYTHONPATH": f"{tree}:{site}"}
    check = subprocess.run([sys.executable, "-P", "-S", "-c",
                            "import benchtui; print(benchtui.__file__)"],
                           env=env, capture_output=True, text=True, check=True).stdout
    if not check.startswith(str(tree)):
        raise SystemExit(f"benchtui is imported from {check.strip()}, not from {tree}")

    def run() -> None:
        with open(os.devnull, "w") as null:
            subprocess.run(argv, stdout=null, env=env, check=True)
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, required=True, help="a source tree of the code before")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iostat-seconds", type=int, default=3600)
    ap.add_argument("--fio-seconds", type=int, default=1200)
    ap.add_argument("--out", type=Path, default=OUT_MD)
    args = ap.parse_args()
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    with tempfile.TemporaryDirectory(prefix="benchtui-prefixes-") as tmp:
        work = Path(tmp)
        iostat = generate(args.iostat_seconds, 8)
        files = {"iostat": work / "iostat.txt", "pdsh": work / "pdsh.txt",
                 "ts": work / "ts.txt", "fio": work / "fio.json"}
        files["iostat"].write_text(iostat)
        files["pdsh"].write_text(pdsh(iostat, 4))
        files["ts"].write_text(stamped(iostat, 1_795_000_000.0))
        fio_text, fio_cmd = capture(work, 6)
        extend(fio_text, args.fio_seconds, files["fio"])
        heads = {k: p.read_bytes()[:DETECT_HEAD_BYTES].decode() for k, p in files.items()}
        look = {}
        for key, head in heads.items():
            t0 = time.perf_counter()
            for _ in range(20):
                shape = find_prefixes(head)
            look[key] = ((time.perf_counter() - t0) / 20 * 1000, shape)
        runs = {
            "iostat old": cli(args.old, files["iostat"], None),
            "iostat new": cli(ROOT, files["iostat"], None),
            "fio old": cli(args.old, files["fio"], "fio-json"),
            "fio new": cli(ROOT, files["fio"], "fio-json"),
            "pdsh new": cli(ROOT, files["pdsh"], None),
            "ts new": cli(ROOT, files["ts"], None),
        }
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
        for _ in range(args.reps):  # interleaved: load from other processes hits all
            for key, fn in runs.items():
                results[key].append(timed(fn))
        sizes = {k: p.stat().st_size / 1e6 for k, p in files.items()}
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in results.items()}
    rows = [
        ("iostat", "plain `iostat -x -t 1`, 8 devices, 1 h", "iostat old", "iostat new"),
        ("fio", f"plain fio json+ (`--tool fio-json`), {args.fio_seconds} s", "fio old",
         "fio new"),
    ]
    lines = [
        "# Line prefixes: what they cost `benchtui parse`",
        "",
        "By benchmarks/parse_prefixes.py. Best of "
        f"{args.reps} runs each, interleaved, CPU = user + system of the `benchtui parse` "
        "process; the code before (`--old`) and after side by side in the same run.",
        "",
        "| input | MB | before: wall s / CPU s | after: wall s / CPU s | after / before (CPU) |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, label, old, new in rows:
        (ow, oc), (nw, nc) = best[old], best[new]
        lines.append(f"| {label} | {sizes[key]:.0f} | {ow:.2f} / {oc:.2f} | {nw:.2f} / {nc:.2f} "
                     f"| {nc / oc:.3f} |")
    lines += [
        "",
        "Prefixed outputs (after only), against the plain hour of iostat they hold:",
        "",
        "| input | MB | wall s / CPU s | vs plain (CPU) |",
        "|---|---:|---:|---:|",
    ]
    plain_cpu = best["iostat new"][1]
    for key, label in (("pdsh", "pdsh `n1: ` over 4 hosts, the same lines"),
                       ("ts", "`ts '%Y-%m-%d %H:%M:%S'` on every line")):
        w, c = best[f"{key} new"]
        lines.append(f"| {label} | {sizes[key]:.0f} | {w:.2f} / {c:.2f} | {c / plain_cpu:.2f}x |")
    lines += [
        "",
        "The look every stream pays (`find_prefixes` on the 2 MiB head, in-process, mean of 20):",
        "",
        "| input | ms | shape found |",
        "|---|---:|---|",
        *(f"| {k} | {ms:.3f} | {shape.describe() if shape else '-'} |"
          for k, (ms, shape) in look.items()),
        "",
        "All runs (wall s / CPU s): " + "; ".join(
            f"{k} " + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in v) for k, v in results.items())
        + ".",
        "",
        f"fio input: a real 6 s capture made by this run (`{fio_cmd}`), extended as "
        "benchmarks/parse_speed.py does.",
        "",
        f"Load average (1, 5, 15 min): {' '.join(load_before)} before, "
        f"{' '.join(load_after)} after.",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()) + ".",
        "",
        "Reproduce from the project's root (fio and jq installed):",
        "",
        "```sh",
        "git worktree add /tmp/parse-old <the commit before>",
        f".venv/bin/python benchmarks/parse_prefixes.py --old /tmp/parse-old --reps {args.reps}",
        "```",
        "",
    ]
    md = "\n".join(lines)
    print(md)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
