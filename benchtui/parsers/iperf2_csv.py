"""iperf 2's CSV report format (``iperf -y C``, ``--reportstyle C``), client and server.

One row per report, no header. TCP rows have 9 fields, UDP rows 14::

    stamp,addr,port,addr,port,id,start-end,bytes,bits/s                           TCP
    stamp,addr,port,addr,port,id,start-end,bytes,bits/s,jitter_ms,lost,total,loss_%,out_of_order

    20261124023156,127.0.0.1,33658,127.0.0.1,15301,1,0.0-1.0,1874329660,14994637280
    20261124023203.264,127.0.0.1,45534,127.0.0.1,15303,1,0.0-1.0,1679294524,13434356192  (-e)
    20261124023206,127.0.0.1,42322,127.0.0.1,15304,1,0.0-1.0,2623950,20991600,0.000,0,1785,0.000,0

``net_bandwidth_bytes`` is ``bits/s`` / 8 (decimal bits, as iperf computes it: bytes × 8 /
interval); the byte count is not used. UDP rows also give ``net_jitter_seconds`` (ms / 1000)
and ``net_loss_ratio`` (lost / total) when they are the receiving side's figures (see below).
A total of ``-1`` (iperf 2.1's UDP client in its own final row: it does not know) gives no
loss. Rows of more than 14 fields (later iperf 2 releases append ``-e`` columns) give the
bandwidth only; rows of 10 to 13 fields, or with fields that are not numbers, are warnings.

Stream label: the transfer ID (``"1"``), ``"sum"`` for a ``-P`` sum row (ID ``-1`` in iperf
2.0.x, whose sum rows leave the addresses empty; iperf 2.1 prints port 0 on its sum rows).

Interval or whole-run summary: the rules of the text parser (``iperf2``). A row starting at 0
after the stream had intervals is its summary; the first row of a stream starting at 0 is held
until the stream's next row (contiguous: it was an interval; another row starting at 0: it was
an interval and the new one is the summary) or the end of the stream (an interval if a stream
cut short had intervals, else the summary: a run without ``-i`` prints one row per stream).
Streams are told apart by transfer ID and the two endpoints, so a second run appended to the
same output (new client ports) starts new streams.

Direction, and its limits. A row does not say which end printed it, and iperf 2 versions
disagree on the order of the two endpoints: iperf 2.0.x prints the printing host's socket
first; iperf 2.1 prints the *sending* socket first at both ends (checked with 2.1.8 here: the
client's and the server's rows of one test carry the same ``client,port,server,port`` order;
with ``-R`` both carry ``server,port,client,port``). What the ports do tell is which endpoint
is the server's listening socket:

1. a port seen with two or more different peer ports in this output (``-P``, several runs);
2. else iperf 2's default port 5001;
3. else the one port outside Linux's default ephemeral range (32768-60999), where the kernel
   picks a client's port;
4. else (both ports ephemeral, one stream) the second endpoint, the usual case.

The host that printed the rows is taken to be the client, the usual way of running ``-y C``
(the text parser assumes the same when no ``Server listening`` header was seen): a row whose
listening socket is the second endpoint is ``send``, the first ``receive`` (a 2.1 client with
``-R``; a 2.0.x server). UDP rows correct this from what only a receiver prints, per stream
and from then on: non-zero jitter, lost or out-of-order counts, or a summary with a datagram
total (not ``-1``) make it ``receive``, with jitter and loss; a total of ``-1`` makes it
``send``, without them (a sender's jitter and loss columns are zeros it did not measure).
The limit: an iperf 2.1 server's TCP rows are indistinguishable from its client's and come out
``send`` (a 2.1 ``-R`` server: ``receive``); so do a 2.1 UDP server's rows until one shows a
receiver's figure (on a quiet link, its summary). For a server's output, name the parser
``iperf2-csv-server`` (``--tool``; detection never picks it): its rows are the receiving
side's (a server receives), except UDP streams whose final total is ``-1`` (a sender's). It
cannot see ``-R`` (the server then sends; only the text format's header says so).

Time: the stamp (``YYYYMMDDHHMMSS``, ``-e`` adds ``.mmm``) is local time without a zone,
turned into Unix time as ``_wallclock`` does (zone learnt from the receive time when live,
else read as UTC); iperf 2.1 stamps it with the interval's end. Later releases prefix ``-e``
stamps with the zone (``+0800:20261124023203.264123``, from iperf's ``iperf_formattime.c``,
not seen here): the time is then exact. iperf 2.1.8 stamps a report of
a run without ``-i`` ``19700101000000`` (no clock): such rows take the receive time ``t``.
``elapsed`` is the interval's end (``2.0`` of ``0.0-2.0``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Final

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.model.units import parse_float
from benchtui.parsers._wallclock import ZoneGuess
from benchtui.parsers.base import Parser

#: What makes a line an iperf 2 CSV row: a 14-digit stamp (maybe after its zone) and a comma.
_ROW_START: Final = re.compile(r"^\s*(?:[+-]\d{4}:)?\d{14}(?:\.\d+)?,", re.ASCII)
#: The stamp, in ``_wallclock.STAMP``'s groups (year ... fraction, zone) for ``ZoneGuess``.
_STAMP: Final = re.compile(
    r"(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?", re.ASCII)
_INTERVAL: Final = re.compile(r"(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)", re.ASCII)
_ID: Final = re.compile(r"-?\d{1,9}", re.ASCII)
_PORT: Final = re.compile(r"\d{0,5}", re.ASCII)
_COUNT: Final = re.compile(r"\d{1,20}", re.ASCII)
#: A whole row, for detection only (strict: the shape of both row kinds).
_DETECT_ROW: Final = re.compile(
    r"^(?:[+-]\d{4}:)?\d{14}(?:\.\d{1,6})?,[^,\s]*,\d{0,5},[^,\s]*,\d{0,5},-?\d+,\d+\.\d+-\d+\.\d+,\d+,\d+"
    r"(?:,-?\d+\.\d+,-?\d+,-?\d+,-?\d+\.\d+,-?\d+)?(?:,[^,\s]*)*\s*$", re.MULTILINE | re.ASCII)

_TCP_FIELDS: Final = 9
_UDP_FIELDS: Final = 14
#: iperf 2.1.8 stamps a report of a run without -i with the epoch: no clock.
_NO_CLOCK: Final = "19700101"
_DEFAULT_PORT: Final = 5001
_EPHEMERAL: Final = range(32768, 61000)
#: Peer ports remembered per port: two different ones make it a listening port.
_PARTNERS_KEPT: Final = 2

_SEND: Final = "send"
_RECEIVE: Final = "receive"


@dataclass(slots=True)
class _Row:
    """One parsed CSV row."""

    t: float | None
    first_port: int | None
    second_port: int | None
    label: str
    start: float
    end: float
    rate: float
    #: UDP: jitter (ms), lost, total, out-of-order; None for TCP rows and wider rows.
    udp: tuple[float, float, float, float] | None


@dataclass(slots=True)
class _Stream:
    had_interval: bool = False
    pending: _Row | None = None
    done: bool = False
    #: UDP evidence of which end printed the rows: "send", "receive" or None (unknown).
    role: str | None = None


class Iperf2CsvParser(Parser):
    """iperf 2 ``-y C`` rows (client or server, TCP or UDP)."""

    name: ClassVar[str] = "iperf2-csv"
    tool: ClassVar[str] = "iperf2"
    aliases: ClassVar[tuple[str, ...]] = ("iperf2_csv", "iperf-csv")
    description: ClassVar[str] = "iperf 2 CSV reports (-y C; client or server, TCP or UDP)"
    #: True when the rows are known to be a server's (``iperf2-csv-server``).
    server_side: ClassVar[bool] = False

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._clock = ZoneGuess()
        self._streams: dict[tuple[str, ...], _Stream] = {}
        self._partners: dict[int, set[int]] = {}
        #: Direction of the last non-sum row, for sum rows (which carry no usable ports).
        self._last_direction = _SEND

    @classmethod
    def detect(cls, head: str) -> int:
        rows = 0
        for _ in _DETECT_ROW.finditer(head):
            rows += 1
            if rows >= 2:
                return 95
        return 90 if rows else 0

    # --- lines ---------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if "," not in line or _ROW_START.match(line) is None:
            self.unknown()
            return None
        fields = line.strip().split(",")
        row = self._row(fields, t)
        if row is None:
            self.warn("malformed iperf 2 CSV row", line)
            return None
        key = (fields[5], fields[1], fields[2], fields[3], fields[4])
        stream = self._streams.get(key)
        if stream is None or stream.done:
            stream = self._streams[key] = _Stream()
        self._learn_ports(row)
        return self._measurement(row, stream)

    def flush(self) -> list[Sample] | None:
        # -i applies to every stream: a stream cut short after intervals makes a held first
        # row an interval too; otherwise a held row is its run's only report, the summary.
        periodic = any(s.had_interval and not s.done for s in self._streams.values())
        out: list[Sample] = []
        for stream in self._streams.values():
            out.extend(self._resolve(stream, as_interval=periodic))
        self._streams = {}
        return out

    def _row(self, fields: list[str], t: float | None) -> _Row | None:
        count = len(fields)
        if count < _TCP_FIELDS or _TCP_FIELDS < count < _UDP_FIELDS:
            return None
        interval = _INTERVAL.fullmatch(fields[6])
        if (interval is None or _ID.fullmatch(fields[5]) is None
                or not (_PORT.fullmatch(fields[2]) and _PORT.fullmatch(fields[4]))
                or _COUNT.fullmatch(fields[7]) is None or _COUNT.fullmatch(fields[8]) is None):
            return None
        start = parse_float(interval.group(1))
        end = parse_float(interval.group(2))
        bits = parse_float(fields[8])
        if start is None or end is None or bits is None or end < start:
            return None
        udp: tuple[float, float, float, float] | None = None
        if count == _UDP_FIELDS:
            jitter = parse_float(fields[9])
            lost = parse_float(fields[10])
            total = parse_float(fields[11])
            disorder = parse_float(fields[13])
            if (jitter is None or lost is None or total is None or disorder is None
                    or parse_float(fields[12]) is None):
                return None
            udp = (jitter, lost, total, disorder)
        first = int(fields[2]) if fields[2] else None
        second = int(fields[4]) if fields[4] else None
        ident = int(fields[5])
        is_sum = ident < 0 or not first or not second
        return _Row(self._when(fields[0], t), first, second, "sum" if is_sum else str(ident),
                    start, end, bits / 8.0, udp)

    def _when(self, stamp: str, t: float | None) -> float | None:
        stamp = stamp.strip()
        zone, colon, body = stamp.partition(":")
        if colon:  # "+0800:20261124023203.264": the zone first (later releases, -e)
            stamp = body + zone
        if stamp.startswith(_NO_CLOCK):
            return t
        m = _STAMP.fullmatch(stamp)
        if m is None:
            return t
        when = self._clock.epoch(m, t)
        return when if when is not None else t

    # --- interval or summary -------------------------------------------------------------

    def _measurement(self, row: _Row, stream: _Stream) -> list[Sample]:
        if row.start > 0.0:
            out = self._resolve(stream, as_interval=True)
            stream.had_interval = True
            out.extend(self._emit(row, stream, INTERVAL))
            return out
        if stream.pending is not None:
            # Two rows starting at 0: the held one was the first interval, this is the summary.
            out = self._resolve(stream, as_interval=True)
            out.extend(self._summary(row, stream))
            return out
        if stream.had_interval:
            return self._summary(row, stream)
        stream.pending = row
        return []

    def _summary(self, row: _Row, stream: _Stream) -> list[Sample]:
        stream.done = True
        return self._emit(row, stream, SUMMARY)

    def _resolve(self, stream: _Stream, *, as_interval: bool) -> list[Sample]:
        """Emit a held first row: an interval if ``as_interval``, else the stream's summary."""
        pending = stream.pending
        if pending is None:
            return []
        stream.pending = None
        if as_interval:
            stream.had_interval = True
            return self._emit(pending, stream, INTERVAL)
        return self._summary(pending, stream)

    # --- direction -----------------------------------------------------------------------

    def _learn_ports(self, row: _Row) -> None:
        a, b = row.first_port, row.second_port
        if not a or not b:
            return
        for port, peer in ((a, b), (b, a)):
            seen = self._partners.setdefault(port, set())
            if len(seen) < _PARTNERS_KEPT:
                seen.add(peer)

    def _listener_first(self, a: int, b: int) -> bool:
        """Whether the first endpoint is the server's listening socket (module doc, 1-4)."""
        a_listens = len(self._partners.get(a, ())) >= _PARTNERS_KEPT
        b_listens = len(self._partners.get(b, ())) >= _PARTNERS_KEPT
        if a_listens != b_listens:
            return a_listens
        if (a == _DEFAULT_PORT) != (b == _DEFAULT_PORT):
            return a == _DEFAULT_PORT
        if (a in _EPHEMERAL) != (b in _EPHEMERAL):
            return b in _EPHEMERAL
        return False

    def _direction(self, row: _Row, stream: _Stream, kind: str) -> str:
        udp = row.udp
        if udp is not None and stream.role is None:
            jitter, lost, total, disorder = udp
            if total == -1.0:
                stream.role = _SEND
            elif jitter > 0.0 or lost != 0.0 or disorder != 0.0 or (
                    kind == SUMMARY and total >= 0.0):
                stream.role = _RECEIVE
        if stream.role is not None:
            return stream.role
        if self.server_side:
            return _RECEIVE
        if row.label == "sum":
            return self._last_direction
        a, b = row.first_port, row.second_port
        direction = _RECEIVE if a and b and self._listener_first(a, b) else _SEND
        self._last_direction = direction
        return direction

    # --- samples -------------------------------------------------------------------------

    def _emit(self, row: _Row, stream: _Stream, kind: str) -> list[Sample]:
        direction = self._direction(row, stream, kind)
        t, end = row.t, row.end
        out = [self.sample("net_bandwidth_bytes", row.rate,
                           {"stream": row.label, "direction": direction},
                           t, kind=kind, elapsed=end)]
        if row.udp is None or direction != _RECEIVE:
            return out
        jitter, lost, total, _ = row.udp
        labels = {"stream": row.label}
        if jitter >= 0.0:
            out.append(self.sample("net_jitter_seconds", jitter / 1000.0, labels, t, kind=kind,
                                   elapsed=end))
        if total > 0.0:
            out.append(self.sample("net_loss_ratio", lost / total, dict(labels), t, kind=kind,
                                   elapsed=end))
        return out


class Iperf2CsvServerParser(Iperf2CsvParser):
    """``iperf -s -y C`` rows, declared a server's: never chosen by detection, only by name."""

    name: ClassVar[str] = "iperf2-csv-server"
    aliases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = "iperf 2 CSV reports of a server (-s -y C), by --tool only"
    server_side: ClassVar[bool] = True

    @classmethod
    def detect(cls, head: str) -> int:
        return 0
