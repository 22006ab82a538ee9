"""iperf 2's CSV reports (``-y C``): golden tests over real iperf 2.1.8 outputs captured here
(tests/fixtures/net/local_iperf2-2.1.8_csv_*), rows in iperf 2.0.x's layout, detection against
every fixture, damaged input, a property test, and a real client/server run."""

from __future__ import annotations

import calendar
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers import registry
from benchtui.parsers.base import Parser
from benchtui.parsers.iperf2_csv import Iperf2CsvParser, Iperf2CsvServerParser
from tests.helpers import (
    FIXTURES,
    check_invariants,
    fixture_text,
    one,
    parse_with,
    pick,
    require_tool,
)

CSV_FIXTURES = sorted((FIXTURES / "net").glob("local_iperf2-2.1.8_csv_*.txt"))


def _fixture(name: str) -> str:
    return fixture_text(f"net/local_iperf2-2.1.8_csv_{name}.txt")


def _utc(stamp: str) -> float:
    """A ``YYYYMMDDHHMMSS`` stamp read as UTC (what a saved file's stamps become)."""
    fields = (int(stamp[0:4]), int(stamp[4:6]), int(stamp[6:8]), int(stamp[8:10]),
              int(stamp[10:12]), int(stamp[12:14]), 0, 0, 0)
    return float(calendar.timegm(fields))


def _rows(samples: list[Sample]) -> list[tuple[str, str, str, float | None, float, float | None]]:
    return [(s.kind, s.labels["stream"], s.labels["direction"], s.elapsed, s.value, s.t)
            for s in samples if s.metric == "net_bandwidth_bytes"]


def _clean(cls: type[Parser], text: str) -> list[Sample]:
    samples, parser = parse_with(cls, text)
    assert not parser.warnings
    assert parser.unknown_lines == 1  # the empty string after the last newline
    return samples


# --- TCP -------------------------------------------------------------------------------------

def test_tcp_client_intervals_and_summary() -> None:
    # 20261124023156,127.0.0.1,33658,127.0.0.1,15301,1,0.0-1.0,1874329660,14994637280
    # 20261124023157,127.0.0.1,33658,127.0.0.1,15301,1,1.0-2.0,2102394880,16819159040
    # 20261124023157,127.0.0.1,33658,127.0.0.1,15301,1,0.0-2.0,3976855612,15692343192
    samples = _clean(Iperf2CsvParser, _fixture("tcp_client"))
    assert len(samples) == 3
    assert _rows(samples) == [
        (INTERVAL, "1", "send", 1.0, 14994637280 / 8, _utc("20261124023156")),
        (INTERVAL, "1", "send", 2.0, 16819159040 / 8, _utc("20261124023157")),
        (SUMMARY, "1", "send", 2.0, 15692343192 / 8, _utc("20261124023157")),
    ]
    assert all(s.tool == "iperf2" and s.host == "-" for s in samples)


def test_tcp_server_without_interval_has_no_clock() -> None:
    # 19700101000000,127.0.0.1,33658,127.0.0.1,15301,1,0.0-2.0,3976855612,15812162077
    # iperf 2.1 prints the sending socket first at both ends: the server's row has the same
    # form as its client's, so only the server parser can say it received.
    text = _fixture("tcp_server")
    assert _rows(_clean(Iperf2CsvParser, text)) == [
        (SUMMARY, "1", "send", 2.0, 15812162077 / 8, None)]
    assert _rows(_clean(Iperf2CsvServerParser, text)) == [
        (SUMMARY, "1", "receive", 2.0, 15812162077 / 8, None)]


def test_tcp_server_with_intervals() -> None:
    samples = _clean(Iperf2CsvServerParser, _fixture("tcpi_server"))
    assert _rows(samples) == [
        (INTERVAL, "1", "receive", 1.0, 10483112328 / 8, _utc("20261124023210")),
        (INTERVAL, "1", "receive", 2.0, 11344542896 / 8, _utc("20261124023211")),
        (SUMMARY, "1", "receive", 2.0, 10831389109 / 8, _utc("20261124023211"))]
    # the client's own summary ends where its clock said: 0.0-2.1
    client = _clean(Iperf2CsvParser, _fixture("tcpi_client"))
    assert one(client, "net_bandwidth_bytes", SUMMARY) == 10758106840 / 8
    assert pick(client, "net_bandwidth_bytes", SUMMARY)[0].elapsed == 2.1


def test_parallel_streams() -> None:
    # 2.1.8 prints no sum row for -P 2 in CSV; each stream has 2 intervals and its summary
    samples = _clean(Iperf2CsvParser, _fixture("P2_client"))
    for stream, first, second, total in (("2", 8762950112, 7239368704, 7886097169),
                                         ("1", 8060404192, 7380926464, 7614562891)):
        assert [(s.elapsed, s.value) for s in pick(
            samples, "net_bandwidth_bytes", INTERVAL, stream=stream, direction="send")] == [
            (1.0, first / 8), (2.0, second / 8)]
        assert one(samples, "net_bandwidth_bytes", SUMMARY, stream=stream,
                   direction="send") == total / 8
    assert not pick(samples, "net_bandwidth_bytes", stream="sum")
    server = _clean(Iperf2CsvServerParser, _fixture("P2_server"))
    assert {(s.kind, s.labels["stream"], s.labels["direction"], s.t) for s in server} == {
        (SUMMARY, "1", "receive", None), (SUMMARY, "2", "receive", None)}


def test_enhanced_stamps_have_milliseconds() -> None:
    # 20261124023203.264,127.0.0.1,45534,127.0.0.1,15303,1,0.0-1.0,1679294524,13434356192
    samples = _clean(Iperf2CsvParser, _fixture("e_client"))
    first = samples[0]
    assert first.t == pytest.approx(_utc("20261124023203") + 0.264)
    assert first.value == 13434356192 / 8
    assert [s.kind for s in samples] == [INTERVAL, INTERVAL, SUMMARY]
    # the server's only row: 19700101000000.000, no clock
    assert [s.t for s in _clean(Iperf2CsvParser, _fixture("e_server"))] == [None]


def test_run_without_interval_is_the_summary() -> None:
    for name in ("noi_client", "noi_server"):
        samples = _clean(Iperf2CsvParser, _fixture(name))
        assert [(s.kind, s.elapsed, s.t) for s in samples] == [(SUMMARY, 2.0, None)], name


def test_reverse_client_receives() -> None:
    # -R: both ends print the server's (sending) socket first: 127.0.0.1,15314,127.0.0.1,57808
    samples = _clean(Iperf2CsvParser, _fixture("R_client"))
    assert [(s.kind, s.labels["direction"]) for s in samples] == [
        (INTERVAL, "receive"), (INTERVAL, "receive"), (SUMMARY, "receive")]
    assert samples[-1].value == 12464087079 / 8


# --- UDP -------------------------------------------------------------------------------------

def test_udp_client_sends_and_reports_no_loss() -> None:
    # ...,0.0-1.0,2623950,20991600,0.000,0,1785,0.000,0
    # ...,0.0-2.0,5247900,20982462,0.000,0,-1,-0.000,0   (the client does not know: -1)
    samples = _clean(Iperf2CsvParser, _fixture("udp_client"))
    assert _rows(samples) == [
        (INTERVAL, "1", "send", 1.0, 20991600 / 8, _utc("20261124023206")),
        (INTERVAL, "1", "send", 2.0, 20968080 / 8, _utc("20261124023207")),
        (SUMMARY, "1", "send", 2.0, 20982462 / 8, _utc("20261124023207"))]
    assert not pick(samples, "net_jitter_seconds") and not pick(samples, "net_loss_ratio")


def test_udp_server_receives_with_jitter_and_loss() -> None:
    # ...,0.0-1.0,2623950,20991600,0.001,0,1785,0.000,0
    # ...,1.0-2.0,2621010,20968080,0.000,0,1783,0.000,0
    # ...,0.0-2.0,5247900,20982650,0.000,0,3570,0.000,0
    for cls in (Iperf2CsvParser, Iperf2CsvServerParser):
        samples = _clean(cls, _fixture("udp_server"))
        assert [(k, d, e, v) for k, _, d, e, v, _ in _rows(samples)] == [
            (INTERVAL, "receive", 1.0, 20991600 / 8), (INTERVAL, "receive", 2.0, 20968080 / 8),
            (SUMMARY, "receive", 2.0, 20982650 / 8)]
        assert [s.value for s in pick(samples, "net_jitter_seconds")] == pytest.approx(
            [1e-6, 0.0, 0.0])
        assert [(s.kind, s.value) for s in pick(samples, "net_loss_ratio")] == [
            (INTERVAL, 0.0), (INTERVAL, 0.0), (SUMMARY, 0.0)]


def test_udp_parallel_loss() -> None:
    samples = _clean(Iperf2CsvParser, _fixture("udpP2_server"))
    # 20261124023217,127.0.0.1,35910,127.0.0.1,15307,2,0.0-1.0,1312710,10501680,0.003,1,894,...
    loss = pick(samples, "net_loss_ratio", INTERVAL, stream="2")
    assert [s.value for s in loss] == [1 / 894, 0.0]
    assert one(samples, "net_loss_ratio", SUMMARY, stream="2") == 1 / 1787
    assert [s.value for s in pick(samples, "net_jitter_seconds", INTERVAL, stream="1")] == (
        pytest.approx([3e-6, 1e-6]))
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes")} == {"receive"}
    client = _clean(Iperf2CsvParser, _fixture("udpP2_client"))
    assert {s.labels["direction"] for s in client} == {"send"}
    assert len(pick(client, "net_bandwidth_bytes", SUMMARY)) == 2


def test_quiet_udp_server_is_told_by_its_summary() -> None:
    # All-zero receiver figures until the summary's datagram total: the intervals before it
    # read as a client's (the documented limit); the server parser knows from the start.
    quiet = "\n".join([
        "20261124023236,127.0.0.1,52369,127.0.0.1,15313,1,0.0-1.0,2623950,20991600,0.000,0,1785,"
        "0.000,0",
        "20261124023237,127.0.0.1,52369,127.0.0.1,15313,1,1.0-2.0,2621010,20968080,0.000,0,1783,"
        "0.000,0",
        "20261124023237,127.0.0.1,52369,127.0.0.1,15313,1,0.0-2.0,5247900,20982650,0.000,0,3570,"
        "0.000,0"])
    samples, _ = parse_with(Iperf2CsvParser, quiet)
    assert [(s.kind, s.labels["direction"]) for s in pick(samples, "net_bandwidth_bytes")] == [
        (INTERVAL, "send"), (INTERVAL, "send"), (SUMMARY, "receive")]
    assert one(samples, "net_loss_ratio", SUMMARY) == 0.0
    samples, _ = parse_with(Iperf2CsvServerParser, quiet)
    assert {s.labels["direction"] for s in pick(samples, "net_bandwidth_bytes")} == {"receive"}
    assert len(pick(samples, "net_loss_ratio")) == 3


# --- iperf 2.0.x layout (from its source, ReportCSV.c: the printing socket first, "-1" sums
# with empty addresses, a UDP client's own rows in 9 fields and the server report in 14) --------

V20_CLIENT_P2 = """\
20100101120001,10.0.0.1,40001,10.0.0.2,5001,3,0.0-1.0,117833728,942669824
20100101120001,10.0.0.1,40002,10.0.0.2,5001,4,0.0-1.0,117440512,939524096
20100101120001,,,,,-1,0.0-1.0,235274240,1882193920
20100101120002,10.0.0.1,40001,10.0.0.2,5001,3,0.0-2.0,235667456,942669824
20100101120002,10.0.0.1,40002,10.0.0.2,5001,4,0.0-2.0,234881024,939524096
20100101120002,,,,,-1,0.0-2.0,470548480,1882193920
"""

V20_UDP_CLIENT = """\
20100101120001,10.0.0.1,40001,10.0.0.2,5001,3,0.0-1.0,131250,1050000
20100101120002,10.0.0.1,40001,10.0.0.2,5001,3,0.0-2.0,262500,1050000
20100101120002,10.0.0.1,40001,10.0.0.2,5001,3,0.0-2.0,262500,1049000,0.021,2,179,1.117,0
"""

V20_SERVER = "20100101120002,10.0.0.2,5001,10.0.0.1,40001,4,0.0-2.0,235667456,942669824\n"


def test_iperf20_sum_rows_and_ports() -> None:
    samples = _clean(Iperf2CsvParser, V20_CLIENT_P2)
    # each stream's first row is held until its next one: emitted stream by stream
    assert _rows(samples) == [
        (INTERVAL, "3", "send", 1.0, 942669824 / 8, _utc("20100101120001")),
        (SUMMARY, "3", "send", 2.0, 942669824 / 8, _utc("20100101120002")),
        (INTERVAL, "4", "send", 1.0, 939524096 / 8, _utc("20100101120001")),
        (SUMMARY, "4", "send", 2.0, 939524096 / 8, _utc("20100101120002")),
        (INTERVAL, "sum", "send", 1.0, 1882193920 / 8, _utc("20100101120001")),
        (SUMMARY, "sum", "send", 2.0, 1882193920 / 8, _utc("20100101120002"))]
    # a 2.0.x server prints its own (listening, 5001) socket first: it received
    assert _rows(_clean(Iperf2CsvParser, V20_SERVER))[0][:3] == (SUMMARY, "4", "receive")


def test_iperf20_udp_client_server_report() -> None:
    samples = _clean(Iperf2CsvParser, V20_UDP_CLIENT)
    assert [(s.kind, s.labels["direction"], s.value) for s in pick(
        samples, "net_bandwidth_bytes")] == [
        (INTERVAL, "send", 1050000 / 8), (SUMMARY, "send", 1050000 / 8),
        (SUMMARY, "receive", 1049000 / 8)]
    assert one(samples, "net_jitter_seconds", SUMMARY) == pytest.approx(21e-6)
    assert one(samples, "net_loss_ratio", SUMMARY) == 2 / 179


def test_listening_port_rules() -> None:
    def direction(*rows: str) -> list[str]:
        samples, _ = parse_with(Iperf2CsvParser, "\n".join(rows))
        return [s.labels["direction"] for s in samples]

    row = "20261124023156,127.0.0.1,{},127.0.0.1,{},1,0.0-2.0,1000,8000"
    # iperf's default port 5001 is the listener, wherever it is
    assert direction(row.format(5001, 7000)) == ["receive"]
    assert direction(row.format(7000, 5001)) == ["send"]
    # the port outside the kernel's ephemeral range (32768-60999) is the listener
    assert direction(row.format(20000, 45000)) == ["receive"]
    assert direction(row.format(45000, 20000)) == ["send"]
    # both ephemeral and one stream: the usual order (listener second)
    assert direction(row.format(45000, 46000)) == ["send"]
    # a port seen with two peers is the listener, before the other rules
    two = "20261124023156,127.0.0.1,{},127.0.0.1,{},{},0.0-2.0,1000,8000"
    assert direction(two.format(45000, 46000, 1), two.format(45000, 47000, 2)) == [
        "receive", "receive"]


# --- time ------------------------------------------------------------------------------------

def test_live_zone_is_learnt_from_the_receive_time() -> None:
    parser = Iperf2CsvParser()
    lines = _fixture("tcp_client").split("\n")
    zone = 8 * 3600.0  # the capture's local time was 8 h ahead of UTC, say
    received = _utc("20261124023156") - zone + 0.4
    assert parser.feed(lines[0], received) == []  # the first interval is held
    out = parser.feed(lines[1], received + 1.0)
    assert [(s.kind, s.elapsed, s.t) for s in out] == [
        (INTERVAL, 1.0, _utc("20261124023156") - zone),
        (INTERVAL, 2.0, _utc("20261124023157") - zone)]
    out = parser.feed(lines[2], received + 1.1)
    assert [(s.kind, s.t) for s in out] == [(SUMMARY, _utc("20261124023157") - zone)]
    # a row with no clock (19700101000000) takes the receive time
    parser = Iperf2CsvParser()
    parser.feed(_fixture("noi_client").split("\n")[0], 1234.5)
    assert [s.t for s in parser.finish()] == [1234.5]


def test_stamp_with_its_zone() -> None:
    # later releases with -e: "%z:%Y%m%d%H%M%S" plus the fraction (iperf_formattime.c)
    row = "+0800:20261124103203.264123,127.0.0.1,45534,127.0.0.1,15303,1,0.0-2.0,1000,8000"
    assert Iperf2CsvParser.detect(row) == 90
    samples, parser = parse_with(Iperf2CsvParser, row, t=5.0)
    assert not parser.warnings
    assert [s.t for s in samples] == [pytest.approx(_utc("20261124023203") + 0.264123)]
    samples, _ = parse_with(Iperf2CsvParser, "+0000:19700101000000.000000" + row[27:])
    assert [s.t for s in samples] == [None]


# --- detection -------------------------------------------------------------------------------

@pytest.mark.parametrize("path", CSV_FIXTURES, ids=[p.name for p in CSV_FIXTURES])
def test_detection_chooses_iperf2_csv(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert registry.detect(text) == [Iperf2CsvParser]
    assert Iperf2CsvParser.detect(text) >= 90  # enough to start at once on stdin


def test_detection_of_other_fixtures_is_unchanged() -> None:
    """No other format changes its choice because this parser exists, and it claims none."""
    parsers = registry.all_parsers()
    others = [c for c in parsers.values() if not issubclass(c, Iperf2CsvParser)]
    checked = 0
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix == ".md" or path in CSV_FIXTURES:
            continue
        head = path.read_text(encoding="utf-8", errors="replace")[:registry.DETECT_HEAD_BYTES]
        assert registry.detect(head) == registry.detect(head, others), path
        assert Iperf2CsvParser.detect(head) < registry.DETECT_THRESHOLD, path
        checked += 1
    assert checked > 50
    assert Iperf2CsvServerParser.detect(_fixture("tcp_server")) == 0
    assert registry.candidates("iperf2-csv-server") == [Iperf2CsvServerParser]
    assert registry.candidates("iperf2_csv") == [Iperf2CsvParser]


# --- damaged input ---------------------------------------------------------------------------

def test_garbage_and_truncated_rows() -> None:
    good = _fixture("udp_server").split("\n")
    lines = [
        "hello, world",                                                # unknown
        "",                                                            # unknown
        "------------------------------------------------------------",  # unknown
        good[0][:40],                                                  # truncated: warning
        good[0][:good[0].rindex(",")],                                 # 13 fields: warning
        "20261124023156,127.0.0.1,1,127.0.0.1,2,x,0.0-1.0,1,8",         # bad id: warning
        "20261124023156,127.0.0.1,1,127.0.0.1,2,1,1.0-0.5,1,8",         # end < start: warning
        "20261124023156,127.0.0.1,1,127.0.0.1,2,1,0.0-1.0,1,nan",       # warning
        "20261124023156,127.0.0.1,1,127.0.0.1,2,1,0.0-1.0,1,8,nan,0,1,0.0,0",  # warning
        "20261124023156,127.0.0.1,1,127.0.0.1,2,1,0.0-1.0,1,8,inf,0,1,0.0,0",  # warning
        "20261124023156,127.0.0.1,1,127.0.0.1,2,1,1e309-2.0,1,8",      # warning
        "\x00\xff20261124023156,,,,",                                   # unknown
        *good,
    ]
    samples, parser = parse_with(Iperf2CsvParser, "\n".join(lines))
    assert parser.unknown_lines == 5
    assert len(parser.warnings) == 8
    assert {w.reason for w in parser.warnings} == {"malformed iperf 2 CSV row"}
    assert [w.line for w in parser.warnings] == [4, 5, 6, 7, 8, 9, 10, 11]
    # the good rows still parse
    assert len(pick(samples, "net_bandwidth_bytes", direction="receive")) == 3


def test_rows_wider_than_udp_give_the_bandwidth_only() -> None:
    wide = ("20261124023206,127.0.0.1,42322,127.0.0.1,15304,1,0.0-1.0,2623950,20991600,0.001,0,"
            "1785,0.000,0,1786,0,0,893.2")
    samples, parser = parse_with(Iperf2CsvParser, wide)
    assert not parser.warnings
    assert [(s.metric, s.kind, s.value) for s in samples] == [
        ("net_bandwidth_bytes", SUMMARY, 20991600 / 8)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(
    st.sampled_from(["20261124023156", "20261124023156.5", "19700101000000", "99999999999999"]),
    st.sampled_from(["127.0.0.1", "", "::1"]),
    st.sampled_from(["0", "5001", "45000", "", "99999", "x"]),
    st.sampled_from(["-1", "1", "2", "", "+3"]),
    st.sampled_from(["0.0-1.0", "1.0-2.0", "0.0-2.0", "2.0-1.0", "0.0-0.0", "1-"]),
    st.sampled_from(["8000", "0", "-8", "1e400", "99999999999999999999999"]),
    st.lists(st.sampled_from(["0.001", "0", "-1", "1785", "nan", "-0.000", "x", ""]),
             max_size=9),
    st.integers(0, 200)), max_size=25))
def test_property_rows_never_break_the_parser(
        rows: list[tuple[str, str, str, str, str, str, list[str], int]]) -> None:
    lines = []
    for stamp, addr, port, ident, interval, bits, extra, cut in rows:
        line = ",".join([stamp, addr, port, addr, "5001", ident, interval, "1000", bits, *extra])
        lines.append(line[:cut] if cut < len(line) else line)
    for cls in (Iperf2CsvParser, Iperf2CsvServerParser):
        by_line = cls(source="prop")
        a = [s for line in lines for s in by_line.feed(line)] + by_line.finish()
        check_invariants(a)
        assert not [w for w in by_line.warnings if "internal" in w.reason]
        by_block = cls(source="prop")
        b = by_block.feed_text("\n".join(lines)) + by_block.finish()
        assert [x.to_dict() for x in a] == [y.to_dict() for y in b]
        for s in a:
            assert s.value >= 0 or s.metric == "net_loss_ratio"


# --- a real run ------------------------------------------------------------------------------

def _csv_pair(*client_args: str, server_args: tuple[str, ...] = ()) -> tuple[str, str]:
    from tests.test_real_net import free_port, run_client, server, server_output

    exe = require_tool("iperf")
    port = free_port()
    udp = "-u" in client_args
    argv = [exe, "-s", "-p", str(port), "-B", "127.0.0.1", "-i", "1", "-y", "C", *server_args]
    if udp:
        argv.append("-u")
    with server(argv, port, udp=udp) as proc:
        client = run_client([exe, "-c", "127.0.0.1", "-p", str(port), "-t", "3", "-i", "1",
                             "-y", "C", *client_args])
        time.sleep(0.3)
        proc.terminate()
        return client, server_output(proc)


def _live(cls: type[Parser], text: str) -> list[Sample]:
    parser = cls(host="lo", source="real")
    now = time.time()
    out: list[Sample] = []
    for line in text.split("\n"):
        out.extend(parser.feed(line, now))
    out.extend(parser.finish())
    check_invariants(out)
    assert not parser.warnings, (parser.warnings, text)
    return out


@pytest.mark.slow
def test_real_iperf2_csv_tcp_parallel() -> None:
    client_text, server_text = _csv_pair("-P", "2")
    before = time.time()
    client = _live(Iperf2CsvParser, client_text)
    srv = _live(Iperf2CsvServerParser, server_text)
    intervals = pick(client, "net_bandwidth_bytes", INTERVAL, direction="send")
    streams = {s.labels["stream"] for s in intervals}
    assert len(streams) == 2
    sent = received = 0.0
    for stream in streams:
        mine = [s for s in intervals if s.labels["stream"] == stream]
        assert [s.elapsed for s in mine] == [1.0, 2.0, 3.0]
        # the tool's own clock, read in the local zone learnt from the receive time
        assert all(s.t is not None and before - 60 < s.t < before + 5 for s in mine)
        send = one(client, "net_bandwidth_bytes", SUMMARY, stream=stream, direction="send")
        sent += send
        received += one(srv, "net_bandwidth_bytes", SUMMARY, stream=stream,
                        direction="receive")
        assert sum(s.value for s in mine) / 3 == pytest.approx(send, rel=0.1)
    # Each end numbers its transfers in its own order (the server by accepting them), so
    # stream "1" of the client may be stream "2" of the server: the two ends agree on the
    # total, not stream by stream.
    assert received == pytest.approx(sent, rel=0.05)


@pytest.mark.slow
def test_real_iperf2_csv_udp() -> None:
    client_text, server_text = _csv_pair("-u", "-b", "10M")
    client = _live(Iperf2CsvParser, client_text)
    srv = _live(Iperf2CsvServerParser, server_text)
    target = 10e6 / 8
    sent = pick(client, "net_bandwidth_bytes", INTERVAL, direction="send")
    assert len(sent) == 3 and all(s.value == pytest.approx(target, rel=0.1) for s in sent)
    assert not pick(client, "net_loss_ratio") and not pick(client, "net_jitter_seconds")
    received = pick(srv, "net_bandwidth_bytes", INTERVAL, direction="receive")
    assert len(received) >= 2
    assert len(pick(srv, "net_jitter_seconds", INTERVAL)) == len(received)
    assert all(0 <= s.value < 0.5 for s in pick(srv, "net_loss_ratio"))
    assert one(srv, "net_bandwidth_bytes", SUMMARY) == pytest.approx(target, rel=0.1)
