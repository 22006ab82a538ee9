"""Golden tests of the mbw and UnixBench parsers over the seed 000 outputs (checked against the
authors' tables) and an mbw run captured here (tests/fixtures/mem_cpu)."""

from __future__ import annotations

import re

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from benchtui.parsers import registry
from benchtui.parsers.mbw import MbwParser
from benchtui.parsers.unixbench import UnixBenchParser
from tests.helpers import SEEDS, fixture_text, one, parse_with, pick

MIB = 1024.0**2
SEED0 = "000_217b3b91532e58e6.txt"


def _fixture(name: str) -> str:
    return fixture_text(f"mem_cpu/{name}")


def _elapsed_column(text: str, method: str) -> list[float]:
    return [float(x) for x in re.findall(
        rf"^\d+\s+Method: {method}\s+Elapsed: ([\d.]+)", text, re.MULTILINE)]


# --- mbw -------------------------------------------------------------------------------------

# Seed 000 "内存测试", table "结论": MEMCPY AVG 7578.348 MiB/s (物理机) and 6254.520 MiB/s (虚拟机);
# DUMB and MCBLOCK averages from the AVG lines under it.
@pytest.mark.parametrize(("name", "avg"), [
    ("mbw_seed000_physical.txt", {"MEMCPY": 7578.348, "DUMB": 2992.404, "MCBLOCK": 5425.378}),
    ("mbw_seed000_vm.txt", {"MEMCPY": 6254.520, "DUMB": 2825.744, "MCBLOCK": 5440.575}),
])
def test_mbw_seed000(name: str, avg: dict[str, float]) -> None:
    text = _fixture(name)
    samples, parser = parse_with(MbwParser, text)
    assert not parser.warnings
    for method, value in avg.items():
        assert one(samples, "mem_bandwidth_bytes", SUMMARY, method=method) == pytest.approx(
            value * MIB)
        assert len(pick(samples, "mem_bandwidth_bytes", INTERVAL, method=method)) == 10
    assert all(s.t is None for s in samples)
    # elapsed: the runs' Elapsed column added up, across the methods in order
    memcpy = _elapsed_column(text, "MEMCPY")
    runs = pick(samples, "mem_bandwidth_bytes", INTERVAL, method="MEMCPY")
    assert runs[0].elapsed == pytest.approx(memcpy[0])
    assert runs[-1].elapsed == pytest.approx(sum(memcpy))
    avg_memcpy = pick(samples, "mem_bandwidth_bytes", SUMMARY, method="MEMCPY")[0]
    assert avg_memcpy.elapsed == pytest.approx(sum(memcpy))
    total = sum(memcpy) + sum(_elapsed_column(text, "DUMB")) + sum(
        _elapsed_column(text, "MCBLOCK"))
    assert pick(samples, "mem_bandwidth_bytes", SUMMARY, method="MCBLOCK")[0].elapsed == (
        pytest.approx(total))


def test_mbw_seed000_first_runs() -> None:
    samples, _ = parse_with(MbwParser, _fixture("mbw_seed000_physical.txt"))
    # "0       Method: MEMCPY  Elapsed: 0.07964        MiB: 512.00000  Copy: 6429.172 MiB/s"
    first = pick(samples, "mem_bandwidth_bytes", INTERVAL, method="MEMCPY")[0]
    assert first.value == pytest.approx(6429.172 * MIB) and first.elapsed == 0.07964
    # "9       Method: MCBLOCK Elapsed: 0.09401        MiB: 512.00000  Copy: 5446.403 MiB/s"
    last = pick(samples, "mem_bandwidth_bytes", INTERVAL, method="MCBLOCK")[-1]
    assert last.value == pytest.approx(5446.403 * MIB)


def test_mbw_a_new_invocation_restarts_elapsed() -> None:
    seed = (SEEDS / SEED0).read_text(encoding="utf-8")
    samples, _ = parse_with(MbwParser, seed)
    avgs = pick(samples, "mem_bandwidth_bytes", SUMMARY, method="MEMCPY")
    assert [s.value for s in avgs] == pytest.approx([7578.348 * MIB, 6254.520 * MIB])
    runs = pick(samples, "mem_bandwidth_bytes", INTERVAL, method="MEMCPY")
    # the first run of each invocation: "Elapsed: 0.07964" (physical), "0.08215" (VM)
    assert [runs[0].elapsed, runs[10].elapsed] == [0.07964, 0.08215]


def test_mbw_local_capture() -> None:
    text = _fixture("local_mbw-1.2.2_n3_64.txt")
    samples, parser = parse_with(MbwParser, text)
    assert not parser.warnings
    for method in ("MEMCPY", "DUMB", "MCBLOCK"):
        runs = pick(samples, "mem_bandwidth_bytes", INTERVAL, method=method)
        assert len(runs) == 3
        avg = one(samples, "mem_bandwidth_bytes", SUMMARY, method=method)
        # mbw's AVG is the MiB copied over the summed copy time: between the runs' extremes
        assert min(s.value for s in runs) <= avg <= max(s.value for s in runs)
    assert registry.detect(text) == [MbwParser]


# --- UnixBench -------------------------------------------------------------------------------

# Seed 000 "CPU 测试", table "结论": Dhrystone, Double-Precision Whetstone and File Copy (the
# 4096 bufsize line) for the physical machine and the VM.
@pytest.mark.parametrize(("name", "table", "run_seconds"), [
    ("unixbench_seed000_physical.txt",
     {"Dhrystone 2 using register variables": (34839728.4, "lps"),
      "Double-Precision Whetstone": (4368.3, "MWIPS"),
      "File Copy 4096 bufsize 8000 maxblocks": (1825548.4, "KBps")},
     17 * 60 + 48 * 60 + 22 - (17 * 60 + 19 * 60 + 7)),  # 17:19:07 - 17:48:22
    ("unixbench_seed000_vm.txt",
     {"Dhrystone 2 using register variables": (33964545.0, "lps"),
      "Double-Precision Whetstone": (4244.3, "MWIPS"),
      "File Copy 4096 bufsize 8000 maxblocks": (1788048.3, "KBps")},
     28 * 60 + 2),  # 10:03:04 - 10:31:06
])
def test_unixbench_seed000(name: str, table: dict[str, tuple[float, str]],
                           run_seconds: int) -> None:
    samples, parser = parse_with(UnixBenchParser, _fixture(name))
    assert not parser.warnings
    assert len(samples) == 12
    assert all(s.kind == SUMMARY and s.metric == "benchmark_score" for s in samples)
    assert all(s.elapsed == float(run_seconds) and s.labels["copies"] == "1" for s in samples)
    for test, (value, unit) in table.items():
        assert one(samples, "benchmark_score", SUMMARY, test=test, unit=unit) == value
    # "Shell Scripts (8 concurrent)  2900.6 lpm" (physical) / "2662.4 lpm" (VM)
    shell = one(samples, "benchmark_score", test="Shell Scripts (8 concurrent)", unit="lpm")
    assert shell in (2900.6, 2662.4)


def test_unixbench_without_header_uses_the_tests_own_time() -> None:
    lines = _fixture("unixbench_seed000_physical.txt").split("\n")
    samples, _ = parse_with(UnixBenchParser, "\n".join(lines[3:]))
    # "Dhrystone 2 using register variables 34839728.4 lps (10.0 s, 7 samples)"
    dhry = pick(samples, "benchmark_score", test="Dhrystone 2 using register variables")[0]
    assert dhry.elapsed == pytest.approx(70.0)


def test_unixbench_index_table_format() -> None:
    """The index table and score line. The seeds hold no index table and UnixBench is not a
    Debian package, so these lines are printed with UnixBench/Run's own formats (logIndexCat:
    "%-40s %12s %12s %8s", "%-40s %12.1f %12.1f %8.1f", "%-66s %8.1f", written as f-strings)
    from the seed's scores and UnixBench's baselines (116700.0 lps, 55.0 MWIPS)."""
    lines = _fixture("unixbench_seed000_physical.txt").split("\n")
    dhry, whet = "Dhrystone 2 using register variables", "Double-Precision Whetstone"
    index = [
        f"{'System Benchmarks Partial Index':<40} {'BASELINE':>12} {'RESULT':>12} {'INDEX':>8}",
        f"{dhry:<40} {116700.0:12.1f} {34839728.4:12.1f} {34839728.4 / 116700.0 * 10:8.1f}",
        f"{whet:<40} {55.0:12.1f} {4368.3:12.1f} {4368.3 / 55.0 * 10:8.1f}",
        f"{'Execl Throughput':<40} {'---':>12} {1291.3:12.1f} {'---':>8}",
        f"{'':<40} {'':>12} {'':>12} {'========':>8}",
        f"{'System Benchmarks Index Score (Partial Only)':<66} {1234.5:8.1f}",
        "",
    ]
    samples, parser = parse_with(UnixBenchParser, "\n".join(lines + index))
    assert not parser.warnings
    assert one(samples, "benchmark_score", test="Dhrystone 2 using register variables",
               unit="index") == pytest.approx(2985.4)
    assert one(samples, "benchmark_score", test="Double-Precision Whetstone",
               unit="index") == pytest.approx(794.2)
    assert not pick(samples, "benchmark_score", test="Execl Throughput", unit="index")
    assert one(samples, "benchmark_score", test="System Benchmarks Index Score (Partial Only)",
               unit="index") == 1234.5
    # the raw scores are still the result lines' (one each, not repeated from the table)
    assert one(samples, "benchmark_score", test="Dhrystone 2 using register variables",
               unit="lps") == 34839728.4


def test_unixbench_parallel_copies_label() -> None:
    text = _fixture("unixbench_seed000_vm.txt").replace(
        "running 1 parallel copy of tests", "running 8 parallel copies of tests")
    samples, _ = parse_with(UnixBenchParser, text)
    assert {s.labels["copies"] for s in samples} == {"8"}


def test_detection_on_seed000() -> None:
    seed = (SEEDS / SEED0).read_text(encoding="utf-8")
    chosen = registry.detect(seed)
    assert MbwParser in chosen and UnixBenchParser in chosen
    for name in ("002_66b63c6d37b60dcd.txt", "003_434751a8f404b5a1.txt",
                 "004_b978dd79e6e350d7.txt"):
        text = (SEEDS / name).read_text(encoding="utf-8")
        assert MbwParser.detect(text) == 0 and UnixBenchParser.detect(text) == 0, name
    samples, _ = parse_with(UnixBenchParser, seed)
    assert [s.value for s in pick(samples, "benchmark_score",
                                  test="Dhrystone 2 using register variables")] == [
        34839728.4, 33964545.0]
