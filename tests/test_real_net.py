"""Real iperf3 and iperf 2 runs over 127.0.0.1: a server on a free port, a 3-second client, both
outputs parsed, the numbers checked against each other and the requested rates."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers.base import Parser
from benchtui.parsers.iperf2 import Iperf2Parser
from benchtui.parsers.iperf3 import Iperf3Parser
from benchtui.parsers.iperf3_json import Iperf3JsonParser
from tests.helpers import check_invariants, one, pick, require_tool

pytestmark = pytest.mark.slow

SECONDS = 3


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _bound(port: int, udp: bool) -> bool:
    """Whether a socket listens (TCP) or is bound (UDP) on ``port``, from /proc/net: probing
    with a connection would count as a test for the server."""
    tables = ("/proc/net/udp", "/proc/net/udp6") if udp else ("/proc/net/tcp", "/proc/net/tcp6")
    want = f":{port:04X}"
    for table in tables:
        try:
            with open(table, encoding="ascii") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[1].endswith(want) and (udp or fields[3] == "0A"):
                return True
    return False


def _wait_listening(port: int, server: subprocess.Popen[str], *, udp: bool = False) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"server exited early: {server.communicate()}")
        if _bound(port, udp):
            return
        time.sleep(0.05)
    pytest.fail("server did not start listening")


@contextmanager
def server(argv: Sequence[str], port: int, *, udp: bool = False
           ) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        _wait_listening(port, proc, udp=udp)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_output(proc: subprocess.Popen[str]) -> str:
    """The server's whole output, once it has ended (iperf3 -1 ends by itself; iperf 2 is
    stopped with SIGTERM, on which it prints its pending reports and exits)."""
    try:
        out, _ = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.terminate()
        out, _ = proc.communicate(timeout=5)
    return out


def run_client(argv: Sequence[str]) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=SECONDS + 10,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def parse(cls: type[Parser], text: str, *, live: bool = False) -> list[Sample]:
    """Feed line by line; ``live`` passes a receive time as a live session would."""
    parser = cls(host="lo", source="real")
    out: list[Sample] = []
    now = time.time()
    for i, line in enumerate(text.split("\n")):
        out.extend(parser.feed(line, now + i if live else None))
    out.extend(parser.finish())
    check_invariants(out)
    assert not parser.warnings, (parser.warnings, text)
    return out


def iperf3_pair(*client_args: str, json_out: bool = False) -> tuple[str, str]:
    exe = require_tool("iperf3")
    port = free_port()
    server_args = [exe, "-s", "-1", "-p", str(port), "-B", "127.0.0.1"]
    if json_out:
        server_args.append("-J")
    with server(server_args, port) as proc:
        client = run_client([exe, "-c", "127.0.0.1", "-p", str(port), "-t", str(SECONDS),
                             "-i", "1", *client_args])
        return client, server_output(proc)


def _intervals(samples: list[Sample], **labels: str) -> list[Sample]:
    return pick(samples, "net_bandwidth_bytes", INTERVAL, **labels)


# --- iperf3 --------------------------------------------------------------------------------

def test_iperf3_tcp() -> None:
    client_text, server_text = iperf3_pair()
    client = parse(Iperf3Parser, client_text, live=True)
    srv = parse(Iperf3Parser, server_text)
    sent = _intervals(client, stream="5", direction="send")
    assert [round(s.elapsed or 0) for s in sent] == [1, 2, 3]
    assert all(s.value > 1e6 and s.t is not None for s in sent)
    send = one(client, "net_bandwidth_bytes", SUMMARY, stream="5", direction="send")
    recv = one(srv, "net_bandwidth_bytes", SUMMARY, stream="5", direction="receive")
    assert recv == pytest.approx(send, rel=0.05)
    mean = sum(s.value for s in sent) / len(sent)
    assert mean == pytest.approx(send, rel=0.1)
    assert len(pick(client, "net_retransmits", INTERVAL, stream="5")) == 3
    assert all(s.value > 0 for s in pick(client, "net_cwnd_bytes", INTERVAL))
    assert {s.labels["direction"] for s in _intervals(srv)} == {"receive"}


def test_iperf3_parallel() -> None:
    client_text, server_text = iperf3_pair("-P", "2")
    client = parse(Iperf3Parser, client_text)
    srv = parse(Iperf3Parser, server_text)
    for samples, direction in ((client, "send"), (srv, "receive")):
        sums = _intervals(samples, stream="sum", direction=direction)
        # the server's clock is its own: its last interval may end early or have a tail
        assert len(sums) >= SECONDS
        streams = [s for s in _intervals(samples, direction=direction)
                   if s.labels["stream"] != "sum"]
        assert len({s.labels["stream"] for s in streams}) == 2
        for total in sums:
            parts = [s.value for s in streams if s.elapsed == total.elapsed]
            assert sum(parts) == pytest.approx(total.value, rel=0.02)


def test_iperf3_reverse() -> None:
    client_text, server_text = iperf3_pair("-R")
    client = parse(Iperf3Parser, client_text)
    srv = parse(Iperf3Parser, server_text)
    assert {s.labels["direction"] for s in _intervals(client)} == {"receive"}
    assert {s.labels["direction"] for s in _intervals(srv)} == {"send"}
    assert len(pick(srv, "net_retransmits", INTERVAL)) >= SECONDS
    received = one(client, "net_bandwidth_bytes", SUMMARY, stream="5", direction="receive")
    assert received == pytest.approx(
        one(srv, "net_bandwidth_bytes", SUMMARY, stream="5", direction="send"), rel=0.05)


def test_iperf3_udp() -> None:
    client_text, server_text = iperf3_pair("-u", "-b", "100M")
    client = parse(Iperf3Parser, client_text)
    srv = parse(Iperf3Parser, server_text)
    target = 100e6 / 8
    sent = _intervals(client, direction="send")
    assert len(sent) == SECONDS
    assert all(s.value == pytest.approx(target, rel=0.1) for s in sent)
    assert not pick(client, "net_retransmits")
    received = _intervals(srv, direction="receive")
    assert len(received) >= SECONDS
    jitter = pick(srv, "net_jitter_seconds", INTERVAL)
    loss = pick(srv, "net_loss_ratio", INTERVAL)
    assert len(jitter) == len(loss) == len(received)
    assert all(0 <= s.value < 0.01 for s in jitter)
    assert all(0 <= s.value <= 1 for s in loss)
    assert one(client, "net_loss_ratio", SUMMARY, stream="5") < 0.5


def test_iperf3_json() -> None:
    client_text, server_text = iperf3_pair("-J", json_out=True)
    before = time.time()
    client = parse(Iperf3JsonParser, client_text)
    srv = parse(Iperf3JsonParser, server_text)
    doc = json.loads(client_text)
    sent = _intervals(client, stream="5", direction="send")
    assert len(sent) == len(doc["intervals"]) == SECONDS
    # the tool's own clock: the start timestamp plus the interval's end, a few seconds ago
    for s in sent:
        assert s.t is not None and before - 60 < s.t < before + 5
        assert s.t == pytest.approx(doc["start"]["timestamp"]["timesecs"] + (s.elapsed or 0))
    assert one(client, "net_bandwidth_bytes", SUMMARY, stream="sum", direction="send") == (
        pytest.approx(doc["end"]["sum_sent"]["bits_per_second"] / 8))
    assert one(srv, "net_bandwidth_bytes", SUMMARY, stream="sum", direction="receive") == (
        pytest.approx(one(client, "net_bandwidth_bytes", SUMMARY, stream="sum",
                          direction="receive"), rel=0.01))
    assert 0 < one(client, "cpu_ratio", SUMMARY, side="local", mode="total") <= 1.5


def _has_json_stream(exe: str) -> bool:
    done = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10,
                          check=False)
    return "--json-stream" in done.stdout + done.stderr


def test_iperf3_json_stream() -> None:
    exe = require_tool("iperf3")
    if not _has_json_stream(exe):
        pytest.skip("this iperf3 has no --json-stream (added in 3.17)")
    client_text, server_text = iperf3_pair("--json-stream")
    client = parse(Iperf3JsonParser, client_text, live=True)
    assert len(_intervals(client, stream="5", direction="send")) == SECONDS
    send = one(client, "net_bandwidth_bytes", SUMMARY, stream="sum", direction="send")
    srv = parse(Iperf3Parser, server_text)
    assert one(srv, "net_bandwidth_bytes", SUMMARY, stream="5", direction="receive") == (
        pytest.approx(send, rel=0.05))


# --- iperf 2 ---------------------------------------------------------------------------------

def iperf2_pair(*client_args: str, server_args: Sequence[str] = ()) -> tuple[str, str]:
    exe = require_tool("iperf")
    port = free_port()
    udp = "-u" in client_args
    argv = [exe, "-s", "-p", str(port), "-B", "127.0.0.1", "-i", "1", *server_args]
    if udp:
        argv.append("-u")
    with server(argv, port, udp=udp) as proc:
        client = run_client([exe, "-c", "127.0.0.1", "-p", str(port), "-t", str(SECONDS),
                             "-i", "1", *client_args])
        time.sleep(0.3)
        proc.terminate()
        return client, server_output(proc)


def test_iperf2_tcp() -> None:
    client_text, server_text = iperf2_pair()
    client = parse(Iperf2Parser, client_text, live=True)
    srv = parse(Iperf2Parser, server_text)
    sent = _intervals(client, direction="send")
    assert [round(s.elapsed or 0) for s in sent] == [1, 2, 3]
    send = one(client, "net_bandwidth_bytes", SUMMARY, direction="send")
    mean = sum(s.value for s in sent) / len(sent)
    assert mean == pytest.approx(send, rel=0.1)
    recv = one(srv, "net_bandwidth_bytes", SUMMARY, direction="receive")
    assert recv == pytest.approx(send, rel=0.05)
    # the server reports on its own clock: its last interval may be cut ("2.0000-2.9993")
    assert len(_intervals(srv, direction="receive")) >= SECONDS - 1


def test_iperf2_enhanced() -> None:
    client_text, server_text = iperf2_pair("-e", server_args=("-e",))
    client = parse(Iperf2Parser, client_text)
    parse(Iperf2Parser, server_text)
    assert len(pick(client, "net_retransmits", INTERVAL)) == SECONDS
    cwnd = pick(client, "net_cwnd_bytes", INTERVAL)
    rtt = pick(client, "net_rtt_seconds", INTERVAL)
    assert len(cwnd) == len(rtt) == SECONDS
    assert all(s.value >= 1024 for s in cwnd)
    assert all(0 < s.value < 1 for s in rtt)


def test_iperf2_parallel() -> None:
    client_text, server_text = iperf2_pair("-P", "2")
    for text, direction in ((client_text, "send"), (server_text, "receive")):
        samples = parse(Iperf2Parser, text)
        sums = _intervals(samples, stream="sum", direction=direction)
        # The first two seconds are reported by both ends for both streams and their sum;
        # a server's last reports follow each stream's own end ("2.0000-2.9993", its [SUM]
        # late or missing), so only those two are compared.
        assert [s.elapsed for s in sums][:2] == [1.0, 2.0]
        streams = [s for s in _intervals(samples, direction=direction)
                   if s.labels["stream"] != "sum"]
        assert len({s.labels["stream"] for s in streams}) == 2
        for total in sums[:2]:
            parts = [s.value for s in streams if s.elapsed == total.elapsed]
            assert len(parts) == 2
            assert sum(parts) == pytest.approx(total.value, rel=0.05)
        finals = pick(samples, "net_bandwidth_bytes", SUMMARY)
        assert {s.labels["stream"] for s in finals} >= {s.labels["stream"] for s in streams}


def test_iperf2_udp() -> None:
    client_text, server_text = iperf2_pair("-u", "-b", "10M")
    client = parse(Iperf2Parser, client_text)
    srv = parse(Iperf2Parser, server_text)
    target = 10e6 / 8
    sent = _intervals(client, direction="send")
    assert len(sent) == SECONDS
    assert all(s.value == pytest.approx(target, rel=0.1) for s in sent)
    report = one(client, "net_bandwidth_bytes", SUMMARY, direction="receive")
    assert report == pytest.approx(target, rel=0.1)
    assert 0 <= one(client, "net_loss_ratio", SUMMARY) < 0.5
    received = _intervals(srv, direction="receive")
    assert len(received) >= SECONDS - 1
    assert len(pick(srv, "net_jitter_seconds", INTERVAL)) == len(received)
    assert len(pick(srv, "net_loss_ratio", INTERVAL)) == len(received)


# --- the partial last interval ---------------------------------------------------------------

def _iperf3_bytes(*client_args: str) -> tuple[str, str]:
    """A client that sends 26 MB at 100 Mbit/s (about 2.2 s): its last interval is partial."""
    exe = require_tool("iperf3")
    port = free_port()
    server_args = [exe, "-s", "-1", "-p", str(port), "-B", "127.0.0.1", *(
        ["-J"] if "-J" in client_args else [])]
    with server(server_args, port) as proc:
        client = run_client([exe, "-c", "127.0.0.1", "-p", str(port), "-n", "26M", "-b", "100M",
                             "-i", "1", *client_args])
        return client, server_output(proc)


_PRINTED = re.compile(r"\]\s+(\d+\.\d+)-\s*(\d+\.\d+)\s+sec\s+\S+ \S+\s+([\d.]+) (\w?)bits/sec"
                      r"(?!.*(?:sender|receiver))")


def test_iperf3_last_sub_second_interval_says_its_duration() -> None:
    """iperf3 -n: the last line is e.g. ``2.00-2.17 sec ... 97.8 Mbits/sec``: a rate over
    0.17 s. Its samples carry duration 0.17 (the whole seconds before it none), client and
    server, and its value is the rate iperf3 printed."""
    for text in _iperf3_bytes():
        lines = [m for m in map(_PRINTED.search, text.split("\n")) if m is not None]
        start, end = float(lines[-1].group(1)), float(lines[-1].group(2))
        assert 0.005 < end - start < 0.9, text  # the run did end on a partial second
        samples = parse(Iperf3Parser, text)
        bw = _intervals(samples)
        assert [s.duration for s in bw[:-1]] == [None] * (len(bw) - 1)
        assert bw[-1].duration == pytest.approx(end - start)
        assert bw[-1].elapsed == end
        unit = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}[lines[-1].group(4)]
        assert bw[-1].value == pytest.approx(float(lines[-1].group(3)) * unit / 8, rel=0.01)
        # every sample of that line says so
        assert all(s.duration == bw[-1].duration for s in samples
                   if s.kind == INTERVAL and s.elapsed == end)


def test_iperf3_json_last_sub_second_interval_says_its_duration() -> None:
    client_text, _server = _iperf3_bytes("-J")
    doc = json.loads(client_text)
    last = doc["intervals"][-1]["sum"]
    assert 0.005 < last["seconds"] < 0.9
    samples = parse(Iperf3JsonParser, client_text)
    bw = _intervals(samples, stream="sum")
    assert [s.duration for s in bw[:-1]] == [None] * (len(bw) - 1)
    assert bw[-1].duration == pytest.approx(last["seconds"], rel=1e-9)
    assert bw[-1].value == pytest.approx(last["bits_per_second"] / 8, rel=1e-9)
