"""Recording real runs: real fio (json+, two jobs, histograms) and iostat through the real
engine. What the file gives back is exactly what the engine handed its sinks live."""

from __future__ import annotations

import asyncio
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtui.cli.record_cmd import recording
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from benchtui.store.recording import SessionReader
from tests.helpers import require_tool
from tests.test_recording_roundtrip import assert_same_samples

ROOT = Path(__file__).resolve().parents[1]
BENCHTUI = [sys.executable, "-m", "benchtui"]


def write_plan(directory: Path, seconds: int, *, monitor: bool = True) -> Path:
    plan = directory / "plan.toml"
    text = '[session]\nname = "rec-test"\n\n[hosts.here]\nlocal = true\n\n'
    if monitor:
        text += '[[monitor]]\ntool = "iostat"\n\n'
    text += (f'[[step]]\nname = "randrw"\ntool = "fio"\nhosts = "all"\n'
             f'args = "--filename={directory}/fio.dat --size=8m --rw=randrw --bs=4k '
             f'--ioengine=psync --numjobs=2 --runtime={seconds} --time_based"\n')
    plan.write_text(text)
    return plan


def test_recorded_run_dumps_exactly_what_the_engine_produced(tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    plan = load_plan(str(write_plan(tmp_path, 3)), parser_names=all_parsers())
    batches: list[list[Sample]] = []
    events: list[Event] = []
    outputs: list[OutputLines] = []
    session = Session(plan, on_samples=lambda b: batches.append(list(b)),
                      on_event=events.append)
    session.add_output_sink(outputs.append)
    path = tmp_path / "run.btr"
    with recording(session, str(path)):
        result = asyncio.run(session.run())
    assert result.ok, result.failures
    live = [s for b in batches for s in b]
    assert any(s.histogram for s in live) and any(s.tool == "iostat" for s in live)
    with SessionReader.open(str(path)) as r:
        assert r.complete and not r.warnings
        assert r.meta.name == "rec-test" and r.meta.plan_text == (tmp_path / "plan.toml")\
            .read_text()
        assert r.meta.hosts == ["here"] and r.meta.facts["here"]["cpu_count"]
        # every sample, same values, labels and histograms, in the same order
        assert r.sample_count == len(live)
        assert_same_samples(list(r.samples()), live)
        # the same batches and events, interleaved in the order the sinks got them
        records = list(r.records(-math.inf, math.inf))
        assert [len(x) for x in records if isinstance(x, list)] == [len(b) for b in batches]
        assert [x for x in records if isinstance(x, Event)] == events == r.events()
        # iostat's text is kept line for line, fio's JSON documents are not
        kept = [x for x in records if isinstance(x, OutputLines)]
        iostat_live = [line for o in outputs if o.tool == "iostat" for line in o.lines]
        assert [line for o in kept if o.tool == "iostat" for line in o.lines] == iostat_live
        fio_kept = [line for o in kept if o.tool == "fio" for line in o.lines]
        assert not any(line.startswith(("{", "}", "  ")) for line in fio_kept)
        assert any(o.tool == "fio" for o in kept)  # announced, so replay knows fio ran
        # and the JSON Lines a user gets from dump are the live samples' JSON
    dump = subprocess.run([*BENCHTUI, "dump", "--histograms", str(path)], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    assert [json.loads(line) for line in dump.stdout.splitlines()] == \
        [json.loads(json.dumps(s.to_dict())) for s in live]


def test_record_command(tmp_path: Path) -> None:
    require_tool("fio")
    plan = write_plan(tmp_path, 2, monitor=False)
    out = tmp_path / "cli.btr"
    proc = subprocess.run([*BENCHTUI, "record", str(plan), "-o", str(out)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "step randrw on here" in proc.stderr
    summary = proc.stderr.strip().splitlines()[-1]
    assert summary.startswith(f"benchtui: recorded {out}: 1 host, ")
    assert "Traceback" not in proc.stderr
    with SessionReader.open(str(out)) as r:
        assert r.complete and r.sample_count > 10
    again = subprocess.run([*BENCHTUI, "record", str(plan), "-o", str(out)],
                           capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert again.returncode == 2  # a path that cannot be written: a usage error (README)
    assert again.stderr.strip() == (f"benchtui: {out}: already exists; give another file name "
                                    "(a recording is never overwritten)")
    folder = subprocess.run([*BENCHTUI, "record", str(plan), "-o", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert (folder.returncode, folder.stderr.strip()) == (
        2, f"benchtui: {tmp_path}: is a directory; give a file name for the recording, e.g. "
           f"{tmp_path / 'rec-test.btr'}")


def test_kill_9_of_a_real_record(tmp_path: Path) -> None:
    require_tool("fio")
    plan = write_plan(tmp_path, 6)
    out = tmp_path / "killed.btr"
    # grace 0: the host's watchdog stops fio once the controller is killed, so that the next
    # test's run of the same plan finds no leftover of this one (preflight would refuse it)
    proc = subprocess.Popen([*BENCHTUI, "record", str(plan), "-o", str(out),
                             "--controller-grace", "0"],
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)
    assert proc.stderr is not None
    started = None
    for line in proc.stderr:
        if "fio started" in line:
            started = time.time()
            break
    assert started is not None
    time.sleep(3.0)
    proc.send_signal(signal.SIGKILL)
    killed_at = time.time()
    proc.wait()
    with SessionReader.open(str(out)) as r:
        assert not r.complete and r.meta.ended is None
        assert any("not closed" in w for w in r.warnings)
        assert list(r.samples(metrics=["iops"]))
        assert r.end > killed_at - 1.5
        assert [e.kind for e in r.events()][:1] == ["host_state"]
    # and the host's watchdog stopped fio (grace 0) within a few seconds of the kill
    deadline = time.time() + 10
    while time.time() < deadline and subprocess.run(
            ["pgrep", "-f", f"{tmp_path}/fio.dat"], capture_output=True, check=False
    ).returncode == 0:
        time.sleep(0.2)
    assert subprocess.run(["pgrep", "-f", f"{tmp_path}/fio.dat"], capture_output=True,
                          check=False).returncode == 1, "fio outlived its killed controller"


def test_ctrl_c_stops_and_closes_the_file(tmp_path: Path) -> None:
    require_tool("fio")
    plan = write_plan(tmp_path, 30, monitor=False)
    out = tmp_path / "interrupted.btr"
    proc = subprocess.Popen([*BENCHTUI, "record", str(plan), "-o", str(out)],
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stderr is not None
    said: list[str] = []
    for line in proc.stderr:
        said.append(line)
        if "fio started" in line:
            break
    else:  # (the session ended before fio started: say how, not an exit status alone)
        pytest.fail(f"record ended ({proc.wait(timeout=30)}) before fio started: "
                    + "".join(said))
    time.sleep(1.5)
    proc.send_signal(signal.SIGUSR1)  # a mark, headless
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=30) == 130, "".join(said) + rest
    assert "interrupted" in rest and "Traceback" not in rest
    with SessionReader.open(str(out)) as r:
        assert r.complete and not r.warnings and r.meta.ended is not None
        assert r.sample_count > 0
        started = next(e.t for e in r.events() if e.kind == "run_start")
        assert r.end > started + 2  # what came after fio started, up to the interrupt
        ends = [(e.kind, e.step, e.data.get("interrupted")) for e in r.events()
                if e.kind in ("step_end", "session_end")]
        assert [(k, i) for k, _, i in ends] == [("step_end", True), ("session_end", True)]
        marks = [e for e in r.events() if e.kind == "mark"]
        assert [(m.message, m.t > started) for m in marks] == [("mark: SIGUSR1", True)]
