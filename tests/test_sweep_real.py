"""A sweep run for real: ``benchtui check`` lists its steps and the time they take, ``benchtui
record`` runs them in order with real fio, and the session file gives back each step's
``step_start`` data (sweep, matrix, select, repeats) and its samples under its label. That the
values reach fio is read from fio's own numbers: bytes per second over I/Os per second is the
block size a step really used."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.sample import Sample
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.compare import SessionLayout
from benchtui.session.engine import Session
from benchtui.store.recording import SessionReader
from tests.helpers import require_tool
from tests.sshd import SshdHost
from tests.test_session_engine import host_tables, options, scratch_dir

ROOT = Path(__file__).resolve().parents[1]
BENCHTUI = [sys.executable, "-m", "benchtui"]

PLAN = """\
[session]
name = "sweep-test"

[hosts.here]
local = true

[[step]]
name = "rr"
tool = "fio"
hosts = "all"
args = "--filename={d}/fio.dat --size=8m --rw=randread --iodepth=4 --runtime=1 --time_based"
matrix = {{ ioengine = ["psync", "libaio"], bs = ["4k", "64k"] }}
repeat = 2
select = "median"
"""
NAMES = ["rr ioengine=psync bs=4k", "rr ioengine=psync bs=64k", "rr ioengine=libaio bs=4k",
         "rr ioengine=libaio bs=64k"]


def block_sizes(samples: list[Sample]) -> dict[str, float]:
    """step label -> fio's read bandwidth over its read IOPS (summary figures)."""
    figures: dict[str, dict[str, float]] = defaultdict(dict)
    for s in samples:
        if s.tool == "fio" and s.kind == "summary" and s.labels.get("op") == "read" \
                and s.metric in ("iops", "bandwidth_bytes"):
            figures[s.labels["step"]][s.metric] = s.value
    return {step: f["bandwidth_bytes"] / f["iops"] for step, f in figures.items()}


def test_check_lists_the_expanded_steps_and_the_time(tmp_path: Path) -> None:
    require_tool("fio")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(d=tmp_path))
    out = subprocess.run([*BENCHTUI, "check", str(plan)], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "plan sweep-test: 4 steps, 0 monitors, 1 host"
    start = lines.index("steps, in order:")
    listed = [line.split("  on ")[0].strip() for line in lines[start + 1:start + 5]]
    assert listed == NAMES
    assert all(line.endswith("on here: 2 x 1s, select median")
               for line in lines[start + 1:start + 5])
    # 8 runs of 1 s, each with the default cost of starting and stopping it
    assert lines[start + 5] == ("estimated time: 32s (8s of steps, about 3s a run to start "
                                "and stop)")


@pytest.mark.slow
def test_a_recorded_sweep_gives_back_its_steps_data_and_labels(tmp_path: Path) -> None:
    require_tool("fio")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(d=tmp_path))
    session = tmp_path / "sweep.btr"
    out = subprocess.run([*BENCHTUI, "record", str(plan), "-o", str(session)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    with SessionReader.open(str(session)) as r:
        assert r.complete
        events = r.events()
        samples = list(r.samples())
    starts = [e for e in events if e.kind == ev.STEP_START]
    labels = [f"{name}#{n}" for name in NAMES for n in (1, 2)]
    assert [e.step for e in starts] == labels
    for e in starts:
        name, _, repeat = (e.step or "").rpartition("#")
        engine, bs = (part.split("=")[1] for part in name.split()[1:])
        assert e.data["sweep"] == "rr" and e.data["select"] == "median"
        assert e.data["matrix"] == {"ioengine": engine, "bs": bs}
        assert list(e.data["matrix"]) == ["ioengine", "bs"]
        assert (e.data["repeat"], e.data["repeats"]) == (int(repeat), 2)
        assert e.data["expected_seconds"] == 1.0
    layout = SessionLayout.from_events(events)
    assert list(layout.steps) == NAMES
    assert [(run.step, run.repeat) for run in layout.runs] == \
        [(name, n) for name in NAMES for n in (1, 2)]
    assert layout.step_data[NAMES[1]]["matrix"] == {"ioengine": "psync", "bs": "64k"}
    fio = [s for s in samples if s.tool == "fio"]
    assert {s.labels["step"] for s in fio} == set(labels)
    assert {s.labels.get("job") for s in fio if "job" in s.labels} == {"rr"}
    for label, size in block_sizes(samples).items():
        expected = 4096 if "bs=4k" in label else 65536
        assert abs(size - expected) / expected < 0.02, (label, size)
    assert len(block_sizes(samples)) == len(labels)


@pytest.mark.slow
def test_a_jobfile_sweep_copies_each_steps_own_jobfile(tmp_path: Path) -> None:
    """The engine copies the jobfile text the loader set the values in, not the file."""
    require_tool("fio")
    remote = tmp_path / "remote"
    (tmp_path / "seq.fio").write_text(
        f"[global]\nrw=read\nsize=4m\nruntime=1\ntime_based\n\n[one]\nfilename={tmp_path}/a.dat"
        "\nbs=8k\n")
    (tmp_path / "plan.toml").write_text(
        f'[session]\nname = "jf"\nremote_dir = "{remote}"\n\n[hosts.here]\nlocal = true\n\n'
        '[[step]]\nname = "seq"\ntool = "fio"\nhosts = "all"\njobfile = "seq.fio"\n'
        'matrix = { bs = ["4k", "16k"] }\n')
    plan = load_plan(tmp_path / "plan.toml", parser_names=all_parsers())
    samples: list[Sample] = []
    events: list[Event] = []
    result = asyncio.run(Session(plan, on_samples=samples.extend, on_event=events.append).run())
    assert result.ok, result.failures
    assert block_sizes(samples).keys() == {"seq bs=4k", "seq bs=16k"}
    for label, size in block_sizes(samples).items():
        expected = 4096 if label.endswith("4k") else 16384
        assert abs(size - expected) / expected < 0.02, (label, size)
        copied = (remote / "jf" / f"{label.replace(' ', '_').replace('=', '_')}-seq.fio")
        assert copied.read_text() == plan.step(label).jobfile_text
        assert f"bs={label.split('=')[1]}\n" in copied.read_text()
    assert "bs=8k" in (tmp_path / "seq.fio").read_text()
    plain = [e.data for e in events if e.kind == ev.STEP_START]
    assert [d["sweep"] for d in plain] == ["seq", "seq"]
    assert [d["repeats"] for d in plain] == [1, 1] and [d["select"] for d in plain] == ["all"] * 2


@pytest.mark.slow
async def test_a_jobfile_sweep_over_ssh(sshd_hosts: list[SshdHost]) -> None:
    """Two real sshd hosts: each gets each step's own jobfile, and runs it."""
    require_tool("fio")
    hosts = sshd_hosts[:2]
    d = scratch_dir()
    (d / "a.dat").write_bytes(b"\x5a" * (4 << 20))  # read by both hosts at once: laid out here
    (d / "seq.fio").write_text(f"[global]\nrw=read\nsize=4m\nruntime=1\ntime_based\n\n[one]\n"
                               f"filename={d}/a.dat\nblocksize=8k\n")
    (d / "plan.toml").write_text(
        f'[session]\nname = "jf"\nremote_dir = "{d}/remote"\n\n' + host_tables(hosts)
        + '[[step]]\nname = "seq"\ntool = "fio"\nhosts = "all"\njobfile = "seq.fio"\n'
        'matrix = { bs = ["4k", "16k"] }\n')
    plan = load_plan(d / "plan.toml", parser_names=all_parsers())
    samples: list[Sample] = []
    try:
        result = await Session(plan, options=options(hosts), on_samples=samples.extend).run()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert result.ok, result.failures
    for host in (h.name for h in hosts):
        sizes = block_sizes([s for s in samples if s.host == host])
        assert sizes.keys() == {"seq bs=4k", "seq bs=16k"}
        for label, size in sizes.items():
            expected = 4096 if label.endswith("4k") else 16384
            assert abs(size - expected) / expected < 0.02, (host, label, size)
