"""The live path's parse cost per document (``benchtui run``, histograms on), counted by
instructions for benchmarks/parse_speed.py ``--instructions``: the code before and now."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDE_CAPTURE = ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz"

#: The live path (``benchtui run``): the 32-job capture's dumps continued as
#: benchmarks/replay_capture.py renders them for ingest_cost.py and fleet_wide.py (every bucket
#: in every dump, counters advancing), fed one document per ``feed_bytes`` to a parser with
#: histograms on, as a host's channel delivers them, its histograms then brought to the
#: session's resolution (4 bits, ``Sinks.deliver``'s ``coarsened``; since round 9 the parser is
#: told it, ``histogram_bits``, and makes them that coarse) and the samples freed; mode "none"
#: only renders them. numpy is imported first in both modes: the parser imports it at its
#: first dump with histograms, once per process (``NUMPY_DRIVER`` counts that apart), and a
#: live session reads thousands.
LIVE_DRIVER = r"""
import gc, lzma, sys
import numpy
sys.path.insert(0, sys.argv[3])
from replay_capture import FioReplay, split_fio_documents
from benchtui.parsers.fio_json import FioJsonParser
mode, path, n = sys.argv[1], sys.argv[2], int(sys.argv[4])
fio = FioReplay(split_fio_documents(lzma.decompress(open(path, "rb").read()).decode())[:-1])
data = [fio.document(1_800_000_000 + k) for k in range(n)]
gc.disable()
if mode != "none":
    p = FioJsonParser()
    p.stream = True
    p.histogram_bits = 4  # (as the session's runner tells it; the code before reads it not)
    for d in data:
        for s in p.feed_bytes(d):
            if s.histogram is not None:
                s.histogram = s.histogram.coarsened(4)
"""


#: Importing numpy, what the parser pays once per process for histograms (less ``pass``).
NUMPY_DRIVER = "import numpy"


def live_table(envs: dict[str, dict[str, str]], docs: int,
               instructions: Callable[[list[str], dict[str, str]], int]) -> list[str]:
    """Millions of instructions per document of the live path, before ("old") and now
    ("new"), ``instructions`` counting a command's."""
    def count(mode: str, code: str) -> int:
        argv = [sys.executable, "-c", LIVE_DRIVER, mode, str(WIDE_CAPTURE),
                str(ROOT / "benchmarks"), str(docs)]
        subprocess.run([*argv[:-1], "1"], env={**envs[code], "PYTHONHASHSEED": "0"},
                       check=True, cwd=envs[code]["BENCH_CWD"])  # (bytecode written first)
        return instructions(argv, envs[code])

    per = {code: (count("parse", code) - count("none", code)) / docs / 1e6
           for code in ("old", "new")}
    numpy_m = (instructions([sys.executable, "-c", NUMPY_DRIVER], envs["new"])
               - instructions([sys.executable, "-c", "pass"], envs["new"])) / 1e6
    return ["### The live path, with histograms (instructions per document)", "",
            f"{docs} documents of the 32-job capture continued as benchmarks/replay_capture.py "
            "renders them for ingest_cost.py and fleet_wide.py (every bucket in every dump: "
            "fio adds none), fed one document per `feed_bytes` to a parser with histograms "
            "on, as a host's channel delivers them, the histograms brought to the session's "
            "4 bits (`Sinks.deliver`'s coarsening; since round 9 made so by the parser); the "
            "count of rendering them taken off.", "",
            "| millions of instructions per document | before | now |", "|---|---:|---:|",
            f"| parse, with histograms at 4 bits | {per['old']:.1f} | {per['new']:.1f} |", "",
            f"Importing numpy (once per process, at the first dump read with histograms; "
            f"imported beforehand in both rows above): {numpy_m:.1f} M instructions.", ""]
