"""The exporter under a burst: N simultaneous scrapes while M idle connections are open.

A real ``MetricsServer`` (the one ``serve`` and ``--export`` run) over a fleet fed with the
real captures (benchmarks/export_speed.py's data: fio json+ with 2 jobs and iostat with 8
devices per host, 60 s). First M connections are opened and left idle (as a slowloris or many
forgotten clients would), then N clients connect at once (asyncio, one event loop, in a
process of their own) and each sends ``GET /metrics``; the time from its connect() to the last
byte of its answer is recorded.
Also counted: the server's threads. Writes docs/benchmarks/export.md's *Bursts* section to
stdout (paste it in), or a JSON line with --json:

    .venv/bin/python benchmarks/export_burst.py [--hosts 4] [--scrapes 200] [--idle 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
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


async def scrape(port: int, start: asyncio.Event) -> tuple[float, int]:
    await start.wait()
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nAccept-Encoding: gzip\r\n"
                     b"Connection: close\r\n\r\n")
        await writer.drain()
        data = await reader.read()
    except OSError:
        return time.perf_counter() - t0, 0  # refused or reset: counted as not answered
    elapsed = time.perf_counter() - t0
    writer.close()
    return elapsed, len(data)


async def burst(port: int, scrapes: int, idle: int) -> dict[str, float]:
    idle_conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(idle)]
    await asyncio.sleep(0.2)
    start = asyncio.Event()
    tasks = [asyncio.create_task(scrape(port, start)) for _ in range(scrapes)]
    await asyncio.sleep(0.05)
    start.set()
    results = await asyncio.gather(*tasks)
    for _, writer in idle_conns:
        writer.close()
    times = sorted(r[0] for r in results if r[1] > 0) or [float("nan")]
    return {"scrapes": scrapes, "idle": idle, "answered": sum(1 for r in results if r[1] > 0),
            "median_ms": statistics.median(times) * 1000,
            "p99_ms": times[int(0.99 * (len(times) - 1))] * 1000, "max_ms": times[-1] * 1000,
            "bytes": max(r[1] for r in results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--client", type=int, metavar="PORT",
                        help=argparse.SUPPRESS)  # the clients' process: one burst, as JSON
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * (args.scrapes + args.idle) + 64
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    if args.client:
        print(json.dumps(asyncio.run(burst(args.client, args.scrapes, args.idle))))
        return 0
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
            done = subprocess.run([sys.executable, __file__, "--client", str(server.port),
                                   "--scrapes", str(args.scrapes), "--idle", str(args.idle)],
                                  capture_output=True, text=True, check=True, timeout=600)
            rounds.append(json.loads(done.stdout))
            time.sleep(0.3)
        threads_after = threading.active_count() - before
    worst = max(rounds, key=lambda r: r["max_ms"])
    out = {"hosts": args.hosts, "render_ms": statistics.median(render_ms),
           "server_threads": max(threads, threads_after), "rounds": rounds}
    if args.json:
        print(json.dumps(out))
        return 0
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Measured by `benchmarks/export_burst.py --hosts {args.hosts} --scrapes "
          f"{args.scrapes} --idle {args.idle}` on {platform.node()} ({os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}), load average {load} at the end (the machine "
          "is shared: numbers are upper bounds). One scrape renders "
          f"{worst['bytes'] / 1024:.0f} KiB gzip-compressed in ~{out['render_ms']:.1f} ms "
          "(uncompressed rendering alone).\n")
    print("| round | scrapes answered | median | p99 | max |")
    print("|---|---|---|---|---|")
    for i, r in enumerate(rounds, 1):
        print(f"| {i} | {r['answered']:.0f} of {r['scrapes']:.0f} | {r['median_ms']:.1f} ms | "
              f"{r['p99_ms']:.1f} ms | {r['max_ms']:.1f} ms |")
    print(f"\nServer threads: {out['server_threads']} (the selector and the workers), with "
          f"{args.idle} idle connections open.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
