"""What a transport is: the protocol every host connection implements, and its value types.

A transport reaches one host. Short commands (facts, versions) go through ``run``. Workloads
and monitors are started *detached* with ``start``: the host runs them in their own session,
bounded by ``timeout``, with stdout and stderr going to a file in a per-session directory::

    ~/.cache/benchtui/runs/SESSION/RUNID/out    what the command printed (stdout + stderr)
    ~/.cache/benchtui/runs/SESSION/RUNID/pid    "WRAPPER_PID PGID" once started
    ~/.cache/benchtui/runs/SESSION/RUNID/rc     the exit status, written when it ended

``follow`` reads that file from a byte offset, so a reader that lost its connection resumes
exactly where it was; ``stop`` ends the run's whole process group (and every process that
carries the run's tag in its environment) on the host. A watchdog beside each run stops it
by itself once its controller has been gone for the transport's ``controller_grace``
(``watchdog``). See docs/transport.md.
"""

from __future__ import annotations

import enum
import re
import secrets
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from benchtui.errors import HostError

#: Seconds the host waits after the deadline's SIGTERM before it sends SIGKILL.
KILL_AFTER = 5.0

#: What ``exit_status`` returns when the run's wrapper is gone but left no exit status
#: (it was killed with SIGKILL, or the host rebooted).
EXIT_UNKNOWN = -1

#: Name of the environment variable that tags every process of a run on its host.
RUN_TAG_VARIABLE = "BENCHTUI_RUN"

#: Seconds a host's watchdog lets a run go on once its controller is gone (a plan's
#: ``[session] controller_grace`` default); ``math.inf``: no watchdog. See ``watchdog``.
DEFAULT_CONTROLLER_GRACE = 60.0

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_id(kind: str, value: str) -> str:
    """``value`` if it is safe as one path component (letters, digits, ``._-``); else
    ``ValueError``. Session and run ids become directory names on the host."""
    if not _ID.fullmatch(value) or value in (".", ".."):
        raise ValueError(f"{kind} {value!r} must be 1-100 letters, digits, '.', '_' or '-'")
    return value


def new_session_id() -> str:
    """A fresh session id: the local time and 6 random hex digits, e.g. 20250101-120000-a1b2c3."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


class LinkState(enum.Enum):
    """The state of a transport's link to its host, for the UI's host status."""

    CONNECTING = "connecting"
    UP = "up"
    RECONNECTING = "reconnecting"
    DOWN = "down"


#: Called with the transport's name and its new state whenever the state changes.
StateCallback = Callable[[str, LinkState], None]


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a short command left: its exit status and its decoded output."""

    exit_status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


@dataclass(frozen=True, slots=True)
class RemoteRun:
    """A command to start detached on a host.

    ``command`` is an argv (every element is passed as one argument, quoted: a value like
    ``x; rm -rf /`` stays data) or a shell command line (a ``str``, run by ``sh -c`` as is:
    the caller quotes what it interpolates). ``deadline`` bounds the run on the host in
    seconds (``timeout --kill-after=5 DEADLINE``), so it ends even if the controller died.
    """

    run_id: str
    command: Sequence[str] | str
    deadline: float
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_id("run id", self.run_id)
        if not isinstance(self.command, str) and not self.command:
            raise ValueError("an argv needs at least one element")
        if not self.deadline > 0:
            raise ValueError(f"deadline must be positive seconds, not {self.deadline!r}")
        for name in self.env:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"environment variable name {name!r} is not valid")


@dataclass(frozen=True, slots=True)
class RunHandle:
    """A started run: where its files are on the host and which processes are its own.

    ``directory`` is absolute on the host. ``wrapper_pid`` is the shell that waits for the
    command and writes ``rc``; ``pgid`` is the process group of ``timeout`` and the command.
    A handle is plain data: a new transport to the same host can follow or stop it.
    """

    host: str
    run_id: str
    directory: str
    wrapper_pid: int
    pgid: int
    tag: str

    @property
    def out_path(self) -> str:
        return f"{self.directory}/out"

    @property
    def rc_path(self) -> str:
        return f"{self.directory}/rc"


@dataclass(frozen=True, slots=True)
class WatchdogStop:
    """The host's watchdog stopped a run: its controller had been gone ``gone_for`` seconds,
    at least the ``grace`` it was given."""

    gone_for: float
    grace: float


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run stands: its exit status (``None`` while it runs, ``EXIT_UNKNOWN`` when it
    vanished) and, if the host's watchdog stopped it, when and why."""

    status: int | None
    watchdog: WatchdogStop | None = None


@dataclass(frozen=True, slots=True)
class Leftover:
    """A run of another session that still runs on the host (its controller died, or is
    another benchtui): what a later session's preflight reports and ``--stop-leftovers`` ends.

    ``plan`` is the name of the plan that started it ("" if unknown). ``processes`` are the
    run's tagged processes, (PID, command name). ``grace`` is what its watchdog was given
    (``math.inf``: nothing watches it); ``gone_for`` how long its controller has been gone,
    ``None`` while the controller is there (or cannot be told, when nothing watches it).
    """

    handle: RunHandle
    session_id: str
    plan: str
    processes: tuple[tuple[int, str], ...]
    grace: float
    gone_for: float | None

    @property
    def pids(self) -> tuple[int, ...]:
        return tuple(pid for pid, _ in self.processes)


@dataclass(frozen=True, slots=True)
class Chunk:
    """New output of a run: ``data`` ends at byte ``offset`` of the output file."""

    offset: int
    data: bytes


@runtime_checkable
class Transport(Protocol):
    """One host, reached locally or over SSH. Every method raises ``HostError`` (with the
    host's name and one sentence) for what goes wrong on the way to the host."""

    @property
    def name(self) -> str:
        """The host's name in the plan; errors and handles carry it."""
        ...

    @property
    def is_local(self) -> bool:
        """True when commands run on this machine without SSH."""
        ...

    @property
    def state(self) -> LinkState:
        """The link's current state."""
        ...

    @property
    def given_up(self) -> HostError | None:
        """Why the host was given up (unreachable for the whole reconnect window): every
        later use fails at once with this error. None while it is not (always, locally)."""
        ...

    async def connect(self) -> None:
        """Open the link (one attempt; ``HostError`` when the host cannot be reached)."""
        ...

    async def close(self) -> None:
        """Close the link. Detached runs go on; ``stop`` them first to end them."""
        ...

    async def run(self, command: Sequence[str] | str, timeout: float = 30.0
                  ) -> CommandResult:
        """Run a short command and wait for it; ``HostError`` after ``timeout`` seconds."""
        ...

    async def start(self, run: RemoteRun) -> RunHandle:
        """Start ``run`` detached on the host and return once its PID is known."""
        ...

    def follow(self, handle: RunHandle, offset: int = 0) -> AsyncGenerator[Chunk, None]:
        """New output from byte ``offset`` on, as it is appended; ends when the run has
        exited and its output is drained."""
        ...

    async def stop(self, handle: RunHandle, grace: float = 2.0) -> None:
        """End every process of the run: SIGTERM to its group and tagged processes, SIGKILL
        to what is left after ``grace`` seconds. Returns when none is left."""
        ...

    async def exit_status(self, handle: RunHandle) -> int | None:
        """The run's exit status; ``None`` while it runs; ``EXIT_UNKNOWN`` when it vanished."""
        ...

    async def outcome(self, handle: RunHandle) -> RunOutcome:
        """The run's exit status, and whether the host's watchdog stopped it."""
        ...

    async def leftovers(self) -> list[Leftover]:
        """Runs of other sessions (same user on the host) that are still running."""
        ...

    async def put_file(self, local_path: str, remote_path: str) -> None:
        """Copy a local file to the host (parents created; replaced atomically)."""
        ...
