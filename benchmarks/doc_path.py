"""Where a fio document's lag goes, part by part (fleet_probe.py's ``--parts``; issue 32).

A fio json+ document (``fleet_wide.py``'s replay: stamped with ``timestamp_ms`` when it is
printed) is followed through the controller at four points, each a time (epoch seconds):

- ``net``: asyncssh hands a channel's data to its stream (``SSHStreamSession.data_received``,
  one SSH packet of at most 32 KiB): the packet holding the document's first byte
  (``net_first``) and the one holding its last (``net_last``); how many packets it took;
- ``handed``: the transport's ``follow`` yields the chunk holding the document's first byte
  and the one holding its last (``chunks``: how many chunks it took);
- ``fed``: the intake starts feeding that last chunk to the run's ingestion (the parse);
- ``stored``: its samples reach the sink (fleet_probe's ``Probe.sink``).

So the lag (``stored - stamp``) is, for each document, the sum of:

- ``host``: ``net_first - stamp``: the replay's write, ``tail -F``, the pipe, sshd (read,
  encrypt), loopback TCP, and the controller's loop getting round to the socket;
- ``transfer``: ``net_last - net_first``: the document's packets, spread over time (the
  other hosts' packets interleaved, sshd and the controller sharing the cores);
- ``read``: ``handed_last - net_last``: the follower's own read (``rest_of_line``'s wait, a
  lane full);
- ``queue``: ``fed - handed_last``: waiting in the intake behind other chunks;
- ``parse``: ``stored - fed``: the completing chunk's ingestion (the document's parse, the
  sinks before the probe's).

Documents are found on the bytes as ``fleet_wide.py``'s replay prints them (``json.dumps``
with ``indent=2``): a document's ``"timestamp_ms" : N`` near its start, ``\\n}\\n`` at its
end; a pattern cut between two packets or chunks is found over the seam.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

_TS = b'"timestamp_ms" : '
_END = b"\n}\n"
_KEEP = 48  # bytes kept over a seam: longer than either pattern with its number


class DocScanner:
    """The documents that start and end in a stream's successive pieces."""

    __slots__ = ("current", "tail")

    def __init__(self) -> None:
        self.tail = b""
        self.current: int | None = None  # timestamp_ms of the document being read

    def feed(self, data: bytes) -> tuple[list[int], list[int]]:
        """(timestamp_ms of the documents starting in ``data``, and of those ending)."""
        buf = self.tail + data
        seam = len(self.tail)
        events: list[tuple[int, int]] = []  # (position, ts or -1 for an end)
        at = buf.find(_TS)
        while at >= 0:
            digits_at = at + len(_TS)
            stop = digits_at
            while stop < len(buf) and 48 <= buf[stop] <= 57:
                stop += 1
            if stop == len(buf):  # (the number may go on in the next piece)
                break
            if stop >= seam:  # (else its end was in the last piece: found then)
                events.append((at, int(buf[digits_at:stop])))
            at = buf.find(_TS, stop)
        at = buf.find(_END, max(0, seam - len(_END) + 1))
        while at >= 0:
            if at + len(_END) > seam:
                events.append((at, -1))
            at = buf.find(_END, at + 1)
        events.sort()
        starts: list[int] = []
        ends: list[int] = []
        for _, ts in events:
            if ts >= 0:
                self.current = ts
                starts.append(ts)
            elif self.current is not None:
                ends.append(self.current)
                self.current = None
        self.tail = buf[-_KEEP:]  # (a timestamp with its number is at most 30 bytes)
        return starts, ends


class DocPath:
    """Per-document times at each point, and the packets and chunks each took."""

    def __init__(self) -> None:
        #: (stream id, ts) -> [first packet, last packet, packets]
        self.net: dict[tuple[int, int], list[Any]] = {}
        self._streams: dict[int, DocScanner] = defaultdict(DocScanner)
        self._open_net: dict[int, int] = {}  # stream id -> ts being received
        #: (host, ts) -> [handed first, handed last, chunks, fed, stored]
        self.docs: dict[tuple[str, int], list[Any]] = {}
        self._hosts: dict[str, DocScanner] = defaultdict(DocScanner)
        self._open_doc: dict[str, int] = {}
        #: id(chunk) -> the (host, ts) of the documents it completes
        self._completes: dict[int, list[tuple[str, int]]] = {}
        #: (epoch, bytes, CPU seconds in asyncssh) of every read of an SSH connection's
        #: socket (asyncio's transport reads at most ``max_size``, 256 KiB, a turn of the
        #: event loop): asyncssh's whole receive path (decryption, packets, channels)
        self.socket_reads: list[tuple[float, int, float]] = []
        #: (epoch, whether it completed a document, CPU seconds) of every chunk the intake
        #: fed to a run's ingestion (parse and sinks)
        self.feeds: list[tuple[float, bool, float]] = []
        #: (epoch, CPU seconds) of every batch given to fleet_probe's sink (the live store
        #: and ``run --jsonl``'s writer), inside the feeds
        self.sinks: list[tuple[float, float]] = []
        #: (epoch, seconds the controller's main thread ran, seconds it waited for a CPU)
        self.sched: list[tuple[float, float, float]] = []

    # -- asyncssh's side: every packet of every channel
    def packet(self, stream: int, data: bytes) -> None:
        now = time.time()
        starts, ends = self._streams[stream].feed(data)
        net = self.net
        open_ts = self._open_net.get(stream)
        if open_ts is not None:
            net[(stream, open_ts)][2] += 1
        for ts in starts:
            net[(stream, ts)] = [now, None, 1]
            self._open_net[stream] = ts
        for ts in ends:
            rec = net.get((stream, ts))
            if rec is not None:
                rec[1] = now
            if self._open_net.get(stream) == ts:  # (not the next one, begun in this piece)
                del self._open_net[stream]

    # -- the transport's follow: every chunk handed over
    def chunk(self, host: str, chunk: object, data: bytes) -> None:
        now = time.time()
        starts, ends = self._hosts[host].feed(data)
        open_ts = self._open_doc.get(host)
        if open_ts is not None:
            self.docs[(host, open_ts)][2] += 1
        for ts in starts:
            self.docs[(host, ts)] = [now, None, 1, None, None]
            self._open_doc[host] = ts
        for ts in ends:
            rec = self.docs.get((host, ts))
            if rec is not None:
                rec[1] = now
                self._completes.setdefault(id(chunk), []).append((host, ts))
            if self._open_doc.get(host) == ts:  # (not the next one, begun in this chunk)
                del self._open_doc[host]

    # -- the intake starts feeding a chunk
    def fed(self, chunk: object) -> bool:
        """Whether ``chunk`` completes a document."""
        done = self._completes.pop(id(chunk), None)
        if done:
            now = time.time()
            for key in done:
                self.docs[key][3] = now
        return bool(done)

    # -- the sink: a document's samples stored
    def stored(self, host: str, ts: int, now: float) -> None:
        rec = self.docs.get((host, ts))
        if rec is not None and rec[4] is None:
            rec[4] = now

    def cpu_summary(self, since: float, until: float) -> dict[str, float]:
        """The controller's main thread's CPU per document stored in [since, until], in
        seconds: all of it (``sched``), asyncssh's receive path, the intake's feeds of the
        chunks completing a document (its parse and the sinks) and of the others, and of the
        feeds the probe's sink (the live store, ``run --jsonl``'s writer); the socket
        reads: how many a second, their mean size, the share that filled asyncio's 256 KiB
        (the kernel held more)."""
        docs = sum(1 for rec in self.docs.values()
                   if rec[4] is not None and since <= rec[4] <= until)
        span = [(t, run) for t, run, _ in self.sched if since <= t <= until]
        reads = [(n, cpu) for t, n, cpu in self.socket_reads if since <= t <= until]
        feeds = [(done, cpu) for t, done, cpu in self.feeds if since <= t <= until]
        if not docs or len(span) < 2 or not reads:
            return {}
        wall = span[-1][0] - span[0][0]
        ran = (span[-1][1] - span[0][1]) * (until - since) / wall  # (over the whole window)
        return {
            "main": ran / docs,
            "asyncssh": sum(cpu for _, cpu in reads) / docs,
            "parse": sum(cpu for done, cpu in feeds if done) / docs,
            "other_chunks": sum(cpu for done, cpu in feeds if not done) / docs,
            "store_jsonl": sum(cpu for t, cpu in self.sinks if since <= t <= until) / docs,
            "reads_per_s": len(reads) / (until - since),
            "read_mean": sum(n for n, _ in reads) / len(reads),
            "reads_full": sum(n >= 1 << 18 for n, _ in reads) / len(reads)}

    def streams_of_hosts(self) -> dict[str, int]:
        """Which asyncssh stream carried each host's documents (the most documents in
        common)."""
        by_ts: dict[int, list[int]] = defaultdict(list)
        for stream, ts in self.net:
            by_ts[ts].append(stream)
        votes: dict[str, Counter[int]] = defaultdict(Counter)
        for host, ts in self.docs:
            for stream in by_ts.get(ts, ()):
                votes[host][stream] += 1
        return {host: c.most_common(1)[0][0] for host, c in votes.items() if c}

    def rows(self, since: float, until: float) -> list[dict[str, float]]:
        """One row per document stored in [since, until] (epoch), with every part known."""
        streams = self.streams_of_hosts()
        rows = []
        for (host, ts), (h_first, h_last, chunks, fed, stored) in self.docs.items():
            if stored is None or fed is None or h_last is None or not since <= stored <= until:
                continue
            net = self.net.get((streams.get(host, -1), ts))
            if net is None or net[1] is None:
                continue
            stamp = ts / 1000
            rows.append({"host": host, "stamp": stamp, "net_first": net[0], "net_last": net[1],
                         "packets": net[2], "handed_first": h_first, "handed_last": h_last,
                         "chunks": chunks, "fed": fed, "stored": stored})
        return rows


def _q(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


PARTS = (("host", "stamp", "net_first"), ("transfer", "net_first", "net_last"),
         ("read", "net_last", "handed_last"), ("queue", "handed_last", "fed"),
         ("parse", "fed", "stored"), ("lag", "stamp", "stored"))


def summary(rows: list[dict[str, float]],
            sched: Sequence[tuple[float, float, float]] = ()) -> dict[str, Any]:
    """Each part's p50 / p99 / mean (seconds); the parts of the documents whose lag is in
    the top 1% (what the p99 is made of); the bursts: per second of stamps, how far apart
    the hosts printed, when the first packet came and when the last document was stored;
    ``busy``: while a document was printed and not yet stored, the share of the time the
    controller ran, waited for a CPU, or had nothing to run (waited for bytes)."""
    if not rows:
        return {}
    out: dict[str, Any] = {"docs": len(rows), "busy": _busy(rows, sched)}
    for name, a, b in PARTS:
        values = [r[b] - r[a] for r in rows]
        out[name] = {"p50": _q(values, 0.5), "p99": _q(values, 0.99),
                     "mean": sum(values) / len(values)}
    worst = sorted(rows, key=lambda r: r["stored"] - r["stamp"])[-max(1, len(rows) // 100):]
    out["worst"] = {name: sum(r[b] - r[a] for r in worst) / len(worst) for name, a, b in PARTS}
    out["chunks"] = {"p50": _q([r["chunks"] for r in rows], 0.5),
                     "max": max(r["chunks"] for r in rows),
                     "mean": sum(r["chunks"] for r in rows) / len(rows)}
    out["packets"] = {"p50": _q([r["packets"] for r in rows], 0.5),
                      "mean": sum(r["packets"] for r in rows) / len(rows)}
    bursts: dict[int, list[dict[str, float]]] = defaultdict(list)
    for r in rows:
        bursts[int(r["stamp"])].append(r)
    spans = []
    for group in bursts.values():
        if len(group) < 2:
            continue
        first_stamp = min(r["stamp"] for r in group)
        spans.append({
            "docs": len(group),
            "stamps": max(r["stamp"] for r in group) - first_stamp,
            "net": max(r["net_last"] for r in group) - min(r["net_first"] for r in group),
            "first_net": min(r["net_first"] for r in group) - first_stamp,
            "last_net": max(r["net_last"] for r in group) - first_stamp,
            "first_stored": min(r["stored"] for r in group) - first_stamp,
            "last_stored": max(r["stored"] for r in group) - first_stamp,
            # documents stored in the order their last packet came (1.0: all of them)
            "in_order": _in_order(group),
        })
    out["bursts"] = {key: {"p50": _q([s[key] for s in spans], 0.5),
                           "max": max((s[key] for s in spans), default=float("nan"))}
                     for key in ("docs", "stamps", "net", "first_net", "last_net",
                                 "first_stored", "last_stored", "in_order")} if spans else {}
    return out


def _in_order(group: list[dict[str, float]]) -> float:
    """The share of pairs of documents stored in the order their last packets came."""
    by_net = sorted(group, key=lambda r: r["net_last"])
    pairs = agree = 0
    for i, a in enumerate(by_net):
        for b in by_net[i + 1:]:
            pairs += 1
            agree += a["stored"] <= b["stored"]
    return agree / pairs if pairs else 1.0


def _busy(rows: list[dict[str, float]], sched: Sequence[tuple[float, float, float]]
          ) -> dict[str, float]:
    """Shares of the time some document was pending (printed, not stored) that the
    controller's main thread ran, waited for a CPU, or slept (from ``sched``'s samples)."""
    spans = sorted((r["stamp"], r["stored"]) for r in rows)
    if not spans or len(sched) < 2:
        return {}
    lo, hi = spans[0][0], max(b for _, b in spans)
    ran = waited = wall = 0.0
    k = 0
    ends: list[float] = []
    for (t0, r0, w0), (t1, r1, w1) in itertools.pairwise(sched):
        if t1 <= lo or t0 >= hi:
            continue
        mid = (t0 + t1) / 2
        while k < len(spans) and spans[k][0] <= mid:
            ends.append(spans[k][1])
            k += 1
        if not any(e > mid for e in ends):
            continue
        ends = [e for e in ends if e > mid]
        wall += t1 - t0
        ran += r1 - r0
        waited += w1 - w0
    if wall <= 0:
        return {}
    return {"seconds": wall, "ran": ran / wall, "waited": waited / wall,
            "slept": max(0.0, 1 - (ran + waited) / wall)}


def one_core(rows: list[dict[str, float]], service: float) -> dict[str, float]:
    """The lag the same documents would have on one core that gave every document
    ``service`` seconds (the controller's measured CPU per document, all in) the moment it
    was printed, in the order they were printed, with nothing else to do and nothing on the
    way (no host, no transfer): the queueing that the bursts' shape and the CPU per document
    make inherent to one process."""
    free = 0.0
    lags = []
    for stamp in sorted(r["stamp"] for r in rows):
        free = max(free, stamp) + service
        lags.append(free - stamp)
    return {"p50": _q(lags, 0.5), "p99": _q(lags, 0.99), "max": max(lags, default=0.0)}
