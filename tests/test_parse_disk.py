"""Golden tests of the disk monitor parsers: iostat (text), iostat-json, diskstats, spdk-iostat.

Fixtures are in tests/fixtures/disk/ (README.md there says where each comes from): the seed
003 outputs (header-less ``iostat -x 1 | grep nvme1n1`` lines and SPDK ``iostat.py`` tables),
real sysstat 12.6 outputs captured on the development machine, a real /proc/diskstats
capture, and that capture rendered in the sysstat 10.x and 11.x ``-x`` layouts.
"""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.model.sample import Sample
from benchtui.parsers._disk_common import ReportClock
from benchtui.parsers.diskstats import DiskstatsParser
from benchtui.parsers.iostat import IostatParser
from benchtui.parsers.iostat_json import IostatJsonParser
from benchtui.parsers.registry import DETECT_THRESHOLD, detect, scores
from benchtui.parsers.spdk_iostat import SpdkIostatParser
from tests.helpers import SEEDS, fixture_text, one, parse_with, pick

KIB = 1024.0
MIB = 1024.0 * 1024.0

# The seed 003 sections: fixture -> the fbbench "ops is:" figure the same section reports
# (seed 003, "ops is: N, average latency ..." at the given line).
SEED003_IOSTAT = {
    "seed003_iostat_x_grep_1copy_qd8_aio.txt": 56271,  # l.757, 单PG一副本 QD=8 aio bdev
    "seed003_iostat_x_grep_2copy_qd8_aio.txt": 37237,  # l.889, 单PG二副本 aio QD=8
    "seed003_iostat_x_grep_2copy_qd16_aio.txt": 44290,  # l.937, aio QD=16
    "seed003_iostat_x_grep_2copy_qd64_aio.txt": 49677,  # l.984, aio QD=64
}
SEED003_SPDK = {
    "seed003_spdk_iostat_1copy_qd8_nvme.txt": 77852,  # l.812, 单PG一副本 QD=8 nvme bdev
    "seed003_spdk_iostat_2copy_qd8_nvme.txt": 39423,  # l.1031, 二副本 nvme QD=8
    "seed003_spdk_iostat_2copy_qd16_nvme.txt": 47261,  # l.1101, nvme QD=16
    "seed003_spdk_iostat_2copy_qd64_nvme.txt": 57278,  # l.1178, nvme QD=64
}


def disk(name: str) -> str:
    return fixture_text(f"disk/{name}")


def series(samples: list[Sample], metric: str, **labels: str) -> list[float]:
    return [s.value for s in pick(samples, metric, **labels)]


def times(samples: list[Sample]) -> list[float]:
    """The distinct sample times, sorted (samples without a time are left out)."""
    return sorted({s.t for s in samples if s.t is not None})


def elapsed_values(samples: list[Sample]) -> list[float]:
    return sorted({s.elapsed for s in samples if s.elapsed is not None})


def steady_write_bandwidth(samples: list[Sample], device: str) -> float:
    """Mean write bandwidth over the reports at >= 90% of the peak write rate (drops the
    since-boot first report, the ramp-up and the partial last second)."""
    bw = series(samples, "disk_bandwidth_bytes", device=device, op="write")
    peak = max(bw)
    return statistics.mean(v for v in bw if v >= 0.9 * peak)


# --- seed 003: iostat -x 1 | grep nvme1n1 (header-less sysstat 12 lines, 23 fields) -------

@pytest.mark.parametrize("name", sorted(SEED003_IOSTAT))
def test_seed003_grepped_iostat_lines(name: str) -> None:
    text = disk(name)
    samples, parser = parse_with(IostatParser, text)
    rows = [line for line in text.splitlines() if line.startswith("nvme1n1")]
    assert len(samples) == 19 * len(rows)
    assert not parser.warnings
    assert {s.tool for s in samples} == {"iostat"}
    assert all(s.t is None for s in samples)
    # One report per line: elapsed counts reports at the 1 s interval.
    iops = pick(samples, "disk_iops", device="nvme1n1", op="write")
    assert [s.elapsed for s in iops] == [float(k) for k in range(1, len(rows) + 1)]
    # Every op of the 12.x layout is there; the percentages of merges are not emitted.
    ops = {s.labels["op"] for s in pick(samples, "disk_iops")}
    assert ops == {"read", "write", "discard", "flush"}
    assert not pick(samples, "disk_request_size_bytes", op="flush")
    # The seed's author compares these runs through fbbench's "ops is:" figure: every fbbench
    # 4 KiB write costs the disk two 4 KiB writes (data and raft log), ~8 KiB per op.
    per_op = steady_write_bandwidth(samples, "nvme1n1") / SEED003_IOSTAT[name]
    assert 0.95 * 8 * KIB < per_op < 1.05 * 8 * KIB


def test_seed003_grepped_line_values() -> None:
    # seed 003 l.766: the third line of `iostat -x 1|grep nvme1n1` in 单PG一副本 QD=8 aio bdev:
    # nvme1n1 1350.00 5400.00 0.00 0.00 0.71 4.00 31721.00 243656.00 0.00 0.00 0.01 7.68
    #         0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.00 1.28 100.00
    samples, _ = parse_with(IostatParser, disk("seed003_iostat_x_grep_1copy_qd8_aio.txt"))
    third = [s for s in samples if s.elapsed == 3.0]
    dev = {"device": "nvme1n1"}
    assert one(third, "disk_iops", op="read", **dev) == 1350.0
    assert one(third, "disk_bandwidth_bytes", op="read", **dev) == 5400 * KIB
    assert one(third, "disk_await_seconds", op="read", **dev) == pytest.approx(0.71e-3)
    assert one(third, "disk_request_size_bytes", op="read", **dev) == 4 * KIB
    assert one(third, "disk_iops", op="write", **dev) == 31721.0
    assert one(third, "disk_bandwidth_bytes", op="write", **dev) == 243656 * KIB
    assert one(third, "disk_request_size_bytes", op="write", **dev) == pytest.approx(7.68 * KIB)
    assert one(third, "disk_merged_iops", op="write", **dev) == 0.0
    assert one(third, "disk_queue_depth", **dev) == 1.28
    assert one(third, "disk_util_ratio", **dev) == 1.0
    # l.765: %util 100.40 is kept as printed (iostat's own rounding), not capped.
    second = [s for s in samples if s.elapsed == 2.0]
    assert one(second, "disk_util_ratio", **dev) == pytest.approx(1.004)
    # l.764: the first line is the average since boot; kept unless skip_first_report.
    first = [s for s in samples if s.elapsed == 1.0]
    assert one(first, "disk_iops", op="write", **dev) == 1.81


def test_seed003_skip_first_report() -> None:
    text = disk("seed003_iostat_x_grep_2copy_qd8_aio.txt")
    parser = IostatParser(skip_first_report=True)
    samples = parser.feed_text(text) + parser.finish()
    writes = pick(samples, "disk_iops", op="write")
    # seed 003 l.893 (since boot, 4.18 w/s) is dropped; l.894 is the first, at elapsed 1 s.
    assert writes[0].value == 14835.0 and writes[0].elapsed == 1.0
    assert len(writes) == 7


# --- seed 003: SPDK scripts/iostat.py --------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SEED003_SPDK))
def test_seed003_spdk_tables(name: str) -> None:
    text = disk(name)
    samples, parser = parse_with(SpdkIostatParser, text)
    assert not parser.warnings
    tables = text.count("\nDevice ") + text.startswith("Device ")
    cpu_blocks = text.count("cpu_stat:")
    assert len(pick(samples, "disk_iops", op="total")) == tables
    assert len(pick(samples, "disk_bandwidth_bytes")) == 3 * tables
    assert len(pick(samples, "cpu_ratio")) == 6 * cpu_blocks
    assert {s.tool for s in samples} == {"spdk_iostat"}
    # The copied output starts with a bdev table (its first cpu_stat block was not copied);
    # each later cpu_stat + table pair is one iteration.
    tps = pick(samples, "disk_iops", device="test1n1", op="total")
    assert [s.elapsed for s in tps] == [float(k) for k in range(1, tables + 1)]
    for k in range(2, tables + 1):
        cpu = [s.value for s in samples if s.metric == "cpu_ratio" and s.elapsed == k]
        assert sum(cpu) == pytest.approx(1.0, abs=0.002)
    per_op = steady_write_bandwidth(samples, "test1n1") / SEED003_SPDK[name]
    assert 0.95 * 8 * KIB < per_op < 1.05 * 8 * KIB


def test_seed003_spdk_values() -> None:
    # seed 003 l.1034-1038 (二副本 nvme bdev QD=8): the first table and the cpu_stat after it.
    samples, _ = parse_with(SpdkIostatParser, disk("seed003_spdk_iostat_2copy_qd8_nvme.txt"))
    first = [s for s in samples if s.elapsed == 1.0]
    dev = {"device": "test1n1"}
    assert one(first, "disk_iops", op="total", **dev) == 12298.41
    assert one(first, "disk_bandwidth_bytes", op="read", **dev) == pytest.approx(4768.12 * KIB)
    assert one(first, "disk_bandwidth_bytes", op="write", **dev) == pytest.approx(
        322274.01 * KIB)
    assert one(first, "disk_bandwidth_bytes", op="discard", **dev) == 0.0
    second = [s for s in samples if s.elapsed == 2.0]
    assert one(second, "cpu_ratio", mode="user") == pytest.approx(0.0319)
    assert one(second, "cpu_ratio", mode="system") == pytest.approx(0.0070)
    assert one(second, "cpu_ratio", mode="idle") == pytest.approx(0.9611)


def test_seed003_nvme_vs_aio_38_percent() -> None:
    # seed 003 l.852: "两种情况下，nvme bdev会比aio bdev快38%" (nvme bdev is 38% faster than
    # aio bdev, 单PG一副本 QD=8). The disk write rates agree: SPDK's KB_wrtn/s under the nvme
    # bdev over iostat's wkB/s under the aio bdev.
    aio, _ = parse_with(IostatParser, disk("seed003_iostat_x_grep_1copy_qd8_aio.txt"))
    nvme, _ = parse_with(SpdkIostatParser, disk("seed003_spdk_iostat_1copy_qd8_nvme.txt"))
    ratio = steady_write_bandwidth(nvme, "test1n1") / steady_write_bandwidth(aio, "nvme1n1")
    assert ratio == pytest.approx(1.38, abs=0.05)


def test_seed003_whole_report_detection() -> None:
    text = (SEEDS / "003_434751a8f404b5a1.txt").read_text(encoding="utf-8")
    names = {cls.name for cls in detect(text)}
    assert {"iostat", "spdk-iostat"} <= names
    assert "iostat-json" not in names and "diskstats" not in names
    iostat, parser = parse_with(IostatParser, text)
    assert not parser.warnings
    # 13 + 9 + 10 + 9 grepped lines (l.764-776, 893-900, 940-949, 987-995), nothing else:
    # the SPDK tables (capital KB_ columns) are left to the spdk parser.
    assert len(pick(iostat, "disk_util_ratio")) == 40
    assert {s.labels["device"] for s in iostat} == {"nvme1n1"}
    spdk, parser = parse_with(SpdkIostatParser, text)
    assert not parser.warnings
    assert len(pick(spdk, "disk_iops")) == 26
    assert {s.labels.get("device") for s in spdk} == {"test1n1", None}


def test_disk_parsers_ignore_the_other_seeds() -> None:
    ours = {"iostat", "iostat-json", "diskstats", "spdk-iostat"}
    for name in ("000_217b3b91532e58e6.txt", "001_82a32511c661f41a.txt",
                 "002_66b63c6d37b60dcd.txt", "004_b978dd79e6e350d7.txt"):
        head = (SEEDS / name).read_text(encoding="utf-8", errors="replace")
        fired = [(score, cls.name) for score, cls in scores(head) if cls.name in ours]
        assert all(score < DETECT_THRESHOLD for score, _ in fired), (name, fired)
        for cls in (IostatParser, SpdkIostatParser, DiskstatsParser, IostatJsonParser):
            samples, _ = parse_with(cls, head)
            assert samples == [], (name, cls.name)


# --- real sysstat 12.6 outputs (captured on the development machine) ------------------------

def test_real_x_t_c_locale_and_iso_agree() -> None:
    # Both runs were started together: `iostat -x -t 1 3` (C locale: "11/22/26 04:07:35")
    # and `S_TIME_FORMAT=ISO iostat -x -t -y 1 2` ("2026-11-22T04:07:35+0000").
    c_locale, p1 = parse_with(IostatParser, disk("real_sysstat12_x_t.txt"))
    iso, p2 = parse_with(IostatParser, disk("real_sysstat12_x_t_iso_y.txt"))
    assert not p1.warnings and not p2.warnings
    stamps_c = times(c_locale)
    stamps_iso = times(iso)
    assert all(s.t is not None for s in c_locale + iso)
    assert stamps_c == [1795320454.0, 1795320455.0, 1795320456.0]  # 2026-11-22 04:07:34 UTC
    assert stamps_iso == stamps_c[1:]
    w_c = series(c_locale, "disk_iops", device="vda", op="write")
    w_iso = series(iso, "disk_iops", device="vda", op="write")
    assert w_c == [825.22, 15799.0, 11583.0]
    assert w_iso == pytest.approx(w_c[1:], rel=0.01)
    cpu = [s for s in iso if s.metric == "cpu_ratio" and s.t == 1795320455.0]
    assert {s.labels["mode"]: s.value for s in cpu} == pytest.approx(
        {"user": 0.3214, "nice": 0.0, "system": 0.2041, "iowait": 0.2347, "steal": 0.0867,
         "idle": 0.1531})


def test_real_d_m_megabytes() -> None:
    samples, _ = parse_with(IostatParser, disk("real_sysstat12_d_m.txt"))
    second = [s for s in samples if s.elapsed == 2.0]
    assert one(second, "disk_iops", device="vda", op="total") == 15821.0
    assert one(second, "disk_bandwidth_bytes", device="vda", op="write") == pytest.approx(
        239.07 * MIB)
    assert len(samples) == 2 * 4  # tps + 3 rates; the MB_read totals are not emitted


def test_real_human_readable_h() -> None:
    # `iostat -h -x -y 1 1`: four groups per report, Device last, values with their unit.
    samples, parser = parse_with(IostatParser, disk("real_sysstat12_h_x_y.txt"))
    assert not parser.warnings
    assert {s.elapsed for s in samples} == {1.0}
    dev = {"device": "vda"}
    assert one(samples, "disk_bandwidth_bytes", op="read", **dev) == 20.0 * KIB
    assert one(samples, "disk_bandwidth_bytes", op="write", **dev) == pytest.approx(239.3 * MIB)
    assert one(samples, "disk_request_size_bytes", op="write", **dev) == pytest.approx(
        15.5 * KIB)
    assert one(samples, "disk_iops", op="write", **dev) == 15823.0
    assert one(samples, "disk_util_ratio", **dev) == pytest.approx(0.732)
    assert one(samples, "cpu_ratio", mode="user") == pytest.approx(0.32)


@pytest.mark.parametrize("name", ["real_sysstat12_x_d_h.txt", "real_sysstat12_d_h.txt"])
def test_real_human_readable_without_cpu_is_detected(name: str) -> None:
    # `iostat -xdh` / `-dh`: no avg-cpu block, and every header has Device last.
    text = disk(name)
    assert [c.name for c in detect(text)] == ["iostat"]
    samples, parser = parse_with(IostatParser, text)
    assert not parser.warnings and samples
    assert {s.elapsed for s in samples} == {1.0, 2.0}
    first = [s for s in samples if s.elapsed == 1.0]
    if name == "real_sysstat12_x_d_h.txt":
        # "     r/s     rkB/s ... Device" / " 3620.71     30.9M ... vda", "%util ... 17.9%"
        assert one(first, "disk_iops", op="read", device="vda") == 3620.71
        assert one(first, "disk_bandwidth_bytes", op="read", device="vda") == pytest.approx(
            30.9 * MIB)
        assert one(first, "disk_util_ratio", device="vda") == pytest.approx(0.179)
    else:
        # "  6379.38        31.0M        24.3M ... vda"
        assert one(first, "disk_iops", op="total", device="vda") == 6379.38
        assert one(first, "disk_bandwidth_bytes", op="write", device="vda") == pytest.approx(
            24.3 * MIB)


def test_real_short_s_x() -> None:
    samples, _ = parse_with(IostatParser, disk("real_sysstat12_s_x_y.txt"))
    dev = {"device": "vda", "op": "total"}
    assert one(samples, "disk_iops", **dev) == 10926.0
    assert one(samples, "disk_bandwidth_bytes", **dev) == 174592 * KIB
    assert one(samples, "disk_await_seconds", **dev) == pytest.approx(0.06e-3)
    assert one(samples, "disk_request_size_bytes", **dev) == pytest.approx(15.98 * KIB)
    assert one(samples, "disk_queue_depth", device="vda") == 0.64


def test_real_json_x_t_iso() -> None:
    samples, parser = parse_with(IostatJsonParser, disk("real_sysstat12_json_x_t_iso.json"))
    assert not parser.warnings
    assert times(samples) == [1795320456.0, 1795320457.0]
    last = [s for s in samples if s.t == 1795320457.0]
    dev = {"device": "vda"}
    assert one(last, "disk_iops", op="write", **dev) == 10896.0
    assert one(last, "disk_bandwidth_bytes", op="write", **dev) == 174340 * KIB
    assert one(last, "disk_request_size_bytes", op="discard", **dev) == 16 * KIB
    assert one(last, "disk_util_ratio", **dev) == pytest.approx(0.572)
    assert one(last, "cpu_ratio", mode="steal") == pytest.approx(0.1683)
    # The %rrqm figure ("rrqm": 0.25 in the first entry) is not taken for merges per second.
    first = [s for s in samples if s.t == 1795320456.0]
    assert one(first, "disk_merged_iops", op="read", **dev) == 6.24
    assert [s.elapsed for s in pick(samples, "disk_queue_depth")] == [1.0, 2.0]


def test_json_samples_flow_before_the_document_ends() -> None:
    lines = disk("real_sysstat12_json_x_t_iso.json").splitlines()
    parser = IostatJsonParser()
    at = next(i for i, line in enumerate(lines) if '"disk_device"' in line)
    early: list[Sample] = []
    for line in lines[:at + 1]:
        early.extend(parser.feed(line))
    assert one(early, "disk_iops", device="vda", op="read") == 2497.33
    assert len(pick(early, "cpu_ratio")) == 6


def test_json_grepped_disk_lines() -> None:
    text = disk("real_sysstat12_json_x_t_iso.json")
    grepped = "\n".join(line for line in text.splitlines() if '"disk_device"' in line)
    samples, _ = parse_with(IostatJsonParser, grepped)
    assert series(samples, "disk_iops", device="vda", op="write") == [839.67, 10896.0]
    assert elapsed_values(samples) == [1.0, 2.0]


def test_real_json_d_y() -> None:
    samples, _ = parse_with(IostatJsonParser, disk("real_sysstat12_json_d_y.json"))
    assert {s.labels["op"] for s in pick(samples, "disk_bandwidth_bytes")} == {
        "read", "write", "discard"}
    assert len(pick(samples, "disk_iops", op="total")) == 2
    assert all(s.t is None and s.elapsed in (1.0, 2.0) for s in samples)


def test_json_sysstat11_extended_keys() -> None:
    # sysstat 11.0-11.4 printed the extended stats with these keys (its write_json_ext_stat
    # format): no "/s", "rrqm" meaning merges per second and avgrq-sz in sectors. Built from
    # that format with the values of the rendered 10.x fixture's first report.
    line = ('{"disk_device": "vda", "rrqm": 0.00, "wrqm": 30.00, "r": 29319.00, "w": 9053.00, '
            '"rkB": 117352.00, "wkB": 142944.00, "avgrq-sz": 13.57, "avgqu-sz": 7.08, '
            '"await": 0.18, "r_await": 0.04, "w_await": 0.63, "svctm": 0.02, "util": 88.00}')
    samples, _ = parse_with(IostatJsonParser, line)
    dev = {"device": "vda"}
    assert one(samples, "disk_merged_iops", op="write", **dev) == 30.0
    assert one(samples, "disk_iops", op="read", **dev) == 29319.0
    assert one(samples, "disk_request_size_bytes", op="total", **dev) == pytest.approx(
        13.57 * 512)
    assert one(samples, "disk_service_time_seconds", **dev) == pytest.approx(0.02e-3)


# --- diskstats, and the capture rendered in the sysstat 10.x / 11.x layouts -----------------

def test_diskstats_capture() -> None:
    samples, parser = parse_with(DiskstatsParser, disk("diskstats_dd_direct.txt"))
    assert not parser.warnings
    # loop0-7 and zram0 never did I/O: skipped, as iostat does.
    assert {s.labels["device"] for s in samples} == {"vda"}
    assert times(samples) == [1795320427.315, 1795320428.315, 1795320429.315,
                                              1795320430.315]
    assert elapsed_values(samples) == pytest.approx([1.0, 2.0, 3.0, 4.0])
    first = [s for s in samples if s.t == 1795320427.315]
    dev = {"device": "vda"}
    # vda 4313079 -> 4342398 reads, 1424087 -> 1433140 writes in 1.000 s.
    assert one(first, "disk_iops", op="read", **dev) == pytest.approx(29319.0)
    assert one(first, "disk_iops", op="write", **dev) == pytest.approx(9053.0)
    assert one(first, "disk_bandwidth_bytes", op="write", **dev) == pytest.approx(
        (23131160 - 22845272) * 512)
    assert one(first, "disk_await_seconds", op="write", **dev) == pytest.approx(
        (428834 - 423153) / 9053 / 1000)
    assert one(first, "disk_queue_depth", **dev) == pytest.approx((611099 - 604014) / 1000)
    assert one(first, "disk_util_ratio", **dev) == pytest.approx(0.88)
    assert one(first, "disk_iops", op="flush", **dev) == pytest.approx(1.0)
    assert one(first, "disk_await_seconds", op="flush", **dev) == pytest.approx(0.088)
    assert len(first) == 19


#: What iostat's 2 decimals allow per metric (kB/s and kB to 5 B, ms to 5 us ...).
_PRINT_TOLERANCE = {
    "disk_iops": 0.006, "disk_merged_iops": 0.006, "disk_bandwidth_bytes": 5.2,
    "disk_request_size_bytes": 5.2, "disk_await_seconds": 5.1e-6, "disk_queue_depth": 0.006,
    "disk_util_ratio": 6e-5,
}


@pytest.mark.parametrize(("rendered", "columns"), [
    ("rendered_sysstat10_x_t.txt", 10), ("rendered_sysstat11_x.txt", 12)])
def test_rendered_old_layouts_match_diskstats(rendered: str, columns: int) -> None:
    """The same capture through the diskstats maths and through the old -x layouts."""
    from_proc, _ = parse_with(DiskstatsParser, disk("diskstats_dd_direct.txt"))
    from_iostat, parser = parse_with(IostatParser, disk(rendered))
    assert not parser.warnings
    compared = 0
    for s in from_iostat:
        if s.metric in ("cpu_ratio", "disk_service_time_seconds") or s.labels.get("op") == "total":
            continue
        match = [p for p in from_proc if p.metric == s.metric and p.labels == s.labels
                 and p.elapsed == pytest.approx(s.elapsed)]
        assert len(match) == 1, s
        tolerance = _PRINT_TOLERANCE[s.metric]
        assert s.value == pytest.approx(match[0].value, rel=1e-9, abs=tolerance), s
        compared += 1
    assert compared == 4 * columns


def test_rendered_sysstat10_en_us_timestamps() -> None:
    # "11/22/2026 04:07:07 AM" (en_US -t, sysstat 10.x "Device:" header): UTC epoch seconds.
    samples, _ = parse_with(IostatParser, disk("rendered_sysstat10_x_t.txt"))
    assert times(samples) == [1795320427.0, 1795320428.0, 1795320429.0,
                                              1795320430.0]
    dev = {"device": "vda"}
    first = [s for s in samples if s.t == 1795320427.0]
    assert one(first, "disk_await_seconds", op="total", **dev) == pytest.approx(0.18e-3)
    assert one(first, "disk_request_size_bytes", op="total", **dev) == pytest.approx(13.57 * 512)
    assert one(first, "disk_service_time_seconds", **dev) == pytest.approx(0.02e-3)
    assert one(first, "disk_queue_depth", **dev) == 7.08


@pytest.mark.parametrize(("headed", "grepped"), [
    ("rendered_sysstat10_x_t.txt", "rendered_sysstat10_x_grep_vda.txt"),
    ("rendered_sysstat11_x.txt", "rendered_sysstat11_x_grep_vda.txt"),
])
def test_headerless_lines_map_like_headed_ones(headed: str, grepped: str) -> None:
    with_header, _ = parse_with(IostatParser, disk(headed))
    without, _ = parse_with(IostatParser, disk(grepped))
    key = [(s.metric, tuple(sorted(s.labels.items())), s.elapsed, s.value)
           for s in with_header if s.metric != "cpu_ratio"]
    assert [(s.metric, tuple(sorted(s.labels.items())), s.elapsed, s.value)
            for s in without] == key


def test_diskstats_without_markers_and_resets() -> None:
    text = disk("diskstats_dd_direct.txt")
    bare = "\n".join(line for line in text.splitlines() if not line.startswith("---"))
    samples, _ = parse_with(DiskstatsParser, bare)
    assert all(s.t is None for s in samples)
    assert elapsed_values(samples) == [1.0, 2.0, 3.0, 4.0]
    # With a receive time per line, snapshots take the time of their first line.
    timed = DiskstatsParser()
    got: list[Sample] = []
    for k, block in enumerate(text.split("--- ")[1:]):
        for line in block.splitlines()[1:]:
            got.extend(timed.feed(line, 1000.0 + 2 * k))
    assert {s.t for s in got} == {1002.0, 1004.0, 1006.0, 1008.0}
    assert one([s for s in got if s.t == 1002.0], "disk_iops", device="vda", op="read") == (
        pytest.approx(29319.0 / 2))
    assert elapsed_values(got) == [1.0, 2.0, 3.0, 4.0]
    # Snapshots received in one block (same t): the snapshot count gives Δt (1 s each).
    same_t, same_parser = parse_with(DiskstatsParser, bare, t=5000.0)
    assert not same_parser.warnings
    assert one([s for s in same_t if s.elapsed == 1.0], "disk_iops", device="vda",
               op="read") == pytest.approx(29319.0)
    # A counter going backwards (device re-created) is a new baseline, with a warning.
    line_a = " 8 0 sdz 100 0 800 10 100 0 800 10 0 20 20"
    line_b = " 8 0 sdz 5 0 40 1 5 0 40 1 0 2 2"
    line_c = " 8 0 sdz 15 0 120 2 5 0 40 1 0 3 3"
    samples, reset = parse_with(DiskstatsParser,
                                f"--- 10\n{line_a}\n--- 11\n{line_b}\n--- 12\n{line_c}")
    assert len(reset.warnings) == 1 and "backwards" in reset.warnings[0].reason
    # 11-counter lines (kernels before 4.18): read and write only.
    assert {s.labels.get("op") for s in samples} == {"read", "write", None}
    assert one(samples, "disk_iops", device="sdz", op="read") == 10.0
    assert one(samples, "disk_request_size_bytes", device="sdz", op="read") == 80 * 512 / 10


# --- clocks, locales and robustness ----------------------------------------------------------

@pytest.mark.parametrize(("text", "epoch"), [
    ("2026-11-22T03:48:51+0000", 1795319331.0),
    ("2026-11-22T09:18:51+0530", 1795319331.0),
    ("11/22/2026 03:48:51 AM", 1795319331.0),
    ("11/22/2026 03:48:51 PM", 1795319331.0 + 12 * 3600),
    ("11/22/2026 12:48:51 AM", 1795319331.0 - 3 * 3600),
    ("11/22/26 03:48:51", 1795319331.0),
    ("22/11/26 03:48:51", 1795319331.0),
    ("22.11.2026 03:48:51", 1795319331.0),
    ("2026-11-22 03:48:51", 1795319331.0),
    ("13/13/26 03:48:51", None),
])
def test_report_clock_formats(text: str, epoch: float | None) -> None:
    assert ReportClock().parse(text) == epoch


def test_report_clock_learns_day_first() -> None:
    clock = ReportClock()
    clock.learn_date("22/11/26")  # the banner of an en_GB iostat
    assert clock.parse("05/11/26 00:00:00") == ReportClock().parse("2026-11-05T00:00:00")


def test_decimal_comma_locale_and_unreadable_values() -> None:
    text = ("avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
            "           1,93    0,00    1,13    0,23    0,00   96,71\n\n"
            "Device:         rrqm/s   wrqm/s     r/s     w/s    rMB/s    wMB/s avgrq-sz avgqu-sz"
            "   await r_await w_await  svctm  %util\n"
            "sda               0,39    53,89   56,27    6,38     1,25     0,49    56,67     0,07"
            "    1,04    0,77    3,43   0,47   2,97\n"
            "sdb               0,39    53,89   56,27    6,38     1,25     0,49    56,67     0,07"
            "    1,04    0,77    3,43   0,47   bad\n")
    samples, parser = parse_with(IostatParser, text)
    assert one(samples, "cpu_ratio", mode="idle") == pytest.approx(0.9671)
    assert one(samples, "disk_bandwidth_bytes", device="sda", op="read") == 1.25 * MIB
    assert one(samples, "disk_iops", device="sda", op="read") == 56.27
    assert not pick(samples, "disk_iops", device="sdb")
    assert len(parser.warnings) == 1


def test_bad_avg_cpu_value_warns_and_the_next_report_reads() -> None:
    # The values line under avg-cpu: is mapped by a plan kept per header; a value that is not
    # a number (in a mode kept) drops that line with a warning, and the same header's next
    # report reads as before (its samples with their own labels, values and times).
    header = "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
    text = ("2026-11-22T04:26:16+0000\n" + header +
            "          32.35    0.00   26.96    oops   14.71   25.00\n\n"
            "2026-11-22T04:26:17+0000\n" + header +
            "          31.68    0.00   30.20    1,98   14.36   21.78%\n\n")
    samples, parser = parse_with(IostatParser, text)
    assert [w.reason for w in parser.warnings] == ["bad avg-cpu value"]
    cpu = [s for s in samples if s.metric == "cpu_ratio"]
    assert [(s.labels, s.value) for s in cpu] == [
        ({"mode": "user"}, pytest.approx(0.3168)), ({"mode": "nice"}, 0.0),
        ({"mode": "system"}, pytest.approx(0.302)), ({"mode": "iowait"}, pytest.approx(0.0198)),
        ({"mode": "steal"}, pytest.approx(0.1436)), ({"mode": "idle"}, pytest.approx(0.2178))]
    assert {s.t for s in cpu} == {1795321577.0}  # (2026-11-22T04:26:17Z)


def test_interleaved_other_output_is_ignored() -> None:
    grepped = disk("seed003_iostat_x_grep_2copy_qd8_aio.txt").splitlines()
    noise = ["[2023-08-30 21:35:57.886520] fbbench.cc:  71:print_stats: last second processed: 3",
             "    1      16        16         0         0         0           -           0",
             "12 34 56 78 90 12", "Device", "avg-cpu:", "---", "cpu_stat:", ""]
    mixed = [x for pair in zip(grepped, noise, strict=False) for x in pair] + grepped[len(noise):]
    clean, _ = parse_with(IostatParser, "\n".join(grepped))
    samples, _ = parse_with(IostatParser, "\n".join(mixed))
    assert [(s.metric, s.value) for s in samples] == [(s.metric, s.value) for s in clean]


def test_another_programs_table_is_not_iostat() -> None:
    """Real header-less iostat lines made here (-x and -d, grepped) with devfreq transition
    tables between them whose rows have every header-less field count (6 to 23): only the
    iostat lines give samples, the same as alone; a table is no device line even after a
    real header (its rows come after the header's blank line)."""
    mixed = disk("devfreq_mixed_with_grepped_iostat.txt")
    iostat_only = "\n".join(line for line in mixed.splitlines() if line.startswith("vda"))
    alone, _ = parse_with(IostatParser, iostat_only)
    samples, parser = parse_with(IostatParser, mixed)
    assert {s.labels.get("device") for s in samples} == {"vda"}
    assert [(s.metric, s.labels, s.value) for s in samples] == [
        (s.metric, s.labels, s.value) for s in alone]
    assert len(alone) == 3 * 19 + 3 * 4 and not parser.warnings
    assert series(samples, "disk_iops", op="write", device="vda") == [946.40, 366.00, 5.00]
    assert detect(mixed)[0] is IostatParser
    # after a real -d report (header, rows, blank line), a table of as many fields is skipped
    headed = disk("real_sysstat12_d_m.txt")
    table = "\n".join(line for line in mixed.splitlines()[:40] if not line.startswith("vda"))
    before, _ = parse_with(IostatParser, headed)
    after, _ = parse_with(IostatParser, headed + "\n" + table + "\n")
    assert {s.labels.get("device") for s in after} == {s.labels.get("device") for s in before}
    assert len(after) == len(before)


@pytest.mark.parametrize(("line", "read"), [
    ("nvme1n1 1.00 2.00 3.00 4.00 5.00", False),  # -d: totals are integers
    ("nvme1n1 1.00 2.00 3.00 4 5", True),
    ("sda 1,00 2,00 3,00 4 5", True),  # a decimal comma locale
    ("528000000: 0.00 0.00 0.00 15 814526", False),  # a row label, not a device
    ("*2112000000: 0.00 0.00 0.00 15 814526", False),
    ("Mem: 1.00 2.00 3.00 4 5", False),
    ("12:00:01 1.00 2.00 3.00 4 5", False),  # sar/mpstat: a time first
    ("vg0-lv_root 1.00 2.00 3.00 4 5", True),  # iostat -N
    ("cciss/c0d0 1.00 2.00 3.00 4 5", True),
    ("sda 1.00 2.00 3.00 4.00 5.00 6.00 7.00", True),  # -s -x (8 fields, all %.2f)
    ("sda 1.00 2.00 3.00 4.00 5 6 7", True),  # -d with discard
    ("sda 1.00 2.00 3.00 4.00 5 6 7.00", False),
])
def test_headerless_line_shapes(line: str, read: bool) -> None:
    samples, _ = parse_with(IostatParser, line)
    assert bool(samples) is read


_LINES = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.sampled_from([
            "Device            r/s     w/s", "avg-cpu:  %user", "--- 12", "cpu_stat:  user_stat",
            "Device   tps       KB_read/s", '{"disk_device": "x", "r/s": "nan"}',
            '"avg-cpu":  {"user": 1e999}', " 8 0 sda 1 2 3 4 5 6 7 8 9 10 11",
            "nvme0n1 1 2 3 4 5", "11/22/2026 99:99:99 PM", "vda nan inf -inf 1 2 3 4 5",
        ]),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(_LINES)
def test_garbage_never_breaks_the_parsers(lines: list[str]) -> None:
    for cls in (IostatParser, IostatJsonParser, DiskstatsParser, SpdkIostatParser):
        _samples, parser = parse_with(cls, "\n".join(lines))
        assert not [w for w in parser.warnings if "internal" in w.reason], parser.warnings
