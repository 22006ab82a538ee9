"""Processes an earlier session left running on a host, found before anything starts.

A controller that died (killed, out of memory, its laptop closed) leaves its runs going until
the host's watchdog stops them, ``controller_grace`` later; a session started again on the
same plan meanwhile would measure both at once. Preflight asks every host for the runs of
other sessions that still run (``Transport.leftovers``): those of the same plan are errors
that name the host, the session, the PIDs and the way out (``--stop-leftovers``, or wait);
those of other plans are warnings (they weigh on the numbers, but are someone else's).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping

from benchtui.errors import HostError
from benchtui.model import events as ev
from benchtui.plan.grace import grace_text
from benchtui.plan.preflight import ERROR, WARNING, Finding
from benchtui.session.runs import STOP_GRACE
from benchtui.transport import Leftover, Transport

#: The option that stops the leftovers of the same plan before the session starts.
STOP_OPTION = "--stop-leftovers"


async def check_leftovers(plan: str, transports: Mapping[str, Transport], hosts: list[str],
                          *, stop: bool, emit: Callable[..., None]) -> list[Finding]:
    """What earlier sessions left running on ``hosts``: findings, or (for the same
    ``plan``, with ``stop``: ``--stop-leftovers``) stopped here, with an event saying so."""
    found, findings = await find_leftovers(transports, hosts)
    if stop:
        for host, each in list(found.items()):
            ours = same_plan(each, plan)
            if not ours:
                continue
            problems = await stop_leftovers(transports[host], ours, STOP_GRACE)
            findings += [Finding(host, None, ERROR, problem) for problem in problems]
            if not problems:
                emit(ev.PREFLIGHT, f"{host}: {stopped_message(ours)}", host=host)
            found[host] = [one for one in each if one not in ours]
    return findings + leftover_findings(found, plan)


async def find_leftovers(transports: Mapping[str, Transport], hosts: Iterable[str]
                         ) -> tuple[dict[str, list[Leftover]], list[Finding]]:
    """Every host's leftovers, and a warning for each host that could not be asked."""
    names = list(hosts)
    results = await asyncio.gather(*(transports[h].leftovers() for h in names),
                                    return_exceptions=True)
    found: dict[str, list[Leftover]] = {}
    problems: list[Finding] = []
    for host, result in zip(names, results, strict=True):
        if isinstance(result, HostError):
            problems.append(Finding(host, None, WARNING, "cannot look for processes left by "
                                    f"earlier sessions: {result}"))
        elif isinstance(result, BaseException):
            raise result
        elif result:
            found[host] = result
    return found, problems


def same_plan(leftovers: Iterable[Leftover], plan: str) -> list[Leftover]:
    return [each for each in leftovers if each.plan == plan]


def leftover_findings(found: Mapping[str, list[Leftover]], plan: str) -> list[Finding]:
    """One finding per host and earlier session: an error for the same plan, else a
    warning."""
    findings: list[Finding] = []
    for host, leftovers in found.items():
        for session, runs in _by_session(leftovers).items():
            if runs[0].plan == plan:
                findings.append(_same_plan_finding(host, session, runs))
            else:
                whose = f'plan "{runs[0].plan}"' if runs[0].plan else "another plan"
                findings.append(Finding(
                    host, None, WARNING,
                    f"{_processes(runs)} of a session of {whose} are running on this host too "
                    f"({_which(session, runs)}); they will weigh on this session's numbers"))
    return findings


def _same_plan_finding(host: str, session: str, runs: list[Leftover]) -> Finding:
    first = runs[0]
    what = (f"{_processes(runs)} of an earlier run of plan \"{first.plan}\" are still "
            f"running ({_which(session, runs)})")
    if math.isinf(first.grace):
        return Finding(host, None, ERROR, f"{what}; that run has controller_grace \"off\", so "
                       "nothing stops them before their deadline",
                       f"run with {STOP_OPTION} to stop them, or wait for them to end")
    gone = [r.gone_for for r in runs if r.gone_for is not None]
    if not gone:
        return Finding(host, None, ERROR, f"{what}; their controller is still connected: "
                       "another benchtui is running this plan",
                       f"stop that benchtui first, or run with {STOP_OPTION} to stop these "
                       "processes")
    left = max(0.0, first.grace - max(gone))
    return Finding(host, None, ERROR, f"{what}; their controller is gone and the host's "
                   f"watchdog stops them in {math.ceil(left) + 1} s "
                   f"(controller_grace {grace_text(first.grace)})",
                   f"run with {STOP_OPTION} to stop them now, or wait")


async def stop_leftovers(transport: Transport, leftovers: list[Leftover],
                         grace: float) -> list[str]:
    """Stop every run in ``leftovers`` as benchtui's own stop does; the problems met."""
    results = await asyncio.gather(*(transport.stop(each.handle, grace=grace)
                                     for each in leftovers), return_exceptions=True)
    problems = []
    for result in results:
        if isinstance(result, HostError):
            problems.append(str(result).removeprefix(f"{result.host}: "))
        elif isinstance(result, BaseException):
            raise result
    return problems


def stopped_message(leftovers: list[Leftover]) -> str:
    """What ``--stop-leftovers`` did on one host, in one sentence."""
    sessions = _by_session(leftovers)
    return (f"stopped {_processes(leftovers)} left running by "
            + ", ".join(_which(s, runs) for s, runs in sessions.items()))


def _by_session(leftovers: Iterable[Leftover]) -> dict[str, list[Leftover]]:
    grouped: dict[str, list[Leftover]] = {}
    for each in leftovers:
        grouped.setdefault(each.session_id, []).append(each)
    return grouped


def _processes(runs: list[Leftover]) -> str:
    count = sum(max(1, len(r.processes)) for r in runs)
    return f"{count} process{'' if count == 1 else 'es'}"


def _which(session: str, runs: list[Leftover]) -> str:
    pids = ", ".join(f"{pid} {name}" for r in runs for pid, name in r.processes)
    if not pids:
        pids = ", ".join(f"{r.handle.wrapper_pid} sh" for r in runs)
    return f"session {session}: PIDs {pids}"
