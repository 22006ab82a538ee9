"""What every transport must do, as checks run against a real one (local or SSH).

tests/test_transport_local.py and tests/test_transport_ssh.py call these with their transport,
so both implementations are held to the same behaviour.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import psutil

from benchtui.errors import HostError
from benchtui.transport.base import Chunk, RemoteRun, RunHandle, Transport
from benchtui.transport.lines import LineSplitter


def counter(count: int, period: float = 0.2) -> str:
    """A shell loop printing ``count N`` every ``period`` seconds."""
    return (f'i=0; while [ "$i" -lt {count} ]; do echo "count $i"; i=$((i + 1)); '
            f"sleep {period}; done")


def run_id() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def processes_with(marker: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if marker in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def workdir(owner: str | None = None) -> Path:
    """A fresh directory in /tmp for files a run writes, owned by ``owner`` if given."""
    path = Path(tempfile.mkdtemp(prefix="benchtui-t-"))
    if owner:
        shutil.chown(path, owner)
    return path


async def read_out(transport: Transport, handle: RunHandle) -> bytes:
    """The whole output file of a run, read in one go on the host."""
    result = await transport.run(["cat", handle.out_path])
    assert result.ok, result
    return result.stdout.encode()


async def collect(transport: Transport, handle: RunHandle, offset: int = 0,
                  until: int | None = None) -> tuple[bytes, int]:
    """Follow from ``offset`` to the end, or until at least ``until`` bytes were reached;
    (the bytes, the offset reached). Checks that chunks are contiguous."""
    splitter = LineSplitter(offset)
    data = bytearray()
    stream = transport.follow(handle, offset)
    try:
        async for chunk in stream:
            splitter.feed(chunk)  # raises on a lost or repeated byte
            data += chunk.data
            if until is not None and chunk.offset >= until:
                break
    finally:
        await stream.aclose()
    return bytes(data), splitter.offset


async def check_run(transport: Transport) -> None:
    ok = await transport.run(["sh", "-c", "echo out; echo err >&2"])
    assert (ok.exit_status, ok.stdout, ok.stderr) == (0, "out\n", "err\n")
    failed = await transport.run("echo half; exit 7")
    assert (failed.exit_status, failed.stdout, failed.ok) == (7, "half\n", False)
    missing = await transport.run(["benchtui-no-such-command"])
    assert missing.exit_status == 127, missing
    started = time.monotonic()
    try:
        await transport.run(["sleep", "30"], timeout=0.5)
    except HostError as exc:
        assert "timed out" in str(exc) and transport.name in str(exc)
    else:
        raise AssertionError("a command past its timeout must raise HostError")
    assert time.monotonic() - started < 5


async def check_live_follow(transport: Transport) -> None:
    """Lines arrive as they are printed (not when the run ends), and all of them."""
    started = time.monotonic()
    handle = await transport.start(RemoteRun(run_id(), counter(6), deadline=30))
    splitter = LineSplitter()
    lines: list[str] = []
    arrival: list[float] = []
    async for chunk in transport.follow(handle):
        for line in splitter.feed(chunk):
            lines.append(line)
            arrival.append(time.monotonic() - started)
    assert lines == [f"count {i}" for i in range(6)]
    assert arrival[0] < 1.5, arrival
    assert arrival[-1] - arrival[0] > 0.8, f"lines came all at once: {arrival}"
    assert await transport.exit_status(handle) == 0
    assert splitter.offset == len(await read_out(transport, handle))


async def check_resume_by_offset(first: Transport, second: Transport) -> None:
    """Follow part of a run with one transport, resume from the offset reached with another
    (a controller that restarted): together they are the file, byte for byte."""
    handle = await first.start(RemoteRun(run_id(), counter(12, 0.1), deadline=30))
    head, offset = await collect(first, handle, until=30)
    assert offset == len(head) >= 30
    await first.close()
    await second.connect()
    tail, end = await collect(second, handle, offset)
    whole = await read_out(second, handle)
    assert head + tail == whole and end == len(whole)
    assert whole.decode().splitlines() == [f"count {i}" for i in range(12)]


async def check_stop_ends_fio_workers(transport: Transport, owner: str | None = None
                                      ) -> None:
    """fio with 2 jobs x numjobs=2 (workers call setsid): stop leaves none within 3 s."""
    directory = workdir(owner)
    try:
        argv = ["fio", f"--directory={directory}", "--size=4m", "--rw=randread", "--bs=4k",
                "--ioengine=psync", "--runtime=30", "--time_based", "--numjobs=2",
                "--status-interval=1", "--output-format=json+", "--name=a", "--name=b"]
        handle = await transport.start(RemoteRun(run_id(), argv, deadline=60))
        give_up = time.monotonic() + 10
        while len(processes_with(str(directory))) < 5 and time.monotonic() < give_up:
            await asyncio.sleep(0.1)
        assert len(processes_with(str(directory))) >= 5, "fio did not start its 4 workers"
        started = time.monotonic()
        await transport.stop(handle, grace=2.0)
        while processes_with(str(directory)) and time.monotonic() - started < 3:
            await asyncio.sleep(0.05)
        assert processes_with(str(directory)) == [], "fio processes survived stop()"
        assert time.monotonic() - started < 3
        assert await transport.exit_status(handle) not in (None, 0)
        again = time.monotonic()
        await transport.stop(handle)  # stopping an ended run is a quick no-op
        assert time.monotonic() - again < 1
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def check_injection_runs_nothing(transport: Transport, owner: str | None = None
                                       ) -> None:
    """Values with shell syntax in an argv, an env value, a cwd or a path stay data."""
    mark = f"/tmp/pwned-{uuid.uuid4().hex[:8]}"
    evil = f"x; touch {mark}; $(touch {mark}) `touch {mark}` '\"; touch {mark}"
    result = await transport.run(["echo", evil])
    assert result.stdout == evil + "\n"
    handle = await transport.start(RemoteRun(
        run_id(), ["sh", "-c", 'printf "%s|%s" "$1" "$V"', "sh", evil], deadline=10,
        env={"V": evil}))
    output, _ = await collect(transport, handle)
    assert output.decode() == f"{evil}|{evil}"
    handle = await transport.start(RemoteRun(run_id(), ["true"], deadline=10, cwd=evil))
    await collect(transport, handle)
    assert await transport.exit_status(handle) == 126
    directory = workdir(owner)
    try:
        source = directory / "job.fio"
        source.write_text("[global]\nrw=read\n")
        await transport.put_file(str(source), f"{directory}/{evil}.fio")
        assert (directory / f"{evil}.fio").read_text() == "[global]\nrw=read\n"
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    assert not os.path.exists(mark), "a value was run as a command"


async def check_exit_status(transport: Transport) -> None:
    """None while running; the command's status after; 124 when the deadline ended it."""
    handle = await transport.start(RemoteRun(run_id(), "sleep 0.5; exit 3", deadline=10))
    assert await transport.exit_status(handle) is None
    await collect(transport, handle)
    assert await transport.exit_status(handle) == 3
    started = time.monotonic()
    handle = await transport.start(RemoteRun(run_id(), ["sleep", "30"], deadline=0.5))
    await collect(transport, handle)
    assert await transport.exit_status(handle) == 124
    assert time.monotonic() - started < 3


async def wait_for_chunk(stream: object, timeout: float) -> Chunk:
    """The next chunk of an async iterator, or fail after ``timeout`` seconds."""
    return await asyncio.wait_for(stream.__anext__(), timeout)  # type: ignore[attr-defined]
