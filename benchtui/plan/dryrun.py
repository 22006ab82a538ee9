"""A dry run: every command line a plan will run, per host, as ``check --commands`` prints it.

The lines are built by the same functions the session runs (``step_commands``,
``monitor_commands``), after sweeps and placeholders, so what is printed is what runs: each
line is ``RemoteCommand.shell_line()``, every word shell-quoted. A step that names ``{run}``
gets one entry per repeat (its lines differ); any other step one entry for all its repeats.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from benchtui.plan.commands import RemoteCommand, monitor_commands, step_commands
from benchtui.plan.model import Plan, StepSpec
from benchtui.plan.placeholders import names_in


@dataclass(frozen=True)
class Entry:
    """The processes of one monitor, or of one run (or all runs) of a step."""

    #: ``monitor "iostat"``, ``step "rand"``, ``step "rand" run 2``, ``step "rand" (3 runs)``.
    title: str
    commands: tuple[RemoteCommand, ...]


def _uses_run(step: StepSpec) -> bool:
    texts = [*step.args, *step.server_args, *step.command, step.executable or "",
             *step.env.values(), step.jobfile_text or ""]
    return any(name == "run" for text in texts for name, _ in names_in(text))


def plan_commands(plan: Plan, fallback: Mapping[str, Collection[str]] | None = None
                  ) -> list[Entry]:
    """Monitors then steps, in the order they start. ``fallback``: monitor name -> hosts
    where its tool is missing and its fallback runs (from the hosts' facts)."""
    entries: list[Entry] = []
    for monitor in plan.monitors:
        commands = monitor_commands(plan, monitor,
                                    fallback_hosts=(fallback or {}).get(monitor.name, ()))
        entries.append(Entry(f'monitor "{monitor.name}"', tuple(commands)))
    for step in plan.steps:
        if step.repeat > 1 and _uses_run(step):
            for run in range(1, step.repeat + 1):
                entries.append(Entry(f'step "{step.name}" run {run}',
                                     tuple(step_commands(plan, step, run=run))))
            continue
        runs = f" ({step.repeat} runs)" if step.repeat > 1 else ""
        entries.append(Entry(f'step "{step.name}"{runs}', tuple(step_commands(plan, step))))
    return entries


def command_lines(entry: Entry) -> list[str]:
    """``ROLE HOST: LINE`` for each process of ``entry`` (the role only for iperf)."""
    out: list[str] = []
    for command in entry.commands:
        role = f"{command.role} " if command.role in ("server", "client") else ""
        out.append(f"{role}{command.host}: {command.shell_line()}")
    return out
