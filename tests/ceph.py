"""A real single-node Ceph for the tests: one mon, one mgr, one bluestore OSD on 127.0.0.1.

Booted by hand, without systemd or cephadm, in a fresh temporary directory that holds
everything: its ``ceph.conf``, keyrings, monmap, the daemons' data, logs, sockets and the OSD's
block file (sparse, 10 GiB). Facts this relies on are in ../shared/REAL-SERVERS.md
("A single-node Ceph"). The fixture that uses it is in tests/conftest_ceph.py.

Once started, ``rados -c CONF ...`` and ``rbd -c CONF ...`` work for anyone who can read the
directory: the conf names the admin keyring (``[client.admin] keyring``; a ``[global]``
keyring would make the mgr and the OSD read it and fail). The cluster has pool ``test``
(rados bench) and pool ``rbd`` with the 1 GiB image ``rbd/bench``.

Every ``ceph`` CLI call is bounded by ``timeout``: the CLI waits forever when it cannot
authenticate.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

#: The programs the cluster needs (Debian package ``ceph``, which pulls in ``ceph-common``).
PROGRAMS = ("ceph", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-authtool", "monmaptool",
            "rados", "rbd")
#: The bound on every ``ceph``/``rbd`` CLI call that changes the cluster (seconds; on a loaded
#: machine the CLI may take several seconds to exit after it has done its work).
CLI_TIMEOUT = 30
#: The bound on each ``ceph -s`` while waiting for the cluster to become healthy.
STATUS_TIMEOUT = 10
#: How long the cluster may take to become healthy (seconds; ~20 s is usual).
BOOT_TIMEOUT = 120.0
#: Seconds between SIGTERM and SIGKILL of a daemon in ``close``.
STOP_GRACE = 10.0

_PR_SET_PDEATHSIG = 1

POOL = "test"
RBD_POOL = "rbd"
RBD_IMAGE = "rbd/bench"

_CONF = """\
[global]
fsid = {fsid}
mon initial members = a
mon host = [v2:127.0.0.1:{v2},v1:127.0.0.1:{v1}]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
run dir = {d}/run
admin socket = {d}/run/$name.asok
pid file = {d}/run/$name.pid
log file = {d}/log/$name.log
crash dir = {d}/crash

[mon]
mon data = {d}/mon.$id
keyring = {d}/mon.$id/keyring

[mgr]
mgr data = {d}/mgr.$id
keyring = {d}/mgr.$id/keyring

[osd]
osd data = {d}/osd.$id
keyring = {d}/osd.$id/keyring
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 10737418240
osd memory target = 1073741824

[client.admin]
keyring = {d}/admin.keyring
"""


def ceph_unavailable() -> str:
    """Why a single-node Ceph cannot be started here ("" when it can)."""
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    if missing:
        return (f"Ceph is not installed ({', '.join(missing)} missing): "
                "apt-get install ceph (scripts/setup test installs it)")
    return ""


def _die_with_parent() -> None:
    """In the daemon, before exec: be killed when the test process dies (even by SIGKILL),
    so that no daemon outlives an interrupted test run."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CephError(RuntimeError):
    """A step of the boot failed; the message says which and carries the tool's output."""


class SingleNodeCeph:
    """One mon (``a``), one mgr (``x``), one OSD (``0``), all on 127.0.0.1.

    ``start()`` boots it and waits until it is HEALTH_OK with every PG active+clean, then
    creates the pools and the image; ``close()`` stops the daemons and removes the directory.
    Use it as a context manager, or call both.
    """

    def __init__(self, parent: str | None = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="benchtui-ceph-", dir=parent))
        self.fsid = str(uuid.uuid4())
        self.mon_ports = (_free_port(), _free_port())  # (v2, v1)
        #: The cluster's ceph.conf: give it as ``-c CONF`` (or ``CEPH_CONF=CONF``).
        self.conf = self.directory / "ceph.conf"
        #: The client.admin keyring (the conf already names it).
        self.keyring = self.directory / "admin.keyring"
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}
        #: Seconds ``start`` took, and what it took ``close`` to stop the daemons.
        self.boot_seconds: float | None = None
        self.stop_seconds: float | None = None

    def __enter__(self) -> SingleNodeCeph:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- running the tools -----------------------------------------------------------------

    def _run(self, argv: list[str], what: str, timeout: float = 60) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 5,
                              check=False, cwd=self.directory)
        if done.returncode != 0:
            raise CephError(f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n"
                            f"{done.stdout}{done.stderr}".rstrip())
        return done.stdout

    def ceph(self, *args: str, timeout: int = CLI_TIMEOUT) -> str:
        """``ceph -c CONF ARGS`` bounded by ``timeout``; its stdout (CephError on failure)."""
        return self._run(["timeout", str(timeout), "ceph", "-c", str(self.conf), *args],
                         f"ceph {' '.join(args)}", timeout)

    def status(self) -> dict[str, object]:
        """``ceph -s --format json``."""
        data: dict[str, object] = json.loads(self.ceph("-s", "--format", "json",
                                                       timeout=STATUS_TIMEOUT))
        return data

    def client_argv(self, program: str, *args: str) -> list[str]:
        """``PROGRAM -c CONF ARGS`` for ``rados`` or ``rbd``."""
        return [program, "-c", str(self.conf), *args]

    def _daemon(self, name: str, argv: list[str]) -> None:
        log = (self.directory / "log" / f"{name}.out").open("wb")
        with log:
            self.daemons[name] = subprocess.Popen(
                [*argv, "-c", str(self.conf), "-f"], stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, cwd=self.directory, start_new_session=True,
                preexec_fn=_die_with_parent)  # noqa: PLW1509 - only prctl, no locks

    # --- boot --------------------------------------------------------------------------------

    def start(self) -> None:
        """Boot the cluster, wait until it is healthy, create the pools and the image."""
        started = time.monotonic()
        d = self.directory
        for sub in ("run", "log", "crash", "mgr.x"):
            (d / sub).mkdir()
        d.chmod(0o755)
        v2, v1 = self.mon_ports
        self.conf.write_text(_CONF.format(fsid=self.fsid, v2=v2, v1=v1, d=d))
        mon_keyring = d / "mon.keyring"
        authtool = "ceph-authtool"
        self._run([authtool, "--create-keyring", str(mon_keyring), "--gen-key", "-n", "mon.",
                   "--cap", "mon", "allow *"], "creating the mon. key")
        self._run([authtool, "--create-keyring", str(self.keyring), "--gen-key", "-n",
                   "client.admin", "--cap", "mon", "allow *", "--cap", "osd", "allow *",
                   "--cap", "mds", "allow *", "--cap", "mgr", "allow *"],
                  "creating the client.admin key")
        self.keyring.chmod(0o644)
        self._run([authtool, str(mon_keyring), "--import-keyring", str(self.keyring)],
                  "adding client.admin to the mon keyring")
        monmap = d / "monmap"
        self._run(["monmaptool", "--create", "--fsid", self.fsid, "--addv", "a",
                   f"[v2:127.0.0.1:{v2},v1:127.0.0.1:{v1}]", str(monmap)], "creating the monmap")
        self._run(["ceph-mon", "-c", str(self.conf), "--mkfs", "-i", "a", "--monmap",
                   str(monmap), "--keyring", str(mon_keyring)], "ceph-mon --mkfs")
        self._daemon("mon.a", ["ceph-mon", "-i", "a"])
        self.ceph("auth", "get-or-create", "mgr.x", "mon", "allow profile mgr", "osd", "allow *",
                  "mds", "allow *", "-o", str(d / "mgr.x" / "keyring"))
        self._daemon("mgr.x", ["ceph-mgr", "-i", "x"])
        self._start_osd()
        self._wait_healthy(BOOT_TIMEOUT - (time.monotonic() - started))
        self._create_pools()
        self.boot_seconds = time.monotonic() - started

    def _start_osd(self) -> None:
        osd_uuid = str(uuid.uuid4())
        osd_id = self.ceph("osd", "new", osd_uuid).strip()
        data = self.directory / f"osd.{osd_id}"
        data.mkdir()
        self._run(["ceph-osd", "-c", str(self.conf), "-i", osd_id, "--mkfs", "--mkkey",
                   "--osd-uuid", osd_uuid, "--no-mon-config"], "ceph-osd --mkfs", timeout=120)
        self.ceph("auth", "add", f"osd.{osd_id}", "osd", "allow *", "mon", "allow profile osd",
                  "mgr", "allow profile osd", "-i", str(data / "keyring"))
        self._daemon(f"osd.{osd_id}", ["ceph-osd", "-i", osd_id])

    def _create_pools(self) -> None:
        self.ceph("osd", "pool", "create", POOL, "32", "32")
        self.ceph("osd", "pool", "application", "enable", POOL, "rados")
        self.ceph("osd", "pool", "create", RBD_POOL, "16", "16")
        self._run(["timeout", str(CLI_TIMEOUT), *self.client_argv("rbd", "pool", "init",
                                                                  RBD_POOL)], "rbd pool init")
        self._run(["timeout", str(CLI_TIMEOUT), *self.client_argv(
            "rbd", "create", RBD_IMAGE, "--size", "1G")], "rbd create")
        self._wait_healthy(60.0)

    def _wait_healthy(self, timeout: float) -> None:
        """Until HEALTH_OK with an OSD up and in and every PG active+clean."""
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while True:
            self._check_daemons()
            try:
                status = self.status()
            except (CephError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
                last = str(exc)
            else:
                ok, last = _healthy(status)
                if ok:
                    return
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}\n{self.log_tail(n, 600)}" for n in self.daemons)
                raise CephError(f"the cluster in {self.directory} did not become healthy in "
                                f"{timeout:.0f} s: {last}\n{logs}")
            time.sleep(0.5)

    def _check_daemons(self) -> None:
        for name, proc in self.daemons.items():
            if proc.poll() is not None:
                raise CephError(f"{name} exited with status {proc.returncode}:\n"
                                f"{self.log_tail(name)}")

    def log_tail(self, name: str, size: int = 1500) -> str:
        """The end of a daemon's output and log (``mon.a``, ``mgr.x``, ``osd.0``)."""
        parts = []
        for suffix in ("out", "log"):
            log = self.directory / "log" / f"{name}.{suffix}"
            if log.exists():
                with log.open("rb") as f:
                    f.seek(max(0, log.stat().st_size - size))
                    parts.append(f.read().decode(errors="replace"))
        return "\n".join(parts)

    # --- teardown ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the daemons one after the other, OSD first and mon last (SIGTERM, then SIGKILL
        after ``STOP_GRACE`` seconds), and remove the directory. In that order it takes under
        a second: an OSD stopped together with the mon waits 5 s for the mon to hear that it
        is going down."""
        started = time.monotonic()
        order = sorted(self.daemons, key=lambda n: ("osd", "mgr", "mon").index(n.split(".")[0]))
        for name in order:
            proc = self.daemons[name]
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.daemons.clear()
        self.stop_seconds = time.monotonic() - started
        shutil.rmtree(self.directory, ignore_errors=True)


def _healthy(status: dict[str, object]) -> tuple[bool, str]:
    """(healthy?, what is still missing) from ``ceph -s --format json``."""
    health = status.get("health")
    health_status = health.get("status") if isinstance(health, dict) else None
    osdmap = status.get("osdmap")
    osds = osdmap if isinstance(osdmap, dict) else {}
    osds = osds.get("osdmap", osds)  # nested before Pacific
    pgmap = status.get("pgmap")
    pgs = pgmap if isinstance(pgmap, dict) else {}
    total = int(pgs.get("num_pgs", 0))
    clean = sum(int(entry.get("count", 0)) for entry in pgs.get("pgs_by_state", [])
                if entry.get("state_name") == "active+clean")
    up, in_ = int(osds.get("num_up_osds", 0)), int(osds.get("num_in_osds", 0))
    checks = health.get("checks", {}) if isinstance(health, dict) else {}
    why = (f"{health_status}, {up} OSD up, {in_} in, {clean}/{total} PGs active+clean"
           + (f", checks: {', '.join(checks)}" if checks else ""))
    return health_status == "HEALTH_OK" and up >= 1 and in_ >= 1 and clean == total, why
