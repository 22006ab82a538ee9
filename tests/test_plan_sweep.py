"""Sweeps in a plan: a fio step's ``matrix`` expands into one ordinary step per combination,
named after its values, first key slowest; each value reaches every job fio runs (checked with
real fio: the block size a job really used is its bytes over its I/Os); a bad matrix or select
is one sentence with the plan file's line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchtui.errors import PlanError
from benchtui.plan.commands import default_jobfile_path, estimated_seconds, step_commands
from benchtui.plan.fio_options import fio_jobs, size_value
from benchtui.plan.fio_rewrite import jobfiles_in_args, set_in_args, set_in_jobfile
from benchtui.plan.loader import load_plan
from benchtui.plan.model import Plan
from benchtui.plan.preflight import WARNING, preflight
from tests.helpers import require_tool

HOSTS = '[hosts.here]\nlocal = true\n[hosts.db1]\naddress = "10.0.0.11"\n'
# HOSTS is 4 lines: a step that follows starts on line 5.


def load(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    return load_plan(path)


def message(tmp_path: Path, text: str) -> str:
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PlanError) as caught:
        load_plan(path)
    return str(caught.value).replace(str(tmp_path), "DIR")


def fio_step(matrix: str, *, args: str = "--filename=/data/f --rw=randread --runtime=10",
             extra: str = "") -> str:
    return (f'[[step]]\nname = "randread"\ntool = "fio"\nhosts = "here"\nargs = "{args}"\n'
            f"matrix = {matrix}\n{extra}")


# --- expansion ----------------------------------------------------------------------------------

def test_the_issue_matrix_expands_in_order_with_names_and_values(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + fio_step(
        '{ ioengine = ["psync", "libaio", "io_uring"], bs = ["4k", "1m"], iodepth = [1, 32] }',
        extra='repeat = 3\nselect = "median"\n'))
    names = [s.name for s in plan.steps]
    assert len(names) == 12
    assert names[:4] == ["randread ioengine=psync bs=4k iodepth=1",
                         "randread ioengine=psync bs=4k iodepth=32",
                         "randread ioengine=psync bs=1m iodepth=1",
                         "randread ioengine=psync bs=1m iodepth=32"]
    assert names[-1] == "randread ioengine=io_uring bs=1m iodepth=32"
    assert "randread ioengine=libaio bs=4k iodepth=32" in names
    step = plan.step("randread ioengine=libaio bs=4k iodepth=32")
    assert dict(step.matrix) == {"ioengine": "libaio", "bs": "4k", "iodepth": "32"}
    assert list(step.matrix) == ["ioengine", "bs", "iodepth"]
    assert step.sweep == "randread" and step.select == "median" and step.repeat == 3
    assert step.args == ("--filename=/data/f", "--rw=randread", "--runtime=10",
                         "--ioengine=libaio", "--bs=4k", "--iodepth=32")
    job = fio_jobs(step.args, None, step.name)[0]
    assert (job.ioengine, job.iodepth, size_value(job.get("bs"))) == ("libaio", 32, 4096)
    assert {s.index for s in plan.steps} == {0} and {s.hosts for s in plan.steps} == {("here",)}
    # the engine runs steps as they are: the sum of every run, by the steps' own runtimes
    assert estimated_seconds(plan) == (12 * 3 * 10.0, [])


def test_values_replace_the_option_where_args_set_it(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + fio_step(
        '{ bs = ["1m"], direct = [true, false] }',
        args="--filename=/data/f --bs=4k --rw=read --direct=1 --size=1g"))
    assert [s.name for s in plan.steps] == ["randread bs=1m direct=1", "randread bs=1m direct=0"]
    assert plan.steps[1].args == ("--filename=/data/f", "--bs=1m", "--rw=read", "--direct=0",
                                  "--size=1g")


def test_a_plain_step_and_an_unnamed_sweep(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + '[[step]]\ntool = "fio"\nhosts = "here"\n'
                'args = "--rw=read --size=1m"\nmatrix = { numjobs = [1, 2] }\n'
                '[[step]]\ntool = "fio"\nhosts = "here"\nargs = "--rw=read --size=1m"\n')
    assert [s.name for s in plan.steps] == ["fio numjobs=1", "fio numjobs=2", "fio-2"]
    plain = plan.steps[2]
    assert plain.sweep is None and not plain.matrix and plain.select == "all"
    assert plan.steps[0].sweep == "fio"


def test_a_matrix_written_as_a_table(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + '[[step]]\nname = "s"\ntool = "fio"\nhosts = "here"\n'
                'args = "--rw=read --size=1m"\n[step.matrix]\nrw = ["read", "randread"]\n')
    assert [s.name for s in plan.steps] == ["s rw=read", "s rw=randread"]


def test_a_sweep_names_its_fio_job_after_itself_and_copies_its_own_jobfile(
        tmp_path: Path) -> None:
    (tmp_path / "j.fio").write_text("[global]\nrw=read\n[a]\nsize=1m\n")
    plan = load(tmp_path, HOSTS + '[[step]]\nname = "seq"\ntool = "fio"\nhosts = "here"\n'
                'args = "--size=1m --rw=read"\nmatrix = { bs = ["4k"] }\n'
                '[[step]]\nname = "jf"\ntool = "fio"\nhosts = "here"\njobfile = "j.fio"\n'
                'matrix = { bs = ["8k"] }\n')
    seq, jf = plan.steps
    assert "--name=seq" in step_commands(plan, seq)[0].argv
    assert default_jobfile_path(plan, jf) == "/var/tmp/benchtui/plan/jf_bs_8k-j.fio"
    upload = step_commands(plan, jf)[0].uploads[0]
    assert upload.local == tmp_path / "j.fio" and upload.text == jf.jobfile_text
    assert jf.jobfile_text == "[global]\nbs=8k\nrw=read\n[a]\nsize=1m\n"
    assert jf.args == ("--bs=8k",)


# --- setting an option in args and jobfiles -----------------------------------------------------

@pytest.mark.parametrize(("args", "expected"), [
    ((), ("--bs=1m",)),
    (("--rw=read",), ("--rw=read", "--bs=1m")),
    (("--bs=4k", "--rw=read"), ("--bs=1m", "--rw=read")),
    (("--bs", "4k", "--rw=read"), ("--bs=1m", "--rw=read")),
    (("-bs=4k",), ("--bs=1m",)),
    (("--blocksize=4k",), ("--bs=1m",)),
    # jobs defined with --name: the defaults get it, each job that sets its own is replaced
    (("--rw=read", "--name=a", "--bs=4k", "--name", "b"),
     ("--rw=read", "--bs=1m", "--name=a", "--bs=1m", "--name", "b")),
    (("--bs=8k", "--name=a", "--name=b", "--bs=4k"),
     ("--bs=1m", "--name=a", "--name=b", "--bs=1m")),
])
def test_set_in_args(args: tuple[str, ...], expected: tuple[str, ...]) -> None:
    assert set_in_args(args, "bs", "1m") == expected


@pytest.mark.parametrize(("args", "expected"), [
    (("--rw=read", "x.fio"), ["x.fio"]),
    (("--iodepth_batch", "4", "--rw", "read"), []),
    (("--time_based", "x.fio"), ["x.fio"]),
])
def test_jobfiles_in_args(args: tuple[str, ...], expected: list[str]) -> None:
    assert jobfiles_in_args(args) == expected


def test_a_flag_option_keeps_the_word_after_it() -> None:
    assert set_in_args(("--time_based", "x.fio"), "time_based", "0") == \
        ("--time_based=0", "x.fio")


@pytest.mark.parametrize(("text", "expected"), [
    ("[global]\nbs=4k\n[a]\nrw=read\n", "[global]\nbs=1m\n[a]\nrw=read\n"),
    ("[global]\nrw=read\n[a]\n", "[global]\nbs=1m\nrw=read\n[a]\n"),
    ("; c\n[a]\nrw=read\n", "; c\n[global]\nbs=1m\n[a]\nrw=read\n"),
    ("[global]\n[a]\n  blocksize = 4k\n[b]\n", "[global]\nbs=1m\n[a]\n  bs=1m\n[b]\n"),
    ("[a]\r\nbs=4k\r\n", "[global]\r\nbs=1m\r\n[a]\r\nbs=1m\r\n"),
])
def test_set_in_jobfile(text: str, expected: str) -> None:
    assert set_in_jobfile(text, "bs", "1m") == expected


JOBFILE = """\
; a job before any [global]: a new [global] at the top must reach it
[first]
filename={d}/first.dat
rw=read
size=256k
bs=64k

[global]
rw=read
size=256k
ioengine=sync

[second]
filename={d}/second.dat

[third]
filename={d}/third.dat
blocksize=32k
ioengine=psync
"""


def _last_json(text: str) -> dict[str, object]:
    decoder = json.JSONDecoder()
    position, last = 0, None
    while (start := text.find("{", position)) >= 0:
        last, position = decoder.raw_decode(text, start)
    assert isinstance(last, dict)
    return last


def test_jobfile_values_reach_every_job_in_real_fio(tmp_path: Path) -> None:
    """fio runs the command benchtui builds, on the jobfile text it would copy: every job
    reads with the swept block size and engine, the ones that set their own too."""
    require_tool("fio")
    (tmp_path / "j.fio").write_text(JOBFILE.format(d=tmp_path))
    plan = load(tmp_path, HOSTS + '[[step]]\nname = "jf"\ntool = "fio"\nhosts = "here"\n'
                'jobfile = "j.fio"\nmatrix = { bs = ["4k", "16k"], ioengine = ["psync"] }\n')
    assert [s.name for s in plan.steps] == ["jf bs=4k ioengine=psync", "jf bs=16k ioengine=psync"]
    for step, block in zip(plan.steps, (4096, 16384), strict=True):
        remote = tmp_path / f"{step.matrix['bs']}.fio"
        (command,) = step_commands(plan, step, jobfile_path=str(remote))
        (upload,) = command.uploads
        assert upload.text is not None
        remote.write_text(upload.text)
        shown = subprocess.run(["fio", "--showcmd", str(remote)], capture_output=True,
                               text=True, check=True).stdout
        assert "--bs=64k" not in shown and "--blocksize=32k" not in shown
        out = subprocess.run(command.argv, capture_output=True, text=True, timeout=60,
                             check=True, cwd=tmp_path).stdout
        report = _last_json(out)
        jobs = report["jobs"]
        assert isinstance(jobs, list)
        assert [j["jobname"] for j in jobs] == ["first", "second", "third"]
        options = report["global options"]
        assert isinstance(options, dict)
        for job in jobs:
            read = job["read"]
            assert read["total_ios"] > 0
            assert read["io_bytes"] / read["total_ios"] == block, job["jobname"]
            merged = {**options, **job["job options"]}
            assert merged["ioengine"] == "psync", job["jobname"]
        # and what preflight and the deadlines read is what fio ran
        assert {size_value(j.get("bs")) for j in fio_jobs(step.args, step.jobfile_text,
                                                          step.name)} == {block}


# --- errors -------------------------------------------------------------------------------------

BAD = [
    pytest.param(fio_step('{ bs = [] }'),
                 "plan.toml:10: bs in matrix of step \"randread\" is an empty list; give the "
                 "values to sweep, e.g. bs = [...] with two or more, or remove bs",
                 id="empty-list"),
    pytest.param(fio_step('{ bs = "4k" }'),
                 'plan.toml:10: bs in matrix of step "randread" must be a list of values, not '
                 'text ("4k"); write bs = ["4k"]', id="not-a-list"),
    pytest.param(fio_step('{ iodepht = [1, 2] }'),
                 'plan.toml:10: iodepht in matrix of step "randread" is not a fio option; did '
                 "you mean 'iodepth'?", id="not-an-option"),
    pytest.param(fio_step('{ name = ["a", "b"] }'),
                 'plan.toml:10: name in matrix of step "randread" cannot be swept: fio\'s job '
                 "name is set from the step's name; sweep the options of the job instead",
                 id="name"),
    pytest.param(fio_step('{ iodepth = [1, 32, 1] }'),
                 'plan.toml:10: iodepth in matrix of step "randread" lists "1" twice, which '
                 "would make two steps with the same name; list each value once",
                 id="duplicate-value"),
    pytest.param(fio_step('{ direct = [1, true] }'),
                 'plan.toml:10: direct in matrix of step "randread" lists "1" twice, which '
                 "would make two steps with the same name; list each value once",
                 id="duplicate-after-conversion"),
    pytest.param(fio_step('{ rate = [1.5] }'),
                 'plan.toml:10: value 1 of rate in matrix of step "randread" must be text, a '
                 'whole number or true/false, not a number (1.5); write it as text: "1.5"',
                 id="float"),
    pytest.param(fio_step('{ bs = ["4k\\n[evil]"] }'),
                 'plan.toml:10: value 1 of bs in matrix of step "randread" ("4k\n[evil]") is '
                 "empty or holds spaces at its ends or control characters; write it as fio "
                 'reads it, e.g. "bs"', id="newline"),
    pytest.param(fio_step("{}"),
                 'plan.toml:10: matrix of step "randread" is empty; write matrix = { ioengine = '
                 '["psync", "libaio"], bs = ["4k", "1m"] }', id="empty-matrix"),
    pytest.param(fio_step('["bs"]'),
                 'plan.toml:10: matrix of step "randread" must be a table of lists, not a list '
                 "(['bs']); write matrix = { ioengine = [\"psync\", \"libaio\"], bs = "
                 '["4k", "1m"] }',
                 id="matrix-not-a-table"),
    pytest.param(fio_step('{ bs = [' + ", ".join(str(n) for n in range(1, 102)) + '], '
                          'iodepth = [' + ", ".join(str(n) for n in range(1, 101)) + "] }"),
                 'plan.toml:10: matrix of step "randread" makes 10100 steps, more than 10000; '
                 "sweep fewer values, or split the sweep into several steps", id="too-many"),
    pytest.param(fio_step('{ bs = ["4k"] }', extra='repeat = 3\nselect = "mean"\n'),
                 'plan.toml:12: select "mean" of step "randread" must be one of median, best, '
                 "all; did you mean 'median'?", id="bad-select"),
    pytest.param(fio_step('{ bs = ["4k"] }', extra="select = 3\n"),
                 'plan.toml:11: select of step "randread" must be text, not a whole number (3); '
                 'write select = "median"', id="select-not-text"),
    pytest.param('[[step]]\nname = "m"\ntool = "mbw"\nhosts = "here"\nargs = "-n 1 64"\n'
                 'matrix = { n = [1, 2] }\n',
                 'plan.toml:10: matrix of step "m" is for fio steps, not mbw; each value of a '
                 "matrix becomes a fio option; for other tools write one step per value",
                 id="not-fio"),
    pytest.param('[[step]]\nname = "c"\ntool = "fio"\nhosts = "here"\ncommand = "fio x.fio"\n'
                 'matrix = { bs = ["4k"] }\n',
                 'plan.toml:10: step "c" runs a command, which runs as written, so it cannot '
                 'take a matrix; give fio its options with args = "..." or jobfile = "..." '
                 "instead", id="command"),
    pytest.param(fio_step('{ bs = ["4k"] }', args="--rw=read jobs/x.fio"),
                 'plan.toml:10: args of step "randread" name a jobfile ("jobs/x.fio"), whose '
                 "own options would win over the matrix's; give it with jobfile = "
                 '"jobs/x.fio" instead, so that the values are set in it', id="jobfile-in-args"),
    pytest.param(fio_step('{ rate = [{ a = 1 }] }'),
                 'plan.toml:10: value 1 of rate in matrix of step "randread" must be text, a '
                 "whole number or true/false, not a table ({...}); write the values as fio "
                 'reads them, e.g. rate = ["..."]', id="table-value"),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_matrix_or_select(tmp_path: Path, text: str, expected: str) -> None:
    assert message(tmp_path, HOSTS + text) == "DIR/" + expected


def test_an_error_in_a_matrix_table_points_at_its_key(tmp_path: Path) -> None:
    text = HOSTS + ('[[step]]\nname = "s"\ntool = "fio"\nhosts = "here"\nargs = "--rw=read"\n'
                    '[step.matrix]\nbs = ["4k"]\niodepth = []\n')
    assert message(tmp_path, text).startswith("DIR/plan.toml:12: iodepth in matrix of step")


# --- preflight ----------------------------------------------------------------------------------

def test_preflight_says_a_sweep_wide_warning_once_and_select_without_repeat(
        tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + fio_step(
        '{ ioengine = ["psync", "libaio"], bs = ["4k", "1m"] }',
        args="--filename=/data/f --rw=randread --iodepth=8 --direct=1 --runtime=10",
        extra='select = "best"\n'))
    findings = [f for f in preflight(plan, {}) if f.severity == WARNING]
    texts = [f.message for f in findings]
    assert 'step "randread" has select = "best" but runs once' in texts
    # iodepth with psync: only the two psync steps, each named; not collapsed
    depth = [f for f in findings if "iodepth=8 has no effect" in f.message]
    assert [f.step for f in depth] == ["randread ioengine=psync bs=4k",
                                       "randread ioengine=psync bs=1m"]


def test_preflight_collapses_what_every_step_of_a_sweep_has(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + fio_step(
        '{ bs = ["4k", "1m"] }', args="--filename=/data/f --rw=randread --runtime=10"))
    facts = {"here": {"mem_bytes": 8 << 30, "files": {"/data/f": {"exists": True,
                                                                 "size_bytes": 1 << 20}}}}
    buffered = [f for f in preflight(plan, facts) if "buffered I/O" in f.message]
    assert len(buffered) == 1
    assert buffered[0].step == "randread"
    assert buffered[0].message.startswith(
        'step "randread" (every step of the sweep) on here uses buffered I/O')
