"""iperf3's JSON output: ``-J`` (one document at the end) and ``--json-stream`` (iperf3 3.17+).

``-J`` prints one pretty-printed document (``{"start": ..., "intervals": [...], "end": ...}``)
when the test ends. ``--json-stream`` prints one unformatted object per line,
``{"event": NAME, "data": OBJ}``, as each part is ready (iperf3 src/iperf_api.c,
JSONStream_Output): ``start`` (the document's ``start``), one ``interval`` per interval (an
element of ``intervals``), ``end`` (the document's ``end``), ``error`` (a string). Both are
found by ``JsonStreamParser`` whatever their layout (re-indented by ``jq .``, compact, CRLF).

Samples (``stream`` = the socket number, ``"sum"``, or ``"sum-reverse"`` for ``--bidir``'s
``sum_bidir_reverse``; ``direction`` from each object's ``sender`` flag: this host sent or
received it):

* intervals (kind interval): ``net_bandwidth_bytes`` (bits_per_second / 8),
  ``net_retransmits``, ``net_cwnd_bytes`` (snd_cwnd), ``net_rtt_seconds`` (rtt, microseconds),
  ``net_jitter_seconds`` and ``net_loss_ratio`` (lost_packets / packets) for UDP receivers.
* end (kind summary): per stream ``sender``/``receiver`` (direction send/receive: which end
  measured it) or ``udp``; ``sum_sent``/``sum_received`` (and their ``_bidir_reverse``) as
  stream ``sum``/``sum-reverse``; ``net_rtt_seconds`` from mean_rtt;
  ``cpu_utilization_percent`` as ``cpu_ratio{side=local|remote, mode=total|user|system}``
  (this process's and the peer's CPU time over wall time; can exceed 1 with multi-threaded
  iperf3 3.16+); a side whose total is 0 (a server's view of the client) is skipped.

Time: ``t`` = ``start.timestamp`` (``timemillisecs`` when present, iperf3 3.20+, esnet/iperf
PR #1846; else ``timesecs``; the moment the control connection was made, shortly before the
first interval) + the interval's ``end``; without a start timestamp ``t`` is the time the line
was received. ``elapsed`` is the interval's (or the summary's) ``end``.
Skipped: a ``-J`` document that follows the ``end`` event of the same run
(``--json-stream-full``, iperf3 3.20: the events already gave its numbers), omitted intervals
(``-O``), intervals shorter than 5 ms (the server's tail fragment),
summary entries with zero bytes and zero rate (the side a server cannot measure), UDP packet
counts, ``server_output_*``.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar, Final

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers._json_stream import JsonStreamParser
from benchtui.parsers.base import NominalInterval
from benchtui.parsers.iperf3 import MIN_INTERVAL_SECONDS

#: A -J document (its "start" object first), at any indentation, compact or pretty-printed.
_DETECT_DOC: Final = re.compile(
    r'^[ \t]*\{\s*"start"\s*:\s*\{.*?"(?:connecting_to|accepted_connection|test_start)"',
    re.MULTILINE | re.DOTALL)
_DETECT_STREAM: Final = re.compile(
    r'^[ \t]*\{\s*"event"\s*:\s*"(?:start|interval|end)"\s*,\s*"data"\s*:', re.MULTILINE)
#: The keys of iperf3's JSON: a document or an event with at least one of them is iperf3's.
_KEYS: Final = ("event", "start", "intervals", "end", "error")
_END_SUMS: Final = (("sum_sent", "sum", "send"), ("sum_received", "sum", "receive"),
                    ("sum_sent_bidir_reverse", "sum-reverse", "send"),
                    ("sum_received_bidir_reverse", "sum-reverse", "receive"))


def _num(obj: dict[str, Any], key: str) -> float | None:
    """A finite number from a JSON object, else None (booleans are not numbers)."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


class Iperf3JsonParser(JsonStreamParser):
    """iperf3 -J and --json-stream output."""

    name: ClassVar[str] = "iperf3-json"
    tool: ClassVar[str] = "iperf3"
    aliases: ClassVar[tuple[str, ...]] = ("iperf3_json",)
    description: ClassVar[str] = "iperf3 JSON output (-J document or --json-stream events)"

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._t0: float | None = None
        self._client: bool | None = None
        self._reverse = False
        self._nominal = NominalInterval()
        #: An ``end`` event was seen: the document that --json-stream-full (3.20) prints after
        #: the events repeats them.
        self._streamed = False

    @classmethod
    def detect(cls, head: str) -> int:
        if _DETECT_STREAM.search(head) is not None:
            return 95
        if _DETECT_DOC.search(head) is not None and '"intervals"' in head:
            return 95
        return 0

    # --- documents ---------------------------------------------------------------------------

    def wanted(self, doc: object) -> bool:
        return isinstance(doc, dict) and any(key in doc for key in _KEYS)

    def document(self, doc: Any, t: float | None) -> list[Sample] | None:
        if "event" in doc:
            return self._event(doc, t)
        if self._streamed:
            self._streamed = False
            return []
        out: list[Sample] = []
        start = doc.get("start")
        self._start(start if isinstance(start, dict) else {})
        intervals = doc.get("intervals")
        if isinstance(intervals, list):
            for interval in intervals:
                if isinstance(interval, dict):
                    out.extend(self._interval(interval, t))
        end = doc.get("end")
        if isinstance(end, dict):
            out.extend(self._end(end, t))
        error = doc.get("error")
        if isinstance(error, str):
            self.warn(f"iperf3 reported an error: {error}")
        return out

    def flush(self) -> list[Sample] | None:
        return self.flush_pending() or None

    def _event(self, event: dict[str, Any], t: float | None) -> list[Sample]:
        name, data = event.get("event"), event.get("data")
        if name == "start" and isinstance(data, dict):
            self._streamed = False
            self._start(data)
        elif name == "interval" and isinstance(data, dict):
            return self._interval(data, t)
        elif name == "end" and isinstance(data, dict):
            self._streamed = True
            return self._end(data, t)
        elif name == "error":
            self.warn(f"iperf3 reported an error: {data}")
        else:
            self.unknown()
        return []

    # --- objects -------------------------------------------------------------------------

    def _start(self, start: dict[str, Any]) -> None:
        self._nominal = NominalInterval()
        stamp = start.get("timestamp")
        self._t0 = None
        if isinstance(stamp, dict):
            millis = _num(stamp, "timemillisecs")
            secs = _num(stamp, "timesecs")
            self._t0 = millis / 1000.0 if millis is not None else secs
        if "connecting_to" in start:
            self._client = True
        elif "accepted_connection" in start:
            self._client = False
        else:
            self._client = None
        test = start.get("test_start")
        self._reverse = isinstance(test, dict) and bool(_num(test, "reverse"))

    def _time(self, end: float, t: float | None) -> float | None:
        return self._t0 + end if self._t0 is not None else t

    def _sends(self, obj: dict[str, Any]) -> bool:
        flag = obj.get("sender")
        if isinstance(flag, bool):
            return flag
        if self._client is False:
            return self._reverse
        return not self._reverse

    def _interval(self, interval: dict[str, Any], t: float | None) -> list[Sample]:
        out: list[Sample] = []
        streams = interval.get("streams")
        if isinstance(streams, list):
            for stream in streams:
                if isinstance(stream, dict):
                    socket = _num(stream, "socket")
                    if socket is not None:
                        out.extend(self._measure(stream, str(int(socket)), INTERVAL, t))
        for key, label in (("sum", "sum"), ("sum_bidir_reverse", "sum-reverse")):
            total = interval.get(key)
            if isinstance(total, dict):
                out.extend(self._measure(total, label, INTERVAL, t))
        return out

    def _end(self, end: dict[str, Any], t: float | None) -> list[Sample]:
        out: list[Sample] = []
        streams = end.get("streams")
        if isinstance(streams, list):
            for stream in streams:
                if not isinstance(stream, dict):
                    continue
                for part, direction in (("sender", "send"), ("receiver", "receive"),
                                        ("udp", None)):
                    obj = stream.get(part)
                    if isinstance(obj, dict):
                        socket = _num(obj, "socket")
                        if socket is not None:
                            out.extend(self._measure(obj, str(int(socket)), SUMMARY, t,
                                                     direction=direction,
                                                     receiver_figures=part != "sender"))
        found = False
        for key, label, direction in _END_SUMS:
            obj = end.get(key)
            if isinstance(obj, dict):
                found = True
                out.extend(self._measure(obj, label, SUMMARY, t, direction=direction,
                                         receiver_figures=direction == "receive"))
        legacy = end.get("sum")
        if not found and isinstance(legacy, dict):  # iperf3 before 3.3: UDP "sum" only
            out.extend(self._measure(legacy, "sum", SUMMARY, t))
        cpu = end.get("cpu_utilization_percent")
        if isinstance(cpu, dict):
            out.extend(self._cpu(cpu, end, t))
        return out

    def _measure(self, obj: dict[str, Any], stream: str, kind: str, t: float | None,
                 *, direction: str | None = None, receiver_figures: bool = True
                 ) -> list[Sample]:
        """The samples of one interval or summary object. ``receiver_figures``: whether its
        jitter and loss are real (they are zeros in a sender's summary)."""
        if obj.get("omitted") is True:
            return []
        end = _num(obj, "end")
        rate = _num(obj, "bits_per_second")
        if end is None or rate is None or end < 0:
            self.warn(f"iperf3 JSON {kind} without end or bits_per_second")
            return []
        seconds = _num(obj, "seconds")
        if kind == INTERVAL and seconds is not None and seconds < MIN_INTERVAL_SECONDS:
            return []
        duration = None
        if kind == INTERVAL:
            start = _num(obj, "start")
            length = seconds if seconds is not None else (
                end - start if start is not None else None)
            if length is not None and length > 0:
                duration = self._nominal.duration(length)
        if direction is None:
            direction = "send" if self._sends(obj) else "receive"
        when = self._time(end, t)
        labels = {"stream": stream}
        out: list[Sample] = []
        # A summary with zero bytes at zero rate is the side this host could not measure.
        if not (kind == SUMMARY and rate == 0.0 and _num(obj, "bytes") == 0.0):
            out.append(self.sample("net_bandwidth_bytes", rate / 8.0,
                                   {"stream": stream, "direction": direction}, when,
                                   kind=kind, elapsed=end))
        retr = _num(obj, "retransmits")
        if retr is not None:
            out.append(self.sample("net_retransmits", retr, labels, when, kind=kind, elapsed=end))
        cwnd = _num(obj, "snd_cwnd")
        if cwnd is not None and cwnd > 0:
            out.append(self.sample("net_cwnd_bytes", cwnd, labels, when, kind=kind, elapsed=end))
        rtt = _num(obj, "rtt" if kind == INTERVAL else "mean_rtt")
        if rtt is not None and rtt > 0:
            out.append(self.sample("net_rtt_seconds", rtt * 1e-6, labels, when, kind=kind,
                                   elapsed=end))
        jitter = _num(obj, "jitter_ms")
        if jitter is not None and receiver_figures:
            out.append(self.sample("net_jitter_seconds", jitter / 1000.0, labels, when,
                                   kind=kind, elapsed=end))
            lost, packets = _num(obj, "lost_packets"), _num(obj, "packets")
            if lost is not None and packets:
                out.append(self.sample("net_loss_ratio", lost / packets, labels, when,
                                       kind=kind, elapsed=end))
        if duration is not None:  # the last interval: often a fraction of a second
            for sample in out:
                sample.duration = duration
        return out

    def _cpu(self, cpu: dict[str, Any], end: dict[str, Any], t: float | None) -> list[Sample]:
        length = 0.0
        for key in ("sum_sent", "sum_received", "sum"):
            obj = end.get(key)
            if isinstance(obj, dict):
                length = max(length, _num(obj, "end") or 0.0)
        out: list[Sample] = []
        for side, prefix in (("local", "host"), ("remote", "remote")):
            if not _num(cpu, f"{prefix}_total"):
                continue  # a server does not learn the client's figures: all zeros
            for mode in ("total", "user", "system"):
                value = _num(cpu, f"{prefix}_{mode}")
                if value is not None and value >= 0:
                    out.append(self.sample("cpu_ratio", value / 100.0,
                                           {"side": side, "mode": mode},
                                           self._time(length, t), kind=SUMMARY,
                                           elapsed=length))
        return out
