"""The link to one SSH host (asyncssh): one verified connection at a time, reconnected
within the reconnect window, given up after it; and what its failures mean in words.

``SshLink`` holds the connection ``SshTransport`` (``ssh``) runs its commands over. When the
connection is lost (closed by the host, or its keepalives unanswered), the link reconnects
at once in the background, with backoff, and gives the host up once it has been unreachable
for the window (``window``, the session's ``reconnect_window``), counted from when it was
last heard: a closed connection is noticed at once, a silent one after
``keepalive_interval * (keepalive_count_max + 1)`` seconds (20 s by default), which the
window includes. A given-up link tries no more: every later use fails at once with the same
``HostGivenUpError``, until ``connect`` or ``reconnect`` is called again.

``connect`` opens one connection to an ``SshTarget`` (through a jump host's when given),
checks the host key against known_hosts (trusting an unknown one on first use only when
asked), and turns whatever asyncssh or the OS raised into one ``HostError`` sentence
(``map_error``). Only this module and ``ssh`` import asyncssh.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh

from benchtui.errors import HostError
from benchtui.transport.base import LinkState
from benchtui.transport.errors import (
    HostAuthError,
    HostCommandError,
    HostConfigError,
    HostGivenUpError,
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

#: Errors that mean "the link or the host failed", as opposed to a bug in benchtui.
LINK_ERRORS = (asyncssh.Error, OSError, TimeoutError, EOFError)

#: Called when a connection that was up is lost: the client it was made with, and how
#: many seconds the host had been silent before (keepalives unanswered; 0: it closed).
LostCallback = Callable[["Client", float], None]
#: Reconnect delays: first retry after BACKOFF_FIRST s, doubling up to BACKOFF_MAX s.
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 8.0
#: The default reconnect window (seconds).
DEFAULT_WINDOW = 120.0
#: Seconds an attempt gets at least, even at the window's end (a loss noticed only once
#: the window is over, by keepalives, is still tried once).
LAST_ATTEMPT = 2.0

Connection = asyncssh.SSHClientConnection

@dataclass
class KeyVerdict:
    """What the host key check of one connection attempt saw."""

    host: str = ""
    port: int | None = None
    problem: str = ""  # "unknown" or "changed"
    accepted: str = ""  # "ssh-ed25519 AAAA..." trusted on first use, to record


class Client(asyncssh.SSHClient):
    """Checks keys that known_hosts does not list, and reports a lost connection."""

    def __init__(self, on_lost: LostCallback, known: asyncssh.SSHKnownHosts,
                 accept_new: bool, silence: float) -> None:
        self._on_lost = on_lost
        self._silence = silence
        self._known = known
        self._accept_new = accept_new
        self.verdict = KeyVerdict()

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
        # asyncssh drops a connection whose keepalives go unanswered after
        # keepalive_interval * (keepalive_count_max + 1) s without a byte from the host
        silent = isinstance(exc, asyncssh.ConnectionLost) and "keepalive" in str(exc)
        self._on_lost(self, self._silence if silent else 0.0)


class SshLink:
    """The connection to host ``name`` (``target``), kept up within ``window`` seconds of a
    loss; ``on_state`` hears every change of its ``LinkState``."""

    def __init__(self, name: str, target: SshTarget, *, window: float = DEFAULT_WINDOW,
                 on_state: Callable[[LinkState], None] | None = None) -> None:
        self.name = name
        self.target = target
        self.window = window
        self._on_state = on_state
        self.state = LinkState.DOWN
        self.conn: Connection | None = None
        self._jump: Connection | None = None
        self._client: Client | None = None
        #: Bumped at every new connection: a user whose connection failed relinks only
        #: when nobody replaced it meanwhile.
        self.generation = 0
        self._lock = asyncio.Lock()
        self.wanted = False  # connect() was called and close() was not
        #: Since when (``time.monotonic``) the host has been unreachable; None while up.
        self._lost_at: float | None = None
        #: Why the link was given up (None while it is not).
        self.given_up: HostError | None = None
        self._relinking: asyncio.Task[None] | None = None
        #: How many times the link was re-established after a loss (for tests and the UI).
        self.reconnects = 0

    def _set_state(self, state: LinkState) -> None:
        if state is not self.state:
            self.state = state
            if self._on_state is not None:
                self._on_state(state)

    async def connect(self) -> None:
        """One attempt: ``HostError`` at once when the host cannot be reached."""
        self.wanted = True
        async with self._lock:
            if self.conn is not None:
                return
            self._set_state(LinkState.CONNECTING)
            try:
                self._install(*await self._open(None))
            except HostError:
                self._set_state(LinkState.DOWN)
                raise

    async def close(self) -> None:
        """Close the connection at once; a reconnect in progress gives up."""
        self.wanted = False
        relinking, self._relinking = self._relinking, None
        if relinking is not None:
            relinking.cancel()
            with contextlib.suppress(asyncio.CancelledError, HostError):
                await relinking
        self._drop()
        self._set_state(LinkState.DOWN)

    async def reconnect(self) -> None:
        """Replace the connection, with a fresh window (even after a give-up)."""
        self.wanted = True
        self.given_up = None
        self._lost_at = None
        await self.relink(None)

    async def get(self) -> tuple[Connection, int]:
        """The live connection and its generation, reconnecting if it was lost."""
        if self.conn is None:
            await self.relink(self.generation)
        assert self.conn is not None
        return self.conn, self.generation

    async def relink(self, failed_generation: int | None) -> None:
        """Reconnect, unless the connection was replaced since ``failed_generation``
        failed: retrying with backoff (0.5 s doubling to 8 s) while the errors are
        transient, the last at the window's end; then the link is given up
        (``HostGivenUpError``)."""
        async with self._lock:
            if not self.wanted:
                raise HostCommandError(self.name, "not connected (the transport is closed)")
            if (failed_generation is not None and failed_generation != self.generation
                    and self.conn is not None):
                return
            if self.given_up is not None:
                raise self.given_up.with_traceback(None)
            if self._lost_at is None:
                self._lost_at = time.monotonic()
            self._drop()
            self._set_state(LinkState.RECONNECTING)
            give_up = self._lost_at + self.window
            delay = BACKOFF_FIRST
            while True:
                left = give_up - time.monotonic()
                try:
                    opened = await self._open(min(self.target.connect_timeout + 2.0,
                                                  max(left, LAST_ATTEMPT)))
                    break
                except HostError as exc:
                    left = give_up - time.monotonic()
                    if not is_transient(exc) or left <= 0:
                        raise self._give_up(exc) from None
                await asyncio.sleep(min(delay, left))  # the last attempt: at the window's end
                delay = min(delay * 2, BACKOFF_MAX)
                if not self._still_wanted():
                    raise HostCommandError(self.name, "closed while reconnecting")
            if not self._still_wanted():
                for each in opened[:2]:
                    if each is not None:
                        each.abort()
                raise HostCommandError(self.name, "closed while reconnecting")
            self._install(*opened)
            self.reconnects += 1

    def _still_wanted(self) -> bool:
        """Whether the link should be up (``close`` may change it during any await)."""
        return self.wanted

    def _give_up(self, last: HostError) -> HostError:
        """The link is given up after ``last``: said once, kept for every later use."""
        if is_transient(last):
            unreachable = time.monotonic() - (self._lost_at or time.monotonic())
            last = HostGivenUpError(
                self.name, f"given up after {unreachable:.0f} s unreachable, the "
                f"reconnect_window; the last attempt: {last.reason}",
                last.hint or "is the host up?")
        self.given_up = last
        self._set_state(LinkState.DOWN)
        return last

    async def _open(self, timeout: float | None
                    ) -> tuple[Connection, Connection | None, Client]:
        """One connection attempt (through the jump host if there is one)."""
        jump = None
        if self.target.jump:
            try:
                jump_target = self.target.jump_target()
            except ValueError as exc:  # (the plan loader refuses these; a config may not)
                raise HostConfigError(self.name, str(exc)) from None
            jump, _ = await connect(self.name, jump_target, self._lost, timeout=timeout)
        try:
            conn, client = await connect(self.name, self.target, self._lost, tunnel=jump,
                                         timeout=timeout)
        except BaseException:
            if jump is not None:
                jump.abort()
            raise
        return conn, jump, client

    def _install(self, conn: Connection, jump: Connection | None, client: Client) -> None:
        self.conn, self._jump, self._client = conn, jump, client
        self.generation += 1
        self._lost_at = None
        self.given_up = None
        self._set_state(LinkState.UP)

    def _drop(self) -> None:
        """Forget the current connection, closing it without waiting."""
        conn, jump = self.conn, self._jump
        self.conn = self._jump = self._client = None
        for each in (conn, jump):
            if each is not None:
                each.abort()

    def _lost(self, client: Client, silent_for: float) -> None:
        """The live connection died (not one closed on purpose): the host was last heard
        ``silent_for`` seconds ago. Reconnecting starts at once, in the background."""
        if client is not self._client:
            return
        self._lost_at = time.monotonic() - silent_for
        self.conn = None
        if self._jump is not None:
            self._jump.abort()
            self._jump = None
        self._client = None
        self._set_state(LinkState.DOWN)
        if self.wanted and (self._relinking is None or self._relinking.done()):
            with contextlib.suppress(RuntimeError):  # (no running loop: nothing to do)
                self._relinking = asyncio.get_running_loop().create_task(
                    self._relink_quietly(self.generation), name=f"benchtui-relink-{self.name}")

    async def _relink_quietly(self, generation: int) -> None:
        with contextlib.suppress(HostError):  # (kept in given_up; its users raise it)
            await self.relink(generation)


async def connect(name: str, target: SshTarget, on_lost: LostCallback, *,
                  tunnel: asyncssh.SSHClientConnection | None = None,
                  timeout: float | None = None) -> tuple[asyncssh.SSHClientConnection, Client]:
    """Open one verified connection to ``target`` (host ``name`` of the plan) within
    ``timeout`` seconds (default: the target's connect_timeout); ``HostError`` when that
    fails. ``on_lost`` hears when the connection, once up, is lost."""
    _check_identity(name, target)
    path = target.known_hosts_path()
    known = asyncssh.import_known_hosts(target.known_hosts_text())
    silence = target.keepalive_interval * (target.keepalive_count_max + 1)
    client = Client(on_lost, known, target.accept_new_host_keys, silence)
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
    limit = target.connect_timeout + 2.0 if timeout is None else timeout
    attempt = asyncio.ensure_future(
        asyncssh.connect(target.host, client_factory=lambda: client, **options))
    attempt.add_done_callback(_unwanted)
    try:
        conn = await asyncio.wait_for(attempt, limit)
    except (*LINK_ERRORS, ValueError) as exc:
        raise map_error(name, target, exc, client.verdict, limit) from exc
    if client.verdict.accepted:
        append_known_host(path, host_pattern(client.verdict.host, client.verdict.port),
                          client.verdict.accepted)
    return conn, client


def _unwanted(attempt: asyncio.Future[Connection]) -> None:
    """An attempt whose waiter gave up (timed out, cancelled as the session ended) may still
    fail after: its error is taken here, never logged as one nobody retrieved."""
    if not attempt.cancelled():
        attempt.exception()


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
              verdict: KeyVerdict | None, waited: float | None = None) -> HostError:
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
        waited = target.connect_timeout if waited is None else min(
            waited, target.connect_timeout)
        return HostUnreachableError(name, f"connection to {where} timed out after "
                                    f"{round(waited, 1):g} s",
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
