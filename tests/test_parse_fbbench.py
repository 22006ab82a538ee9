"""Golden tests of the fbbench parser over the 25 runs of seed 003 (tests/fixtures/fbbench/,
README.md there maps each file to the report's section). Expected values are the figures the
report's author quotes in the prose after the runs (cited per test) and fbbench's own summary
lines, which the per-second samples must reproduce."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers import registry
from benchtui.parsers.fbbench import FbbenchParser, parse_command
from tests.helpers import FIXTURES, SEEDS, one, parse_with, pick

RUNS = sorted((FIXTURES / "fbbench").glob("*.txt"))
US = 1e-6


def run(name: str) -> tuple[list[Sample], FbbenchParser]:
    samples, parser = parse_with(FbbenchParser, (FIXTURES / "fbbench" / name).read_text())
    assert isinstance(parser, FbbenchParser)
    return samples, parser


def ops(name: str) -> float:
    return one(run(name)[0], "iops", SUMMARY)


def stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()


def test_there_are_25_runs() -> None:
    assert len(RUNS) == 25


@pytest.mark.parametrize("path", RUNS, ids=[p.stem for p in RUNS])
def test_every_run_agrees_with_its_own_summary(path: Path) -> None:
    text = path.read_text()
    samples, parser = parse_with(FbbenchParser, text)
    assert not parser.warnings
    command = text.split("\n")[0]
    seconds = int(re.search(r" -k (\d+)", command).group(1))  # type: ignore[union-attr]
    op = "write" if "-T write" in command else "rpc"
    printed = re.search(r"^ops is: (\d+), average latency is ([0-9.]+)us", text, re.MULTILINE)
    assert printed is not None
    per_second = pick(samples, "iops", INTERVAL, job="fbbench", op=op)
    assert [s.elapsed for s in per_second] == [float(i) for i in range(1, seconds + 1)]
    # "ops is" = total completed // seconds, and the total is the sum of the per-second counts.
    total = sum(s.value for s in per_second)
    assert int(total) // seconds == int(printed.group(1)) == one(samples, "iops", SUMMARY, op=op)
    # The "average latency" is 1e6 / ops: derived, labelled so.
    derived = one(samples, "latency_mean_seconds", SUMMARY, measure="ops_derived")
    assert derived == pytest.approx(float(printed.group(2)) * US)
    assert derived == pytest.approx(1 / int(printed.group(1)), rel=1e-6)
    # Histogram: min <= p10 <= ... <= p99.9 <= max, all in microseconds.
    quantiles = {s.labels["quantile"]: s.value
                 for s in pick(samples, "latency_seconds", SUMMARY, measure="lat")}
    assert list(quantiles) == ["0.1", "0.5", "0.9", "0.95", "0.99", "0.999"]
    values = [one(samples, "latency_min_seconds", SUMMARY), *quantiles.values(),
              one(samples, "latency_max_seconds", SUMMARY)]
    assert values == sorted(values)
    assert 5 * US < values[0] < values[-1] < 0.1
    # Write runs move -S 4096 bytes per operation.
    bandwidth = pick(samples, "bandwidth_bytes", INTERVAL)
    if op == "write":
        assert [b.value for b in bandwidth] == [s.value * 4096 for s in per_second]
    else:
        assert bandwidth == []
    # The summary is timed by the last per-second line (same poller call), elapsed = seconds.
    assert {s.t for s in pick(samples, "iops", SUMMARY)} == {per_second[-1].t}
    assert {s.elapsed for s in samples if s.kind == SUMMARY} == {float(seconds)}


def test_rpc_qd1_per_second_lines_and_clock() -> None:
    samples, _ = run("fbbench_rpc_qd1.txt")
    per_second = pick(samples, "iops", INTERVAL, op="rpc")
    # "[2023-08-29 14:57:12.138883] ...print_stats: *NOTICE*: last second processed: 86153"
    assert per_second[0].value == 86153 and per_second[0].elapsed == 1.0
    assert per_second[0].t == pytest.approx(stamp("2023-08-29 14:57:12.138883"))  # UTC assumed
    assert per_second[-1].value == 89183 and per_second[-1].elapsed == 30.0
    assert per_second[-1].t == pytest.approx(stamp("2023-08-29 14:57:41.207042"))
    # Seed 003 after this run: "本版本的延迟从18us降低到11.2us，ops从54832提升到了89192" (the
    # output line says 89182: the prose has a typo).
    assert one(samples, "iops", SUMMARY) == 89182
    latency = one(samples, "latency_mean_seconds", SUMMARY, measure="ops_derived")
    assert round(latency / US, 1) == 11.2
    assert one(samples, "latency_seconds", SUMMARY, quantile="0.5") == pytest.approx(11.032381 * US)
    assert one(samples, "latency_max_seconds", SUMMARY) == pytest.approx(10163 * US)


def test_zone_of_the_spdk_stamps_is_learnt_from_the_receive_time() -> None:
    """Live, on a host in UTC+8, lines received 50 ms after they were logged."""
    parser = FbbenchParser(source="live")
    samples: list[Sample] = []
    for line in (FIXTURES / "fbbench" / "fbbench_rpc_qd1.txt").read_text().split("\n"):
        m = re.match(r"\[(\S+ \S+)\]", line)
        received = stamp(m.group(1)) - 8 * 3600 + 0.05 if m else None
        samples.extend(parser.feed(line, received))
    first = pick(samples, "iops", INTERVAL)[0]
    assert first.t == pytest.approx(stamp("2023-08-29 14:57:12.138883") - 8 * 3600)


def test_queue_depth_makes_the_printed_average_latency_meaningless() -> None:
    """fbbench's "average latency" is 1e6/ops: at QD 1 it is close to the histogram; at QD 8+ it
    is several times below the histogram's median. Both are kept, labelled differently."""
    for name in ("fbbench_rpc_qd1.txt", "fbbench_1rep_qd1_diffobj_aio.txt"):
        samples, _ = run(name)
        derived = one(samples, "latency_mean_seconds", SUMMARY, measure="ops_derived")
        assert one(samples, "latency_min_seconds", SUMMARY) < derived
        assert derived < one(samples, "latency_seconds", SUMMARY, quantile="0.99")
    for name in ("fbbench_rpc_qd8.txt", "fbbench_1rep_qd8_aio.txt", "fbbench_2rep_qd64_nvme.txt"):
        samples, _ = run(name)
        derived = one(samples, "latency_mean_seconds", SUMMARY, measure="ops_derived")
        assert one(samples, "latency_seconds", SUMMARY, quantile="0.5") > 5 * derived
    # QD 8 rpc: "ops is: 301271, average latency is 3.319271us", median 26.087619us.
    samples, _ = run("fbbench_rpc_qd8.txt")
    assert one(samples, "latency_mean_seconds", SUMMARY) == pytest.approx(3.319271 * US)
    assert one(samples, "latency_seconds", SUMMARY, quantile="0.5") == pytest.approx(26.087619 * US)


def test_figures_quoted_in_the_report() -> None:
    # "在一副本、写相同对象的情况下，延迟达到28us" (1 replica, same object, nvme: 28.371209us)
    samples, _ = run("fbbench_1rep_qd1_sameobj_nvme.txt")
    assert int(one(samples, "latency_mean_seconds", SUMMARY) / US) == 28
    # "三副本在写不同对象的情况下首次跨入100us，最优情况达到了59.4us" (3 replicas, nvme)
    samples, _ = run("fbbench_3rep_qd1_diffobj_nvme.txt")
    assert round(one(samples, "latency_mean_seconds", SUMMARY) / US, 1) == 59.4
    samples, _ = run("fbbench_3rep_qd1_diffobj_aio.txt")
    assert one(samples, "latency_mean_seconds", SUMMARY) < 100 * US
    # "两种情况下，nvme bdev会比aio bdev快38%" (1 replica, QD 8)
    gain = ops("fbbench_1rep_qd8_nvme.txt") / ops("fbbench_1rep_qd8_aio.txt")
    assert round((gain - 1) * 100) == 38
    # 1 and 2 replicas, QD 1: "在所有情况下，nvme bdev都比aio bdev快12%-15%左右" (roughly).
    for kind in ("1rep_qd1_diffobj", "1rep_qd1_sameobj", "2rep_qd1_sameobj", "2rep_qd1_diffobj"):
        gain = ops(f"fbbench_{kind}_nvme.txt") / ops(f"fbbench_{kind}_aio.txt")
        assert 1.10 < gain < 1.19, kind
    # 3 replicas: "在写相同对象时几乎没区别，但在写不同对象时有10%左右差距"
    same = ops("fbbench_3rep_qd1_sameobj_nvme.txt") / ops("fbbench_3rep_qd1_sameobj_aio.txt")
    assert abs(same - 1) < 0.01
    diff = ops("fbbench_3rep_qd1_diffobj_nvme.txt") / ops("fbbench_3rep_qd1_diffobj_aio.txt")
    assert 1.05 < diff < 1.15
    # "我们的单线程测试，max通常都到了10000us以上，甚至20000us" (QD 1 runs)
    maxima = [one(run(p.name)[0], "latency_max_seconds", SUMMARY) / US
              for p in RUNS if re.search(r"_qd1[_.]", p.name)]
    assert len(maxima) == 13
    assert sum(m > 10000 for m in maxima) == 11 and max(maxima) == 26514


def test_other_tools_lines_in_the_same_block_are_skipped() -> None:
    for name, foreign in (("fbbench_2rep_qd8_aio.txt", "nvme1n1"),
                          ("fbbench_2rep_qd8_nvme.txt", "test1n1")):
        samples, parser = run(name)
        assert not parser.warnings
        assert parser.unknown_lines >= sum(
            foreign in line for line in (FIXTURES / "fbbench" / name).read_text().split("\n"))
        assert len(pick(samples, "iops", INTERVAL)) == 10


def test_whole_seed_003() -> None:
    text = (SEEDS / "003_434751a8f404b5a1.txt").read_text(encoding="utf-8")
    assert "fbbench" in [c.name for c in registry.detect(text)]
    samples, parser = parse_with(FbbenchParser, text)
    assert not parser.warnings
    summary = pick(samples, "iops", SUMMARY)
    assert len(summary) == 25
    assert [s.labels["op"] for s in summary[:3]] == ["rpc", "rpc", "write"]
    assert {s.labels["op"] for s in summary[2:]} == {"write"}
    assert [s.labels.get("run") for s in summary] == [None] + [str(i) for i in range(2, 26)]
    assert len(pick(samples, "iops", INTERVAL)) == sum(
        int(m) for m in re.findall(r"fbbench -o .* -k (\d+)", text))


def test_without_the_command_line() -> None:
    text = (FIXTURES / "fbbench" / "fbbench_1rep_qd8_nvme.txt").read_text()
    body = "\n".join(text.split("\n")[1:])
    samples, _ = parse_with(FbbenchParser, body)
    assert {s.labels["op"] for s in samples} == {"total"}
    assert pick(samples, "bandwidth_bytes") == []
    parser = FbbenchParser(source="live", op="write", io_size=4096)
    samples = parser.feed_text(body) + parser.finish()
    assert {s.labels["op"] for s in samples} == {"write"}
    assert len(pick(samples, "bandwidth_bytes", INTERVAL)) == 10


def test_command_options() -> None:
    assert parse_command("-o 172.31.77.144 -t 8001 -S 4096 -k 10 -m 0x8 -T write -Q 8") == {
        "o": "172.31.77.144", "t": "8001", "S": "4096", "k": "10", "m": "0x8", "T": "write",
        "Q": "8"}
    assert parse_command("-Trpc -S512")["T"] == "rpc"


def test_detection() -> None:
    for path in RUNS:
        assert "fbbench" in [c.name for c in registry.detect(path.read_text())]
    for seed in ("000_217b3b91532e58e6.txt", "001_82a32511c661f41a.txt",
                 "002_66b63c6d37b60dcd.txt", "004_b978dd79e6e350d7.txt"):
        assert FbbenchParser.detect((SEEDS / seed).read_text(encoding="utf-8")) == 0
