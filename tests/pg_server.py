"""A real PostgreSQL server for the history catalog's tests: Debian's ``postgresql``
binaries, a new cluster in a temporary directory (initdb, trust authentication), on a free
port of 127.0.0.1, run as the ``postgres`` user when the tests run as root; stopped and
removed at the end."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
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


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yield its URL (``postgresql://postgres@127.0.0.1:PORT/postgres``)."""
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
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                  "stop"]), capture_output=True, timeout=60, check=False)
        shutil.rmtree(top, ignore_errors=True)
