"""The command lines benchtui runs on each host, and how long each may run.

``step_commands`` and ``monitor_commands`` turn a step or monitor into one ``RemoteCommand``
per process to start: its words (``argv``), environment, the parser of its output, and a
deadline in seconds that the transport enforces on the host (``timeout``), so that nothing
outlives a controller that died. benchtui adds the options it needs to read per-second output
(see ``tools``) and drops the user's options that would break that, with a warning.

No shell ever interprets a plan value: every word is quoted (``shlex.join``), so a value like
``x; touch /tmp/pwned`` reaches the tool as one argument. ``command = "..."`` is split into
words the same way: pipes and ``;`` in it are words too (use ``sh -c '...'`` explicitly).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchtui.plan.argwords import Option, find, number, positional, take
from benchtui.plan.fio_options import expected_seconds, fio_jobs, split_option
from benchtui.plan.model import MonitorSpec, Plan, StepSpec
from benchtui.plan.placeholders import has_placeholders, substitute, values_for
from benchtui.plan.tools import TOOLS, ToolSpec

STEP, MONITOR, SERVER, CLIENT = "step", "monitor", "server", "client"
#: The environment of every catalogued tool: numbers with a dot, messages in English.
BASE_ENV = {"LC_ALL": "C"}
#: Seconds ``timeout`` waits after TERM before KILL.
KILL_AFTER = 10.0


@dataclass(frozen=True)
class Upload:
    """A file the session copies to the host before the command runs."""

    local: Path
    remote: str
    #: What to write instead of the local file's bytes: the jobfile's text as the plan loader
    #: read and checked it (with a sweep's values set in it).
    text: str | None = None


@dataclass(frozen=True)
class RemoteCommand:
    """One process to start on one host."""

    host: str
    #: The step or monitor it belongs to.
    name: str
    role: str
    tool: str
    parser: str
    argv: tuple[str, ...]
    #: Seconds the command may run before the host's ``timeout`` ends it.
    deadline: float
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    line_buffered: bool = False
    uploads: tuple[Upload, ...] = ()
    #: Devices a monitor reports on (empty: all).
    devices: tuple[str, ...] = ()
    #: What benchtui changed in the plan's options, for the user.
    warnings: tuple[str, ...] = ()

    @property
    def exec_argv(self) -> tuple[str, ...]:
        """The words to execute: ``env K=V ... [stdbuf -oL] argv``."""
        prefix: list[str] = []
        if self.env:
            prefix = ["env", *(f"{k}={v}" for k, v in sorted(self.env.items()))]
        if self.line_buffered:
            prefix += ["stdbuf", "-oL"]
        return (*prefix, *self.argv)

    def shell_line(self) -> str:
        """The command for a POSIX shell, every word quoted."""
        return shlex.join(self.exec_argv)

    def bounded_shell_line(self) -> str:
        """The same, ended by ``timeout`` after ``deadline`` seconds (KILL 10 s later)."""
        return shlex.join(("timeout", f"--kill-after={KILL_AFTER:g}",
                           str(math.ceil(self.deadline)), *self.exec_argv))


def margin(plan: Plan, seconds: float) -> float:
    """The slack added to a derived run time: the plan's margin plus 10%."""
    return plan.settings.deadline_margin + 0.1 * seconds


# --- fio -----------------------------------------------------------------------------------

FIO_ADDED = ("--status-interval=1", "--output-format=json+", "--eta=never")
_FIO_DROPPED = {
    "output-format": "benchtui runs fio with --output-format=json+ and reads its JSON",
    "minimal": "benchtui runs fio with --output-format=json+ and reads its JSON",
    "append-terse": "benchtui runs fio with --output-format=json+ and reads its JSON",
    "status-interval": "benchtui runs fio with --status-interval=1",
    "eta": "status lines would break fio's JSON stream (benchtui adds --eta=never)",
    "eta-newline": "status lines would break fio's JSON stream (benchtui adds --eta=never)",
    "output": "fio's output must come to benchtui",
    "client": "benchtui runs fio on each host itself, not in fio's client/server mode",
    "server": "benchtui runs fio on each host itself, not in fio's client/server mode",
    "daemonize": "benchtui runs fio on each host itself, not in fio's client/server mode",
    "remote-config": "benchtui runs fio on each host itself, not in fio's client/server mode",
}
_UNSAFE_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_FIO_VALUED = frozenset({"output-format", "status-interval", "eta", "eta-newline", "output",
                         "client", "remote-config", "daemonize"})


def fio_args(what: str, args: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The plan's fio args without the options benchtui sets, and a warning per drop
    (``what`` names the step or monitor in the warning: ``step "randrw"``)."""
    kept: list[str] = []
    warnings: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        option = split_option(word)
        i += 1
        key = option[0].lower() if option else ""
        if key not in _FIO_DROPPED:
            kept.append(word)
            continue
        if option and option[1] is None and key in _FIO_VALUED and i < len(args) \
                and not args[i].startswith("-"):
            word = f"{word} {args[i]}"
            i += 1
        warnings.append(f"{what}: {word} was dropped: {_FIO_DROPPED[key]}")
    return kept, warnings


def default_jobfile_path(plan: Plan, step: StepSpec, host: str | None = None) -> str:
    """Where a step's jobfile is copied on its hosts, unless the session says otherwise (a
    sweep's step names hold spaces and ``=``: they become ``_`` in the file name). ``host``:
    a jobfile with placeholders differs per host, so each host's copy gets its own name (two
    plan hosts may share a file system, or be one machine)."""
    base = step.jobfile.name if step.jobfile else "job.fio"
    name = _UNSAFE_FILE_NAME.sub("_", step.name)
    if host is not None:
        name = f"{name}-{_UNSAFE_FILE_NAME.sub('_', host)}"
    return f"{plan.settings.remote_dir}/{plan.name}/{name}-{base}"


# --- placeholders --------------------------------------------------------------------------

def _filled(words: tuple[str, ...], values: dict[str, str]) -> tuple[str, ...]:
    return tuple(substitute(w, values) for w in words)


def step_for_host(plan: Plan, step: StepSpec, host: str, run: int = 1) -> StepSpec:
    """``step`` as ``host`` runs it in run ``run``: its placeholders filled (see
    ``placeholders``)."""
    values = values_for(host=host, index=step.hosts.index(host), session=plan.name,
                        step=step.name, run=run)
    return replace(
        step, args=_filled(step.args, values), server_args=_filled(step.server_args, values),
        command=_filled(step.command, values),
        executable=substitute(step.executable, values) if step.executable else None,
        env={k: substitute(v, values) for k, v in step.env.items()},
        jobfile_text=substitute(step.jobfile_text, values) if step.jobfile_text else None)


def monitor_for_host(plan: Plan, monitor: MonitorSpec, host: str) -> MonitorSpec:
    """``monitor`` as ``host`` runs it: ``{host}``, ``{index}``, ``{session}`` filled."""
    values = values_for(host=host, index=monitor.hosts.index(host), session=plan.name)
    return replace(
        monitor, args=_filled(monitor.args, values), command=_filled(monitor.command, values),
        executable=substitute(monitor.executable, values) if monitor.executable else None,
        env={k: substitute(v, values) for k, v in monitor.env.items()})


def _fio_argv(program: str, what: str, name: str, args: tuple[str, ...], jobfile: str | None
              ) -> tuple[list[str], list[str]]:
    kept, warnings = fio_args(what, args)
    argv = [program, *FIO_ADDED]
    names_a_job = any((split_option(w) or ("",))[0].lower() == "name" for w in kept)
    if not names_a_job and jobfile is None:
        argv.append(f"--name={name}")
    argv += kept
    if jobfile is not None:
        argv.append(jobfile)
    return argv, warnings


# --- iperf3 and iperf ----------------------------------------------------------------------

_PORT = Option("-p", "--port")
_TIME = Option("-t", "--time")
_OMIT = Option("-O", "--omit")
_BOUNDED_BY_SIZE = (Option("-n", "--num"), Option("-k", "--blockcount"), Option(None, "--bytes"))
_IPERF_SET = {
    "iperf3": (Option("-c", "--client"), Option("-s", "--server", False),
               Option("-i", "--interval"), Option("-J", "--json", False),
               Option(None, "--logfile"), Option("-1", "--one-off", False),
               Option("-D", "--daemon", False), Option(None, "--forceflush", False)),
    "iperf": (Option("-c", "--client"), Option("-s", "--server", False),
              Option("-i", "--interval"), Option("-D", "--daemon", False),
              Option("-o", "--output")),
}
DEFAULT_PORTS = {"iperf3": 5201, "iperf": 5001}


def _without(tool: str, name: str, words: tuple[str, ...]) -> tuple[list[str], list[str]]:
    rest = list(words)
    warnings: list[str] = []
    for option in _IPERF_SET[tool]:
        taken = take(rest, option)
        rest = taken.rest
        warnings += [f'step "{name}": {w} was dropped: benchtui sets the {tool} server, '
                     "client, interval and output itself" for w in taken.found]
    return rest, warnings


def iperf_seconds(args: tuple[str, ...] | list[str]) -> float | None:
    """How long an iperf3/iperf client runs: -t (10 s by default) plus -O; None when bounded
    by bytes or blocks."""
    if any(find(args, option) is not None for option in _BOUNDED_BY_SIZE):
        return None
    seconds = number(find(args, _TIME))
    omit = number(find(args, _OMIT)) or 0.0
    return (seconds if seconds is not None else 10.0) + omit


def _iperf_commands(plan: Plan, step: StepSpec, spec: ToolSpec, address: str, run: int
                    ) -> list[RemoteCommand]:
    tool = spec.name
    server = step.server or step.hosts[0]
    on_server = step_for_host(plan, step, server, run)
    client_args, warnings = _without(tool, step.name, step.args)
    server_args, server_warnings = _without(tool, step.name, on_server.server_args)
    warnings += server_warnings
    client_port, server_port = take(client_args, _PORT), take(server_args, _PORT)
    base_port = int(number(client_port.value or server_port.value) or DEFAULT_PORTS[tool])
    client_deadline = _step_deadline(plan, step, iperf_seconds(client_port.rest))
    server_deadline = client_deadline + plan.settings.deadline_margin
    server_extra = list(server_port.rest)
    udp = Option("-u", "--udp", False)
    if tool == "iperf" and find(client_port.rest, udp) is not None \
            and find(server_extra, udp) is None:
        server_extra.append("-u")

    def command(host: str, role: str, argv: list[str], deadline: float) -> RemoteCommand:
        on_host = step_for_host(plan, step, host, run)
        program = on_host.executable or spec.executable or tool
        return RemoteCommand(host=host, name=step.name, role=role, tool=tool,
                             parser=step.parser, argv=(program, *argv), deadline=deadline,
                             env={**BASE_ENV, **on_host.env}, warnings=tuple(warnings))

    def client_words(client: str) -> list[str]:
        words, _ = _without(tool, step.name, step_for_host(plan, step, client, run).args)
        return take(words, _PORT).rest

    servers: list[RemoteCommand] = []
    clients: list[RemoteCommand] = []
    for i, client in enumerate(step.clients):
        # an iperf3 server serves one client at a time: one server (and port) per client
        port = base_port + i if tool == "iperf3" else base_port
        if tool == "iperf3":
            servers.append(command(server, SERVER, [
                "-s", "-1", "-i", "1", "-p", str(port), "--forceflush",
                *server_extra], server_deadline))
            clients.append(command(client, CLIENT, [
                "-c", address, "-i", "1", "-p", str(port), "--forceflush",
                *client_words(client)], client_deadline))
        else:
            if i == 0:
                servers.append(command(server, SERVER, [
                    "-s", "-i", "1", "-p", str(port), *server_extra], server_deadline))
            clients.append(command(client, CLIENT, [
                "-c", address, "-i", "1", "-p", str(port), *client_words(client)],
                client_deadline))
    return servers + clients


# --- rados bench ---------------------------------------------------------------------------

_RADOS_VALUED = frozenset({
    "-p", "--pool", "-b", "-t", "-O", "--object-size", "--max-objects", "--run-name", "-c",
    "--conf", "-k", "--keyring", "--id", "--user", "-n", "--name", "--cluster", "--format",
    "--concurrent-ios", "--offset-align", "-m", "--namespace", "-N",
})


def rados_seconds(args: tuple[str, ...]) -> float | None:
    """The SECONDS of ``rados bench [options] SECONDS MODE``."""
    words = positional(args, _RADOS_VALUED)
    return number(words[0]) if words else None


# --- steps and monitors --------------------------------------------------------------------

def _step_deadline(plan: Plan, step: StepSpec, expected: float | None) -> float:
    if step.timeout is not None:
        return step.timeout
    if step.duration is not None:
        return step.duration + margin(plan, step.duration)
    if expected is None:
        return plan.settings.default_deadline
    return expected + margin(plan, expected)


def expected_step_seconds(step: StepSpec) -> float | None:
    """How long one run of a step takes: its ``duration``, else by its own options (see
    ``expected_run_seconds``); None when not known."""
    if step.duration is not None:
        return step.duration
    try:
        return expected_run_seconds(step)
    except ValueError:
        return None


def estimated_seconds(plan: Plan) -> tuple[float, list[str]]:
    """How long the plan's steps take, every repeat one after the other, by their own
    options: (the seconds of the steps whose length is known, the names of the others)."""
    total = 0.0
    unknown: list[str] = []
    for step in plan.steps:
        seconds = expected_step_seconds(step)
        if seconds is None:
            unknown.append(step.name)
        else:
            total += seconds * step.repeat
    return total, unknown


def expected_run_seconds(step: StepSpec) -> float | None:
    """How long one run of a step takes by its own options; None when not known."""
    if step.command:
        return None
    if step.tool == "fio":
        return expected_seconds(fio_jobs(step.args, step.jobfile_text, step.name))
    if step.tool in ("iperf3", "iperf"):
        return iperf_seconds(step.args)
    if step.tool == "rados_bench":
        return rados_seconds(step.args)
    return None


def step_deadline(plan: Plan, step: StepSpec) -> float:
    """Seconds one run of ``step`` may take on a host (its clients', for iperf)."""
    return _step_deadline(plan, step, expected_run_seconds(step))


def session_deadline(plan: Plan) -> float:
    """Seconds the whole session may take: every run of every step, plus a margin. It bounds
    the monitors."""
    if not plan.steps:
        return plan.settings.default_deadline
    total = sum(step_deadline(plan, s) * s.repeat for s in plan.steps)
    return total + margin(plan, total)


def _tool_argv(spec: ToolSpec, program: str, args: tuple[str, ...], devices: tuple[str, ...],
               interval: float) -> list[str]:
    """The words of a catalogued tool other than fio and iperf."""
    if spec.name == "iostat":
        return [program, "-x", "-y", "-t", *args, *devices, f"{max(1, round(interval))}"]
    if spec.name == "diskstats":
        return [program, "-c", DISKSTATS_LOOP]
    if spec.name == "spdk_iostat":
        return [program, "-i", f"{interval:g}", *args]
    return [program, *spec.subcommand, *args]


#: /proc/diskstats once per interval, each snapshot after a ``--- EPOCH`` line (the format of
#: the diskstats parser); devices filtered when BENCHTUI_DEVICES lists some.
DISKSTATS_LOOP = (
    'while :; do printf "%s %s\\n" --- "$(date +%s.%N)"; '
    'if [ -n "$BENCHTUI_DEVICES" ]; then '
    """awk 'index(ENVIRON["BENCHTUI_DEVICES"], " " $3 " ")' /proc/diskstats; """
    'else cat /proc/diskstats; fi; sleep "$BENCHTUI_INTERVAL"; done'
)


def step_commands(plan: Plan, step: StepSpec, *, jobfile_path: str | None = None,
                  server_address: str | None = None, run: int = 1) -> list[RemoteCommand]:
    """The processes of run ``run`` (from 1) of ``step``: for iperf3/iperf the servers first
    (start them, then the clients), else one per host, each with its placeholders filled.
    ``jobfile_path``: where the session copies the jobfile (default ``default_jobfile_path``);
    ``server_address``: what iperf clients connect to (default: the step's
    ``server_address``, else the server host's address)."""
    spec = TOOLS.get(step.tool)
    if spec is not None and spec.client_server:
        address = server_address or step.server_address
        if not address:
            raise ValueError(f"step {step.name!r} needs a server address")
        return _iperf_commands(plan, step, spec, address, run)
    per_host_jobfile = step.jobfile_text is not None and has_placeholders(step.jobfile_text)
    return [_one_step_command(plan, step_for_host(plan, step, host, run), spec, host,
                              jobfile_path or default_jobfile_path(
                                  plan, step, host if per_host_jobfile else None))
            for host in step.hosts]


def _one_step_command(plan: Plan, step: StepSpec, spec: ToolSpec | None, host: str,
                      jobfile_path: str) -> RemoteCommand:
    deadline = step_deadline(plan, step)
    uploads: tuple[Upload, ...] = ()
    warnings: list[str] = []
    env: dict[str, str] = dict(step.env)
    line_buffered = False
    if step.command or spec is None:
        argv = list(step.command)
    else:
        program = step.executable or spec.executable or spec.name
        env = {**BASE_ENV, **spec.env, **step.env}
        line_buffered = spec.line_buffered
        if spec.name == "fio":
            remote = None
            if step.jobfile is not None:
                remote = jobfile_path
                uploads = (Upload(step.jobfile, remote, step.jobfile_text),)
            # a sweep's steps name their job after the sweep: the step label tells them apart
            argv, warnings = _fio_argv(program, f'step "{step.name}"', step.sweep or step.name,
                                       step.args, remote)
        else:
            if spec.name == "diskstats":
                env.update(BENCHTUI_DEVICES="", BENCHTUI_INTERVAL="1")
            argv = _tool_argv(spec, program, step.args, (), 1.0)
    return RemoteCommand(host=host, name=step.name, role=STEP, tool=step.tool,
                         parser=step.parser, argv=tuple(argv), deadline=deadline, env=env,
                         line_buffered=line_buffered, uploads=uploads,
                         warnings=tuple(warnings))


def monitor_commands(plan: Plan, monitor: MonitorSpec, *,
                     fallback_hosts: Collection[str] = ()) -> list[RemoteCommand]:
    """One process per host of ``monitor``, bounded by the session's deadline. On
    ``fallback_hosts`` (where the tool is missing) the tool's fallback runs instead (iostat ->
    /proc/diskstats)."""
    deadline = session_deadline(plan)
    out: list[RemoteCommand] = []
    template = monitor
    for host in template.hosts:
        monitor = monitor_for_host(plan, template, host)
        spec = TOOLS.get(monitor.tool)
        if spec is not None and spec.fallback and host in fallback_hosts and not monitor.command:
            spec = TOOLS[spec.fallback]
        warnings: list[str] = []
        env: dict[str, str] = dict(monitor.env)
        line_buffered = False
        tool, parser = monitor.tool, monitor.parser
        if monitor.command or spec is None:
            argv = list(monitor.command)
        else:
            if spec.name != monitor.tool:
                tool, parser = spec.name, spec.parser
            program = (monitor.executable if tool == monitor.tool else None) \
                or spec.executable or spec.name
            env = {**BASE_ENV, **spec.env, **monitor.env}
            line_buffered = spec.line_buffered
            if spec.name == "fio":
                argv, warnings = _fio_argv(program, f'monitor "{monitor.name}"', monitor.name,
                                           monitor.args, None)
            else:
                argv = _tool_argv(spec, program, monitor.args if spec.takes_args else (),
                                  monitor.devices, monitor.interval)
            if spec.name == "diskstats":
                devices = f" {' '.join(monitor.devices)} " if monitor.devices else ""
                env.update(BENCHTUI_DEVICES=devices, BENCHTUI_INTERVAL=f"{monitor.interval:g}")
        out.append(RemoteCommand(host=host, name=monitor.name, role=MONITOR, tool=tool,
                                 parser=parser, argv=tuple(argv), deadline=deadline, env=env,
                                 line_buffered=line_buffered, devices=monitor.devices,
                                 warnings=tuple(warnings)))
    return out


def plan_warnings(plan: Plan) -> list[tuple[str, str]]:
    """(step or monitor name, warning) for every option benchtui will drop or replace."""
    seen: list[tuple[str, str]] = []
    commands: list[RemoteCommand] = []
    for monitor in plan.monitors:
        commands += monitor_commands(plan, monitor)
    for step in plan.steps:
        commands += step_commands(plan, step, server_address=step.server_address or "-")
    for command in commands:
        for warning in command.warnings:
            if (command.name, warning) not in seen:
                seen.append((command.name, warning))
    return seen
