"""A plan as typed, validated objects: what ``loader.load_plan`` returns.

Everything here is already checked and resolved: host names in steps and monitors exist,
``"all"`` is expanded, defaults are filled in, jobfile paths are absolute and their text is
read, args are split into words, a step with ``matrix`` is expanded into one ordinary step per
combination of its values (``sweep``). Times are seconds, sizes bytes. The objects are frozen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.model.fio_buckets import DEFAULT_BITS
from benchtui.plan.grace import DEFAULT_CONTROLLER_GRACE

#: The pseudo tool of a step or monitor that runs ``command`` as written.
COMMAND_TOOL = "command"

#: Where remote output, pid files and copied jobfiles go, unless ``[session] remote_dir`` says.
DEFAULT_REMOTE_DIR = "/var/tmp/benchtui"
#: Added to every deadline derived from a plan (seconds), besides 10% of the derived time.
DEFAULT_DEADLINE_MARGIN = 60.0
#: The deadline of a command whose run time cannot be told from the plan (seconds).
DEFAULT_DEADLINE = 7200.0
#: Seconds a step's or monitor's tool may print nothing before benchtui warns (``silence``).
DEFAULT_SILENCE = 60.0
#: ``silence`` is never less than this many of the tool's intervals between reports.
SILENCE_INTERVALS = 2


@dataclass(frozen=True)
class Settings:
    """The ``[session]`` table."""

    name: str
    description: str = ""
    remote_dir: str = DEFAULT_REMOTE_DIR
    deadline_margin: float = DEFAULT_DEADLINE_MARGIN
    default_deadline: float = DEFAULT_DEADLINE
    #: Resolution of the latency histograms kept (fio's bucket scheme at this many sub-bucket
    #: bits per power of two; 6 is fio's own, exact): ``benchtui.model.fio_buckets``.
    histogram_bits: int = DEFAULT_BITS
    #: Seconds a host lets the session's processes go on once the controller is gone (its
    #: connection closed and not back, or its process dead); ``math.inf``: "off".
    controller_grace: float = DEFAULT_CONTROLLER_GRACE
    #: Seconds a host may stay unreachable before the session gives it up; None: the
    #: default (``session.hosts.reconnect_window``).
    reconnect_window: float | None = None


@dataclass(frozen=True)
class HostSpec:
    """One ``[hosts.NAME]`` table: how to reach a host, and what may be done to it."""

    name: str
    address: str | None = None
    ssh_alias: str | None = None
    user: str | None = None
    port: int | None = None
    identity: Path | None = None
    jump: str | None = None
    local: bool = False
    #: Block devices fio may write to (``/dev/...``); anything else is refused.
    allow_destructive: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: Line of the host's table in the plan file (for later messages), when known.
    line: int | None = field(default=None, compare=False)

    @property
    def target(self) -> str:
        """What to connect to: the address, else the OpenSSH alias, else ``localhost``."""
        return self.address or self.ssh_alias or "localhost"


@dataclass(frozen=True)
class MonitorSpec:
    """One ``[[monitor]]``: a tool that runs on its hosts for the whole session."""

    name: str
    tool: str
    hosts: tuple[str, ...]
    parser: str
    devices: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    #: ``command = "..."`` split into words; run as written, nothing added.
    command: tuple[str, ...] = ()
    #: The program to run instead of the tool's usual one (a path), when given.
    executable: str | None = None
    interval: float = 1.0
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: Seconds its tool may print nothing before benchtui warns (``math.inf``: "off").
    silence: float = DEFAULT_SILENCE
    index: int = 0
    line: int | None = field(default=None, compare=False)

    @property
    def silence_limit(self) -> float:
        """``silence``, but never less than two of the tool's intervals."""
        return max(self.silence, SILENCE_INTERVALS * self.interval)


#: What a report shows of a step's repeats (``select``): the typical run, the best, every run.
SELECT_CHOICES = ("median", "best", "all")
DEFAULT_SELECT = "all"


@dataclass(frozen=True)
class StepSpec:
    """One ``[[step]]``: a workload that runs on all its hosts at once; steps run in order."""

    name: str
    tool: str
    #: Every host the step runs on; for iperf3/iperf the server first, then the clients.
    hosts: tuple[str, ...]
    parser: str
    args: tuple[str, ...] = ()
    jobfile: Path | None = None
    jobfile_text: str | None = None
    repeat: int = 1
    server: str | None = None
    clients: tuple[str, ...] = ()
    server_args: tuple[str, ...] = ()
    #: The address clients connect to (iperf3/iperf), when the plan or the host gives one.
    server_address: str | None = None
    command: tuple[str, ...] = ()
    executable: str | None = None
    #: Deadline override: the step fails if it runs longer (seconds).
    timeout: float | None = None
    #: The step is stopped, successfully, after this long (seconds).
    duration: float | None = None
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: What a report shows of the repeats: one of ``SELECT_CHOICES``.
    select: str = DEFAULT_SELECT
    #: The name of the ``[[step]]`` with ``matrix`` this step was expanded from; None for a
    #: step written as it runs.
    sweep: str | None = None
    #: This step's combination of its sweep's values: fio option -> value as fio reads it,
    #: in the plan's key order (already in ``args`` and ``jobfile_text``); empty: no sweep.
    matrix: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: Seconds its tool may print nothing before benchtui warns (``math.inf``: "off").
    silence: float = DEFAULT_SILENCE
    #: Position of the step's ``[[step]]`` table (the steps of one sweep share it).
    index: int = 0
    line: int | None = field(default=None, compare=False)

    @property
    def is_client_server(self) -> bool:
        return self.server is not None

    @property
    def silence_limit(self) -> float:
        """``silence``, but never less than two of the tool's intervals (a step's tools
        report every second)."""
        return max(self.silence, SILENCE_INTERVALS * 1.0)


@dataclass(frozen=True)
class Plan:
    """A whole plan file."""

    name: str
    path: Path
    hosts: Mapping[str, HostSpec]
    monitors: tuple[MonitorSpec, ...]
    steps: tuple[StepSpec, ...]
    settings: Settings

    def host(self, name: str) -> HostSpec:
        return self.hosts[name]

    def step(self, name: str) -> StepSpec:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(name)

    def host_names(self) -> tuple[str, ...]:
        return tuple(self.hosts)

    def runnables(self) -> tuple[MonitorSpec | StepSpec, ...]:
        """Monitors then steps: everything the plan runs."""
        return (*self.monitors, *self.steps)

    def hosts_in_use(self) -> tuple[str, ...]:
        """The hosts some step or monitor runs on, in plan order."""
        used = {h for s in self.runnables() for h in s.hosts}
        return tuple(h for h in self.hosts if h in used)
