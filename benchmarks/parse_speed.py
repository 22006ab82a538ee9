"""How fast benchtui parses fio json+ status streams: 2 jobs and 32 jobs, beside jq and beside
orjson's own decoding of the same documents, and beside the code before (issue 32).

Inputs, all real fio output:
- 2 jobs: a real 6 s capture made by this run (``--status-interval=1``, 4 KiB random
  read/write), extended to ``--two-seconds`` (default 15 minutes): its status dumps repeated
  with timestamps, runtimes, counters, latency means and histogram bins advanced consistently,
  as if fio had gone on at the same pace; the capture's own final report ends the file.
- 32 jobs: a real 20 s capture of ``numjobs=32`` without ``group_reporting``
  (benchmarks/captures/fio-json-plus-32jobs-20s.json.xz, made by ``--capture-wide``, which
  runs fio again: ``capture_wide`` has the command), as it is: its latency buckets grow at
  almost every dump (the first seconds of a run);
- the same extended to ``--wide-seconds`` (default 300): a steady run, where fio adds buckets
  rarely.

Then, in one run, best of N repetitions each, interleaved:
- ``jq -c '.jobs[].read.iops' FILE > /dev/null``;
- ``benchtui parse --tool fio-json FILE > /dev/null``, this code and the code before
  (``--old REF``, a git commit: extracted with ``git archive``), bytecode cached as an
  installed tool has it;
- in-process: ``orjson.loads`` of each document (split beforehand: the cost of decoding them),
  and ``FioJsonParser.feed_bytes(data)`` + ``finish()`` without histograms (what the CLI does)
  and with (what the live engine does), this code and the code before.

The result is printed as Markdown and written to docs/benchmarks/parse_speed.md.

    .venv/bin/python benchmarks/parse_speed.py [--reps 3] [--old REF] [--two-seconds 900]
        [--wide-seconds 300] [--capture-wide] [--instructions]

``--instructions`` adds the instructions each executes (valgrind's callgrind), a count that
the load of a shared machine does not change.
"""

from __future__ import annotations

import argparse
import copy
import json
import lzma
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
from parse_live import live_table

ROOT = Path(__file__).resolve().parents[1]
OPS = ("read", "write", "trim")
MEASURES = ("clat_ns", "slat_ns", "lat_ns")
SCALARS = ("io_bytes", "io_kbytes", "total_ios", "runtime")
JQ_FILTER = ".jobs[].read.iops"
OUT_MD = ROOT / "docs" / "benchmarks" / "parse_speed.md"
WIDE_CAPTURE = ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz"
#: main before issue 32's parse work: the code the ratios are taken against.
OLD_REF = "ee11167"

#: Run in a fresh process with PYTHONPATH set to the code measured: prints its timings.
DRIVER = r"""
import gc, json, sys, time
import orjson
from benchtui.parsers.fio_json import FioJsonParser
mode, path, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
docs, pos = [], data.find(b"{\n")
while pos >= 0:
    end = data.find(b"\n}\n", pos)
    docs.append(data[pos:end + 2])
    pos = data.find(b"{\n", end + 3)
runs, samples = [], 0
for _ in range(reps):
    gc.collect()
    gc.disable()  # (as the CLI does while it parses)
    w0, c0 = time.perf_counter(), time.process_time()
    if mode == "none":
        pass
    elif mode == "orjson":
        for d in docs:
            orjson.loads(d)
    else:
        p = FioJsonParser()
        p.histograms = mode == "histograms"
        samples = len(p.feed_bytes(data)) + len(p.finish())
        del p
    runs.append((time.perf_counter() - w0, time.process_time() - c0))
    gc.enable()
print(json.dumps({"runs": runs, "docs": len(docs), "samples": samples}))
"""

def capture_two(workdir: Path, seconds: int) -> tuple[str, str]:
    """A real fio json+ stream from this machine: 2 jobs of 4 KiB random read/write."""
    fio = shutil.which("fio")
    if fio is None:
        raise SystemExit("fio is not installed")
    for engine in ("libaio", "psync"):
        cmd = [fio, f"--ioengine={engine}", "--iodepth=16", "--direct=1", "--size=64M",
               "--bs=4k", "--rw=randrw", f"--runtime={seconds}", "--time_based",
               "--status-interval=1", "--output-format=json+",
               "--name=a", f"--filename={workdir / 'a.dat'}",
               "--name=b", f"--filename={workdir / 'b.dat'}"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode == 0 and '"fio version"' in done.stdout:
            return done.stdout, _shown(cmd)
    raise SystemExit(f"fio failed: {done.stderr.strip()[:300]}")


def wide_command(fio: str, data: Path, seconds: int = 20) -> list[str]:
    """fio json+ of 32 jobs without group_reporting (numjobs=32), each held to 200 IOPS so
    that the capture costs little: ~700 KB and ~28,000 lines per document."""
    return [fio, "--name=wide", f"--filename={data}", "--size=32M", "--bs=4k", "--rw=randrw",
            "--ioengine=psync", "--direct=1", "--numjobs=32", "--rate_iops=200",
            f"--runtime={seconds}", "--time_based", "--status-interval=1",
            "--output-format=json+"]


def capture_wide(workdir: Path, seconds: int = 20) -> tuple[str, str]:
    """A real 32-job fio json+ stream from this machine (``wide_command``)."""
    fio = shutil.which("fio")
    if fio is None:
        raise SystemExit("fio is not installed")
    cmd = wide_command(fio, workdir / "wide.dat", seconds)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0 or '"fio version"' not in done.stdout:
        raise SystemExit(f"fio failed: {done.stderr.strip()[:300]}")
    return done.stdout, _shown(cmd)


def _shown(cmd: list[str]) -> str:
    return " ".join(c if not c.startswith("--filename=") else "--filename=…" for c in cmd)


def split_docs(text: str) -> list[dict[str, Any]]:
    docs, pos = [], text.find("{\n")
    while pos >= 0:
        end = text.find("\n}\n", pos)
        if end < 0:
            break
        docs.append(orjson.loads(text[pos:end + 2]))
        pos = text.find("{\n", end + 3)
    return docs


def _increment(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """What changed from dump a to dump b (same jobs): counters, mean sums, bins."""
    jobs = []
    for ja, jb in zip(a["jobs"], b["jobs"], strict=True):
        j: dict[str, Any] = {"job_runtime": jb["job_runtime"] - ja["job_runtime"]}
        for op in OPS:
            da, db = ja[op], jb[op]
            d: dict[str, Any] = {k: db[k] - da[k] for k in SCALARS}
            for m in MEASURES:
                ma, mb = da[m], db[m]
                bins_a = ma.get("bins", {})
                d[m] = {"N": mb["N"] - ma["N"], "sum": mb["mean"] * mb["N"] - ma["mean"] * ma["N"],
                        "bins": {k: v - bins_a.get(k, 0) for k, v in mb.get("bins", {}).items()
                                 if v != bins_a.get(k, 0)}}
            j[op] = d
        jobs.append(j)
    return {"ms": b["timestamp_ms"] - a["timestamp_ms"], "jobs": jobs}


def _advance(state: dict[str, Any], inc: dict[str, Any], start_ms: int) -> None:
    state["timestamp_ms"] += inc["ms"]
    state["timestamp"] = state["timestamp_ms"] // 1000
    state["time"] = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(state["timestamp"]))
    for job, ij in zip(state["jobs"], inc["jobs"], strict=True):
        job["job_runtime"] += ij["job_runtime"]
        job["elapsed"] = (state["timestamp_ms"] - start_ms + 999) // 1000
        for op in OPS:
            d, idir = job[op], ij[op]
            for k in SCALARS:
                d[k] += idir[k]
            for m in MEASURES:
                lat, il = d[m], idir[m]
                total = lat["mean"] * lat["N"] + il["sum"]
                lat["N"] += il["N"]
                lat["mean"] = round(total / lat["N"], 6) if lat["N"] else 0.0
                if il["bins"]:
                    bins = lat.setdefault("bins", {})
                    grew = False
                    for k, v in il["bins"].items():
                        if k not in bins:
                            grew = True
                        bins[k] = bins.get(k, 0) + v
                    if grew:
                        lat["bins"] = dict(sorted(bins.items(), key=lambda kv: int(kv[0])))


def _fio_text(doc: dict[str, Any]) -> bytes:
    """fio's pretty-printed layout: 2-space indent, ``"key" : value``."""
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).replace(b'": ', b'" : ') + b"\n"


def extend(text: str, seconds: int, out: Path) -> tuple[int, int]:
    """Write a ``seconds``-long stream built from the capture; (documents, bytes)."""
    docs = split_docs(text)
    status, final = docs[:-1], docs[-1]
    if len(status) < 3:
        raise SystemExit("the capture needs at least 3 status dumps and a final report")
    incs = [_increment(a, b) for a, b in pairwise(status)]
    tail = _increment(status[-1], final)
    first = status[0]
    start_ms = first["timestamp_ms"] - max(j["elapsed"] for j in first["jobs"]) * 1000
    state = copy.deepcopy(first)
    n = 0
    with out.open("wb") as f:
        f.write(_fio_text(state))
        n += 1
        for s in range(seconds - 1):
            _advance(state, incs[s % len(incs)], start_ms)
            template = status[1 + s % len(incs)]
            for job, tj in zip(state["jobs"], template["jobs"], strict=True):
                for op in OPS:  # fio's cumulative iops/bw/percentiles: as in the capture
                    for k in ("bw_bytes", "bw", "iops"):
                        job[op][k] = tj[op][k]
            f.write(_fio_text(state))
            n += 1
        _advance(state, tail, start_ms)
        f.write(_fio_text(state))
        n += 1
    return n, out.stat().st_size


def timed_command(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the child) of a command, output dropped.
    Run from the temporary directory: Python puts the working directory before PYTHONPATH,
    and the project's root would shadow the code before."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "w") as null:
        subprocess.run(argv, stdout=null, check=True, env=env, cwd=env["BENCH_CWD"])
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def in_process(mode: str, path: Path, env: dict[str, str]) -> tuple[float, float, int, int]:
    """(wall s, CPU s, documents, samples) of one in-process run (a fresh process)."""
    done = subprocess.run([sys.executable, "-c", DRIVER, mode, str(path), "1"], env=env,
                          capture_output=True, text=True, check=True, cwd=env["BENCH_CWD"])
    out = json.loads(done.stdout)
    wall, cpu = out["runs"][0]
    return wall, cpu, out["docs"], out["samples"]


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """Instructions a command executes (valgrind's callgrind): a count that load does not
    change, where timings on a shared machine vary."""
    # (one OpenBLAS thread: those numpy starts would add their own instructions, as many as
    # the scheduler gives them)
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *argv], env={**env, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"},
                          capture_output=True,
                          text=True, check=True, cwd=env["BENCH_CWD"])
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise SystemExit(f"no count from valgrind: {done.stderr[-300:]}")


def instruction_table(inputs: list[tuple[str, Path]], envs: dict[str, dict[str, str]]
                      ) -> list[str]:
    """Millions of instructions: jq, the CLI, and in-process decoding and parsing."""
    lines = ["### Instructions executed (valgrind, independent of load)", "",
             "Millions of instructions. In-process rows: the driver's count less its count "
             "when it only reads and splits the file (Python's start-up, reading).", "",
             "| input | jq | CLI before | CLI now | orjson decoding | parse before "
             "| parse now | with histograms before | now | jq / CLI before | jq / CLI now "
             "| parse before / orjson | parse now / orjson |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for title, path in inputs:
        cli = [sys.executable, "-m", "benchtui", "parse", "--tool", "fio-json", str(path)]

        def driver(mode: str, code: str, path: Path = path) -> int:
            return instructions([sys.executable, "-c", DRIVER, mode, str(path), "1"],
                                envs[code])

        base = {code: driver("none", code) for code in ("old", "new")}
        row = {"jq": instructions(["jq", "-c", JQ_FILTER, str(path)], envs["new"]),
               "cli_old": instructions(cli, envs["old"]),
               "cli_new": instructions(cli, envs["new"]),
               "orjson": driver("orjson", "new") - base["new"]}
        for code in ("old", "new"):
            row[f"parse_{code}"] = driver("plain", code) - base[code]
            row[f"hist_{code}"] = driver("histograms", code) - base[code]
        keys = ("jq", "cli_old", "cli_new", "orjson", "parse_old", "parse_new", "hist_old",
                "hist_new")
        lines.append(f"| {title} | " + " | ".join(f"{row[k] / 1e6:.0f}" for k in keys)
                     + f" | {row['jq'] / row['cli_old']:.2f}x | {row['jq'] / row['cli_new']:.2f}x"
                     f" | {row['parse_old'] / row['orjson']:.2f} "
                     f"| {row['parse_new'] / row['orjson']:.2f} |")
    return [*lines, ""]


def machine() -> dict[str, str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    jq = subprocess.run(["jq", "--version"], capture_output=True, text=True, check=False)
    fio = shutil.which("fio")
    fio_v = (subprocess.run([fio, "--version"], capture_output=True, text=True, check=False)
             .stdout.strip() if fio else "-")
    return {"nproc": str(os.cpu_count()), "CPU": cpu,
            "Python": platform.python_version(), "jq": jq.stdout.strip(),
            "fio": fio_v, "orjson": orjson.__version__, "OS": platform.platform()}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


ROWS = (
    ("jq", "`jq -c '.jobs[].read.iops' FILE > /dev/null`"),
    ("cli_old", "`benchtui parse --tool fio-json FILE > /dev/null`, code before"),
    ("cli_new", "`benchtui parse --tool fio-json FILE > /dev/null`, this code"),
    ("orjson", "in-process: `orjson.loads` of each document (decoding only)"),
    ("parse_old", "in-process: `FioJsonParser().feed_bytes(data)` + `finish()`, code before"),
    ("parse_new", "in-process: `FioJsonParser().feed_bytes(data)` + `finish()`, this code"),
    ("hist_old", "in-process, with histograms (the live engine's setting), code before"),
    ("hist_new", "in-process, with histograms (the live engine's setting), this code"),
)


def measure(path: Path, reps: int, envs: dict[str, dict[str, str]]) -> dict[str, Any]:
    cli = [sys.executable, "-m", "benchtui", "parse", "--tool", "fio-json", str(path)]
    for code in ("old", "new"):  # (bytecode written once, as an installed tool has it)
        timed_command(cli, envs[code])
    results: dict[str, list[tuple[float, float]]] = {k: [] for k, _ in ROWS}
    docs = samples = 0
    for _ in range(reps):  # interleaved, so that load from other processes hits all
        results["jq"].append(timed_command(["jq", "-c", JQ_FILTER, str(path)], envs["new"]))
        for code in ("old", "new"):
            results[f"cli_{code}"].append(timed_command(cli, envs[code]))
        w, c, docs, _ = in_process("orjson", path, envs["new"])
        results["orjson"].append((w, c))
        for code in ("old", "new"):
            for mode, key in (("plain", "parse"), ("histograms", "hist")):
                w, c, _, n = in_process(mode, path, envs[code])
                results[f"{key}_{code}"].append((w, c))
                if key == "parse" and code == "new":
                    samples = n
    best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in results.items()}
    return {"results": results, "best": best, "docs": docs, "samples": samples,
            "bytes": path.stat().st_size}


def table(title: str, what: str, m: dict[str, Any]) -> list[str]:
    best, docs, mb = m["best"], m["docs"], m["bytes"] / 1e6
    jq_w, jq_c = best["jq"]
    oj_w, oj_c = best["orjson"]
    lines = [f"### {title}", "", what, "",
             f"{docs} documents, {mb:.1f} MB ({mb * 1000 / docs:.0f} kB per document); "
             f"the parser makes {m['samples']} samples of it.", "",
             "| command | wall s | ms per document | vs jq (wall) | vs jq (CPU) "
             "| x orjson's decoding (wall) | x orjson's (CPU) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for key, label in ROWS:
        w, c = best[key]
        lines.append(f"| {label} | {w:.3f} | {w / docs * 1000:.2f} | {jq_w / w:.2f}x "
                     f"| {jq_c / c:.2f}x | {w / oj_w:.2f} | {c / oj_c:.2f} |")
    lines += ["", "All runs (wall s / CPU s): " + "; ".join(
        f"{k} " + ", ".join(f"{w:.3f}/{c:.3f}" for w, c in v)
        for k, v in m["results"].items()) + ".", ""]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--old", default=OLD_REF, help="the code before: a git commit")
    ap.add_argument("--two-seconds", type=int, default=900,
                    help="length of the 2-job stream to build (s)")
    ap.add_argument("--wide-seconds", type=int, default=300,
                    help="length of the extended 32-job stream to build (s; 0: none)")
    ap.add_argument("--capture-wide", action="store_true",
                    help="capture the 32-job stream again with fio (20 s) instead of the "
                         "stored one, and store it")
    ap.add_argument("--instructions", action="store_true",
                    help="also count the instructions executed (valgrind; slow: the 32-job "
                         "capture and a 2-job stream of --count-seconds)")
    ap.add_argument("--count-seconds", type=int, default=60,
                    help="the 2-job stream's length for --instructions (900: the issue's "
                         "15 minutes, ~15 more minutes under valgrind)")
    ap.add_argument("--live-docs", type=int, default=12,
                    help="documents of the live path to count with --instructions (0: none)")
    ap.add_argument("--out", type=Path, default=OUT_MD)
    args = ap.parse_args()
    if shutil.which("jq") is None:
        raise SystemExit("jq is not installed")
    load_before = loadavg()
    with tempfile.TemporaryDirectory(prefix="benchtui-speed-") as tmp:
        work = Path(tmp)
        old_root = work / "old"
        old_root.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.old],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_root)], input=archive, check=True)
        # The compiled parts of the code before, built in place as scripts/setup builds this
        # checkout's (a git archive has their C sources only)
        if (old_root / "setup.py").exists():
            subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                           cwd=old_root, capture_output=True, check=True)
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        envs = {code: {**base_env, "PYTHONPATH": str(root), "BENCH_CWD": tmp,
                       "PYTHONPYCACHEPREFIX": str(work / f"pyc-{code}")}
                for code, root in (("old", old_root), ("new", ROOT))}
        for code, root in (("old", old_root), ("new", ROOT)):  # each runs its own code
            where = subprocess.run(
                [sys.executable, "-c", "import benchtui; print(benchtui.__file__)"],
                env=envs[code], cwd=tmp, capture_output=True, text=True, check=True).stdout
            if not where.startswith(str(root)):
                raise SystemExit(f"the {code} code is not the one run: {where.strip()}")

        two_text, two_cmd = capture_two(work, 6)
        for name in ("a.dat", "b.dat"):
            (work / name).unlink(missing_ok=True)
        two = work / "fio-2jobs.json"
        extend(two_text, args.two_seconds, two)

        if args.capture_wide:
            wide_text, wide_cmd = capture_wide(work)
            (work / "wide.dat").unlink(missing_ok=True)
            WIDE_CAPTURE.write_bytes(lzma.compress(wide_text.encode(), preset=9))
        else:
            wide_text = lzma.decompress(WIDE_CAPTURE.read_bytes()).decode()
            wide_cmd = _shown(wide_command("fio", Path("wide.dat")))
        wide = work / "fio-32jobs-20s.json"
        wide.write_text(wide_text)
        inputs = [
            ("2 jobs, 15 min" if args.two_seconds == 900 else f"2 jobs, {args.two_seconds} s",
             f"Built from a real 6 s capture made by this run (`{two_cmd}`): its dumps repeated "
             f"for {args.two_seconds} s with counters, means and bins advanced consistently, "
             "then its final report.", two),
            ("32 jobs, the real 20 s capture",
             "benchmarks/captures/fio-json-plus-32jobs-20s.json.xz, as fio wrote it "
             f"(`{wide_cmd}`): fio adds latency buckets at almost every dump.", wide),
        ]
        if args.wide_seconds:
            wide_ext = work / "fio-32jobs-ext.json"
            extend(wide_text, args.wide_seconds, wide_ext)
            inputs.append((f"32 jobs, {args.wide_seconds} s (steady)",
                           f"The 20 s capture's dumps repeated for {args.wide_seconds} s as "
                           "above: after the first 20 dumps, no bucket is added.", wide_ext))
        measured = [(title, what, measure(path, args.reps, envs))
                    for title, what, path in inputs]
        counted: list[str] = []
        if args.instructions:
            for code in ("old", "new"):  # (bytecode written beforehand)
                in_process("none", wide, envs[code])
            short = work / "fio-2jobs-counted.json"
            extend(two_text, args.count_seconds, short)
            counted = instruction_table([(f"2 jobs, {args.count_seconds} s", short),
                                         (inputs[1][0], wide)], envs)
            if args.live_docs:
                counted += live_table(envs, args.live_docs, instructions)
    load_after = loadavg()
    info = machine()
    lines = [
        "# fio json+ parse speed",
        "",
        "By benchmarks/parse_speed.py: `benchtui parse` of fio `--output-format=json+ "
        "--status-interval=1` streams beside `jq` (a C program reading the same JSON) and "
        "beside orjson's own decoding of the same documents (what decoding them costs at "
        f"least), this code and the code before (`{args.old}`) side by side in the same run. "
        f"Best of {args.reps} runs each, interleaved; CPU = user + system time. 'x orjson' "
        "divides by orjson's decoding: within 2x is the target (issue 32), and so is 3x "
        "faster than jq. The CLI rows include Python's start-up and writing the JSON Lines; "
        "the in-process rows do not.",
        "",
        f"Load average (1, 5, 15 min) before: {load_before}; after: {load_after}. "
        "Machine: " + ", ".join(f"{k} {v}" for k, v in info.items()) + ".",
        "",
    ]
    for title, what, m in measured:
        lines += table(title, what, m)
    lines += counted
    lines += [
        "### Where the time goes",
        "",
        "Documents are found on the bytes and decoded whole by orjson (finding them costs "
        "~3% of decoding them: 12 M of 410 M instructions on the 32-job capture). What "
        "decoding leaves to the parser is, per job and dump, reading its counters and making "
        "its samples (per direction: IOPS, bandwidth, mean latencies, 5 percentiles; ~21 per "
        "job with reads and writes), and its latency buckets (~370 per direction in the "
        "32-job capture, ~300-1000 in the 2-job ones). Without histograms (`benchtui parse`) "
        "every interval's percentiles come from block sums (parsers/_fio_json_probed.py): a "
        "direction's counts are summed per block of about the square root of their number "
        "(slices made once per cut, C-level `sum`), the blocks carried from dump to dump by "
        "their last bucket (a C-level `list.index`), and only the blocks holding a "
        "percentile are subtracted bucket by bucket (one block per run of ascending "
        "quantiles). With histograms (the live engine) every bucket is subtracted from the "
        "previous dump's in C-level passes, and where fio added buckets (92% of the "
        "directions' dumps of the 20 s capture) one dictionary lookup per bucket finds them "
        "(a Python comprehension: `filterfalse`, a set difference and `map(dict.get)` were "
        "measured and cost more). Measured by instructions on the 32-job capture (callgrind "
        "counting only inside the stage, over documents decoded beforehand): decoding and "
        "finding ~410 M; reading the buckets ~230 M (their values listed ~26 M, block sums "
        "~65 M, keys listed where fio added buckets ~26 M and the blocks carried ~35 M, the "
        "rest per direction); the percentiles ~135 M (the blocks holding them, ~19 buckets "
        "each, ~3.3 per direction, at ~1,000 instructions per bucket: two slices, a "
        "subtraction, running sums, a sort that checks them); the jobs' counters ~57 M "
        "(`snapshot` ~25 M); the samples ~50 M (~2,400 instructions to make one `Sample`). "
        "Each step of a C-level pass over Python ints costs 70-400 instructions (listing "
        "values ~72, `sum` ~58, a subtraction through `map` ~400, running sums ~180-316), "
        "against ~980 for orjson to decode a bucket's line: a few passes per bucket are as "
        "much as decoding it, which is why the parse stays above 2x orjson's decoding on "
        "the 32-job capture. The CLI rows add Python's start-up and imports (~250 M with "
        "orjson's own import ~64 M and the site's ~60 M: `benchtui parse` builds only its "
        "own options, with `--tool` only its parser is imported, and the patterns for "
        "flattened reports are compiled only when a long line is met) and writing the JSON "
        "Lines (~9 k instructions per sample: ~4 k making its dict, ~4 k orjson's "
        "serialising it).",
        "",
        "Reproduce from the project's root (fio and jq installed; a few minutes):",
        "",
        "```sh",
        f".venv/bin/python benchmarks/parse_speed.py --reps {args.reps} --old {args.old} "
        f"--two-seconds {args.two_seconds} --wide-seconds {args.wide_seconds}"
        + (" --instructions" if args.instructions else "")
        + (f" --count-seconds {args.count_seconds}" if args.count_seconds != 60 else ""),
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
