"""The controller side of benchmarks/fleet_scale.py: runs one plan in-process and measures it.

Started by fleet_scale.py as a separate process (so that its CPU time and memory are the
controller's alone):

    python benchmarks/fleet_probe.py --plan PLAN --known-hosts FILE --session-id ID
        --hosts N --seconds S --result OUT.json [--profile FILE] [--pin] [--code DIR]
        [--grace S] [--jsonl] [--parts]

``--code DIR`` imports benchtui from DIR (a worktree of other code: the code before a change,
measured by the same probe); ``--grace`` is the session's ``controller_grace``; ``--jsonl``
adds the sink ``run --jsonl`` has (every sample as JSON Lines, here to /dev/null).

benchtui's ``Session`` runs the plan with a ``LiveStore`` sink; nothing in the engine is
changed. What is measured:

- ``e2e``: for every fio document (but the first of each run, which the parser holds back
  until the second arrives, by design), the time its samples are in the store minus the document's
  ``timestamp_ms`` (the replay stamps it when it prints it). An upper bound of "line arrived ->
  in the store": it also counts the file write, ``tail -F``, sshd, loopback TCP and asyncssh.
- ``inside``: store time minus the time the transport's ``follow`` handed over the chunk that
  completed the document (the transports are wrapped): the controller's own processing.
- ``lag``: how late a 50 ms ticker of the event loop wakes up: how long a chunk that is ready
  may wait before the loop reads it.
- ``cpu_pct``: this process's CPU time and its children's (the controller's heartbeat process,
  when it has one, and its parse workers; not sshd, not the replays) over wall time in the
  steady part, as % of one core; ``main_cpu_pct`` the controller's own process,
  ``workers_cpu_pct`` its parse workers, ``beat_cpu_pct`` the other children (the heartbeat);
  ``runqueue_wait_pct``: the time it was runnable but had no CPU (/proc/self/schedstat), i.e.
  how much the other processes on the same cores held it back; ``machine_busy_pct``: every
  core, every process (/proc/stat).
- samples/s into the store, RSS in the steady part and at peak, and how much it grew over
  the steady part (``rss_growth``: its last second's less its first's).
- ``gc``: the cyclic garbage collector's collections, their total and longest pause per
  generation (``gc_pauses.py``), in the steady part and over the whole run (``gc_all``);
  ``garbage_at_end``: the objects one full collection frees once the session has ended (the
  cyclic garbage the collector had left waiting) and the RSS before and after it.
- ``parts`` (``--parts``): the lag of every document split into where it went: the host
  side, the transfer, the follower's read, the intake's queue, the parse (``doc_path.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
if "--code" in sys.argv:  # the code to measure, before anything imports benchtui
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])

import doc_path
import psutil
from doc_path import DocPath
from gc_pauses import GcPauses

from benchtui.export.formats import JsonlWriter
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session, SessionOptions
from benchtui.session.hosts import SshOptions
from benchtui.store.live import LiveStore
from benchtui.transport import Chunk, RunHandle, Transport

#: The plan's step and monitor names (fleet_scale.py writes the plan).
FIO_STEP, IOSTAT_MONITOR = "fio-replay", "iostat-replay"
#: Seconds after every host's first fio document before the steady part starts.
SETTLE = 2.0
NAN = float("nan")


class ArrivalStamps:
    """Wraps a transport: notes when ``follow`` handed over each run's latest chunk."""

    def __init__(self, inner: Transport, stamps: dict[tuple[str, str], float],
                 chunks: list[int], path: DocPath | None = None) -> None:
        self._inner = inner
        self._stamps = stamps
        #: [chunks, bytes] handed over so far, every run of every host
        self._chunks = chunks
        self._path = path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def follow(self, handle: RunHandle, offset: int = 0) -> AsyncGenerator[Chunk, None]:
        key = (handle.host, "fio" if FIO_STEP in handle.run_id else "iostat")
        stamps, chunks, path = self._stamps, self._chunks, self._path
        async for chunk in self._inner.follow(handle, offset):
            stamps[key] = time.time()
            chunks[0] += 1
            chunks[1] += len(chunk.data)
            if path is not None and key[1] == "fio":
                path.chunk(handle.host, chunk, bytes(chunk.data))
            yield chunk


class Tick(NamedTuple):
    """What the sampler reads once a second."""

    mono: float
    cpu: float  # this process's CPU seconds, and its children's
    children: float  # its children's CPU seconds (the heartbeat process, the parse workers)
    workers: float  # the parse workers' CPU seconds (the children that are parse workers)
    samples: int  # samples in the store so far
    chunks: int  # chunks the transports handed over so far
    chunk_bytes: int  # and their bytes
    rss: int  # bytes
    busy: int  # machine jiffies busy
    total: int  # machine jiffies
    waited: float  # seconds runnable but not running


class Probe:
    """The sample sink (``LiveStore.add`` plus latency notes), a resource sampler and an
    event-loop lag ticker."""

    def __init__(self, store: LiveStore) -> None:
        self.store = store
        self.me = psutil.Process()
        self._children: list[psutil.Process] = []
        self._children_read = 0.0
        #: The session's parse workers' pids (``ParsePool.pids``; none on code without them).
        self.worker_pids: Callable[[], list[int]] = list
        self.jsonl: JsonlWriter | None = None
        self.arrivals: dict[tuple[str, str], float] = {}
        self.chunks = [0, 0]  # chunks and bytes the transports handed over
        self.e2e: list[tuple[float, float]] = []  # (monotonic when stored, latency s)
        self.late: list[tuple[str, float, float]] = []  # (host, when stored, latency s)
        self.inside: list[tuple[float, float]] = []
        self.first_fio: dict[str, float] = {}
        self.last_fio = 0.0
        self.docs: set[tuple[str, float]] = set()
        self.ticks: list[Tick] = []
        self.gc = GcPauses()
        self.lags: list[tuple[float, float]] = []
        self.events: list[tuple[float, Event]] = []
        self.path: DocPath | None = None

    def sink(self, samples: list[Sample]) -> None:
        path = self.path
        cpu = time.thread_time() if path is not None else 0.0
        self.store.add(samples)
        if self.jsonl is not None:
            self.jsonl.write(samples)
        if path is not None:
            path.sinks.append((time.time(), time.thread_time() - cpu))
        first = samples[0]
        if first.tool != "fio":
            return
        now, mono = time.time(), time.monotonic()
        host = first.host
        seen = {s.t for s in samples if s.t is not None and s.kind == "interval"}
        # The parser holds a run's first document back until the second arrives (a lone
        # document would be a final report): that wait is by design, not measured.
        newest = max(seen, default=None) if host not in self.first_fio else None
        for t in seen:
            if (host, t) not in self.docs:
                self.docs.add((host, t))
                if self.path is not None:
                    self.path.stored(host, round(t * 1000), now)
                if newest is not None and t != newest:
                    continue
                self.e2e.append((mono, now - t))
                if now - t > 0.25 and len(self.late) < 50:
                    self.late.append((host, mono, now - t))
        arrived = self.arrivals.get((host, "fio"))
        if arrived is not None and seen:
            self.inside.append((mono, now - arrived))
        self.first_fio.setdefault(host, mono)
        self.last_fio = mono

    def event(self, event: Event) -> None:
        self.events.append((time.monotonic(), event))
        if event.level == "error":
            print(f"  ! {event.message}", file=sys.stderr)

    async def sample_resources(self) -> None:
        while True:
            busy, total = machine_jiffies()
            children, workers = self.children_cpu()
            self.ticks.append(Tick(time.monotonic(), time.process_time() + children, children,
                                   workers,
                                   self.store.samples_total, *self.chunks, _rss_bytes(),
                                   busy, total,
                                   _runqueue_wait()))
            await asyncio.sleep(1.0)

    def children_cpu(self) -> tuple[float, float]:
        """CPU seconds of this process's children (living ones, and those it reaped), and of
        those of them that are parse workers. The list of children is read again every 10 s
        only while there is none, once one has ended, or when a parse worker is not in it:
        listing them reads every process's stat on the machine (thousands of them with the
        simulated hosts), which cost the probe ~1% of a core, counted as the controller's."""
        now = time.monotonic()
        workers = set(self.worker_pids())
        listed = {c.pid for c in self._children}
        if (not self._children and now - self._children_read > 10) or workers - listed:
            self._children_read = now
            self._children = self.me.children(recursive=True)
        total = in_workers = 0.0
        for child in self._children:
            try:
                t = child.cpu_times()
            except psutil.Error:
                self._children = []  # (listed again at the next tick)
                self._children_read = 0.0
                continue
            total += t.user + t.system
            if child.pid in workers:
                in_workers += t.user + t.system
        reaped = self.me.cpu_times()
        return total + reaped.children_user + reaped.children_system, in_workers

    async def measure_lag(self, period: float = 0.05) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + period
            await asyncio.sleep(period)
            self.lags.append((time.monotonic(), loop.time() - due))
            if self.path is not None:
                self.path.sched.append((time.time(), *_schedstat()))


def _runqueue_wait() -> float:
    """Seconds this process's main thread has been runnable but waiting for a CPU."""
    return _schedstat()[1]


def _schedstat() -> tuple[float, float]:
    """Seconds this process's main thread has run, and been runnable but waiting."""
    with open("/proc/self/schedstat") as f:
        run, wait = f.read().split()[:2]
    return int(run) / 1e9, int(wait) / 1e9


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return NAN
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _spread(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": _pct(values, 0.5), "p99": _pct(values, 0.99),
            "max": max(values, default=NAN)}


def summarize(probe: Probe, ok: bool, failures: list[str], hosts: int, seconds: int,
              started: float, ended: float, cpu_total: float) -> dict[str, Any]:
    """The numbers of one run, from what the probe saw (times in seconds)."""
    # The steady part needs every host streaming (at least 90% of them, if some failed).
    streaming = len(probe.first_fio)
    all_streaming = max(probe.first_fio.values()) if streaming >= 0.9 * hosts > 0 else None
    out: dict[str, Any] = {
        "hosts": hosts, "seconds": seconds, "ok": ok, "failures": failures[:5],
        "fio_docs": len(probe.docs), "fio_docs_expected": hosts * seconds,
        "hosts_streaming": len(probe.first_fio), "samples_total": probe.store.samples_total,
        "wall": ended - started, "cpu_total": cpu_total,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "e2e_all": _spread([v for _, v in probe.e2e]),
        "teardown": ended - probe.last_fio if probe.last_fio else None,
        "timeline": [  # (s since start, CPU %, run-queue wait %, samples/s) per second
            (round(t1.mono - started, 1), round(100 * (t1.cpu - t0.cpu) / (t1.mono - t0.mono)),
             round(100 * (t1.waited - t0.waited) / (t1.mono - t0.mono)),
             round((t1.samples - t0.samples) / (t1.mono - t0.mono)))
            for t0, t1 in zip(probe.ticks, probe.ticks[1:], strict=False)],
        "steady": None,
        "late_docs": [(h, round(m - started, 2), round(v, 3)) for h, m, v in probe.late],
        "gc_all": probe.gc.figures(started, ended),
    }
    session_start = next((m for m, e in probe.events if e.kind == "session_start"), None)
    if session_start is not None:
        out["prepare"] = session_start - started
        if all_streaming is not None:
            out["until_all_streaming"] = all_streaming - session_start
    if all_streaming is None or probe.last_fio - 0.5 - (all_streaming + SETTLE) < 2:
        return out
    a, b = all_streaming + SETTLE, probe.last_fio - 0.5
    steady: dict[str, Any] = {"from": a - started, "seconds": b - a}
    ticks = [t for t in probe.ticks if a <= t.mono <= b]
    if len(ticks) >= 2:
        t0, t1 = ticks[0], ticks[-1]
        wall = t1.mono - t0.mono
        steady.update(seconds=wall, cpu_pct=100 * (t1.cpu - t0.cpu) / wall,
                      beat_cpu_pct=100 * (t1.children - t1.workers - t0.children
                                          + t0.workers) / wall,
                      main_cpu_pct=100 * (t1.cpu - t1.children - t0.cpu + t0.children) / wall,
                      workers_cpu_pct=100 * (t1.workers - t0.workers) / wall,
                      samples_per_s=(t1.samples - t0.samples) / wall,
                      chunks_per_s=(t1.chunks - t0.chunks) / wall,
                      bytes_per_chunk=(t1.chunk_bytes - t0.chunk_bytes)
                      / max(1, t1.chunks - t0.chunks),
                      rss=statistics.median(t.rss for t in ticks),
                      rss_growth=t1.rss - t0.rss,
                      machine_busy_pct=100 * (t1.busy - t0.busy) / max(1, t1.total - t0.total)
                      * (os.cpu_count() or 1),
                      runqueue_wait_pct=100 * (t1.waited - t0.waited) / wall)
    steady["e2e"] = _spread([v for m, v in probe.e2e if a <= m <= b])
    steady["inside"] = _spread([v for m, v in probe.inside if a <= m <= b])
    steady["lag"] = _spread([v for m, v in probe.lags if a <= m <= b])
    steady["gc"] = probe.gc.figures(a, b)
    if probe.path is not None:
        wall0 = time.time() - time.monotonic()  # (the path's times are epoch seconds)
        rows = probe.path.rows(wall0 + a, wall0 + b)
        steady["parts"] = doc_path.summary(rows, probe.path.sched)
        steady["parts"]["cpu"] = cpu = probe.path.cpu_summary(wall0 + a, wall0 + b)
        if cpu:
            steady["parts"]["one_core"] = doc_path.one_core(rows, cpu["main"])
        steady["parts"]["rows"] = [{k: (round(v, 4) if isinstance(v, float) else v)
                                    for k, v in r.items()} for r in rows]
    steady["lag_spikes"] = [(round(m - started, 2), round(v, 3))
                            for m, v in probe.lags if a <= m <= b and v > 0.25][:20]
    out["steady"] = steady
    return out


async def run_session(plan_path: Path, known_hosts: str, session_id: str,
                      hosts: int, seconds: int, grace: float | None = None,
                      jsonl: bool = False, parse_workers: int | None = None,
                      parts: bool = False) -> dict[str, Any]:
    probe = Probe(LiveStore())
    if parts:
        probe.path = watch_parts()
    if jsonl:
        probe.jsonl = JsonlWriter(open(os.devnull, "w"))  # noqa: SIM115 (the process's life)
    options = SessionOptions(ssh=SshOptions(known_hosts=known_hosts, connect_timeout=60.0),
                             session_id=session_id, controller_grace=grace,
                             **({} if parse_workers is None
                                else {"parse_workers": parse_workers}))
    session = Session(load_plan(plan_path), options=options, on_samples=probe.sink,
                      on_event=probe.event)
    pool = getattr(session, "parse_pool", None)
    if pool is not None:
        probe.worker_pids = lambda: pool.pids
    for name, transport in list(session.transports.items()):  # (the runner shares the dict)
        session.transports[name] = ArrivalStamps(transport, probe.arrivals, probe.chunks,
                                                 probe.path)
    helpers = [asyncio.create_task(probe.sample_resources()),
               asyncio.create_task(probe.measure_lag())]
    started, cpu0 = time.monotonic(), time.process_time()
    try:
        result = await session.run()
    finally:
        for task in helpers:
            task.cancel()
    ended, cpu = time.monotonic(), time.process_time() - cpu0
    # The cyclic garbage left waiting at the end: what one full collection finds and frees
    # (the session has put the collector back as it found it: nothing is frozen any more)
    rss = _rss_bytes()
    probe.gc.stop()
    waiting = gc.collect()
    out = summarize(probe, result.ok, result.failures, hosts, seconds, started, ended, cpu)
    out["garbage_at_end"] = {"objects": waiting, "rss_before": rss, "rss_after": _rss_bytes()}
    out["watchdog_stops"] = sorted({e.host or "?" for _, e in probe.events
                                    if e.data.get("outcome") == "watchdog"})
    out["behind"] = [(round(m - started, 1), e.message) for m, e in probe.events
                     if e.kind == "controller_lag" and e.data.get("said", True)][:40]
    return out


def watch_parts() -> DocPath:
    """A ``DocPath`` told of every SSH packet of a channel's output (asyncssh's process
    session) and of every chunk the intake feeds (the runner's lanes)."""
    import asyncssh.connection
    import asyncssh.process

    import benchtui.session.runs as runs

    path = DocPath()
    received = asyncssh.process.SSHProcess.data_received

    def data_received(self: Any, data: Any, datatype: Any) -> None:
        if datatype is None and isinstance(data, bytes):
            path.packet(id(self), data)
        received(self, data, datatype)

    asyncssh.process.SSHProcess.data_received = data_received  # type: ignore[method-assign]
    got = asyncssh.connection.SSHConnection.data_received
    reads = path.socket_reads

    def socket_read(self: Any, data: bytes, datatype: Any = None) -> None:
        cpu = time.thread_time()
        got(self, data, datatype)
        reads.append((time.time(), len(data), time.thread_time() - cpu))

    asyncssh.connection.SSHConnection.data_received = socket_read  # type: ignore[method-assign]
    lane = runs.Lane

    def fed_lane(feed: Callable[[Chunk, float], None]) -> Any:
        def fed(chunk: Chunk, t: float) -> None:
            cpu = time.thread_time()
            completes = path.fed(chunk)
            feed(chunk, t)
            path.feeds.append((time.time(), completes, time.thread_time() - cpu))
        return lane(fed)

    runs.Lane = fed_lane  # type: ignore[assignment,misc]
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan", type=Path, required=True)
    ap.add_argument("--known-hosts", required=True)
    ap.add_argument("--session-id", required=True)
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--result", type=Path, required=True)
    ap.add_argument("--profile", help="cProfile (CPU time) the controller into FILE")
    ap.add_argument("--pin", action="store_true", help="run on CPU 0 only")
    ap.add_argument("--code", help="import benchtui from this directory")
    ap.add_argument("--grace", type=float, help="the session's controller_grace (s)")
    ap.add_argument("--jsonl", action="store_true", help="add run --jsonl's sink")
    ap.add_argument("--parse-workers", type=int,
                    help="the session's parse workers (default: the code's own choice)")
    ap.add_argument("--parts", action="store_true",
                    help="split every fio document's lag into its parts (doc_path.py)")
    ap.add_argument("--uvloop", action="store_true",
                    help="experiment: uvloop's event loop (installed in the venv)")
    args = ap.parse_args()
    if args.uvloop:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    if args.pin:
        os.sched_setaffinity(0, {0})
    coro = run_session(args.plan, args.known_hosts, args.session_id, args.hosts, args.seconds,
                       args.grace, args.jsonl, args.parse_workers, args.parts)
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile(time.process_time)  # CPU time, not waits
        result = profiler.runcall(asyncio.run, coro)
        profiler.dump_stats(args.profile)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    else:
        result = asyncio.run(coro)
    args.result.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
