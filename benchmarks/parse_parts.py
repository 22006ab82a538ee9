"""Where `benchtui parse`'s own work on fio json+ goes (without histograms), by instructions:
the parser's work over documents decoded beforehand (``FioJsonParser.document``, decoding
and finding the documents left out), then the per-bucket parts of it, each counted alone over
the very arguments the parse gave them: the percentiles (``Probed.quantiles``), a direction's
buckets read and summed per block (``probed_interval``) and, within that, the counts listed,
the keys listed (where fio added buckets), the block sums and the blocks carried. This
code is counted twice: in pure Python (``BENCHTUI_PURE_PYTHON=1``) and with the compiled pass
(``_fio_json_walked``: "read" is its walk, "quantiles" its ``find``; the Python path's
sub-parts do not apply).

Counts are valgrind's callgrind (load does not change them), each less the same process
without the part; the code before (a checkout, ``--old``) and this code side by side.

    .venv/bin/python benchmarks/parse_parts.py [--old CHECKOUT] [FILE]

FILE: a fio json+ stream (default: the real 32-job capture, benchmarks/captures/).
"""

from __future__ import annotations

import argparse
import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDE_CAPTURE = ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz"

DRIVER = r"""
import gc, sys
import orjson
import benchtui.parsers._fio_json_jobs as jobs
import benchtui.parsers._fio_json_probed as probed
from benchtui.parsers.fio_json import FioJsonParser
part, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
docs, pos = [], data.find(b"{\n")
while pos >= 0:
    end = data.find(b"\n}\n", pos)
    docs.append(orjson.loads(data[pos:end + 2]))
    pos = data.find(b"{\n", end + 3)
reads, percentiles = [], []
# (the code since round 8 reads a direction by _fio_json_walked: the compiled pass or Python)
entry = "percentile_interval" if hasattr(jobs, "percentile_interval") else "probed_interval"
read = getattr(jobs, entry)
kinds = [probed.Probed]
if entry == "percentile_interval":
    import benchtui.parsers._fio_json_walked as walked
    kinds.append(walked.Walked)
if part not in ("parse", "none"):  # a parse beforehand, recording the parts' arguments
    def record_read(raw, prev):
        reads.append((raw, prev))
        return read(raw, prev)
    def recorder(quantiles):
        def record_quantiles(self, qs):
            percentiles.append((quantiles, self, qs))
            return quantiles(self, qs)
        return record_quantiles
    setattr(jobs, entry, record_read)
    for kind in kinds:
        kind.quantiles = recorder(kind.quantiles)
    p = FioJsonParser()
    p.histograms = False
    for d in docs:
        p.document(d, None)
gc.disable()
if part == "parse":
    p = FioJsonParser()
    p.histograms = False
    for d in docs:
        p.document(d, None)
elif part == "quantiles":
    for quantiles, probe, qs in percentiles:
        quantiles(probe, qs)
elif part == "read":
    for raw, prev in reads:
        read(raw, prev)
elif part == "counts":
    for raw, prev in reads:
        list(raw.values())
elif part == "keys":  # (where fio added buckets: the keys are listed then only)
    for raw, prev in reads:
        if prev is None or prev.keys is None or len(raw) != len(prev.keys):
            list(raw)
elif part == "sums":  # (with the counts listed: less "counts")
    for raw, prev in reads:
        if prev is not None and prev.slices is not None:
            probed._sums(list(raw.values()), prev.slices)
elif part == "carried":  # (with the keys listed: less "keys")
    for raw, prev in reads:
        if prev is not None and prev.keys is not None and len(raw) != len(prev.keys):
            probed._carried(list(raw), prev)
"""

PARTS = ("parse", "quantiles", "read", "counts", "keys", "sums", "carried")
#: The parts of the pure-Python path alone (the compiled pass does them in one walk).
PYTHON_PARTS = ("counts", "keys", "sums", "carried")


def count(part: str, code: Path, path: Path, pure: bool) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-c", DRIVER, part, str(path)],
        env={"PYTHONPATH": str(code), "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin",
             "BENCHTUI_PURE_PYTHON": "1" if pure else "0"},
        capture_output=True, text=True, check=True, cwd="/tmp")
    return int(next(line for line in done.stderr.splitlines()
                    if "Collected :" in line).rsplit(":", 1)[1])


def parts(code: Path, path: Path, pure: bool) -> dict[str, float | None]:
    """Millions of instructions of each part (``sums`` and ``carried`` less what they list;
    None: a part of the Python path, with the compiled pass)."""
    count("none", code, path, pure)  # (its bytecode written first: compiling is not counted)
    base = {name: count("none" if name == "parse" else "recorded", code, path, pure)
            for name in ("parse", "recorded")}
    got: dict[str, float | None] = {
        part: None if not pure and part in PYTHON_PARTS else
        (count(part, code, path, pure) - base["parse" if part == "parse" else "recorded"]) / 1e6
        for part in PARTS}
    if pure:
        got["sums"] = (got["sums"] or 0) - (got["counts"] or 0)
        got["carried"] = (got["carried"] or 0) - (got["keys"] or 0)
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, help="a checkout of the code before")
    ap.add_argument("file", nargs="?", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchtui-parts-") as tmp:
        path = args.file
        if path is None:
            path = Path(tmp) / "wide.json"
            path.write_bytes(lzma.decompress(WIDE_CAPTURE.read_bytes()))
        codes = ([("before", args.old.resolve(), True)] if args.old else []) + [
            ("now, pure Python", ROOT, True), ("now, compiled pass", ROOT, False)]
        rows = {name: parts(code, path.resolve(), pure) for name, code, pure in codes}
    names = [name for name, _, _ in codes]
    print("| millions of instructions | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for part in PARTS:
        print(f"| {part} | " + " | ".join("-" if rows[n][part] is None else
                                          f"{rows[n][part]:.1f}" for n in names) + " |")


if __name__ == "__main__":
    main()
