"""SshTransport against real OpenSSH sshd hosts (tests/sshd.py): runs, follow and resume across
dropped connections and cut links, stop, deadline guard, host keys, errors, injection."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import pwd
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from benchtui.errors import HostError
from benchtui.transport import (
    HostAuthError,
    HostConfigError,
    HostKeyError,
    HostLookupError,
    HostUnreachableError,
    LineSplitter,
    LinkState,
    RemoteRun,
    RunHandle,
    is_transient,
)
from benchtui.transport.ssh import READ_SIZE, SshTransport
from benchtui.transport.ssh_link import map_error
from benchtui.transport.sshtarget import SshTarget
from tests import transport_checks as checks
from tests.helpers import require_tool
from tests.sshd import (
    TEST_USER,
    NetnsLab,
    SshdFleet,
    SshdHost,
    follow_dropping,
    keygen,
)

MakeTransport = Callable[..., SshTransport]


@pytest.fixture
async def make_ssh() -> AsyncIterator[MakeTransport]:
    """``make_ssh(host, name=..., **target_changes)``: an SshTransport, closed at the end."""
    made: list[SshTransport] = []

    def make(host: SshdHost, name: str = "db1", *, session_id: str | None = None,
             states: list[LinkState] | None = None, reconnect_timeout: float = 30.0,
             **changes: Any) -> SshTransport:
        transport = SshTransport(
            name, host.target(**changes), session_id=session_id,
            reconnect_timeout=reconnect_timeout,
            on_state=None if states is None else lambda _n, s: states.append(s))
        made.append(transport)
        return transport

    yield make
    runs = Path(pwd.getpwnam(TEST_USER).pw_dir) / ".cache" / "benchtui" / "runs"
    for transport in made:
        await transport.close()
        shutil.rmtree(runs / transport.session_id, ignore_errors=True)


@pytest.fixture
async def db1(sshd_hosts: list[SshdHost], make_ssh: MakeTransport) -> SshTransport:
    transport = make_ssh(sshd_hosts[0])
    await transport.connect()
    return transport


async def test_run_reports_exit_status_stdout_stderr_and_timeout(db1: SshTransport) -> None:
    await checks.check_run(db1)


async def test_three_hosts_connect_concurrently(sshd_hosts: list[SshdHost],
                                                make_ssh: MakeTransport) -> None:
    transports = [make_ssh(host, name=host.name) for host in sshd_hosts]
    started = time.monotonic()
    await asyncio.gather(*(t.connect() for t in transports))
    results = await asyncio.gather(*(t.run('echo "$SSH_CONNECTION"') for t in transports))
    assert time.monotonic() - started < 2
    ports = [int(r.stdout.split()[3]) for r in results]
    assert ports == [host.port for host in sshd_hosts]
    assert all(t.state is LinkState.UP for t in transports)


async def test_start_and_follow_stream_lines_live(db1: SshTransport) -> None:
    await checks.check_live_follow(db1)


async def test_exit_status_while_running_after_and_past_the_deadline(db1: SshTransport
                                                                     ) -> None:
    await checks.check_exit_status(db1)


async def test_resume_from_an_offset_with_a_new_controller(sshd_hosts: list[SshdHost],
                                                          make_ssh: MakeTransport) -> None:
    first = make_ssh(sshd_hosts[0], session_id="resume-ssh")
    await first.connect()
    await checks.check_resume_by_offset(first, make_ssh(sshd_hosts[0], session_id="x"))


async def test_follow_reconnects_and_resumes_when_the_connection_drops(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport) -> None:
    """sshd's per-connection processes are killed mid-follow: the follower reconnects and
    the bytes it yields are exactly the output file."""
    host = sshd_hosts[1]
    states: list[LinkState] = []
    transport = make_ssh(host, states=states)
    await transport.connect()
    handle = await transport.start(RemoteRun(checks.run_id(), checks.counter(20, 0.1),
                                             deadline=30))
    data, drops = await follow_dropping(transport, handle, host, every=40)
    assert drops == 2 and transport.reconnects >= 2
    assert LinkState.RECONNECTING in states and states[-1] is LinkState.UP
    whole = await checks.read_out(transport, handle)
    assert bytes(data) == whole
    assert whole.decode().splitlines() == [f"count {i}" for i in range(20)]


async def test_follow_restarts_when_the_hosts_tail_dies(db1: SshTransport) -> None:
    handle = await db1.start(RemoteRun(checks.run_id(), checks.counter(12, 0.1), deadline=30))
    data = bytearray()
    killed = 0
    async for chunk in db1.follow(handle):
        data += chunk.data
        if not killed:
            tails = [p for p in checks.processes_with(handle.out_path) if p.name() == "tail"]
            for tail in tails:
                tail.kill()
            killed = len(tails)
    assert killed == 1 and db1.reconnects == 0
    assert bytes(data).decode().splitlines() == [f"count {i}" for i in range(12)]
    assert bytes(data) == await checks.read_out(db1, handle)


async def test_a_burst_comes_whole_and_an_unfinished_line_is_not_held(db1: SshTransport
                                                                       ) -> None:
    """A burst of packets (a 300 kB document) comes in chunks of up to READ_SIZE, byte for
    byte; a line left unfinished for a second is passed on as it is, before its end."""
    command = ("head -c 300000 /dev/zero | tr '\\0' x; echo; printf dots...; sleep 1; "
               "echo done")
    handle = await db1.start(RemoteRun(checks.run_id(), command, deadline=30))
    chunks: list[tuple[float, bytes]] = []
    async for chunk in db1.follow(handle):
        chunks.append((time.monotonic(), chunk.data))
    data = b"".join(c for _, c in chunks)
    assert data == b"x" * 300000 + b"\ndots...done\n"
    assert data == await checks.read_out(db1, handle)
    assert max(len(c) for _, c in chunks) <= READ_SIZE
    dots = next(i for i, (_, c) in enumerate(chunks) if c.endswith(b"dots..."))
    assert chunks[-1][1].endswith(b"done\n") and dots < len(chunks) - 1
    assert chunks[-1][0] - chunks[dots][0] > 0.5  # (passed on before the second's sleep)


async def test_close_ends_a_follower_instead_of_reconnecting(db1: SshTransport) -> None:
    handle = await db1.start(RemoteRun(checks.run_id(), checks.counter(50, 0.1), deadline=30))
    stream = db1.follow(handle)
    await checks.wait_for_chunk(stream, 2.0)
    await db1.close()
    started = time.monotonic()
    with pytest.raises(HostError, match="closed"):
        async for _chunk in stream:
            pass
    assert time.monotonic() - started < 1 and db1.reconnects == 0
    await db1.connect()
    await db1.stop(handle, grace=0.5)
    assert await db1.exit_status(handle) == 143


@pytest.mark.slow
async def test_follow_survives_a_cut_link_without_losing_a_byte(netns_lab: NetnsLab,
                                                                make_ssh: MakeTransport
                                                                ) -> None:
    """The host's veth goes down for 5 s (keepalive declares the link dead after ~2 s):
    the follower reconnects once the link is back and resumes at its byte offset."""
    host = netns_lab.hosts[0]
    states: list[LinkState] = []
    transport = make_ssh(host, states=states, keepalive_interval=1.0,
                         keepalive_count_max=2, connect_timeout=1.0)
    await transport.connect()
    handle = await transport.start(RemoteRun(checks.run_id(), checks.counter(50, 0.2),
                                             deadline=60))
    splitter = LineSplitter()
    lines: list[str] = []
    cut_task: asyncio.Task[None] | None = None

    async def cut_for(seconds: float) -> None:
        netns_lab.cut(host)
        try:
            await asyncio.sleep(seconds)
        finally:
            netns_lab.restore(host)

    try:
        async for chunk in transport.follow(handle):
            lines.extend(splitter.feed(chunk))
            if cut_task is None and len(lines) >= 5:
                cut_task = asyncio.create_task(cut_for(5.0))
    finally:
        if cut_task is not None:
            await cut_task
    assert transport.reconnects >= 1, "the link cut should have dropped the connection"
    assert LinkState.RECONNECTING in states
    assert lines == [f"count {i}" for i in range(50)]
    assert splitter.offset == len(await checks.read_out(transport, handle))


async def test_stop_ends_fio_and_its_setsid_workers(db1: SshTransport) -> None:
    require_tool("fio")
    await checks.check_stop_ends_fio_workers(db1, owner=TEST_USER)


CONTROLLER = """
import asyncio, json, sys
from benchtui.transport import RemoteRun
from benchtui.transport.ssh import READ_SIZE, SshTransport
from benchtui.transport.sshtarget import SshTarget
async def main():
    t = SshTransport("db1", SshTarget(**json.loads(sys.argv[1])))
    await t.connect()
    h = await t.start(RemoteRun("guarded", json.loads(sys.argv[2]), deadline=2.0))
    print(json.dumps([h.directory, h.wrapper_pid, h.pgid, h.tag]), flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
"""


async def test_deadline_ends_fio_whose_controller_was_killed(sshd_hosts: list[SshdHost],
                                                             make_ssh: MakeTransport) -> None:
    """A controller process starts fio over SSH and is SIGKILLed: fio still ends at the
    run's deadline (timeout on the host), workers included."""
    require_tool("fio")
    host = sshd_hosts[2]
    directory = checks.workdir(TEST_USER)
    argv = ["fio", f"--directory={directory}", "--size=4m", "--rw=randread", "--bs=4k",
            "--ioengine=psync", "--runtime=60", "--time_based", "--numjobs=2",
            "--name=a", "--name=b"]
    target = dataclasses.asdict(host.target())
    controller = subprocess.Popen(
        [sys.executable, "-c", CONTROLLER, json.dumps(target), json.dumps(argv)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1])
    try:
        assert controller.stdout is not None
        directory_, wrapper, pgid, tag = json.loads(controller.stdout.readline())
        started = time.monotonic()
    finally:
        controller.kill()
        controller.wait()
    await asyncio.sleep(0.5)
    assert len(checks.processes_with(str(directory))) >= 3, "fio should outlive its controller"
    while checks.processes_with(str(directory)) and time.monotonic() - started < 6:
        await asyncio.sleep(0.1)
    assert checks.processes_with(str(directory)) == []
    assert time.monotonic() - started > 1.5
    survivor = make_ssh(host)
    await survivor.connect()
    handle = RunHandle("db1", "guarded", directory_, wrapper, pgid, tag)
    assert await survivor.exit_status(handle) == 124
    shutil.rmtree(directory)
    shutil.rmtree(Path(directory_).parent)  # the killed controller's session directory


async def test_injection_runs_nothing(db1: SshTransport) -> None:
    await checks.check_injection_runs_nothing(db1, owner=TEST_USER)


# -- host keys --------------------------------------------------------------------------


async def test_unknown_host_key_is_refused_with_the_fix(sshd_hosts: list[SshdHost],
                                                        make_ssh: MakeTransport,
                                                        tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    host = sshd_hosts[0]
    with pytest.raises(HostKeyError) as caught:
        await make_ssh(host, known_hosts=str(empty)).connect()
    message = str(caught.value)
    assert message.startswith(f"db1: the host key of [127.0.0.1]:{host.port} is not in")
    assert "known_hosts" in message and f"ssh-keyscan -p {host.port} 127.0.0.1" in message
    assert "--accept-new-host-keys" in message


async def test_changed_host_key_is_refused_even_when_accepting_new_ones(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport, tmp_path: Path) -> None:
    first, other = sshd_hosts[0], sshd_hosts[1]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{first.port} {other.host_key}\n")  # someone else's key
    for accept in (False, True):
        with pytest.raises(HostKeyError, match="does not match") as caught:
            await make_ssh(first, known_hosts=str(known), accept_new_host_keys=accept
                           ).connect()
        assert "ssh-keygen -R" in str(caught.value)
    assert known.read_text() == f"[127.0.0.1]:{first.port} {other.host_key}\n"


async def test_accept_new_host_keys_trusts_on_first_use_and_records(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport, tmp_path: Path) -> None:
    host = sshd_hosts[0]
    known = tmp_path / "ssh" / "known_hosts"  # neither the file nor its directory exist
    transport = make_ssh(host, known_hosts=str(known), accept_new_host_keys=True)
    await transport.connect()
    assert (await transport.run(["true"])).ok
    assert known.read_text() == f"[127.0.0.1]:{host.port} {host.host_key}\n"
    await make_ssh(host, known_hosts=str(known)).connect()  # now known: no flag needed
    assert known.read_text().count("\n") == 1


# -- failures ---------------------------------------------------------------------------


async def test_closed_port_fails_fast_with_one_sentence(sshd_hosts: list[SshdHost],
                                                        make_ssh: MakeTransport) -> None:
    port = _closed_port()
    states: list[LinkState] = []
    started = time.monotonic()
    with pytest.raises(HostUnreachableError) as caught:
        await make_ssh(sshd_hosts[0], port=port, states=states).connect()
    assert time.monotonic() - started < 2
    assert str(caught.value) == (f"db1: connection refused on 127.0.0.1:{port} "
                                 "(is sshd running?)")
    assert states == [LinkState.CONNECTING, LinkState.DOWN]


async def test_a_silent_server_times_out(sshd_hosts: list[SshdHost],
                                         make_ssh: MakeTransport) -> None:
    with _silent_server() as port:
        started = time.monotonic()
        with pytest.raises(HostUnreachableError, match="timed out after 1 s"):
            await make_ssh(sshd_hosts[0], port=port, connect_timeout=1.0).connect()
        assert time.monotonic() - started < 3


async def test_a_key_the_host_does_not_accept_is_an_auth_error(sshd_hosts: list[SshdHost],
                                                               make_ssh: MakeTransport,
                                                               tmp_path: Path) -> None:
    keygen(tmp_path / "stranger", "stranger")
    host = sshd_hosts[0]
    with pytest.raises(HostAuthError) as caught:
        await make_ssh(host, identity=str(tmp_path / "stranger")).connect()
    assert str(caught.value) == (
        f"db1: authentication failed as {TEST_USER} on {host.address}:{host.port}: the host "
        f"refused the key {tmp_path / 'stranger'} (add {tmp_path / 'stranger'}.pub to that "
        "user's ~/.ssh/authorized_keys on the host, or give another identity)")


async def test_a_missing_identity_file_is_said_as_such(sshd_hosts: list[SshdHost],
                                                      make_ssh: MakeTransport,
                                                      tmp_path: Path) -> None:
    """The host is up; the key file is what is missing (it was "cannot reach ...: No such
    file or directory")."""
    missing = tmp_path / "no_such_key"
    with pytest.raises(HostConfigError) as caught:
        await make_ssh(sshd_hosts[0], identity=str(missing)).connect()
    assert str(caught.value).startswith(f"db1: the identity file {missing} does not exist (")
    assert not is_transient(caught.value)
    with pytest.raises(HostConfigError, match=f"the identity file {tmp_path} is a directory"):
        await make_ssh(sshd_hosts[0], identity=str(tmp_path)).connect()


async def test_a_bad_jump_is_a_config_error_not_a_connect_failure(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport) -> None:
    with pytest.raises(HostConfigError) as caught:
        await make_ssh(sshd_hosts[0], jump="root@127.0.0.1:notaport").connect()
    assert str(caught.value).startswith(
        "db1: jump host 'root@127.0.0.1:notaport': its port 'notaport' is not a port number")
    assert "ValueError" not in str(caught.value)


async def test_a_bad_proxyjump_in_the_ssh_config_names_the_config(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport, tmp_path: Path) -> None:
    host = sshd_hosts[0]
    config = tmp_path / "config"
    config.write_text(f"Host {host.address}\n  ProxyJump root@127.0.0.1:notaport\n",
                      encoding="utf-8")
    with pytest.raises(HostConfigError) as caught:
        await make_ssh(host, config=str(config)).connect()
    assert str(caught.value).startswith(
        f"db1: the SSH settings for {host.address}:{host.port} cannot be used: ")
    assert str(caught.value).endswith(f"(check {config} (ProxyJump, Port, ...) for "
                                      f"{host.address})")


async def test_an_unreadable_identity_in_the_ssh_config_names_the_file(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport, tmp_path: Path) -> None:
    """An IdentityFile of the SSH config that cannot be read is that file's problem, not an
    unreachable host (asyncssh raises the OS error for it)."""
    host = sshd_hosts[0]
    key = tmp_path / "dir_key"
    key.mkdir()
    config = tmp_path / "config"
    config.write_text(f"Host {host.address}\n  IdentityFile {key}\n", encoding="utf-8")
    with pytest.raises(HostConfigError) as caught:
        await make_ssh(host, identity=None, config=str(config)).connect()
    assert str(caught.value) == (f"db1: cannot read {key}: Is a directory (check the SSH "
                                 "config and the identity files it names)")


def test_an_unknown_host_name_is_one_sentence() -> None:
    error = map_error("db9", SshTarget("db9.example.invalid"),
                      socket.gaierror(socket.EAI_NONAME, "Name or service not known"), None)
    assert isinstance(error, HostLookupError)
    assert str(error) == ("db9: cannot resolve the host name db9.example.invalid (check the "
                          "address, or the Host alias in ~/.ssh/config)")


async def test_reconnect_gives_up_when_the_host_stays_down(sshd_fleet: SshdFleet,
                                                           make_ssh: MakeTransport) -> None:
    host = sshd_fleet.start("short-lived")
    states: list[LinkState] = []
    transport = make_ssh(host, states=states, reconnect_timeout=0.7)
    await transport.connect()
    host.process.terminate()
    host.process.wait()
    with pytest.raises(HostUnreachableError, match="connection refused"):
        await transport.reconnect()
    assert states[-2:] == [LinkState.RECONNECTING, LinkState.DOWN]
    with pytest.raises(HostError):
        await transport.run(["true"])


@pytest.mark.slow
async def test_reconnect_backs_off_exponentially(sshd_hosts: list[SshdHost],
                                                 make_ssh: MakeTransport) -> None:
    """Against a port that accepts and hangs up at once, attempts come at 0, 0.5, 1.5 and
    3.5 s (delays doubling from 0.5 s), not in a busy loop, and a last one at the end of the
    window (4 s)."""
    with _hanging_up_server() as (port, accepted):
        transport = make_ssh(sshd_hosts[0], port=port, reconnect_timeout=4.0)
        started = time.monotonic()
        with pytest.raises(HostUnreachableError):
            await transport.reconnect()
        waited = time.monotonic() - started
    assert len(accepted) == 5, accepted
    gaps = [b - a for a, b in itertools.pairwise(accepted)]
    # never early; late by the attempt itself, which a loaded machine makes slower
    assert all(want - 0.15 < gap < want + 0.6
               for gap, want in zip(gaps[:3], [0.5, 1.0, 2.0], strict=True)), gaps
    assert 3.9 < accepted[-1] - accepted[0] < 4.6
    assert 3.9 < waited < 5.0


# -- SSH options --------------------------------------------------------------------------


async def test_jump_host_carries_the_connection(sshd_hosts: list[SshdHost],
                                                make_ssh: MakeTransport) -> None:
    jump, target = sshd_hosts[0], sshd_hosts[1]
    transport = make_ssh(target, jump=f"{TEST_USER}@127.0.0.1:{jump.port}")
    await transport.connect()
    seen = (await transport.run('echo "$SSH_CONNECTION"')).stdout.split()
    client_port = int(seen[1])
    owner = next(c.pid for c in psutil.net_connections("tcp")
                 if c.laddr and c.laddr.port == client_port and c.pid)
    ancestors = {p.pid for p in psutil.Process(owner).parents()}
    assert jump.process.pid in ancestors, "the TCP connection should come from the jump sshd"


async def test_ssh_config_alias_supplies_address_port_user_and_key(
        sshd_hosts: list[SshdHost], tmp_path: Path) -> None:
    host = sshd_hosts[2]
    config = tmp_path / "ssh_config"
    config.write_text(f"Host db-alias\n  HostName 127.0.0.1\n  Port {host.port}\n"
                      f"  User {TEST_USER}\n  IdentityFile {host.identity}\n")
    transport = SshTransport("db3", SshTarget("db-alias", config=str(config),
                                              known_hosts=host.known_hosts))
    try:
        await transport.connect()
        result = await transport.run("id -un")
        assert result.stdout.strip() == TEST_USER
    finally:
        await transport.close()


async def test_aes_gcm_is_offered_first_unless_the_ssh_config_names_ciphers(
        sshd_hosts: list[SshdHost], make_ssh: MakeTransport, tmp_path: Path) -> None:
    host = sshd_hosts[0]
    empty = tmp_path / "empty_config"
    empty.write_text("")
    transport = make_ssh(host, config=str(empty))
    await transport.connect()
    assert transport.cipher == "aes128-gcm@openssh.com"
    own = tmp_path / "ciphers_config"
    own.write_text("Host *\n  Ciphers aes256-ctr\n")
    transport = make_ssh(host, name="db2", config=str(own))
    await transport.connect()
    assert transport.cipher == "aes256-ctr"
    assert (await transport.run("echo ok")).stdout.strip() == "ok"


# -- helpers ----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _hanging_up_server() -> Iterator[tuple[int, list[float]]]:
    """A TCP port that closes every connection at once; yields (port, accept times)."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[float] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                server.accept()[0].close()
                accepted.append(time.monotonic())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1]), accepted
    finally:
        stop.set()
        thread.join()
        server.close()


@contextlib.contextmanager
def _silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word (no SSH banner)."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for sock in accepted:
            sock.close()
        server.close()
