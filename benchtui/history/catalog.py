"""The catalog: a SQLite file (default, in the user's data directory) or a PostgreSQL
database (``postgresql://...``) holding the same tables (``schema.py``, docs/history.md).

``Catalog`` is a thin layer over the two DB-API drivers: SQL is written once with ``?``
placeholders and turned into ``%s`` for psycopg. Every failure to open or talk to the
catalog is a ``CatalogError``: one sentence naming the catalog, exit status 1.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchtui.errors import BenchtuiError
from benchtui.history import schema

SQLITE, POSTGRESQL = "sqlite", "postgresql"


@dataclass
class CatalogError(BenchtuiError):
    """The catalog cannot be opened, read or written."""

    catalog: str
    reason: str
    hint: str = ""
    exit_code = 1

    def __str__(self) -> str:
        text = f"history catalog {self.catalog}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


def default_path() -> Path:
    """``$XDG_DATA_HOME/benchtui/history.sqlite`` (``~/.local/share/...`` by default)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "benchtui" / "history.sqlite"


def describe_url(url: str) -> str:
    """The URL as said to a user: a PostgreSQL URL without its password."""
    if "://" in url and "@" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}@{host}"
    return url


class Catalog:
    """An open catalog (``open_catalog``). Use as a context manager or call ``close``."""

    def __init__(self, url: str, kind: str, conn: Any) -> None:
        self.url = url
        self.name = describe_url(url)
        self.kind = kind
        self.conn = conn

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a broken connection: nothing to tell
            self.conn.close()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.kind == POSTGRESQL else sql

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except CatalogError:
            raise
        except Exception as exc:
            if not _is_db_error(exc):
                raise
            raise CatalogError(self.name, _first_line(exc)) from None

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._errors():
            cur = self.conn.cursor()
            cur.execute(self._sql(sql), tuple(params))
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

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
        with self._errors():
            self.conn.commit()

    def rollback(self) -> None:
        with self._errors():
            self.conn.rollback()

    def _version(self) -> str | None:
        """The schema version the catalog says it has (None: a new or foreign database)."""
        try:
            cur = self.conn.cursor()
            cur.execute("SELECT value FROM catalog_meta WHERE key = 'schema'")
            row = cur.fetchone()
        except Exception as exc:
            if not _is_db_error(exc):
                raise
            self.conn.rollback()  # PostgreSQL: the failed statement aborted the transaction
            return None
        self.conn.commit()
        return str(row[0]) if row else None

    def create(self) -> None:
        """The tables, indexes and views, unless the catalog already has this version's
        (then nothing is run: many machines may open a team's catalog at once)."""
        if self._version() == str(schema.VERSION):
            return
        with self._errors():
            cur = self.conn.cursor()
            for stmt in schema.statements(self.kind):
                cur.execute(stmt)
            self.conn.commit()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _is_db_error(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.Error)


def open_catalog(url: str | None = None, *, create: bool = True) -> Catalog:
    """The catalog at ``url``: None or a path (SQLite; the default file is made with its
    directory), ``sqlite:///PATH``, or ``postgresql://USER@HOST:PORT/DB``. With ``create``
    False a SQLite file must exist already (a command that only reads never leaves a stray
    file behind a typo); a database gets its tables either way. Raises CatalogError (one
    sentence) when it cannot be opened."""
    text = url or str(default_path())
    if text.startswith(("postgresql://", "postgres://")):
        return _open_postgres(text)
    path = Path(text.removeprefix("sqlite://").removeprefix("sqlite:")) \
        if text.startswith("sqlite:") else Path(text)
    if url is None and create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CatalogError(str(path), f"cannot make its directory: {exc.strerror}") \
                from None
    if not create and not path.exists():
        raise CatalogError(str(path), "no such file",
                           hint="import sessions first (benchtui history import SESSION...)")
    if path.is_dir():
        raise CatalogError(str(path), "is a directory, not a catalog file")
    try:
        conn = sqlite3.connect(str(path), timeout=30)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except sqlite3.Error as exc:
        raise CatalogError(str(path), f"cannot be opened as SQLite: {_first_line(exc)}",
                           hint="give another file with --catalog") from None
    catalog = Catalog(str(path), SQLITE, conn)
    catalog.create()
    return catalog


def _open_postgres(url: str) -> Catalog:
    name = describe_url(url)
    try:
        import psycopg
    except ImportError:
        raise CatalogError(name, "PostgreSQL needs the psycopg driver",
                           hint="pip install 'benchtui[postgresql]'") from None
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except psycopg.Error as exc:
        raise CatalogError(name, f"the server refused or cannot be reached: "
                           f"{_first_line(exc)}",
                           hint="check the URL, that the server runs and that the user may "
                           "connect") from None
    catalog = Catalog(url, POSTGRESQL, conn)
    catalog.create()
    return catalog
