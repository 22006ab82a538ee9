"""The plan loader: valid plans become typed objects; every bad plan is ONE PlanError with the
file, the line of the offending key, what is wrong and what to write instead."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchtui.errors import PlanError
from benchtui.plan.loader import load_plan, parse_plan
from benchtui.plan.locate import KeyIndex
from benchtui.plan.model import DEFAULT_REMOTE_DIR, Plan

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

HOSTS = """\
[hosts.db1]
address = "10.0.0.11"
user = "root"
[hosts.db2]
ssh = "db2"
[hosts.here]
local = true
"""
# HOSTS is 7 lines: a step that follows starts on line 8.


def plan_file(tmp_path: Path, text: str, name: str = "plan.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path, text: str) -> Plan:
    return load_plan(plan_file(tmp_path, text))


def error(tmp_path: Path, text: str) -> PlanError:
    path = plan_file(tmp_path, text)
    with pytest.raises(PlanError) as caught:
        load_plan(path)
    err = caught.value
    assert err.file == str(path)
    return err


def message(tmp_path: Path, text: str) -> str:
    """The user-facing sentence, with the temp dir replaced by DIR."""
    return str(error(tmp_path, text)).replace(str(tmp_path), "DIR")


# --- valid plans ------------------------------------------------------------------------------

ISSUE_PLAN = """\
[session]
name = "nvme-qd-sweep"

[hosts.db1]                 # an OpenSSH config alias works too: ssh = "db1"
address = "10.0.0.11"
user = "root"               # port, identity, jump (ProxyJump) optional
[hosts.here]
local = true                # this machine, no SSH

[[monitor]]                 # runs for the whole session on its hosts
tool = "iostat"
hosts = "all"
devices = ["nvme1n1"]       # optional filter

[[step]]
name = "randrw-4k"
tool = "fio"
hosts = ["db1", "here"]
args = "--filename=/data/fio.dat --size=4g --rw=randrw --bs=4k --ioengine=libaio --iodepth=32 --direct=1 --runtime=60 --time_based"
[[step]]
name = "net"
tool = "iperf3"
server = "db1"              # started first, stopped after the clients finish
clients = ["here"]
args = "-t 30"
[[step]]
name = "rados-write"
tool = "rados_bench"
hosts = ["db1"]
args = "-p test 60 write --no-cleanup"
"""  # noqa: E501


def test_the_plan_of_the_issue_loads_resolved(tmp_path: Path) -> None:
    plan = load(tmp_path, ISSUE_PLAN)
    assert plan.name == "nvme-qd-sweep"
    assert plan.path == tmp_path / "plan.toml"
    assert list(plan.hosts) == ["db1", "here"]
    db1 = plan.hosts["db1"]
    assert (db1.address, db1.user, db1.local, db1.port, db1.target) == (
        "10.0.0.11", "root", False, None, "10.0.0.11")
    assert plan.hosts["here"].local and plan.hosts["here"].target == "localhost"
    (monitor,) = plan.monitors
    assert (monitor.name, monitor.tool, monitor.hosts, monitor.devices, monitor.parser,
            monitor.interval) == ("iostat", "iostat", ("db1", "here"), ("nvme1n1",), "iostat",
                                  1.0)
    fio, net, rados = plan.steps
    assert fio.args[:2] == ("--filename=/data/fio.dat", "--size=4g")
    assert (fio.tool, fio.hosts, fio.parser, fio.repeat) == ("fio", ("db1", "here"),
                                                             "fio-json", 1)
    assert (net.server, net.clients, net.hosts, net.server_address, net.parser) == (
        "db1", ("here",), ("db1", "here"), "10.0.0.11", "iperf3")
    assert rados.parser == "rados-bench" and rados.args == ("-p", "test", "60", "write",
                                                            "--no-cleanup")
    assert plan.settings.remote_dir == DEFAULT_REMOTE_DIR
    assert fio.line == 15 and net.line == 20 and monitor.line == 10


def test_defaults_all_hosts_and_step_names(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + """\
[[step]]
tool = "fio"
args = "--rw=read --filename=/tmp/x --size=1m"
[[step]]
tool = "fio"
args = ["--rw=write", "--filename=/tmp/x y", "--size=1m"]
[[step]]
name = "fio-3"
tool = "mbw"
args = "512"
[[step]]
tool = "fio"
hosts = "db2"
args = "--rw=read"
[[step]]
command = "sh -c 'echo hi'"
parser = "fio-json"
""")
    assert [s.name for s in plan.steps] == ["fio", "fio-2", "fio-3", "fio-4", "fio-json"]
    assert plan.steps[0].hosts == ("db1", "db2", "here")
    assert plan.steps[1].args[1] == "--filename=/tmp/x y"
    assert plan.steps[3].hosts == ("db2",)
    assert plan.steps[4].command == ("sh", "-c", "echo hi")
    assert plan.steps[4].tool == "command"
    assert plan.name == "plan"  # the file's stem


def test_clients_all_means_every_host_but_the_server(tmp_path: Path) -> None:
    plan = load(tmp_path, HOSTS + """\
[[step]]
tool = "iperf"
server = "db2"
clients = "all"
server_args = "-p 6900"
""")
    (step,) = plan.steps
    assert step.clients == ("db1", "here") and step.hosts == ("db2", "db1", "here")
    assert step.server_address == "db2"  # the ssh alias
    assert step.server_args == ("-p", "6900") and step.parser == "iperf2"


def test_a_jobfile_is_resolved_and_read(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "seq.fio").write_text("[global]\nrw=read\n[a]\nsize=1m\n")
    plan = load(tmp_path, HOSTS + '[[step]]\ntool = "fio"\njobfile = "jobs/seq.fio"\n'
                'repeat = 3\ntimeout = 90\n')
    (step,) = plan.steps
    assert step.jobfile == tmp_path / "jobs" / "seq.fio"
    assert step.jobfile_text is not None and "[a]" in step.jobfile_text
    assert step.repeat == 3 and step.timeout == 90.0


def test_host_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_test").write_text("key", encoding="utf-8")
    plan = load(tmp_path, """\
[hosts.db1]
address = "10.0.0.11"
port = 2222
identity = "~/.ssh/id_test"
jump = "admin@bastion:22"
allow_destructive = ["/dev/nvme1n1"]
labels = { rack = "r12" }
[[monitor]]
tool = "diskstats"
interval = 0.5
devices = ["/dev/nvme1n1"]
""")
    host = plan.hosts["db1"]
    assert host.port == 2222 and host.jump == "admin@bastion:22"
    assert host.identity == Path("~/.ssh/id_test").expanduser()
    assert host.allow_destructive == ("/dev/nvme1n1",) and host.labels == {"rack": "r12"}
    assert plan.monitors[0].devices == ("nvme1n1",) and plan.monitors[0].interval == 0.5
    assert plan.steps == ()


def test_parser_names_are_checked_when_given(tmp_path: Path) -> None:
    text = HOSTS + '[[step]]\ncommand = "run"\nparser = "fio-jsn"\n'
    path = plan_file(tmp_path, text)
    with pytest.raises(PlanError) as caught:
        load_plan(path, parser_names=["fio-json", "iostat"])
    assert str(caught.value) == (
        f"{path}:10: unknown parser \"fio-jsn\" in step 1; did you mean 'fio-json'? known "
        "parsers: fio-json, iostat")
    assert load_plan(path).steps[0].parser == "fio-jsn"  # without a registry: any name


# --- every example loads ------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_loads(path: Path) -> None:
    from benchtui.parsers.registry import all_parsers

    plan = load_plan(path, parser_names=list(all_parsers()))
    assert plan.steps or plan.monitors


def test_examples_exist() -> None:
    names = {p.name for p in EXAMPLES.glob("*.toml")}
    assert {"local-demo.toml", "fleet.toml"} <= names
    assert (EXAMPLES / "jobs" / "rbd-4M-seq-30job.fio").is_file()


# --- bad plans: one message each, with file, line and hint --------------------------------------

BAD_PLANS = [
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\nhots = ["db1"]\nargs = "--rw=read"\n',
                 "plan.toml:10: unknown key 'hots' in step 1; did you mean 'hosts'?",
                 id="unknown-key"),
    pytest.param(HOSTS + '[[step]]\nname = "x"\ntool = "fio"\nflavour = 1\n',
                 "plan.toml:11: unknown key 'flavour' in step \"x\"; the keys of step are: "
                 "name, tool, hosts, args, command, parser, executable, env, jobfile, repeat, "
                 "select, matrix, "
                 "server, clients, server_args, server_address, timeout, duration, silence",
                 id="unknown-key-no-guess"),
    pytest.param('[hosts.db1]\naddress = "10.0.0.11"\nport = "22"\n',
                 'plan.toml:3: port of host "db1" must be a whole number, not text ("22"); '
                 "write port = 22", id="wrong-type-port"),
    pytest.param('[hosts.db1]\naddress = "h"\nport = 70000\n',
                 'plan.toml:3: port of host "db1" must be between 1 and 65535, not 70000; '
                 "write port = 22", id="invalid-port"),
    pytest.param('[hosts.db1]\naddress = "h"\nport = true\n',
                 'plan.toml:3: port of host "db1" must be a whole number, not true/false '
                 "(true); write port = 22", id="bool-port"),
    pytest.param(HOSTS + '[[step]]\nname = "s"\ntool = "fio"\nhosts = ["db1", "db3"]\n'
                 'args = "--rw=read"\n',
                 "plan.toml:11: unknown host 'db3' in hosts of step \"s\"; did you mean 'db2'? "
                 "the plan defines: db1, db2, here ([hosts.NAME] tables)", id="unknown-host"),
    pytest.param(HOSTS + '[[monitor]]\ntool = "iostat"\nhosts = ["nope"]\n',
                 "plan.toml:10: unknown host 'nope' in hosts of monitor 1; the plan defines: "
                 "db1, db2, here ([hosts.NAME] tables)", id="unknown-host-monitor"),
    pytest.param(HOSTS + '[[step]]\nname = "s"\ntool = "fio"\nhosts = []\nargs = "x"\n',
                 'plan.toml:11: hosts of step "s" is empty; write hosts = "all" or a list of '
                 'host names, e.g. hosts = ["db1"]', id="empty-hosts"),
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\nhosts = ["db1", "db1"]\nargs = "x"\n',
                 "plan.toml:10: host 'db1' is listed twice in hosts of step 1; list each host "
                 "once", id="host-twice"),
    pytest.param(HOSTS + '[[step]]\nname = "seq"\ntool = "fio"\njobfile = "jobs/nope.fio"\n',
                 'plan.toml:11: jobfile "jobs/nope.fio" of step "seq" does not exist '
                 "(DIR/jobs/nope.fio); a jobfile path is relative to the plan file's "
                 "directory (DIR)", id="missing-jobfile"),
    pytest.param(HOSTS + '[[step]]\ntool = "fi0"\n',
                 "plan.toml:9: unknown tool \"fi0\" in step 1; did you mean 'fio'? known tools: "
                 "diskstats, fbbench, fio, iostat, iperf, iperf3, mbw, rados_bench, rbd_bench, "
                 'spdk_iostat, unixbench; anything else runs with command = "..." and '
                 'parser = "..."', id="unknown-tool"),
    pytest.param(HOSTS + '[[step]]\nname = "a"\ntool = "mbw"\nargs = "64"\n'
                 '[[step]]\nname = "b"\ntool = "mbw"\nargs = "64"\n'
                 '[[step]]\nname = "a"\ntool = "mbw"\nargs = "64"\n',
                 'plan.toml:17: two steps are named "a" (steps 1 and 3); step names label the '
                 'samples: give each its own name, e.g. name = "a-2"', id="duplicate-names"),
    pytest.param(HOSTS + '[[step]]\nname = "r"\ntool = "fio"\nhosts = "all"\n',
                 'plan.toml:8: step "r" (fio) says nothing to run: it has no args, jobfile or '
                 'command; e.g. args = "--filename=/data/fio.dat --rw=randread --bs=4k '
                 '--direct=1 --runtime=60 --time_based" or jobfile = "jobs/randread.fio"',
                 id="nothing-to-run"),
    pytest.param(HOSTS + '[[step]]\nname = "net"\ntool = "iperf3"\nclients = ["db2"]\n',
                 'plan.toml:8: step "net" (iperf3) has no server; iperf3 runs between hosts: '
                 'write server = "db1" and clients = ["db2"]', id="iperf-no-server"),
    pytest.param(HOSTS + '[[step]]\nname = "net"\ntool = "iperf"\nserver = "db1"\n',
                 'plan.toml:8: step "net" (iperf) has no clients; iperf runs between hosts: '
                 'write server = "db1" and clients = ["db2"]', id="iperf-no-clients"),
    pytest.param(HOSTS + '[[step]]\nname = "net"\ntool = "iperf3"\nhosts = ["db1"]\n',
                 'plan.toml:11: step "net" (iperf3) runs between a server and clients, not on '
                 'hosts; write server = "db1" and clients = ["db2"] instead of hosts',
                 id="iperf-with-hosts"),
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\nargs = "x"\nserver = "db1"\n',
                 'plan.toml:11: server is for iperf3 and iperf steps, not fio; give the hosts '
                 "to run on with hosts = [...]", id="server-for-fio"),
    pytest.param('[hosts.here]\nlocal = true\naddress = "10.0.0.1"\n',
                 'plan.toml:3: host "here" has local = true and also address; a local host is '
                 "this machine, reached without SSH: remove address, or remove local = true",
                 id="local-with-address"),
    pytest.param('[hosts.db1]\nuser = "root"\n',
                 'plan.toml:1: host "db1" says neither where it is nor that it is local; add '
                 'address = "10.0.0.11", or ssh = "db1" (an alias from ~/.ssh/config), or '
                 "local = true", id="host-without-address"),
    pytest.param('[hosts.db1]\naddress = "a"\nssh = "b"\n',
                 'plan.toml:3: host "db1" has both address and ssh; give address (and user, '
                 "port, ...) or ssh = an OpenSSH config alias that holds them, not both",
                 id="address-and-ssh"),
    pytest.param('[hosts.all]\nlocal = true\n',
                 "plan.toml:1: 'all' cannot be a host name: hosts = \"all\" means every host; "
                 "give the host another name, e.g. [hosts.all1]", id="host-named-all"),
    pytest.param('[hosts."db 1"]\nlocal = true\n',
                 'plan.toml:1: host name "db 1" may hold only letters, digits, \'.\', \'_\' and '
                 "'-' (64 at most, the first a letter or digit); rename the table; the address "
                 'goes in address = "..."', id="bad-host-name"),
    pytest.param('[session]\nname = "x"\n',
                 "plan.toml: the plan defines no hosts; add one, e.g. [hosts.here] local = "
                 'true, or [hosts.db1] address = "10.0.0.11"', id="no-hosts"),
    pytest.param(HOSTS,
                 "plan.toml: the plan has no [[step]] and no [[monitor]]; add a step, e.g. "
                 '[[step]] tool = "fio" hosts = "all" args = "..."', id="nothing-at-all"),
    pytest.param(HOSTS + '[step]\ntool = "fio"\n',
                 "plan.toml:8: step must be written [[step]] (double brackets), not [step]; "
                 "one [[step]] per step; each may appear many times", id="single-bracket"),
    pytest.param(HOSTS + '[[steps]]\ntool = "fio"\n',
                 "plan.toml:8: unknown table 'steps' at the top of the plan; did you mean "
                 "'step' (written [[step]])?", id="unknown-table"),
    pytest.param('name = "x"\n' + HOSTS,
                 "plan.toml:1: 'name' is outside of any table; put it under [session]: "
                 '[session] name = "nvme-qd-sweep"', id="key-outside-session"),
    pytest.param(HOSTS + '[[step]]\nname = "rand rw"\ntool = "mbw"\nargs = "8"\n',
                 'plan.toml:9: name "rand rw" of step "rand rw" may hold only letters, digits, '
                 "'.', '_' and '-' (64 at most, the first a letter or digit); write "
                 'name = "rand-rw"', id="bad-step-name"),
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\nargs = "--filename=\'/x"\n',
                 "plan.toml:10: args of step 1 cannot be split into words: No closing "
                 'quotation; close the quote, or give a list of words: args = '
                 '["--filename=/data/fio.dat", "--rw=read"]', id="unbalanced-quote"),
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\nargs = ["--rw=read", 4]\n',
                 "plan.toml:10: item 2 of args in step 1 must be text, not a whole number (4); "
                 'write args = "--rw=randread --bs=4k"', id="list-item-type"),
    pytest.param(HOSTS + '[[step]]\ntool = "iostat"\n',
                 "plan.toml:8: step 1 (iostat) runs until stopped, so it needs a duration; "
                 "write duration = 60 (seconds)", id="iostat-step-without-duration"),
    pytest.param(HOSTS + '[[step]]\ntool = "mbw"\nargs = "8"\nrepeat = 0\n',
                 "plan.toml:11: repeat of step 1 must be between 1 and 10000, not 0; write "
                 "repeat = 3", id="repeat-zero"),
    pytest.param(HOSTS + '[[step]]\ntool = "mbw"\nargs = "8"\ntimeout = -5\n',
                 "plan.toml:11: timeout of step 1 must be more than zero seconds, not -5; "
                 "write timeout = 600", id="negative-timeout"),
    pytest.param(HOSTS + '[[step]]\ntool = "mbw"\nargs = "8"\ntimeout = nan\n',
                 "plan.toml:11: timeout of step 1 must be more than zero seconds, not nan; "
                 "write timeout = 600", id="nan-timeout"),
    pytest.param(HOSTS + '[[step]]\ncommand = "/opt/run"\n',
                 "plan.toml:8: step 1 runs a command but names no parser; add parser = "
                 '"..." (the parser that reads its output, e.g. "fio-json"; benchtui parse '
                 "--list shows them)", id="command-without-parser"),
    pytest.param(HOSTS + '[[step]]\ncommand = "/opt/run"\nparser = "mbw"\nargs = "-x"\n',
                 "plan.toml:11: step 1 has both command and args; a command runs as written: "
                 "put everything in command", id="command-and-args"),
    pytest.param(HOSTS + '[[step]]\nhosts = "all"\n',
                 'plan.toml:8: step 1 names no tool; add tool = "fio" (known tools: diskstats, '
                 "fbbench, fio, iostat, iperf, iperf3, mbw, rados_bench, rbd_bench, spdk_iostat, "
                 'unixbench), or command = "..." with parser = "..."', id="no-tool"),
    pytest.param(HOSTS + '[[step]]\ntool = "unixbench"\n',
                 "plan.toml:8: step 1 (unixbench) needs executable: unixbench has no standard "
                 "place; UnixBench is built from https://github.com/kdlucas/byte-unixbench; "
                 'give the path of its Run script with executable = "/path/to/UnixBench/Run"',
                 id="unixbench-without-executable"),
    pytest.param(HOSTS + '[[monitor]]\ntool = "iperf3"\n',
                 "plan.toml:9: iperf3 cannot be a monitor; iperf3 runs between a server and "
                 'clients: write it as a [[step]] with server = "..." and clients = [...]',
                 id="iperf-monitor"),
    pytest.param(HOSTS + '[[monitor]]\ntool = "iostat"\ninterval = 0.5\n',
                 "plan.toml:10: interval of monitor 1 must be whole seconds for iostat, not "
                 "0.5; write interval = 1", id="iostat-fractional-interval"),
    pytest.param(HOSTS + '[[monitor]]\ntool = "mbw"\nargs = "8"\ndevices = ["sda"]\n',
                 "plan.toml:11: devices is for iostat and diskstats monitors, not mbw; give "
                 "the tool's own options in args", id="devices-for-mbw"),
    pytest.param(HOSTS + '[[step]]\ntool = "mbw"\nargs = "8"\njobfile = "x.fio"\n',
                 "plan.toml:11: jobfile is for fio steps, not mbw; give the tool's options in "
                 "args", id="jobfile-for-mbw"),
    pytest.param('[hosts.db1]\naddress = "h"\nallow_destructive = "/dev/sdb"\n',
                 'plan.toml:3: allow_destructive of host "db1" must be a list of texts, not '
                 'text ("/dev/sdb"); write allow_destructive = ["/dev/nvme1n1"]',
                 id="allow-destructive-not-list"),
    pytest.param('[hosts.db1]\naddress = "h"\nallow_destructive = ["sdb"]\n',
                 'plan.toml:3: allow_destructive of host "db1" lists "sdb", which is not a '
                 'device path; write allow_destructive = ["/dev/nvme1n1"]',
                 id="allow-destructive-not-dev"),
    pytest.param('[hosts.here]\nlocal = true\n[hosts.db1]\naddress = "h"\n'
                 '[[step]]\ntool = "iperf3"\nserver = "here"\nclients = ["db1"]\n',
                 "plan.toml:7: the clients of step 1 cannot reach the local host 'here' by "
                 'name; add server_address = "..." (an address of this machine that the '
                 "clients can reach)", id="local-server-remote-clients"),
    pytest.param(HOSTS + '[[step]]\ntool = "mbw"\nargs = "8"\nduration = 60\ntimeout = 30\n',
                 "plan.toml:12: timeout of step 1 (30 s) must be longer than its duration "
                 "(60 s); timeout is when a run has failed; duration is when the step ends "
                 "normally", id="timeout-below-duration"),
    pytest.param(HOSTS + '[[step]]\ntool = "mbw"\nargs = "8"\nenv = { "A-B" = "1" }\n',
                 "plan.toml:11: 'A-B' in env of step 1 is not a variable name; use letters, "
                 "digits and _ (not first), e.g. CEPH_ARGS", id="bad-env-name"),
    pytest.param('[session]\nremote_dir = "tmp/x"\n' + HOSTS,
                 'plan.toml:2: remote_dir "tmp/x" of [session] must be an absolute path; '
                 'write remote_dir = "/var/tmp/benchtui"', id="relative-remote-dir"),
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\nargs = "--filename=a\\u0000b"\n',
                 "plan.toml:10: args of step 1 holds a NUL character, which no command line "
                 "can carry; remove the \\u0000", id="nul"),
    *(pytest.param(f'[session]\nhistogram_bits = {value}\n' + HOSTS,
                   f"plan.toml:2: histogram_bits of [session] must be {why}; write "
                   "histogram_bits = 4 (1 to 6; 6 keeps fio's own resolution)",
                   id=f"histogram-bits-{name}")
      for name, value, why in (
          ("0", "0", "between 1 and 6, not 0"), ("7", "7", "between 1 and 6, not 7"),
          ("text", '"4"', 'a whole number, not text ("4")'),
          ("float", "4.5", "a whole number, not a number (4.5)"),
          ("bool", "true", "a whole number, not true/false (true)"))),
    *(pytest.param(f'[session]\ncontroller_grace = {value}\n' + HOSTS,
                   f"plan.toml:2: controller_grace {shown} of [session] is not a duration; "
                   'write controller_grace = "60s" (or "5m"; 0 stops at once; "off" leaves the '
                   "processes to their deadline)", id=f"controller-grace-{name}")
      for name, value, shown in (
          ("word", '"soon"', '"soon"'), ("negative", '"-5s"', '"-5s"'),
          ("bool", "true", "true"), ("list", '["60s"]', "['60s']"), ("empty", '""', '""'),
          ("nan", "nan", "nan"))),
]


@pytest.mark.parametrize(("text", "bits"), [("", 4), ("[session]\nhistogram_bits = 6\n", 6),
                                            ("[session]\nhistogram_bits = 1\n", 1)])
def test_histogram_bits_of_the_session(tmp_path: Path, text: str, bits: int) -> None:
    step = "[[step]]\ntool = \"mbw\"\nargs = \"8\"\n"
    assert load(tmp_path, text + HOSTS + step).settings.histogram_bits == bits


@pytest.mark.parametrize(("value", "seconds"), [
    (None, 60.0), ('"60s"', 60.0), ("90", 90.0), ("1.5", 1.5), ('"2m"', 120.0), ('"1h"', 3600.0),
    ("0", 0.0), ('"0"', 0.0), ('"off"', math.inf), ('"OFF"', math.inf), ('"500ms"', 0.5)])
def test_controller_grace_of_the_session(tmp_path: Path, value: str | None,
                                         seconds: float) -> None:
    text = "" if value is None else f"[session]\ncontroller_grace = {value}\n"
    step = "[[step]]\ntool = \"mbw\"\nargs = \"8\"\n"
    assert load(tmp_path, text + HOSTS + step).settings.controller_grace == seconds


@pytest.mark.parametrize(("text", "expected"), BAD_PLANS)
def test_bad_plan_message(tmp_path: Path, text: str, expected: str) -> None:
    assert message(tmp_path, text) == "DIR/" + expected


def test_error_fields_carry_the_data(tmp_path: Path) -> None:
    err = error(tmp_path, '[hosts.db1]\naddress = "10.0.0.11"\nport = "22"\n')
    assert err.line == 3
    assert err.reason == 'port of host "db1" must be a whole number, not text ("22")'
    assert err.hint == "write port = 22"
    assert err.exit_code == 2


def test_a_bad_jobfile_points_into_the_jobfile(tmp_path: Path) -> None:
    (tmp_path / "bad.fio").write_text("; comment\nsize=1g\n[job]\nrw=read\n")
    with pytest.raises(PlanError) as caught:
        load(tmp_path, HOSTS + '[[step]]\ntool = "fio"\njobfile = "bad.fio"\n')
    assert str(caught.value) == (f"{tmp_path}/bad.fio:2: option 'size=1g' is outside of any "
                                 "[section]; put it under [global] or under a [job-name] "
                                 "section")
    (tmp_path / "empty.fio").write_text("[global]\nrw=read\n")
    with pytest.raises(PlanError) as caught:
        load(tmp_path, HOSTS + '[[step]]\ntool = "fio"\njobfile = "empty.fio"\n')
    assert str(caught.value) == (f"{tmp_path}/empty.fio: the jobfile defines no job; add a "
                                 "job section, e.g. [job1] after [global]")


def test_a_jobfile_that_is_a_directory_or_a_device(tmp_path: Path) -> None:
    (tmp_path / "dir.fio").mkdir()
    assert "is not a regular file" in message(
        tmp_path, HOSTS + '[[step]]\ntool = "fio"\njobfile = "dir.fio"\n')
    assert "is not a regular file (/dev/zero)" in message(
        tmp_path, HOSTS + '[[step]]\ntool = "fio"\njobfile = "/dev/zero"\n')


# --- TOML syntax errors --------------------------------------------------------------------------

SYNTAX = [
    pytest.param(HOSTS + '[[step]]\ntool = fio\n',
                 'plan.toml:9: TOML syntax error: invalid value (column 8); text needs quotes: '
                 'write tool = "fio"', id="unquoted"),
    pytest.param(HOSTS + '[[step]]\ntool = "fio"\n[step]\n',
                 "plan.toml:10: TOML syntax error: cannot declare ('step',) twice (column 6); "
                 "each [[step]] and [[monitor]] needs double brackets", id="step-twice"),
    pytest.param(HOSTS + '[hosts.db1]\nlocal = true\n',
                 "plan.toml:8: TOML syntax error: cannot declare ('hosts', 'db1') twice "
                 "(column 11); each [table] may appear only once; merge the two",
                 id="table-twice"),
    pytest.param('[hosts.db1]\naddress = "a"\naddress = "b"\n',
                 "plan.toml:3: TOML syntax error: cannot overwrite a value (column 14); this "
                 "key is already set above; keep one of the two", id="key-twice"),
    pytest.param(HOSTS + '[[step]]\nhosts = ["db1",\n  "db2"\ntool = "fio"\n',
                 "plan.toml:9: TOML syntax error: unclosed array; close the list with \"]\"",
                 id="unclosed-array"),
    pytest.param(HOSTS + '[[step]]\nargs = "--rw=read\n',
                 "plan.toml:9: TOML syntax error: illegal character '\\n' (column 18); close "
                 "the string with the same quote it starts with", id="unclosed-string"),
    pytest.param('[[step]]\nargs = """\n--rw=read\n',
                 "plan.toml:2: TOML syntax error: unterminated string; close the string with "
                 "the same quote it starts with", id="unterminated-multiline"),
]


@pytest.mark.parametrize(("text", "expected"), SYNTAX)
def test_toml_syntax_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert message(tmp_path, text) == "DIR/" + expected


def test_unreadable_plans(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match=r"nope\.toml: no such file; give the path of a TOML"):
        load_plan(tmp_path / "nope.toml")
    with pytest.raises(PlanError, match="is a directory"):
        load_plan(tmp_path)
    (tmp_path / "bin.toml").write_bytes(b'[hosts.a]\nlocal = true\n\xff\xfe\n')
    with pytest.raises(PlanError) as caught:
        load_plan(tmp_path / "bin.toml")
    assert str(caught.value) == (f"{tmp_path}/bin.toml:3: is not UTF-8 text (byte 23); a plan "
                                 "is a TOML text file")


# --- the key locator ------------------------------------------------------------------------------

LOCATOR_TEXT = """\
# comment [not.a.table]
[session]
name = "x"   # trailing [comment]
[hosts.db1]
address = "10.0.0.11"
"quoted key" = 1
[[step]]
args = '''
not = a key
[not.a.table]
'''
hosts = [
  "db1",   # a = b
  "db2",
]
tool = "fio"
[[step]]
sub.key = 2
[step.env]
A = "1"
[[monitor]]
tool = "iostat"
"""


@pytest.mark.parametrize(("path", "line"), [
    (("session",), 2), (("session", "name"), 3), (("hosts", "db1"), 4),
    (("hosts", "db1", "address"), 5), (("hosts", "db1", "quoted key"), 6), (("step", 0), 7),
    (("step", 0, "args"), 8), (("step", 0, "hosts"), 12), (("step", 0, "tool"), 16),
    (("step", 1), 17), (("step", 1, "sub"), 18), (("step", 1, "sub", "key"), 18),
    (("step", 1, "env"), 19), (("step", 1, "env", "A"), 20), (("monitor", 0, "tool"), 22),
    (("step", 0, "nope"), 7), (("not",), None), (("step", 5, "x"), 7),
])
def test_locator(path: tuple[str | int, ...], line: int | None) -> None:
    assert KeyIndex(LOCATOR_TEXT).line(path) == line


# --- no input makes the loader raise anything but PlanError -------------------------------------

def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _toml(doc: dict[str, object]) -> str:
    return "\n".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in doc.items()) + "\n"


KEYS = st.sampled_from([
    "session", "hosts", "step", "monitor", "name", "tool", "args", "jobfile", "address", "local",
    "port", "server", "clients", "command", "parser", "devices", "interval", "repeat", "timeout",
    "duration", "env", "ssh", "user", "allow_destructive", "labels", "db1", "here", "all",
    "executable", "server_args", "server_address", "remote_dir", "deadline_margin", "matrix",
    "select", "bs", "ioengine", "controller_grace",
]) | st.text(min_size=1, max_size=6)
SCALARS = (st.booleans() | st.integers(-2, 70000) | st.floats(allow_nan=True)
           | st.sampled_from(["fio", "iostat", "iperf3", "all", "db1", "here", "x; y", "", "64",
                              "--rw=write --filename=/dev/sda", "jobs/x.fio", "/dev/zero",
                              "fio-json", "'", "\\"])
           | st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12)
PLANS = st.fixed_dictionaries({}, optional={
    "session": st.dictionaries(KEYS, VALUES, max_size=3),
    "hosts": st.dictionaries(KEYS, st.dictionaries(KEYS, VALUES, max_size=3) | VALUES,
                             max_size=3),
    "step": st.lists(st.dictionaries(KEYS, VALUES, max_size=5), max_size=3) | VALUES,
    "monitor": st.lists(st.dictionaries(KEYS, VALUES, max_size=4), max_size=2),
}) | st.dictionaries(KEYS, VALUES, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PLANS)
def test_random_valid_toml_gives_a_plan_or_a_plan_error(doc: dict[str, object]) -> None:
    text = _toml(doc)
    try:
        plan = parse_plan(text, Path("/nonexistent/plan.toml"))
    except PlanError as err:
        assert str(err).startswith("/nonexistent/plan.toml")
        assert err.line is None or 1 <= err.line <= text.count("\n") + 1
    else:
        assert plan.hosts and (plan.steps or plan.monitors)


TOMLISH = st.lists(st.sampled_from([
    "[hosts.db1]", "[[step]]", "[[monitor]]", "[session]", 'tool = "fio"', "tool = fio",
    'hosts = ["db1"', 'args = """', '"""', "local = true", "address = '10.0.0.1'", "]", "[",
    '"a" = 1', "a.b.c = 2", "x = {a = 1}", "# c", "= 3", "'''", "hosts = 'all'",
]) | st.text(max_size=12), max_size=12).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(TOMLISH)
def test_random_tomlish_text_gives_a_plan_or_a_plan_error(text: str) -> None:
    try:
        parse_plan(text, Path("/nonexistent/plan.toml"))
    except PlanError as err:
        assert err.line is None or 1 <= err.line <= text.count("\n") + 1


def test_deep_nesting_is_a_plan_error() -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan("a = " + "[" * 100000, Path("p.toml"))
    assert str(caught.value) == ("p.toml: TOML syntax error: values are nested too deeply; a "
                                 "plan needs no more than a few levels of tables and lists")


def test_a_bad_jump_or_a_missing_identity_is_a_plan_error_with_its_line(
        tmp_path: Path) -> None:
    head = '[hosts.db1]\naddress = "10.0.0.11"\n'
    tail = '[[monitor]]\ntool = "diskstats"\n'
    for jump, reason in (("root@127.0.0.1:notaport", "its port 'notaport' is not a port number"),
                         ("root@bastion:70000", "its port '70000' is not a port number"),
                         ("@bastion", "the user before '@' is empty"),
                         ("fe80::1", "an IPv6 address goes in brackets"),
                         ("[fe80::1", "its '[' has no ']'")):
        err = error(tmp_path, head + f'jump = "{jump}"\n' + tail)
        assert err.line == 3, jump
        assert str(err).startswith(f"{tmp_path / 'plan.toml'}:3: host \"db1\": {jump!r} is "
                                   f"not a jump host: {reason}"), str(err)
        assert 'write jump = "[user@]host[:port]"' in str(err)
    missing = tmp_path / "no_such_key"
    err = error(tmp_path, head + f'identity = "{missing}"\n' + tail)
    assert err.line == 3
    assert str(err).startswith(f"{tmp_path / 'plan.toml'}:3: the identity file {missing} of "
                               'host "db1" does not exist; give the private key\'s path')
    err = error(tmp_path, head + f'identity = "{tmp_path}"\n' + tail)
    assert "is not a file" in str(err)
