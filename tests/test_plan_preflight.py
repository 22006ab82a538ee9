"""Preflight: missing tools, refused destructive writes, and the seeds' methodology warnings,
checked over a plan and per-host facts (pure: no host is contacted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.plan.loader import load_plan
from benchtui.plan.model import Plan
from benchtui.plan.preflight import (
    ERROR,
    WARNING,
    Finding,
    PreflightFacts,
    fallback_hosts,
    is_block_device_path,
    is_partition_of,
    paths_to_inspect,
    preflight,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GIB = 1024**3
HOSTS = """\
[hosts.db1]
address = "10.0.0.11"
[hosts.db2]
address = "10.0.0.12"
allow_destructive = ["/dev/nvme1n1", "/dev/disk/by-id/nvme-scratch"]
"""
ALL_TOOLS = {"fio": "fio-3.33", "iostat": "sysstat version 12.6.1", "iperf3": "iperf 3.12",
             "stdbuf": "stdbuf (GNU coreutils) 9.1", "mbw": "", "rados": "ceph version 16"}


def host_facts(**extra: Any) -> PreflightFacts:
    """A healthy host: every tool, 16 GiB of RAM, an HDD and a scratch NVMe drive."""
    facts: dict[str, Any] = {
        "tools": dict(ALL_TOOLS), "mem_bytes": 16 * GIB,
        "block_devices": {
            "sda": {"name": "sda", "size_bytes": 4000 * GIB, "rotational": True},
            "nvme1n1": {"name": "nvme1n1", "size_bytes": 1000 * GIB, "rotational": False},
        },
        "mounts": [{"device": "/dev/sda1", "mountpoint": "/", "fstype": "ext4"}],
        "files": {},
    }
    facts.update(extra)
    return facts  # type: ignore[return-value]


def plan_of(tmp_path: Path, body: str) -> Plan:
    path = tmp_path / "plan.toml"
    path.write_text(HOSTS + body, encoding="utf-8")
    return load_plan(path)


def check(tmp_path: Path, body: str, **facts: PreflightFacts) -> list[str]:
    """The findings as ``severity host: sentence``."""
    plan = plan_of(tmp_path, body)
    every = {"db1": host_facts(), "db2": host_facts()}
    every.update(facts)
    return [f"{f.severity} {f.host}: {f}" for f in preflight(plan, every)]


def fio_step(args: str, hosts: str = '["db1"]', name: str = "s") -> str:
    return f'[[step]]\nname = "{name}"\ntool = "fio"\nhosts = {hosts}\nargs = "{args}"\n'


GOOD = "--filename=/data/f --size=64g --rw=randread --ioengine=libaio --iodepth=32 " \
       "--direct=1 --runtime=300 --time_based"


def test_a_good_plan_has_no_findings(tmp_path: Path) -> None:
    assert check(tmp_path, fio_step(GOOD)) == []


# --- programs ------------------------------------------------------------------------------------

def test_a_missing_tool_fails_that_host_and_says_how_to_install_it(tmp_path: Path) -> None:
    no_fio = host_facts(tools={k: v for k, v in ALL_TOOLS.items() if k != "fio"})
    assert check(tmp_path, fio_step(GOOD, '["db1", "db2"]'), db1=no_fio) == [
        "error db1: fio is not installed on db1 (apt-get install fio)"]
    finding = preflight(plan_of(tmp_path, fio_step(GOOD)), {"db1": no_fio})[0]
    assert (finding.host, finding.step, finding.severity) == ("db1", "s", ERROR)
    assert finding.message == "fio is not installed on db1"
    assert finding.hint == "apt-get install fio"


def test_every_missing_program_is_reported(tmp_path: Path) -> None:
    body = ('[[step]]\nname = "w"\ntool = "rados_bench"\nhosts = ["db1"]\nargs = "-p t 5 write"'
            '\n[[step]]\nname = "x"\nhosts = ["db1"]\ncommand = "/opt/x/run"\nparser = "mbw"\n')
    bare = host_facts(tools={})
    assert check(tmp_path, body, db1=bare) == [
        "error db1: rados is not installed on db1 (apt-get install ceph-common)",
        "error db1: stdbuf is not installed on db1 (apt-get install coreutils)",
        'error db1: /opt/x/run is not installed on db1 (check the program of step "x")',
    ]


def test_missing_iostat_falls_back_to_diskstats_with_a_warning(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[monitor]]\ntool = "iostat"\n')
    no_iostat = host_facts(tools={"fio": "fio-3.33"})
    facts = {"db1": host_facts(), "db2": no_iostat}
    assert [str(f) for f in preflight(plan, facts)] == [
        "iostat is not installed on db2: reading /proc/diskstats instead "
        "(apt-get install sysstat)"]
    assert preflight(plan, facts)[0].severity == WARNING
    assert fallback_hosts(plan, plan.monitors[0], facts) == {"db2"}


def test_an_iostat_step_needs_iostat(tmp_path: Path) -> None:
    body = '[[step]]\nname = "io"\ntool = "iostat"\nhosts = ["db1"]\nduration = 10\n'
    assert check(tmp_path, body, db1=host_facts(tools={})) == [
        "error db1: iostat is not installed on db1 (apt-get install sysstat)"]


def test_a_host_without_facts_gets_only_the_checks_that_need_none(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, fio_step("--filename=/dev/sdb --rw=write --bs=4k"))
    assert [str(f) for f in preflight(plan, {})] == [
        'step "s" would write to /dev/sdb on db1 and destroy what is on it (if that is '
        'intended, add allow_destructive = ["/dev/sdb"] to [hosts.db1])']


# --- destructive writes --------------------------------------------------------------------------

def test_writing_to_a_block_device_is_refused_naming_host_device_and_step(tmp_path: Path) -> None:
    body = fio_step("--filename=/dev/nvme1n1 --rw=randwrite --direct=1", name="wipe")
    (finding,) = preflight(plan_of(tmp_path, body), {"db1": host_facts()})
    assert (finding.host, finding.step, finding.severity) == ("db1", "wipe", ERROR)
    assert str(finding) == (
        'step "wipe" would write to /dev/nvme1n1 on db1 and destroy what is on it (if that is '
        'intended, add allow_destructive = ["/dev/nvme1n1"] to [hosts.db1])')


@pytest.mark.parametrize("rw", ["write", "randwrite", "rw", "randrw", "trim", "trimwrite",
                                "readwrite", "randwrite:8"])
def test_every_writing_mode_is_refused(tmp_path: Path, rw: str) -> None:
    found = check(tmp_path, fio_step(f"--filename=/dev/nvme1n1 --rw={rw} --direct=1 "
                                     "--runtime=60"))
    assert len(found) == 1 and "would write to /dev/nvme1n1" in found[0]


@pytest.mark.parametrize("args", [
    "--filename=/dev/nvme1n1 --rw=randread --direct=1",
    "--filename=/dev/nvme1n1 --direct=1",  # fio reads by default
    "--filename=/dev/nvme1n1 --rw=write --readonly --direct=1",
    "--filename=/dev/shm/f --rw=write --size=64g --direct=1",
    "--filename=/dev/null --rw=write --direct=1",
])
def test_reads_and_pseudo_devices_are_not_destructive(tmp_path: Path, args: str) -> None:
    assert not [f for f in check(tmp_path, fio_step(args + " --runtime=60")) if "error" in f]


def test_allowed_devices_may_be_written(tmp_path: Path) -> None:
    body = fio_step("--filename=/dev/nvme1n1 --rw=write --direct=1 --runtime=60", '["db2"]')
    assert check(tmp_path, body) == []


def test_an_allowed_device_by_its_link_name(tmp_path: Path) -> None:
    facts = host_facts(files={"/dev/disk/by-id/nvme-scratch": {"real_path": "/dev/nvme2n1"},
                              "/dev/nvme2n1": {"real_path": "/dev/nvme2n1"}})
    body = fio_step("--filename=/dev/nvme2n1 --rw=write --direct=1 --runtime=60", '["db2"]')
    assert check(tmp_path, body, db2=facts) == []
    assert check(tmp_path, body)[0].startswith("error db2: step \"s\" would write to /dev/nvme2n1")


def test_a_mounted_device_is_always_refused(tmp_path: Path) -> None:
    facts = host_facts(mounts=[{"device": "/dev/nvme1n1p2", "mountpoint": "/data/",
                                "fstype": "xfs"}])
    body = fio_step("--filename=/dev/nvme1n1 --rw=write --direct=1 --runtime=60", '["db2"]')
    assert check(tmp_path, body, db2=facts) == [
        'error db2: step "s" would write to /dev/nvme1n1 on db2, which is mounted at /data/ '
        "(writing to a mounted device destroys its filesystem and benchtui always refuses it; "
        "test a file on it instead (filename=/data/fio.dat))"]


def test_a_device_holding_volumes_is_refused(tmp_path: Path) -> None:
    facts = host_facts()
    facts["block_devices"]["nvme1n1"]["holders"] = ["dm-0"]
    body = fio_step("--filename=/dev/nvme1n1 --rw=write --direct=1 --runtime=60", '["db2"]')
    assert check(tmp_path, body, db2=facts) == [
        'error db2: step "s" would write to /dev/nvme1n1 on db2, which is in use by dm-0 (LVM, '
        "RAID or dm-crypt) (benchtui always refuses to write to a device in use)"]


def test_a_destructive_jobfile_is_refused(tmp_path: Path) -> None:
    (tmp_path / "w.fio").write_text("[global]\nfilename=/dev/sdb:/dev/sdc\ndirect=1\n"
                                    "runtime=60\n[read]\nrw=read\n[write]\nstonewall\n"
                                    "rw=randwrite\n")
    body = '[[step]]\nname = "jf"\ntool = "fio"\nhosts = ["db1"]\njobfile = "w.fio"\n'
    assert check(tmp_path, body) == [
        f'error db1: step "jf" would write to /dev/{d} on db1 and destroy what is on it (if '
        f'that is intended, add allow_destructive = ["/dev/{d}"] to [hosts.db1])'
        for d in ("sdb", "sdc")]


def test_a_fio_monitor_is_checked_too(tmp_path: Path) -> None:
    body = '[[monitor]]\nname = "load"\ntool = "fio"\nhosts = ["db1"]\n' \
           'args = "--filename=/dev/sdb --rw=write --direct=1"\n'
    assert check(tmp_path, body) == [
        'error db1: monitor "load" would write to /dev/sdb on db1 and destroy what is on it '
        '(if that is intended, add allow_destructive = ["/dev/sdb"] to [hosts.db1])']


def test_device_names() -> None:
    assert is_block_device_path("/dev/nvme1n1") and is_block_device_path("/dev/mapper/vg-a")
    assert not is_block_device_path("/dev/shm/x") and not is_block_device_path("/data/x")
    assert is_partition_of("sda1", "sda") and is_partition_of("nvme1n1p2", "nvme1n1")
    assert not is_partition_of("nvme1n10", "nvme1n1") and not is_partition_of("sdab", "sda")


# --- warnings ----------------------------------------------------------------------------------

def test_buffered_io_on_a_file_that_fits_in_ram(tmp_path: Path) -> None:
    body = fio_step("--filename=/data/f --size=4g --rw=randread --runtime=300")
    assert check(tmp_path, body) == [
        'warning db1: step "s" on db1 uses buffered I/O (no direct=1) over 4 GiB of /data/f, '
        "less than 2x the 16 GiB of RAM: the page cache will serve reads and absorb writes "
        "(add direct=1, or make the test data several times larger than RAM)"]
    big = fio_step("--filename=/data/f --size=64g --rw=randread --runtime=300")
    assert check(tmp_path, big) == []
    by_file = fio_step("--filename=/data/f --rw=randread --runtime=300 --direct=0")
    facts = host_facts(files={"/data/f": {"exists": True, "size_bytes": 8 * GIB}})
    assert "over 8 GiB of /data/f" in check(tmp_path, by_file, db1=facts)[0]
    assert check(tmp_path, by_file) == []  # size unknown: nothing to say


def test_iodepth_with_a_synchronous_engine(tmp_path: Path) -> None:
    body = fio_step("--filename=/data/f --size=64g --iodepth=32 --direct=1 --runtime=300")
    assert check(tmp_path, body) == [
        'warning None: step "s": iodepth=32 has no effect with the synchronous ioengine psync '
        "(fio's default) (use ioengine=libaio or io_uring with direct=1, or raise numjobs "
        "instead)"]
    body = fio_step("--filename=/data/f --size=64g --ioengine=pvsync2 --hipri --iodepth=4 "
                    "--direct=1 --runtime=300")
    assert "iodepth=4 has no effect with the synchronous ioengine pvsync2 (use" in \
        check(tmp_path, body)[0]


@pytest.mark.parametrize(("engine", "effect"), [
    ("libaio", "submits synchronously and goes through the page cache"),
    ("io_uring", "goes through the page cache"),
])
def test_async_engines_without_direct(tmp_path: Path, engine: str, effect: str) -> None:
    body = fio_step(f"--filename=/data/f --size=64g --ioengine={engine} --runtime=300")
    assert check(tmp_path, body) == [
        f'warning None: step "s": {engine} without direct=1 {effect} (add direct=1)']


def test_short_runs_on_ssds(tmp_path: Path) -> None:
    body = fio_step("--filename=/dev/nvme1n1 --rw=randread --direct=1 --runtime=30")
    assert check(tmp_path, body) == [
        "warning db1: step \"s\" runs only 30 s on db1's SSD: short runs on SSDs measure "
        "their caches, not the steady state (run at least 60 s (e.g. --runtime=300 "
        "--time_based) and repeat the step (repeat = 3))"]
    on_hdd = fio_step("--filename=/dev/sda --rw=randread --direct=1 --runtime=30")
    assert check(tmp_path, on_hdd) == []
    on_file = fio_step("--filename=/data/f --size=64g --direct=1 --runtime=30")
    on_nvme = host_facts(files={"/data/f": {"exists": True, "device": "nvme1n1p1"}})
    assert "runs only 30 s on db1's SSD" in check(tmp_path, on_file, db1=on_nvme)[0]
    assert check(tmp_path, on_file) == []  # which disk holds /data/f: unknown


def test_reading_a_file_that_was_never_written(tmp_path: Path) -> None:
    body = fio_step("--filename=/data/new --size=64g --rw=randread --direct=1 --runtime=300")
    missing = host_facts(files={"/data/new": {"exists": False}})
    assert check(tmp_path, body, db1=missing) == [
        'warning db1: step "s" reads /data/new on db1, which does not exist yet: fio lays it '
        "out first, so the reads hit freshly written (or sparse) data, not data as it is "
        "really stored (write the file in an earlier step (rw=write over its whole size), or "
        "point filename at existing data)"]
    present = host_facts(files={"/data/new": {"exists": True, "size_bytes": 64 * GIB}})
    assert check(tmp_path, body, db1=present) == []
    written_first = fio_step("--filename=/data/new --size=64g --rw=write --direct=1",
                             name="fill") + body
    assert check(tmp_path, written_first, db1=missing) == []


def test_a_jobfile_that_writes_before_it_reads(tmp_path: Path) -> None:
    (tmp_path / "wr.fio").write_text(
        "[global]\nfilename=/data/new\nsize=64g\ndirect=1\nruntime=300\n"
        "[fill]\nrw=write\n[read]\nstonewall\nrw=read\n")
    body = '[[step]]\nname = "jf"\ntool = "fio"\nhosts = ["db1"]\njobfile = "wr.fio"\n'
    assert check(tmp_path, body, db1=host_facts(files={"/data/new": {"exists": False}})) == []


def test_option_drops_are_warnings(tmp_path: Path) -> None:
    assert check(tmp_path, fio_step(GOOD + " --output-format=terse")) == [
        'warning None: step "s": --output-format=terse was dropped: benchtui runs fio with '
        "--output-format=json+ and reads its JSON"]


def test_errors_come_first(tmp_path: Path) -> None:
    body = fio_step("--filename=/data/f --size=1g --iodepth=8 --runtime=300", name="a") + \
        fio_step("--filename=/dev/sdb --rw=write --direct=1 --runtime=300", name="b")
    severities = [f.split(" ")[0] for f in check(tmp_path, body)]
    assert severities == ["error", "warning", "warning"]


# --- what the session gathers -----------------------------------------------------------------

def test_paths_to_inspect(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, fio_step("--filename=/data/a:/dev/sdb --rw=read", '"all"'))
    assert paths_to_inspect(plan) == {
        "db1": ["/data/a", "/dev/sdb"],
        "db2": ["/dev/nvme1n1", "/dev/disk/by-id/nvme-scratch", "/data/a", "/dev/sdb"]}


def test_the_examples_preflight_cleanly_on_healthy_hosts() -> None:
    plan = load_plan(EXAMPLES / "fleet.toml")
    facts = {h: host_facts(tools={**ALL_TOOLS, "rados": "16"}) for h in plan.hosts}
    assert preflight(plan, facts) == []
    demo = load_plan(EXAMPLES / "local-demo.toml")
    found = preflight(demo, {"here": host_facts(files={"/var/tmp/benchtui-demo.dat": {
        "exists": False, "device": "nvme1n1p1"}})})
    assert found == [Finding("here", "randrw-4k", WARNING, found[0].message, found[0].hint)]
    assert "runs only 20 s on here's SSD" in found[0].message


# --- robustness: facts come from remote hosts and may be anything -------------------------------

JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                    | st.floats(allow_nan=True),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
FACTS = st.fixed_dictionaries({}, optional={
    "tools": st.dictionaries(st.sampled_from(["fio", "iostat", "stdbuf"]), st.text()) | JUNK,
    "mem_bytes": st.integers(-1, 2**40) | JUNK,
    "block_devices": st.dictionaries(st.sampled_from(["sdb", "nvme1n1", "x"]), JUNK) | JUNK,
    "mounts": st.lists(st.dictionaries(st.sampled_from(["device", "mountpoint"]),
                                       st.sampled_from(["/dev/sdb1", "/", 3])) | JUNK) | JUNK,
    "files": st.dictionaries(st.sampled_from(["/data/f", "/dev/sdb"]), JUNK) | JUNK,
})


@settings(max_examples=200, deadline=None)
@given(FACTS)
def test_damaged_facts_never_break_preflight(facts: dict[str, Any]) -> None:
    plan = load_plan(EXAMPLES / "fleet.toml")
    for finding in preflight(plan, {"db1": facts, "db2": facts}):
        assert finding.severity in (ERROR, WARNING) and str(finding)


def test_programs_each_host_needs() -> None:
    from benchtui.plan.tools import executables_needed

    plan = load_plan(EXAMPLES / "fleet.toml")
    assert executables_needed(plan) == {
        "db1": {"iostat": "iostat", "fio": "fio", "iperf3": "iperf3", "rados": "rados_bench",
                "stdbuf": "rados_bench"},
        "db2": {"iostat": "iostat", "fio": "fio", "iperf3": "iperf3"},
    }
