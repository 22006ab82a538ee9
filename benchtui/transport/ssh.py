"""A host over SSH with asyncssh (with ``ssh_link``, the only modules that import it).

Runs follow the detached-file design of ``base``: the host scripts in ``hostscripts`` start,
follow, stop and inspect a run; every command line is ``shlex.join`` of an argv. The link
(``ssh_link.SshLink``) is kept alive with keepalives; when it drops, it reconnects with
exponential backoff for at most the reconnect window, and ``follow`` resumes at the byte
offset it had reached, so no byte is lost or repeated; a link unreachable for the whole
window is given up, and every later use fails at once. Once a run was started, the transport
feeds a keeper on the host one line a second through the link, so that the runs' watchdogs
can tell when this controller is gone (``watchdog``): from the controller's heartbeat process
when it is given one (``heartbeats``: beats that do not wait behind the event loop), else
from the event loop. Output is read in chunks of at most
``READ_SIZE`` bytes, through SSH's flow control, to the end (memory does not grow with it).
Host keys are checked against known_hosts (``sshtarget``); errors become ``HostError`` with
one sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path

import asyncssh

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
from benchtui.transport.beat_clock import BeatClock
from benchtui.transport.errors import HostCommandError, is_transient
from benchtui.transport.heartbeats import Heartbeats, Watched
from benchtui.transport.ssh_link import (
    DEFAULT_WINDOW,
    LINK_ERRORS,
    Connection,
    SshLink,
    map_error,
)
from benchtui.transport.sshtarget import SshTarget
from benchtui.transport.watchdog import (
    BEAT_INTERVAL,
    beat_watch,
    keeper_argv,
    leftovers_argv,
    parse_leftovers,
)

#: Bytes read from a follow channel at most per chunk: a fio json+ document of 2 jobs
#: (~80 kB) in one chunk, not three (``rest_of_line``).
READ_SIZE = 1 << 18
#: Bytes of a host script's error output kept at most.
ERRORS_SIZE = 1 << 12
#: Seconds a chunk that ends within a line waits at most for the rest of the line.
REST_OF_LINE_WAIT = 0.005
#: The bytes that end a line (``lines``: ``\n``, ``\r``).
LINE_ENDS = b"\n\r"


class SshTransport:
    """One host over SSH. ``reconnect_timeout`` (the session's ``reconnect_window``) bounds
    how long the transport keeps trying to get a lost link back, counted from when the host
    was last heard, before it gives the host up (``given_up``). ``controller_grace``:
    seconds the host lets the runs go on once this controller is gone (its connection
    closed, or silent for ``watchdog.BEAT_SILENCE`` s; ``math.inf``: until their deadline);
    ``label`` names the plan in the runs' files, for a later session's preflight;
    ``heartbeats``: the controller's heartbeat process, which feeds the host's keeper (else
    the transport does, from the event loop)."""

    def __init__(self, name: str, target: SshTarget, *, session_id: str | None = None,
                 runs_dir: str = hostscripts.DEFAULT_RUNS_DIR,
                 on_state: StateCallback | None = None,
                 reconnect_timeout: float = DEFAULT_WINDOW,
                 controller_grace: float = DEFAULT_CONTROLLER_GRACE, label: str = "",
                 heartbeats: Heartbeats | None = None) -> None:
        self._name = name
        self.target = target
        self.session_id = check_id("session id", session_id or new_session_id())
        self.runs_dir = runs_dir
        self.watch = beat_watch(label, controller_grace, name)
        self._beating: asyncio.Task[None] | None = None
        self._watched = False  # a watched run was started: keep the keeper fed
        self._heartbeats = heartbeats
        self._on_state = on_state
        self._link = SshLink(name, target, window=reconnect_timeout,
                             on_state=self._state_changed)

    # -- link ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def is_local(self) -> bool:
        return False

    @property
    def state(self) -> LinkState:
        return self._link.state

    @property
    def given_up(self) -> HostError | None:
        """Why the host was given up (unreachable for the whole reconnect window, or a key
        or login refused on reconnecting); None while it is not."""
        return self._link.given_up

    @property
    def reconnect_timeout(self) -> float:
        return self._link.window

    @property
    def reconnects(self) -> int:
        """How many times the link was re-established after a loss (tests, the UI)."""
        return self._link.reconnects

    def _state_changed(self, state: LinkState) -> None:
        if self._on_state is not None:
            self._on_state(self._name, state)

    @property
    def cipher(self) -> str | None:
        """The cipher the current link sends with (None while there is no link)."""
        conn = self._link.conn
        return None if conn is None else str(conn.get_extra_info("send_cipher"))

    @property
    def host_key(self) -> str | None:
        """The fingerprint of the host key the server presented (``SHA256:...``; None while
        there is no link): two plan hosts showing the same key are one sshd."""
        conn = self._link.conn
        key = None if conn is None else conn.get_server_host_key()
        return None if key is None else str(key.get_fingerprint())

    async def connect(self) -> None:
        """One attempt: ``HostError`` at once when the host cannot be reached."""
        await self._link.connect()
        if self._heartbeats is not None and self.watch.watched:
            self._heartbeats.prepare()  # (started and ready before the first run)
        if self._watched:
            self._beat()

    async def close(self) -> None:
        """Close the link at once (a reconnect in progress gives up); followers end with
        ``HostCommandError``. Detached runs go on on the host, until their watchdog sees
        this controller gone for ``controller_grace`` seconds."""
        self._link.wanted = False
        if self._heartbeats is not None:
            self._heartbeats.unwatch(self._name)
        beating, self._beating = self._beating, None
        if beating is not None:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
        await self._link.close()

    async def reconnect(self) -> None:
        """Replace the link, retrying with backoff (0.5 s doubling to 8 s) while the errors
        are transient, for at most ``reconnect_timeout`` seconds; then ``HostError``."""
        await self._link.reconnect()

    # -- commands -----------------------------------------------------------------------

    async def run(self, command: Sequence[str] | str, timeout: float = 30.0,
                  *, stdin: bytes | None = None) -> CommandResult:
        """Run a short command (bounded on the host by ``timeout`` too). Not retried: a
        lost link is a ``HostUnreachableError``."""
        conn, _ = await self._link.get()
        return await self._run_on(conn, hostscripts.bounded_argv(command, timeout), timeout,
                                  stdin)

    async def _run_on(self, conn: Connection, argv: list[str],
                      timeout: float, stdin: bytes | None = None) -> CommandResult:
        status, out, err = await self._exec(conn, argv, timeout, stdin)
        return CommandResult(status, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"))

    async def _exec(self, conn: Connection, argv: list[str],
                    timeout: float, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        """Run ``argv`` on ``conn``: (exit status, stdout, stderr) as bytes."""
        line = hostscripts.shell_line(argv)
        started = time.monotonic()
        try:
            done = await asyncio.wait_for(
                conn.run(line, check=False, encoding=None, input=stdin), timeout + 5.0)
        except TimeoutError:
            raise self._timed_out(timeout, line) from None
        except LINK_ERRORS as exc:
            raise map_error(self._name, self.target, exc, None) from exc
        status = _status(done.exit_status, done.exit_signal)
        if status in (124, 137) and time.monotonic() - started >= timeout:
            raise self._timed_out(timeout, line)
        return status, _bytes(done.stdout), _bytes(done.stderr)

    def _timed_out(self, timeout: float, line: str) -> HostCommandError:
        return HostCommandError(self._name, f"command timed out after {timeout:g} s",
                                command=line[:200])

    async def _retrying(self, argv: list[str], timeout: float) -> CommandResult:
        """Run an idempotent host script, reconnecting (with backoff) when the link drops."""
        while True:
            conn, generation = await self._link.get()
            try:
                return await self._run_on(conn, argv, timeout)
            except HostError as exc:
                if not is_transient(exc):
                    raise
                await self._link.relink(generation)

    async def start(self, run: RemoteRun) -> RunHandle:
        tag = f"{self.session_id}/{run.run_id}"
        argv = hostscripts.start_argv(run, runs_dir=self.runs_dir,
                                      session_id=self.session_id, tag=tag, watch=self.watch)
        result = await self.run(argv, timeout=15.0)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot start run {run.run_id}: "
                                   f"{result.stderr.strip() or f'exit {result.exit_status}'}")
        directory, wrapper_pid, pgid = hostscripts.parse_started(result.stdout)
        if self.watch.watched:
            self._watched = True
            self._beat()
        return RunHandle(self._name, run.run_id, directory, wrapper_pid, pgid, tag)

    def _beat(self) -> None:
        """Start feeding the host's keeper (through the heartbeat process, when there is
        one), unless that is already going on."""
        if self._heartbeats is not None:
            self._heartbeats.watch(Watched(self._name, self.target, self.runs_dir,
                                           self.session_id, self._link.window),
                                   self._beat_here)
        else:
            self._beat_here()

    def _beat_here(self) -> None:
        """Feed the host's keeper from this event loop, over the transport's link."""
        if self._link.wanted and (self._beating is None or self._beating.done()):
            line = hostscripts.shell_line(keeper_argv(self.runs_dir, self.session_id,
                                                      self._name))
            self._beating = asyncio.create_task(feed_keeper(self._link, line),
                                                name=f"benchtui-heartbeat-{self._name}")

    async def follow(self, handle: RunHandle, offset: int = 0) -> AsyncGenerator[Chunk, None]:
        """Stream the run's output from ``offset``: FOLLOW while the run lives, then DRAIN
        what it wrote after, both read ``READ_SIZE`` bytes at a time; across link losses,
        resume at the byte reached (the state goes ``reconnecting`` meanwhile)."""
        draining = False
        while True:
            conn, generation = await self._link.get()
            argv = (hostscripts.drain_argv if draining else hostscripts.follow_argv)(
                handle, offset)
            try:
                proc = await conn.create_process(hostscripts.shell_line(argv), encoding=None,
                                                 stdin=asyncssh.DEVNULL)
                try:
                    while data := await proc.stdout.read(READ_SIZE):
                        if data[-1] not in LINE_ENDS and len(data) < READ_SIZE:
                            data = await rest_of_line(proc.stdout, data)
                        offset += len(data)
                        yield Chunk(offset, data)
                    errors = await proc.stderr.read(ERRORS_SIZE)
                    await proc.wait()
                finally:
                    proc.close()
            except (HostError, *LINK_ERRORS) as exc:
                error = exc if isinstance(exc, HostError) else map_error(
                    self._name, self.target, exc, None)
                if error is exc and not is_transient(error):
                    raise
                if not is_transient(error):
                    raise error from exc
                await self._link.relink(generation)
                continue
            if proc.exit_status == 0:
                if draining:
                    return
                draining = True  # the run ended: what it wrote after tail stopped
                continue
            if proc.exit_status == hostscripts.FOLLOW_AGAIN and not draining:
                await asyncio.sleep(0.2)  # tail ended, the run did not
                continue
            if self._link.conn is conn:  # the link is fine: the host refused to follow
                raise HostCommandError(self._name, f"cannot follow run {handle.run_id}: "
                                       f"{_bytes(errors).decode('utf-8', 'replace').strip()}")
            await self._link.relink(generation)

    async def stop(self, handle: RunHandle, grace: float = 2.0) -> None:
        result = await self._retrying(hostscripts.stop_argv(handle, grace), grace + 15.0)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot stop run {handle.run_id}: "
                                   f"{result.stderr.strip() or f'exit {result.exit_status}'}")

    async def exit_status(self, handle: RunHandle) -> int | None:
        return (await self.outcome(handle)).status

    async def outcome(self, handle: RunHandle) -> RunOutcome:
        result = await self._retrying(hostscripts.status_argv(handle), 15.0)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot read the state of run "
                                   f"{handle.run_id}: {result.stderr.strip()}")
        return hostscripts.parse_outcome(result.stdout)

    async def leftovers(self) -> list[Leftover]:
        result = await self._retrying(leftovers_argv(self.runs_dir, self.session_id), 30.0)
        if not result.ok:
            raise HostCommandError(self._name, "cannot look for the runs of earlier "
                                   f"sessions: {result.stderr.strip()}")
        return parse_leftovers(self._name, result.stdout)

    async def put_file(self, local_path: str, remote_path: str) -> None:
        data = await asyncio.to_thread(Path(local_path).read_bytes)
        conn, _ = await self._link.get()
        result = await self._run_on(conn, hostscripts.put_argv(remote_path), 60.0, data)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot write {remote_path}: "
                                   f"{result.stderr.strip()}")



async def rest_of_line(stream: asyncssh.SSHReader[bytes], data: bytes) -> bytes:
    """``data`` (read from ``stream``, ending within a line) and what follows it on
    ``stream`` up to a line end, ``READ_SIZE`` bytes in all, or the end of the stream, within
    ``REST_OF_LINE_WAIT`` seconds. sshd sends a burst of output (a fio document of 80 kB to
    900 kB) in packets of 32 KiB that arrive a few hundred microseconds apart, each read on
    its own: one chunk for the burst instead of one per packet spares the follower, the
    intake and the parser a turn each. A line still unfinished after the wait is passed as
    it is (a tool printing progress dots is heard at once, not at its next line end); what
    is read and not yet passed on when the link drops is read again from the same offset."""
    parts = [data]
    size = len(data)
    timeout = asyncio.timeout(REST_OF_LINE_WAIT)
    try:
        async with timeout:
            while size < READ_SIZE:
                more = await stream.read(READ_SIZE - size)
                if not more:  # (the end: the follower's next read says it again)
                    break
                parts.append(more)
                size += len(more)
                if more[-1] in LINE_ENDS:
                    break
    except TimeoutError:
        if not timeout.expired():
            raise
    return b"".join(parts)


async def feed_keeper(link: SshLink, line: str,
                      beating: Callable[[], bool] = lambda: True,
                      clock: BeatClock | None = None) -> None:
    """While ``link`` is wanted and not given up: the keeper ``line`` (``watchdog.KEEPER``)
    runs on the host, fed one line every ``BEAT_INTERVAL`` seconds while ``beating()``, by
    ``clock`` (shared by the keepers of one process: one wake-up a second for all; by
    default one of its own); started again on every new connection."""
    own = clock is None
    clock = BeatClock() if clock is None else clock
    try:
        while link.wanted and link.given_up is None:
            try:
                conn, _ = await link.get()
                proc = await conn.create_process(line, encoding=None,
                                                 stdout=asyncssh.DEVNULL,
                                                 stderr=asyncssh.DEVNULL)
                try:
                    await _fed(link, conn, proc, beating, clock)
                finally:
                    proc.close()
            except (HostError, *LINK_ERRORS):
                pass
            await asyncio.sleep(BEAT_INTERVAL)
    finally:
        if own:
            await clock.close()


async def _fed(link: SshLink, conn: Connection, proc: asyncssh.SSHClientProcess[bytes],
               beating: Callable[[], bool], clock: BeatClock) -> None:
    """Feed ``proc`` (a keeper) at each tick of ``clock`` while it runs on ``link``'s
    connection ``conn``: returns within a tick of its end, or of the link's change."""
    ended = asyncio.Event()

    def beat() -> None:
        if link.conn is not conn or proc.is_closing():
            ended.set()
        elif beating():
            try:
                proc.stdin.write(b"\n")
            except Exception:  # noqa: BLE001 - LINK_ERRORS, or a channel closed otherwise
                ended.set()

    clock.add(beat)
    try:
        await ended.wait()
    finally:
        clock.discard(beat)


def _status(exit_status: int | None, exit_signal: tuple[str, bool, str, str] | None) -> int:
    """An exit status as a shell reports it (128 + N when killed by signal N)."""
    if exit_status is not None and exit_status >= 0:
        return exit_status
    if exit_signal:
        with contextlib.suppress(KeyError):
            return 128 + signal.Signals[f"SIG{exit_signal[0]}"].value
    return EXIT_UNKNOWN


def _bytes(data: bytes | str | None) -> bytes:
    if data is None:
        return b""
    return data if isinstance(data, bytes) else data.encode()
