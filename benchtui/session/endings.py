"""How a process and a step end, in words: the ``outcome`` and ``reason`` of their end
events (``model/events.py``: completed, failed, interrupted, watchdog, deadline).

A process's outcome follows from how it stopped: the host's watchdog (its controller was
gone), benchtui at the end of its step (a success), an interrupt of the session, its exit
status, or the host's ``timeout`` at its deadline (``timeout`` exits 124, or 137 when it had
to KILL, once the deadline has passed). A step's is its processes' worst.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchtui.model import events as ev
from benchtui.plan.grace import grace_text
from benchtui.transport import WatchdogStop

#: Exit statuses of the host's ``timeout`` when it ended a command at its deadline.
DEADLINE_STATUSES = (124, 137)
#: A run that ends this close to its deadline (seconds) with one of those was ended by it.
_DEADLINE_SLACK = 1.0


@dataclass(frozen=True, slots=True)
class Ending:
    """How one process of a step ended: its host and tool, the outcome, the words for it
    (after the tool's name: "exited with status 1") and its exit status."""

    host: str
    tool: str
    outcome: str
    reason: str
    status: int | None = None


def process_ending(status: int, *, stopped: bool, watchdog: WatchdogStop | None,
                   interrupt: str | None, ran: float, deadline: float) -> tuple[str, str]:
    """(outcome, words) of a process that ended with ``status`` after ``ran`` seconds:
    ``stopped`` by benchtui at its step's end, stopped by the host's ``watchdog``, during an
    ``interrupt`` of the session (its reason), or with a ``deadline`` on its host."""
    if watchdog is not None:
        return ev.WATCHDOG, (f"was stopped by the host's watchdog: the host had not heard "
                             f"from this controller for {watchdog.gone_for:.0f} s "
                             f"(controller_grace {grace_text(watchdog.grace)})")
    if stopped:
        return ev.COMPLETED, "was stopped at the end of its step"
    if interrupt is not None and status != 0:
        return ev.INTERRUPTED, f"was stopped: {interrupt}"
    if status == 0:
        return ev.COMPLETED, "exited with status 0"
    if status in DEADLINE_STATUSES and ran >= deadline - _DEADLINE_SLACK:
        return ev.DEADLINE, (f"was ended by its deadline on the host after {ran:.0f} s "
                             f"(deadline {deadline:g} s: the step's timeout, or its expected "
                             f"time plus deadline_margin; exit status {status})")
    if status < 0:
        return ev.FAILED, "vanished: its exit status is unknown"
    return ev.FAILED, f"exited with status {status}"


def step_ending(ends: list[Ending], failures: list[str]) -> tuple[str, str, int | None]:
    """(outcome, reason, exit status) of a step whose processes (servers aside) ended as
    ``ends``, with ``failures`` said during it: the worst outcome, the reasons of the
    processes that ended so (two, and how many more), the first such non-zero exit status.
    A failure without a process's own outcome (a host that could not start it, or was
    lost) makes it failed; so does a step that no process ran."""
    outcome = ev.worst([e.outcome for e in ends])
    if not ends:
        return ev.FAILED, failures[0] if failures else "no host could run it", None
    if outcome == ev.COMPLETED:
        return (ev.FAILED, failures[0], None) if failures else (outcome, "", 0)
    worst = [e for e in ends if e.outcome == outcome]
    reasons = [f"{e.host}: {e.tool} {e.reason}" for e in worst]
    status = next((e.status for e in worst if e.status not in (None, 0)), None)
    more = f"; and {len(reasons) - 2} more" if len(reasons) > 2 else ""
    return outcome, "; ".join(reasons[:2]) + more, status
