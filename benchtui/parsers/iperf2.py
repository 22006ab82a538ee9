"""iperf 2's text output (iperf 2.0.5 to 2.1.x), client and server.

Parsed lines (the interval format varies: ``0.0- 1.0``, ``0.00-1.00``, ``0.0000-1.0000``)::

    [  3]  0.0- 1.0 sec   112 MBytes   941 Mbits/sec                              2.0.x
    [  1] 0.0000-1.0000 sec  2.87 GBytes  24.7 Gbits/sec                          2.1.x
    [  1] 0.0000-1.0000 sec  2.53 GBytes  21.7 Gbits/sec  20709/0  11  1023K/56(25) us  ...
    [SUM] 0.0000-1.0000 sec  4.00 GBytes  34.4 Gbits/sec                          -P N
    [  1] 0.0000-2.0002 sec  25.0 MBytes   105 Mbits/sec   0.002 ms 0/17837 (0%)  UDP receiver
    [ *1] 0.0000-1.0000 sec  1.61 GBytes  13.8 Gbits/sec                          -R / --full-duplex

``-e`` client columns ``Write/Err Rtry Cwnd/RTT(var)`` give retransmits, cwnd (``K`` = KiB)
and RTT; the server's ``Reads=Dist`` and UDP latency/PPS columns are not used.
Rates are decimal bits (``Mbits/sec`` = 1e6 bit/s); byte quantities are binary.

Interval or whole-run summary: iperf 2 marks neither. A line is the end-of-run summary when it
starts at 0 and the stream already had an interval (``0.0-10.0`` after ``0.0-1.0 ...
9.0-10.0``), when it follows ``Server Report:``, or when a line starting at 0 is the stream's
only one (a run without ``-i``). The first line of a stream that starts at 0 is therefore held
until the stream's next line (a contiguous interval, or another line starting at 0) or the end
of the run decides (at the end: an interval if any stream of the run had intervals, as ``-i``
applies to all and the output was cut, else the summary); live, the first interval of each
stream arrives one interval late.

Direction, from the host that printed the line: a client (``Client connecting to``) sends, a
server (``Server listening on``) receives; flows marked ``*`` (reverse or full-duplex) and
streams whose connect line says ``(reverse)`` go the other way; lines with jitter/loss and
``Server Report:`` lines are the receiving side's figures. Stream labels: the ID without the
``*`` (``"3"``), ``"sum"`` for ``[SUM]`` and ``[SUM-N]``.
Time: ``t`` is the time the line was received; ``elapsed`` is the interval's end. An interval
shorter than the run's others (the last, ``9.0-9.4 sec``) says how long it covered
(``Sample.duration``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Final

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.model.units import parse_float
from benchtui.parsers.base import NominalInterval, Parser
from benchtui.parsers.iperf3 import rate_bytes

_LINE: Final = re.compile(
    r"\[\s*(?P<star>\*)?(?P<id>\d+|SUM(?:-\d+)?)\s*\](?:\[[^\]]*\])?\s*"
    r"(?P<start>\d+\.\d+)\s*-\s*(?P<end>\d+\.\d+)\s+sec\s+"
    r"(?P<xfer>\d+(?:\.\d+)?)\s+(?P<xunit>[KMGT]?Bytes)\s+"
    r"(?P<rate>\d+(?:\.\d+)?)\s+(?P<runit>[KMGTkmgt]?bits/sec|[KMGT]?Bytes/sec)(?P<rest>.*)$"
)
_PREFIX: Final = re.compile(r"\[\s*\*?(?:\d+|SUM(?:-\d+)?)\s*\]\s*\d+\.\d+\s*-\s*\d+\.\d+\s+sec")
_UDP_REST: Final = re.compile(
    r"^\s+(?:(?P<jitter>\d+(?:\.\d+)?)\s+ms\s+)?(?P<lost>-?\d+)/\s*(?P<total>\d+)\s+\(")
#: ``-e`` client columns after Write/Err: Rtry, then Cwnd/RTT in one of the shapes iperf 2's
#: src/Locale.c prints (report_bw_write_enhanced*_format): ``%8dK/%u us`` (2.0.x; ``-1K`` when
#: the kernel gave no cwnd), ``%8dK/%u(%u) us`` (2.1), ``%8dK(%u)/%u(%u) us`` (Cwnd(pkts),
#: 2.1.9+), ``%8dK(%u)/%dK(%u)/%u(%u) us`` (InF(pkts)/Cwnd(pkts)/RTT(var): the second is the
#: cwnd), ``NA/%u us`` and ``NA/%u(%u)us`` (no cwnd). The RTT is read in every shape.
_ENHANCED_REST: Final = re.compile(
    r"^\s+\d+/\d+\s+(?P<rtry>\d+)(?![\d.]|\s*pps)"
    r"(?:\s+(?:-?\d+K\(\d+\)/)?(?:(?P<cwnd>-?\d+)(?P<cunit>[KMG]?)(?:\(\d+\))?|NA)"
    r"/(?P<rtt>\d+)(?:\(\d+\))?\s*us)?")
_CONNECTED: Final = re.compile(r"\[\s*(?P<star>\*)?(?P<id>\d+)\s*\] local \S+ port \d+ connected")
_REPORT: Final = re.compile(r"\[\s*(?P<star>\*)?(?P<id>\d+|SUM(?:-\d+)?)\s*\] Server Report:")
_INTERVAL_DETECT: Final = re.compile(
    r"^\[\s*\*?(?:\d+|SUM(?:-\d+)?)\s*\]\s*\d+\.(?P<dec>\d+)\s*-\s*\d+\.\d+\s+sec\s+[\d.]+\s+"
    r"[KMGT]?Bytes", re.MULTILINE)
_IPERF2_MARKERS: Final = re.compile(
    r"^(?:Client connecting to \S+, (?:TCP|UDP) port|Server listening on (?:TCP|UDP) port"
    r"|TCP window size:|UDP buffer size:)", re.MULTILINE)
_IPERF3_MARKERS: Final = re.compile(
    r"^(?:iperf Done\.|- - - - - - - - - -|Connecting to host \S+, port \d+"
    r"|Accepted connection from \S+, port \d+|Server listening on \d+)", re.MULTILINE)

_CWND_UNITS: Final = {"": 1.0, "K": 1024.0, "M": 1024.0**2, "G": 1024.0**3}


@dataclass(slots=True)
class _Pending:
    """A stream's first line starting at 0, not yet known to be an interval or the summary."""

    match: re.Match[str]
    t: float | None


@dataclass(slots=True)
class _Stream:
    client: bool
    reverse: bool = False
    had_interval: bool = False
    pending: _Pending | None = None
    server_report: bool = False


class Iperf2Parser(Parser):
    """iperf 2 client and server text output."""

    name: ClassVar[str] = "iperf2"
    tool: ClassVar[str] = "iperf2"
    aliases: ClassVar[tuple[str, ...]] = ("iperf",)
    description: ClassVar[str] = "iperf 2 text output (client or server; -e, -P, -u, -R)"
    conflicts: ClassVar[tuple[str, ...]] = ("iperf3",)

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._client = True
        self._streams: dict[str, _Stream] = {}
        #: Whether the current run has printed measurements (a connect or header line after
        #: them starts a new run).
        self._measured = False
        self._nominal = NominalInterval()

    @classmethod
    def detect(cls, head: str) -> int:
        m = _INTERVAL_DETECT.search(head)
        iperf2 = _IPERF2_MARKERS.search(head) is not None
        iperf3 = _IPERF3_MARKERS.search(head) is not None
        if m is not None and iperf2:
            return 95
        if m is not None and not iperf3:
            # iperf3 prints two decimals; 1 (2.0.5) or 4 (2.1) decimals are iperf 2's own.
            return 40 if len(m.group("dec")) == 2 else 70
        if iperf2 and not iperf3:
            return 50
        return 0

    # --- lines ---------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if "sec" in line:
            m = _LINE.search(line)
            if m is not None:
                return self._measurement(m, t)
            if "Bytes" in line and _PREFIX.search(line) is not None:
                self.warn("truncated or malformed iperf line", line)
                return None
        if "connected" in line:
            c = _CONNECTED.search(line)
            if c is not None:
                return self._connected(c, line)
        if "Server Report:" in line:
            r = _REPORT.search(line)
            if r is not None:
                key = (r.group("star") or "") + r.group("id")
                stream = self._stream(key)
                out = self._resolve(key, stream)
                stream.server_report = True
                return out
        text = line.strip()
        if text.startswith("Client connecting to"):
            out = self._end_run() if self._measured else []
            self._client = True
            return out
        if text.startswith("Server listening on"):
            out = self._end_run() if self._measured else []
            self._client = False
            return out
        self.unknown()
        return None

    def flush(self) -> list[Sample] | None:
        return self._end_run()

    # --- state ---------------------------------------------------------------------------

    def _stream(self, key: str) -> _Stream:
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _Stream(client=self._client)
        return stream

    def _connected(self, c: re.Match[str], line: str) -> list[Sample]:
        key = (c.group("star") or "") + c.group("id")
        out = self._end_run() if self._measured else []
        self._streams[key] = _Stream(client=self._client, reverse="(reverse)" in line)
        return out

    def _end_run(self) -> list[Sample]:
        out: list[Sample] = []
        # -i applies to every stream: if one had intervals, a held first line is one too
        # (the output was cut); otherwise it is the run's only report, its summary.
        periodic = any(stream.had_interval for stream in self._streams.values())
        for key, stream in self._streams.items():
            out.extend(self._resolve(key, stream, as_interval=periodic))
        self._streams = {}
        self._measured = False
        self._nominal = NominalInterval()
        return out

    def _resolve(self, key: str, stream: _Stream, *, as_interval: bool = False) -> list[Sample]:
        """Emit a held first line: an interval if ``as_interval``, else the run's summary."""
        pending = stream.pending
        if pending is None:
            return []
        stream.pending = None
        if as_interval:
            stream.had_interval = True
        return self._emit(pending.match, pending.t, key, stream,
                          INTERVAL if as_interval else SUMMARY)

    def _measurement(self, m: re.Match[str], t: float | None) -> list[Sample]:
        key = (m.group("star") or "") + m.group("id")
        stream = self._stream(key)
        self._measured = True
        start = parse_float(m.group("start"))
        if start is None:
            return []
        if stream.server_report:
            stream.server_report = False
            return self._emit(m, t, key, stream, SUMMARY, report=True)
        if start > 0.0:
            out = self._resolve(key, stream, as_interval=True)
            stream.had_interval = True
            out.extend(self._emit(m, t, key, stream, INTERVAL))
            return out
        if stream.pending is not None:
            # Two lines starting at 0: the held one was the first interval, this is the summary.
            out = self._resolve(key, stream, as_interval=True)
            out.extend(self._emit(m, t, key, stream, SUMMARY))
            return out
        if stream.had_interval:
            return self._emit(m, t, key, stream, SUMMARY)
        stream.pending = _Pending(m, t)
        return []

    # --- samples -------------------------------------------------------------------------

    def _emit(self, m: re.Match[str], t: float | None, key: str, stream: _Stream, kind: str,
              *, report: bool = False) -> list[Sample]:
        end = parse_float(m.group("end"))
        rate = rate_bytes(m.group("rate"), m.group("runit"))
        if end is None or rate is None:
            self.warn("unreadable numbers in iperf line", m.group(0))
            return []
        ident = m.group("id")
        label = "sum" if ident.startswith("SUM") else ident
        rest = m.group("rest")
        udp = _UDP_REST.match(rest)
        flipped = key.startswith("*") or stream.reverse
        sends = stream.client != flipped
        direction = "receive" if report or udp is not None or not sends else "send"
        labels = {"stream": label}
        out = [self.sample("net_bandwidth_bytes", rate, {"stream": label, "direction": direction},
                           t, kind=kind, elapsed=end)]
        if udp is not None:
            if udp.group("jitter") is not None:
                jitter = parse_float(udp.group("jitter"))
                if jitter is not None:
                    out.append(self.sample("net_jitter_seconds", jitter / 1000.0, labels, t,
                                           kind=kind, elapsed=end))
            lost = parse_float(udp.group("lost"))
            total = parse_float(udp.group("total"))
            if lost is not None and total:
                out.append(self.sample("net_loss_ratio", lost / total, labels, t, kind=kind,
                                       elapsed=end))
        else:
            enhanced = _ENHANCED_REST.match(rest)
            if enhanced is not None:
                out.extend(self._enhanced(enhanced, labels, t, kind, end))
        start = parse_float(m.group("start"))
        if kind == INTERVAL and start is not None and end > start:
            # a last interval shorter than the others (9.0-9.4 sec) says how long it covered
            duration = self._nominal.duration(round(end - start, 9))
            if duration is not None:
                for sample in out:
                    sample.duration = duration
        return out

    def _enhanced(self, e: re.Match[str], labels: dict[str, str], t: float | None, kind: str,
                  end: float) -> list[Sample]:
        out: list[Sample] = []
        retry = parse_float(e.group("rtry"))
        if retry is not None:
            out.append(self.sample("net_retransmits", retry, labels, t, kind=kind, elapsed=end))
        if e.group("rtt") is not None:
            cwnd = parse_float(e.group("cwnd") or "")
            rtt = parse_float(e.group("rtt"))
            if cwnd is not None and cwnd >= 0:  # -1K: the kernel gave no cwnd
                out.append(self.sample("net_cwnd_bytes", cwnd * _CWND_UNITS[e.group("cunit")],
                                       labels, t, kind=kind, elapsed=end))
            if rtt is not None and rtt > 0:
                out.append(self.sample("net_rtt_seconds", rtt * 1e-6, labels, t, kind=kind,
                                       elapsed=end))
        return out
