"""The catalog's connections and how long each wait on them may last.

Every wait on the catalog is bounded (docs/history.md, "Waits"), by an environment
variable each (seconds):

- ``BENCHTUI_CATALOG_CONNECT_TIMEOUT`` (10): reaching a PostgreSQL server (the URL's own
  ``connect_timeout=`` wins);
- ``BENCHTUI_CATALOG_STATEMENT_TIMEOUT`` (60): one statement on PostgreSQL: the server's
  ``statement_timeout``, and this side's own deadline for a server that stopped answering
  altogether (frozen, or its network gone without a word), which cannot enforce its own;
- ``BENCHTUI_CATALOG_LOCK_TIMEOUT`` (5): one wait for a lock another writer holds
  (SQLite's busy wait, PostgreSQL's ``lock_timeout``), after which it is said;
- ``BENCHTUI_CATALOG_RETRY`` (60): how long a write that met such a lock is tried again
  before it is given up.

This side's deadline (``Watchdog``): psycopg waits on the connection's socket with no
limit, and a stopped server's kernel still accepts what is sent to it, so neither TCP nor
the server ends the wait. A thread shuts the socket down when the deadline passes: the
blocked read returns, psycopg raises, and the catalog says the server did not answer. The
transaction the server was in is never committed (it is written whole or not at all).
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from benchtui.errors import UsageError

#: environment variable -> Waits field
_VARIABLES = {"BENCHTUI_CATALOG_CONNECT_TIMEOUT": "connect",
              "BENCHTUI_CATALOG_STATEMENT_TIMEOUT": "statement",
              "BENCHTUI_CATALOG_LOCK_TIMEOUT": "lock",
              "BENCHTUI_CATALOG_RETRY": "retry"}


@dataclass(frozen=True, slots=True)
class Waits:
    """How long each wait on the catalog may last, in seconds (the module's docstring)."""

    connect: float = 10.0
    statement: float = 60.0
    lock: float = 5.0
    retry: float = 60.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Waits:
        """The defaults, changed by the ``BENCHTUI_CATALOG_*`` variables set; UsageError
        for a value that is not a number of seconds above 0."""
        env = os.environ if environ is None else environ
        given: dict[str, float] = {}
        for name, field in _VARIABLES.items():
            text = env.get(name)
            if text is None or not text.strip():
                continue
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not (math.isfinite(value) and 0 < value <= 86400):
                raise UsageError(f"{name} must be a number of seconds above 0 (at most "
                                 f"86400), not {text!r}")
            given[field] = value
        return cls(**given)


class Watchdog:
    """This side's deadline on a PostgreSQL connection (the module's docstring): ``bound``
    around each call; when it passes, the socket is shut down and ``expired`` is set. One
    thread per connection, started at the first call."""

    def __init__(self, fileno: int) -> None:
        self._fileno = fileno
        self._cond = threading.Condition()
        self._due: float | None = None
        self._closed = False
        self._thread: threading.Thread | None = None
        #: The deadline passed: the connection is gone.
        self.expired = False

    @contextmanager
    def bound(self, seconds: float) -> Iterator[None]:
        with self._cond:
            self._due = time.monotonic() + seconds
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="catalog-deadline",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._due = None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if self._due is None:
                    self._cond.wait()
                    continue
                left = self._due - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._due = None
                self.expired = True
                self._shut()

    def _shut(self) -> None:
        with suppress(OSError):
            sock = socket.socket(fileno=os.dup(self._fileno))
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.close()


def sqlite_connect(path: Path, waits: Waits, mode: str) -> sqlite3.Connection:
    """The SQLite file at ``path``: ``mode`` ``rwc`` makes it when there is none, ``rw``
    never makes a file, ``ro`` never writes. Nothing is read yet: SQLite reads the file at
    the first statement. On a file system mounted read-only the file is opened as
    immutable: no one can change it there, and a catalog in WAL mode could not be read
    otherwise (SQLite would have to make its ``-shm`` file beside it)."""
    uri = f"file:{quote(str(path.absolute()))}?mode={mode}"
    if mode != "rwc" and read_only_fs(path):
        uri = f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True, timeout=waits.lock)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


#: Less room than this on a catalog's file system is a full disk (SQLite needs pages for its
#: journal and 32 KiB for its -shm file, at once).
FULL_BELOW = 1 << 20


def disk_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.absolute().parent).free < FULL_BELOW
    except OSError:
        return False


def why_read_only(path: Path) -> str:
    """Why SQLite cannot write the catalog at ``path``, as far as this side can tell."""
    if read_only_fs(path):
        return "its file system is mounted read-only"
    if path.exists() and not os.access(path, os.W_OK):
        return "this user may not write the file"
    if not os.access(path.parent, os.W_OK):
        return (f"this user may not write its directory, where SQLite makes {path.name}-wal "
                f"and {path.name}-shm")
    return "SQLite refused to write it"


def postgres_connect(url: str, waits: Waits) -> Any:
    """A psycopg connection with the server-side timeouts set (the URL's own parameters
    win). psycopg errors propagate."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    given = conninfo_to_dict(url)
    ms = {"statement_timeout": int(waits.statement * 1000),
          "lock_timeout": int(waits.lock * 1000)}
    ours = " ".join(f"-c {k}={v}" for k, v in ms.items())
    options = f"{ours} {given['options']}" if given.get("options") else ours
    kwargs: dict[str, Any] = {"options": options}
    if "connect_timeout" not in given:
        kwargs["connect_timeout"] = max(1, math.ceil(waits.connect))
    return psycopg.connect(url, **kwargs)
