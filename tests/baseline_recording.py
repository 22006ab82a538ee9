"""Two real sessions of the same plan with different fio settings, for the baseline (ghost)
tests: a pytest plugin (tests/conftest.py) whose fixture ``baseline_pair`` records them once
per test run with the real engine, fio and iostat, through the recorder ``--record`` uses.

The plan has one fio step, ``randread``, on this machine, rate-limited so that the numbers
are known: the baseline reads 4 KiB blocks at 400 IOPS, the new session 8 KiB blocks at 200
IOPS: its IOPS are half the baseline's (outside any tolerance), its bandwidth the same.

The same two sessions are kept in ``tests/fixtures/baseline/`` for the snapshot tests (a
screen must be the same on every run); ``python -m tests.baseline_recording`` records them
again.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import shutil
import sys
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchtui.cli.record_cmd import recording
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from tests.helpers import require_tool

FIXTURES = Path(__file__).parent / "fixtures" / "baseline"
STEP = "randread"
SECONDS = 6
#: (block size, IOPS limit) of the baseline and of the new session.
OLD_FIO = ("4k", 400)
NEW_FIO = ("8k", 200)


def plan_text(scratch: Path, bs: str, iops: int, *, step: str = STEP) -> str:
    return f"""\
[session]
name = "ghost-test"

[hosts.here]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "{step}"
tool = "fio"
hosts = "all"
args = '''--filename={scratch}/fio.dat --size=8m --rw=randread --bs={bs} --ioengine=psync
  --direct=1 --rate_iops={iops} --runtime={SECONDS} --time_based --name=a'''
"""


def record(path: Path, bs: str, iops: int, *, step: str = STEP) -> None:
    """Run the plan once with these fio settings, recorded to ``path`` (about 8 s)."""
    scratch = Path("/var/tmp") / f"benchtui-ghost-{uuid.uuid4().hex[:8]}"
    scratch.mkdir()
    # fio reads data that exists (a file fio lays out itself has a preflight warning)
    (scratch / "fio.dat").write_bytes(os.urandom(8 << 20))
    plan_path = path.with_suffix(".toml")
    plan_path.write_text(plan_text(scratch, bs, iops, step=step))
    try:
        session = Session(load_plan(plan_path, parser_names=all_parsers()))
        # The session runs in a thread of its own: the caller may be an async test.
        with recording(session, str(path)), ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, session.run()).result(timeout=120)
        assert result.ok, f"the recorded session failed: {result.failures}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        plan_path.unlink(missing_ok=True)


@dataclass(frozen=True)
class BaselinePair:
    old: Path
    new: Path


@functools.cache
def recorded_pair() -> BaselinePair:
    work = Path(tempfile.mkdtemp(prefix="benchtui-ghost-test-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    pair = BaselinePair(work / "old.btr", work / "new.btr")
    record(pair.old, *OLD_FIO)
    record(pair.new, *NEW_FIO)
    return pair


@pytest.fixture(scope="module")
def baseline_pair() -> BaselinePair:
    """Two sessions recorded now by the real engine (once per test run)."""
    require_tool("fio")
    require_tool("iostat")
    return recorded_pair()


def fixture_pair() -> BaselinePair:
    """The two sessions kept in tests/fixtures/baseline (recorded by ``main``)."""
    return BaselinePair(FIXTURES / "old.btr", FIXTURES / "new.btr")


def main() -> int:
    """Record the fixtures again."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    pair = fixture_pair()
    for path, settings in ((pair.old, OLD_FIO), (pair.new, NEW_FIO)):
        path.unlink(missing_ok=True)
        record(path, *settings)
        print(f"recorded {path} ({path.stat().st_size} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
