"""iperf3's text output, client and server (iperf 3.0 to 3.18+).

Parsed lines (``[ID]`` is the stream's socket number, or ``SUM`` with ``-P``)::

    [  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec    0    458 KBytes      TCP sender
    [  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec                         TCP receiver
    [SUM]   0.00-1.00   sec  3.80 GBytes  32.6 Gbits/sec    0                    -P N sum
    [  5]   0.00-1.00   sec  11.9 MBytes   100 Mbits/sec  382                    UDP sender
    [  5]   0.00-1.00   sec  11.9 MBytes   100 Mbits/sec  0.004 ms  0/382 (0%)   UDP receiver
    [  5][TX-C]   0.00-1.00   sec ...                                            --bidir
    [  5]   0.00-30.00  sec  29.1 GBytes  8.33 Gbits/sec  13596   sender         end summary

Units (iperf3 src/units.c, unit_snprintf): rates are decimal bits (``Gbits/sec`` = 1e9 bit/s,
bytes/s = /8); byte quantities (Transfer, Cwnd, and rates printed with ``-f K|M|G``) are binary
(``MBytes`` = 2**20).

Direction (``direction`` label) is from the point of view of the host that printed the line:

* ``--bidir`` role tags: ``TX`` = send, ``RX`` = receive.
* end-summary lines say ``sender``/``receiver`` (= send/receive: which end measured it).
* interval lines with Retr/Cwnd (TCP) or only a datagram count (UDP) come from the sending
  side; lines with jitter/loss come from the receiving side.
* otherwise the mode: a client sends unless "Reverse mode" was announced; a server
  ("Accepted connection from") receives.

Stream labels: the socket number (``"5"``), ``"sum"``; with ``--bidir`` the ``[SUM]`` of the
reverse flows (``RX-C`` on the client, ``TX-S`` on the server) is ``"sum-reverse"``, like
iperf3's JSON ``sum_bidir_reverse``. ``port``: the server's port of the test, where the output
says it (``Server listening on 5201``, ``Connecting to host X, port 5201``): several iperf3
servers on one host (one per client, as benchtui runs a step with several clients) give
series of their own, and each client's series share its server's port.

Skipped: ``(omitted)`` intervals (``-O``), zero-length tail intervals the server prints after
the last full one (``2.00-2.00``: their rate is noise), jitter/loss on ``sender`` summary lines
(iperf3 prints zeros there), all-zero ``sender`` summaries on a server (it cannot measure the
client's side), the UDP datagram counts, and the ``Server output:`` section of
``--get-server-output`` (the server's own lines, which would duplicate series).
Time: ``t`` is the time the line was received; ``elapsed`` is the interval's end (``1.00`` of
``0.00-1.00``), relative to the start of the test. An interval shorter than the run's others
(the last one, ``10.00-10.04 sec``) says how long it covered: ``Sample.duration`` = 0.04.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.model.units import parse_bits_quantity, parse_bits_rate, parse_float
from benchtui.parsers.base import NominalInterval, Parser

#: An interval or summary line, anywhere in the line (``--timestamps`` and ``--title`` add a
#: prefix).
_LINE: Final = re.compile(
    r"\[\s*(?P<id>\d+|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+"
    r"(?P<start>\d+\.\d+)-\s*(?P<end>\d+\.\d+)\s+sec\s+"
    r"(?P<xfer>\d+(?:\.\d+)?)\s+(?P<xunit>[KMGT]?Bytes)\s+"
    r"(?P<rate>\d+(?:\.\d+)?)\s+(?P<runit>[KMGT]?bits/sec|[KMGT]?Bytes/sec)(?P<rest>.*)$"
)
#: The start of such a line: when it matches but _LINE does not, the line is malformed.
_PREFIX: Final = re.compile(r"\[\s*(?:\d+|SUM)\](?:\[[TR]X-[CS]\])?\s+\d+\.\d+-\s*\d+\.\d+\s+sec")
_UDP_REST: Final = re.compile(
    r"^\s+(?P<jitter>\d+(?:\.\d+)?)\s+ms\s+(?P<lost>-?\d+)/\s*(?P<total>\d+)\s+\(")
_TCP_REST: Final = re.compile(
    r"^\s+(?P<retr>\d+)(?:\s+(?P<cwnd>\d+(?:\.\d+)?)\s+(?P<cunit>[KMGT]?Bytes))?(?=\s|$)")
_INTERVAL_DETECT: Final = re.compile(
    r"^.{0,80}?\[\s*(?:\d+|SUM)\](?:\[[TR]X-[CS]\])?\s+\d+\.\d\d-\s*\d+\.\d\d\s+sec\s+\d",
    re.MULTILINE)
_IPERF3_MARKERS: Final = re.compile(
    r"^(?:iperf Done\.|- - - - - - - - - -|Connecting to host \S+, port \d+"
    r"|Accepted connection from \S+, port \d+|Server listening on \d+"
    r"|Reverse mode, remote host)", re.MULTILINE)
_IPERF2_MARKERS: Final = re.compile(
    r"^(?:Client connecting to \S+, (?:TCP|UDP) port|Server listening on (?:TCP|UDP) port"
    r"|TCP window size:|UDP buffer size:)", re.MULTILINE)

_LISTENING_PORT: Final = re.compile(r"Server listening on (\d+)")
_CONNECTING_PORT: Final = re.compile(r"Connecting to host \S+, port (\d+)")


def _port(pattern: re.Pattern[str], text: str) -> str | None:
    m = pattern.search(text)
    return m.group(1) if m is not None else None


#: Intervals shorter than this are the server's tail fragments (printed as ``2.00-2.00``).
MIN_INTERVAL_SECONDS: Final = 0.005


def rate_bytes(value: str, unit: str) -> float | None:
    """An iperf rate column ("941", "Mbits/sec" or "112", "MBytes/sec") in bytes per second."""
    if unit.endswith("bits/sec"):
        return parse_bits_rate(value, unit)
    return parse_bits_quantity(value, unit[:-4])


class Iperf3Parser(Parser):
    """iperf3 client and server text output."""

    name: ClassVar[str] = "iperf3"
    tool: ClassVar[str] = "iperf3"
    description: ClassVar[str] = "iperf3 text output (client or server; -P, -R, -u, --bidir)"
    conflicts: ClassVar[tuple[str, ...]] = ("iperf2",)

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._new_run(client=None)
        self._in_server_output = False
        #: The server's port of the test ("Server listening on 5201", "Connecting to host
        #: X, port 5201"): the ``port`` label, which tells apart the tests of several
        #: servers on one host (benchtui runs one per client).
        self._port: str | None = None

    def _new_run(self, *, client: bool | None) -> None:
        self._client = client
        self._reverse = False
        self._udp_run = False
        self._after_separator = False
        self._in_summary = False
        self._nominal = NominalInterval()

    @classmethod
    def detect(cls, head: str) -> int:
        intervals = _INTERVAL_DETECT.search(head) is not None
        iperf3 = _IPERF3_MARKERS.search(head) is not None
        iperf2 = _IPERF2_MARKERS.search(head) is not None
        if intervals and iperf3:
            return 95
        if intervals:
            return 40 if iperf2 else 70
        return 40 if iperf3 and not iperf2 else 0

    # --- lines ---------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if self._in_server_output:
            if "iperf Done." in line:
                self._in_server_output = False
            return None
        if "sec" in line:
            m = _LINE.search(line)
            if m is not None:
                self._after_separator = False
                return self._measurement(m, line, t)
            if _PREFIX.search(line) is not None:
                self.warn("truncated or malformed iperf3 interval line", line)
                return None
        self._other(line)
        return None

    def _other(self, line: str) -> None:
        """Headers, separators and the lines that start a run."""
        text = line.strip()
        if "[ ID]" in text:
            self._udp_run = "Datagrams" in text
            if self._after_separator:
                self._in_summary = True
            self._after_separator = False
            return
        if text.startswith("- - - - -"):
            self._after_separator = True
            return
        self._after_separator = False
        # "in", not startswith: --timestamps and --title prefix every line.
        if "Connecting to host " in text:
            self._new_run(client=True)
            self._port = _port(_CONNECTING_PORT, text)
        elif "Accepted connection from " in text or "Server listening on " in text:
            self._new_run(client=False)
            if "Server listening on " in text:
                self._port = _port(_LISTENING_PORT, text)
        elif "Reverse mode, remote host " in text:
            self._reverse = True
        elif text.endswith(("Server output:", "Server JSON output:")):
            self._in_server_output = True
        elif "iperf3: error" in text or "iperf3: interrupt" in text:
            self.warn("iperf3 reported an error", text)
        else:
            self.unknown()

    def _measurement(self, m: re.Match[str], line: str, t: float | None) -> list[Sample] | None:
        rest = m.group("rest")
        if "(omitted)" in rest:
            return None
        start = parse_float(m.group("start"))
        end = parse_float(m.group("end"))
        rate = rate_bytes(m.group("rate"), m.group("runit"))
        if start is None or end is None or rate is None:
            self.warn("unreadable numbers in iperf3 line", line)
            return None
        tail = rest.rstrip()
        side = "sender" if tail.endswith("sender") else (
            "receiver" if tail.endswith("receiver") else "")
        summary = bool(side) or self._in_summary
        if not summary and end - start < MIN_INTERVAL_SECONDS:
            return None
        udp = _UDP_REST.match(rest)
        tcp = None if udp is not None else _TCP_REST.match(rest)
        # A lone count after the rate is UDP's "Total Datagrams" when the header says UDP.
        datagrams_only = tcp is not None and tcp.group("cwnd") is None and self._udp_run
        if datagrams_only:
            tcp = None
        stream = self._stream(m.group("id"), m.group("role"))
        direction = self._direction(m.group("role"), side, udp is not None,
                                    tcp is not None or datagrams_only)
        if (side == "sender" and self._client is False and rate == 0.0
                and parse_float(m.group("xfer")) == 0.0):
            return None  # a server's placeholder for the client's figures
        kind = SUMMARY if summary else INTERVAL
        out = [self.sample("net_bandwidth_bytes", rate,
                           {"stream": stream, "direction": direction}, t,
                           kind=kind, elapsed=end)]
        if tcp is not None:
            retr = parse_float(tcp.group("retr"))
            if retr is not None:
                out.append(self.sample("net_retransmits", retr, {"stream": stream}, t,
                                       kind=kind, elapsed=end))
            if tcp.group("cwnd") is not None:
                cwnd = parse_bits_quantity(tcp.group("cwnd"), tcp.group("cunit"))
                if cwnd is not None:
                    out.append(self.sample("net_cwnd_bytes", cwnd, {"stream": stream}, t,
                                           kind=kind, elapsed=end))
        if udp is not None and side != "sender":
            out.extend(self._udp(udp, stream, t, kind, end))
        if self._port is not None:
            for sample in out:
                sample.labels["port"] = self._port
        if not summary:
            # the last interval of a run is often a fraction of a second (10.00-10.04 sec)
            duration = self._nominal.duration(round(end - start, 9))
            if duration is not None:
                for sample in out:
                    sample.duration = duration
        return out

    def _udp(self, udp: re.Match[str], stream: str, t: float | None, kind: str,
             end: float) -> list[Sample]:
        out: list[Sample] = []
        jitter = parse_float(udp.group("jitter"))
        if jitter is not None:
            out.append(self.sample("net_jitter_seconds", jitter / 1000.0, {"stream": stream},
                                   t, kind=kind, elapsed=end))
        lost = parse_float(udp.group("lost"))
        total = parse_float(udp.group("total"))
        if lost is not None and total:
            out.append(self.sample("net_loss_ratio", lost / total, {"stream": stream}, t,
                                   kind=kind, elapsed=end))
        return out

    @staticmethod
    def _stream(ident: str, role: str | None) -> str:
        if ident != "SUM":
            return ident
        if role in ("RX-C", "TX-S"):
            return "sum-reverse"
        return "sum"

    def _direction(self, role: str | None, side: str, has_jitter: bool,
                   sender_columns: bool) -> str:
        if side:
            return "send" if side == "sender" else "receive"
        if role is not None:
            return "send" if role.startswith("TX") else "receive"
        if has_jitter:
            return "receive"
        if sender_columns:
            return "send"
        if self._client is None or self._client:
            return "receive" if self._reverse else "send"
        return "receive"
