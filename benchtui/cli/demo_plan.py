"""The built-in plan of ``benchtui demo``: fio randrw on a scratch file, iostat beside it.

The plan is written as TOML into the demo's cache directory (``~/.cache/benchtui/demo/``,
or ``$XDG_CACHE_HOME/benchtui/demo/``) and loaded by the ordinary plan loader, so the demo runs
through exactly the code a user's plan does, and the file is there to copy
(``benchtui run ~/.cache/benchtui/demo/demo.toml``). The scratch file stays for the next demo
(fio reuses it instead of laying it out again).

It is safe on any machine: a 128 MiB file in the user's own cache directory, never a device.
Direct I/O is used where the file system allows it (tmpfs does not), so that the numbers are
the disk's and not the page cache's; iostat watches the disk that holds the file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from benchtui.errors import ToolMissingError, UsageError
from benchtui.plan.loader import load_plan
from benchtui.plan.model import Plan

DEMO_HOST = "localhost"
DATA_FILE = "demo.dat"
PLAN_FILE = "demo.toml"
DATA_SIZE = "128m"


def demo_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "benchtui" / "demo"


def require_fio() -> None:
    """The demo's one requirement, in one sentence when it is missing."""
    if shutil.which("fio") is None:
        raise ToolMissingError("this machine", "fio is not installed and benchtui demo needs it",
                               "install it with: sudo apt-get install fio", tool="fio")


def direct_io_works(directory: Path) -> bool:
    """Whether files in ``directory`` can be opened with O_DIRECT (tmpfs refuses it)."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return False
    probe = directory / ".direct-io-probe"
    try:
        fd = os.open(probe, os.O_RDWR | os.O_CREAT | flag, 0o600)
    except OSError:
        return False
    os.close(fd)
    probe.unlink(missing_ok=True)
    return True


def disk_of(path: Path) -> str | None:
    """The whole disk holding ``path`` (``vda`` for ``vda1``), as iostat names it; None for
    file systems with no block device (overlay, tmpfs)."""
    dev = os.stat(path).st_dev
    sys_dev = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    try:
        real = sys_dev.resolve(strict=True)
    except OSError:
        return None
    if (real / "partition").exists():
        real = real.parent
    return real.name or None


def plan_text(directory: Path, seconds: int, *, direct: bool, device: str | None) -> str:
    """The demo plan as TOML (strings written as JSON strings, which TOML reads the same)."""
    data = str(directory / DATA_FILE)
    args = [f"--filename={data}", f"--size={DATA_SIZE}", "--rw=randrw", "--rwmixread=70",
            "--bs=4k", "--ioengine=libaio", "--iodepth=16", f"--direct={int(direct)}",
            f"--runtime={seconds}", "--time_based"]
    monitor = ['[[monitor]]', 'tool = "iostat"    # /proc/diskstats where sysstat is missing']
    if device:
        monitor.append(f"devices = [{json.dumps(device)}]")
    return "\n".join([
        "# benchtui demo: written by `benchtui demo`; run it yourself with benchtui run FILE.",
        "[session]",
        'name = "demo"',
        'description = "fio 4k random read/write (70% reads) on a scratch file, with iostat"',
        "",
        f"[hosts.{DEMO_HOST}]",
        "local = true",
        "",
        *monitor,
        "",
        "[[step]]",
        'name = "randrw-4k"',
        'tool = "fio"',
        'hosts = "all"',
        "args = [" + ", ".join(json.dumps(a) for a in args) + "]",
        "",
    ])


def demo_plan(seconds: int, *, parser_names: list[str] | None = None) -> Plan:
    """Write the demo plan for a run of ``seconds`` and load it."""
    if seconds < 1:
        raise UsageError("--seconds must be at least 1")
    directory = demo_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        direct = direct_io_works(directory)
        path = directory / PLAN_FILE
        path.write_text(plan_text(directory, seconds, direct=direct,
                                  device=disk_of(directory)), encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write the demo's files in {directory}: "
                         f"{error.strerror or error} (set XDG_CACHE_HOME to a writable "
                         "directory)") from None
    return load_plan(path, parser_names=parser_names)
