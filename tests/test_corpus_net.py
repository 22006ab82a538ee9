"""Every iperf3 and iperf 2 file of the shared corpus (iperf3 3.6-3.9 JSON with several tests
in one file and -O omitted intervals, iperf3 text on Linux and Windows builds, TCP, UDP, -P 4;
iperf 2 client and server: see ../shared/corpus/*/SOURCE), read as ``benchtui parse``.

Each figure iperf printed (every interval's and every summary's bitrate, retransmits, cwnd,
jitter) is read here independently (the standard library's json; a regular expression of the
interval line) and must come out in base units, within half a unit of its last printed digit.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from tests.corpus import Printed, corpus_files, corpus_path, exact, match_all, parse_file, printed

IPERF3_JSON = corpus_files("iperf3", ".json")
IPERF3_TEXT = corpus_files("iperf3", ".txt")
IPERF2 = corpus_files("iperf2")
_BITS = {"": 1 / 8, "K": 1e3 / 8, "M": 1e6 / 8, "G": 1e9 / 8}
_BYTES = {"": 1.0, "K": 1024.0, "M": 1024.0**2, "G": 1024.0**3}


def test_the_corpus_is_there() -> None:
    assert len(IPERF3_JSON) >= 4 and len(IPERF3_TEXT) >= 5 and len(IPERF2) >= 2


def _documents(text: str) -> list[dict[str, Any]]:
    out, pos = [], 0
    while (start := text.find("{\n", pos)) >= 0:
        end = text.index("\n}", start)
        out.append(json.loads(text[start:end + 2]))
        pos = end + 2
    return out


@pytest.mark.parametrize("name", IPERF3_JSON)
def test_iperf3_json_every_figure(name: str) -> None:
    parsed = parse_file("iperf3", name)
    assert parsed.names == ["iperf3-json"] and not parsed.warnings
    want: dict[tuple[str, str], list[Printed]] = {}

    def add(kind: str, metric: str, value: float) -> None:
        want.setdefault((kind, metric), []).append(exact(value))

    for doc in _documents(corpus_path("iperf3", name).read_text(encoding="utf-8")):
        for interval in doc["intervals"]:
            for obj in [*interval["streams"], interval["sum"]]:
                if obj.get("omitted") or obj["seconds"] < 0.005:
                    continue
                add(INTERVAL, "net_bandwidth_bytes", obj["bits_per_second"] / 8)
                if "retransmits" in obj:
                    add(INTERVAL, "net_retransmits", obj["retransmits"])
        end = doc["end"]
        for key in ("sum_sent", "sum_received"):
            add(SUMMARY, "net_bandwidth_bytes", end[key]["bits_per_second"] / 8)
        for stream in end["streams"]:
            for side in ("sender", "receiver"):
                add(SUMMARY, "net_bandwidth_bytes", stream[side]["bits_per_second"] / 8)
    for (kind, metric), figures in want.items():
        match_all({metric: figures}, [s for s in parsed.samples if s.kind == kind],
                  f"{name} {kind}")


_LINE = re.compile(r"\[\s*(?:\d+|SUM)\](?:\[[TR]X-[CS]\])?\s+(\d+\.\d+)-\s*(\d+\.\d+)\s+sec\s+"
                   r"[\d.]+ [KMGT]?Bytes\s+([\d.]+) ([KMG]?)bits/sec(.*)$")


def _iperf_lines(text: str, *, retr: bool) -> dict[tuple[str, str], list[Printed]]:
    """Bitrates (and retransmits, cwnd with ``retr``) of the interval and summary lines."""
    want: dict[tuple[str, str], list[Printed]] = {}
    # Old iperf3 (Windows builds) does not say "sender"/"receiver": its summary is the line
    # from 0 after a "- - - -" separator, once the run's intervals went past 0.
    after_separator = later = False
    for raw in text.replace("\r", "\n").split("\n"):
        if raw.startswith("- - - -"):
            after_separator = True
        elif raw.startswith(("Connecting to host", "Accepted connection")):
            after_separator = later = False
        m = _LINE.search(raw)
        if m is None or "(omitted)" in m.group(5):
            continue
        start, end, rest = float(m.group(1)), float(m.group(2)), m.group(5)
        summary = rest.rstrip().endswith(("sender", "receiver")) or (
            after_separator and later and start == 0)
        later = later or start > 0
        kind = SUMMARY if summary else INTERVAL
        if end - start < 0.005 and not summary:
            continue
        want.setdefault((kind, "net_bandwidth_bytes"), []).append(
            printed(m.group(3), _BITS[m.group(4)]))
        tcp = re.match(r"^\s+(\d+)(?:\s+([\d.]+) ([KMG]?)Bytes)?", rest)
        if retr and tcp is not None and "ms" not in rest:
            want.setdefault((kind, "net_retransmits"), []).append(printed(tcp.group(1)))
            if tcp.group(2) is not None:
                want.setdefault((kind, "net_cwnd_bytes"), []).append(
                    printed(tcp.group(2), _BYTES[tcp.group(3)]))
        udp = re.match(r"^\s+([\d.]+) ms\s+(\d+)/\s*(\d+)", rest)
        if udp is not None:
            want.setdefault((kind, "net_jitter_seconds"), []).append(
                printed(udp.group(1), 1e-3))
    return want


@pytest.mark.parametrize("name", IPERF3_TEXT)
def test_iperf3_text_every_figure(name: str) -> None:
    parsed = parse_file("iperf3", name)
    assert parsed.names == ["iperf3"] and not parsed.warnings
    text = corpus_path("iperf3", name).read_text(encoding="utf-8", errors="replace")
    want = _iperf_lines(text, retr="Retr" in text)
    udp = "Total Datagrams" in text
    for (kind, metric), figures in want.items():
        if udp and metric == "net_retransmits":
            continue  # a UDP sender's lone count is its datagrams, not retransmits
        got = [s for s in parsed.samples if s.kind == kind]
        # a server's all-zero "sender" line is its placeholder for the client's figures
        kept = [f for f in figures if f.value or kind == INTERVAL
                or metric != "net_bandwidth_bytes"]
        match_all({metric: kept}, got, f"{name} {kind}")


def test_iperf3_text_key_figures_by_hand() -> None:
    """taskiperf: ``0.00-10.00 sec 53.9 MBytes 45.2 Mbits/sec 0 sender`` / ``52.0 MBytes 43.6
    Mbits/sec receiver``; first interval 57.5 Mbits/sec, cwnd 69.3 KBytes."""
    parsed = parse_file("iperf3", "taskiperf-client-tcp.txt")
    summary = {s.labels["direction"]: s for s in parsed.samples
               if s.kind == SUMMARY and s.metric == "net_bandwidth_bytes"}
    assert summary["send"].value == pytest.approx(45.2e6 / 8)
    assert summary["receive"].value == pytest.approx(43.6e6 / 8)
    assert summary["send"].elapsed == 10.0
    first = [s for s in parsed.samples if s.kind == INTERVAL and s.elapsed == 1.0]
    assert {s.metric: s.value for s in first} == {
        "net_bandwidth_bytes": pytest.approx(57.5e6 / 8), "net_retransmits": 0,
        "net_cwnd_bytes": pytest.approx(69.3 * 1024)}


@pytest.mark.parametrize("name", IPERF2)
def test_iperf2_every_bitrate(name: str) -> None:
    """iperf 2 marks neither intervals nor the summary: the figures are compared together."""
    parsed = parse_file("iperf2", name)
    assert parsed.names == ["iperf2"] and not parsed.warnings
    text = corpus_path("iperf2", name).read_text(encoding="utf-8", errors="replace")
    figures = [f for v in _iperf_lines(text, retr=False).values() for f in v]
    match_all({"net_bandwidth_bytes": figures}, parsed.samples, name)
