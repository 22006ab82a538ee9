"""How long a session has left, and what a step past its planned length is waiting for.

A step's planned length (fio's ``runtime``, iperf's ``-t``, ``duration``) is not what it
takes: starting the tools on every host (and fio laying out its file), their last reads
and stopping them add a few seconds to every run (8 runs of 15 s over SSH took 18-20 s
each). The estimate counts that cost (``overhead``): the mean of each run's real wall time
minus its planned length, measured as the session goes (the runs that completed and had a
planned length), and ``DEFAULT_OVERHEAD`` before the first has ended (``benchtui check``
counts the default too).

``planned_runs(plan)`` lists a plan's runs as the engine runs them (``name`` or ``name#2``),
``runs_from_events`` a recording's (its step-start events); ``estimate`` gives the running
step's time left and the session's; ``waiting_for`` says, for a step past its planned
length, what it is waiting for: the hosts whose tool has not ended yet (its run-start and
run-end events), or that it is stopping once they all have.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.plan.commands import SERVER, expected_step_seconds
from benchtui.plan.model import Plan
from benchtui.store.fleet import FleetState, StepView

#: Seconds a run of a step takes beyond its planned length before one has been measured:
#: starting the tools (over SSH, on every host), their last reads, stopping them.
DEFAULT_OVERHEAD = 3.0
#: The runs the measured overhead is the mean of (the newest): it follows a change of hosts.
MEASURED_RUNS = 10
#: Named hosts in ``waiting_for`` before it counts them instead.
NAMED_HOSTS = 3


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One run of a step: its label and planned length (None when not known)."""

    label: str
    seconds: float | None


def planned_runs(plan: Plan) -> list[PlannedRun]:
    """The plan's runs in the order the engine runs them, labelled as it labels them."""
    runs: list[PlannedRun] = []
    for step in plan.steps:
        seconds = expected_step_seconds(step)
        for repeat in range(step.repeat):
            label = step.name if step.repeat == 1 else f"{step.name}#{repeat + 1}"
            runs.append(PlannedRun(label, seconds))
    return runs


def runs_from_events(events: Iterable[Event]) -> list[PlannedRun]:
    """The runs a recording started, from its step-start events."""
    runs: list[PlannedRun] = []
    for event in events:
        if event.kind == ev.STEP_START:
            seconds = event.data.get("expected_seconds")
            runs.append(PlannedRun(event.step or "?", float(seconds) if isinstance(
                seconds, int | float) and seconds > 0 else None))
    return runs


def measured_overhead(steps: Sequence[StepView]) -> float | None:
    """The mean of (wall time - planned length) over the newest completed runs that had a
    planned length (never below 0); None before one has ended."""
    found = [max(s.ended - s.started - s.expected_seconds, 0.0) for s in steps
             if s.ended is not None and s.expected_seconds and s.outcome == ev.COMPLETED]
    found = found[-MEASURED_RUNS:]
    return sum(found) / len(found) if found else None


def overhead(steps: Sequence[StepView]) -> float:
    """The seconds a run takes beyond its planned length: measured, else the default."""
    measured = measured_overhead(steps)
    return DEFAULT_OVERHEAD if measured is None else measured


@dataclass(frozen=True, slots=True)
class Estimate:
    """The running step's seconds left (its start and stop included), the session's (this
    run and those after it), and how many runs after it have no planned length (not
    counted). None where not known."""

    step_left: float | None
    session_left: float | None
    unknown: int = 0


def estimate(state: FleetState, runs: Sequence[PlannedRun], now: float) -> Estimate:
    """What ``state``'s session has left at ``now``, with ``runs`` its planned runs (those
    past the runs started so far are still to come; none given: the session's is not
    known)."""
    if state.ended is not None:
        return Estimate(0.0, 0.0)
    cost = overhead(state.steps)
    step = state.current_step
    step_left: float | None = 0.0  # between steps, or before the first
    if step is not None:
        step_left = (max(step.started + step.expected_seconds + cost - now, 0.0)
                     if step.expected_seconds else None)
    later = runs[len(state.steps):]
    known = [r.seconds + cost for r in later if r.seconds is not None]
    unknown = len(later) - len(known)
    if step_left is None or not runs:
        return Estimate(step_left, None, unknown)
    return Estimate(step_left, step_left + sum(known), unknown)


def waiting_for(state: FleetState, now: float) -> str | None:
    """For a running step past its planned length, what it waits for: "waiting for fio on
    db3" ("… on 5 hosts"), or "stopping" once every tool has ended; None for a step within
    its length (or of unknown length)."""
    step = state.current_step
    if step is None or not step.expected_seconds or now < step.started + step.expected_seconds:
        return None
    # (host, tool) -> its runs started and not ended; an iperf server is not waited for (it
    # is stopped once its clients end). Older recordings' events name no tool or role.
    running: dict[tuple[str, str], int] = {}
    for event in _since_start(state, step):
        if event.host is None or event.step != step.name or event.data.get("role") == SERVER:
            continue
        key = (event.host, str(event.data.get("tool") or step.tool or "its tools"))
        if event.kind == ev.RUN_START:
            running[key] = running.get(key, 0) + 1
        elif event.kind == ev.RUN_END:
            running[key] = running.get(key, 0) - 1
    waited = [key for key, count in running.items() if count > 0]
    hosts = list(dict.fromkeys(host for host, _ in waited))
    if not hosts:
        return "stopping"
    tool = " and ".join(dict.fromkeys(tool for _, tool in waited))
    if len(hosts) <= NAMED_HOSTS:
        return f"waiting for {tool} on {', '.join(hosts)}"
    return f"waiting for {tool} on {len(hosts)} hosts"


def _since_start(state: FleetState, step: StepView) -> list[Event]:
    """The state's events from ``step``'s start on (the newest last)."""
    found: list[Event] = []
    for event in reversed(state.events):
        if event.t < step.started:
            break
        found.append(event)
    found.reverse()
    return found
