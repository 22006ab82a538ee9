"""A real session, recorded once per test run, for the replay and dump tests (a pytest plugin,
tests/conftest.py: its fixtures ``recorded`` and ``reader`` serve every test module).

A local plan runs real fio (two short steps) with real iostat beside it, through the engine,
recorded by the same recorder ``--record`` uses; a ``FleetState`` and a plain collector are fed
by the live sinks at the same time, so that tests can compare what replay and dump give back
with what the engine produced live.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchtui.cli.extras import attach_state
from benchtui.cli.record_cmd import recording
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SessionReader
from tests.helpers import require_tool

STEPS = ("randrw", "seqread")


def plan_text(scratch: Path) -> str:
    return f"""\
[session]
name = "replay-test"

[hosts.here]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "randrw"
tool = "fio"
hosts = "all"
args = '''--filename={scratch}/fio.dat --size=16m --rw=randrw --bs=4k --ioengine=psync
  --direct=1 --runtime=4 --time_based --name=a --name=b'''

[[step]]
name = "seqread"
tool = "fio"
hosts = "all"
args = '''--filename={scratch}/fio.dat --size=16m --rw=read --bs=64k --ioengine=psync
  --direct=1 --runtime=3 --time_based'''
"""


@dataclass
class RecordedRun:
    """A recorded session and what its live sinks received."""

    path: Path
    plan_path: Path
    live: FleetState
    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    outputs: list[OutputLines] = field(default_factory=list)
    ok: bool = False


MARK_NOTE = "second step starts"


def _mark_second_step(session: Session, event: Event) -> None:
    """A user's mark, as the console's ``m`` puts it, when the second step starts."""
    if event.kind == "step_start" and event.step == STEPS[1]:
        session.mark(MARK_NOTE)


@functools.cache
def recorded_run() -> RecordedRun:
    """Run the plan once (about 10 s) and keep the file for every test of this run."""
    work = Path(tempfile.mkdtemp(prefix="benchtui-replay-test-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    scratch = Path("/var/tmp") / f"benchtui-replay-{uuid.uuid4().hex[:8]}"
    scratch.mkdir()
    plan_path = work / "plan.toml"
    plan_path.write_text(plan_text(scratch))
    session = Session(load_plan(plan_path, parser_names=all_parsers()))
    run = RecordedRun(work / "session.btui", plan_path, FleetState())
    run.live = attach_state(session)
    session.add_sample_sink(run.samples.extend)
    session.add_event_sink(run.events.append)
    session.add_output_sink(run.outputs.append)
    try:
        # The session runs in a thread of its own: the caller may be an async test.
        with recording(session, str(run.path)), ThreadPoolExecutor(1) as pool:
            session.add_event_sink(functools.partial(_mark_second_step, session))
            result = pool.submit(asyncio.run, session.run()).result(timeout=120)
        run.ok = result.ok
    finally:
        for f in scratch.iterdir():
            f.unlink()
        scratch.rmdir()
    return run


@pytest.fixture(scope="module")
def recorded() -> RecordedRun:
    require_tool("fio")
    require_tool("iostat")
    run = recorded_run()
    assert run.ok, "the recorded session failed"
    return run


@pytest.fixture
def reader(recorded: RecordedRun) -> Iterator[SessionReader]:
    with SessionReader.open(str(recorded.path)) as r:
        yield r
