"""Instructions per call of the live path's per-direction bucket work, the code before and
now: the interval read (``_fio_json_bins.interval``; since round 9 ``_fio_json_live.
live_interval``, the compiled pass where it is built), the five default percentiles, the
histogram made and brought to the session's resolution (4 bits: ``Sinks.deliver``'s
``coarsened``; since round 9 the parser makes it that coarse, told ``histogram_bits``) and
freed.

The 32-job capture's dumps continued as benchmarks/replay_capture.py renders them (every
bucket in every dump, ~397 per direction): each direction of the second document read against
the first, 20 times over (1,280 calls), numpy imported beforehand; callgrind's count less the
same process without the calls.

    .venv/bin/python benchmarks/parse_bins.py OLD_CHECKOUT

``BENCHTUI_PURE_PYTHON=1`` in the environment: both codes in pure Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CALLS = 20 * 64
DRIVER = r"""
import gc, lzma, sys
import numpy, orjson
sys.path.insert(0, sys.argv[2])
from replay_capture import FioReplay, split_fio_documents
try:  # (round 9 on: the parser makes the histogram at the session's resolution)
    from benchtui.parsers._fio_json_live import live_interval as interval
    told = True
except ImportError:
    from benchtui.parsers._fio_json_bins import interval
    told = False
fio = FioReplay(split_fio_documents(lzma.decompress(open(sys.argv[3], "rb").read()).decode())[:-1])
docs = [orjson.loads(fio.document(1_800_000_000 + k)) for k in range(2)]
a, b = ([j[op]["clat_ns"]["bins"] for j in d["jobs"] for op in ("read", "write")] for d in docs)
prevs = [interval(r, None)[0] for r in a]
warm = interval(b[0], prevs[0])[1]  # (the coarsening's plan made once, as a live run does)
(warm.histogram(4) if told else warm.histogram()).coarsened(4)
qs = [(0.5, "50"), (0.9, "90"), (0.99, "99"), (0.999, "99.9"), (0.9999, "99.99")]
gc.disable()
if sys.argv[1] == "run":
    for _ in range(20):
        for r, p in zip(b, prevs):
            run = interval(r, p)[1]
            run.quantiles(qs)
            h = run.histogram(4) if told else run.histogram()
            h = h.coarsened(4)  # (the session's: the same histogram when already that coarse)
            del h, run
"""


def count(mode: str, code: Path) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-c", DRIVER, mode, str(ROOT / "benchmarks"),
         str(ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz")],
        # (OpenBLAS's threads, which numpy starts, would add their own instructions)
        env={"PYTHONPATH": str(code), "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin",
             "OPENBLAS_NUM_THREADS": "1",
             "BENCHTUI_PURE_PYTHON": os.environ.get("BENCHTUI_PURE_PYTHON", "0")},
        capture_output=True, text=True, check=True, cwd="/tmp")
    return int(next(line for line in done.stderr.splitlines()
                    if "Collected :" in line).rsplit(":", 1)[1])


def main() -> None:
    for name, code in (("before", Path(sys.argv[1]).resolve()), ("now", ROOT)):
        per = (count("run", code) - count("none", code)) / CALLS
        print(f"{name}: {per / 1000:.0f} k instructions a call")


if __name__ == "__main__":
    main()
