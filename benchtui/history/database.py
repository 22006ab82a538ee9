"""An open catalog (``catalog.open_catalog``): queries and transactions on its connection.

``Catalog`` is a thin layer over the two DB-API drivers: SQL is written once with ``?``
placeholders and turned into ``%s`` for psycopg. Every failure to open or talk to the
catalog is a ``CatalogError``: one sentence naming the catalog, exit status 1.

Writes are transactions, whole or not at all (``transaction``, ``write``): SQLite's take the
write lock at their start (``BEGIN IMMEDIATE``): a writer waits for the lock there,
rather than failing halfway when another wrote since it read (SQLite cannot wait to turn a
read into a write); a lock another writer holds is waited for, said, and tried again for
a bounded time (``connect.Waits``). On PostgreSQL every call is
also bounded from this side (``connect.Watchdog``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import Any, TypeVar

from benchtui.history.connect import Waits, Watchdog
from benchtui.history.dberrors import (
    BUSY,
    LOST,
    TIMEOUT,
    CatalogError,
    is_db_error,
    postgres_meaning,
    sqlite_meaning,
)

__all__ = ["POSTGRESQL", "SQLITE", "Catalog", "CatalogError", "describe_url"]

SQLITE, POSTGRESQL = "sqlite", "postgresql"
T = TypeVar("T")


def describe_url(url: str) -> str:
    """The URL as said to a user: a PostgreSQL URL without its password."""
    if "://" in url and "@" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}@{host}"
    return url


class _RolledBack(Exception):
    """``check_writable``'s write, undone on purpose."""


def _quiet(_text: str) -> None:
    pass


class Catalog:
    """An open catalog (``open_catalog``). Use as a context manager or call ``close``."""

    def __init__(self, url: str, kind: str, conn: Any, *, waits: Waits | None = None,
                 watchdog: Watchdog | None = None) -> None:
        self.url = url
        self.name = describe_url(url)
        self.kind = kind
        self.conn = conn
        self.waits = waits or Waits()
        self._watchdog = watchdog
        #: Where the catalog says what it waits for or did on its own (a sentence each).
        self.say: Callable[[str], None] = _quiet
        #: The schema version the catalog has (``migrate.prepare``).
        self.version: int | None = None
        self._broken: CatalogError | None = None
        self._committing = False

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.close()
        with suppress(Exception):  # a broken connection: nothing to tell
            self.conn.close()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.kind == POSTGRESQL else sql

    def _bound(self) -> AbstractContextManager[None]:
        if self._watchdog is None:
            return nullcontext()
        return self._watchdog.bound(self.waits.statement)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        if self._broken is not None:
            raise self._broken
        try:
            with self._bound():
                yield
        except CatalogError:
            raise
        except Exception as exc:
            if not is_db_error(exc):
                raise
            raise self._error_of(exc) from None

    def _error_of(self, exc: Exception) -> CatalogError:
        """The CatalogError a driver's error means."""
        if self.kind == POSTGRESQL:
            expired = self._watchdog is not None and self._watchdog.expired
            m = postgres_meaning(exc, self.waits.statement, expired, self._committing)
        else:
            m = sqlite_meaning(exc, self.name)
        error = CatalogError(self.name, m.reason, m.hint, m.kind, m.in_doubt)
        if self.kind == POSTGRESQL and (m.kind == LOST or (m.kind == TIMEOUT and expired)):
            self._broken = error  # the connection is gone: every later call says so
        return error

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._errors():
            cur = self.conn.cursor()
            cur.execute(self._sql(sql), tuple(params))
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

    def iterate(self, sql: str, params: Sequence[object] = (), *, size: int = 2000
                ) -> Iterator[tuple[Any, ...]]:
        """The rows of a query, ``size`` at a time (a whole catalog's points, read once)."""
        with self._errors():
            cur = self.conn.cursor()
            cur.execute(self._sql(sql), tuple(params))
        while True:
            with self._errors():
                chunk = cur.fetchmany(size)
            if not chunk:
                return
            yield from (tuple(r) for r in chunk)

    def table(self, sql: str, params: Sequence[object] = ()
              ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The column names and rows of a query."""
        with self._errors():
            cur = self.conn.cursor()
            cur.execute(self._sql(sql), tuple(params))
            names = [str(d[0]) for d in cur.description or ()]
            return names, [tuple(r) for r in cur.fetchall()]

    def one(self, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        with self._errors():
            self.conn.cursor().execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, seq: Sequence[Sequence[object]]) -> None:
        if not seq:
            return
        with self._errors():
            self.conn.cursor().executemany(self._sql(sql), [tuple(p) for p in seq])

    def commit(self) -> None:
        self._committing = True
        try:
            with self._errors():
                self.conn.commit()
        finally:
            self._committing = False

    def rollback(self) -> None:
        with self._errors():
            self.conn.rollback()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """What is written inside is committed whole at the end, or rolled back whole on
        any error. SQLite takes the write lock at once (``BEGIN IMMEDIATE``)."""
        with self._errors():  # ends a read transaction (PostgreSQL opens one at any read)
            self.conn.commit()
        if self.kind == SQLITE:
            self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with suppress(Exception):
                self.conn.rollback()
            raise
        self.commit()

    def write(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction (``transaction``). A lock another writer holds is
        waited for (``Waits.lock``), said once, and ``work`` tried again until
        ``Waits.retry`` seconds have passed; then a CatalogError (nothing written)."""
        start = time.monotonic()
        pause, said = 0.05, False
        while True:
            try:
                with self.transaction():
                    return work()
            except CatalogError as exc:
                waited = time.monotonic() - start
                if exc.kind != BUSY:
                    raise
                if waited >= self.waits.retry:
                    raise CatalogError(
                        self.name, f"still locked by another writer after {waited:.0f} s; "
                        "nothing was written", "BENCHTUI_CATALOG_RETRY sets how long to keep "
                        "trying", BUSY) from None
                if not said:
                    self.say(f"history catalog {self.name}: {exc.reason}; trying again for "
                             f"up to {self.waits.retry:g} s")
                    said = True
                time.sleep(min(pause * random.uniform(0.5, 1.5), self.waits.retry - waited))
                pause = min(pause * 2, 1.0)

    def check_writable(self) -> None:
        """CatalogError unless this process can write the catalog now: a write is tried and
        rolled back (nothing is kept)."""
        with suppress(_RolledBack):
            self.write(self._probe)

    def _probe(self) -> None:
        self.execute("UPDATE catalog_meta SET value = value WHERE key = 'schema'")
        raise _RolledBack

    def lock_schema(self) -> None:
        """Inside a transaction: no other process makes or upgrades the catalog's tables
        until it ends (SQLite's write lock does it already)."""
        if self.kind == POSTGRESQL:
            self.execute("SELECT pg_advisory_xact_lock(7262393614736452)")
