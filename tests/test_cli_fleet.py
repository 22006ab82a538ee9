"""``benchtui check`` and ``benchtui run --jsonl`` as a user runs them: real fio on this machine,
exit codes, one-sentence errors, the facts document, the step label on every sample."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_tool

PLAN = """
[session]
name = "cli-test"

[hosts.here]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "{step}"
tool = "fio"
hosts = "all"
{extra}
args = "--filename={data} --size=16m --rw=randrw --bs=4k --ioengine=psync --runtime=3 --time_based"
"""


def benchtui(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def write_plan(tmp_path: Path, step: str = "randrw", extra: str = "") -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(step=step, extra=extra, data=tmp_path / "fio.dat"))
    return plan


def assert_one_sentence(stderr: str) -> None:
    assert "Traceback" not in stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert lines, "an error must be said"


@pytest.mark.slow
def test_run_jsonl_prints_samples_with_the_step_and_writes_facts(tmp_path: Path) -> None:
    require_tool("fio")
    plan = write_plan(tmp_path)
    facts = tmp_path / "facts.json"
    out = benchtui("run", str(plan), "--jsonl", "--facts", str(facts))
    assert out.returncode == 0, out.stderr
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    fio = [r for r in rows if r["tool"] == "fio" and r["kind"] == "interval"]
    assert fio and all(r["host"] == "here" and r["labels"]["step"] == "randrw" for r in fio)
    assert {r["metric"] for r in fio} >= {"iops", "bandwidth_bytes", "latency_seconds"}
    assert any(r["tool"] == "iostat" or r["tool"] == "diskstats" for r in rows)
    # One progress line per step and host, in words, on stderr.
    assert "randrw" in out.stderr
    document = json.loads(facts.read_text())
    here = document["here"] if "here" in document else document["hosts"]["here"]
    assert here["kernel"] and here["os"] and here["cpu_model"]
    assert here["cpu_count"] >= 1 and here["mem_bytes"] > 0
    assert here["tools"]["fio"].startswith("fio-3")
    assert here["block_devices"]
    for device in here["block_devices"].values():  # the seed reports' first table
        assert {"model", "size_bytes", "rotational", "scheduler", "read_ahead_kb"} <= set(device)


@pytest.mark.slow
def test_run_exits_1_with_the_reason_when_a_step_fails(tmp_path: Path) -> None:
    require_tool("fio")
    # An engine the host's fio cannot load (an external engine's name passes check): the
    # step fails on its host, the reason is said.
    plan = write_plan(tmp_path, extra='env = { }\n')
    text = plan.read_text().replace("--runtime=3", "--runtime=3 --ioengine=nosuchplugin")
    plan.write_text(text)
    out = benchtui("run", str(plan), "--jsonl")
    assert out.returncode == 1, out.stderr
    assert_one_sentence(out.stderr)
    assert "here" in out.stderr and "randrw" in out.stderr


def test_check_reports_versions_and_runs_nothing(tmp_path: Path) -> None:
    require_tool("fio")
    plan = write_plan(tmp_path)
    out = benchtui("check", str(plan))
    assert out.returncode == 0, out.stderr + out.stdout
    assert "here" in out.stdout and "fio-3" in out.stdout
    assert not (tmp_path / "fio.dat").exists(), "check must not run fio"


def test_check_says_each_warning_once(tmp_path: Path) -> None:
    # Issue 31: four plan hosts on this one machine gave 6 pairwise warnings, each printed
    # twice (a timed line, then the report), the report's copy stuttering the step's name.
    require_tool("fio")
    hosts = ("h1", "h2", "h3", "h4")
    plan = tmp_path / "plan.toml"
    plan.write_text("".join(f"[hosts.{h}]\nlocal = true\n" for h in hosts)
                    + '[[monitor]]\ntool = "iostat"\nhosts = ["h1"]\n'
                    '[[step]]\nname = "randread"\ntool = "fio"\nhosts = "all"\n'
                    f'args = "--filename={tmp_path}/f-{{host}} --size=1m --rw=randread '
                    '--iodepth=8 --runtime=5"\nmatrix = { bs = ["4k", "64k"] }\n')
    out = benchtui("check", str(plan))
    assert out.returncode == 0, out.stderr + out.stdout
    said = [line for line in (out.stdout + out.stderr).splitlines() if "warning" in line]
    assert len(said) == len(set(said)), said
    machine = [line for line in said if "one machine" in line]
    assert len(machine) == 1 and "hosts h1, h2, h3 and h4 are one machine" in machine[0]
    depth = [line for line in said if "iodepth=8 has no effect" in line]
    assert depth == ['warning: step "randread" (every step of the sweep): iodepth=8 has no '
                     "effect with the synchronous ioengine psync (fio's default) (use "
                     "ioengine=libaio or io_uring with direct=1, or raise numjobs instead)"]
    assert out.stdout.startswith("plan plan: 2 steps, 1 monitor, 4 hosts\n")
    assert "warning" not in out.stderr  # (the timed lines are progress: hosts coming up)


def test_check_names_a_missing_program_and_exits_1(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, extra='executable = "/opt/no-such-dir/fio"')
    out = benchtui("check", str(plan))
    assert out.returncode == 1
    report = out.stdout + out.stderr
    assert "/opt/no-such-dir/fio is not installed on here" in report
    assert "Traceback" not in report


def test_a_plan_error_is_one_sentence_with_file_and_line(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, extra='repeats = 3')
    for command in (("check",), ("run", "--jsonl")):
        out = benchtui(*command, str(plan))
        assert out.returncode == 2
        assert_one_sentence(out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
        assert str(plan) in out.stderr and "repeats" in out.stderr
        assert "repeat" in out.stderr.replace("repeats", "")  # what to write instead


def test_a_missing_plan_file_is_one_sentence(tmp_path: Path) -> None:
    out = benchtui("run", str(tmp_path / "nope.toml"), "--jsonl")
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "nope.toml" in out.stderr


@pytest.mark.slow
def test_histogram_bits_on_the_command_line_win_over_the_plan(tmp_path: Path) -> None:
    """The plan says 2 bits, --histogram-bits 6 keeps fio's own buckets: the recording holds
    them, and ``info`` says so."""
    from benchtui.model.fio_buckets import bucket_values

    require_tool("fio")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.replace('name = "cli-test"', 'name = "cli-test"\nhistogram_bits = 2')
                    .format(step="randrw", extra="", data=tmp_path / "fio.dat"))
    session = tmp_path / "s.btr"
    out = benchtui("record", str(plan), "-o", str(session), "--histogram-bits", "6")
    assert out.returncode == 0, out.stderr
    dumped = benchtui("dump", str(session), "--histograms", "--metric", "latency_histogram")
    rows = [json.loads(x) for x in dumped.stdout.splitlines()]
    keys = {round(float(k) * 1e9) for r in rows for k in r["buckets"]}
    assert rows and keys <= set(bucket_values(6))
    assert keys - set(bucket_values(2))  # finer than the plan's 2 bits
    info = benchtui("info", str(session), "--json")
    assert json.loads(info.stdout)["histogram_bits"] == 6
    assert "fio's own resolution (6 bits" in benchtui("info", str(session)).stdout


@pytest.mark.parametrize("value", ["0", "7", "four"])
def test_a_bad_histogram_bits_option_is_one_sentence(tmp_path: Path, value: str) -> None:
    out = benchtui("record", str(write_plan(tmp_path)), "-o", str(tmp_path / "s.btr"),
                   "--histogram-bits", value)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"--histogram-bits: must be a whole number from 1 to 6, not '{value}'" in out.stderr
