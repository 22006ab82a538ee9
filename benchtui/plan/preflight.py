"""Checks before anything runs: ``preflight(plan, facts) -> [Finding]``.

Pure: the facts are gathered by the session over SSH beforehand (``PreflightFacts`` below says
what each field is and how to get it; ``paths_to_inspect`` and ``tools.executables_needed``
say which files and programs to look at). Errors stop a host (nothing starts unless the user
says ``--keep-going``); warnings are printed. A host with no facts (unreachable) gets only
the checks that need none: writes to block devices not in ``allow_destructive`` are refused
whatever the facts say.

The rules come from the seeds' lessons: writing to a raw device destroys it (fio only refuses
mounted ones); buffered I/O on a file that fits in RAM measures the page cache; iodepth does
nothing for synchronous engines; libaio without O_DIRECT is synchronous; SSDs need runs longer
than their caches; reading a file fio has just laid out is not reading real data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from benchtui.plan.commands import monitor_for_host, plan_warnings, step_for_host
from benchtui.plan.findings import ERROR as ERROR  # noqa: PLC0414 (re-exported)
from benchtui.plan.findings import WARNING as WARNING  # noqa: PLC0414
from benchtui.plan.findings import Finding as Finding  # noqa: PLC0414
from benchtui.plan.fio_check import args_options, jobfile_options, newer_options, release
from benchtui.plan.fio_options import READ_MODES, SYNC_IOENGINES, FioJob, fio_jobs
from benchtui.plan.model import DEFAULT_SELECT, MonitorSpec, Plan, StepSpec
from benchtui.plan.placeholders import has_placeholders
from benchtui.plan.same_machine import same_machines
from benchtui.plan.tools import TOOLS, programs_of

#: Buffered I/O is flagged when the data is smaller than this many times the host's RAM.
RAM_FACTOR = 2
#: Runs shorter than this on an SSD are flagged (seconds).
SSD_MIN_RUNTIME = 60.0
#: /dev paths that are not block devices.
_NOT_BLOCK_PREFIXES = ("/dev/shm/", "/dev/mqueue/", "/dev/hugepages/", "/dev/pts/", "/dev/fd/")
_NOT_BLOCK = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                        "/dev/stdin", "/dev/stdout", "/dev/stderr"})
#: Engines that go through files and the page cache (others talk to Ceph, the network, ...).
_FILE_ENGINES = SYNC_IOENGINES | {"libaio", "io_uring", "posixaio", "psyncv2"}


class BlockDeviceFacts(TypedDict, total=False):
    """One entry of ``/sys/block`` (keyed by kernel name, ``nvme1n1``)."""

    name: str
    size_bytes: int          # /sys/block/X/size x 512
    rotational: bool         # /sys/block/X/queue/rotational == 1
    scheduler: str
    read_ahead_kb: int
    model: str
    partitions: list[str]    # optional: kernel names of its partitions (nvme1n1p1, ...)
    holders: list[str]       # optional: /sys/block/X/holders (dm-0: LVM, RAID, dm-crypt)


class MountFacts(TypedDict, total=False):
    """One line of /proc/mounts whose source is a device (swap from /proc/swaps too)."""

    device: str              # /dev/nvme0n1p2
    mountpoint: str
    fstype: str


class FileFacts(TypedDict, total=False):
    """What the host says about one path of ``paths_to_inspect``."""

    exists: bool             # [ -e PATH ]
    size_bytes: int          # stat -L -c %s (blockdev --getsize64 for a device)
    real_path: str           # readlink -f PATH (resolves /dev/disk/by-id/... links)
    device: str              # kernel name of the device holding the file (df), e.g. nvme1n1p1


class PreflightFacts(TypedDict, total=False):
    """Per host: the facts preflight reads. Every key is optional; a missing key skips the
    checks that need it. The session's HostFacts has the same keys and shapes."""

    mem_bytes: int
    block_devices: dict[str, BlockDeviceFacts]
    mounts: list[MountFacts]
    tools: dict[str, str]    # program -> first line of its version output; absent = missing
    files: dict[str, FileFacts]
    machine_id: str          # /etc/machine-id
    boot_id: str             # /proc/sys/kernel/random/boot_id (one per running kernel)
    host_key: str            # the SSH host key's fingerprint (SSH hosts only)


def is_block_device_path(path: str) -> bool:
    """``/dev/...`` other than pseudo devices and /dev/shm files."""
    return path.startswith("/dev/") and path not in _NOT_BLOCK \
        and not path.startswith(_NOT_BLOCK_PREFIXES)


def is_partition_of(part: str, disk: str) -> bool:
    """``sda1`` of ``sda``, ``nvme1n1p2`` of ``nvme1n1`` (not ``nvme1n10``)."""
    rest = part[len(disk):]
    if not part.startswith(disk) or not rest:
        return False
    if disk[-1:].isdigit():
        return rest.startswith("p") and rest[1:].isdigit()
    return rest.isdigit()


def _size(n: float) -> str:
    for unit, scale in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


class _Facts:
    """Defensive, typed access to one host's facts (any key may be missing or damaged)."""

    def __init__(self, raw: Mapping[str, Any] | None) -> None:
        self.known = raw is not None
        self.raw: Mapping[str, Any] = raw or {}

    def _dict(self, key: str) -> Mapping[str, Any] | None:
        value = self.raw.get(key)
        return value if isinstance(value, Mapping) else None

    @property
    def tools(self) -> Mapping[str, Any] | None:
        return self._dict("tools")

    @property
    def mem_bytes(self) -> int | None:
        value = self.raw.get("mem_bytes")
        return value if isinstance(value, int) and value > 0 else None

    def devices(self) -> Mapping[str, Any]:
        return self._dict("block_devices") or {}

    def file(self, path: str) -> Mapping[str, Any]:
        files = self._dict("files") or {}
        entry = files.get(path)
        return entry if isinstance(entry, Mapping) else {}

    def real_path(self, path: str) -> str:
        real = self.file(path).get("real_path")
        return real if isinstance(real, str) and real else path

    def disk_of(self, name: str) -> str | None:
        """The disk a kernel name (disk or partition) belongs to, when known."""
        devices = self.devices()
        if name in devices:
            return name
        for disk, info in devices.items():
            parts = info.get("partitions") if isinstance(info, Mapping) else None
            if isinstance(parts, list) and name in parts:
                return str(disk)
        for disk in devices:
            if is_partition_of(name, str(disk)):
                return str(disk)
        return None

    def disk_info(self, name: str | None) -> Mapping[str, Any]:
        disk = self.disk_of(name) if name else None
        info = self.devices().get(disk) if disk else None
        return info if isinstance(info, Mapping) else {}

    def in_use(self, device: str) -> str | None:
        """Why a device must not be written to: mounted (it or a partition), or held."""
        name = self.real_path(device).removeprefix("/dev/")
        mounts = self.raw.get("mounts")
        for mount in mounts if isinstance(mounts, list) else []:
            source = mount.get("device", "") if isinstance(mount, Mapping) else ""
            if not isinstance(source, str) or not source.startswith("/dev/"):
                continue
            mounted = source.removeprefix("/dev/")
            if mounted == name or is_partition_of(mounted, name):
                return f"mounted at {mount.get('mountpoint', '?')}"
        holders = self.disk_info(name).get("holders") if name in self.devices() else None
        if isinstance(holders, list) and holders:
            return f"in use by {', '.join(map(str, holders))} (LVM, RAID or dm-crypt)"
        return None

    def rotational(self, path: str) -> bool | None:
        """Whether the storage under ``path`` spins; None when unknown."""
        if is_block_device_path(path):
            name: str | None = self.real_path(path).removeprefix("/dev/")
        else:
            device = self.file(path).get("device")
            name = device.removeprefix("/dev/") if isinstance(device, str) else None
        info = self.disk_info(name)
        if isinstance(info.get("rotational"), bool):
            return bool(info["rotational"])
        flags = [d.get("rotational") for d in self.devices().values() if isinstance(d, Mapping)]
        if flags and all(f is False for f in flags):
            return False
        return None

    def data_size(self, job: FioJob, path: str) -> int | None:
        if job.size is not None:
            return job.size
        size = self.file(path).get("size_bytes")
        if isinstance(size, int) and size > 0:
            return size
        size = self.disk_info(path.removeprefix("/dev/")).get("size_bytes") \
            if is_block_device_path(path) else None
        return size if isinstance(size, int) and size > 0 else None


def _fio_runnables(plan: Plan
                   ) -> list[tuple[str, MonitorSpec | StepSpec, dict[str, list[FioJob]]]]:
    """(what, step or monitor, host -> the fio jobs it runs there): placeholders filled per
    host (its first run), so that each host's files and devices are the ones checked."""
    out: list[tuple[str, MonitorSpec | StepSpec, dict[str, list[FioJob]]]] = []
    for spec in plan.runnables():
        if spec.tool != "fio" or spec.command:
            continue
        kind = "step" if isinstance(spec, StepSpec) else "monitor"
        text = spec.jobfile_text if isinstance(spec, StepSpec) else None
        if not any(has_placeholders(t) for t in (*spec.args, text or "")):
            jobs = fio_jobs(spec.args, text, spec.name)
            out.append((f'{kind} "{spec.name}"', spec, dict.fromkeys(spec.hosts, jobs)))
            continue
        per_host: dict[str, list[FioJob]] = {}
        for host in spec.hosts:
            if isinstance(spec, StepSpec):
                filled_step = step_for_host(plan, spec, host)
                per_host[host] = fio_jobs(filled_step.args, filled_step.jobfile_text, spec.name)
            else:
                per_host[host] = fio_jobs(monitor_for_host(plan, spec, host).args, None,
                                          spec.name)
        out.append((f'{kind} "{spec.name}"', spec, per_host))
    return out


def paths_to_inspect(plan: Plan) -> dict[str, list[str]]:
    """host -> the paths whose ``FileFacts`` preflight wants: fio's files and devices, and
    the devices of ``allow_destructive``."""
    paths: dict[str, list[str]] = {h: list(spec.allow_destructive)
                                   for h, spec in plan.hosts.items()}
    for _, spec, by_host in _fio_runnables(plan):
        for host in spec.hosts:
            for job in by_host[host]:
                paths[host] += [p for p in job.filenames if p not in paths[host]]
    return paths


def fallback_hosts(plan: Plan, monitor: MonitorSpec,
                   facts: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The hosts where ``monitor``'s tool is missing and its fallback runs instead."""
    spec = TOOLS.get(monitor.tool)
    if spec is None or spec.fallback is None or monitor.command or monitor.executable:
        return set()
    out = set()
    for host in monitor.hosts:
        tools = _Facts(facts.get(host)).tools
        if tools is not None and spec.executable not in tools:
            out.add(host)
    return out


def preflight(plan: Plan, facts: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """Every problem found in ``plan`` given each host's ``facts`` (host name -> facts, in
    the shape of ``PreflightFacts``); errors first, then warnings, in plan order."""
    findings = _missing_programs(plan, facts)
    findings += _fio_releases(plan, facts)
    findings += _fio_checks(plan, facts)
    findings += [Finding(None, name, WARNING, warning) for name, warning in plan_warnings(plan)]
    findings += _select_warnings(plan)
    findings += same_machines(plan, facts)
    unique = _said_once_per_sweep(plan, list(dict.fromkeys(findings)))
    return [f for f in unique if f.severity == ERROR] + \
        [f for f in unique if f.severity != ERROR]


def _said_once_per_sweep(plan: Plan, findings: list[Finding]) -> list[Finding]:
    """A finding that every step of a sweep has (the same words but for the step's name) is
    said once, for the sweep: ``step "randread" (every step of the sweep) ...``."""
    sweeps: dict[str, list[str]] = {}
    for step in plan.steps:
        if step.sweep is not None:
            sweeps.setdefault(step.sweep, []).append(step.name)
    owner = {name: sweep for sweep, names in sweeps.items() for name in names}

    def generic(f: Finding) -> tuple[str, str | None, str, str, str] | None:
        sweep = owner.get(f.step or "")
        if sweep is None or f.step is None:
            return None
        quoted = f'"{f.step}"'
        return (sweep, f.host, f.severity, f.message.replace(quoted, "\0"),
                f.hint.replace(quoted, "\0"))

    steps_of: dict[tuple[str, str | None, str, str, str], set[str]] = {}
    for f in findings:
        key = generic(f)
        if key is not None and f.step is not None:
            steps_of.setdefault(key, set()).add(f.step)
    out: list[Finding] = []
    said: set[tuple[str, str | None, str, str, str]] = set()
    for f in findings:
        key = generic(f)
        if key is None or len(steps_of[key]) < len(sweeps[key[0]]):
            out.append(f)
        elif key not in said:
            said.add(key)
            sweep, host, severity, message, hint = key
            named = f'"{sweep}" (every step of the sweep)'
            out.append(Finding(host, sweep, severity, message.replace("\0", named),
                               hint.replace("\0", named)))
    return out


def _select_warnings(plan: Plan) -> list[Finding]:
    """``select = "median"`` or ``"best"`` on a step that runs once picks nothing: said once
    per ``[[step]]`` (a sweep's steps share it)."""
    said: dict[str, Finding] = {}
    for step in plan.steps:
        name = step.sweep or step.name
        if step.repeat == 1 and step.select != DEFAULT_SELECT and name not in said:
            said[name] = Finding(None, name, WARNING,
                                 f'step "{name}" has select = "{step.select}" but runs once',
                                 "select picks among repeats: add repeat = 3 (or more)")
    return list(said.values())


def _missing_programs(plan: Plan, facts: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    users: dict[tuple[str, str], list[MonitorSpec | StepSpec]] = {}
    for spec in plan.runnables():
        for host in spec.hosts:
            for program in programs_of(spec, host, plan.name):
                users.setdefault((host, program), []).append(spec)
    findings = []
    for (host, program), specs in users.items():
        tools = _Facts(facts.get(host)).tools
        if tools is None or program in tools:
            continue
        first = specs[0]
        catalogued = TOOLS.get(first.tool)
        if program == "stdbuf":
            hint = "apt-get install coreutils"
        elif catalogued and program == catalogued.executable:
            hint = catalogued.install_hint
        else:
            kind = "step" if isinstance(first, StepSpec) else "monitor"
            hint = f'check the program of {kind} "{first.name}"'
        fallback = catalogued.fallback if catalogued else None
        if fallback and all(isinstance(s, MonitorSpec) and not s.executable for s in specs):
            findings.append(Finding(host, first.name, WARNING,
                                    f"{program} is not installed on {host}: reading "
                                    f"{'/proc/diskstats' if fallback == 'diskstats' else fallback}"
                                    " instead", hint))
            continue
        step = next((s.name for s in specs if isinstance(s, StepSpec)), first.name)
        findings.append(Finding(host, step, ERROR, f"{program} is not installed on {host}",
                                hint))
    return findings


def _fio_releases(plan: Plan, facts: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """An option of a fio release newer than a host's fio (``fio_check.newer_options``): an
    error on that host, naming the option and the release that brought it."""
    findings = []
    for what, spec, _ in _fio_runnables(plan):
        text = spec.jobfile_text if isinstance(spec, StepSpec) else None
        newer = newer_options(args_options(spec.args) + jobfile_options(text or ""))
        for host in spec.hosts if newer else ():
            tools = _Facts(facts.get(host)).tools or {}
            version = tools.get(programs_of(spec, host, plan.name)[0])
            have = release(version) if isinstance(version, str) else None
            lacking = [f"{name} (since {since})" for name, since in newer.items()
                       if have is not None and (release(since) or (0, 0)) > have]
            if lacking:
                findings.append(Finding(
                    host, spec.name, ERROR, f"{what} uses fio options that {version} on "
                    f"{host} does not have: {', '.join(lacking)}",
                    f"install a newer fio on {host}, or remove the option"))
    return findings


@dataclass(frozen=True)
class _Run:
    """One fio step or monitor on one host."""

    what: str
    name: str
    host: str
    jobs: list[FioJob]
    facts: _Facts

    def label(self, job: FioJob) -> str:
        return f'{self.what} (job "{job.name}")' if len(self.jobs) > 1 else self.what


def _fio_checks(plan: Plan, facts: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    findings: list[Finding] = []
    written: dict[str, set[str]] = {h: set() for h in plan.hosts}
    for what, spec, by_host in _fio_runnables(plan):
        findings += _engine_warnings(what, spec.name, by_host[spec.hosts[0]])
        for host in spec.hosts:
            jobs = by_host[host]
            host_facts = _Facts(facts.get(host))
            allowed = {host_facts.real_path(p) for p in plan.hosts[host].allow_destructive}
            allowed |= set(plan.hosts[host].allow_destructive)
            run = _Run(what, spec.name, host, jobs, host_facts)
            for job in jobs:
                findings += _device_checks(run, job, allowed)
                if host_facts.known:
                    findings += _host_warnings(run, job, written[host])
            for job in jobs:
                if job.writes:
                    written[host].update(job.filenames)
    return findings


def _device_checks(run: _Run, job: FioJob, allowed: set[str]) -> list[Finding]:
    what, name, host, facts = run.what, run.name, run.host, run.facts
    out = []
    for path in job.filenames:
        if not job.writes or not is_block_device_path(path):
            continue
        busy = facts.in_use(path)
        if busy and busy.startswith("mounted"):
            mountpoint = busy.removeprefix("mounted at ").rstrip("/")
            out.append(Finding(host, name, ERROR,
                               f"{what} would write to {path} on {host}, which is {busy}",
                               "writing to a mounted device destroys its filesystem and "
                               "benchtui always refuses it; test a file on it instead "
                               f"(filename={mountpoint}/fio.dat)"))
        elif busy:
            out.append(Finding(host, name, ERROR,
                               f"{what} would write to {path} on {host}, which is {busy}",
                               "benchtui always refuses to write to a device in use"))
        elif path not in allowed and facts.real_path(path) not in allowed:
            out.append(Finding(host, name, ERROR,
                               f"{what} would write to {path} on {host} and destroy what is "
                               "on it",
                               f'if that is intended, add allow_destructive = ["{path}"] to '
                               f"[hosts.{host}]"))
    return out


def _engine_warnings(what: str, name: str, jobs: list[FioJob]) -> list[Finding]:
    out = []
    for job in jobs:
        label = f'{what} (job "{job.name}")' if len(jobs) > 1 else what
        engine = job.ioengine
        if job.iodepth > 1 and engine in SYNC_IOENGINES:
            default = " (fio's default)" if job.get("ioengine") is None else ""
            out.append(Finding(None, name, WARNING,
                               f"{label}: iodepth={job.iodepth} has no effect with the "
                               f"synchronous ioengine {engine}{default}",
                               "use ioengine=libaio or io_uring with direct=1, or raise "
                               "numjobs instead"))
        if engine in ("libaio", "io_uring") and not job.direct:
            effect = ("submits synchronously and goes through the page cache"
                      if engine == "libaio" else "goes through the page cache")
            out.append(Finding(None, name, WARNING,
                               f"{label}: {engine} without direct=1 {effect}", "add direct=1"))
    return out


def _host_warnings(run: _Run, job: FioJob, written: set[str]) -> list[Finding]:
    name, host, facts = run.name, run.host, run.facts
    out = []
    label = run.label(job)
    targets = job.filenames
    mem = facts.mem_bytes
    if not job.direct and job.ioengine in _FILE_ENGINES and mem:
        for path in targets:
            size = facts.data_size(job, path)
            if size is not None and size < RAM_FACTOR * mem:
                out.append(Finding(host, name, WARNING,
                                   f"{label} on {host} uses buffered I/O (no direct=1) over "
                                   f"{_size(size)} of {path}, less than {RAM_FACTOR}x the "
                                   f"{_size(mem)} of RAM: the page cache will serve reads "
                                   "and absorb writes",
                                   "add direct=1, or make the test data several times larger "
                                   "than RAM"))
    runtime = job.runtime
    if runtime is not None and runtime < SSD_MIN_RUNTIME:
        for path in targets[:1]:
            if facts.rotational(path) is False:
                out.append(Finding(host, name, WARNING,
                                   f"{label} runs only {runtime:g} s on {host}'s SSD: short "
                                   "runs on SSDs measure their caches, not the steady state",
                                   "run at least 60 s (e.g. --runtime=300 --time_based) and "
                                   "repeat the step (repeat = 3)"))
    if job.rw in READ_MODES:
        earlier = {p for j in run.jobs if j.group < job.group and j.writes for p in j.filenames}
        for path in targets:
            if is_block_device_path(path) or path in written or path in earlier:
                continue
            if facts.file(path).get("exists") is False:
                out.append(Finding(host, name, WARNING,
                                   f"{label} reads {path} on {host}, which does not exist "
                                   "yet: fio lays it out first, so the reads hit freshly "
                                   "written (or sparse) data, not data as it is really stored",
                                   "write the file in an earlier step (rw=write over its whole "
                                   "size), or point filename at existing data"))
    return out
