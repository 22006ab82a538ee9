"""A host over SSH with asyncssh: the only module of benchtui that imports asyncssh.

Runs follow the detached-file design of ``base``: the host scripts in ``hostscripts`` start,
follow, stop and inspect a run; every command line is ``shlex.join`` of an argv. The link is
kept alive with keepalives; when it drops, ``follow`` reconnects with exponential backoff and
resumes at the byte offset it had reached, so no byte is lost or repeated. Once a run was
started, the transport feeds a keeper on the host one line a second through the link, so
that the runs' watchdogs can tell when this controller is gone (``watchdog``). Host keys are
checked against known_hosts (``sshtarget``); errors become ``HostError`` with one sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from benchtui.transport.errors import (
    HostAuthError,
    HostCommandError,
    HostConfigError,
    HostKeyError,
    HostLookupError,
    HostUnreachableError,
    is_transient,
)
from benchtui.transport.sshtarget import (
    DEFAULT_PORT,
    SshTarget,
    append_known_host,
    changed_key_hint,
    host_pattern,
    unknown_key_hint,
)
from benchtui.transport.watchdog import (
    BEAT_INTERVAL,
    beat_watch,
    keeper_argv,
    leftovers_argv,
    parse_leftovers,
)

#: Bytes read from a follow channel at most per chunk.
READ_SIZE = 1 << 16
#: Reconnect delays: first retry after BACKOFF_FIRST s, doubling up to BACKOFF_MAX s.
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 8.0

#: Errors that mean "the link or the host failed", as opposed to a bug in benchtui.
_LINK_ERRORS = (asyncssh.Error, OSError, TimeoutError, EOFError)


@dataclass
class _KeyVerdict:
    """What the host key check of one connection attempt saw."""

    host: str = ""
    port: int | None = None
    problem: str = ""  # "unknown" or "changed"
    accepted: str = ""  # "ssh-ed25519 AAAA..." trusted on first use, to record


class _Client(asyncssh.SSHClient):
    """Checks keys that known_hosts does not list, and reports a lost connection."""

    def __init__(self, owner: SshTransport, known: asyncssh.SSHKnownHosts,
                 accept_new: bool) -> None:
        self._owner = owner
        self._known = known
        self._accept_new = accept_new
        self.verdict = _KeyVerdict()

    def validate_host_public_key(self, host: str, addr: str, port: int,
                                 key: asyncssh.SSHKey) -> bool:
        # Called only for a key that known_hosts does not trust for this host.
        lookup_port = None if port == DEFAULT_PORT else port
        keys, ca_keys, *_ = self._known.match(host, addr, lookup_port)
        self.verdict.host, self.verdict.port = host, port
        if keys or ca_keys:
            self.verdict.problem = "changed"
            return False
        if self._accept_new:
            self.verdict.accepted = " ".join(key.export_public_key().decode().split()[:2])
            return True
        self.verdict.problem = "unknown"
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._connection_lost(self)


class SshTransport:
    """One host over SSH. ``reconnect_timeout`` bounds how long the transport keeps trying
    to get a lost link back before the host is ``down``. ``controller_grace``: seconds the
    host lets the runs go on once this controller is gone (its connection closed, or silent
    for ``watchdog.BEAT_SILENCE`` s; ``math.inf``: until their deadline); ``label`` names
    the plan in the runs' files, for a later session's preflight."""

    def __init__(self, name: str, target: SshTarget, *, session_id: str | None = None,
                 runs_dir: str = hostscripts.DEFAULT_RUNS_DIR,
                 on_state: StateCallback | None = None,
                 reconnect_timeout: float = 120.0,
                 controller_grace: float = DEFAULT_CONTROLLER_GRACE, label: str = "") -> None:
        self._name = name
        self.target = target
        self.session_id = check_id("session id", session_id or new_session_id())
        self.runs_dir = runs_dir
        self.reconnect_timeout = reconnect_timeout
        self.watch = beat_watch(label, controller_grace, name)
        self._beating: asyncio.Task[None] | None = None
        self._watched = False  # a watched run was started: keep the keeper fed
        self._on_state = on_state
        self._state = LinkState.DOWN
        self._conn: asyncssh.SSHClientConnection | None = None
        self._jump: asyncssh.SSHClientConnection | None = None
        self._client: _Client | None = None
        self._generation = 0
        self._lock = asyncio.Lock()
        self._wanted = False  # connect() was called and close() was not
        #: How many times the link was re-established after a loss (for tests and the UI).
        self.reconnects = 0

    # -- link ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def is_local(self) -> bool:
        return False

    @property
    def state(self) -> LinkState:
        return self._state

    def _set_state(self, state: LinkState) -> None:
        if state is not self._state:
            self._state = state
            if self._on_state is not None:
                self._on_state(self._name, state)

    @property
    def cipher(self) -> str | None:
        """The cipher the current link sends with (None while there is no link)."""
        conn = self._conn
        return None if conn is None else str(conn.get_extra_info("send_cipher"))

    @property
    def host_key(self) -> str | None:
        """The fingerprint of the host key the server presented (``SHA256:...``; None while
        there is no link): two plan hosts showing the same key are one sshd."""
        conn = self._conn
        key = None if conn is None else conn.get_server_host_key()
        return None if key is None else str(key.get_fingerprint())

    async def connect(self) -> None:
        """One attempt: ``HostError`` at once when the host cannot be reached."""
        self._wanted = True
        async with self._lock:
            if self._conn is not None:
                return
            self._set_state(LinkState.CONNECTING)
            try:
                self._install(*await self._open())
            except HostError:
                self._set_state(LinkState.DOWN)
                raise
        if self._watched:
            self._beat()

    async def close(self) -> None:
        """Close the link at once (a reconnect in progress gives up); followers end with
        ``HostCommandError``. Detached runs go on on the host, until their watchdog sees
        this controller gone for ``controller_grace`` seconds."""
        self._wanted = False
        beating, self._beating = self._beating, None
        if beating is not None:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
        self._drop()
        self._set_state(LinkState.DOWN)

    async def reconnect(self) -> None:
        """Replace the link, retrying with backoff (0.5 s doubling to 8 s) while the errors
        are transient, for at most ``reconnect_timeout`` seconds; then ``HostError``."""
        self._wanted = True
        await self._relink(None)

    async def _relink(self, failed_generation: int | None) -> None:
        """``reconnect``, unless the link was replaced since ``failed_generation`` failed."""
        async with self._lock:
            if not self._is_wanted():
                raise HostCommandError(self._name, "not connected (the transport is closed)")
            if (failed_generation is not None and failed_generation != self._generation
                    and self._conn is not None):
                return
            self._drop()
            self._set_state(LinkState.RECONNECTING)
            give_up = time.monotonic() + self.reconnect_timeout
            delay = BACKOFF_FIRST
            while True:
                try:
                    opened = await self._open()
                    break
                except HostError as exc:
                    if not is_transient(exc) or time.monotonic() + delay > give_up:
                        self._set_state(LinkState.DOWN)
                        raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
                if not self._is_wanted():
                    raise HostCommandError(self._name, "closed while reconnecting")
            if not self._is_wanted():
                opened[0].abort()
                if opened[1] is not None:
                    opened[1].abort()
                raise HostCommandError(self._name, "closed while reconnecting")
            self._install(*opened)
            self.reconnects += 1

    def _is_wanted(self) -> bool:
        """Whether the link should be up (``close`` may change it during any await)."""
        return self._wanted

    async def _link(self) -> tuple[asyncssh.SSHClientConnection, int]:
        """The live connection and its generation, reconnecting if it was lost."""
        if self._conn is None:
            await self._relink(self._generation)
        assert self._conn is not None
        return self._conn, self._generation

    async def _open(self) -> tuple[asyncssh.SSHClientConnection,
                                   asyncssh.SSHClientConnection | None, _Client]:
        """One connection attempt (through the jump host if there is one)."""
        jump = None
        if self.target.jump:
            try:
                jump_target = self.target.jump_target()
            except ValueError as exc:  # (the plan loader refuses these; a config may not)
                raise HostConfigError(self._name, str(exc)) from None
            jump, _ = await _connect(self, jump_target)
        try:
            conn, client = await _connect(self, self.target, tunnel=jump)
        except BaseException:
            if jump is not None:
                jump.abort()
            raise
        return conn, jump, client

    def _install(self, conn: asyncssh.SSHClientConnection,
                 jump: asyncssh.SSHClientConnection | None, client: _Client) -> None:
        self._conn, self._jump, self._client = conn, jump, client
        self._generation += 1
        self._set_state(LinkState.UP)

    def _drop(self) -> None:
        """Forget the current link, closing it without waiting."""
        conn, jump = self._conn, self._jump
        self._conn = self._jump = self._client = None
        for each in (conn, jump):
            if each is not None:
                each.abort()

    def _connection_lost(self, client: _Client) -> None:
        if client is self._client:  # the live link died (not one we closed on purpose)
            self._conn = None
            if self._jump is not None:
                self._jump.abort()
                self._jump = None
            self._client = None
            self._set_state(LinkState.DOWN)

    # -- commands -----------------------------------------------------------------------

    async def run(self, command: Sequence[str] | str, timeout: float = 30.0,
                  *, stdin: bytes | None = None) -> CommandResult:
        """Run a short command (bounded on the host by ``timeout`` too). Not retried: a
        lost link is a ``HostUnreachableError``."""
        conn, _ = await self._link()
        return await self._run_on(conn, hostscripts.bounded_argv(command, timeout), timeout,
                                  stdin)

    async def _run_on(self, conn: asyncssh.SSHClientConnection, argv: list[str],
                      timeout: float, stdin: bytes | None = None) -> CommandResult:
        status, out, err = await self._exec(conn, argv, timeout, stdin)
        return CommandResult(status, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"))

    async def _exec(self, conn: asyncssh.SSHClientConnection, argv: list[str],
                    timeout: float, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        """Run ``argv`` on ``conn``: (exit status, stdout, stderr) as bytes."""
        line = hostscripts.shell_line(argv)
        started = time.monotonic()
        try:
            done = await asyncio.wait_for(
                conn.run(line, check=False, encoding=None, input=stdin), timeout + 5.0)
        except TimeoutError:
            raise self._timed_out(timeout, line) from None
        except _LINK_ERRORS as exc:
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
            conn, generation = await self._link()
            try:
                return await self._run_on(conn, argv, timeout)
            except HostError as exc:
                if not is_transient(exc):
                    raise
                await self._relink(generation)

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
        """Start feeding the host's keeper, unless that is already going on."""
        if self._beating is None or self._beating.done():
            self._beating = asyncio.create_task(self._heartbeat(),
                                                name=f"benchtui-heartbeat-{self._name}")

    async def _heartbeat(self) -> None:
        """While the transport is open: a keeper on the host (``watchdog.KEEPER``), fed one
        line every ``BEAT_INTERVAL`` seconds; started again on every new link."""
        line = hostscripts.shell_line(keeper_argv(self.runs_dir, self.session_id, self._name))
        while self._is_wanted():
            try:
                conn, _ = await self._link()
                proc = await conn.create_process(line, encoding=None, stdout=asyncssh.DEVNULL,
                                                 stderr=asyncssh.DEVNULL)
                try:
                    while self._conn is conn and not proc.is_closing():
                        proc.stdin.write(b"\n")
                        await asyncio.sleep(BEAT_INTERVAL)
                finally:
                    proc.close()
            except (HostError, *_LINK_ERRORS):
                pass
            await asyncio.sleep(BEAT_INTERVAL)

    async def follow(self, handle: RunHandle, offset: int = 0) -> AsyncGenerator[Chunk, None]:
        """Stream the run's output from ``offset``; across link losses, resume at the byte
        reached (the state goes ``reconnecting`` meanwhile)."""
        while True:
            conn, generation = await self._link()
            try:
                proc = await conn.create_process(
                    hostscripts.shell_line(hostscripts.follow_argv(handle, offset)),
                    encoding=None, stdin=asyncssh.DEVNULL)
                try:
                    while data := await proc.stdout.read(READ_SIZE):
                        offset += len(data)
                        yield Chunk(offset, data)
                    errors = await proc.stderr.read()
                    await proc.wait()
                finally:
                    proc.close()
                if proc.exit_status == 0:
                    status, rest, _ = await self._exec(
                        conn, hostscripts.drain_argv(handle, offset), 30.0)
                    if status == 0:
                        if rest:
                            offset += len(rest)
                            yield Chunk(offset, rest)
                        return
            except (HostError, *_LINK_ERRORS) as exc:
                error = exc if isinstance(exc, HostError) else map_error(
                    self._name, self.target, exc, None)
                if error is exc and not is_transient(error):
                    raise
                if not is_transient(error):
                    raise error from exc
                await self._relink(generation)
                continue
            if proc.exit_status == hostscripts.FOLLOW_AGAIN:  # tail ended, the run did not
                await asyncio.sleep(0.2)
                continue
            if self._conn is conn:  # the link is fine: the host refused to follow
                raise HostCommandError(self._name, f"cannot follow run {handle.run_id}: "
                                       f"{_bytes(errors).decode('utf-8', 'replace').strip()}")
            await self._relink(generation)

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
        conn, _ = await self._link()
        result = await self._run_on(conn, hostscripts.put_argv(remote_path), 60.0, data)
        if not result.ok:
            raise HostCommandError(self._name, f"cannot write {remote_path}: "
                                   f"{result.stderr.strip()}")


async def _connect(owner: SshTransport, target: SshTarget,
                   tunnel: asyncssh.SSHClientConnection | None = None,
                   ) -> tuple[asyncssh.SSHClientConnection, _Client]:
    """Open one verified connection to ``target``; ``HostError`` when that fails."""
    _check_identity(owner.name, target)
    path = target.known_hosts_path()
    known = asyncssh.import_known_hosts(target.known_hosts_text())
    client = _Client(owner, known, target.accept_new_host_keys)
    options: dict[str, Any] = {
        "known_hosts": known,
        "connect_timeout": target.connect_timeout,
        "keepalive_interval": target.keepalive_interval,
        "keepalive_count_max": target.keepalive_count_max,
    }
    for key, value in (("port", target.port), ("username", target.user),
                       ("agent_path", target.agent_path), ("tunnel", tunnel)):
        if value is not None:
            options[key] = value
    if target.identity is not None:
        options["client_keys"] = [target.identity]
    if target.config is not None:
        options["config"] = [target.config]
    ciphers = target.cipher_preference()
    if ciphers is not None:
        options["encryption_algs"] = list(ciphers)
    try:
        conn = await asyncio.wait_for(
            asyncssh.connect(target.host, client_factory=lambda: client, **options),
            target.connect_timeout + 2.0)
    except (*_LINK_ERRORS, ValueError) as exc:
        raise map_error(owner.name, target, exc, client.verdict) from exc
    if client.verdict.accepted:
        append_known_host(path, host_pattern(client.verdict.host, client.verdict.port),
                          client.verdict.accepted)
    return conn, client


def _check_identity(name: str, target: SshTarget) -> None:
    """A missing or unreadable identity file is said as such, before any connection (the OS
    error asyncssh raises for it would read as an unreachable host)."""
    if target.identity is None:
        return
    key = Path(target.identity).expanduser()
    hint = "give the private key's path in identity = \"...\", or leave identity out to use " \
        "ssh-agent and ~/.ssh"
    if not key.exists():
        raise HostConfigError(name, f"the identity file {key} does not exist", hint)
    if key.is_dir():
        raise HostConfigError(name, f"the identity file {key} is a directory", hint)
    try:
        with key.open("rb"):
            pass
    except OSError as exc:
        raise HostConfigError(name, f"the identity file {key} cannot be read: "
                              f"{exc.strerror or exc}", "check its owner and mode "
                              "(chmod 600)") from None


def map_error(name: str, target: SshTarget, exc: BaseException,
              verdict: _KeyVerdict | None) -> HostError:
    """One clear ``HostError`` for what asyncssh or the OS raised while reaching ``target``."""
    where = target.where
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        path = target.known_hosts_path()
        host = verdict.host if verdict and verdict.host else target.host
        port = verdict.port if verdict and verdict.port else target.port
        pattern = host_pattern(host, port)
        if verdict is not None and verdict.problem == "changed":
            return HostKeyError(name, f"the host key of {pattern} does not match the one in "
                                f"known_hosts ({path})", changed_key_hint(pattern, path))
        return HostKeyError(name, f"the host key of {pattern} is not in known_hosts ({path})",
                            unknown_key_hint(host, port, path))
    if isinstance(exc, asyncssh.PermissionDenied):
        user = target.user or "the configured user"
        if target.identity is not None:
            return HostAuthError(name, f"authentication failed as {user} on {where}: the "
                                 f"host refused the key {target.identity}",
                                 f"add {target.identity}.pub to that user's "
                                 "~/.ssh/authorized_keys on the host, or give another "
                                 "identity")
        return HostAuthError(name, f"authentication failed as {user} on {where}: the host "
                             "refused every key offered (ssh-agent, ~/.ssh, the config's "
                             "IdentityFile)", "check ssh-agent (ssh-add -l), the keys and the "
                             "host's authorized_keys")
    if isinstance(exc, OSError) and exc.filename is not None \
            and not isinstance(exc, ConnectionError):
        # a file of ours (an IdentityFile in the SSH config, the config itself), not the host
        return HostConfigError(name, f"cannot read {exc.filename}: {exc.strerror or exc}",
                               "check the SSH config and the identity files it names")
    if isinstance(exc, asyncssh.KeyImportError | asyncssh.KeyEncryptionError):
        return HostAuthError(name, f"cannot use the identity file {target.identity}: {exc}")
    if isinstance(exc, asyncssh.ConnectionLost):
        return HostUnreachableError(name, f"connection to {where} lost")
    if isinstance(exc, asyncssh.DisconnectError):
        return HostUnreachableError(name, f"{where} closed the connection: {exc.reason}")
    if isinstance(exc, asyncssh.ChannelOpenError):
        return HostUnreachableError(name, f"{where} refused a channel: {exc.reason}")
    if isinstance(exc, socket.gaierror):
        return HostLookupError(name, f"cannot resolve the host name {target.host}",
                               "check the address, or the Host alias in ~/.ssh/config")
    if isinstance(exc, ConnectionRefusedError):
        return HostUnreachableError(name, f"connection refused on {where}",
                                    "is sshd running?")
    if isinstance(exc, TimeoutError):
        return HostUnreachableError(name, f"connection to {where} timed out after "
                                    f"{target.connect_timeout:g} s",
                                    "is the host up and the port open?")
    if isinstance(exc, ConnectionError | EOFError):
        return HostUnreachableError(name, f"connection to {where} broke: {exc}")
    if isinstance(exc, OSError):
        return HostUnreachableError(name, f"cannot reach {where}: {exc.strerror or exc}")
    if isinstance(exc, asyncssh.Error):
        return HostUnreachableError(name, f"SSH error with {where}: {exc.reason}")
    if isinstance(exc, ValueError):  # asyncssh's reading of the SSH config (a ProxyJump...)
        return HostConfigError(name, f"the SSH settings for {where} cannot be used: {exc}",
                               f"check {target.config_path()} (ProxyJump, Port, ...) for "
                               f"{target.host}")
    return HostCommandError(name, f"cannot connect to {where}: {exc}")


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
