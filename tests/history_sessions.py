"""Real sessions for the history catalog's tests, made cheaply: ``benchtui import`` of a real
fio output (tests/fixtures/fio_text/seed000_linux_none.txt, its first job: a randread at
IOPS=245 on fio 3.7), as it is or edited to say another IOPS (the issue's absurd figures:
``IOPS=1`` followed by 154 or 308 zeros); and the commands run as a user runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from benchtui.session.importer import import_outputs
from tests.helpers import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
PLAN = "nightly"
#: Epoch seconds of the first session (each next one a day later).
T0 = 1_790_000_000.0
_JOB = FIXTURES / "fio_text" / "seed000_linux_none.txt"


def fio_output(directory: Path, iops: str = "245") -> Path:
    """The first job of the real fio output, its read ``IOPS=`` made ``iops``."""
    lines = _JOB.read_text(encoding="utf-8").splitlines()[:33]
    text = "\n".join(lines) + "\n"
    assert "IOPS=245," in text
    path = directory / f"fio-{len(iops)}-{iops[:8]}.txt"
    path.write_text(text.replace("IOPS=245,", f"IOPS={iops},"), encoding="utf-8")
    return path


def session(directory: Path, name: str, *, iops: str = "245", hosts: Sequence[str] = ("h1",),
            day: int = 0) -> Path:
    """A session of plan ``nightly``, step ``randread``, one host per name in ``hosts``
    (each the same fio output), started ``day`` days after T0."""
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / name
    src = fio_output(directory, iops)
    import_outputs([str(src)] * len(hosts), str(out), hosts=list(hosts), steps=["randread"],
                   name=PLAN, start=T0 + day * 86400)
    return out


def sessions(directory: Path, count: int, *, prefix: str = "night") -> list[Path]:
    return [session(directory, f"{prefix}-{i:03d}.btr", day=i) for i in range(count)]


def benchtui(*args: str, env: Mapping[str, str] | None = None, timeout: float = 120
             ) -> subprocess.CompletedProcess[str]:
    """``python -m benchtui ARGS`` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "benchtui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, **(env or {})})


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


def unshare_unavailable() -> str:
    """Why a user and mount namespace cannot be made here ("" when it can): the read-only
    and full file systems of the tests are mounted in one."""
    if not shutil.which("unshare"):
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True,
                           check=False)
    if probe.returncode != 0:
        return f"unshare -rm is not permitted here: {probe.stderr.strip()}"
    return ""


def in_namespace(script: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``sh -c script`` in a new user and mount namespace (mounts made there vanish with
    it); ``$BT`` runs benchtui."""
    if why := unshare_unavailable():
        pytest.skip(why)
    env = {**os.environ, "BT": f"{sys.executable} -m benchtui"}
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False, env=env)
