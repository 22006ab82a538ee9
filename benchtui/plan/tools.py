"""The tools a step or monitor can name, and what benchtui knows about each.

For every tool: the program it runs, the Debian package that provides it, how to ask it for
its version, the parser (registry name) that reads its output, and the options benchtui adds
so that the output arrives once a second, in a form the parser reads. ``docs/plans.md``
lists the same facts for users; ``command = "..."`` with ``parser = "..."`` runs anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from benchtui.plan.model import COMMAND_TOOL, MonitorSpec, Plan, StepSpec
from benchtui.plan.placeholders import substitute, values_for


@dataclass(frozen=True)
class ToolSpec:
    """What benchtui knows about one tool."""

    name: str
    #: The program, found on the host's PATH; None when the plan must give ``executable``.
    executable: str | None
    #: Words after the program (``rados bench ...``).
    subcommand: tuple[str, ...] = ()
    #: The Debian package that provides the program, when there is one.
    package: str | None = None
    #: How to get the program when it is missing (shown to the user).
    install: str = ""
    #: The command whose first line of output is the tool's version; None: none exists.
    version: tuple[str, ...] | None = None
    #: Parser registry name for the tool's output.
    parser: str = ""
    #: The options benchtui adds, as shown in the docs.
    added: str = ""
    #: Why they are added.
    why: str = ""
    #: Environment benchtui sets for the tool.
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: A step of this tool needs args (or a jobfile) to mean anything: an example of them.
    needs_args: str = ""
    #: Runs until stopped (a monitor by nature): as a step it needs ``duration``.
    runs_until_stopped: bool = False
    #: Runs between a server and clients (``server =``, ``clients =``); only as a step.
    client_server: bool = False
    #: Takes a list of devices (``devices = [...]``).
    takes_devices: bool = False
    #: Takes ``interval`` (seconds between reports); True for whole seconds only.
    takes_interval: bool = False
    whole_second_interval: bool = False
    #: Accepts ``jobfile =``.
    takes_jobfile: bool = False
    #: Its stdio output is block-buffered into a file or pipe: run it under ``stdbuf -oL``.
    line_buffered: bool = False
    #: The tool to run instead when this one is missing on a host (iostat -> diskstats).
    fallback: str | None = None
    #: Accepts ``args`` (diskstats is a fixed loop and takes none).
    takes_args: bool = True

    @property
    def install_hint(self) -> str:
        return self.install or (f"apt-get install {self.package}" if self.package else "")


def _apt(package: str) -> str:
    return f"apt-get install {package}"


TOOLS: Final[dict[str, ToolSpec]] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "fio", "fio", package="fio", version=("fio", "--version"), parser="fio-json",
            added="--status-interval=1 --output-format=json+ --eta=never (and --name=STEP "
                  "when the args define no job)",
            why="fio then prints a cumulative JSON document every second, with latency "
                "histograms, that benchtui turns into per-second IOPS, bandwidth and "
                "percentiles; a user --output-format, --output, --status-interval or --eta "
                "is replaced (with a warning).",
            needs_args='args = "--filename=/data/fio.dat --rw=randread --bs=4k --direct=1 '
                       '--runtime=60 --time_based" or jobfile = "jobs/randread.fio"',
            takes_jobfile=True),
        ToolSpec(
            "iostat", "iostat", package="sysstat", version=("iostat", "-V"), parser="iostat",
            added="-x -y -t [DEVICES] INTERVAL, environment S_TIME_FORMAT=ISO",
            why="extended per-device statistics every INTERVAL seconds (-x), without the "
                "since-boot report (-y), each report stamped with an ISO 8601 time (-t).",
            env={"S_TIME_FORMAT": "ISO"}, runs_until_stopped=True, takes_devices=True,
            takes_interval=True, whole_second_interval=True, fallback="diskstats"),
        ToolSpec(
            "diskstats", "sh", parser="diskstats", install="sh and cat are always there",
            added="a loop that prints /proc/diskstats every INTERVAL seconds",
            why="the same numbers as iostat where sysstat is not installed.",
            runs_until_stopped=True, takes_devices=True, takes_interval=True, takes_args=False),
        ToolSpec(
            "iperf3", "iperf3", package="iperf3", version=("iperf3", "--version"),
            parser="iperf3",
            added="server: -s -1 -i 1 --forceflush -p PORT (one server per client); "
                  "client: -c SERVER -i 1 --forceflush -p PORT",
            why="a report every second, written at once (--forceflush) instead of when the "
                "output buffer fills; an iperf3 server serves one client at a time, so each "
                "client gets its own server on its own port (PORT, PORT+1, ...).",
            client_server=True),
        ToolSpec(
            "iperf", "iperf", package="iperf", version=("iperf", "--version"), parser="iperf2",
            added="server: -s -i 1 -p PORT; client: -c SERVER -i 1 -p PORT",
            why="a report every second (iperf 2 flushes each line itself).",
            client_server=True),
        ToolSpec(
            "mbw", "mbw", package="mbw", version=("mbw", "-h"), parser="mbw",
            added="runs under stdbuf -oL",
            why="mbw writes through a stdio buffer: without it, lines arrive only at the end.",
            needs_args='args = "-n 10 512" (array size in MiB last)', line_buffered=True),
        ToolSpec(
            "rados_bench", "rados", subcommand=("bench",), package="ceph-common",
            version=("rados", "--version"), parser="rados-bench",
            added="runs as rados bench ARGS under stdbuf -oL",
            why="rados bench prints a line every second by itself.",
            needs_args='args = "-p test 60 write --no-cleanup"', line_buffered=True),
        ToolSpec(
            "rbd_bench", "rbd", subcommand=("bench",), package="ceph-common",
            version=("rbd", "--version"), parser="rbd-bench",
            added="runs as rbd bench ARGS under stdbuf -oL",
            why="rbd bench prints a line every second by itself.",
            needs_args='args = "--io-type write --io-size 4K --io-total 1G rbd/bench"',
            line_buffered=True),
        ToolSpec(
            "fbbench", "fbbench", parser="fbbench",
            install="fbbench is built with fastblock; give its path with executable = "
                    '"/path/to/fastblock/build/tools/fbbench"',
            added="runs under stdbuf -oL",
            why="fbbench prints a line every second by itself.",
            needs_args='args = "-o 172.31.77.144 -t 8001 -S 4096 -k 30 -m 0x8 -T write"',
            line_buffered=True),
        ToolSpec(
            "spdk_iostat", None, parser="spdk-iostat",
            install='SPDK\'s scripts/iostat.py: give its path with executable = '
                    '"/path/to/spdk/scripts/iostat.py"',
            added="-i INTERVAL, environment PYTHONUNBUFFERED=1",
            why="a report every INTERVAL seconds, written at once.",
            env={"PYTHONUNBUFFERED": "1"}, runs_until_stopped=True, takes_interval=True),
        ToolSpec(
            "unixbench", None, parser="unixbench",
            install="UnixBench is built from https://github.com/kdlucas/byte-unixbench; give "
                    'the path of its Run script with executable = "/path/to/UnixBench/Run"',
            added="nothing", why="UnixBench prints its results at the end."),
    )
}


def tool_names() -> list[str]:
    """Every name ``tool =`` accepts, besides ``command``."""
    return sorted(TOOLS)


def get_tool(name: str) -> ToolSpec:
    """The catalogue entry of ``name`` (KeyError when unknown)."""
    return TOOLS[name]


def executable_of(tool: str, executable: str | None, command: tuple[str, ...]) -> str | None:
    """The program a step or monitor runs: its command's first word, its ``executable``,
    else the tool's usual program."""
    if command:
        return command[0]
    if executable:
        return executable
    spec = TOOLS.get(tool)
    return spec.executable if spec else None


def programs_of(spec: MonitorSpec | StepSpec, host: str | None = None, session: str = ""
                ) -> list[str]:
    """The programs a step or monitor needs on its hosts: its own, and ``stdbuf`` when
    benchtui wraps the tool in it. With ``host``, the program as that host runs it (its
    placeholders filled: ``executable = "/opt/{host}/fio"``)."""
    programs = []
    program = executable_of(spec.tool, spec.executable, spec.command)
    if program and host is not None:
        step = isinstance(spec, StepSpec)
        program = substitute(program, values_for(
            host=host, index=spec.hosts.index(host), session=session,
            step=spec.name if step else None, run=1 if step else None))
    if program:
        programs.append(program)
    catalogued = TOOLS.get(spec.tool)
    if catalogued and catalogued.line_buffered and not spec.command:
        programs.append("stdbuf")
    return programs


def executables_needed(plan: Plan) -> dict[str, dict[str, str]]:
    """host -> {program -> tool}: the programs each host must have (``command -v`` them and
    put what is found in the facts' ``tools``). The transport's own needs (``timeout``,
    ``setsid``, ``tail``) are not included."""
    needed: dict[str, dict[str, str]] = {h: {} for h in plan.hosts}
    for spec in plan.runnables():
        for host in spec.hosts:
            for program in programs_of(spec, host, plan.name):
                needed[host].setdefault(program, spec.tool)
    return needed


def known_tool_list() -> str:
    """``fio, iostat, ...`` for messages."""
    return ", ".join(tool_names())


__all__ = [
    "COMMAND_TOOL", "TOOLS", "ToolSpec", "executable_of", "executables_needed", "get_tool",
    "known_tool_list", "programs_of", "tool_names",
]
