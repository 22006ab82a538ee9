"""Each host's state in a session, its failure, and giving a lost host up.

A host is ``connecting``, ``up``, ``running`` (a step's process runs there), ``reconnecting``
(its link was lost and is being made again), ``done`` (its part of a step ended) or
``failed`` (it cannot be used any more: unreachable at the start, refused by preflight, a
process that could not start or was lost, or its link given up). Every change is a
``host_state`` event; a failed host stays failed and is left out of the steps that follow.

A link that stays lost for the whole reconnect window is given up by its transport
(``Transport.given_up``, docs/transport.md): the host fails at that moment, with why, even
between steps, and nothing waits on it any more. Whatever the session's end still asks of a
host (stopping its processes, their final reads) goes through ``attempt``: once, within a
timeout, and not at all on a host given up; what was skipped is said in one sentence, which
``left_to_watchdog`` completes.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TypeVar

from benchtui.errors import HostError
from benchtui.model import events as ev
from benchtui.plan.grace import grace_text
from benchtui.transport import LinkState, Transport

T = TypeVar("T")

#: Called with an event's kind, message and fields (``Session.emit``).
Emit = Callable[..., None]

CONNECTING, UP, RUNNING, RECONNECTING, DONE, FAILED = (
    "connecting", "up", "running", "reconnecting", "done", "failed")


def without_host(error: HostError) -> str:
    """The error's sentence without its leading host name (the caller names the host)."""
    return str(error).removeprefix(f"{error.host}: ")


class HostStates:
    """The hosts of a session (``transports``), their states and failures; ``emit`` says
    every change. ``step`` tells which step runs now (None between steps)."""

    def __init__(self, transports: Mapping[str, Transport], emit: Emit,
                 step: Callable[[], str | None]) -> None:
        self.transports = transports
        self._emit = emit
        self._step = step
        self.state: dict[str, str] = dict.fromkeys(transports, CONNECTING)
        #: The session's failures, one sentence each, in order: a host's ("HOST: why", once
        #: per host, here) and its steps' (added by the engine as they end).
        self.failures: list[str] = []

    def set(self, host: str, state: str, reason: str = "") -> None:
        if self.state.get(host) == state:
            return
        self.state[host] = state
        level = ev.ERROR if state == FAILED else ev.WARNING if state == RECONNECTING \
            else ev.INFO
        self._emit(ev.HOST_STATE, f"{host}: {state}" + (f" ({reason})" if reason else ""),
                   level=level, host=host, state=state)

    def fail(self, host: str, reason: str) -> None:
        """``host`` cannot be used any more, because of ``reason``: said once (later
        reasons of a failed host are its runs', said with them)."""
        if self.state.get(host) == FAILED:
            return
        self.failures.append(f"{host}: {reason}")
        self.set(host, FAILED, reason)

    def usable(self, host: str) -> bool:
        return host in self.transports and self.state.get(host) != FAILED

    def set_all(self, hosts: Iterable[str], state: str, *, only: str | None = None) -> None:
        """Set each usable host of ``hosts`` to ``state`` (only those now ``only``)."""
        for host in set(hosts):
            if self.usable(host) and (only is None or self.state.get(host) == only):
                self.set(host, state)

    def audible(self, host: str) -> bool:
        """Output from ``host`` can arrive now (its link is not being made again)."""
        return self.state.get(host) not in (RECONNECTING, FAILED)

    def lost(self, host: str) -> HostError | None:
        """Why ``host``'s link was given up; None while it was not."""
        transport = self.transports.get(host)
        return None if transport is None else transport.given_up

    def on_link(self, host: str, state: LinkState) -> None:
        """A transport's link changed: ``reconnecting`` while it is made again, back to what
        the host was doing once it is; failed when the transport gave the host up."""
        if state is LinkState.DOWN:
            lost = self.lost(host)
            if lost is not None:
                self.fail(host, without_host(lost))
            return
        if self.state.get(host) in (FAILED, DONE):
            return
        if state is LinkState.RECONNECTING:
            self.set(host, RECONNECTING)
        elif state is LinkState.UP and self.state.get(host) == RECONNECTING:
            self.set(host, RUNNING if self._step() else UP)

    async def attempt(self, host: str, action: Callable[[], Awaitable[T]], timeout: float
                      ) -> tuple[T | None, str]:
        """Do ``action`` on ``host`` once, within ``timeout`` seconds: (its result, "") or
        (None, why it was not done, in words). A host given up is not tried at all."""
        if self.lost(host) is not None:
            return None, "the host was given up"
        if timeout <= 0:
            return None, "no time was left"
        try:
            return await asyncio.wait_for(action(), timeout), ""
        except TimeoutError:
            if self.state.get(host) == RECONNECTING:
                return None, f"its link was down (reconnecting) for the {timeout:.0f} s left"
            return None, f"the host did not answer within {timeout:.0f} s"
        except HostError as exc:
            return None, without_host(exc)


def left_to_watchdog(grace: float) -> str:
    """What becomes of processes that could not be stopped, for a message's end."""
    if math.isinf(grace):
        return "; they run to their deadline (controller_grace is off: no watchdog)"
    return ("; the host's watchdog stops them once this controller has been gone for "
            f"{grace_text(grace)} (controller_grace)")
