"""What shell completion knows about ``benchtui``, read from its own argument parser.

The completion scripts (``completion_bash.py``, ``completion_zsh.py``) are generated from
``CommandSpec``: every command and subcommand, its options (flag, or the kind of value it
takes) and its positional arguments. Nothing is listed by hand, so a new option completes as
soon as it is added to the parser. What a value is comes from the argument's ``choices``,
else from its metavar (``PLAN`` a plan file, ``SESSION`` a session file, ``FILE``, ``DIR``,
``STEP``...), with the few exceptions in ``_OVERRIDES``.

Values that depend on a file on the command line (a plan's or a session's step and host
names) or on this machine (theme names) are listed at completion time by the hidden
``benchtui completion --list KIND [FILE]`` (``list_values``).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field

#: What a value is: free text (nothing to offer), one of ``choices``, a file of any kind, a
#: directory, a plan file (``*.toml``), a session file (``*.btr``), the name of a step or a
#: host of the plan or session on the command line, a console theme.
KINDS = ("text", "choice", "file", "dir", "plan", "session", "step", "host", "theme")
#: The file name patterns of plan and session files.
PLAN_GLOB = "*.toml"
SESSION_GLOB = "*.btr"
#: The longest help a menu shows for one option or command.
HELP_WIDTH = 80
_PARENTHESES = re.compile(r"\s*\([^()]*\)")

_BY_METAVAR = {
    "PLAN": "plan", "SESSION": "session", "OLD.btr": "session", "FILE": "file",
    "OUTPUT": "file", "DIR": "dir", "STEP": "step", "PATTERN": "step",
}
#: (command path, dest or option) -> kind, where the metavar says something else.
_OVERRIDES = {
    # history's PLAN, STEP and host are names in the catalog, not a file's
    ("history", "plan"): "text", ("history", "step"): "text",
    ("plot", "host"): "host", ("dump", "host"): "host",
    ("run", "theme"): "theme", ("demo", "theme"): "theme", ("replay", "theme"): "theme",
    ("import", "step"): "text",
}


@dataclass(frozen=True)
class OptionSpec:
    """An option: its names, help, and the kind of value it takes (None: a flag)."""

    names: tuple[str, ...]
    help: str
    kind: str | None
    choices: tuple[str, ...] = ()
    repeatable: bool = False
    #: ``--history-catalog [URL]``: the value may be left out.
    optional_value: bool = False
    #: What the value is called in ``--help`` (``SESSION``, ``N``).
    value_name: str = ""


@dataclass(frozen=True)
class PositionalSpec:
    """A positional argument; ``many``: it takes every word from here on."""

    name: str
    help: str
    kind: str
    choices: tuple[str, ...] = ()
    many: bool = False
    optional: bool = False


@dataclass
class CommandSpec:
    """A command (the path of words that names it: ``()`` is ``benchtui`` itself)."""

    path: tuple[str, ...]
    help: str
    options: list[OptionSpec] = field(default_factory=list)
    positionals: list[PositionalSpec] = field(default_factory=list)
    commands: dict[str, CommandSpec] = field(default_factory=dict)

    def walk(self) -> list[CommandSpec]:
        """This command and every command under it, parents first."""
        found = [self]
        for sub in self.commands.values():
            found.extend(sub.walk())
        return found


def command_spec(parser: argparse.ArgumentParser, path: tuple[str, ...] = (),
                 help_text: str = "") -> CommandSpec:
    """The ``CommandSpec`` of ``parser`` (``benchtui.cli.main.build_parser()``)."""
    spec = CommandSpec(path, help_text)
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        text = _help(formatter, action)
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                spec.commands[name] = command_spec(sub, (*path, name), helps.get(name, ""))
        elif action.option_strings:
            takes = action.nargs != 0
            spec.options.append(OptionSpec(
                tuple(action.option_strings), text,
                _kind(path, action) if takes else None, _choices(action),
                repeatable=isinstance(action, (argparse._AppendAction,
                                               argparse._CountAction)),
                optional_value=action.nargs == argparse.OPTIONAL,
                value_name=_value_name(action) if takes else ""))
        else:
            spec.positionals.append(PositionalSpec(
                str(action.metavar or action.dest), text, _kind(path, action),
                _choices(action), many=action.nargs in (argparse.ONE_OR_MORE,
                                                        argparse.ZERO_OR_MORE),
                optional=action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE)))
    return spec


def _help(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    """The argument's help as ``--help`` prints it (``%%`` and ``%(default)s`` expanded),
    without its parentheses, up to its first semicolon: a shell's menu shows one short
    line."""
    if not action.help:
        return ""
    text = " ".join(formatter._expand_help(action).split())
    while True:
        shorter = _PARENTHESES.sub("", text)
        if shorter == text:
            break
        text = shorter
    text = text.split("; ", 1)[0].strip()
    if len(text) > HELP_WIDTH:
        text = text[:HELP_WIDTH].rsplit(" ", 1)[0] + " ..."
    return text


def _value_name(action: argparse.Action) -> str:
    metavar = action.metavar if isinstance(action.metavar, str) else None
    return metavar or action.dest.replace("_", "-")


def _choices(action: argparse.Action) -> tuple[str, ...]:
    return tuple(str(c) for c in action.choices) if action.choices else ()


def _kind(path: tuple[str, ...], action: argparse.Action) -> str:
    if action.choices:
        return "choice"
    for key in (action.dest, *action.option_strings):
        for prefix in (path, path[:1]):
            kind = _OVERRIDES.get((" ".join(prefix), key))
            if kind:
                return kind
    metavar = action.metavar if isinstance(action.metavar, str) else None
    return _BY_METAVAR.get(metavar or "", "text")


def list_values(kind: str, path: str | None) -> list[str]:
    """What ``completion --list`` prints: the step or host names of the plan or session file
    ``path``, or the console themes. Anything that cannot be read gives nothing (a completion
    never prints an error in the middle of the user's command line)."""
    from benchtui.errors import BenchtuiError

    try:
        if kind == "theme":
            from benchtui.ui.themes import available_themes

            return available_themes()
        if path is None:
            return []
        if path.endswith(".toml"):
            return _plan_values(kind, path)
        return _session_values(kind, path)
    except (BenchtuiError, OSError, ValueError, KeyError):
        return []


def _plan_values(kind: str, path: str) -> list[str]:
    from benchtui.plan.loader import load_plan

    plan = load_plan(path)
    if kind == "host":
        return list(plan.host_names())
    return [step.name for step in plan.steps]


def _session_values(kind: str, path: str) -> list[str]:
    from benchtui.session.compare import SessionLayout
    from benchtui.store.recording import SessionReader

    with SessionReader.open(path) as reader:
        if kind == "host":
            return sorted({*reader.meta.hosts, *(e.host for e in reader.events() if e.host)})
        layout = SessionLayout.from_events(reader.events())
    names = list(layout.steps)
    repeated = {run.step for run in layout.runs if run.repeat > 1}
    labels = sorted({run.label for run in layout.runs if run.step in repeated})
    return names + [label for label in labels if label not in names]
