"""This machine as a host: asyncio subprocesses, and the same detached-file design as SSH.

A run starts through the same host scripts as over SSH (``hostscripts``), so it lives in its
own session under ``timeout``, writes to ``~/.cache/benchtui/runs/SESSION/RUN/out`` and is
stopped by process group and tag. Following reads that file directly, polling every
``poll_interval`` seconds. The run's watchdog watches this process: once it is gone for
``controller_grace`` seconds, the run is stopped (``watchdog``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from benchtui.errors import HostError
from benchtui.transport import hostscripts
from benchtui.transport.base import (
    DEFAULT_CONTROLLER_GRACE,
    EXIT_UNKNOWN,
    Chunk,
    CommandResult,
    Leftover,
    LinkState,
    RemoteRun,
    RunHandle,
    RunOutcome,
    StateCallback,
    check_id,
    new_session_id,
)
from benchtui.transport.errors import HostCommandError
from benchtui.transport.watchdog import leftovers_argv, local_watch, parse_leftovers

#: Bytes read from the output file at most per chunk.
READ_SIZE = 1 << 16


class LocalTransport:
    """The machine benchtui runs on, reached without SSH. ``controller_grace``: seconds the
    runs go on once this process is gone (``math.inf``: until their deadline); ``label``
    names the plan in the runs' files, for a later session's preflight."""

    def __init__(self, name: str = "local", *, session_id: str | None = None,
                 runs_dir: str = hostscripts.DEFAULT_RUNS_DIR, poll_interval: float = 0.1,
                 on_state: StateCallback | None = None,
                 controller_grace: float = DEFAULT_CONTROLLER_GRACE, label: str = "") -> None:
        self._name = name
        self.session_id = check_id("session id", session_id or new_session_id())
        self.runs_dir = runs_dir
        self.poll_interval = poll_interval
        self.watch = local_watch(label, controller_grace)
        self._on_state = on_state
        self._state = LinkState.DOWN

    @property
    def name(self) -> str:
        return self._name

    @property
    def is_local(self) -> bool:
        return True

    @property
    def state(self) -> LinkState:
        return self._state

    @property
    def given_up(self) -> HostError | None:
        """This machine is never given up."""
        return None

    def _set_state(self, state: LinkState) -> None:
        if state is not self._state:
            self._state = state
            if self._on_state is not None:
                self._on_state(self._name, state)

    async def connect(self) -> None:
        self._set_state(LinkState.UP)

    async def close(self) -> None:
        self._set_state(LinkState.DOWN)

    async def run(self, command: Sequence[str] | str, timeout: float = 30.0,
                  *, stdin: bytes | None = None) -> CommandResult:
        """Run a short command under ``timeout`` (as over SSH, so a missing command is
        exit status 127 and a command past ``timeout`` raises ``HostCommandError``)."""
        argv = hostscripts.bounded_argv(command, timeout)
        line = hostscripts.shell_line(argv)
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE if stdin is not None else
                asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise HostCommandError(self._name, f"cannot run {argv[0]}: {exc.strerror}",
                                   command=line) from exc
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout + 5.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise self._timed_out(timeout, line) from None
        status = proc.returncode if proc.returncode is not None else EXIT_UNKNOWN
        if status < 0:
            status = 128 - status  # killed by a signal: report it as a shell would
        if status in (124, 137) and time.monotonic() - started >= timeout:
            raise self._timed_out(timeout, line)
        return CommandResult(status, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"))

    def _timed_out(self, timeout: float, line: str) -> HostCommandError:
        return HostCommandError(self._name, f"command timed out after {timeout:g} s",
                                command=line[:200])

    async def start(self, run: RemoteRun) -> RunHandle:
        tag = f"{self.session_id}/{run.run_id}"
        argv = hostscripts.start_argv(run, runs_dir=self._runs_base(),
                                      session_id=self.session_id, tag=tag, watch=self.watch)
        result = await self.run(argv, timeout=15.0)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot start run {run.run_id}: "
                                   f"{result.stderr.strip() or f'exit {result.exit_status}'}")
        directory, wrapper_pid, pgid = hostscripts.parse_started(result.stdout)
        return RunHandle(self._name, run.run_id, directory, wrapper_pid, pgid, tag)

    async def follow(self, handle: RunHandle, offset: int = 0) -> AsyncGenerator[Chunk, None]:
        path = Path(handle.out_path)
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise HostCommandError(self._name, f"cannot read the output of run "
                                   f"{handle.run_id}: {exc.strerror}") from exc
        with stream:
            stream.seek(offset)
            while True:
                # Sample "ended" before reading: what was written before the end is then
                # surely read by the reads below, so nothing is left behind.
                ended = Path(handle.rc_path).exists() or not _alive(handle.wrapper_pid)
                data = stream.read(READ_SIZE)
                if data:
                    offset += len(data)
                    yield Chunk(offset, data)
                    continue
                if ended:
                    return
                await asyncio.sleep(self.poll_interval)

    async def stop(self, handle: RunHandle, grace: float = 2.0) -> None:
        result = await self.run(hostscripts.stop_argv(handle, grace), timeout=grace + 10.0)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot stop run {handle.run_id}: "
                                   f"{result.stderr.strip() or f'exit {result.exit_status}'}")

    async def exit_status(self, handle: RunHandle) -> int | None:
        return (await self.outcome(handle)).status

    async def outcome(self, handle: RunHandle) -> RunOutcome:
        result = await self.run(hostscripts.status_argv(handle), timeout=10.0)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot read the state of run "
                                   f"{handle.run_id}: {result.stderr.strip()}")
        return hostscripts.parse_outcome(result.stdout)

    async def leftovers(self) -> list[Leftover]:
        result = await self.run(leftovers_argv(self._runs_base(), self.session_id),
                                timeout=30.0)
        if not result.ok:
            raise HostCommandError(self._name, "cannot look for the runs of earlier "
                                   f"sessions: {result.stderr.strip()}")
        return parse_leftovers(self._name, result.stdout)

    async def put_file(self, local_path: str, remote_path: str) -> None:
        data = await asyncio.to_thread(Path(local_path).read_bytes)
        result = await self.run(hostscripts.put_argv(remote_path), stdin=data)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot write {remote_path}: "
                                   f"{result.stderr.strip()}")

    def _runs_base(self) -> str:
        """The runs directory, absolute: relative ones are under the home directory."""
        base = Path(self.runs_dir)
        return str(base if base.is_absolute() else Path.home() / base)


def _alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rpartition(")")[2].split()[:1]
    return state not in (["Z"], ["X"])
