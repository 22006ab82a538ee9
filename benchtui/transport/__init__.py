"""Reaching hosts: the ``Transport`` protocol, the local transport, and (in ``ssh``, the only
module that imports asyncssh) the SSH transport. See docs/transport.md."""

from benchtui.transport.base import (
    EXIT_UNKNOWN,
    Chunk,
    CommandResult,
    LinkState,
    RemoteRun,
    RunHandle,
    StateCallback,
    Transport,
    new_session_id,
)
from benchtui.transport.errors import (
    HostAuthError,
    HostCommandError,
    HostKeyError,
    HostLookupError,
    HostUnreachableError,
    is_transient,
)
from benchtui.transport.lines import LineSplitter
from benchtui.transport.local import LocalTransport

__all__ = [
    "EXIT_UNKNOWN",
    "Chunk",
    "CommandResult",
    "HostAuthError",
    "HostCommandError",
    "HostKeyError",
    "HostLookupError",
    "HostUnreachableError",
    "LineSplitter",
    "LinkState",
    "LocalTransport",
    "RemoteRun",
    "RunHandle",
    "StateCallback",
    "Transport",
    "is_transient",
    "new_session_id",
]
