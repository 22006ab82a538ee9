"""Where `benchtui parse --tool fio-json`'s instructions go outside the parser (issue 32): the
interpreter's start, each module the command imports (in the order it imports them), the
command on an empty file, reading the file, and writing the samples as JSON Lines.

Counts are valgrind's callgrind (load does not change them), each a fresh process less
another: an import is the count of importing every module up to it less the count of those
before it, in the order their imports end (so that each one's count is mostly its own);
reading is the count of ``open(FILE, "rb").read()`` less the same without; writing is the
parse with its samples written by ``JsonlWriter`` to /dev/null less the parse with them only
listed; the parse (its documents found, decoded, read) is the count with the samples listed
less the count with the file read; the rest is the CLI's count less its count on an empty
file and less the driver's read, parse and write.
This code and the code before (``--old CHECKOUT``, e.g. ``git worktree add --detach
/tmp/cliparse-old e37372e``) side by side; bytecode is compiled beforehand, as an installed
tool has it.

    .venv/bin/python benchmarks/parse_startup.py [--old CHECKOUT] [--imports] [FILE...]

FILE: fio json+ streams (default: the real 32-job capture, benchmarks/captures/).
``--imports``: also the module-by-module table (~100 more valgrind runs a checkout, ~10 min).
"""

from __future__ import annotations

import argparse
import lzma
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDE_CAPTURE = ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz"
COMMAND = ["parse", "--tool", "fio-json"]

#: The parse's samples listed (``list``) or written (``write``); ``read``: the file read, no
#: parse; ``none``: nothing after the imports.
DRIVER = r"""
import gc, os, sys
import orjson
from benchtui.export.formats import JsonlWriter
from benchtui.parsers.fio_json import FioJsonParser
mode, path = sys.argv[1], sys.argv[2]
gc.disable()
if mode != "none":
    data = open(path, "rb").read()
if mode in ("list", "write"):
    p = FioJsonParser(host="-", source=path)
    p.histograms = False
    samples = list(p.feed_bytes(data))
    samples += p.finish()
    if mode == "write":
        with open(os.devnull, "w") as out:
            JsonlWriter(out).write(samples)
    print(len(samples), file=sys.stderr)
"""


def instructions(argv: list[str], env: dict[str, str], cwd: str) -> int:
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *argv], env={**env, "PYTHONHASHSEED": "0"}, capture_output=True,
                          text=True, check=False, cwd=cwd)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no count from valgrind: {done.stderr[-300:]}")
    return int(found.group(1))


def imported(env: dict[str, str], cwd: str, path: Path) -> list[str]:
    """The modules ``benchtui parse`` imports, in the order their imports end (-X importtime:
    a module after those it imports, so that each one's count is its own)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "benchtui", *COMMAND,
                           str(path)], env=env, cwd=cwd, capture_output=True, text=True,
                          check=False)
    names = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", line)
        if found:
            names.append(found.group(1))
    start = names.index("runpy") + 1  # (the interpreter's own start before it)
    return [n for n in names[start:] if n != "benchtui.__main__"]


def measure(root: Path, paths: list[Path], tmp: str, with_imports: bool) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "benchtui")],
                   env=env, check=True, capture_output=True)
    empty = Path(tmp) / "empty.json"
    empty.write_bytes(b"")
    py = [sys.executable]
    out: dict[str, int] = {}
    out["python -c pass"] = instructions([*py, "-c", "pass"], env, tmp)
    out["benchtui parse of an empty file"] = instructions(
        [*py, "-m", "benchtui", *COMMAND, str(empty)], env, tmp)
    if with_imports:
        before = out["python -c pass"]
        names = imported(env, tmp, empty)
        for i, name in enumerate(names):
            code = (f"import contextlib\nfor m in {names[: i + 1]!r}:\n"  # (copy's org.python)
                    "    with contextlib.suppress(ImportError):\n        __import__(m)")
            count = instructions([*py, "-c", code], env, tmp)
            out[f"import {name}"] = count - before
            before = count
    for path in paths:
        none = instructions([*py, "-c", DRIVER, "none", str(path)], env, tmp)
        read = instructions([*py, "-c", DRIVER, "read", str(path)], env, tmp)
        listed = instructions([*py, "-c", DRIVER, "list", str(path)], env, tmp)
        written = instructions([*py, "-c", DRIVER, "write", str(path)], env, tmp)
        cli = instructions([*py, "-m", "benchtui", *COMMAND, str(path)], env, tmp)
        out[f"{path.name}: benchtui parse"] = cli
        out[f"{path.name}: reading the file"] = read - none
        out[f"{path.name}: writing the samples (JsonlWriter)"] = written - listed
        out[f"{path.name}: the parse (samples listed), imports left out"] = listed - read
        out[f"{path.name}: the rest (detection on the head, output, exit)"] = (
            cli - out["benchtui parse of an empty file"] - (written - none))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--old", type=Path, help="a checkout of the code before")
    ap.add_argument("--imports", action="store_true", help="also the module-by-module counts")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = [p.resolve() for p in args.files]
        if not paths:
            wide = Path(tmp) / "fio-json-plus-32jobs-20s.json"
            wide.write_bytes(lzma.decompress(WIDE_CAPTURE.read_bytes()))
            paths = [wide]
        codes = {"now": ROOT, **({"before": args.old} if args.old else {})}
        results = {code: measure(root.resolve(), paths, tmp, args.imports)
                   for code, root in codes.items()}
    rows = list(dict.fromkeys(k for r in results.values() for k in r))
    print("| millions of instructions | " + " | ".join(results) + " |")
    print("|---|" + "---:|" * len(results))
    for row in rows:
        cells = [f"{r[row] / 1e6:.1f}" if row in r else "-" for r in results.values()]
        print(f"| {row} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
