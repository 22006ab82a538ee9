"""Golden tests of the fio normal-output and terse parsers over the fio reports of the seeds.

Fixtures (tests/fixtures/fio_text/, see its README.md): seed 000's nine report blocks (fio 3.7 on
Linux, fio 3.27 windowsaio on Windows, six runs each), seed 001's nine fio 3.33 runs (flattened
in the seed, line breaks restored) and seed 004's five fio 3.1 runs.
"""

from __future__ import annotations

import re

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.model.units import parse_bytes, parse_count
from benchtui.parsers.fio_terse import FioTerseParser
from benchtui.parsers.fio_text import FioTextParser
from benchtui.parsers.registry import detect
from tests.helpers import FIXTURES, SEEDS, fixture_text, one, parse_with, pick

D = "fio_text/"


def _run(samples: list[Sample], run: int) -> list[Sample]:
    """The samples of the ``run``-th report of a stream (the first one has no run label)."""
    want = None if run == 1 else str(run)
    return [s for s in samples if s.labels.get("run") == want]


def one_sample(samples: list[Sample], metric: str, **labels: str) -> Sample:
    found = pick(samples, metric, **labels)
    assert len(found) == 1, found
    return found[0]


def _parse(name: str) -> list[Sample]:
    samples, parser = parse_with(FioTextParser, fixture_text(D + name))
    assert not parser.warnings, parser.warnings
    return samples


# --- seed 000: the table "测试结论" (~l.262-282): IOPS and throughput of each of the six runs ---

SEED000_TABLE = {  # section fixture -> the six (IOPS, throughput) cells of its table row
    "physical": "195 782KiB/s 7349 28.7MiB/s 22.1k 86.3MiB/s 24.5k 95.8MiB/s "
                "1055 1056MiB/s 1117 1118MiB/s",
    "linux_none": "245 981KiB/s 6096 23.8MiB/s 9458 36.9MiB/s 6278 24.5MiB/s "
                  "979 980MiB/s 1058 1059MiB/s",
    # the table calls this VM "cache=none,queues=4", its data section "cache=none, multiqueue=2"
    "linux_none_mq2": "243 973KiB/s 7483 29.2MiB/s 11.5k 44.9MiB/s 7271 28.4MiB/s "
                      "958 959MiB/s 1052 1052MiB/s",
    "linux_writeback": "13.0k 54.5MiB/s 8360 32.7MiB/s 13.1k 51.3MiB/s 8976 35.1MiB/s "
                       "2550 2551MiB/s 1045 1046MiB/s",
    "linux_writeback_q4": "28.7k 112MiB/s 12.2k 47.5MiB/s 29.6k 116MiB/s 11.2k 43.8MiB/s "
                          "2931 2932MiB/s 1220 1220MiB/s",
    "windows_none": "2811 11.0MiB/s 6002 23.4MiB/s 11.8k 46.1MiB/s 4289 16.8MiB/s "
                    "1009 1009MiB/s 685 686MiB/s",
    "windows_none_q4": "2794 10.9MiB/s 7448 29.1MiB/s 21.1k 82.6MiB/s 25.5k 99.7MiB/s "
                       "930 930MiB/s 1013 1014MiB/s",
    "windows_writeback": "2483 9935KiB/s 7430 29.0MiB/s 10.9k 42.8MiB/s 13.6k 53.0MiB/s "
                         "1993 1994MiB/s 920 920MiB/s",
    "windows_writeback_q4": "4520 17.7MiB/s 18.8k 73.6MiB/s 23.3k 90.8MiB/s 21.8k 85.1MiB/s "
                            "2628 2628MiB/s 1191 1192MiB/s",
}
#: The six runs of every section: 4KB rand read, 4KB rand write, 4KB seq read, 4KB seq write,
#: 1MB seq read, 1MB seq write (job names as the authors gave them).
SEED000_RUNS = [("random-read", "read"), ("random-write", "write"), ("random-read", "read"),
                ("random-write", "write"), ("seq-read", "read"), ("seq-write", "write")]


@pytest.mark.parametrize("section", sorted(SEED000_TABLE))
def test_seed000_every_run_matches_the_authors_table(section: str) -> None:
    samples = _parse(f"seed000_{section}.txt")
    cells = SEED000_TABLE[section].split()
    for i, (job, op) in enumerate(SEED000_RUNS):
        run = _run(samples, i + 1)
        assert one(run, "iops", SUMMARY, job=job, op=op) == parse_count(cells[2 * i])
        assert one(run, "bandwidth_bytes", SUMMARY, job=job, op=op) == parse_bytes(cells[2 * i + 1])
        # the group line repeats the job's bandwidth (one job per group)
        assert one(run, "bandwidth_bytes", SUMMARY, job="group 0", op=op) == parse_bytes(
            cells[2 * i + 1])
    assert not _run(samples, 7)


def test_seed000_physical_4k_randread_details() -> None:
    run = _run(_parse("seed000_physical.txt"), 1)
    lab = {"job": "random-read", "op": "read"}
    # "slat (nsec): min=105, max=109517, avg=820.31, stdev=1377.18"
    assert one(run, "latency_min_seconds", measure="slat", **lab) == pytest.approx(105e-9)
    assert one(run, "latency_max_seconds", measure="slat", **lab) == pytest.approx(109517e-9)
    assert one(run, "latency_mean_seconds", measure="slat", **lab) == pytest.approx(820.31e-9)
    assert one(run, "latency_stddev_seconds", measure="slat", **lab) == pytest.approx(1377.18e-9)
    # "clat (msec): min=41, max=184, avg=81.76, stdev=15.04"
    assert one(run, "latency_mean_seconds", measure="clat", **lab) == pytest.approx(0.08176)
    assert one(run, "latency_max_seconds", measure="lat", **lab) == pytest.approx(0.184)
    # "clat percentiles (msec):" "1.00th=[   53]" ... "99.99th=[  182]"
    pct = {s.labels["quantile"]: s.value for s in pick(run, "latency_seconds", measure="clat")}
    assert len(pct) == 17
    assert pct["0.01"] == pytest.approx(0.053)
    assert pct["0.5"] == pytest.approx(0.081)
    assert pct["0.999"] == pytest.approx(0.165)
    assert pct["0.9999"] == pytest.approx(0.182)
    # "bw (  KiB/s): min=  560, max=  992, per=99.97%, avg=781.78, stdev=75.68, samples=120"
    assert one(run, "bandwidth_max_bytes", **lab) == 992 * 1024
    assert one(run, "bandwidth_mean_bytes", **lab) == pytest.approx(781.78 * 1024)
    # "iops        : min=  140, max=  248, avg=195.42, stdev=18.92, samples=120"
    assert one(run, "iops_min", **lab) == 140
    assert one(run, "iops_stddev", **lab) == pytest.approx(18.92)
    # "cpu          : usr=0.15%, sys=0.06%"
    assert one(run, "cpu_ratio", job="random-read", mode="user") == pytest.approx(0.0015)
    assert one(run, "cpu_ratio", job="random-read", mode="system") == pytest.approx(0.0006)
    # the run's "Disk stats" come after the next section's title: "sda: ... util=99.61%"
    assert one(run, "disk_util_ratio", device="sda") == pytest.approx(0.9961)
    # everything of the report is a summary over the run: "(45.9MiB/60039msec)"
    summaries = [s for s in run if s.kind == SUMMARY]
    assert {s.elapsed for s in summaries} == {60.039}
    assert all(s.t is None for s in run)


def test_seed000_status_lines_are_intervals() -> None:
    samples = _parse("seed000_physical.txt")
    # "Jobs: 1 (f=1): [r(1)][100.0%][r=828KiB/s,w=0KiB/s][r=207,w=0 IOPS][eta 00m:00s]"
    first = _run(samples, 1)
    assert one(first, "iops", INTERVAL, job="all", op="read") == 207
    assert one(first, "bandwidth_bytes", INTERVAL, job="all", op="read") == 828 * 1024
    assert one(first, "iops", INTERVAL, job="all", op="write") == 0
    assert {s.elapsed for s in first if s.kind == INTERVAL} == {1.0}
    # "[R(1)][100.0%][r=102MiB/s,w=0KiB/s][r=26.2k,w=0 IOPS]"
    third = _run(samples, 3)
    assert one(third, "iops", INTERVAL, job="all", op="read") == 26200
    assert one(third, "bandwidth_bytes", INTERVAL, job="all", op="read") == 102 * 1024**2


def test_seed000_writeback_final_fsync_status_and_k_suffixed_latencies() -> None:
    run = _run(_parse("seed000_linux_writeback.txt"), 4)
    # "Jobs: 1 (f=1): [F(1)][100.0%][r=0KiB/s,w=0KiB/s][r=0,w=0 IOPS][eta 00m:00s]"
    assert one(run, "iops", INTERVAL, job="all", op="write") == 0
    # "clat (usec): min=212, max=7198.2k, avg=1647.56, stdev=37821.31"
    lab = {"job": "random-write", "op": "write", "measure": "clat"}
    assert one(run, "latency_max_seconds", **lab) == pytest.approx(7.1982)
    assert one(run, "latency_min_seconds", **lab) == pytest.approx(212e-6)
    assert one(run, "disk_util_ratio", device="sdb") == pytest.approx(0.8062)


def test_seed000_windows_fio327() -> None:
    samples = _parse("seed000_windows_none.txt")
    assert not pick(samples, "iops", INTERVAL)  # the Windows runs were pasted without status
    assert not pick(samples, "disk_util_ratio")  # nor disk stats (fio has none there)
    run = _run(samples, 2)
    lab = {"job": "random-write", "op": "write"}
    # "write: IOPS=6002, BW=23.4MiB/s (24.6MB/s)(1407MiB/60002msec); 0 zone resets"
    assert one(run, "iops", **lab) == 6002
    assert one(run, "bandwidth_bytes", **lab) == pytest.approx(23.4 * 1024**2)
    # "slat (usec): min=9, max=3977.2k, avg=46.96, stdev=7329.99"
    assert one(run, "latency_max_seconds", measure="slat", **lab) == pytest.approx(3.9772)
    # "clat percentiles (usec):" ... "99.99th=[33817]"
    assert one(run, "latency_seconds", measure="clat", quantile="0.9999", **lab) == (
        pytest.approx(0.033817))
    # "cpu          : usr=0.00%, sys=46.67%"
    assert one(run, "cpu_ratio", job="random-write", mode="system") == pytest.approx(0.4667)
    assert one(run, "cpu_ratio", job="random-write", mode="user") == 0


# --- seed 001: the summary table at its start, quoting the last status line of each run -------

#: Rows of seed 001's table (Filesystem, IO Interface, Read, Write, Latency, IOPS) in the order
#: the runs follow in the report ("io_submit" is libaio).
SEED001_TABLE = [
    ("Ext4 posixaio", "53.8 MiB/s", "54.2 MiB/s", 1100e-6, "13.8k"),
    ("Ext4 io_uring", "674 MiB/s", "670 MiB/s", 135e-6, "171k"),
    ("Ext4 io_submit", "576 MiB/s", "572 MiB/s", 135e-6, "146k"),
    ("None posixaio", "246 MiB/s", "246 MiB/s", 267e-6, "63k"),
    ("None io_uring", "1636 MiB/s", "1630 MiB/s", 40e-6, "417k"),
    ("None io_submit", "1370 MiB/s", "1369 MiB/s", 49e-6, "350k"),
    ("XFS posixaio", "58 MiB/s", "57.4 MiB/s", 1100e-6, "14.7k"),
    ("XFS io_submit", "790 MiB/s", "794 MiB/s", 117e-6, "202k"),
    ("XFS io_uring", "721 MiB/s", "719 MiB/s", 114e-6, "184k"),
]


@pytest.mark.parametrize("index", range(9), ids=[row[0] for row in SEED001_TABLE])
def test_seed001_runs_match_the_authors_table(index: int) -> None:
    _, read, write, latency, iops = SEED001_TABLE[index]
    run = _run(_parse("seed001_all_runs.txt"), index + 1)
    # Read and Write: the rates of the run's last status line (the table rounds 1627 to 1630)
    r_bw = one(run, "bandwidth_bytes", INTERVAL, job="all", op="read")
    w_bw = one(run, "bandwidth_bytes", INTERVAL, job="all", op="write")
    assert r_bw == pytest.approx(parse_bytes(read.replace(" ", "")), rel=0.005)
    assert w_bw == pytest.approx(parse_bytes(write.replace(" ", "")), rel=0.005)
    # IOPS: the smaller of the status line's read and write IOPS
    r_io = one(run, "iops", INTERVAL, job="all", op="read")
    w_io = one(run, "iops", INTERVAL, job="all", op="write")
    assert min(r_io, w_io) == pytest.approx(parse_count(iops), rel=0.01)
    # Latency: about the read latency's mean (rounded by the authors, within 10 %)
    lat = one(run, "latency_mean_seconds", SUMMARY, job="fiotest", op="read", measure="lat")
    assert lat == pytest.approx(latency, rel=0.10)
    # a report per run: both directions, the group and the device
    assert len(pick(run, "iops", SUMMARY)) == 2
    assert len(pick(run, "bandwidth_bytes", SUMMARY, job="group 0")) == 2
    assert 0.99 < one(run, "disk_util_ratio", device="nvme0n1") <= 1


def test_seed001_report_values() -> None:
    samples = _parse("seed001_all_runs.txt")
    first = _run(samples, 1)
    # "read: IOPS=14.3k, BW=56.0MiB/s (58.7MB/s)(1680MiB/30001msec)"
    assert one(first, "iops", SUMMARY, job="fiotest", op="read") == 14300
    assert one(first, "bandwidth_bytes", SUMMARY, job="fiotest", op="read") == 56 * 1024**2
    assert one(first, "cpu_ratio", job="fiotest", mode="user") == pytest.approx(0.028)
    assert one(first, "disk_util_ratio", device="nvme0n1") == pytest.approx(0.9972)
    # run 5 (block device, io_uring) stopped at 15 s: "(23.3GiB/15021msec)", "[90.9%]"
    fifth = _run(samples, 5)
    assert {s.elapsed for s in fifth if s.kind == SUMMARY} == {15.021}
    # run 9, write: "clat (nsec): min=1032, max=15523k, avg=28137.17, stdev=116080.06"
    ninth = _run(samples, 9)
    lab = {"job": "fiotest", "op": "write", "measure": "clat"}
    assert one(ninth, "latency_max_seconds", **lab) == pytest.approx(0.015523)
    assert one(ninth, "latency_mean_seconds", **lab) == pytest.approx(28137.17e-9)
    # "| 1.00th=[ 12], 5.00th=[ 15], ..." restored without fio's indentation
    assert one(ninth, "latency_seconds", quantile="0.01", **lab) == pytest.approx(12e-6)
    assert len({s.labels.get("run") for s in samples}) == 9


def test_seed001_fixture_restores_the_flattened_seed() -> None:
    seed = SEEDS / "001_82a32511c661f41a.txt"
    if not seed.exists():
        pytest.skip("seeds not available")
    text = seed.read_text(encoding="utf-8")
    restored = fixture_text(D + "seed001_all_runs.txt").rstrip("\n")
    assert restored.replace("\n", " ") in text  # only line breaks were put back


@pytest.mark.parametrize("seed", ["000_217b3b91532e58e6.txt", "004_b978dd79e6e350d7.txt"])
def test_seed000_and_004_fixtures_are_verbatim(seed: str) -> None:
    path = SEEDS / seed
    if not path.exists():
        pytest.skip("seeds not available")
    text = path.read_text(encoding="utf-8")
    files = sorted((FIXTURES / D).glob(f"seed{seed[:3]}_*.txt"))
    assert files
    for f in files:
        assert f.read_text(encoding="utf-8") in text, f.name


# --- seed 004: fio 3.1 against RBD; the conclusions quote the bw/iops sample maxima ------------

def test_seed004_4k_read_qd1() -> None:
    run = _parse("seed004_4k_read_qd1.txt")
    lab = {"job": "fio-read", "op": "read"}
    # "read: IOPS=2593, BW=10.1MiB/s (10.6MB/s)(6078MiB/600001msec)"
    assert one(run, "iops", SUMMARY, **lab) == 2593
    assert one(run, "bandwidth_bytes", SUMMARY, **lab) == pytest.approx(10.1 * 1024**2)
    # "clat (nsec): min=1021, max=66079k, avg=370367.39, stdev=395393.29"
    assert one(run, "latency_max_seconds", measure="clat", **lab) == pytest.approx(0.066079)
    assert one(run, "latency_mean_seconds", measure="lat", **lab) == pytest.approx(382.88e-6)
    assert one(run, "latency_seconds", measure="clat", quantile="0.5", **lab) == (
        pytest.approx(383e-6))
    assert one(run, "disk_util_ratio", device="vdb") == pytest.approx(0.9504)
    assert {s.elapsed for s in run if s.kind == SUMMARY} == {600.001}
    # "Jobs: 1 (f=1): [R(1)][100.0%][r=9784KiB/s,w=0KiB/s][r=2446,w=0 IOPS][eta 00m:00s]"
    assert one(run, "iops", INTERVAL, job="all", op="read") == 2446


def test_seed004_conclusions_quote_the_sample_maxima() -> None:
    # "随机写的最大IOPS为：12280": "iops        : min=    2, max=12280, ..."
    randwrite = _parse("seed004_4k_randwrite_qd128.txt")
    assert one(randwrite, "iops_max", job="fio-write", op="write") == 12280
    assert one(randwrite, "iops", SUMMARY, job="fio-write", op="write") == 2819
    # "clat percentiles (usec):" three a row, "99.99th=[2969568]"
    assert one(randwrite, "latency_seconds", quantile="0.9999", op="write") == (
        pytest.approx(2.969568))
    # "随机读的最大IOPS为：23310"
    randread = _parse("seed004_4k_randread_qd128.txt")
    assert one(randread, "iops_max", job="fio-write", op="read") == 23310
    # "顺序写的最大吞吐量为：196M": "bw (  KiB/s): min= 8192, max=196608, ..." (KiB/s / 1000)
    seqwrite = _parse("seed004_4m_write_qd64.txt")
    assert one(seqwrite, "bandwidth_max_bytes", job="Write_PPS_Testing", op="write") == (
        196608 * 1024)
    assert one(seqwrite, "iops", SUMMARY, job="Write_PPS_Testing", op="write") == 28
    # "clat (msec): min=400, max=12179, ..." and "clat percentiles (msec):"
    assert one(seqwrite, "latency_max_seconds", measure="clat", op="write") == (
        pytest.approx(12.179))
    assert one(seqwrite, "latency_seconds", quantile="0.99", op="write") == pytest.approx(8.49)
    # "顺序读的最大吞吐量为：466M": "bw (  KiB/s): min=106496, max=466944, ..."
    seqread = _parse("seed004_4m_read_qd64.txt")
    assert one(seqread, "bandwidth_max_bytes", job="Write_PPS_Testing", op="read") == (
        466944 * 1024)
    assert one(seqread, "disk_util_ratio", device="vdb") == 1.0


# --- structure: runs, repeated jobs, status-interval dumps, detection ---------------------------

def test_every_fixture_parses_cleanly_with_monotonic_percentiles() -> None:
    for path in sorted((FIXTURES / D).glob("seed*.txt")):
        samples, parser = parse_with(FioTextParser, path.read_text(encoding="utf-8"))
        assert not parser.warnings, (path.name, parser.warnings)
        series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
        for s in pick(samples, "latency_seconds"):
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "quantile"))
            series.setdefault(key, []).append((float(s.labels["quantile"]), s.value))
        assert series, path.name
        for points in series.values():
            values = [v for _, v in sorted(points)]
            assert values == sorted(values), (path.name, points)


def test_concatenated_reports_are_numbered_runs() -> None:
    physical = fixture_text(D + "seed000_physical.txt")
    samples, _ = parse_with(FioTextParser, physical + physical)
    runs = {s.labels.get("run") for s in samples}
    assert runs == {None, *map(str, range(2, 13))}
    assert one(_run(samples, 7), "iops", SUMMARY, job="random-read", op="read") == 195


def test_status_interval_dumps_stay_in_one_run_and_clones_are_numbered() -> None:
    report = fixture_text(D + "seed004_4k_read_qd1.txt")
    start = report.index("fio-read: (groupid=")
    body = report[start:]
    # the same job (same pid) reported twice, as --status-interval prints it
    samples, _ = parse_with(FioTextParser, report + body)
    assert all("run" not in s.labels for s in samples)
    assert len(pick(samples, "iops", SUMMARY, job="fio-read")) == 2
    # two jobs of the same name in one report (numjobs=2 without group_reporting)
    clone = body[:body.index("Run status group")].replace("pid=22004", "pid=22005")
    two = report[:report.index("Run status group")] + clone + report[report.index(
        "Run status group"):]
    samples, _ = parse_with(FioTextParser, two)
    assert one(samples, "iops", SUMMARY, job="fio-read#1", op="read") == 2593
    assert "run" not in one_sample(samples, "iops", job="fio-read#1").labels


def test_live_status_lines_split_on_carriage_return_and_use_passed_time() -> None:
    # a seed status line fed the way a live pipe delivers it: rewrites separated by \r
    status = "Jobs: 1 (f=1): [m(1)][100.0%][r=53.8MiB/s,w=54.2MiB/s][r=13.8k,w=13.9k IOPS]" \
             "[eta 00m:00s]"
    parser = FioTextParser()
    out = parser.feed("Jobs: 1 (f=1)\r" + status + "\r" + status.replace("r=53.8", "r=50.0"),
                      t=1700000000.0)
    reads = [s for s in out if s.metric == "bandwidth_bytes" and s.labels["op"] == "read"]
    assert [s.value for s in reads] == [53.8 * 1024**2, 50.0 * 1024**2]
    assert [s.elapsed for s in reads] == [2.0, 3.0]  # "Jobs: 1 (f=1)" was the first tick
    assert all(s.t == 1700000000.0 and s.kind == INTERVAL for s in out)


def test_status_line_without_rates_reports_zero_for_known_directions() -> None:
    # fio >= 3.10 leaves out directions with no I/O; a line with none means all were idle
    parser = FioTextParser()
    parser.feed("Jobs: 1 (f=1): [m(1)][40.0%][r=53.8MiB/s,w=54.2MiB/s][r=13.8k,w=13.9k IOPS]"
                "[eta 00m:03s]")
    out = parser.feed("Jobs: 1 (f=1): [m(1)][50.0%][eta 00m:02s]")
    assert sorted((s.metric, s.labels["op"], s.value) for s in out) == [
        ("bandwidth_bytes", "read", 0.0), ("bandwidth_bytes", "write", 0.0),
        ("iops", "read", 0.0), ("iops", "write", 0.0)]
    assert parser.feed("Jobs: 0 (f=0)") == []


def test_fio2_forms_from_its_format_strings() -> None:
    # fio 2.x printed no "IOPS=/BW=": these lines follow its stat.c/eta.c format strings
    # (no real fio 2 output is in the seeds); KB there means 1024 bytes.
    text = "\n".join([
        "Jobs: 1 (f=1): [r(1)] [50.0% done] [40960KB/0KB/0KB /s] [10.3K/0/0 iops] [eta 00m:05s]",
        "job1: (groupid=0, jobs=1): err= 0: pid=100: Thu May  9 16:33:14 2013",
        "  read : io=409600KB, bw=40960KB/s, iops=10240 , runt= 10000msec",
        "    clat (usec): min=50 , max=2048.5K, avg=97.20, stdev=12.30",
        "    bw (KB/s)  : min=38000, max=42000, per=100.00%, avg=40960.00, stdev=512.00",
        "Run status group 0 (all jobs):",
        "   READ: io=409600KB, aggrb=40960KB/s, minb=40960KB/s, maxb=40960KB/s, "
        "mint=10000msec, maxt=10000msec",
    ])
    samples, parser = parse_with(FioTextParser, text)
    assert not parser.warnings
    assert one(samples, "iops", INTERVAL, op="read") == 10300
    assert one(samples, "bandwidth_bytes", INTERVAL, op="read") == 40960 * 1024
    assert one(samples, "iops", SUMMARY, job="job1") == 10240
    assert one(samples, "bandwidth_bytes", SUMMARY, job="job1") == 40960 * 1024
    assert one(samples, "latency_max_seconds", job="job1") == pytest.approx(2.0485)
    assert one(samples, "bandwidth_max_bytes", job="job1") == 42000 * 1024
    assert one(samples, "bandwidth_bytes", job="group 0") == 40960 * 1024


def test_detection() -> None:
    for path in sorted((FIXTURES / D).glob("seed*.txt")):
        text = path.read_text(encoding="utf-8")
        assert FioTextParser.detect(text) >= 50, path.name
        assert FioTerseParser.detect(text) == 0, path.name
        assert [c.name for c in detect(text) if c.tool == "fio"] == ["fio-text"]
    # a stream's head before any report: the preamble and status lines of a live run
    head = fixture_text(D + "seed004_4k_read_qd1.txt").split("fio-read: (groupid=")[0]
    assert FioTextParser.detect(head) >= 50
    for seed in ("002_66b63c6d37b60dcd.txt", "003_434751a8f404b5a1.txt"):
        if (SEEDS / seed).exists():  # fio command lines and other tools, no fio output
            text = (SEEDS / seed).read_text(encoding="utf-8")
            assert FioTextParser.detect(text) == 0
            assert FioTerseParser.detect(text) == 0


def test_garbage_lines_warn_without_samples() -> None:
    text = "\n".join([
        "job: (groupid=0, jobs=1): err= 0: pid=1: Sat Oct 30 00:06:20 2021",
        "  read: IOPS=oops, BW=782KiB/s (801kB/s)(45.9MiB/60039msec)",
        "    clat (usec): min=1, max=2, avg=x, stdev=1",
        "   READ: bw=, run=1-1msec",
    ])
    samples, parser = parse_with(FioTextParser, text)
    assert samples == []
    assert len(parser.warnings) == 3
    assert re.search("direction", parser.warnings[0].reason)


# --- real fio 3.33 captures from this project's machine (fixtures fio333_*) ----------------------

def test_fio333_normal_with_eta_and_two_jobs_of_one_name() -> None:
    raw = (FIXTURES / D / "fio333_normal_eta_2jobs.txt").read_bytes().decode()
    parser = FioTextParser(source="test")
    samples = parser.feed_text(raw) + parser.finish()  # "\r" rewrites split by the base class
    assert not parser.warnings
    # "Jobs: 2 (f=2)\rJobs: 2 (f=2): [m(2)][-.-%][r=231MiB/s,w=230MiB/s][r=59.0k,w=58.9k IOPS]"
    reads = pick(samples, "iops", INTERVAL, job="all", op="read")
    assert [(s.value, s.elapsed) for s in reads] == [(59000, 2.0), (47800, 3.0)]
    # pid=15783 and pid=15784 are both named "mix": the preamble's "..." announced clones
    assert one(samples, "iops", SUMMARY, job="mix#0", op="read") == 28200
    assert one(samples, "iops", SUMMARY, job="mix#1", op="read") == 28100
    assert one(samples, "latency_min_seconds", job="mix#1", op="write", measure="lat") == (
        pytest.approx(1091e-9))
    assert one(samples, "cpu_ratio", job="mix#1", mode="system") == pytest.approx(0.3399)
    assert one(samples, "bandwidth_bytes", job="group 0", op="write") == 220 * 1024**2
    assert one(samples, "disk_util_ratio", device="vda") == pytest.approx(0.7325)
    assert one_sample(samples, "disk_util_ratio").elapsed == 3.008
    assert all("run" not in s.labels for s in samples)


#: (fixture, first field of each direction block, their ops, index of cpu usr, has disk stats),
#: indexes from fio.1's "TERSE OUTPUT" field list (41 fields a block, 47 in version 5).
TERSE = [
    ("fio333_terse_v2.txt", (4, 45, 86), ("read", "write", "trim"), 127, False),
    ("fio333_terse_v3.txt", (5, 46), ("read", "write"), 87, True),
    ("fio333_terse_v4.txt", (5, 46, 87), ("read", "write", "trim"), 128, True),
    ("fio333_terse_v5.txt", (5, 52, 99), ("read", "write", "trim"), 146, True),
    ("fio333_terse_v3_mixed.txt", (5,), ("total",), 46, True),
    ("fio333_terse_v4_both.txt", (5, 46, 87, 128), ("read", "write", "trim", "total"), 169,
     True),
]


@pytest.mark.parametrize(("name", "starts", "ops", "cpu", "disk"), TERSE,
                         ids=[row[0] for row in TERSE])
def test_terse_versions_against_the_documented_field_list(
        name: str, starts: tuple[int, ...], ops: tuple[str, ...], cpu: int, disk: bool) -> None:
    text = fixture_text(D + name)
    samples, parser = parse_with(FioTerseParser, text)
    assert not parser.warnings and FioTerseParser.detect(text) >= 50
    assert FioTextParser.detect(text) == 0
    f = text.rstrip("\n").split(";")
    job = f[starts[0] - 3]
    for start, op in zip(starts, ops, strict=True):
        lab = {"job": job, "op": op}
        if op == "trim":  # randrw does no trim: fio writes zeros, the parser nothing
            assert f[start + 3] == "0" and not pick(samples, "iops", op="trim")
            continue
        elapsed = int(f[start + 3]) / 1000
        assert one(samples, "iops", **lab) == float(f[start + 2])
        assert one(samples, "bandwidth_bytes", **lab) == float(f[start + 1]) * 1024
        assert one(samples, "latency_mean_seconds", measure="clat", **lab) == pytest.approx(
            float(f[start + 10]) * 1e-6)
        assert one(samples, "latency_max_seconds", measure="lat", **lab) == pytest.approx(
            float(f[start + 33]) * 1e-6)
        p99 = f[start + 12 + 12]
        assert p99.startswith("99.000000%=")
        assert one(samples, "latency_seconds", quantile="0.99", **lab) == pytest.approx(
            int(p99.split("=")[1]) * 1e-6)
        assert one(samples, "bandwidth_max_bytes", **lab) == float(f[start + 37]) * 1024
        assert {s.elapsed for s in pick(samples, "iops", **lab)} == {elapsed}
        if "v5" in name:
            assert one(samples, "iops_max", **lab) == float(f[start + 43])
    assert one(samples, "cpu_ratio", mode="user") == pytest.approx(float(f[cpu][:-1]) / 100)
    assert one(samples, "cpu_ratio", mode="system") == pytest.approx(float(f[cpu + 1][:-1]) / 100)
    utils = pick(samples, "disk_util_ratio")
    if disk:
        assert [(s.labels["device"], s.value) for s in utils] == [
            (f[cpu + 34], pytest.approx(float(f[cpu + 42][:-1]) / 100))]
    else:
        assert utils == []


def test_terse_two_jobs_of_one_name_and_garbage() -> None:
    text = fixture_text(D + "fio333_terse_v3_2jobs.txt")
    samples, parser = parse_with(FioTerseParser, text + "3;fio-3.33;broken;0;0;1;2\n")
    assert {s.labels["job"] for s in samples if "job" in s.labels} == {"two", "two#1"}
    assert parser.unknown_lines == 1  # the short line is not terse output
    first = text.split("\n")[0]
    mangled = first.replace(";1.000000%=", ";1.000000%=x", 1).replace(";5.000000%", ";5.0%", 1)
    samples, parser = parse_with(FioTerseParser, mangled)
    assert samples == [] and len(parser.warnings) == 1
