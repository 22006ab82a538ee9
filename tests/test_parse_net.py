"""Golden tests of the iperf3 (text and JSON) and iperf 2 parsers over real outputs: the seeds'
runs, checked against the authors' tables, and outputs captured here (tests/fixtures/net)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from benchtui.parsers import registry
from benchtui.parsers.iperf2 import Iperf2Parser
from benchtui.parsers.iperf3 import Iperf3Parser
from benchtui.parsers.iperf3_json import Iperf3JsonParser
from tests.helpers import SEEDS, fixture_text, one, parse_with, pick

GBIT = 1e9 / 8  # bytes per second in one Gbit/s
MBIT = 1e6 / 8
MIB = 1024.0**2
SEED0 = "000_217b3b91532e58e6.txt"
SEED4 = "004_b978dd79e6e350d7.txt"

# Seed 000, "网络性能测试": the first "结论" table (physical/VM to physical/VM, Gbps) and the
# VPC "结论" table (物理机到物理机 9.19, 虚拟机到虚拟机 8.96, 虚拟机EIP到虚拟机EIP 5.83); the
# retransmit totals and receiver rates are from each run's own summary lines.
SEED0_RUNS = [
    # (file, Gbps in the authors' table, sender Retr, receiver Gbps, first interval)
    ("run1_vm_to_vm", 8.33, 13596, 8.33, (6.86, 32, 1.09 * MIB)),
    ("run2_vm_to_physical", 8.41, 14171, 8.41, (7.77, 31, 1.03 * MIB)),
    ("run3_physical_to_vm", 8.40, 818, 8.40, (7.24, 7, 1004 * 1024.0)),
    ("run4_physical_to_physical", 8.35, 4925, 8.35, (8.10, 17, 691 * 1024.0)),
    ("run5_vpc_physical_to_physical", 9.19, 4060, 9.19, (9.27, 476, 503 * 1024.0)),
    ("run6_vpc_vm_to_vm", 8.96, 2052, 8.96, (8.66, 30, 1.67 * MIB)),
    ("run7_vpc_eip_to_eip", 5.83, 1645, 5.83, (5.56, 212, 756 * 1024.0)),
]


def _fixture(name: str) -> str:
    return fixture_text(f"net/{name}")


def _no_internal_errors(parser: object) -> None:
    warnings = getattr(parser, "warnings", [])
    assert not [w for w in warnings if "internal" in w.reason], warnings


# --- iperf3 text: seed 000 ---------------------------------------------------------------

@pytest.mark.parametrize(("run", "table_gbps", "retr", "recv_gbps", "first"), SEED0_RUNS,
                         ids=[r[0] for r in SEED0_RUNS])
def test_iperf3_seed000_runs(run: str, table_gbps: float, retr: int, recv_gbps: float,
                             first: tuple[float, int, float]) -> None:
    samples, parser = parse_with(Iperf3Parser, _fixture(f"iperf3_seed000_{run}.txt"))
    assert not parser.warnings
    send = one(samples, "net_bandwidth_bytes", SUMMARY, stream="4", direction="send")
    assert send == pytest.approx(table_gbps * GBIT)
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="4",
               direction="receive") == pytest.approx(recv_gbps * GBIT)
    assert one(samples, "net_retransmits", SUMMARY, stream="4") == retr
    summaries = pick(samples, "net_bandwidth_bytes", SUMMARY)
    assert all(s.elapsed == 30.0 and s.t is None for s in summaries)

    intervals = pick(samples, "net_bandwidth_bytes", INTERVAL, stream="4", direction="send")
    assert [s.elapsed for s in intervals] == [float(i) for i in range(1, 31)]
    assert not pick(samples, "net_bandwidth_bytes", INTERVAL, direction="receive")
    gbps, first_retr, cwnd = first
    assert intervals[0].value == pytest.approx(gbps * GBIT)
    retrs = pick(samples, "net_retransmits", INTERVAL, stream="4")
    assert retrs[0].value == first_retr
    # iperf3's sender summary is the sum of the interval retransmits.
    assert sum(s.value for s in retrs) == retr
    assert pick(samples, "net_cwnd_bytes", INTERVAL, stream="4")[0].value == pytest.approx(cwnd)
    # the per-interval mean is the summary rate, to the rounding of the printed values
    mean = sum(s.value for s in intervals) / len(intervals)
    assert mean == pytest.approx(send, rel=0.01)


def test_iperf3_seed000_particular_lines() -> None:
    samples, _ = parse_with(Iperf3Parser, _fixture("iperf3_seed000_run1_vm_to_vm.txt"))
    # "[  4]  12.00-13.00  sec   994 MBytes  8.33 Gbits/sec  2623   1.08 MBytes"
    at13 = [s for s in samples if s.elapsed == 13.0 and s.kind == INTERVAL]
    values = {s.metric: s.value for s in at13}
    assert values["net_bandwidth_bytes"] == pytest.approx(8.33 * GBIT)
    assert values["net_retransmits"] == 2623
    assert values["net_cwnd_bytes"] == pytest.approx(1.08 * MIB)
    samples, _ = parse_with(Iperf3Parser, _fixture("iperf3_seed000_run2_vm_to_physical.txt"))
    # "[  4]   5.00-6.00   sec   945 MBytes  7.93 Gbits/sec  1829    512 KBytes"
    cwnd = [s for s in pick(samples, "net_cwnd_bytes") if s.elapsed == 6.0]
    assert [s.value for s in cwnd] == [512 * 1024.0]


def test_iperf3_whole_seed000_is_seven_runs() -> None:
    text = (SEEDS / SEED0).read_text(encoding="utf-8")
    samples, _ = parse_with(Iperf3Parser, text)
    sends = pick(samples, "net_bandwidth_bytes", SUMMARY, direction="send")
    assert [round(s.value / GBIT, 2) for s in sends] == [r[1] for r in SEED0_RUNS]
    assert len(pick(samples, "net_bandwidth_bytes", INTERVAL)) == 7 * 30


def test_iperf3_truncated_runs() -> None:
    lines = _fixture("iperf3_seed000_run1_vm_to_vm.txt").split("\n")
    cut = next(i for i, line in enumerate(lines) if "12.00-13.00" in line)
    # cut inside the interval line 12.00-13.00 ("... 994 MBy")
    text = "\n".join([*lines[:cut], lines[cut][:45]])
    samples, parser = parse_with(Iperf3Parser, text)
    assert len(pick(samples, "net_bandwidth_bytes", INTERVAL)) == 12
    assert not pick(samples, "net_bandwidth_bytes", SUMMARY)
    assert [w.reason for w in parser.warnings] == ["truncated or malformed iperf3 interval line"]
    # cut between the last interval and the summary
    sep = next(i for i, line in enumerate(lines) if line.startswith("- - -"))
    samples, parser = parse_with(Iperf3Parser, "\n".join(lines[:sep]))
    assert len(pick(samples, "net_bandwidth_bytes", INTERVAL)) == 30
    assert not pick(samples, "net_bandwidth_bytes", SUMMARY)
    assert not parser.warnings


def test_iperf3_live_times_are_the_times_passed() -> None:
    parser = Iperf3Parser(host="h1")
    out = []
    for i, line in enumerate(_fixture("iperf3_seed000_run1_vm_to_vm.txt").split("\n")):
        out.extend(parser.feed(line, 1_700_000_000.0 + i))
    assert {s.host for s in out} == {"h1"}
    first = pick(out, "net_bandwidth_bytes", INTERVAL)[0]
    assert first.t == 1_700_000_004.0 and first.elapsed == 1.0


# --- iperf3 text: captured here ------------------------------------------------------------

def test_iperf3_parallel_client_and_server() -> None:
    samples, parser = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_P2_client.txt"))
    assert not parser.warnings
    # "[SUM]   0.00-1.00   sec  3.18 GBytes  27.3 Gbits/sec    4"
    sums = pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum", direction="send")
    assert [s.value for s in sums] == pytest.approx([27.3 * GBIT, 27.6 * GBIT])
    assert [s.value for s in pick(samples, "net_retransmits", INTERVAL, stream="sum")] == [4, 0]
    # "[  7]   0.00-1.00   sec  1.53 GBytes  13.2 Gbits/sec    3   3.25 MBytes"
    assert pick(samples, "net_cwnd_bytes", INTERVAL, stream="7")[0].value == 3.25 * MIB
    assert not pick(samples, "net_cwnd_bytes", stream="sum")
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="sum",
               direction="receive") == pytest.approx(27.4 * GBIT)
    assert one(samples, "net_retransmits", SUMMARY, stream="sum") == 4

    samples, parser = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_P2_server.txt"))
    assert not parser.warnings
    # the 2.00-2.00 tail fragments are dropped: two intervals per stream
    for stream in ("5", "8", "sum"):
        got = pick(samples, "net_bandwidth_bytes", INTERVAL, stream=stream, direction="receive")
        assert [s.elapsed for s in got] == [1.0, 2.0]
    assert not pick(samples, "net_retransmits")
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="8",
               direction="receive") == pytest.approx(13.4 * GBIT)


def test_iperf3_reverse_mode() -> None:
    samples, _ = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_R_client.txt"))
    got = pick(samples, "net_bandwidth_bytes", INTERVAL)
    assert [(s.labels["direction"], s.value) for s in got] == [
        ("receive", pytest.approx(28.5 * GBIT)), ("receive", pytest.approx(24.0 * GBIT))]
    assert one(samples, "net_retransmits", SUMMARY, stream="5") == 17
    samples, _ = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_R_server.txt"))
    got = pick(samples, "net_bandwidth_bytes", INTERVAL)
    assert [s.labels["direction"] for s in got] == ["send", "send"]
    assert [s.value for s in pick(samples, "net_retransmits", INTERVAL)] == [17, 0]
    assert one(samples, "net_bandwidth_bytes", SUMMARY, direction="send") == pytest.approx(
        26.2 * GBIT)


def test_iperf3_timestamps_and_server_output() -> None:
    # --timestamps prefixes every line; --get-server-output appends the server's own lines,
    # which are skipped (they would repeat stream 5's series with the server's view).
    samples, parser = parse_with(Iperf3Parser,
                                 _fixture("local_iperf3-3.12_R_timestamps_client.txt"))
    assert not parser.warnings
    got = [(s.kind, s.labels.get("direction"), s.elapsed) for s in samples
           if s.metric == "net_bandwidth_bytes"]
    assert got == [(INTERVAL, "receive", 1.0), (INTERVAL, "receive", 2.0),
                   (SUMMARY, "send", 2.0), (SUMMARY, "receive", 2.0)]
    assert one(samples, "net_retransmits", SUMMARY, stream="5") == 16


def test_iperf3_udp() -> None:
    samples, parser = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_udp_client.txt"))
    assert not parser.warnings
    # The sender's "Total Datagrams" (380, 382) are not retransmits.
    assert not pick(samples, "net_retransmits")
    got = pick(samples, "net_bandwidth_bytes", INTERVAL, direction="send")
    assert [s.value for s in got] == pytest.approx([98.7 * MBIT, 100 * MBIT])
    assert [s.elapsed for s in got] == [1.01, 2.01]
    # "0.00-2.01 sec 23.7 MBytes 98.9 Mbits/sec 0.012 ms 4/762 (0.52%) receiver"
    assert one(samples, "net_jitter_seconds", SUMMARY, stream="5") == pytest.approx(12e-6)
    assert one(samples, "net_loss_ratio", SUMMARY, stream="5") == pytest.approx(4 / 762)
    samples, _ = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_udp_server.txt"))
    # "0.00-1.01 sec 11.8 MBytes 98.4 Mbits/sec 0.013 ms 2/381 (0.52%)"
    assert [s.value for s in pick(samples, "net_loss_ratio", INTERVAL)] == pytest.approx(
        [2 / 381, 2 / 381])
    assert pick(samples, "net_jitter_seconds", INTERVAL)[0].value == pytest.approx(13e-6)
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes")} == {"receive"}


def test_iperf3_udp_reverse() -> None:
    samples, _ = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_udpR_client.txt"))
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes", INTERVAL)} == {
        "receive"}
    assert len(pick(samples, "net_jitter_seconds", INTERVAL)) == 2
    samples, _ = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_udpR_server.txt"))
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes")} == {"send"}
    assert not pick(samples, "net_retransmits")
    assert not pick(samples, "net_jitter_seconds")  # only the sender's summary line


def test_iperf3_bidir() -> None:
    samples, parser = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_bidirP2_client.txt"))
    assert not parser.warnings
    # "[SUM][TX-C]   0.00-1.00   sec  1021 MBytes  8.57 Gbits/sec   15"
    assert pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum",
                direction="send")[0].value == pytest.approx(8.57 * GBIT)
    # "[SUM][RX-C]   0.00-1.00   sec  1.43 GBytes  12.2 Gbits/sec"
    assert pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum-reverse",
                direction="receive")[0].value == pytest.approx(12.2 * GBIT)
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes", INTERVAL,
                                                stream="9")} == {"receive"}
    # the end summary: each stream's sender and receiver lines; the reverse flows' SUM
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="sum-reverse",
               direction="send") == pytest.approx(10.2 * GBIT)
    assert one(samples, "net_retransmits", SUMMARY, stream="sum-reverse") == 3
    assert one(samples, "net_retransmits", SUMMARY, stream="sum") == 25
    samples, _ = parse_with(Iperf3Parser, _fixture("local_iperf3-3.12_bidirP2_server.txt"))
    assert pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum-reverse",
                direction="send")[1].value == pytest.approx(8.07 * GBIT)
    assert pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum",
                direction="receive")[1].elapsed == 2.01


# --- detection ------------------------------------------------------------------------------

def test_detection_tells_iperf3_from_iperf2() -> None:
    seed0 = (SEEDS / SEED0).read_text(encoding="utf-8")
    seed4 = (SEEDS / SEED4).read_text(encoding="utf-8")
    chosen0 = {c.name for c in registry.detect(seed0)}
    chosen4 = {c.name for c in registry.detect(seed4)}
    assert "iperf3" in chosen0 and "iperf2" not in chosen0 and "iperf3-json" not in chosen0
    assert "iperf2" in chosen4 and "iperf3" not in chosen4 and "iperf3-json" not in chosen4
    assert Iperf2Parser.detect(seed0) < 50
    assert Iperf3Parser.detect(seed4) < 50
    for name, expected in [("local_iperf3-3.12_udp_server.txt", "iperf3"),
                           ("local_iperf3-3.12_json_udpP2_client.txt", "iperf3-json"),
                           ("local_iperf2-2.1.8_eP2_server.txt", "iperf2"),
                           ("local_iperf2-2.1.8_udp_client.txt", "iperf2"),
                           ("iperf2_seed004_client.txt", "iperf2")]:
        assert [c.name for c in registry.detect(_fixture(name))] == [expected], name


# --- iperf 2 ---------------------------------------------------------------------------------

def test_iperf2_seed004() -> None:
    # Seed 004 "iperf 网络性能测试": the client's one whole-run line; the text under it quotes
    # "1.72 Gbits/sec".
    samples, parser = parse_with(Iperf2Parser, _fixture("iperf2_seed004_client.txt"))
    assert not parser.warnings
    assert len(samples) == 1
    s = samples[0]
    assert (s.metric, s.kind, s.labels, s.elapsed) == (
        "net_bandwidth_bytes", SUMMARY, {"stream": "3", "direction": "send"}, 10.0)
    assert s.value == pytest.approx(1.72 * GBIT)
    samples, parser = parse_with(Iperf2Parser, _fixture("iperf2_seed004_server.txt"))
    assert samples == [] and not parser.warnings
    samples, _ = parse_with(Iperf2Parser, (SEEDS / SEED4).read_text(encoding="utf-8"))
    assert [s.value for s in samples] == pytest.approx([1.72 * GBIT])


def test_iperf2_intervals_and_summary() -> None:
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_tcp_client.txt"))
    got = [(s.kind, s.elapsed, s.value, s.labels["direction"]) for s in samples]
    assert got == [(INTERVAL, 1.0, pytest.approx(12.5 * GBIT), "send"),
                   (INTERVAL, 2.0, pytest.approx(21.1 * GBIT), "send"),
                   (SUMMARY, 2.0199, pytest.approx(16.7 * GBIT), "send")]
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_tcp_server.txt"))
    assert [(s.kind, s.labels["direction"]) for s in samples] == [
        (INTERVAL, "receive"), (INTERVAL, "receive"), (SUMMARY, "receive")]


def test_iperf2_first_interval_is_held_until_the_next_line() -> None:
    parser = Iperf2Parser()
    lines = _fixture("local_iperf2-2.1.8_tcp_client.txt").split("\n")
    at = next(i for i, line in enumerate(lines) if "0.0000-1.0000" in line)
    for line in lines[:at + 1]:
        assert parser.feed(line, 100.0) == []
    out = parser.feed(lines[at + 1], 101.0)
    assert [(s.kind, s.elapsed, s.t) for s in out] == [(INTERVAL, 1.0, 100.0),
                                                       (INTERVAL, 2.0, 101.0)]


def test_iperf2_enhanced_parallel() -> None:
    samples, parser = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_eP2_client.txt"))
    assert not parser.warnings
    # "[  2] 1.0000-2.0000 sec   967 MBytes  8.11 Gbits/sec  7739/0  5  2046K/670(789) us"
    two = {s.metric: s.value for s in samples
           if s.labels["stream"] == "2" and s.elapsed == 2.0}
    assert two == {"net_bandwidth_bytes": pytest.approx(8.11 * GBIT), "net_retransmits": 5,
                   "net_cwnd_bytes": 2046 * 1024.0, "net_rtt_seconds": pytest.approx(670e-6)}
    # "[SUM] 1.0000-2.0000 sec  1.53 GBytes  13.1 Gbits/sec  12524/0  22"
    assert [s.value for s in pick(samples, "net_retransmits", INTERVAL, stream="sum")] == [1, 22]
    assert one(samples, "net_retransmits", SUMMARY, stream="sum") == 23
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="sum") == pytest.approx(
        22.0 * GBIT)
    samples, parser = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_eP2_server.txt"))
    assert not parser.warnings and not pick(samples, "net_retransmits")
    assert [s.value for s in pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum")] == (
        pytest.approx([30.9 * GBIT, 12.9 * GBIT]))


def test_iperf2_rtt_whatever_the_cwnd() -> None:
    """Every Cwnd/RTT shape iperf 2 prints (src/Locale.c, fixture README): the RTT is read in
    each, the cwnd where the kernel gave one (not ``-1K``, not ``NA``), the second of
    ``InF(pkts)/Cwnd(pkts)/RTT(var)``."""
    samples, parser = parse_with(Iperf2Parser, _fixture("iperf2_e_cwnd_shapes.txt"))
    assert not parser.warnings
    rtt = [(s.labels["stream"], s.kind, s.elapsed, s.value)
           for s in pick(samples, "net_rtt_seconds")]
    assert rtt == [("3", INTERVAL, 1.0, pytest.approx(0.087061)),
                   ("3", INTERVAL, 2.0, pytest.approx(0.00221)),
                   ("3", SUMMARY, 2.0, pytest.approx(0.00221)),
                   ("1", INTERVAL, 1.0, pytest.approx(0.00153)),
                   ("1", INTERVAL, 2.0, pytest.approx(0.001611)),
                   ("1", INTERVAL, 3.0, pytest.approx(0.001702)),
                   ("1", INTERVAL, 4.0, pytest.approx(0.001688)),
                   ("1", SUMMARY, 4.0, pytest.approx(0.001688))]
    cwnd = [(s.labels["stream"], s.elapsed, s.value) for s in pick(samples, "net_cwnd_bytes")
            if s.kind == INTERVAL]
    assert cwnd == [("3", 2.0, 1423 * 1024.0), ("1", 3.0, 2011 * 1024.0),
                    ("1", 4.0, 2011 * 1024.0)]
    retries = [s.value for s in pick(samples, "net_retransmits", INTERVAL)]
    assert retries == [297, 12, 3, 0, 1, 0]


def test_iperf2_udp() -> None:
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_udp_client.txt"))
    assert [s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes", INTERVAL)] == [
        "send", "send"]
    report = pick(samples, "net_bandwidth_bytes", SUMMARY, direction="receive")
    assert len(report) == 1 and report[0].value == pytest.approx(10.5 * MBIT)
    assert len(pick(samples, "net_jitter_seconds", SUMMARY)) == 1
    assert len(pick(samples, "net_bandwidth_bytes", SUMMARY, direction="send")) == 1
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_udpe_client.txt"))
    assert not pick(samples, "net_retransmits")  # "892/0  894 pps" is not a retry count
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_udpe_server.txt"))
    assert [s.value for s in pick(samples, "net_jitter_seconds")] == pytest.approx(
        [1e-6, 1e-6, 1e-6])
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_udpP2_server.txt"))
    # "[SUM] 0.0000-1.0000 sec  2.51 MBytes  21.0 Mbits/sec   0/1787 (0%)" (no jitter column)
    assert len(pick(samples, "net_loss_ratio", stream="sum")) == 3
    assert not pick(samples, "net_jitter_seconds", stream="sum")
    loss = pick(samples, "net_loss_ratio", INTERVAL, stream="2")
    assert loss[0].value == pytest.approx(1 / 894)
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_udpP2_client.txt"))
    # "[  1] Server Report:" / "[  1] 0.0000-2.0007 sec ... 0.001 ms 1/1787 (0.056%)"
    assert one(samples, "net_loss_ratio", SUMMARY, stream="1") == pytest.approx(1 / 1787)
    assert one(samples, "net_loss_ratio", SUMMARY, stream="2") == 0.0


def test_iperf2_reverse_and_full_duplex() -> None:
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_R_client.txt"))
    assert [(s.kind, s.labels["direction"]) for s in samples] == [
        (INTERVAL, "receive"), (INTERVAL, "receive"), (SUMMARY, "receive")]
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_R_server.txt"))
    assert {s.labels["direction"] for s in samples} == {"send"}
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_fd_client.txt"))
    by = {(s.kind, s.labels["direction"], s.elapsed): s.value for s in samples}
    assert by == {(INTERVAL, "receive", 1.0): pytest.approx(7.80 * GBIT),
                  (INTERVAL, "receive", 2.0): pytest.approx(6.97 * GBIT),
                  (SUMMARY, "receive", 2.0196): pytest.approx(7.49 * GBIT),
                  (INTERVAL, "send", 1.0): pytest.approx(8.42 * GBIT),
                  (INTERVAL, "send", 2.0): pytest.approx(5.83 * GBIT),
                  (SUMMARY, "send", 2.0058): pytest.approx(7.11 * GBIT)}
    samples, _ = parse_with(Iperf2Parser, _fixture("local_iperf2-2.1.8_fd_server.txt"))
    assert len(pick(samples, "net_bandwidth_bytes", SUMMARY, direction="send")) == 1
    assert len(pick(samples, "net_bandwidth_bytes", SUMMARY, direction="receive")) == 1


def test_iperf2_truncated() -> None:
    text = _fixture("local_iperf2-2.1.8_eP2_client.txt")
    cut = text.index("[  1] 1.0000-2.0000") + 40  # "... sec   598 MBytes  5.0"
    samples, parser = parse_with(Iperf2Parser, text[:cut])
    assert [w.reason for w in parser.warnings] == ["truncated or malformed iperf line"]
    assert not pick(samples, "net_bandwidth_bytes", SUMMARY)
    # stream 2's second interval resolved its first one; stream 1 and SUM only printed their
    # first line, an interval too since the run had intervals (-i)
    for stream, count in (("2", 2), ("1", 1), ("sum", 1)):
        assert len(pick(samples, "net_bandwidth_bytes", INTERVAL, stream=stream)) == count


# --- iperf3 JSON -------------------------------------------------------------------------------

def _doc(name: str) -> Any:
    value = json.loads(_fixture(name))
    assert isinstance(value, dict)
    return value


def test_iperf3_json_client() -> None:
    name = "local_iperf3-3.12_json_tcp_client.txt"
    doc = _doc(name)
    samples, parser = parse_with(Iperf3JsonParser, _fixture(name))
    assert not parser.warnings
    start = doc["start"]["timestamp"]["timesecs"]
    intervals = doc["intervals"]
    got = pick(samples, "net_bandwidth_bytes", INTERVAL, stream="5")
    assert len(got) == len(intervals) == 2
    for s, interval in zip(got, intervals, strict=True):
        stream = interval["streams"][0]
        assert s.value == pytest.approx(stream["bits_per_second"] / 8)
        assert s.elapsed == stream["end"] and s.t == pytest.approx(start + stream["end"])
        assert s.labels["direction"] == "send"
    end = doc["end"]
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="sum", direction="send") == (
        pytest.approx(end["sum_sent"]["bits_per_second"] / 8))
    assert one(samples, "net_bandwidth_bytes", SUMMARY, stream="sum", direction="receive") == (
        pytest.approx(end["sum_received"]["bits_per_second"] / 8))
    assert one(samples, "net_retransmits", SUMMARY, stream="sum") == (
        end["sum_sent"]["retransmits"])
    cwnd = pick(samples, "net_cwnd_bytes", INTERVAL, stream="5")
    assert [s.value for s in cwnd] == [i["streams"][0]["snd_cwnd"]
                                       for i in intervals]
    assert one(samples, "cpu_ratio", SUMMARY, side="local", mode="total") == pytest.approx(
        end["cpu_utilization_percent"]["host_total"] / 100)


def test_iperf3_json_server_and_udp() -> None:
    samples, _ = parse_with(Iperf3JsonParser, _fixture("local_iperf3-3.12_json_tcp_server.txt"))
    # the server's "sender" summary is all zeros (it cannot know): dropped, as are the
    # client's CPU figures (zeros)
    assert not pick(samples, "net_bandwidth_bytes", SUMMARY, direction="send")
    assert not pick(samples, "cpu_ratio", side="remote")
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes")} == {"receive"}
    name = "local_iperf3-3.12_json_udpP2_server.txt"
    doc = _doc(name)
    samples, _ = parse_with(Iperf3JsonParser, _fixture(name))
    first = doc["intervals"][0]["sum"]
    assert pick(samples, "net_jitter_seconds", INTERVAL, stream="sum")[0].value == (
        pytest.approx(first["jitter_ms"] / 1000))
    assert len(pick(samples, "net_loss_ratio", INTERVAL)) == 3 * len(doc["intervals"])
    received = doc["end"]["sum_received"]
    assert one(samples, "net_jitter_seconds", SUMMARY, stream="sum") == pytest.approx(
        received["jitter_ms"] / 1000)
    samples, _ = parse_with(Iperf3JsonParser,
                            _fixture("local_iperf3-3.12_json_udpP2_client.txt"))
    assert not pick(samples, "net_jitter_seconds", INTERVAL)  # the sender has none
    assert len(pick(samples, "net_jitter_seconds", SUMMARY)) == 3  # 2 streams + sum


def test_iperf3_json_reverse_and_bidir() -> None:
    samples, _ = parse_with(Iperf3JsonParser, _fixture("local_iperf3-3.12_json_R_client.txt"))
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes", INTERVAL)} == {
        "receive"}
    samples, _ = parse_with(Iperf3JsonParser, _fixture("local_iperf3-3.12_json_R_server.txt"))
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes", INTERVAL)} == {
        "send"}
    name = "local_iperf3-3.12_json_bidirP2_client.txt"
    doc = _doc(name)
    samples, _ = parse_with(Iperf3JsonParser, _fixture(name))
    reverse = pick(samples, "net_bandwidth_bytes", INTERVAL, stream="sum-reverse")
    assert [s.value for s in reverse] == pytest.approx(
        [i["sum_bidir_reverse"]["bits_per_second"] / 8 for i in doc["intervals"]])
    assert {s.labels["direction"] for s in reverse} == {"receive"}
    assert len(pick(samples, "net_bandwidth_bytes", SUMMARY, stream="sum-reverse")) == 2


def _as_json_stream(doc: Any) -> str:
    """The events iperf3 3.17+ prints with --json-stream for the same test: JSONStream_Output
    (src/iperf_api.c) prints cJSON_PrintUnformatted({"event": name, "data": obj}) for the
    start object, each interval (iperf_print_intermediate) and the end object
    (iperf_json_finish). iperf3 here is 3.12, which has no --json-stream: the events are
    rebuilt from a real -J document of this machine."""
    def event(name: str, data: object) -> str:
        return json.dumps({"event": name, "data": data}, separators=(",", ":"))
    lines = [event("start", doc["start"])]
    lines += [event("interval", i) for i in doc["intervals"]]
    lines.append(event("end", doc["end"]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["json_tcp_client", "json_udpP2_server", "json_bidirP2_client"])
def test_iperf3_json_stream_equals_document(name: str) -> None:
    doc_text = _fixture(f"local_iperf3-3.12_{name}.txt")
    stream_text = _as_json_stream(json.loads(doc_text))
    assert Iperf3JsonParser.detect(stream_text) >= 50
    assert Iperf3Parser.detect(stream_text) < 50
    from_doc, _ = parse_with(Iperf3JsonParser, doc_text)
    from_stream, parser = parse_with(Iperf3JsonParser, stream_text)
    assert not parser.warnings
    assert [s.to_dict() for s in from_stream] == [s.to_dict() for s in from_doc]


def test_iperf3_json_cut_short() -> None:
    text = _fixture("local_iperf3-3.12_json_tcp_client.txt")
    samples, parser = parse_with(Iperf3JsonParser, text[: len(text) // 2])
    assert samples == []
    assert [w.reason for w in parser.warnings] == [
        "incomplete JSON document at the end of the stream (ignored)"]
    _no_internal_errors(parser)
