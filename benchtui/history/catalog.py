"""The catalog: a SQLite file (default, in the user's data directory) or a PostgreSQL
database (``postgresql://...``) holding the same tables (``schema.py``, docs/history.md),
opened, and its schema checked (``migrate.py``) before anything else is done with it.

Every failure to open or talk to the catalog is a ``CatalogError``: one sentence naming the
catalog, exit status 1. Queries and transactions: ``database.Catalog``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from benchtui.history import migrate
from benchtui.history.connect import Waits, Watchdog, postgres_connect, sqlite_connect
from benchtui.history.database import POSTGRESQL, SQLITE, Catalog, describe_url
from benchtui.history.dberrors import DAMAGED, CatalogError, first_line, sqlite_meaning

__all__ = ["POSTGRESQL", "SQLITE", "Catalog", "CatalogError", "default_path", "describe_url",
           "open_catalog"]


def default_path() -> Path:
    """``$XDG_DATA_HOME/benchtui/history.sqlite`` (``~/.local/share/...`` by default)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "benchtui" / "history.sqlite"


def open_catalog(url: str | None = None, *, create: bool = True, read_only: bool = False,
                 waits: Waits | None = None, say: Callable[[str], None] | None = None
                 ) -> Catalog:
    """The catalog at ``url``: None or a path (SQLite; the default file is made with its
    directory), ``sqlite:///PATH``, or ``postgresql://USER@HOST:PORT/DB``.

    ``create``: a missing SQLite file or an empty database becomes a new catalog; without
    it a command that only reads never leaves a stray file behind a typo. ``read_only``:
    nothing is ever written (``history check``), an older catalog is not upgraded. A
    database that is not a benchtui catalog, or one made by a newer benchtui, is refused
    and left as it was. Raises CatalogError (one sentence) when it cannot be opened."""
    waits = waits or Waits.from_env()
    text = url or str(default_path())
    if text.startswith(("postgresql://", "postgres://")):
        catalog = _open_postgres(text, waits, read_only)
    else:
        catalog = _open_sqlite(text, url is None, create, read_only, waits)
    if say is not None:
        catalog.say = say
    try:
        if catalog.kind == SQLITE and not read_only:
            _quick_check(catalog)
        migrate.prepare(catalog, create=create and not read_only, upgrade=not read_only)
    except BaseException:
        catalog.close()
        raise
    return catalog


def _open_sqlite(text: str, default: bool, create: bool, read_only: bool, waits: Waits
                 ) -> Catalog:
    path = Path(text.removeprefix("sqlite://").removeprefix("sqlite:")) \
        if text.startswith("sqlite:") else Path(text)
    if default and create and not read_only:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CatalogError(str(path), f"cannot make its directory: {exc.strerror}") \
                from None
    if path.is_dir():
        raise CatalogError(str(path), "is a directory, not a catalog file")
    exists = path.exists()
    if not exists and (read_only or not create):
        raise CatalogError(str(path), "no such file",
                           hint="import sessions first (benchtui history import SESSION...)")
    mode = "ro" if read_only else "rw" if exists else "rwc"
    try:
        conn = sqlite_connect(path, waits, mode)
    except sqlite3.Error as exc:
        m = sqlite_meaning(exc, str(path))
        raise CatalogError(str(path), m.reason, m.hint, m.kind) from None
    return Catalog(str(path), SQLITE, conn, waits=waits)


#: A SQLite catalog up to this size is checked when it is opened (``PRAGMA quick_check``:
#: 27 ms for a year of a 50-host fleet's nights, 4.4 MB; 0.2 s at 45 MB:
#: docs/benchmarks/history_check.md); a larger one by ``history check`` only.
QUICK_CHECK_MAX = 64 << 20


def _quick_check(catalog: Catalog) -> None:
    """A damaged file (a page, a b-tree, a record's format) is said before anything is
    read or written in it."""
    size = Path(catalog.url).stat().st_size
    if not 0 < size <= QUICK_CHECK_MAX:
        return
    found = [str(r[0]) for r in catalog.rows("PRAGMA quick_check(3)")]
    if found != ["ok"]:
        raise CatalogError(catalog.name, f"is damaged: {'; '.join(found)} (PRAGMA "
                           "quick_check); nothing was written to it",
                           f"benchtui history check --catalog {catalog.name} says more; "
                           "restore it from a copy", DAMAGED)


def _open_postgres(url: str, waits: Waits, read_only: bool) -> Catalog:
    name = describe_url(url)
    try:
        import psycopg
    except ImportError:
        raise CatalogError(name, "PostgreSQL needs the psycopg driver",
                           hint="pip install 'benchtui[postgresql]'") from None
    try:
        conn = postgres_connect(url, waits)
    except psycopg.Error as exc:
        said = first_line(exc)
        why = f"the server did not answer while connecting ({said}: stopped, frozen or " \
            "unreachable)" if "timeout" in said else f"the server refused or cannot be " \
            f"reached: {said}"
        raise CatalogError(name, why,
                           hint="check the URL, that the server runs and that the user may "
                           "connect (BENCHTUI_CATALOG_CONNECT_TIMEOUT sets how long to "
                           "wait)") from None
    if read_only:
        conn.read_only = True
    return Catalog(url, POSTGRESQL, conn, waits=waits, watchdog=Watchdog(conn.pgconn.socket))
