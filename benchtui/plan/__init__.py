"""Plans: a TOML file -> typed, validated objects (``load_plan``); the command lines they run
on each host (``commands``); and the checks made before anything runs (``preflight``).
The format is documented in docs/plans.md."""

from benchtui.plan.commands import RemoteCommand, monitor_commands, step_commands
from benchtui.plan.loader import load_plan, parse_plan
from benchtui.plan.model import HostSpec, MonitorSpec, Plan, Settings, StepSpec
from benchtui.plan.preflight import Finding, PreflightFacts, preflight

__all__ = [
    "Finding", "HostSpec", "MonitorSpec", "Plan", "PreflightFacts", "RemoteCommand", "Settings",
    "StepSpec", "load_plan", "monitor_commands", "parse_plan", "preflight", "step_commands",
]
