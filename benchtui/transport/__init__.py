"""Reaching hosts: the ``Transport`` protocol, the local transport, and (in ``ssh``, the only
module that imports asyncssh) the SSH transport. See docs/transport.md."""

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
    Transport,
    WatchdogStop,
    new_session_id,
)
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
from benchtui.transport.lines import LineSplitter
from benchtui.transport.local import LocalTransport

__all__ = [
    "DEFAULT_CONTROLLER_GRACE",
    "EXIT_UNKNOWN",
    "Chunk",
    "CommandResult",
    "HostAuthError",
    "HostCommandError",
    "HostConfigError",
    "HostGivenUpError",
    "HostKeyError",
    "HostLookupError",
    "HostUnreachableError",
    "Leftover",
    "LineSplitter",
    "LinkState",
    "LocalTransport",
    "RemoteRun",
    "RunHandle",
    "RunOutcome",
    "StateCallback",
    "Transport",
    "WatchdogStop",
    "is_transient",
    "new_session_id",
]
