"""A plan's monitors and steps, run on its hosts: the session engine's work between its start
and its end.

``StepRunner`` starts the monitors, then runs each step (each on all its usable hosts at
once; iperf servers first, their clients once the servers listen or ``SERVER_READY_TIMEOUT``
is up; a step with a ``duration`` stopped then, as a success), says how each step ended
(``endings.step_ending``) and keeps the step running now, its runs and how every step ended.
It also tells the silence watch (``silence.watch``) which runs could be heard and warns of
those that fell silent. The processes themselves are started, followed and stopped by
``runs.Runner``; the hosts' states are ``host_states.HostStates``'.
"""

from __future__ import annotations

import asyncio
import time

from benchtui.model import events as ev
from benchtui.plan.commands import (
    MONITOR,
    SERVER,
    RemoteCommand,
    expected_step_seconds,
    monitor_commands,
    step_commands,
)
from benchtui.plan.model import Plan, StepSpec
from benchtui.plan.preflight import fallback_hosts
from benchtui.session.endings import Ending, step_ending
from benchtui.session.facts import HostFacts
from benchtui.session.host_states import DONE, RUNNING, Emit, HostStates
from benchtui.session.runs import Run, Runner
from benchtui.session.silence import Quiet

#: How long an iperf server gets to start listening before its clients start (seconds).
SERVER_READY_TIMEOUT = 5.0


class StepRunner:
    """Runs the monitors and the steps of ``plan`` on ``hosts`` through ``runner``; every
    step's start and end is an event through ``emit``."""

    def __init__(self, plan: Plan, hosts: HostStates, runner: Runner, emit: Emit,
                 facts: dict[str, HostFacts]) -> None:
        self.plan = plan
        self.hosts = hosts
        self.runner = runner
        self.emit = emit
        #: The hosts' facts (filled in as the session prepares: which monitor a host lacks).
        self.facts = facts
        #: The step running now (its label: ``name`` or ``name#2`` for a repeat), or None.
        self.current: str | None = None
        #: How each step ended, in order (the session's outcome is the worst).
        self.outcomes: list[str] = []
        #: The running step's start (``time.monotonic``) and processes.
        self._started = 0.0
        self._runs: list[Run] = []

    # --- monitors and steps -----------------------------------------------------------------

    async def start_monitors(self) -> list[Run]:
        runs: list[Run] = []
        for monitor in self.plan.monitors:
            fallback = fallback_hosts(self.plan, monitor, self.facts)
            for cmd in monitor_commands(self.plan, monitor, fallback_hosts=fallback):
                if self.hosts.usable(cmd.host):
                    if cmd.tool != monitor.tool:
                        self.emit(ev.RUN_START, f"{cmd.host}: {monitor.tool} is missing, "
                                  f"using {cmd.tool} instead", level=ev.WARNING, host=cmd.host)
                    runs.append(Run(cmd, monitor.name, quiet=Quiet(monitor.silence_limit)))
        await asyncio.gather(*(self.runner.start(r) for r in runs))
        return [r for r in runs if r.task is not None]

    async def run_step(self, step: StepSpec, repeat: int) -> None:
        label = step.name if step.repeat == 1 else f"{step.name}#{repeat + 1}"
        self.current = label
        hosts = [h for h in step.hosts if self.hosts.usable(h)]
        self.emit(ev.STEP_START, f"step {label} on {', '.join(hosts) or 'no host'}",
                  step=label, hosts=hosts, tool=step.tool,
                  expected_seconds=expected_step_seconds(step), index=step.index,
                  repeat=repeat + 1, repeats=step.repeat, select=step.select,
                  sweep=step.sweep, matrix=dict(step.matrix))
        started = self._started = time.monotonic()
        self._runs = []
        failures = self.hosts.failures
        failed_before = len(failures)
        try:
            commands = self._step_commands(step, repeat + 1)
        except ValueError as exc:
            failures.append(f"step {label}: {exc}")
            self.outcomes.append(ev.FAILED)
            self.emit(ev.STEP_END, f"step {label} failed: {exc}", level=ev.ERROR, step=label,
                      outcome=ev.FAILED, reason=str(exc))
            self.current = None
            return
        runs = [Run(c, label, quiet=Quiet(step.silence_limit)) for c in commands
                if self.hosts.usable(c.host)]
        self._runs = runs
        self.hosts.set_all((r.host for r in runs), RUNNING)
        servers = [r for r in runs if r.command.role == SERVER]
        others = [r for r in runs if r.command.role != SERVER]
        if servers:
            await asyncio.gather(*(self.runner.start(r) for r in servers))
            await self._wait_ready(servers)
        await asyncio.gather(*(self.runner.start(r) for r in others))
        tasks = [r.task for r in others if r.task is not None]
        if step.duration is not None and tasks:
            # A tool that runs until stopped (iostat as a step): stop it, as a success.
            await asyncio.wait(tasks, timeout=step.duration)
            await self.runner.stop([r for r in others if r.running], expected=True)
        await asyncio.gather(*tasks, return_exceptions=True)
        if servers:
            await self.runner.stop(servers)
        await self.runner.settle(runs)
        for r in runs:
            if r.outcome in (ev.FAILED, ev.DEADLINE) and r.command.role != SERVER:
                failures.append(f"{r.host}: step {label} {r.reason}")
        self.hosts.set_all((r.host for r in runs), DONE, only=RUNNING)
        self._step_ended(label, runs, failures[failed_before:], time.monotonic() - started)

    def interrupted(self, reason: str) -> None:
        """The running step (if any) ends here, interrupted for ``reason``: said so, so that
        a recording or a log says how it ended rather than stopping mid-step."""
        step = self.current
        if step is None:
            return
        self.emit(ev.STEP_END, f"step {step} stopped: interrupted ({reason})",
                  level=ev.WARNING, step=step, interrupted=True, outcome=ev.INTERRUPTED,
                  reason=reason, seconds=time.monotonic() - self._started,
                  silences=silences(self._runs))
        self.current = None

    def _step_ended(self, label: str, runs: list[Run], failures: list[str],
                    seconds: float) -> None:
        outcome, reason, status = step_ending(
            [Ending(r.host, r.tool, r.outcome, r.reason, r.status) for r in runs
             if r.command.role != SERVER and r.outcome is not None], failures)
        self.outcomes.append(outcome)
        said = {ev.COMPLETED: "done", ev.FAILED: "failed", ev.WATCHDOG: "stopped by the "
                "host's watchdog", ev.DEADLINE: "cut by its deadline"}.get(outcome, outcome)
        self.emit(ev.STEP_END, f"step {label} {said} in {seconds:.1f} s"
                  + (f" ({reason})" if reason else ""),
                  level=ev.INFO if not failures and outcome == ev.COMPLETED else ev.ERROR,
                  step=label, seconds=seconds, outcome=outcome, reason=reason,
                  exit_status=status, silences=silences(runs))
        self.current = None

    def _step_commands(self, step: StepSpec, run: int = 1) -> list[RemoteCommand]:
        address = step.server_address
        if step.server is not None and not address:
            spec = self.plan.hosts[step.server]
            address = "127.0.0.1" if spec.local else (spec.address or spec.ssh_alias)
        return step_commands(self.plan, step, server_address=address, run=run)

    async def _wait_ready(self, servers: list[Run]) -> None:
        """Until every server printed its first line (it is listening), or a timeout."""
        waits = [asyncio.wait_for(r.ready.wait(), SERVER_READY_TIMEOUT) for r in servers
                 if r.task is not None]
        await asyncio.gather(*waits, return_exceptions=True)

    # --- tools that fall silent ------------------------------------------------------------

    def audible(self) -> list[Quiet]:
        """The silence of each run that could be heard now (not while its host's link is
        down: nothing can arrive then)."""
        return [r.quiet for r in self.runner.active
                if r.running and self.hosts.audible(r.host)]

    def warn_silent(self, quiet: Quiet, seconds: float) -> None:
        """A run's tool fell silent (``silence.watch``): a warning, once per run."""
        run = next((r for r in self.runner.active if r.quiet is quiet), None)
        if run is None:  # (it ended meanwhile)
            return
        cmd = run.command
        what = "a monitor" if cmd.role == MONITOR else f"step {run.step}"
        self.emit(ev.SILENCE, f"{cmd.host}: {cmd.tool} ({what}) has printed nothing for "
                  f"{seconds:.0f} s (silence {quiet.limit:g} s): it may be stuck, or at work "
                  "without a word (fio laying out a file); it goes on until it ends or is "
                  "stopped", level=ev.WARNING, host=cmd.host,
                  step=run.step if cmd.role != MONITOR else self.current, tool=cmd.tool,
                  seconds=seconds, silence=quiet.limit, role=cmd.role)


def silences(runs: list[Run]) -> list[dict[str, object]]:
    """The runs whose tool fell silent past its ``silence``, counted from their start (a run
    that never started is left out): host, tool, longest seconds."""
    now = time.monotonic()
    out: list[dict[str, object]] = []
    for r in runs:
        if not r.started:
            continue
        longest = r.quiet.longest_so_far(now, running=r.outcome is None)
        if longest > 0:
            out.append({"host": r.host, "tool": r.tool, "seconds": round(longest, 1)})
    return out
