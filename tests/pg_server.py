"""A real PostgreSQL server for the history catalog's tests: Debian's ``postgresql``
binaries, a new cluster in a temporary directory (initdb, trust authentication), on a free
port of 127.0.0.1, run as the ``postgres`` user when the tests run as root; stopped and
removed at the end. ``postgres_cluster`` also gives the server's processes, to freeze
(SIGSTOP) or stop them as a test's failure."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


@dataclass(frozen=True)
class PgServer:
    url: str
    data: Path

    def pids(self) -> list[int]:
        """The postmaster and every process it started (the backends included)."""
        main = int((self.data / "postmaster.pid").read_text().split()[0])
        out = [main]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == main:
                    out.append(int(stat.parent.name))
        return out

    def signal(self, sig: signal.Signals) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yield its URL (``postgresql://postgres@127.0.0.1:PORT/postgres``)."""
    with postgres_cluster() as server:
        yield server.url


@contextlib.contextmanager
def postgres_cluster() -> Iterator[PgServer]:
    """Start a server; yield it. Stopped (and thawed, if frozen) at the end."""
    bindir = _bindir()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("postgresql is not installed; scripts/setup test installs it as root")
        pytest.skip("postgresql is not installed (scripts/setup test installs it as root)")
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("no postgres user to run the server as")
    top = Path(tempfile.mkdtemp(prefix="benchtui-pg-"))
    data, sock = top / "data", top / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        for p in (top, sock):
            os.chown(p, owner.pw_uid, owner.pw_gid)
    port = free_port()
    try:
        subprocess.run(_as_owner([str(bindir / "initdb"), "-D", str(data), "-U", "postgres",
                                  "--auth=trust", "-E", "UTF8", "--no-sync"]),
                       check=True, capture_output=True, timeout=120)
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-l",
                                  str(top / "log"), "-w", "-t", "60", "-o",
                                  f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 "
                                  "-c fsync=off", "start"]),
                       check=True, capture_output=True, timeout=90)
        server = PgServer(f"postgresql://postgres@127.0.0.1:{port}/postgres", data)
        try:
            yield server
        finally:
            server.signal(signal.SIGCONT)
    finally:
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                  "stop"]), capture_output=True, timeout=60, check=False)
        shutil.rmtree(top, ignore_errors=True)
