"""Real ``rados bench`` and ``rbd bench`` against a real single-node Ceph (tests/ceph.py, the
``single_node_ceph`` fixture of tests/conftest_ceph.py), parsed by benchtui's parsers and run
through the session engine.

Each output is checked against the numbers the tool itself printed: per-second rows (every
second of the run, values as printed, IOPS x size = bandwidth), the summary (every printed
figure), and rbd bench's rounded ``41 MiB/s`` bandwidths against the exact bytes/s benchtui
derives. The same checks run, without Ceph, over real Ceph 16 outputs saved in
tests/fixtures/ceph/real-ceph16-*.txt (how they were made: the README there).
"""

from __future__ import annotations

import itertools
import math
import re
import subprocess
from pathlib import Path

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers import registry
from benchtui.parsers.rados_bench import RadosBenchParser
from benchtui.parsers.rbd_bench import RbdBenchParser
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from tests.ceph import POOL, RBD_IMAGE, SingleNodeCeph
from tests.helpers import check_invariants, fixture_text, one, pick

MIB = 1048576.0
#: rbd bench's byte units (Ceph's ``byte_u_t``: binary multiples).
RBD_UNITS = {"B": 1.0, "KiB": 1024.0, "MiB": MIB, "GiB": 1024.0**3, "TiB": 1024.0**4}
RADOS_SECONDS = 5
RBD_IO_SIZE = 4096
RBD_IO_TYPES = ("write", "read", "rw")
#: The operation label of each mode / io type.
RADOS_OP = {"write": "write", "seq": "read", "rand": "read"}
RBD_OP = {"write": "write", "read": "read", "rw": "total"}

_RADOS_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_RBD_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+) ([KMGT]?i?B)/s\s*$")
_RBD_TOTAL = re.compile(r"^elapsed: (\d+)\s+ops: (\d+)\s+ops/sec: ([\d.]+)\s+"
                        r"bytes/sec: ([\d.]+) ([KMGT]?i?B)/s$")
_RBD_SPLIT = re.compile(r"^(read|write)_ops: (\d+)\s+\w+_ops/sec: ([\d.]+)\s+"
                        r"\w+_bytes/sec: ([\d.]+) ([KMGT]?i?B)/s$")
#: rados bench summary lines -> (metric, multiplier); the ones not listed give no sample.
_RADOS_SUMMARY = {
    "Bandwidth (MB/sec)": ("bandwidth_bytes", MIB),
    "Stddev Bandwidth": ("bandwidth_stddev_bytes", MIB),
    "Max bandwidth (MB/sec)": ("bandwidth_max_bytes", MIB),
    "Min bandwidth (MB/sec)": ("bandwidth_min_bytes", MIB),
    "Stddev IOPS": ("iops_stddev", 1.0), "Max IOPS": ("iops_max", 1.0),
    "Min IOPS": ("iops_min", 1.0),
    "Average Latency(s)": ("latency_mean_seconds", 1.0),
    "Stddev Latency(s)": ("latency_stddev_seconds", 1.0),
    "Max latency(s)": ("latency_max_seconds", 1.0),
    "Min latency(s)": ("latency_min_seconds", 1.0),
}
_RADOS_SUMMARY_COUNTS = ("Total time run", "Total writes made", "Total reads made", "Write size",
                         "Read size", "Object size", "Average IOPS")


# --- checks shared by the live runs and the saved outputs -----------------------------------

def parse(parser: RadosBenchParser | RbdBenchParser, text: str) -> list[Sample]:
    samples = parser.feed_text(text) + parser.finish()
    check_invariants(samples)
    assert not parser.warnings, parser.warnings
    assert parser.unknown_lines == 0
    return samples


def by_elapsed(samples: list[Sample], metric: str, **labels: str) -> dict[float, float]:
    """The per-second rows (not rados bench's partial tail after its last row)."""
    out: dict[float, float] = {}
    for s in pick(samples, metric, INTERVAL, **labels):
        if s.duration is not None:
            continue
        assert s.elapsed is not None and s.elapsed not in out, s
        out[s.elapsed] = s.value
    return out


def check_rados_output(text: str, mode: str) -> list[Sample]:
    """What ``rados bench`` printed (stdout, no command line) against the parsed samples.
    The parser gets no hint (like the session engine's): it infers the operation."""
    samples = parse(RadosBenchParser(host="ceph", source=mode), text)
    op = RADOS_OP[mode]
    rows = [m.groups() for m in map(_RADOS_ROW.match, text.splitlines()) if m]
    assert rows and rows[0][0] == "0"
    rows = rows[1:]
    # ops_in_flight (no op) comes from the per-second rows: a seq read of few objects can end
    # within its first second (the CI's 221 objects in 0.8 s), leaving only its tail and summary.
    assert {s.labels.get("op") for s in samples} == ({op, None} if rows else {op})
    printed = {k.strip(): v.strip() for k, _, v in
               (line.partition(":") for line in text.splitlines()
                if line.split(":")[0].strip() in (*_RADOS_SUMMARY, *_RADOS_SUMMARY_COUNTS))}
    run_time = float(printed["Total time run"])
    object_size = float(printed["Object size"])
    # A row every second of the run: 1, 2, ... up to the run time.
    iops = by_elapsed(samples, "iops", op=op)
    bandwidth = by_elapsed(samples, "bandwidth_bytes", op=op)
    seconds = [float(r[0]) for r in rows]
    assert seconds == [float(s) for s in range(1, len(rows) + 1)]
    assert sorted(iops) == sorted(bandwidth) == seconds
    # (the status thread may see the run done just before printing the last second)
    assert math.floor(run_time) - 1 <= len(rows) <= math.ceil(run_time), (len(rows), run_time)
    assert sorted(by_elapsed(samples, "ops_in_flight")) == seconds
    last = by_elapsed(samples, "latency_last_seconds", op=op)
    previous_finished = 0
    for sec, _cur, _started, finished, _avg, cur_mb, last_lat, _avg_lat in rows:
        when = float(sec)
        assert bandwidth[when] == pytest.approx(float(cur_mb) * MIB, rel=1e-12)
        # IOPS x object size is the bandwidth (cur MB/s keeps 6 significant digits).
        assert iops[when] * object_size == pytest.approx(bandwidth[when], rel=1e-5, abs=1.0)
        if int(finished) > previous_finished:
            assert bandwidth[when] > 0 and iops[when] > 0
        if last_lat != "-":
            assert last[when] == float(last_lat)
        else:
            assert when not in last
        previous_finished = int(finished)
    assert max(bandwidth.values(), default=0.0) > 0 or not rows
    # Every printed summary figure is a summary sample with that value.
    summary = pick(samples, "iops", SUMMARY, op=op)
    assert len(summary) == 1 and summary[0].elapsed == run_time
    made = float(printed.get("Total writes made") or printed["Total reads made"])
    assert summary[0].value == pytest.approx(made / run_time)
    assert math.floor(summary[0].value) == int(printed["Average IOPS"])
    # The operations completed after the last row: a partial interval up to the run's end.
    tail = [s for s in samples if s.kind == INTERVAL and s.duration is not None]
    last_sec, last_finished = (float(rows[-1][0]), int(rows[-1][3])) if rows else (0.0, 0)
    if made > last_finished:
        span = run_time - last_sec
        assert [(s.metric, s.elapsed) for s in tail] == [
            ("iops", run_time), ("bandwidth_bytes", run_time)]
        assert tail[0].duration == pytest.approx(span)
        assert tail[0].value == pytest.approx((made - last_finished) / span)
    else:
        assert not tail
    for key, (metric, mult) in _RADOS_SUMMARY.items():
        found = pick(samples, metric, SUMMARY, op=op)
        if key in printed:
            assert len(found) == 1 and found[0].value == pytest.approx(float(printed[key]) * mult,
                                                                       rel=1e-12), key
        else:
            assert not found, key
    return samples


def rbd_bytes(number: str, unit: str) -> tuple[float, float]:
    """A printed ``41 MiB/s`` as bytes/s, and how far the exact figure may be from it (the
    printed one is rounded to the digits shown, from a value truncated to whole bytes)."""
    mult = RBD_UNITS[unit]
    decimals = len(number.partition(".")[2])
    return float(number) * mult, 0.5 * 10.0**-decimals * mult + 1.0


def check_rbd_output(text: str, io_type: str) -> list[Sample]:
    """What ``rbd bench`` printed against the parsed samples (no hint given to the parser)."""
    samples = parse(RbdBenchParser(host="ceph", source=io_type), text)
    op = RBD_OP[io_type]
    lines = text.splitlines()
    kind = "readwrite read:write=50:50" if io_type == "rw" else io_type
    assert lines[0].startswith(f"bench  type {kind} io_size {RBD_IO_SIZE} "), lines[0]
    rows = [m.groups() for m in map(_RBD_ROW.match, lines) if m]
    iops = by_elapsed(samples, "iops", op=op)
    bandwidth = by_elapsed(samples, "bandwidth_bytes", op=op)
    assert sorted(iops) == sorted(bandwidth) == [float(r[0]) for r in rows]
    # rbd bench prints a row at the first completion in a new whole second: after a stall of
    # over a second (a loaded machine) a second is skipped, so rows only increase.
    seconds = [int(r[0]) for r in rows]
    assert all(a < b for a, b in itertools.pairwise([0, *seconds]))
    for sec, _ops, ops_rate, number, unit in rows:
        assert iops[float(sec)] == float(ops_rate)
        assert bandwidth[float(sec)] == pytest.approx(float(ops_rate) * RBD_IO_SIZE, rel=1e-12)
        shown, slack = rbd_bytes(number, unit)
        assert abs(bandwidth[float(sec)] - shown) <= slack, (sec, number, unit)
    totals = [m.groups() for m in map(_RBD_TOTAL.match, lines) if m]
    assert len(totals) == 1
    elapsed_whole, ops, ops_rate, number, unit = totals[0]
    total_iops = pick(samples, "iops", SUMMARY, op=op)
    assert len(total_iops) == 1 and total_iops[0].value == float(ops_rate)
    run_time = total_iops[0].elapsed
    assert run_time is not None and int(run_time) == int(elapsed_whole)
    assert run_time * float(ops_rate) == pytest.approx(int(ops), rel=1e-5)
    total_bw = one(samples, "bandwidth_bytes", SUMMARY, op=op)
    shown, slack = rbd_bytes(number, unit)
    assert total_bw == pytest.approx(float(ops_rate) * RBD_IO_SIZE)
    assert abs(total_bw - shown) <= slack
    splits = [m.groups() for m in map(_RBD_SPLIT.match, lines) if m]
    assert len(splits) == (2 if io_type == "rw" else 0)
    for split_op, split_ops, split_rate, number, unit in splits:
        assert one(samples, "iops", SUMMARY, op=split_op) == float(split_rate)
        split_bw = one(samples, "bandwidth_bytes", SUMMARY, op=split_op)
        shown, slack = rbd_bytes(number, unit)
        assert abs(split_bw - shown) <= slack, (split_op, number, unit)
        assert run_time * float(split_rate) == pytest.approx(int(split_ops), rel=1e-5)
    if splits:
        assert sum(int(s[1]) for s in splits) == int(ops)
    return samples


# --- saved real outputs (no Ceph needed) -----------------------------------------------------

@pytest.mark.parametrize("mode", ["write", "seq", "rand"])
def test_saved_ceph16_rados_bench_output(mode: str) -> None:
    samples = check_rados_output(fixture_text(f"ceph/real-ceph16-rados-{mode}.txt"), mode)
    assert len(by_elapsed(samples, "iops", op=RADOS_OP[mode])) >= 6


def test_saved_ceph16_rados_seq_that_ends_within_its_first_second() -> None:
    """A seq read of the 103 objects a 1 s write left: read in 0.6 s, its only row the one at
    0 (printed as it starts, 16 reads in flight). Its one interval is its tail: the whole
    run, 103 reads over 0.597765 s, 103 x 4 MiB bytes over it; no per-second row, so no
    ops_in_flight."""
    text = fixture_text("ceph/real-ceph16-rados-seq-short.txt")
    samples = check_rados_output(text, "seq")
    assert not by_elapsed(samples, "iops", op="read")
    tail = [(s.metric, s.value, s.elapsed, s.duration) for s in samples
            if s.kind == INTERVAL]
    assert tail == [("iops", pytest.approx(103 / 0.597765), 0.597765, 0.597765),
                    ("bandwidth_bytes", pytest.approx(103 * 4 * MIB / 0.597765), 0.597765,
                     0.597765)]
    assert one(samples, "iops", SUMMARY, op="read") == pytest.approx(103 / 0.597765)


@pytest.mark.parametrize("io_type", RBD_IO_TYPES)
def test_saved_ceph16_rbd_bench_output(io_type: str) -> None:
    samples = check_rbd_output(fixture_text(f"ceph/real-ceph16-rbd-{io_type}.txt"), io_type)
    assert len(by_elapsed(samples, "iops", op=RBD_OP[io_type])) >= 7


def test_saved_ceph16_outputs_are_detected() -> None:
    for name, expected in (("rados-write", "rados-bench"), ("rados-seq", "rados-bench"),
                           ("rbd-read", "rbd-bench"), ("rbd-rw", "rbd-bench")):
        head = fixture_text(f"ceph/real-ceph16-{name}.txt")[:4096]
        assert [cls.name for cls in registry.detect(head)] == [expected], name


# --- live runs ------------------------------------------------------------------------------

def run_client(ceph: SingleNodeCeph, program: str, *args: str, timeout: int = 60) -> str:
    done = subprocess.run(["timeout", str(timeout), *ceph.client_argv(program, *args)],
                          capture_output=True, text=True, timeout=timeout + 5, check=False)
    assert done.returncode == 0, f"{program} {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def rados_outputs(single_node_ceph: SingleNodeCeph) -> dict[str, str]:
    """rados bench write (objects kept), then seq and rand over them: mode -> stdout."""
    out = {}
    for mode in ("write", "seq", "rand"):
        extra = ("--no-cleanup",) if mode == "write" else ()
        out[mode] = run_client(single_node_ceph, "rados", "bench", "-p", POOL,
                               str(RADOS_SECONDS), mode, *extra)
    return out


@pytest.fixture(scope="module")
def rbd_outputs(single_node_ceph: SingleNodeCeph) -> dict[str, str]:
    """rbd bench 4K x 64M: write (random offsets: sequential 4K writes are merged by the rbd
    cache and end within a second, printing no row), read, rw. io type -> stdout."""
    out = {}
    for io_type in RBD_IO_TYPES:
        pattern = ("--io-pattern", "rand") if io_type == "write" else ()
        out[io_type] = run_client(single_node_ceph, "rbd", "bench", "--io-type", io_type,
                                  "--io-size", "4K", "--io-total", "64M", *pattern, RBD_IMAGE)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["write", "seq", "rand"])
def test_real_rados_bench(rados_outputs: dict[str, str], mode: str) -> None:
    check_rados_output(rados_outputs[mode], mode)


@pytest.mark.slow
@pytest.mark.parametrize("io_type", RBD_IO_TYPES)
def test_real_rbd_bench(rbd_outputs: dict[str, str], io_type: str) -> None:
    check_rbd_output(rbd_outputs[io_type], io_type)


@pytest.mark.slow
async def test_session_runs_rados_and_rbd_bench_steps(single_node_ceph: SingleNodeCeph,
                                                      tmp_path: Path) -> None:
    """A plan on the local host: rados bench with -c/--keyring in its args, rbd bench with
    the conf given through CEPH_CONF. Samples arrive live, labelled with the step."""
    ceph = single_node_ceph
    # the module's rados bench runs kept their objects (seq and rand read them): remove them,
    # or on a fast machine this step's writes fill the OSD's 10 GiB (ENOSPC aborts it)
    run_client(ceph, "rados", "-p", POOL, "cleanup")
    plan_file = tmp_path / "ceph.toml"
    plan_file.write_text(
        f'[session]\nname = "ceph-real"\nremote_dir = "{tmp_path / "remote"}"\n\n'
        '[hosts.here]\nlocal = true\n\n'
        '[[step]]\nname = "rados-write"\ntool = "rados_bench"\nhosts = "here"\n'
        f'args = "-c {ceph.conf} --keyring {ceph.keyring} -p {POOL} {RADOS_SECONDS} write"\n\n'
        '[[step]]\nname = "rbd-read"\ntool = "rbd_bench"\nhosts = "here"\n'
        f'args = "--io-type read --io-size 4K --io-total 16M {RBD_IMAGE}"\n'
        f'env = {{ CEPH_CONF = "{ceph.conf}" }}\n')
    samples: list[Sample] = []
    result = await Session(load_plan(plan_file), on_samples=samples.extend).run()
    assert result.ok, result.failures
    check_invariants(samples)
    rados = [s for s in samples if s.tool == "rados_bench"]
    assert rados and all(s.labels["step"] == "rados-write" and s.host == "here" for s in rados)
    rows = [s for s in pick(rados, "iops", INTERVAL, op="write") if s.duration is None]
    assert [s.elapsed for s in rows] == [float(n) for n in range(1, len(rows) + 1)]
    assert RADOS_SECONDS - 1 <= len(rows) <= RADOS_SECONDS + 1
    # Live: each row was received when rados bench printed it, about a second apart (not all
    # at the end; half a second apart at least, to allow for a loaded machine).
    times = [s.t or 0.0 for s in rows]
    assert all(times) and times == sorted(times)
    assert times[-1] - times[0] >= (len(rows) - 1) / 2
    for row in rows:  # 4 MiB objects: IOPS x 4 MiB is the row's bandwidth
        bandwidth = [s.value for s in pick(rados, "bandwidth_bytes", INTERVAL, op="write")
                     if s.elapsed == row.elapsed and s.duration is None]
        assert bandwidth == [pytest.approx(row.value * 4 * MIB, rel=1e-5, abs=1.0)]
    assert one(rados, "bandwidth_bytes", SUMMARY, op="write") > 0
    rbd = [s for s in samples if s.tool == "rbd_bench"]
    assert rbd and all(s.labels["step"] == "rbd-read" for s in rbd)
    assert one(rbd, "iops", SUMMARY, op="read") > 0
