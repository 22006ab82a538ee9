"""Golden tests of the rados bench and rbd bench parsers over real outputs.

Fixtures: tests/fixtures/ceph/ (README.md there says where each comes from). Expected values are
the ones the authors quote in their prose or tables (cited per test), and the tool's own summary
figures, which the per-second samples must reproduce.
"""

from __future__ import annotations

import calendar
import itertools
import math
import re
from datetime import UTC, datetime

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers import registry
from benchtui.parsers.rados_bench import RadosBenchParser, parse_command
from benchtui.parsers.rbd_bench import RbdBenchParser, parse_iec_size
from benchtui.parsers.rbd_bench import parse_command as rbd_command
from tests.helpers import SEEDS, check_invariants, fixture_text, one, parse_with, pick

MIB = 1048576.0


def rados(name: str, **kw: str) -> tuple[list[Sample], RadosBenchParser]:
    parser = RadosBenchParser(source="test", **kw)
    samples: list[Sample] = []
    for line in fixture_text(f"ceph/{name}").split("\n"):
        samples.extend(parser.feed(line))
    samples.extend(parser.finish())
    check_invariants(samples)
    return samples, parser


def by_elapsed(samples: list[Sample], metric: str, **labels: str) -> dict[float, float]:
    """The per-second rows' values (not the partial tail after the last row: see
    test_rados_partial_tail_after_the_last_row)."""
    out: dict[float, float] = {}
    for s in pick(samples, metric, INTERVAL, **labels):
        if s.duration is not None:
            continue
        assert s.elapsed is not None
        assert s.elapsed not in out, f"two {metric} samples at {s.elapsed}"
        out[s.elapsed] = s.value
    return out


def utc(text: str) -> float:
    """A zone-less stamp read as UTC."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()


# --- rados bench, seed 004 ------------------------------------------------------------------

def test_seed004_rados_write_summary_matches_the_authors_figures() -> None:
    samples, parser = rados("seed004_rados_bench_write.txt")
    assert not parser.warnings
    labels = {"job": "test", "op": "write"}  # "rados bench -p test 60 write --no-cleanup"
    # Seed 004, prose under the write run:
    # "上面数据Bandwidth为8.50849MB/sec，Average Latency为：7.44131s"
    assert one(samples, "bandwidth_bytes", SUMMARY, **labels) == pytest.approx(8.50849 * MIB)
    assert one(samples, "latency_mean_seconds", SUMMARY, measure="lat", **labels) == 7.44131
    # The rest of the tool's summary block.
    assert one(samples, "latency_stddev_seconds", SUMMARY, **labels) == 4.9394
    assert one(samples, "latency_max_seconds", SUMMARY, **labels) == 23.564
    assert one(samples, "latency_min_seconds", SUMMARY, **labels) == 1.63302
    assert one(samples, "bandwidth_max_bytes", SUMMARY, **labels) == 36 * MIB
    assert one(samples, "bandwidth_min_bytes", SUMMARY, **labels) == 0.0
    assert one(samples, "bandwidth_stddev_bytes", SUMMARY, **labels) == pytest.approx(7.95831 * MIB)
    iops = one(samples, "iops", SUMMARY, **labels)
    assert iops == pytest.approx(147 / 69.107454)  # Total writes made / Total time run
    assert math.floor(iops) == 2  # "Average IOPS: 2" is the same figure truncated
    assert one(samples, "iops_max", SUMMARY, **labels) == 9
    assert all(s.elapsed == 69.107454 for s in pick(samples, "iops", SUMMARY))


def test_seed004_rados_write_per_second_rows() -> None:
    samples, _ = parse_with(RadosBenchParser, fixture_text("ceph/seed004_rados_bench_write.txt"))
    iops = by_elapsed(samples, "iops", op="write")
    bw = by_elapsed(samples, "bandwidth_bytes", op="write")
    assert sorted(iops) == [float(s) for s in range(1, 70)]  # rows 1..69; row 0 has no interval
    # "    3      16        24         8   10.6653   10.6667     2.66058     2.22005": 8 ops in
    # the 3 s since the last change (second 0), the way rados bench spreads them.
    assert iops[3.0] == pytest.approx(8 / 3)
    assert bw[3.0] == pytest.approx(10.6667 * MIB)
    assert iops[6.0] == 9.0 and bw[6.0] == 36 * MIB
    # "   35      16       101        85   9.71291   2.85714      8.7633     4.95709": 5 ops after
    # a 7 s stall (second 28 -> 35).
    assert iops[35.0] == pytest.approx(5 / 7)
    assert bw[35.0] == pytest.approx(2.85714 * MIB)
    # "   29      16        96        80   11.0329         0           -     4.66358": nothing done.
    assert iops[29.0] == 0.0 and bw[29.0] == 0.0
    last = by_elapsed(samples, "latency_last_seconds", op="write")
    assert 29.0 not in last and last[35.0] == 8.7633
    # iops x 4 MiB objects is cur MB/s on every row, and the summary's max/min are the rows'.
    for sec, value in iops.items():
        assert value * 4 * MIB == pytest.approx(bw[sec], rel=1e-5, abs=1.0)
    assert math.floor(max(iops.values())) == 9 and min(iops.values()) == 0  # Max/Min IOPS
    assert max(bw.values()) == 36 * MIB  # Max bandwidth (MB/sec): 36
    inflight = by_elapsed(samples, "ops_in_flight")
    assert inflight[66.0] == 16 and inflight[67.0] == 11
    running = by_elapsed(samples, "latency_running_mean_seconds", op="write")
    assert running[69.0] == 6.94076 and 1.0 not in running  # nothing finished in second 1


def test_seed004_rados_write_interval_mean_latency_is_derived_exactly() -> None:
    """Where one operation completed between two rows, the interval mean is that operation's
    latency, which rados bench prints as "last lat"."""
    text = fixture_text("ceph/seed004_rados_bench_write.txt")
    samples, _ = parse_with(RadosBenchParser, text)
    means = by_elapsed(samples, "latency_mean_seconds", op="write")
    rows = [line.split() for line in text.split("\n") if line[:5].strip().isdigit()]
    checked = 0
    for before, row in itertools.pairwise(rows):
        if int(row[3]) - int(before[3]) == 1:
            assert means[float(row[0])] == pytest.approx(float(row[6]), abs=1e-3)
            checked += 1
    assert checked == 12
    assert 29.0 not in means  # no completion, no mean


def test_seed004_rados_write_clock_from_the_stamped_lines() -> None:
    samples, _ = parse_with(RadosBenchParser, fixture_text("ceph/seed004_rados_bench_write.txt"))
    rows = {s.elapsed: s.t for s in pick(samples, "iops", INTERVAL)}
    # Before the first stamp there is no clock (a saved file: t is None, elapsed is set).
    assert rows[19.0] is None
    # "2018-10-11 11:57:52.537579 min lat: ..." comes right before the row of second 20; with no
    # receive time the zone-less stamp is read as UTC.
    assert rows[20.0] == pytest.approx(utc("2018-10-11 11:57:52.537579"))
    assert rows[39.0] == pytest.approx(utc("2018-10-11 11:57:52.537579") + 19)
    assert rows[40.0] == pytest.approx(utc("2018-10-11 11:58:12.540426"))
    assert rows[60.0] == pytest.approx(utc("2018-10-11 11:58:32.543137"))
    summary_t = one_sample(samples, "iops", SUMMARY).t
    assert summary_t == pytest.approx(utc("2018-10-11 11:58:32.543137") - 60 + 69.107454)


def one_sample(samples: list[Sample], metric: str, kind: str) -> Sample:
    found = pick(samples, metric, kind)
    assert len(found) == 1
    return found[0]


def test_rados_zone_of_legacy_stamps_is_learnt_from_the_receive_time() -> None:
    """Live: the host printed local time in UTC+8; lines arrive 0.3 s after they were printed.
    The zone is guessed once (rounded to 15 min) and the tool's own clock is kept."""
    text = fixture_text("ceph/seed004_rados_bench_write.txt")
    true_20 = utc("2018-10-11 11:57:52.537579") - 8 * 3600
    parser = RadosBenchParser(source="live")
    samples: list[Sample] = []
    for line in text.split("\n"):
        sec = line[:5].strip()
        received = true_20 + (int(sec) - 20 if sec.isdigit() else 0) + 0.3
        samples.extend(parser.feed(line, received))
    rows = {s.elapsed: s.t for s in pick(samples, "iops", INTERVAL)}
    assert rows[5.0] == pytest.approx(true_20 - 15 + 0.3)  # before any stamp: receive time
    assert rows[20.0] == pytest.approx(true_20)
    assert rows[41.0] == pytest.approx(utc("2018-10-11 11:58:12.540426") - 8 * 3600 + 1)


def test_seed004_rados_rand_and_seq() -> None:
    samples, parser = rados("seed004_rados_bench_rand.txt")
    assert not parser.warnings
    labels = {"job": "test", "op": "read"}  # "rados bench -p test 60 rand": a read
    # Seed 004: "上面数据Bandwidth为498.247MB/sec，Average Latency为：0.126668s"
    assert one(samples, "bandwidth_bytes", SUMMARY, **labels) == pytest.approx(498.247 * MIB)
    assert one(samples, "latency_mean_seconds", SUMMARY, **labels) == 0.126668
    assert one(samples, "iops", SUMMARY, **labels) == pytest.approx(7502 / 60.227155)
    iops = by_elapsed(samples, "iops", op="read")
    assert len(iops) == 60
    assert iops[1.0] == 136 and iops[2.0] == 154 and iops[10.0] == 94
    assert max(iops.values()) == one(samples, "iops_max", SUMMARY) == 154  # Max IOPS: 154
    assert min(iops.values()) == one(samples, "iops_min", SUMMARY) == 94  # Min IOPS: 94
    assert by_elapsed(samples, "bandwidth_bytes", op="read")[1.0] == 544 * MIB
    assert by_elapsed(samples, "ops_in_flight")[4.0] == 15
    t20 = {s.elapsed: s.t for s in pick(samples, "iops", INTERVAL)}[20.0]
    assert t20 == pytest.approx(utc("2018-10-11 14:27:20.997424"))

    samples, _ = parse_with(RadosBenchParser, fixture_text("ceph/seed004_rados_bench_seq.txt"))
    # Seed 004: "上面数据Bandwidth为490.3MB/sec，Average Latency为：0.126695s"
    assert one(samples, "bandwidth_bytes", SUMMARY, op="read") == pytest.approx(490.3 * MIB)
    assert one(samples, "latency_mean_seconds", SUMMARY, op="read") == 0.126695
    assert by_elapsed(samples, "iops", op="read") == {1.0: 131.0}  # Max IOPS = Min IOPS = 131
    assert one(samples, "iops", SUMMARY) == pytest.approx(147 / 1.199266)


def test_rados_operation_without_the_command_line() -> None:
    """Live streams have no command line: write runs print "Maintaining ... writes" before the
    table, seq/rand runs do not; a session may also say the mode."""
    for name, op in (("seed004_rados_bench_write.txt", "write"),
                     ("seed004_rados_bench_rand.txt", "read")):
        text = "\n".join(fixture_text(f"ceph/{name}").split("\n")[1:])  # command line dropped
        samples, _ = parse_with(RadosBenchParser, text)
        assert {s.labels["op"] for s in samples if "op" in s.labels} == {op}
        assert {s.labels["job"] for s in samples} == {"rados"}
    samples, _ = rados("seed004_rados_bench_rand.txt", mode="rand", pool="vms")
    assert {(s.labels["job"], s.labels.get("op", "read")) for s in samples} == {("vms", "read")}


def test_seed004_whole_report() -> None:
    """The whole seed: three runs told apart, fio and iperf lines skipped without warnings."""
    text = (SEEDS / "004_b978dd79e6e350d7.txt").read_text(encoding="utf-8")
    assert [c.name for c in registry.detect(text) if c.tool.endswith("bench")] == [
        "rados-bench", "rbd-bench"]
    samples, parser = parse_with(RadosBenchParser, text)
    assert not parser.warnings
    assert [(s.labels["op"], s.value) for s in pick(samples, "latency_mean_seconds", SUMMARY)] == [
        ("write", 7.44131), ("read", 0.126668), ("read", 0.126695)]
    # Runs after the first of a stream are told apart by a run label (rand and seq are both
    # reads of pool "test").
    assert [s.labels.get("run") for s in pick(samples, "iops", SUMMARY)] == [None, "2", "3"]
    # 69 write rows and its tail (0.107 s after row 69), 60 rand rows and the tail, 1 seq row
    # and the tail
    assert len(pick(samples, "iops", INTERVAL)) == 69 + 1 + 60 + 1 + 1 + 1
    samples, parser = parse_with(RbdBenchParser, text)
    assert not parser.warnings
    assert [(s.value, s.labels.get("run")) for s in pick(samples, "iops", SUMMARY)] == [
        (2465.13, None), (3.31, "2"), (1.41, "3"), (4.19, "4")]


# --- rados bench, public outputs -----------------------------------------------------------

def test_quincy_rados_bench_with_zoned_stamps() -> None:
    samples, parser = rados("public_chn-lee-yumi_rados_bench_quincy_2nodes.txt")
    assert not parser.warnings
    # The post's table, row "2" (two nodes): rados写 10.6733, rados读 21.5597, rados随机 22.2359
    bws = pick(samples, "bandwidth_bytes", SUMMARY)
    assert [s.labels["op"] for s in bws] == ["write", "read", "read"]
    assert [s.value / MIB for s in bws] == pytest.approx([10.6733, 21.5597, 22.2359])
    assert {s.labels["job"] for s in samples} == {"perf_test"}
    # "2023-04-18T15:12:33.881436+0800 min lat: ..." before second 20 of the write run: exact.
    write_t = {s.elapsed: s.t for s in pick(samples, "iops", INTERVAL, op="write")}
    assert write_t[20.0] == pytest.approx(calendar.timegm((2023, 4, 18, 7, 12, 33)) + 0.881436)
    # Each run's summary max/min IOPS are its rows' (rados bench truncates to an integer).
    iops_rows = [s for s in pick(samples, "iops", INTERVAL) if s.duration is None]
    starts = [i for i, s in enumerate(iops_rows) if s.elapsed == 1.0] + [len(iops_rows)]
    maxes = pick(samples, "iops_max", SUMMARY)
    mins = pick(samples, "iops_min", SUMMARY)
    assert len(starts) - 1 == len(maxes) == len(mins) == 3
    for k in range(3):
        values = [s.value for s in iops_rows[starts[k]:starts[k + 1]]]
        assert math.floor(max(values)) == maxes[k].value
        assert math.floor(min(values)) == mins[k].value
    # "    4      16        19         3   2.99955         3     3.64087     3.38759": 3 ops in 4 s.
    assert by_elapsed(pick(samples, "iops", op="write"), "iops")[4.0] == 0.75


def test_rados_options_before_bench() -> None:
    samples, parser = rados("public_hegongshan_rados_bench_write.txt")
    assert not parser.warnings
    labels = {"job": "test-rados", "op": "write"}  # rados -p test-rados -b 8M bench 10 write ...
    assert one(samples, "bandwidth_bytes", SUMMARY, **labels) == pytest.approx(388.72 * MIB)
    iops = by_elapsed(samples, "iops", **labels)
    assert iops[1.0] == 5 and iops[3.0] == 55  # Min IOPS 5, Max IOPS 55
    assert one(samples, "iops_max", SUMMARY) == max(iops.values())
    assert by_elapsed(samples, "bandwidth_bytes", **labels)[3.0] == 440 * MIB  # 55 x 8 MiB


def test_rados_command_lines() -> None:
    assert parse_command("# rados bench -p test 60 write --no-cleanup") == ("test", "write")
    assert parse_command("[root@hgs ~]# rados -p test-rados -b 8M bench 10 write -t 48") == (
        "test-rados", "write")
    assert parse_command("sudo bin/rados bench --pool=mybench -b 4096 10 rand") == ("mybench",
                                                                                   "rand")
    assert parse_command("rados bench -p <pool_name> <seconds> <write|seq|rand>") == (None, None)
    assert parse_command("# rados -p rbd cleanup") is None


# --- rbd bench ------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "iops", "bandwidth", "quoted", "rows"), [
    # Seed 004, under each run: "结果：带宽 10 M", "带宽 13 M", "带宽 5 k", "带宽 17M" (the author
    # reads bytes/sec in decimal units and drops the fraction).
    ("seed004_rbd_bench_write_4k_seq.txt", 2465.13, 10097188.73, (10, 1e6), 14),
    ("seed004_rbd_bench_write_4m_seq.txt", 3.31, 13542554.56, (13, 1e6), 3),
    ("seed004_rbd_bench_write_4k_rand.txt", 1.41, 5779.41, (5, 1e3), 1),
    ("seed004_rbd_bench_write_4m_rand.txt", 4.19, 17160587.03, (17, 1e6), 2),
])
def test_seed004_rbd_bench_write(name: str, iops: float, bandwidth: float,
                                 quoted: tuple[int, float], rows: int) -> None:
    samples, parser = parse_with(RbdBenchParser, fixture_text(f"ceph/{name}"))
    assert not parser.warnings
    labels = {"job": "rbd/test_img", "op": "write"}  # rbd bench-write test_img --pool=rbd
    assert one(samples, "iops", SUMMARY, **labels) == iops
    assert one(samples, "bandwidth_bytes", SUMMARY, **labels) == bandwidth
    assert int(bandwidth / quoted[1]) == quoted[0]
    assert len(pick(samples, "iops", INTERVAL, **labels)) == rows
    summary = pick(samples, "iops", SUMMARY)[0]
    assert summary.elapsed is not None
    assert summary.elapsed * iops == pytest.approx(
        {2465.13: 41992, 3.31: 420, 1.41: 42, 4.19: 42}[iops], rel=0.004)


def test_seed004_rbd_rows() -> None:
    samples, _ = parse_with(RbdBenchParser, fixture_text("ceph/seed004_rbd_bench_write_4k_seq.txt"))
    iops = by_elapsed(samples, "iops")
    bw = by_elapsed(samples, "bandwidth_bytes")
    assert iops[1.0] == 4349.81 and bw[1.0] == 17816805.42  # "1       6625      4349.81 ..."
    assert iops[14.0] == 2863.49 and bw[14.0] == 11728848.67
    samples, _ = parse_with(RbdBenchParser, fixture_text("ceph/seed004_rbd_bench_write_4m_seq.txt"))
    assert sorted(by_elapsed(samples, "iops")) == [5.0, 117.0, 125.0]  # rows around "..."


def test_rbd_bench_human_units_octopus_and_later() -> None:
    """Ceph 15+ prints BYTES/SEC with byte_u_t ("113 MiB/s"); the bandwidth is OPS/SEC x io_size,
    which rounds back to what was printed."""
    text = fixture_text("ceph/public_hegongshan_rbd_bench_write.txt")
    samples, parser = parse_with(RbdBenchParser, text)
    assert not parser.warnings
    labels = {"job": "test-rbd/test-rbd-rw", "op": "write"}
    iops = by_elapsed(samples, "iops", **labels)
    bw = by_elapsed(samples, "bandwidth_bytes", **labels)
    assert iops[1.0] == 29027.5 and iops[10.0] == 23923.0
    printed = {float(line.split()[0]): int(line.split()[3]) for line in text.split("\n")
               if line[:5].strip().isdigit()}
    assert len(printed) == 10
    for sec, mib in printed.items():
        assert bw[sec] == iops[sec] * 4096
        assert round(bw[sec] / MIB) == mib
    assert one(samples, "iops", SUMMARY, **labels) == 23917.8
    assert round(one(samples, "bandwidth_bytes", SUMMARY, **labels) / MIB) == 93
    elapsed = pick(samples, "iops", SUMMARY)[0].elapsed
    assert elapsed is not None and 10 <= elapsed < 11  # "elapsed: 10", ops 262144


def test_rbd_bench_readwrite_split_summary() -> None:
    samples, parser = parse_with(RbdBenchParser,
                                 fixture_text("ceph/public_rbd_bench_readwrite_mix70.txt"))
    assert not parser.warnings
    job = "rook/rook-rbd.img"
    assert len(pick(samples, "iops", INTERVAL, job=job, op="total")) == 10
    total = one(samples, "iops", SUMMARY, op="total")
    read = one(samples, "iops", SUMMARY, op="read")
    write = one(samples, "iops", SUMMARY, op="write")
    assert (total, read, write) == (11012.6, 7718.43, 3294.14)
    assert read + write == pytest.approx(total, abs=0.1)
    assert round(one(samples, "bandwidth_bytes", SUMMARY, op="read") / MIB) == 30
    assert round(one(samples, "bandwidth_bytes", SUMMARY, op="write") / MIB) == 13
    assert [s.elapsed for s in pick(samples, "iops", SUMMARY)] == [
        pytest.approx(262144 / 11012.6)] * 3


def test_rbd_command_lines_and_sizes() -> None:
    cmd = rbd_command("# rbd bench-write test_img --io-threads 16 --pool=rbd --io-size 4096000")
    assert cmd is not None
    assert (cmd["image-spec"], cmd["pool"], cmd["io-size"]) == ("test_img", "rbd", "4096000")
    cmd = rbd_command("sudo bin/rbd -p mybench bench bench1 --io-type write --io-size 4K")
    assert cmd is not None and cmd["image-spec"] == "bench1" and cmd["p"] == "mybench"
    assert rbd_command("rbd: bench-write is deprecated") is None
    assert parse_iec_size("4K") == 4096 and parse_iec_size("1M") == 1 << 20
    assert parse_iec_size("4096000") == 4096000 and parse_iec_size("x") is None


def test_detection_keeps_to_its_own_outputs() -> None:
    for name, expected in (("seed004_rados_bench_write.txt", "rados-bench"),
                           ("seed004_rbd_bench_write_4k_seq.txt", "rbd-bench"),
                           ("public_hegongshan_rbd_bench_write.txt", "rbd-bench"),
                           ("public_chn-lee-yumi_rados_bench_quincy_2nodes.txt", "rados-bench")):
        assert [c.name for c in registry.detect(fixture_text(f"ceph/{name}"))] == [expected]
    for seed in ("000_217b3b91532e58e6.txt", "001_82a32511c661f41a.txt",
                 "002_66b63c6d37b60dcd.txt", "003_434751a8f404b5a1.txt"):
        text = (SEEDS / seed).read_text(encoding="utf-8")
        assert RadosBenchParser.detect(text) == 0 and RbdBenchParser.detect(text) == 0


def test_names() -> None:
    assert registry.candidates("rados_bench") == [RadosBenchParser]
    assert registry.candidates("rbd") == [RbdBenchParser]


RADOS_FIXTURES = ["seed004_rados_bench_write.txt", "seed004_rados_bench_rand.txt",
                  "seed004_rados_bench_seq.txt", "public_hegongshan_rados_bench_write.txt",
                  "public_chn-lee-yumi_rados_bench_quincy_2nodes.txt"]


@pytest.mark.parametrize("name", RADOS_FIXTURES)
def test_rados_rows_reproduce_the_tools_own_figures(name: str) -> None:
    """In every real run: row iops x object size == cur MB/s, and the largest/smallest row iops
    (truncated, as rados bench keeps them) are the summary's Max IOPS / Min IOPS."""
    samples, parser = rados(name)
    assert not parser.warnings
    text = fixture_text(f"ceph/{name}")
    sizes = [int(v) for v in re.findall(r"^(?:Write|Read) size:\s+(\d+)$", text, re.MULTILINE)]
    runs: dict[str | None, list[Sample]] = {}
    for s in samples:
        runs.setdefault(s.labels.get("run"), []).append(s)
    assert len(runs) == len(sizes) >= 1
    for size, run_samples in zip(sizes, runs.values(), strict=True):
        iops = by_elapsed(run_samples, "iops")
        bw = by_elapsed(run_samples, "bandwidth_bytes")
        assert sorted(iops) == sorted(bw) and iops
        for sec, value in iops.items():
            assert value * size == pytest.approx(bw[sec], rel=2e-5, abs=1.0), sec
        assert math.floor(max(iops.values())) == one(run_samples, "iops_max", SUMMARY)
        assert math.floor(min(iops.values())) == one(run_samples, "iops_min", SUMMARY)


def test_rados_partial_tail_after_the_last_row() -> None:
    """rados bench prints no row for the operations that complete after its last row; the
    summary says how many there were and when the run ended. Seed 004's write run: last row
    ``69  11  147  136 ...`` (136 finished), ``Total time run: 69.107454``, ``Total writes
    made: 147``, ``Write size: 4194304``: 11 writes in the last 0.107454 s."""
    samples, parser = rados("seed004_rados_bench_write.txt")
    assert not parser.warnings
    tail = [s for s in samples if s.kind == INTERVAL and s.duration is not None]
    assert [(s.metric, s.elapsed, s.duration) for s in tail] == [
        ("iops", 69.107454, 0.107454), ("bandwidth_bytes", 69.107454, 0.107454)]
    assert tail[0].value == pytest.approx(11 / 0.107454)
    assert tail[1].value == pytest.approx(11 * 4194304 / 0.107454)
    assert tail[0].t == pytest.approx(1539259121.6505911)  # the run's end on the tool's clock
