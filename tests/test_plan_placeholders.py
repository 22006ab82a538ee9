"""Placeholders ({host}, {index}, {step}, {run}, {session}) in plans: checked by the loader
(file:line), filled per host and per run; and ``check --commands`` compared with what real sshd
hosts then run; and preflight naming two plan hosts that are one machine."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtui.errors import PlanError
from benchtui.plan.commands import step_commands
from benchtui.plan.loader import parse_plan
from benchtui.plan.placeholders import substitute
from benchtui.plan.preflight import paths_to_inspect, preflight
from benchtui.plan.same_machine import same_machines
from tests.helpers import require_tool
from tests.sshd import SshdHost
from tests.test_session_engine import host_tables, scratch_dir

HOSTS = '[hosts.a]\naddress = "10.0.0.1"\n[hosts.b]\naddress = "10.0.0.2"\n\n'


def plan_of(text: str, tmp_path: Path | None = None):  # type: ignore[no-untyped-def]
    path = (tmp_path or Path("/tmp")) / "p.toml"
    return parse_plan('[session]\nname = "s"\n' + HOSTS + text, path)


def test_each_host_gets_its_own_values() -> None:
    plan = plan_of('[[step]]\nname = "w"\ntool = "fio"\nrepeat = 2\n'
                   'args = "--filename=/mnt/cephfs/{session}-{host}-{index}-{step}-{run}.dat"\n'
                   'env = { OUT = "/tmp/{host}" }\n')
    step = plan.steps[0]
    first = step_commands(plan, step)
    assert [c.host for c in first] == ["a", "b"]
    assert "--filename=/mnt/cephfs/s-a-0-w-1.dat" in first[0].argv
    assert "--filename=/mnt/cephfs/s-b-1-w-1.dat" in first[1].argv
    assert first[1].env["OUT"] == "/tmp/b"
    second = step_commands(plan, step, run=2)
    assert "--filename=/mnt/cephfs/s-b-1-w-2.dat" in second[1].argv


def test_braces_that_are_no_placeholder_are_kept_and_double_brace_escapes() -> None:
    assert substitute("{{host}", {"host": "a"}) == "{host}"
    assert substitute("${HOME}/{host}", {"host": "a"}) == "${HOME}/a"
    assert substitute("awk '{print $1}' a{1,2}", {"host": "a"}) == "awk '{print $1}' a{1,2}"
    plan = plan_of('[[step]]\ntool = "fio"\nargs = "--filename=/d/{{host}-{host}"\n')
    assert "--filename=/d/{host}-a" in step_commands(plan, plan.steps[0])[0].argv


def test_an_unknown_placeholder_is_a_plan_error_at_its_line() -> None:
    with pytest.raises(PlanError) as caught:
        plan_of('[[step]]\ntool = "fio"\nargs = "--filename=/d/{hots}"\n')
    assert caught.value.line == 10
    assert "{hots} is not a placeholder" in str(caught.value)
    assert "{{hots}" in str(caught.value)
    with pytest.raises(PlanError) as caught:
        plan_of('[[step]]\ntool = "fio"\nargs = "--bs=4k"\nenv = { A = "{nope}" }\n')
    assert caught.value.line == 11
    with pytest.raises(PlanError, match="no meaning in a monitor"):
        plan_of('[[monitor]]\ntool = "mbw"\nargs = "-n 1 {run}"\n')


def test_a_jobfile_placeholder_is_checked_at_the_jobfile_line_and_filled_per_host(
        tmp_path: Path) -> None:
    (tmp_path / "j.fio").write_text("[global]\nsize=1m\n[w]\nfilename=/d/{bogus}\n")
    with pytest.raises(PlanError) as caught:
        plan_of('[[step]]\ntool = "fio"\njobfile = "j.fio"\n', tmp_path)
    assert caught.value.file.endswith("j.fio") and caught.value.line == 4
    (tmp_path / "j.fio").write_text("[global]\nsize=1m\n[w]\nfilename=/d/{host}.dat\n")
    plan = plan_of('[[step]]\ntool = "fio"\njobfile = "j.fio"\n', tmp_path)
    a, b = step_commands(plan, plan.steps[0])
    assert a.uploads[0].text is not None and "filename=/d/a.dat" in a.uploads[0].text
    assert b.uploads[0].text is not None and "filename=/d/b.dat" in b.uploads[0].text
    assert a.uploads[0].remote != b.uploads[0].remote  # one machine may hold both


def test_iperf_clients_and_server_get_their_own_values() -> None:
    plan = plan_of('[[step]]\ntool = "iperf3"\nserver = "a"\nclients = ["b"]\n'
                   'args = "-t 5 --logfile-not {host}"\nserver_args = "-B 10.0.0.{index}"\n')
    server, client = step_commands(plan, plan.steps[0])
    assert server.argv[-2:] == ("-B", "10.0.0.0")
    assert client.argv[-2:] == ("--logfile-not", "b")


def test_same_machine_is_warned_naming_both() -> None:
    plan = plan_of('[[step]]\ntool = "fio"\nargs = "--bs=4k"\n')
    facts = {"a": {"machine_id": "m1", "boot_id": "k1"}, "b": {"machine_id": "m1",
                                                              "boot_id": "k1"}}
    (finding,) = same_machines(plan, facts)
    assert "hosts a and b are one machine" in finding.message
    facts["b"] = {"machine_id": "m2", "boot_id": "k2"}
    assert same_machines(plan, facts) == []
    facts = {"a": {"host_key": "SHA256:x"}, "b": {"host_key": "SHA256:x"}}
    (finding,) = same_machines(plan, facts)
    assert "the same SSH host key" in finding.message


def test_hosts_that_are_one_machine_are_one_warning_naming_them_all() -> None:
    # Four plan hosts of one box: one warning, not six pairs (issue 31); a and b share a
    # kernel, b and c a host key: one machine. e and f are another; g is alone.
    hosts = "abcdefg"
    plan = parse_plan("".join(f"[hosts.{h}]\nlocal = true\n" for h in hosts)
                      + '[[step]]\ntool = "fio"\nargs = "--bs=4k"\n', "p.toml")
    facts = {"a": {"boot_id": "k1"}, "b": {"boot_id": "k1", "host_key": "x"},
             "c": {"host_key": "x"}, "d": {"boot_id": "k1"},
             "e": {"machine_id": "m"}, "f": {"machine_id": "m"}, "g": {"machine_id": "n"}}
    first, second = same_machines(plan, facts)
    assert first.message.startswith(
        "hosts a, b, c and d are one machine: the same running kernel (boot id), the same SSH "
        "host key; their workloads share its CPUs, memory, disks and network, so each "
        "disturbs the others' numbers")
    assert second.message.startswith(
        "hosts e and f are one machine: the same /etc/machine-id (a cloned image would also "
        "share it); ")
    assert "each disturbs the other's numbers" in second.message
    many = {f"vm{n:02}": {"machine_id": "cloned"} for n in range(16)}
    plan = parse_plan("".join(f"[hosts.{h}]\nlocal = true\n" for h in many)
                      + '[[step]]\ntool = "fio"\nargs = "--bs=4k"\n', "p.toml")
    (finding,) = same_machines(plan, many)
    assert finding.message.startswith("hosts vm00, vm01, vm02, ") and "vm14 and vm15 are" in \
        finding.message


# --- real sshd hosts ---------------------------------------------------------------------

def benchtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def fio_plan(hosts: list[SshdHost], directory: Path, seconds: int) -> str:
    return ('[session]\nname = "ph"\n\n' + host_tables(hosts)
            + '[[step]]\nname = "own"\ntool = "fio"\nhosts = "all"\n'
            f'args = "--filename={directory}/bench-{{host}}-{{index}}.dat --size=1m --rw=write '
            f'--bs=64k --ioengine=psync --runtime={seconds} --time_based"\n')


@pytest.mark.slow
def test_host_and_index_give_each_ssh_host_its_own_file(sshd_hosts: list[SshdHost],
                                                       tmp_path: Path) -> None:
    require_tool("fio")
    d = scratch_dir()
    plan = tmp_path / "p.toml"
    plan.write_text(fio_plan(sshd_hosts, d, 1))
    out = benchtui("run", str(plan), "--jsonl", "--known-hosts", sshd_hosts[0].known_hosts)
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in d.iterdir())
    assert files == [f"bench-{h.name}-{i}.dat" for i, h in enumerate(sshd_hosts)]


def _fio_cmdlines(directory: Path) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for proc in Path("/proc").iterdir():
        try:
            words = tuple(w.decode() for w in (proc / "cmdline").read_bytes().split(b"\0")[:-1])
        except OSError:
            continue
        if words and Path(words[0]).name == "fio" and any(str(directory) in w for w in words):
            found.add(words)
    return found


@pytest.mark.slow
def test_check_commands_prints_what_the_hosts_then_run(sshd_hosts: list[SshdHost],
                                                        tmp_path: Path) -> None:
    require_tool("fio")
    d = scratch_dir()
    plan = tmp_path / "p.toml"
    plan.write_text(fio_plan(sshd_hosts, d, 4))
    known = sshd_hosts[0].known_hosts
    check = benchtui("check", str(plan), "--commands", "--known-hosts", known)
    assert "commands, as each host will run them:" in check.stdout, check.stderr
    printed: dict[str, tuple[str, ...]] = {}
    for line in check.stdout.splitlines():
        host, _, rest = line.strip().partition(": ")
        if host in {h.name for h in sshd_hosts} and rest.startswith("env "):
            words = shlex.split(rest)
            printed[host] = tuple(words[words.index("fio"):])  # after `env K=V`
    assert set(printed) == {h.name for h in sshd_hosts}
    run = subprocess.Popen([sys.executable, "-m", "benchtui", "run", str(plan), "--jsonl",
                            "--known-hosts", known], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:
        seen: set[tuple[str, ...]] = set()
        deadline = time.monotonic() + 30
        while len(seen) < len(sshd_hosts) and time.monotonic() < deadline:
            seen |= _fio_cmdlines(d)
            time.sleep(0.2)
        assert run.wait(timeout=60) == 0
    finally:
        if run.poll() is None:
            run.kill()
    assert seen == set(printed.values())


@pytest.mark.slow
def test_two_aliases_of_one_sshd_are_warned_about(sshd_hosts: list[SshdHost],
                                                   tmp_path: Path) -> None:
    host = sshd_hosts[0]
    tables = "".join(
        f'[hosts.{name}]\naddress = "{host.address}"\nport = {host.port}\nuser = "{host.user}"\n'
        f'identity = "{host.identity}"\n\n' for name in ("alias1", "alias2"))
    plan = tmp_path / "p.toml"
    plan.write_text('[session]\nname = "twins"\n\n' + tables
                    + '[[step]]\ntool = "mbw"\nargs = "-n 1 1"\n')
    out = benchtui("check", str(plan), "--known-hosts", host.known_hosts)
    assert "warning: hosts alias1 and alias2 are one machine: the same running kernel (boot " \
        "id), the same /etc/machine-id, the same SSH host key;" in out.stdout, out.stdout


def test_preflight_checks_each_hosts_own_files_and_devices() -> None:
    plan = parse_plan(
        '[session]\nname = "s"\n[hosts.a]\naddress = "10.0.0.1"\n'
        'allow_destructive = ["/dev/nvme0n1"]\n[hosts.b]\naddress = "10.0.0.2"\n'
        'allow_destructive = ["/dev/nvme1n1"]\n\n[[step]]\ntool = "fio"\n'
        'args = "--filename=/dev/nvme{index}n1 --rw=write --direct=1"\n', "/tmp/p.toml")
    assert paths_to_inspect(plan) == {"a": ["/dev/nvme0n1"], "b": ["/dev/nvme1n1"]}
    assert [f for f in preflight(plan, {}) if f.severity == "error"] == []
    other = parse_plan(
        '[session]\nname = "s"\n[hosts.a]\naddress = "10.0.0.1"\n'
        'allow_destructive = ["/dev/nvme1n1"]\n\n[[step]]\ntool = "fio"\n'
        'args = "--filename=/dev/nvme{index}n1 --rw=write --direct=1"\n', "/tmp/p.toml")
    (error,) = [f for f in preflight(other, {}) if f.severity == "error"]
    assert "/dev/nvme0n1" in error.message


def test_each_host_needs_its_own_executable() -> None:
    from benchtui.plan.tools import executables_needed

    plan = plan_of('[[step]]\ntool = "fio"\nexecutable = "/opt/{host}/bin/fio"\n'
                   'args = "--bs=4k"\n')
    needed = executables_needed(plan)
    assert needed == {"a": {"/opt/a/bin/fio": "fio"}, "b": {"/opt/b/bin/fio": "fio"}}
    facts = {"a": {"tools": {"/opt/a/bin/fio": "fio-3.33"}}, "b": {"tools": {}}}
    (missing,) = [f for f in preflight(plan, facts) if f.severity == "error"]
    assert missing.host == "b" and "/opt/b/bin/fio" in missing.message
