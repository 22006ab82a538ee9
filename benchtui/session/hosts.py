"""From a plan's hosts to connected transports: one per host, all connected at once."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass

from benchtui.errors import HostError
from benchtui.plan.model import HostSpec
from benchtui.transport import LocalTransport, StateCallback, Transport
from benchtui.transport.heartbeats import Heartbeats
from benchtui.transport.sshtarget import SshTarget


@dataclass(frozen=True)
class SshOptions:
    """SSH settings given on the command line rather than in the plan."""

    accept_new_host_keys: bool = False
    known_hosts: str | None = None
    config: str | None = None
    connect_timeout: float = 10.0


#: The default reconnect window: seconds a host may stay unreachable (its link lost and not
#: made again) before the session gives it up; longer when the hosts let the runs go on
#: longer (``controller_grace``), so that a link back within the grace is resumed.
RECONNECT_TIMEOUT = 120.0
#: How much longer than the grace the default window is (seconds).
RECONNECT_MARGIN = 30.0


def reconnect_window(given: float | None, controller_grace: float) -> float:
    """The reconnect window in seconds: as ``given`` (``--reconnect-window``, the plan's
    ``reconnect_window``), else ``RECONNECT_TIMEOUT`` or the grace + ``RECONNECT_MARGIN``,
    whichever is longer."""
    if given is not None:
        return given
    if math.isfinite(controller_grace):
        return max(RECONNECT_TIMEOUT, controller_grace + RECONNECT_MARGIN)
    return RECONNECT_TIMEOUT


def make_transport(spec: HostSpec, session_id: str, options: SshOptions,
                   on_state: StateCallback | None = None, *, controller_grace: float,
                   reconnect_window: float = RECONNECT_TIMEOUT, label: str,
                   heartbeats: Heartbeats | None = None) -> Transport:
    """The transport for one host of the plan: its runs are watched on the host with
    ``controller_grace`` (seconds, ``math.inf``: off), its link given up once the host has
    been unreachable for ``reconnect_window`` seconds; ``label`` is the plan's name;
    ``heartbeats`` (the controller's heartbeat process) feeds an SSH host's keeper."""
    if spec.local:
        return LocalTransport(spec.name, session_id=session_id, on_state=on_state,
                              controller_grace=controller_grace, label=label)
    # Imported here: asyncssh takes ~0.5 s to import, which a local-only plan (benchtui demo)
    # should not pay before its first numbers.
    from benchtui.transport.ssh import SshTransport

    target = SshTarget(
        host=spec.address or spec.ssh_alias or spec.name, port=spec.port, user=spec.user,
        identity=str(spec.identity) if spec.identity else None, jump=spec.jump,
        known_hosts=options.known_hosts, accept_new_host_keys=options.accept_new_host_keys,
        config=options.config, connect_timeout=options.connect_timeout)
    return SshTransport(spec.name, target, session_id=session_id, on_state=on_state,
                        reconnect_timeout=reconnect_window, controller_grace=controller_grace,
                        label=label, heartbeats=heartbeats)


async def connect_all(transports: Mapping[str, Transport]) -> dict[str, HostError]:
    """Connect every transport concurrently; a slow or dead host never holds up the others.
    Returns the hosts that could not be reached, with why."""
    names = list(transports)
    results = await asyncio.gather(*(transports[n].connect() for n in names),
                                   return_exceptions=True)
    failed: dict[str, HostError] = {}
    for name, result in zip(names, results, strict=True):
        if isinstance(result, HostError):
            failed[name] = result
        elif isinstance(result, BaseException):
            if isinstance(result, asyncio.CancelledError | KeyboardInterrupt):
                raise result
            failed[name] = HostError(name, f"cannot connect ({type(result).__name__}: {result})")
    return failed


async def close_all(transports: Mapping[str, Transport]) -> None:
    await asyncio.gather(*(t.close() for t in transports.values()), return_exceptions=True)
