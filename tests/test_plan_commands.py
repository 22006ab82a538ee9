"""Command lines built from plans: the options benchtui adds, the ones it drops, deadlines,
quoting (a plan value never becomes shell syntax), and that the real tools accept them."""

from __future__ import annotations

import shlex
import socket
import subprocess
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from benchtui.plan.commands import (
    RemoteCommand,
    default_jobfile_path,
    monitor_commands,
    plan_warnings,
    session_deadline,
    step_commands,
    step_deadline,
)
from benchtui.plan.loader import load_plan
from benchtui.plan.model import Plan
from tests.helpers import require_tool

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HOSTS = """\
[hosts.db1]
address = "10.0.0.11"
[hosts.db2]
address = "10.0.0.12"
[hosts.here]
local = true
"""


def plan_of(tmp_path: Path, body: str, hosts: str = HOSTS) -> Plan:
    path = tmp_path / "plan.toml"
    path.write_text(hosts + body, encoding="utf-8")
    return load_plan(path)


def only_step(plan: Plan, **kwargs: str) -> list[RemoteCommand]:
    (step,) = plan.steps
    return step_commands(plan, step, **kwargs)


# --- fio ---------------------------------------------------------------------------------------

def test_fio_gets_json_plus_every_second_and_a_job_name(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\nname = "rr"\ntool = "fio"\nhosts = ["db1", "here"]\n'
                   'args = "--filename=/data/fio.dat --rw=randrw --runtime=60 --time_based"\n')
    db1, here = only_step(plan)
    assert db1.argv == ("fio", "--status-interval=1", "--output-format=json+", "--eta=never",
                        "--name=rr", "--filename=/data/fio.dat", "--rw=randrw", "--runtime=60",
                        "--time_based")
    assert (db1.host, here.host, db1.role, db1.parser, db1.tool) == (
        "db1", "here", "step", "fio-json", "fio")
    assert db1.env == {"LC_ALL": "C"} and not db1.line_buffered and db1.warnings == ()
    assert db1.shell_line() == ("env LC_ALL=C fio --status-interval=1 --output-format=json+ "
                                "--eta=never --name=rr --filename=/data/fio.dat --rw=randrw "
                                "--runtime=60 --time_based")


def test_fio_keeps_the_users_job_names(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\ntool = "fio"\nhosts = ["db1"]\n'
                   'args = "--rw=read --name=a --size=1m --name=b --size=2m"\n')
    (cmd,) = only_step(plan)
    assert cmd.argv[4:] == ("--rw=read", "--name=a", "--size=1m", "--name=b", "--size=2m")


@pytest.mark.parametrize(("args", "dropped", "why"), [
    ("--output-format=normal", "--output-format=normal", "benchtui runs fio with "
     "--output-format=json+ and reads its JSON"),
    ("--output-format terse", "--output-format terse", "benchtui runs fio with "
     "--output-format=json+ and reads its JSON"),
    ("-output-format=json", "-output-format=json", "benchtui runs fio with "
     "--output-format=json+ and reads its JSON"),
    ("--minimal", "--minimal", "benchtui runs fio with --output-format=json+ and reads its JSON"),
    ("--status-interval=5", "--status-interval=5", "benchtui runs fio with --status-interval=1"),
    ("--eta=always", "--eta=always", "status lines would break fio's JSON stream (benchtui "
     "adds --eta=never)"),
    ("--output=/tmp/out.json", "--output=/tmp/out.json", "fio's output must come to benchtui"),
    ("--client=db9", "--client=db9", "benchtui runs fio on each host itself, not in fio's "
     "client/server mode"),
])
def test_fio_options_that_break_the_stream_are_dropped_with_a_warning(
        tmp_path: Path, args: str, dropped: str, why: str) -> None:
    plan = plan_of(tmp_path, f'[[step]]\nname = "s"\ntool = "fio"\nhosts = ["db1"]\n'
                   f'args = "--rw=read {args} --size=1m"\n')
    (cmd,) = only_step(plan)
    assert cmd.argv[1:4] == ("--status-interval=1", "--output-format=json+", "--eta=never")
    assert cmd.argv[5:] == ("--rw=read", "--size=1m")
    assert cmd.warnings == (f'step "s": {dropped} was dropped: {why}',)
    assert plan_warnings(plan) == [("s", cmd.warnings[0])]


def test_fio_jobfile_refers_to_the_remote_copy(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "j.fio").write_text("[a]\nrw=read\nruntime=30\n")
    plan = plan_of(tmp_path, '[[step]]\nname = "jf"\ntool = "fio"\nhosts = ["db1"]\n'
                   'jobfile = "jobs/j.fio"\nargs = "--size=1m"\n')
    (step,) = plan.steps
    assert default_jobfile_path(plan, step) == "/var/tmp/benchtui/plan/jf-j.fio"
    (cmd,) = step_commands(plan, step)
    assert cmd.argv[-2:] == ("--size=1m", "/var/tmp/benchtui/plan/jf-j.fio")
    assert "--name=jf" not in cmd.argv  # the jobfile names its jobs
    assert [(u.local, u.remote) for u in cmd.uploads] == [
        (tmp_path / "jobs" / "j.fio", "/var/tmp/benchtui/plan/jf-j.fio")]
    (cmd,) = step_commands(plan, step, jobfile_path="/run/s1/jobs/x y.fio")
    assert cmd.argv[-1] == "/run/s1/jobs/x y.fio"
    assert cmd.shell_line().endswith("'/run/s1/jobs/x y.fio'")


# --- monitors ------------------------------------------------------------------------------------

def test_iostat_extended_per_second_with_iso_timestamps(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[monitor]]\ntool = "iostat"\ndevices = ["/dev/nvme1n1", "sda"]\n'
                   'args = "-p ALL"\n')
    cmds = monitor_commands(plan, plan.monitors[0])
    assert [c.host for c in cmds] == ["db1", "db2", "here"]
    assert cmds[0].argv == ("iostat", "-x", "-y", "-t", "-p", "ALL", "nvme1n1", "sda", "1")
    assert cmds[0].env == {"LC_ALL": "C", "S_TIME_FORMAT": "ISO"}
    assert cmds[0].shell_line() == ("env LC_ALL=C S_TIME_FORMAT=ISO iostat -x -y -t -p ALL "
                                    "nvme1n1 sda 1")
    assert (cmds[0].role, cmds[0].parser, cmds[0].devices) == ("monitor", "iostat",
                                                               ("nvme1n1", "sda"))


def test_iostat_falls_back_to_diskstats_where_missing(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[monitor]]\ntool = "iostat"\ninterval = 2\ndevices = ["sda"]\n')
    db1, db2, here = monitor_commands(plan, plan.monitors[0], fallback_hosts={"db2"})
    assert db1.tool == here.tool == "iostat" and db1.argv[-1] == "2"
    assert (db2.tool, db2.parser, db2.argv[:2]) == ("diskstats", "diskstats", ("sh", "-c"))
    assert db2.env == {"LC_ALL": "C", "BENCHTUI_DEVICES": " sda ", "BENCHTUI_INTERVAL": "2"}


def test_monitors_run_for_the_whole_session(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[monitor]]\ntool = "iostat"\n'
                   '[[step]]\ntool = "fio"\nargs = "--runtime=100"\nrepeat = 2\n'
                   '[[step]]\ntool = "mbw"\nargs = "64"\n')
    fio, mbw = plan.steps
    assert step_deadline(plan, fio) == 100 + 60 + 10
    assert step_deadline(plan, mbw) == 7200  # mbw's run time is not known
    total = 170 * 2 + 7200
    assert session_deadline(plan) == pytest.approx(total + 60 + 0.1 * total)
    assert {c.deadline for c in monitor_commands(plan, plan.monitors[0])} == {
        session_deadline(plan)}


# --- iperf3 and iperf ----------------------------------------------------------------------------

def test_iperf3_one_server_per_client_on_its_own_port(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\nname = "net"\ntool = "iperf3"\nserver = "db1"\n'
                   'clients = ["db2", "here"]\nargs = "-t 30 -P 4"\n')
    s1, s2, c1, c2 = only_step(plan)
    assert [(c.host, c.role) for c in (s1, s2, c1, c2)] == [
        ("db1", "server"), ("db1", "server"), ("db2", "client"), ("here", "client")]
    assert s1.argv == ("iperf3", "-s", "-1", "-i", "1", "-p", "5201", "--forceflush")
    assert s2.argv == ("iperf3", "-s", "-1", "-i", "1", "-p", "5202", "--forceflush")
    assert c1.argv == ("iperf3", "-c", "10.0.0.11", "-i", "1", "-p", "5201", "--forceflush",
                       "-t", "30", "-P", "4")
    assert c2.argv[5:7] == ("-p", "5202")
    assert c1.deadline == 30 + 60 + 3 and s1.deadline == c1.deadline + 60
    assert c1.parser == s1.parser == "iperf3"


def test_iperf3_port_options_and_address(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\nname = "net"\ntool = "iperf3"\nserver = "db1"\n'
                   'clients = ["db2"]\nargs = "-p6000 -J -c other -i 5 -t 10 -R"\n'
                   'server_address = "192.168.7.1"\n')
    server, client = only_step(plan)
    assert server.argv[5:7] == ("-p", "6000")
    assert client.argv == ("iperf3", "-c", "192.168.7.1", "-i", "1", "-p", "6000",
                           "--forceflush", "-t", "10", "-R")
    assert client.warnings == tuple(
        f'step "net": {w} was dropped: benchtui sets the iperf3 server, client, interval and '
        "output itself" for w in ("-c other", "-i 5", "-J"))
    server, client = only_step(plan, server_address="10.9.9.9")
    assert client.argv[2] == "10.9.9.9"


def test_iperf2_one_server_and_udp_on_both_sides(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\nname = "n2"\ntool = "iperf"\nserver = "db1"\n'
                   'clients = "all"\nargs = "-u -b 1G -t 20"\nserver_args = "--port 6900"\n')
    server, c1, c2 = only_step(plan)
    assert server.argv == ("iperf", "-s", "-i", "1", "-p", "6900", "-u")
    assert c1.argv == ("iperf", "-c", "10.0.0.11", "-i", "1", "-p", "6900", "-u", "-b", "1G",
                       "-t", "20")
    assert (c1.host, c2.host, c1.parser) == ("db2", "here", "iperf2")
    assert c1.deadline == 20 + 60 + 2


def test_iperf_bounded_by_bytes_gets_the_default_deadline(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\ntool = "iperf3"\nserver = "db1"\nclients = ["db2"]\n'
                   'args = "-n 10G"\n')
    _, client = only_step(plan)
    assert client.deadline == 7200


# --- other tools, commands, deadlines ----------------------------------------------------------

@pytest.mark.parametrize(("body", "argv", "buffered"), [
    ('tool = "rados_bench"\nargs = "-p test 60 write --no-cleanup"',
     ("rados", "bench", "-p", "test", "60", "write", "--no-cleanup"), True),
    ('tool = "rbd_bench"\nargs = "--io-type write rbd/bench"',
     ("rbd", "bench", "--io-type", "write", "rbd/bench"), True),
    ('tool = "mbw"\nargs = "-n 3 512"', ("mbw", "-n", "3", "512"), True),
    ('tool = "fbbench"\nexecutable = "/opt/fb/fbbench"\nargs = "-o 1.2.3.4 -k 30"',
     ("/opt/fb/fbbench", "-o", "1.2.3.4", "-k", "30"), True),
    ('tool = "unixbench"\nexecutable = "/opt/ub/Run"\nargs = "-c 1 dhry2reg"',
     ("/opt/ub/Run", "-c", "1", "dhry2reg"), False),
    ('tool = "fio"\nexecutable = "/opt/fio/fio"\nargs = "--rw=read"',
     ("/opt/fio/fio", "--status-interval=1", "--output-format=json+", "--eta=never",
      "--name=s", "--rw=read"), False),
])
def test_tool_command_lines(tmp_path: Path, body: str, argv: tuple[str, ...],
                            buffered: bool) -> None:
    plan = plan_of(tmp_path, f'[[step]]\nname = "s"\nhosts = ["db1"]\n{body}\n')
    (cmd,) = only_step(plan)
    assert cmd.argv == argv and cmd.line_buffered == buffered
    assert cmd.exec_argv[:3] == ("env", "LC_ALL=C", "stdbuf" if buffered else argv[0])


def test_spdk_iostat_monitor(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[monitor]]\ntool = "spdk_iostat"\nhosts = ["db1"]\n'
                   'executable = "/root/spdk/scripts/iostat.py"\n'
                   'args = "-s /var/tmp/socket.1.sock -b test1n1"\n')
    (cmd,) = monitor_commands(plan, plan.monitors[0])
    assert cmd.argv == ("/root/spdk/scripts/iostat.py", "-i", "1", "-s",
                        "/var/tmp/socket.1.sock", "-b", "test1n1")
    assert cmd.env == {"LC_ALL": "C", "PYTHONUNBUFFERED": "1"} and cmd.parser == "spdk-iostat"


def test_a_command_runs_as_written_without_added_environment(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\nhosts = ["db1"]\ncommand = "ping -c 3 \'a b\'"\n'
                   'parser = "iperf2"\nenv = { X = "1" }\n')
    (cmd,) = only_step(plan)
    assert cmd.argv == ("ping", "-c", "3", "a b") and cmd.env == {"X": "1"}
    assert cmd.shell_line() == "env X=1 ping -c 3 'a b'" and cmd.deadline == 7200


@pytest.mark.parametrize(("body", "deadline"), [
    ('tool = "fio"\nargs = "--runtime=60 --ramp_time=10 --time_based"', 70 + 60 + 7),
    ('tool = "fio"\nargs = "--runtime=2m"', 120 + 60 + 12),
    ('tool = "fio"\nargs = "--size=10g"', 7200),
    ('tool = "fio"\nargs = "--runtime=60"\ntimeout = 30', 30),
    ('tool = "mbw"\nargs = "64"\nduration = 100', 100 + 60 + 10),
    ('tool = "rados_bench"\nargs = "-p test -t 16 30 seq"', 30 + 60 + 3),
    ('tool = "rados_bench"\nargs = "--pool=test 45 write"', 45 + 60 + 4.5),
])
def test_step_deadlines(tmp_path: Path, body: str, deadline: float) -> None:
    plan = plan_of(tmp_path, f"[[step]]\n{body}\n")
    assert step_deadline(plan, plan.steps[0]) == pytest.approx(deadline)
    assert all(c.deadline == pytest.approx(deadline) for c in only_step(plan))


def test_fio_jobfile_groups_add_up(tmp_path: Path) -> None:
    (tmp_path / "g.fio").write_text(
        "[global]\nruntime=30\n[a]\nrw=write\n[b]\nrw=read\n[c]\nstonewall\nruntime=50\n"
        "startdelay=5\n")
    plan = plan_of(tmp_path, '[[step]]\ntool = "fio"\njobfile = "g.fio"\n'
                   '[session]\ndeadline_margin = 0\n')
    assert step_deadline(plan, plan.steps[0]) == pytest.approx((30 + 55) * 1.1)


def test_bounded_shell_line(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, '[[step]]\ntool = "mbw"\nhosts = ["db1"]\nargs = "64"\n'
                   'timeout = 12.5\n')
    (cmd,) = only_step(plan)
    assert cmd.bounded_shell_line() == ("timeout --kill-after=10 13 env LC_ALL=C stdbuf -oL "
                                        "mbw 64")


# --- quoting: plan values are data, never shell syntax ---------------------------------------

PAYLOADS = ["x; touch {p}", "$(touch {p})", "`touch {p}`", "x && touch {p}", "x | touch {p}",
            "x\ntouch {p}", "'; touch {p}; '", '"; touch {p}; "', "x > {p}"]


def _run_sh(line: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True, timeout=30,
                          check=False)


def _injection_plan(tmp_path: Path, payload: str) -> Plan:
    text = payload.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    device = f"$(touch${{IFS}}{tmp_path}/pwned)"  # devices hold no spaces
    (tmp_path / "j.fio").write_text("[j]\nrw=read\n")
    return plan_of(tmp_path, f"""\
[[monitor]]
tool = "iostat"
executable = "/bin/echo"
devices = ["{device}"]
args = ["{text}"]
env = {{ V = "{text}" }}
[[step]]
name = "fio"
tool = "fio"
executable = "/bin/echo"
args = ["--filename={text}", "{text}"]
jobfile = "j.fio"
[[step]]
name = "net"
tool = "iperf3"
executable = "/bin/echo"
server = "db1"
clients = ["db2"]
server_address = "{text}"
args = ["-t", "{text}"]
server_args = ["{text}"]
[[step]]
name = "cmd"
command = "echo {text}"
parser = "mbw"
""")


@pytest.mark.parametrize("template", PAYLOADS)
def test_a_plan_value_never_runs_as_a_command(tmp_path: Path, template: str) -> None:
    pwned = tmp_path / "pwned"
    payload = template.format(p=pwned)
    plan = _injection_plan(tmp_path, payload)
    commands = monitor_commands(plan, plan.monitors[0], fallback_hosts={"db2"})
    for step in plan.steps:
        commands += step_commands(plan, step, jobfile_path=f"/tmp/{payload}.fio")
    assert len(commands) == 3 + 3 + 2 + 3
    for cmd in commands:
        for line in (cmd.shell_line(), cmd.bounded_shell_line()):
            if cmd.tool == "diskstats":  # a loop that never ends: do not run it
                assert shlex.split(line)[-len(cmd.exec_argv):] == list(cmd.exec_argv)
                continue
            done = _run_sh(line)
            assert done.returncode == 0, (line, done.stderr)
            assert not pwned.exists(), line
            if cmd.tool != "command":
                assert payload in done.stdout or payload.split()[0] in done.stdout


def test_a_plan_value_reaches_real_fio_as_one_argument(tmp_path: Path) -> None:
    require_tool("fio")
    pwned = tmp_path / "pwned"
    plan = plan_of(tmp_path, f'[[step]]\ntool = "fio"\nhosts = ["here"]\n'
                   f'args = ["--filename=x; touch {pwned}", "--size=1m", "--rw=read"]\n')
    (cmd,) = only_step(plan)
    done = _run_sh(cmd.shell_line() + " --parse-only")
    assert done.returncode == 0, done.stderr
    assert not pwned.exists()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(exclude_characters="\x00",
                                               exclude_categories=["Cs"])),
                min_size=1, max_size=5))
def test_the_shell_line_splits_back_into_the_same_words(words: list[str]) -> None:
    cmd = RemoteCommand(host="h", name="n", role="step", tool="fio", parser="fio-json",
                        argv=("fio", *words), deadline=1.0, env={"A": words[0]},
                        line_buffered=True)
    assert shlex.split(cmd.shell_line()) == list(cmd.exec_argv)
    assert shlex.split(cmd.bounded_shell_line())[3:] == list(cmd.exec_argv)


# --- the real tools accept what benchtui builds ----------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_real_fio_accepts_every_example_fio_step() -> None:
    require_tool("fio")
    for name in ("local-demo.toml", "fleet.toml", "local-tools.toml"):
        plan = load_plan(EXAMPLES / name)
        for step in plan.steps:
            if step.tool != "fio":
                continue
            jobfile = str(step.jobfile) if step.jobfile else None
            for cmd in step_commands(plan, step, jobfile_path=jobfile):
                done = _run_sh(cmd.shell_line() + " --parse-only")
                assert done.returncode == 0, (cmd.shell_line(), done.stderr)


def test_real_iostat_prints_iso_timestamps_the_parser_reads() -> None:
    from benchtui.parsers.registry import all_parsers

    require_tool("iostat")
    plan = load_plan(EXAMPLES / "local-demo.toml")
    (cmd,) = monitor_commands(plan, plan.monitors[0])
    done = _run_sh(cmd.shell_line() + " 1")  # count 1: one report after a second
    assert done.returncode == 0, done.stderr
    assert "Device" in done.stdout and "r/s" in done.stdout
    assert any(line[:4].isdigit() and "T" in line[:11] for line in done.stdout.splitlines())
    parser = all_parsers()[cmd.parser](host="here", source="test")
    samples = [s for line in done.stdout.splitlines() for s in parser.feed(line)]
    samples += parser.finish()
    assert samples and all(s.t is not None for s in samples)


def test_real_diskstats_loop_feeds_the_diskstats_parser() -> None:
    from benchtui.parsers.registry import all_parsers

    plan = load_plan(EXAMPLES / "local-tools.toml")
    (cmd,) = monitor_commands(plan, plan.monitors[0])
    done = subprocess.run(["/bin/sh", "-c", f"timeout 1.5 {cmd.shell_line()}"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.count("--- ") == 2, done.stdout[:500]
    parser = all_parsers()["diskstats"](host="here", source="test")
    samples = [s for line in done.stdout.splitlines() for s in parser.feed(line)]
    samples += parser.finish()
    assert not parser.warnings
    assert all(s.t is not None for s in samples)


def _run_pair(server: RemoteCommand, client: RemoteCommand) -> tuple[str, str]:
    """Start the server, run the client until it connects, return both outputs."""
    with subprocess.Popen(["/bin/sh", "-c", "exec " + server.shell_line()],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as srv:
        ok = False
        try:
            out = ""
            for _ in range(50):  # until it listens
                done = _run_sh(client.shell_line())
                out = done.stdout
                if done.returncode == 0 and "sec" in out:  # iperf 2 exits 0 when refused
                    break
                subprocess.run(["sleep", "0.1"], check=True)
            assert "sec" in out, out
            ok = True
        finally:
            if server.tool == "iperf" or not ok:
                srv.terminate()
            server_out, _ = srv.communicate(timeout=10)
    return server_out, out


def test_real_iperf3_loopback(tmp_path: Path) -> None:
    require_tool("iperf3")
    plan = plan_of(tmp_path, f'[[step]]\ntool = "iperf3"\nserver = "here"\n'
                   f'clients = ["here"]\nargs = "-t 1 -p {_free_port()}"\n')
    server, client = only_step(plan)
    server_out, client_out = _run_pair(server, client)
    assert "receiver" in client_out and "Server listening" in server_out


def test_real_iperf2_loopback(tmp_path: Path) -> None:
    require_tool("iperf")
    plan = plan_of(tmp_path, f'[[step]]\ntool = "iperf"\nserver = "here"\n'
                   f'clients = ["here"]\nargs = "-t 1 -p {_free_port()}"\n')
    server, client = only_step(plan)
    _, client_out = _run_pair(server, client)
    assert "0.0000-1.0" in client_out


def test_real_mbw_under_stdbuf(tmp_path: Path) -> None:
    require_tool("mbw")
    plan = plan_of(tmp_path, '[[step]]\ntool = "mbw"\nhosts = ["here"]\nargs = "-n 1 8"\n')
    (cmd,) = only_step(plan)
    done = _run_sh(cmd.bounded_shell_line())
    assert done.returncode == 0 and "Method: MEMCPY" in done.stdout


# --- random near-valid plans: load, build every command, preflight: never a traceback --------

WORDS = st.sampled_from(["--rw=write", "--filename=/dev/sdb", "--runtime=5", "-t", "30", "-p",
                         "x; y", "--output-format=terse", "-c", "--name=a", "--size=1g",
                         "--stonewall", "-n", "10G", "$(id)", "--runtime=abc", "-O", "2"])
CHAOS_STEP = st.fixed_dictionaries(
    {"tool": st.sampled_from(["fio", "iperf3", "iperf", "mbw", "rados_bench", "rbd_bench",
                              "iostat", "diskstats", "fbbench", "command", "nope"])},
    optional={
        "args": st.lists(WORDS, max_size=6) | st.text(max_size=20),
        "hosts": st.sampled_from(["all", ["db1"], ["here", "db2"], [], "db9"]),
        "server": st.sampled_from(["db1", "here", "zz"]),
        "clients": st.sampled_from(["all", ["db2"], ["here"]]),
        "command": st.sampled_from(["echo hi", "", "sh -c 'x'"]),
        "parser": st.sampled_from(["mbw", "fio-json", "Bad Name"]),
        "duration": st.sampled_from([1, 0, 2.5, -1]),
        "timeout": st.sampled_from([1, 100, 1e300]),
        "repeat": st.sampled_from([1, 3, 0]),
        "executable": st.sampled_from(["/bin/echo", "-x"]),
        "server_args": st.lists(WORDS, max_size=3),
        "env": st.sampled_from([{"A": "1"}, {"A": 1}]),
    })
HOST_CHOICE = st.sampled_from(["all", ["db1"], ["here", "db2"]])
EXTRA = {"timeout": st.sampled_from([50, 1e6]), "repeat": st.sampled_from([1, 3]),
         "env": st.just({"A": "x; y"})}
ARGS = st.lists(WORDS, min_size=1, max_size=6)
STEP = st.one_of(
    st.fixed_dictionaries({"tool": st.just("fio"), "args": ARGS, "hosts": HOST_CHOICE},
                          optional={**EXTRA, "executable": st.just("/opt/fio")}),
    st.fixed_dictionaries({"tool": st.sampled_from(["iperf3", "iperf"]),
                           "server": st.sampled_from(["db1", "here"]),
                           "clients": st.sampled_from(["all", ["db2"], ["here"]])},
                          optional={**EXTRA, "args": ARGS, "server_args": ARGS,
                                    "server_address": st.just("10.1.1.1")}),
    st.fixed_dictionaries({"tool": st.sampled_from(["mbw", "rados_bench", "rbd_bench",
                                                    "fbbench"]), "args": ARGS},
                          optional={**EXTRA, "hosts": HOST_CHOICE}),
    st.fixed_dictionaries({"tool": st.sampled_from(["iostat", "diskstats"]),
                           "duration": st.sampled_from([1, 2.5])}, optional=EXTRA),
    st.fixed_dictionaries({"command": st.sampled_from(["echo hi", "sh -c 'x'"]),
                           "parser": st.just("mbw")}, optional=EXTRA),
    CHAOS_STEP,
)
MONITOR = st.fixed_dictionaries(
    {"tool": st.sampled_from(["iostat", "diskstats", "fio", "mbw", "spdk_iostat"])},
    optional={"devices": st.sampled_from([["sda"], ["/dev/nvme1n1"], [""]]),
              "interval": st.sampled_from([1, 2, 0.5, 0]),
              "args": st.lists(WORDS, max_size=3),
              "executable": st.just("/opt/iostat.py")})


def _value(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if not isinstance(value, float) or value == value else "nan"


@settings(max_examples=150, deadline=None)
@given(st.lists(STEP, max_size=3), st.lists(MONITOR, max_size=2))
def test_random_plans_build_commands_and_preflight(steps: list[dict[str, object]],
                                                   monitors: list[dict[str, object]]) -> None:
    from benchtui.errors import PlanError
    from benchtui.plan.loader import parse_plan
    from benchtui.plan.preflight import preflight

    text = HOSTS
    for kind, tables in (("step", steps), ("monitor", monitors)):
        for table in tables:
            text += f"[[{kind}]]\n" + "".join(f"{k} = {_value(v)}\n" for k, v in table.items())
    try:
        plan = parse_plan(text, Path("/nonexistent/plan.toml"))
    except PlanError:
        event("plan error")
        return
    event("plan")
    commands: list[RemoteCommand] = []
    for monitor in plan.monitors:
        commands += monitor_commands(plan, monitor, fallback_hosts={"db1"})
    for step in plan.steps:
        commands += step_commands(plan, step)
    for cmd in commands:
        assert cmd.deadline > 0 and cmd.argv
        assert shlex.split(cmd.bounded_shell_line())[3:] == list(cmd.exec_argv)
    preflight(plan, {"db1": {"tools": {}}, "db2": {"mem_bytes": 1}})
