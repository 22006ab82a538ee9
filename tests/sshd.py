"""Real OpenSSH servers for the tests: several sshd on loopback ports, or in network namespaces.

Facts this relies on are in ../shared/REAL-SERVERS.md. Every host gets its own ed25519 host
key; all accept one client key for the test user ``benchtui-test`` (login shell /bin/sh, so
no ~/.bashrc runs); a known_hosts file lists every host. The fixtures that use this module are
in tests/conftest_ssh.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchtui.transport.base import RunHandle, Transport
from benchtui.transport.lines import LineSplitter
from benchtui.transport.sshtarget import SshTarget, host_pattern

SSHD = "/usr/sbin/sshd"
#: The user the tests log in as; one per pytest-xdist worker, so that workers running at once
#: never see each other's runs (``~/.cache/benchtui/runs``) as leftovers of an earlier session.
#: ``BENCHTUI_TEST_TAG`` (letters and digits) sets another user apart for each checkout whose
#: suite runs at the same time on one machine (git worktrees of parallel branches).
TEST_USER = "benchtui-test" + "".join(
    f"-{part}" for part in (os.environ.get("BENCHTUI_TEST_TAG", ""),
                            os.environ.get("PYTEST_XDIST_WORKER", "")) if part)
#: The network the namespace hosts live in; owned by these tests, nothing else uses it.
NETNS_PREFIX = "10.213.0"
NETNS_BRIDGE = "btbr0"
NETNS_LOCK = Path(tempfile.gettempdir()) / "benchtui-netns.lock"


def sshd_unavailable() -> str:
    """Why real sshd hosts cannot be started here ("" when they can)."""
    if os.geteuid() != 0:
        return "real sshd hosts need root (to add the test user and run sshd)"
    for tool in (SSHD, shutil.which("ssh-keygen")):
        if not tool or not os.access(tool, os.X_OK):
            return "openssh-server/openssh-client are not installed (scripts/setup test)"
    return ""


def ensure_test_user() -> pwd.struct_passwd:
    """The test user, created once (``/bin/sh``, a home, a usable but password-less login)."""
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/sh", TEST_USER], check=True)
        subprocess.run(["usermod", "-p", "*", TEST_USER], check=True)
        return pwd.getpwnam(TEST_USER)


def keygen(path: Path, comment: str) -> str:
    """Make an ed25519 key pair at ``path``; return the public line's "type base64"."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment,
                    "-f", str(path)], check=True)
    return " ".join(path.with_suffix(".pub").read_text().split()[:2])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class SshdHost:
    """One running sshd and what a client needs to reach it."""

    name: str
    address: str
    port: int
    user: str
    identity: str
    known_hosts: str
    host_key: str  # "ssh-ed25519 AAAA..."
    directory: Path
    process: subprocess.Popen[bytes]
    netns: str | None = None

    def target(self, **changes: Any) -> SshTarget:
        """An ``SshTarget`` for this host (short timeouts for tests), with ``changes``."""
        base = SshTarget(host=self.address, port=self.port, user=self.user,
                         identity=self.identity, known_hosts=self.known_hosts,
                         connect_timeout=3.0)
        return replace(base, **changes)

    @property
    def known_hosts_line(self) -> str:
        return f"{host_pattern(self.address, self.port)} {self.host_key}"


class SshdFleet:
    """Starts sshd hosts sharing one client key and one known_hosts file; ``close`` ends
    them all and removes their files."""

    def __init__(self) -> None:
        self.user = ensure_test_user()
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)
        self.directory = Path(tempfile.mkdtemp(prefix="benchtui-sshd-"))
        self.directory.chmod(0o755)  # sshd reads authorized_keys as the test user
        self.identity = self.directory / "client_key"
        client_key = keygen(self.identity, "benchtui-test-client")
        self.authorized_keys = self.directory / "authorized_keys"
        self.authorized_keys.write_text(client_key + "\n")
        self.authorized_keys.chmod(0o644)
        self.known_hosts = self.directory / "known_hosts"
        self.known_hosts.write_text("")
        self.hosts: list[SshdHost] = []

    def start(self, name: str, address: str = "127.0.0.1", port: int | None = None,
              netns: str | None = None) -> SshdHost:
        port = port or free_port()
        hostdir = self.directory / name
        hostdir.mkdir()
        hostdir.chmod(0o755)
        host_key = keygen(hostdir / "host_key", f"benchtui-test-{name}")
        config = hostdir / "sshd_config"
        config.write_text("\n".join([
            f"Port {port}", f"ListenAddress {address}", f"HostKey {hostdir / 'host_key'}",
            f"PidFile {hostdir / 'sshd.pid'}", f"AuthorizedKeysFile {self.authorized_keys}",
            "StrictModes no", "UsePAM no", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "PubkeyAuthentication yes", "UseDNS no",
            "PermitRootLogin no", f"AllowUsers {TEST_USER}", "MaxSessions 50",
            "MaxStartups 200", "AllowTcpForwarding yes", "LogLevel ERROR", "",
        ]))
        argv = [SSHD, "-D", "-e", "-f", str(config)]
        if netns:
            argv = ["ip", "netns", "exec", netns, *argv]
        log = (hostdir / "sshd.log").open("wb")
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
        log.close()
        host = SshdHost(name, address, port, TEST_USER, str(self.identity),
                        str(self.known_hosts), host_key, hostdir, process, netns)
        self.hosts.append(host)
        with self.known_hosts.open("a") as stream:
            stream.write(host.known_hosts_line + "\n")
        wait_for_port(address, port, process, hostdir / "sshd.log")
        return host

    def close(self) -> None:
        for host in self.hosts:
            stop_process(host.process)
        self.hosts.clear()
        shutil.rmtree(self.directory, ignore_errors=True)


def wait_for_port(address: str, port: int, process: subprocess.Popen[bytes], log: Path,
                  timeout: float = 5.0) -> None:
    """Return once ``address:port`` accepts connections; fail with sshd's log otherwise."""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited ({process.returncode}): {log.read_text()}")
        with contextlib.suppress(OSError), socket.create_connection((address, port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError(f"sshd on {address}:{port} not ready in {timeout} s: {log.read_text()}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(3)


def kill_sessions(host: SshdHost) -> int:
    """Kill the per-connection sshd processes of ``host`` (its listener stays): every
    client connection to it drops at once, as when a network path dies. Returns how many
    processes were killed."""
    import psutil

    listener = psutil.Process(host.process.pid)
    if host.netns:  # `ip netns exec` may have forked: the listener is then its child
        children = listener.children()
        listener = children[0] if children and listener.name() != "sshd" else listener
    # Both the privileged monitor and its unprivileged child hold the socket: kill both.
    sessions = [p for p in listener.children(recursive=True) if p.name() == "sshd"]
    for session in sessions:
        with contextlib.suppress(psutil.NoSuchProcess):
            session.kill()
    return len(sessions)


async def follow_dropping(transport: Transport, handle: RunHandle, host: SshdHost,
                          every: int, times: int = 2) -> tuple[bytes, int]:
    """Follow ``handle`` to its end, dropping every connection to ``host``
    (``kill_sessions``) each time the output passes another ``every`` bytes, ``times``
    times: (the bytes followed, the drops made). The chunks go through a ``LineSplitter``,
    which refuses bytes lost or repeated."""
    splitter = LineSplitter()
    data = bytearray()
    drops = 0
    async for chunk in transport.follow(handle):
        splitter.feed(chunk)
        data += chunk.data
        if drops < times and chunk.offset >= every * (drops + 1):
            assert kill_sessions(host) >= 1
            drops += 1
    return bytes(data), drops


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def netns_unavailable() -> str:
    """Why network namespaces cannot be made here ("" when they can)."""
    if sshd_unavailable():
        return sshd_unavailable()
    if not shutil.which("ip"):
        return "iproute2 is not installed"
    probe = f"bt-probe-{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns is not permitted here: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return ""


class NetnsLab:
    """Hosts in network namespaces ``bt-h1``..., each with a veth ``veth-hN`` into the bridge
    ``btbr0`` and the address 10.213.0.(10+N), running its own sshd on port 22. One test run
    at a time holds it (a lock file); ``cut``/``restore`` take a host's link down and up."""

    def __init__(self, fleet: SshdFleet, count: int) -> None:
        self._lock = NETNS_LOCK.open("w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.fleet = fleet
        self.names = [f"h{i}" for i in range(1, count + 1)]
        self.hosts: list[SshdHost] = []
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self) -> None:
        self._remove_all()
        _ip("link", "add", NETNS_BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{NETNS_PREFIX}.1/24", "dev", NETNS_BRIDGE)
        _ip("link", "set", NETNS_BRIDGE, "up")
        for index, name in enumerate(self.names, start=1):
            netns, veth, peer = f"bt-{name}", f"veth-{name}", f"vp-{name}"
            address = f"{NETNS_PREFIX}.{10 + index}"
            _ip("netns", "add", netns)
            _ip("link", "add", veth, "type", "veth", "peer", "name", peer)
            _ip("link", "set", peer, "netns", netns)
            _ip("-n", netns, "link", "set", peer, "name", "eth0")
            _ip("-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", netns, "link", "set", "eth0", "up")
            _ip("-n", netns, "link", "set", "lo", "up")
            _ip("link", "set", veth, "master", NETNS_BRIDGE)
            _ip("link", "set", veth, "up")
            self.hosts.append(self.fleet.start(f"ns-{name}", address, 22, netns=netns))

    def cut(self, host: SshdHost) -> None:
        _ip("link", "set", f"veth-{host.name.removeprefix('ns-')}", "down")

    def restore(self, host: SshdHost) -> None:
        _ip("link", "set", f"veth-{host.name.removeprefix('ns-')}", "up")

    def close(self) -> None:
        for host in self.hosts:
            stop_process(host.process)
        self._remove_all()
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()

    def _remove_all(self) -> None:
        """Delete this lab's namespaces and bridge (also those a crashed run left)."""
        listed = _ip("netns", "list", check=False).stdout.split()
        for name in self.names:
            if f"bt-{name}" in listed:
                for pid in _ip("netns", "pids", f"bt-{name}", check=False).stdout.split():
                    with contextlib.suppress(ProcessLookupError, ValueError):
                        os.kill(int(pid), signal.SIGKILL)
                _ip("netns", "del", f"bt-{name}", check=False)
            _ip("link", "del", f"veth-{name}", check=False)
        _ip("link", "del", NETNS_BRIDGE, check=False)
