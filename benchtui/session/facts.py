"""Host facts: what the seed reports all start with, gathered by one shell script per host.

The script is POSIX sh and reads only /proc, /sys and tool version commands, so it runs the same
on every Linux host, over SSH or locally. It prints tagged, tab-separated lines that
``parse_facts`` turns into a ``HostFacts`` dict (JSON-ready; base units: bytes).
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import NotRequired, TypedDict

from benchtui.plan.model import Plan
from benchtui.plan.preflight import paths_to_inspect
from benchtui.plan.tools import TOOLS, executables_needed
from benchtui.transport import Transport

#: Seconds the facts script may run on a host.
FACTS_TIMEOUT = 30.0


class BlockDevice(TypedDict):
    name: str
    size_bytes: int
    rotational: bool
    scheduler: str
    read_ahead_kb: int
    model: str


class Mount(TypedDict):
    device: str
    mountpoint: str
    fstype: str


class FileFacts(TypedDict, total=False):
    exists: bool
    size_bytes: int
    real_path: str
    device: str


class HostFacts(TypedDict):
    hostname: str
    kernel: str
    arch: str
    os: str
    cpu_model: str
    cpu_count: int
    mem_bytes: int
    block_devices: dict[str, BlockDevice]
    mounts: list[Mount]
    tools: dict[str, str]
    tool_paths: dict[str, str]
    files: dict[str, FileFacts]
    #: /etc/machine-id and the running kernel's boot id: two plan hosts with the same are one
    #: machine (preflight warns). Absent from facts recorded before they were gathered.
    machine_id: NotRequired[str]
    boot_id: NotRequired[str]
    #: The fingerprint of the SSH host key the host presented (SSH hosts only).
    host_key: NotRequired[str]


def facts_script(programs: Mapping[str, Sequence[str] | None],
                 paths: Iterable[str] = ()) -> str:
    """The shell script that prints a host's facts (tagged lines, see ``parse_facts``):
    system facts, where each program is and its version (``programs``: program -> the argv
    whose first line of output is its version, or None for ``PROGRAM --version``), and what
    is at each of ``paths`` (fio's files and devices: exists, size, real path, the device
    holding it). Every value from the plan is quoted."""
    lines = [
        "LC_ALL=C; export LC_ALL",
        'printf "K\\thostname\\t%s\\n" "$(uname -n)"',
        'printf "K\\tkernel\\t%s\\n" "$(uname -r)"',
        'printf "K\\tarch\\t%s\\n" "$(uname -m)"',
        'printf "K\\tmachine_id\\t%s\\n" "$(cat /etc/machine-id 2>/dev/null)"',
        'printf "K\\tboot_id\\t%s\\n" "$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"',
        "if [ -r /etc/os-release ]; then . /etc/os-release; "
        'printf "K\\tos\\t%s\\n" "${PRETTY_NAME:-$NAME}"; fi',
        'printf "K\\tcpu_model\\t%s\\n" "$(sed -n \'s/^model name[[:space:]]*: //p\' '
        '/proc/cpuinfo | head -n 1)"',
        'printf "K\\tcpu_count\\t%s\\n" "$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)"',
        'printf "K\\tmem_kb\\t%s\\n" "$(sed -n \'s/^MemTotal:[[:space:]]*\\([0-9]*\\).*/\\1/p\' '
        '/proc/meminfo)"',
        "for d in /sys/block/*; do [ -e \"$d/size\" ] || continue; n=${d##*/}; "
        "[ \"$(cat \"$d/size\")\" = 0 ] && continue; "
        'printf "D\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n" "$n" "$(cat "$d/size" 2>/dev/null)" '
        '"$(cat "$d/queue/rotational" 2>/dev/null)" "$(cat "$d/queue/scheduler" 2>/dev/null)" '
        '"$(cat "$d/queue/read_ahead_kb" 2>/dev/null)" '
        '"$(cat "$d/device/model" 2>/dev/null | tr -s " " | sed "s/ *$//")"; done',
        "while read -r dev mnt fs rest; do "
        'case "$dev" in /dev/*) printf "M\\t%s\\t%s\\t%s\\n" "$dev" "$mnt" "$fs";; esac; '
        "done < /proc/mounts",
    ]
    for tool, argv in sorted(programs.items()):
        version = shlex.join(argv) if argv else f"{shlex.quote(tool)} --version"
        q = shlex.quote(tool)
        lines.append(
            f'if p=$(command -v {q} 2>/dev/null); then printf "T\\t%s\\t%s\\t%s\\n" {q} "$p" '
            f'"$({version} 2>&1 | grep -v "^ *$" | head -n 1)"; '
            f'else printf "T\\t%s\\t\\t\\n" {q}; fi'
        )
    for path in dict.fromkeys(paths):
        lines.append(
            f"f={shlex.quote(path)}; "
            'if [ -e "$f" ]; then r=$(readlink -f -- "$f"); '
            'if [ -b "$r" ]; then s=$(cat "/sys/class/block/${r##*/}/size" 2>/dev/null); '
            's=$(( ${s:-0} * 512 )); d=${r##*/}; '
            'else s=$(stat -L -c %s -- "$f" 2>/dev/null); '
            'd=$(df -P -- "$f" 2>/dev/null | awk \'NR==2{print $1}\'); '
            'd=$(readlink -f -- "$d" 2>/dev/null || echo "$d"); d=${d##*/}; fi; '
            'printf "F\\t%s\\t1\\t%s\\t%s\\t%s\\n" "$f" "$s" "$r" "$d"; '
            'else printf "F\\t%s\\t0\\t\\t\\t\\n" "$f"; fi'
        )
    return "\n".join(lines) + "\n"


#: A program that has no ``--version`` answers it with its usage or a complaint (dash:
#: ``sh: 0: Illegal option --``): that is no version, and is kept as none.
_REFUSED = re.compile(r"(illegal|invalid|unrecognized|unknown) option|^usage:|option requires",
                      re.IGNORECASE)


def _int(text: str, default: int = 0) -> int:
    try:
        return int(text.strip())
    except ValueError:
        return default


def _scheduler(text: str) -> str:
    """"mq-deadline kyber [bfq] none" -> "bfq"; "none" -> "none"."""
    if "[" in text and "]" in text:
        return text[text.index("[") + 1 : text.index("]")]
    return text.strip()


def parse_facts(output: str) -> HostFacts:
    """The facts script's output -> HostFacts. Unknown or damaged lines are ignored."""
    keys: dict[str, str] = {}
    devices: dict[str, BlockDevice] = {}
    mounts: list[Mount] = []
    tools: dict[str, str] = {}
    paths: dict[str, str] = {}
    files: dict[str, FileFacts] = {}
    for line in output.splitlines():
        parts = line.split("\t")
        tag = parts[0]
        if tag == "K" and len(parts) >= 3:
            keys[parts[1]] = "\t".join(parts[2:]).strip()
        elif tag == "D" and len(parts) >= 7:
            name = parts[1]
            devices[name] = BlockDevice(
                name=name, size_bytes=_int(parts[2]) * 512, rotational=parts[3].strip() == "1",
                scheduler=_scheduler(parts[4]), read_ahead_kb=_int(parts[5]),
                model=parts[6].strip())
        elif tag == "M" and len(parts) >= 4:
            mounts.append(Mount(device=parts[1], mountpoint=parts[2], fstype=parts[3]))
        elif tag == "F" and len(parts) >= 6:
            if parts[2] == "1":
                files[parts[1]] = FileFacts(exists=True, size_bytes=_int(parts[3]),
                                            real_path=parts[4], device=parts[5].strip())
            else:
                files[parts[1]] = FileFacts(exists=False)
        elif tag == "T" and len(parts) >= 4 and parts[2]:
            paths[parts[1]] = parts[2]
            version = parts[3].strip()
            tools[parts[1]] = "" if _REFUSED.search(version) else version
    return HostFacts(
        hostname=keys.get("hostname", ""), kernel=keys.get("kernel", ""),
        arch=keys.get("arch", ""), os=keys.get("os", ""), cpu_model=keys.get("cpu_model", ""),
        cpu_count=_int(keys.get("cpu_count", "0")), mem_bytes=_int(keys.get("mem_kb", "0")) * 1024,
        block_devices=devices, mounts=mounts, tools=tools, tool_paths=paths, files=files,
        machine_id=keys.get("machine_id", ""), boot_id=keys.get("boot_id", ""))


async def gather_facts(plan: Plan, transports: Mapping[str, Transport], hosts: list[str]
                       ) -> dict[str, HostFacts | str]:
    """Every host's facts, all at once: its ``HostFacts``, or why they could not be read."""
    needed = executables_needed(plan)
    paths = paths_to_inspect(plan)
    results = await asyncio.gather(
        *(_host_facts(transports[h], needed.get(h, {}), paths.get(h, [])) for h in hosts),
        return_exceptions=True)
    found: dict[str, HostFacts | str] = {}
    for host, result in zip(hosts, results, strict=True):
        if isinstance(result, BaseException):
            if not isinstance(result, Exception):  # (cancelled, interrupted)
                raise result
            found[host] = str(result)
        else:
            found[host] = result
    return found


async def _host_facts(transport: Transport, programs: Mapping[str, str],
                      paths: list[str]) -> HostFacts:
    """``programs``: program -> the tool it is for (its catalogue says how to ask the
    program its version)."""
    versions = {}
    for program, tool in programs.items():
        spec = TOOLS.get(tool)
        versions[program] = spec.version if spec and spec.executable == program else None
    result = await transport.run(facts_script(versions, paths), timeout=FACTS_TIMEOUT)
    facts = parse_facts(result.stdout)
    host_key = getattr(transport, "host_key", None)  # SSH only: preflight's same-machine check
    if isinstance(host_key, str):
        facts["host_key"] = host_key
    return facts
