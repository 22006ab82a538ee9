"""The exporter under load: scrapes while idle connections and slow readers hold the server.

A real ``MetricsServer`` (the one ``serve`` and ``--export`` run) over a fleet fed with the
real captures (benchmarks/export_speed.py's data: fio json+ with 2 jobs and iostat with 8
devices per host, 60 s). The clients run in a process of their own (asyncio, one event loop):

1. ``--idle`` connections are opened and left idle (forgotten clients, a slowloris);
2. ``--slow`` slow readers connect with a 1 KiB receive buffer, send ``--pipelined`` GETs in
   one go and never read an answer (issue 27: 16 of them made scrapes wait 9-10 s);
3. ``--steady`` well-behaved scrapes, one after another every 0.25 s (Prometheus, one server);
4. ``--scrapes`` well-behaved scrapes at once (a burst: several servers, a dashboard reload).

A well-behaved scrape connects, sends ``GET /metrics`` and reads the whole answer; its time is
from its connect() to the answer's last byte, and a scrape refused, reset or not answered
within 10 s counts as not answered. Also counted: the server's threads, and the connections
it holds at the end. ``--nofile N`` first lowers this process's open-file limit to N (what
many systems give by default: 1024), so that the server's own limit is the one reached.
Writes docs/benchmarks/export.md's *Idle connections and slow readers* section to stdout
(paste it in), or a JSON line with --json:

    .venv/bin/python benchmarks/export_burst.py [--hosts 4] [--scrapes 200] [--idle 1100] \\
        [--slow 16] [--steady 40] [--nofile 1024]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from export_speed import Clock, fleet_batches  # noqa: E402

from benchtui.export.http_server import MetricsServer  # noqa: E402
from benchtui.export.prometheus import FleetCollector  # noqa: E402
from benchtui.store.fleet import FleetState  # noqa: E402

#: A scrape not answered within this long counts as not answered.
SCRAPE_TIMEOUT = 10.0
GET = b"GET /metrics HTTP/1.1\r\nHost: bench\r\nAccept-Encoding: gzip\r\n"


def collector_of(hosts: int, seconds: int = 60) -> FleetCollector:
    clock = Clock()
    state = FleetState("burst")
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    for i, batch in enumerate(fleet_batches(hosts, seconds)):
        clock.now = i // hosts
        state.on_samples(batch)
    clock.now += 0.5
    return collector


async def scrape(port: int, start: asyncio.Event | None = None) -> tuple[float, int]:
    """(seconds, bytes of the answer; 0 when refused, reset or too slow)."""
    if start is not None:
        await start.wait()
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(SCRAPE_TIMEOUT):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(GET + b"Connection: close\r\n\r\n")
            await writer.drain()
            data = await reader.read()
    except (OSError, TimeoutError):
        return time.perf_counter() - t0, 0
    elapsed = time.perf_counter() - t0
    writer.close()
    answered = data.startswith(b"HTTP/1.1 200 OK")
    return elapsed, len(data) if answered else 0


def slow_reader(port: int, pipelined: int) -> socket.socket:
    """A client that asks for ``pipelined`` answers at once and never reads one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connect(): the window
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    plain = GET.replace(b"Accept-Encoding: gzip\r\n", b"") + b"\r\n"  # the bigger answer
    with contextlib.suppress(BlockingIOError):  # (the server reads one request at a time)
        sock.send(plain * pipelined)
    return sock


def stats(results: list[tuple[float, int]]) -> dict[str, float]:
    times = sorted(r[0] for r in results if r[1] > 0) or [float("nan")]
    return {"count": len(results), "answered": sum(1 for r in results if r[1] > 0),
            "median_ms": statistics.median(times) * 1000,
            "p99_ms": times[int(0.99 * (len(times) - 1))] * 1000, "max_ms": times[-1] * 1000,
            "bytes": max(r[1] for r in results)}


async def load(port: int, args: argparse.Namespace) -> dict[str, object]:
    idle_conns = []
    for _ in range(args.idle):
        try:
            idle_conns.append(await asyncio.open_connection("127.0.0.1", port))
        except OSError:
            break
    slow = [slow_reader(port, args.pipelined) for _ in range(args.slow)]
    await asyncio.sleep(1.0)  # the slow readers' first answers fill their windows
    steady = []
    for _ in range(args.steady):
        steady.append(await scrape(port))
        await asyncio.sleep(0.25)
    start = asyncio.Event()
    tasks = [asyncio.create_task(scrape(port, start)) for _ in range(args.scrapes)]
    await asyncio.sleep(0.05)
    start.set()
    burst = await asyncio.gather(*tasks)
    # How many idle connections the server still holds open (shed ones read EOF or a reset).
    kept = 0
    for reader, _ in idle_conns:
        try:
            async with asyncio.timeout(0.01):
                kept += 0 if await reader.read(1) == b"" else 1
        except TimeoutError:
            kept += 1
        except OSError:
            pass
    for _, writer in idle_conns:
        writer.close()
    for sock in slow:
        sock.close()
    return {"idle": args.idle, "idle_opened": len(idle_conns), "idle_kept": kept,
            "slow": args.slow, "steady": stats(steady) if steady else None,
            "burst": stats(burst) if burst else None}


def set_nofile(limit: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--idle", type=int, default=1100)
    parser.add_argument("--slow", type=int, default=16)
    parser.add_argument("--pipelined", type=int, default=64)
    parser.add_argument("--steady", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nofile", type=int, default=0,
                        help="lower the server's open-file limit to this first")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--client", type=int, metavar="PORT",
                        help=argparse.SUPPRESS)  # the clients' process: one round, as JSON
    args = parser.parse_args()
    if args.client:
        set_nofile(2 * (args.scrapes + args.idle + args.slow) + 256)
        print(json.dumps(asyncio.run(load(args.client, args))))
        return 0
    if args.nofile:
        set_nofile(args.nofile)
    collector = collector_of(args.hosts)
    render_ms = []
    for _ in range(5):
        t0 = time.perf_counter()
        collector.render()
        render_ms.append((time.perf_counter() - t0) * 1000)
    before = threading.active_count()
    rounds = []
    with MetricsServer(collector, "127.0.0.1", 0) as server:
        threads = threading.active_count() - before
        for _ in range(args.rounds):
            # The clients run in their own process, so that they do not share the server's GIL.
            done = subprocess.run(
                [sys.executable, __file__, "--client", str(server.port), "--scrapes",
                 str(args.scrapes), "--idle", str(args.idle), "--slow", str(args.slow),
                 "--pipelined", str(args.pipelined), "--steady", str(args.steady)],
                capture_output=True, text=True, check=True, timeout=900)
            rounds.append(json.loads(done.stdout))
            time.sleep(0.5)
        threads_after = threading.active_count() - before
        limit = server.max_connections
    out = {"hosts": args.hosts, "render_ms": statistics.median(render_ms),
           "server_threads": max(threads, threads_after), "max_connections": limit,
           "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0], "rounds": rounds}
    if args.json:
        print(json.dumps(out))
        return 0
    print_markdown(args, out)
    return 0


def print_markdown(args: argparse.Namespace, out: dict[str, object]) -> None:
    load_avg = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    rounds = out["rounds"]
    assert isinstance(rounds, list)
    nofile = f" --nofile {args.nofile}" if args.nofile else ""
    print(f"Measured by `benchmarks/export_burst.py --hosts {args.hosts} --scrapes "
          f"{args.scrapes} --idle {args.idle} --slow {args.slow} --steady {args.steady}"
          f"{nofile}` on {platform.node()} ({os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}), load average {load_avg} at the end; open-file limit "
          f"{out['nofile']}, so the server holds at most {out['max_connections']} connections."
          "\n")
    print("| round | idle opened / still open at the end | steady scrapes answered | median "
          "| max | burst answered | median | p99 | max |")
    print("|---|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rounds, 1):
        s, b = r["steady"] or {}, r["burst"] or {}
        print(f"| {i} | {r['idle_opened']} / {r['idle_kept']} | {s.get('answered', 0):.0f} of "
              f"{s.get('count', 0):.0f} | {s.get('median_ms', 0):.1f} ms | "
              f"{s.get('max_ms', 0):.1f} ms | {b.get('answered', 0):.0f} of "
              f"{b.get('count', 0):.0f} | {b.get('median_ms', 0):.1f} ms | "
              f"{b.get('p99_ms', 0):.1f} ms | {b.get('max_ms', 0):.1f} ms |")
    print(f"\nServer threads: {out['server_threads']} (the selector and the workers), with "
          f"{args.idle} idle connections and {args.slow} slow readers ({args.pipelined} "
          "pipelined GETs each, 1 KiB receive buffer, never reading).")


if __name__ == "__main__":
    raise SystemExit(main())
