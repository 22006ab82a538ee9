"""Reading ``[[step]]`` and ``[[monitor]]`` tables: tools, hosts, arguments, jobfiles.

Part of the loader (see ``loader.load_plan``): every check raises a ``PlanError`` with the
line of the offending key. Steps and monitors share how a tool is named (``tool``, or
``command`` with ``parser``), how hosts are given (``"all"``, a name or a list) and how
arguments are split into words.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtui.errors import PlanError
from benchtui.model.units import parse_duration
from benchtui.plan.fields import Fields, Source, checked_name, closest, shown, type_name
from benchtui.plan.fio_check import args_options, check_options, external_engine, jobfile_options
from benchtui.plan.fio_options import JobfileSyntaxError, parse_jobfile
from benchtui.plan.model import (
    COMMAND_TOOL,
    DEFAULT_SILENCE,
    SILENCE_INTERVALS,
    HostSpec,
    MonitorSpec,
    StepSpec,
)
from benchtui.plan.placeholders import check_text, hint
from benchtui.plan.sweep import expand, read_matrix, read_select
from benchtui.plan.tools import TOOLS, ToolSpec, known_tool_list

_COMMON_KEYS = {
    "name": 'name = "randrw-4k"',
    "tool": 'tool = "fio"',
    "hosts": 'hosts = ["db1", "db2"] (or hosts = "all")',
    "args": 'args = "--rw=randread --bs=4k"',
    "command": 'command = "/opt/bench/run --json"',
    "parser": 'parser = "fio-json"',
    "executable": 'executable = "/opt/fio/bin/fio"',
    "env": 'env = { CEPH_ARGS = "--id bench" }',
}
_SILENCE = 'silence = "5m" (or 300, or "off")'

STEP_KEYS = {
    **_COMMON_KEYS,
    "jobfile": 'jobfile = "jobs/randread.fio"',
    "repeat": "repeat = 3",
    "select": 'select = "median"',
    "matrix": 'matrix = { ioengine = ["psync", "libaio"], bs = ["4k", "1m"] }',
    "server": 'server = "db1"',
    "clients": 'clients = ["db2", "db3"]',
    "server_args": 'server_args = "-p 6900"',
    "server_address": 'server_address = "10.0.0.11"',
    "timeout": "timeout = 600",
    "duration": "duration = 60",
    "silence": _SILENCE,
}
MONITOR_KEYS = {
    **_COMMON_KEYS,
    "name": 'name = "disks"',
    "tool": 'tool = "iostat"',
    "devices": 'devices = ["nvme1n1"]',
    "interval": "interval = 1",
    "silence": _SILENCE,
}
_PARSER_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
#: Largest jobfile read (a jobfile is a few lines; this stops /dev/zero and the like).
_JOBFILE_MAX_BYTES = 1 << 20


class HostNames:
    """The plan's hosts, for resolving ``hosts``, ``server`` and ``clients``."""

    def __init__(self, hosts: Mapping[str, HostSpec]) -> None:
        self.hosts = hosts

    def known(self) -> str:
        return ", ".join(self.hosts)

    def one(self, fields: Fields, key: str, name: str) -> str:
        if name not in self.hosts:
            guess = closest(name, self.hosts)
            hint = f"did you mean '{guess}'? " if guess else ""
            raise fields.error(key, f"unknown host '{name}' in {key} of {fields.what}",
                               f"{hint}the plan defines: {self.known()} ([hosts.NAME] tables)")
        return name

    def many(self, fields: Fields, key: str, *, exclude: tuple[str, ...] = ()
             ) -> tuple[str, ...]:
        """``"all"`` (every host but ``exclude``), one name, or a list of names."""
        value = fields.table.get(key, "all")
        if value == "all":
            names = tuple(h for h in self.hosts if h not in exclude)
            if not names:
                raise fields.error(key, f'{key} = "all" of {fields.what} leaves no host',
                                   "define another host to run it on")
            return names
        listed = fields.text_list(key, single_ok=True) or []
        if not listed:
            raise fields.error(key, f"{key} of {fields.what} is empty",
                               f'write {key} = "all" or a list of host names, e.g. '
                               f'{key} = ["{next(iter(self.hosts))}"]')
        seen: list[str] = []
        for name in listed:
            self.one(fields, key, name)
            if name in seen:
                raise fields.error(key, f"host '{name}' is listed twice in {key} of "
                                        f"{fields.what}", "list each host once")
            seen.append(name)
        return tuple(seen)


@dataclass
class _Runnable:
    """What steps and monitors share: the tool and how it is run."""

    tool: str
    spec: ToolSpec | None
    parser: str
    command: tuple[str, ...]
    executable: str | None
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def _what(kind: str, table: Mapping[str, Any], index: int) -> str:
    name = table.get("name")
    return f'{kind} "{name}"' if isinstance(name, str) and name.strip() else f"{kind} {index}"


def _read_runnable(fields: Fields, parser_names: Collection[str] | None) -> _Runnable:
    """The tool of a step or monitor and how it runs: ``tool`` (with optional ``executable``,
    ``args``, ``parser``), or ``command`` with ``parser`` (or a ``tool`` for its parser)."""
    tool = fields.text("tool")
    command = fields.words("command")
    if command is not None and not command:
        raise fields.error("command", f"command of {fields.what} is empty",
                           fields.example("command"))
    if tool is None and command is None:
        raise fields.error(None, f"{fields.what} names no tool",
                           f'add tool = "fio" (known tools: {known_tool_list()}), or '
                           'command = "..." with parser = "..."')
    spec: ToolSpec | None = None
    if tool is None or tool == COMMAND_TOOL:
        tool = COMMAND_TOOL
        if command is None:
            raise fields.error("tool", f'{fields.what} has tool = "command" but no command',
                               fields.example("command"))
    elif tool in TOOLS:
        spec = TOOLS[tool]
    else:
        guess = closest(tool, TOOLS)
        raise fields.error("tool", f"unknown tool {shown(tool)} in {fields.what}",
                           (f"did you mean '{guess}'? " if guess else "")
                           + f"known tools: {known_tool_list()}; anything else runs with "
                           'command = "..." and parser = "..."')
    parser = _read_parser(fields, spec, command, parser_names)
    executable = fields.text("executable")
    if command is not None:
        for key in ("args", "executable", "jobfile"):
            if fields.has(key):
                raise fields.error(key, f"{fields.what} has both command and {key}",
                                   "a command runs as written: put everything in command")
        if spec is not None and spec.client_server:
            raise fields.error("command", f"{fields.what} ({tool}) cannot use command",
                               f"benchtui starts {tool}'s server and clients itself; to run "
                               f'another program use executable = "/path/to/{tool}"')
    if spec is not None and not spec.takes_args and fields.has("args"):
        raise fields.error("args", f"{tool} takes no args", f"remove args from {fields.what}")
    if executable is not None and executable.startswith("-"):
        raise fields.error("executable", f"executable {shown(executable)} of {fields.what} "
                                         "is not a program", fields.example("executable"))
    if spec is not None and spec.executable is None and not executable and command is None:
        raise fields.error(None, f"{fields.what} ({tool}) needs executable: {tool} has no "
                                 "standard place", spec.install)
    return _Runnable(tool, spec, parser, command or (), executable,
                     fields.words("args") or (), fields.text_table("env", key_check="name"))


def _read_parser(fields: Fields, spec: ToolSpec | None, command: tuple[str, ...] | None,
                 parser_names: Collection[str] | None) -> str:
    parser = fields.text("parser")
    given = parser is not None
    if parser is None:
        if spec is None:
            raise fields.error(None, f"{fields.what} runs a command but names no parser",
                               'add parser = "..." (the parser that reads its output, e.g. '
                               '"fio-json"; benchtui parse --list shows them)')
        parser = spec.parser
    elif not _PARSER_NAME.fullmatch(parser):
        raise fields.error("parser", f"unknown parser {shown(parser)} in {fields.what}",
                           'parser names look like "fio-json"')
    if parser_names is not None and parser not in parser_names:
        guess = closest(parser, parser_names)
        hint = ((f"did you mean '{guess}'? " if guess else "")
                + f"known parsers: {', '.join(sorted(parser_names))}")
        if given:
            raise fields.error("parser", f"unknown parser {shown(parser)} in {fields.what}",
                               hint)
        raise fields.error("tool", f'{fields.what} needs the parser "{parser}", which this '
                                   "benchtui does not have", hint)
    return parser


def _check_needs_args(fields: Fields, run: _Runnable, jobfile: object = None) -> None:
    spec = run.spec
    if spec is not None and spec.needs_args and not run.args and not jobfile \
            and not run.command:
        what = "args, jobfile or command" if spec.takes_jobfile else "args or command"
        raise fields.error(None, f"{fields.what} ({run.tool}) says nothing to run: it has no "
                                 f"{what}", f"e.g. {spec.needs_args}")


def _read_jobfile(fields: Fields, run: _Runnable, base: Path) -> tuple[Path | None, str | None]:
    raw = fields.text("jobfile")
    if raw is None:
        return None, None
    if run.spec is None or not run.spec.takes_jobfile:
        raise fields.error("jobfile", f"jobfile is for fio steps, not {run.tool}",
                           "give the tool's options in args")
    given = Path(raw).expanduser()
    path = Path(os.path.abspath(given if given.is_absolute() else base / given))
    hint = f"a jobfile path is relative to the plan file's directory ({base})"
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise fields.error("jobfile", f"jobfile {shown(raw)} of {fields.what} is not a "
                                          f"regular file ({path})", hint)
        if info.st_size > _JOBFILE_MAX_BYTES:
            raise fields.error("jobfile", f"jobfile {shown(raw)} of {fields.what} is "
                                          f"{info.st_size} bytes, too big for a jobfile", hint)
        text = path.read_bytes().decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise fields.error("jobfile", f"jobfile {shown(raw)} of {fields.what} does not exist "
                                      f"({path})", hint) from None
    except UnicodeDecodeError:
        raise fields.error("jobfile", f"jobfile {shown(raw)} of {fields.what} is not UTF-8 "
                                      f"text ({path})", "a fio jobfile is a text file") from None
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise fields.error("jobfile", f"jobfile {shown(raw)} of {fields.what} cannot be read "
                                      f"({path}): {reason}", hint) from None
    try:
        jobs = parse_jobfile(text)
    except JobfileSyntaxError as error:
        raise PlanError(str(path), error.reason, error.line, error.hint) from None
    if not jobs:
        raise PlanError(str(path), "the jobfile defines no job", None,
                        "add a job section, e.g. [job1] after [global]")
    return path, text


def _read_silence(fields: Fields, interval: float) -> float:
    """``silence``: seconds (a number, or a duration such as "5m") or "off" (never warn);
    never less than two of the tool's intervals."""
    if not fields.has("silence"):
        return DEFAULT_SILENCE
    value = fields.table["silence"]
    if isinstance(value, str) and value.strip().lower() == "off":
        return math.inf
    seconds: float | None = None
    if isinstance(value, str):
        seconds = parse_duration(value.strip().replace(" ", ""))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0 or seconds > 1e9:
        raise fields.error("silence", f"silence of {fields.what} must be a number of seconds "
                                      f'more than zero, a duration such as "5m", or "off", '
                                      f"not {shown(value)}", fields.example("silence"))
    least = SILENCE_INTERVALS * interval
    if seconds < least:
        raise fields.error("silence", f"silence of {fields.what} ({seconds:g} s) is less than "
                                      f"twice the tool's interval ({interval:g} s): it would "
                                      "warn between two reports", f"write silence = {least:g} "
                                      "or more")
    return seconds


def _unique_name(base: str, used: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever is not taken yet."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-._")[:60] or "step"
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base}-{n}"
    return name


def _read_names(source: Source, tables: list[Any], kind: str, keys: Mapping[str, str]
                ) -> list[Fields]:
    """Fields of each table, their keys checked, and explicit names unique."""
    out: list[Fields] = []
    named: dict[str, int] = {}
    for i, table in enumerate(tables):
        if not isinstance(table, dict):
            raise source.error((kind, i), f"{kind} {i + 1} must be a table, not "
                               f"{type_name(table)} ({shown(table)})",
                               f"write [[{kind}]] and its keys on the lines below")
        fields = Fields(source, table, (kind, i), _what(kind, table, i + 1), keys)
        fields.check_keys()
        name = fields.text("name")
        if name is not None:
            checked_name(fields, "name", name)
            if name in named:
                raise fields.error("name", f"two {kind}s are named {shown(name)} ({kind}s "
                                           f"{named[name] + 1} and {i + 1})",
                                   f"{kind} names label the samples: give each its own name, "
                                   f'e.g. name = "{name}-2"')
            named[name] = i
        out.append(fields)
    return out


def read_monitors(source: Source, tables: list[Any], hosts: HostNames,
                  parser_names: Collection[str] | None) -> list[MonitorSpec]:
    """The ``[[monitor]]`` tables, checked and resolved."""
    monitors: list[MonitorSpec] = []
    all_fields = _read_names(source, tables, "monitor", MONITOR_KEYS)
    used = {f.table["name"] for f in all_fields if "name" in f.table}
    for i, fields in enumerate(all_fields):
        run = _read_runnable(fields, parser_names)
        spec = run.spec
        if spec is not None and spec.client_server:
            raise fields.error("tool", f"{run.tool} cannot be a monitor",
                               f"{run.tool} runs between a server and clients: write it as a "
                               '[[step]] with server = "..." and clients = [...]')
        _check_needs_args(fields, run)
        takes_devices = spec is not None and spec.takes_devices
        takes_interval = spec is not None and spec.takes_interval
        if fields.has("devices") and not takes_devices:
            raise fields.error("devices", f"devices is for iostat and diskstats monitors, not "
                                          f"{run.tool}", "give the tool's own options in args")
        if fields.has("interval") and not takes_interval:
            raise fields.error("interval", f"interval is for iostat, diskstats and spdk_iostat "
                                           f"monitors, not {run.tool}",
                               "give the tool's own options in args")
        interval = fields.seconds("interval", 1.0) or 1.0
        if spec is not None and spec.whole_second_interval and interval != int(interval):
            raise fields.error("interval", f"interval of {fields.what} must be whole seconds "
                                           f"for {run.tool}, not {interval:g}",
                               f"write interval = {max(1, round(interval))}")
        devices = []
        for device in fields.text_list("devices") or []:
            name = device.removeprefix("/dev/")
            if not name or any(c.isspace() for c in name):
                raise fields.error("devices", f"devices of {fields.what} lists {shown(device)}, "
                                              "which is not a device name",
                                   fields.example("devices"))
            devices.append(name)
        _check_placeholders(fields, run, monitor=True)
        _check_fio_options(fields, run)
        name = fields.table.get("name") or _unique_name(run.tool if run.spec else run.parser,
                                                        used)
        used.add(name)
        monitors.append(MonitorSpec(
            name=name, tool=run.tool, hosts=hosts.many(fields, "hosts"), parser=run.parser,
            devices=tuple(devices), args=run.args, command=run.command,
            executable=run.executable, interval=interval, env=run.env,
            silence=_read_silence(fields, interval), index=i,
            line=source.line(("monitor", i))))
    return monitors


def read_steps(source: Source, tables: list[Any], hosts: HostNames,
               parser_names: Collection[str] | None, base: Path) -> list[StepSpec]:
    """The ``[[step]]`` tables, checked and resolved; jobfiles are read relative to ``base``."""
    steps: list[StepSpec] = []
    all_fields = _read_names(source, tables, "step", STEP_KEYS)
    used = {f.table["name"] for f in all_fields if "name" in f.table}
    for i, fields in enumerate(all_fields):
        run = _read_runnable(fields, parser_names)
        spec = run.spec
        jobfile, jobfile_text = _read_jobfile(fields, run, base)
        _check_needs_args(fields, run, jobfile)
        server, clients, step_hosts, server_address = _read_placement(fields, run, hosts)
        duration = fields.seconds("duration", None)
        timeout = fields.seconds("timeout", None)
        if spec is not None and spec.runs_until_stopped and duration is None:
            raise fields.error(None, f"{fields.what} ({run.tool}) runs until stopped, so it "
                                     "needs a duration", "write duration = 60 (seconds)")
        if duration is not None and timeout is not None and timeout <= duration:
            raise fields.error("timeout", f"timeout of {fields.what} ({timeout:g} s) must be "
                                          f"longer than its duration ({duration:g} s)",
                               "timeout is when a run has failed; duration is when the step "
                               "ends normally")
        matrix = read_matrix(fields, run.tool, run.command, run.args)
        _check_placeholders(fields, run, jobfile=jobfile, jobfile_text=jobfile_text,
                            matrix=matrix)
        _check_fio_options(fields, run, jobfile, jobfile_text)
        name = fields.table.get("name") or _unique_name(run.tool if run.spec else run.parser,
                                                        used)
        used.add(name)
        step = StepSpec(
            name=name, tool=run.tool, hosts=step_hosts, parser=run.parser, args=run.args,
            jobfile=jobfile, jobfile_text=jobfile_text,
            repeat=fields.whole("repeat", 1, 1, 10000) or 1, server=server, clients=clients,
            server_args=fields.words("server_args") or (), server_address=server_address,
            command=run.command, executable=run.executable, timeout=timeout,
            duration=duration, env=run.env, select=read_select(fields),
            silence=_read_silence(fields, 1.0), index=i, line=source.line(("step", i)))
        steps += expand(step, matrix, fields, used) if matrix else [step]
    return steps


def _check_placeholders(fields: Fields, run: _Runnable, *, monitor: bool = False,
                        jobfile: Path | None = None, jobfile_text: str | None = None,
                        matrix: Mapping[str, tuple[str, ...]] | None = None) -> None:
    """Every ``{NAME}`` in the words, env values, matrix values and jobfile is a known
    placeholder (``placeholders``): else a ``PlanError`` at its key's (or jobfile's) line."""
    words: list[tuple[tuple[str, ...], str]] = [
        (("args",), w) for w in run.args]
    words += [(("server_args",), w) for w in fields.words("server_args") or ()]
    words += [(("command",), w) for w in run.command]
    if run.executable is not None:
        words.append((("executable",), run.executable))
    words += [(("env", k), v) for k, v in run.env.items()]
    for key, values in (matrix or {}).items():
        words += [(("matrix", key), v) for v in values]
    for path, text in words:
        unknown = check_text(text, monitor=monitor)
        if unknown is not None:
            where = " ".join(path)
            raise fields.source.error((*fields.path, *path), f"{unknown.reason} ({where} of "
                                      f"{fields.what})", hint(unknown))
    if jobfile is not None and jobfile_text is not None:
        unknown = check_text(jobfile_text)
        if unknown is not None:
            line = jobfile_text.count("\n", 0, unknown.offset) + 1
            raise PlanError(str(jobfile), f"{unknown.reason} (jobfile of {fields.what})", line,
                            hint(unknown))


def _check_fio_options(fields: Fields, run: _Runnable, jobfile: Path | None = None,
                       jobfile_text: str | None = None) -> None:
    """fio's options in args and the jobfile, as fio will read them (``fio_check``): an
    option fio does not have, or a value it would refuse or misread, is a ``PlanError`` at
    the args' line (or the jobfile's)."""
    if run.tool != "fio" or run.command:
        return
    given = args_options(run.args)
    in_jobfile = jobfile_options(jobfile_text) if jobfile_text is not None else []
    external = external_engine(given + in_jobfile)
    for problem in check_options(given, external=external):
        raise fields.error("args", f"args of {fields.what}: {problem.reason}", problem.hint)
    for problem in check_options(in_jobfile, external=external, jobfile=True):
        raise PlanError(str(jobfile), f"jobfile of {fields.what}: {problem.reason}",
                        problem.line, problem.hint)


def _read_placement(fields: Fields, run: _Runnable, hosts: HostNames
                    ) -> tuple[str | None, tuple[str, ...], tuple[str, ...], str | None]:
    """(server, clients, every host, server address) of a step."""
    if run.spec is None or not run.spec.client_server:
        for key in ("server", "clients", "server_args", "server_address"):
            if fields.has(key):
                raise fields.error(key, f"{key} is for iperf3 and iperf steps, not {run.tool}",
                                   'give the hosts to run on with hosts = [...]')
        return None, (), hosts.many(fields, "hosts"), None
    tool = run.tool
    if fields.has("hosts"):
        raise fields.error("hosts", f"{fields.what} ({tool}) runs between a server and "
                                    "clients, not on hosts",
                           'write server = "db1" and clients = ["db2"] instead of hosts')
    for key in ("server", "clients"):
        if not fields.has(key):
            raise fields.error(None, f"{fields.what} ({tool}) has no {key}",
                               f'{tool} runs between hosts: write server = "db1" and '
                               'clients = ["db2"]')
    server = hosts.one(fields, "server", fields.text("server") or "")
    clients = hosts.many(fields, "clients", exclude=(server,))
    address = fields.text("server_address")
    host = hosts.hosts[server]
    if address is None:
        if host.local:
            if not all(hosts.hosts[c].local for c in clients):
                raise fields.error("server", f"the clients of {fields.what} cannot reach the "
                                             f"local host '{server}' by name",
                                   'add server_address = "..." (an address of this machine '
                                   "that the clients can reach)")
            address = "127.0.0.1"
        else:
            address = host.address or host.ssh_alias
    every = (server, *(c for c in clients if c != server))
    return server, clients, every, address
