"""fio's options in a plan checked as fio checks them (issue 27), against the real fio: its
parser's readings (``--debug=parse``), its refusals (``--parse-only``) and its own "Did you
mean"; then ``benchtui check`` on plans with such options, and preflight's check of options
newer than a host's fio."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchtui.plan.fio_check import args_options, check_options, external_engine
from benchtui.plan.fio_values import read_size, read_time
from benchtui.plan.loader import parse_plan
from benchtui.plan.preflight import ERROR, preflight
from tests.helpers import require_tool


def fio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([require_tool("fio"), "--parse-only", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def problems(args: str) -> list[str]:
    given = args_options(shlex.split(args))
    return [f"{p.reason}; {p.hint}" for p in check_options(given,
                                                           external=external_engine(given))]


TIMES = ["15", "15s", "15s0", "15sec", "2min", "2m", "1.5", "1.5s", "500ms", "500msec", "10us",
         "1h", "1d", "3S", "0x10", "7 s"]
SIZES = ["4k", "4K", "4kb", "4KiB", "1m", "1MiB", "1.5g", "4x", "100", "2g0", "0x1000", "7b"]


def test_times_and_sizes_are_read_as_the_real_fio_reads_them() -> None:
    # One fio, one job per value; --debug=parse prints what fio's parser made of each.
    args = []
    for n, value in enumerate(TIMES):
        args += [f"--name=t{n}", f"--runtime={value}"]
    for n, value in enumerate(SIZES):
        args += [f"--name=s{n}", f"--size={value}"]
    done = fio("--debug=parse", *args)
    assert done.returncode == 0, done.stderr
    outs: dict[tuple[str, str], int] = {}
    option = ""
    for line in (done.stdout + done.stderr).splitlines():
        if m := re.search(r"__handle_option=(\w+), type=\w+, ptr=(.*)$", line):
            option, ptr = m.group(1), m.group(2)
        elif (m := re.search(r"ret=0, out=(\d+)", line)) and option:
            outs[(option, ptr)] = int(m.group(1))
    for value in TIMES:
        ours = read_time(value, bare_seconds=True).value
        assert ours is not None and round(ours * 1e6) == outs[("runtime", value)], value
    for value in SIZES:
        ours = read_size(value).value
        assert ours is not None and ours == outs[("size", value)], value
    # What is exact is what fio reads as the text says; the rest is said.
    exact = {v for v in TIMES if read_time(v, bare_seconds=True).exact}
    assert exact == {"15", "15s", "2m", "500ms", "500msec", "10us", "1h", "1d", "3S", "0x10",
                     "7 s"}
    assert {v for v in SIZES if read_size(v).exact} == {"4k", "4K", "4kb", "1m", "100",
                                                        "0x1000", "7b"}


RANGES = ["5-10", "5s-10s", "5ms-10ms", "1m-2m", "10s:20s", "3,4", "2k-8k"]


def test_ranges_are_read_part_by_part_as_the_real_fio_reads_them() -> None:
    # fio reads each part from its start to the first comma: in 5s-10s the first part's suffix
    # is "s-10s", microseconds to fio; a size's suffix stops at the dash.
    args = []
    for n, value in enumerate(RANGES):
        args += [f"--name=r{n}", f"--startdelay={value}", f"--name=b{n}", f"--bs={value}"]
    done = fio("--debug=parse", *args)
    assert done.returncode == 0, done.stderr
    firsts: dict[tuple[str, str], int] = {}
    option, ptr = "", ""
    for line in (done.stdout + done.stderr).splitlines():
        if m := re.search(r" handle_option=(\w+), ptr=(.*)$", line):
            option, ptr = m.group(1), m.group(2)
        elif (m := re.search(r"ret=0, out=(\d+)", line)) and (option, ptr) not in firsts:
            firsts[(option, ptr)] = int(m.group(1))
    for value in RANGES:
        first = re.split(r"[,:-]", value)[0]
        read = value.split(",", 1)[0]
        delay = read_time(read, bare_seconds=True, said=first)
        assert delay.value is not None and round(delay.value * 1e6) == \
            firsts[("startdelay", value)], value
        assert read_size(read, said=first).value == firsts[("bs", value)], value
    flagged = {v for v in RANGES if problems(f"--startdelay={v}")}
    assert flagged == {"5s-10s", "1m-2m", "10s:20s", "2k-8k"}
    assert problems("--startdelay=5s-10s") == [
        "fio reads '5s' of --startdelay=5s-10s as 5 microseconds (in a range or list of times, "
        "fio takes s, m, h and d only at the very end: write bare numbers, or us and ms); write "
        "--startdelay=5-10"]


@pytest.mark.parametrize("typo", ["iodepht", "runtme", "Runtime", "rw_mix_read", "dirct",
                                  "numjbos", "ioegine", "blcksize", "group_reprting"])
def test_a_misspelled_option_gets_fio_s_own_suggestion(typo: str) -> None:
    done = fio("--name=x", f"--{typo}=1")
    assert done.returncode != 0
    theirs = re.search(r"Did you mean (\S+)\?", done.stderr)
    (ours,) = problems(f"--{typo}=1")
    assert ours.startswith(f"fio has no option --{typo}; ")
    if theirs:
        assert ours.endswith(f"did you mean --{theirs.group(1)}?")


REFUSED = ["--direct=true", "--iodepth=0", "--rw=randrea", "--runtime=abc", "--bs=0",
           "--size=big", "--numjobs=x", "--iodepth_batch_c=4", "--percentage_sequential=5",
           "--bs=4k --offset=4y1z"]
ACCEPTED = ["--direct=1", "--bs=4k,64k", "--rw=randread:8", "--startdelay=5-10", "--runti=3",
            "--size=10%", "--offset=4z --zonemode=zbd", "--ioengine=libaio --iodepth 8",
            "--random_distribution=zipf:1.2", "--verify=crc32c", "--thinktime=10ms",
            "--time_based --group_reporting", "--readonly"]


@pytest.mark.parametrize("args", REFUSED)
def test_what_fio_refuses_is_refused(args: str) -> None:
    assert fio("--name=x", *shlex.split(args)).returncode != 0
    assert problems(args), args


@pytest.mark.parametrize("args", ACCEPTED)
def test_what_fio_reads_as_written_passes(args: str) -> None:
    assert fio("--name=x", *shlex.split(args)).returncode == 0
    assert problems(args) == []


def test_misread_values_say_what_fio_reads_and_what_to_write() -> None:
    assert problems("--runtime=15s0") == [
        "fio reads --runtime=15s0 as 15 microseconds (its time suffixes are us, ms, s, m, h and "
        "d, after a whole number); write --runtime=15s"]
    assert problems("--size=1.5g --ramp_time=1.5 --bs=4KiB") == [
        "fio reads --size=1.5g as 1 byte (its suffixes are k, m, g, t and p (kb, mb... too), "
        "after a whole number); write --size=1536m",
        "fio reads --ramp_time=1.5 as 1 s (its time suffixes are us, ms, s, m, h and d, after a "
        "whole number); write --ramp_time=1500ms",
        "fio reads --bs=4KiB as 4000 (with fio's kb_base=1024, KiB, MiB... are powers of 1000 "
        "and k, m... of 1024); write --bs=4k"]
    assert problems("--kb_base=1000 --bs=4KiB") == []
    # An external engine (SPDK's plugin) has options fio only knows once it is loaded.
    assert problems("--ioengine=spdk --spdk_json_conf=/etc/spdk.json --iodepth=8") == []
    assert problems("--ioengine=libaoi") == [
        "fio has no ioengine 'libaoi'; did you mean --ioengine=libaio? (fio --enghelp lists "
        "its engines)"]
    # Placeholders and environment variables are the hosts' to fill.
    assert problems("--bs={run}k --size=${SIZE}") == []


PLAN = """[hosts.here]
local = true

[[step]]
name = "rr"
tool = "fio"
{step}
"""


def benchtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_check_exits_2_naming_the_option_and_fio_s_suggestion(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    cases = [
        ('args = "--filename=/tmp/x --iodepht=8"',
         f"{plan}:7: args of step \"rr\": fio has no option --iodepht; did you mean --iodepth?"),
        ('args = "--filename=/tmp/x --runtime=15s0"',
         f"{plan}:7: args of step \"rr\": fio reads --runtime=15s0 as 15 microseconds (its time "
         "suffixes are us, ms, s, m, h and d, after a whole number); write --runtime=15s"),
        ('jobfile = "job.fio"',
         f"{tmp_path / 'job.fio'}:4: jobfile of step \"rr\": fio has no option iodepht; did you "
         "mean iodepth?"),
        ('args = "--filename=/tmp/x"\nmatrix = { bs = ["4k", "1.5m"] }',
         f"{plan}:8: value 2 of bs in matrix of step \"rr\": fio reads bs=1.5m as 1 (its "
         "suffixes are k, m, g, t and p (kb, mb... too), after a whole number); write "
         "bs=1536k"),
    ]
    (tmp_path / "job.fio").write_text("[global]\nioengine=psync ; the default\n[rr]\n"
                                      "iodepht=4\nfilename=/tmp/x\n")
    for step, said in cases:
        plan.write_text(PLAN.format(step=step))
        done = benchtui("check", str(plan))
        assert (done.returncode, done.stderr, done.stdout) == (2, f"benchtui: {said}\n", "")


def test_an_option_newer_than_a_host_s_fio_is_an_error_on_that_host() -> None:
    plan = parse_plan('[hosts.old]\nlocal = true\n[hosts.new]\nlocal = true\n[[step]]\n'
                      'name = "w"\ntool = "fio"\nargs = "--filename=/tmp/x --rw=write '
                      '--verify_write_sequence=0 --size=1m"\n', "plan.toml")
    facts = {"old": {"tools": {"fio": "fio-3.33", "stdbuf": "x"}},
             "new": {"tools": {"fio": "fio-3.39", "stdbuf": "x"}}}
    errors = [f for f in preflight(plan, facts) if f.severity == ERROR
              and "options that" in f.message]
    assert [(f.host, f.message) for f in errors] == [
        ("old", 'step "w" uses fio options that fio-3.33 on old does not have: '
                "verify_write_sequence (since fio-3.38)")]
