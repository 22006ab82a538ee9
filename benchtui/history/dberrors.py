"""What a database error means for the catalog: which kind of failure it is and the words
for it. SQLite says it with its result codes, PostgreSQL with SQLSTATE; both come to the
same kinds, so a read-only file and a full disk are told apart whatever the catalog.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from benchtui.errors import BenchtuiError
from benchtui.history.connect import disk_full, why_read_only

#: Another writer holds a lock: waited for, said, and tried again (``Catalog.write``).
BUSY = "busy"
READ_ONLY = "read-only"
FULL = "full"
#: The server did not answer in time (this side's deadline or the server's own).
TIMEOUT = "timeout"
DAMAGED = "damaged"
#: The connection is gone (the server shut down, the network dropped it).
LOST = "lost"
#: Not a catalog benchtui can use (a foreign database, a newer schema): never written to.
REFUSED = "refused"
OTHER = ""


@dataclass
class CatalogError(BenchtuiError):
    """The catalog cannot be opened, read or written: one sentence naming the catalog; its
    ``kind`` (``BUSY``, ``READ_ONLY``, ``FULL``...) says which failure it is."""

    catalog: str
    reason: str
    hint: str = ""
    kind: str = ""
    #: The connection was lost while committing: what was being written is in the catalog
    #: whole, or not at all, and which is not known.
    in_doubt: bool = False
    exit_code = 1

    def __str__(self) -> str:
        text = f"history catalog {self.catalog}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


@dataclass(frozen=True, slots=True)
class Meaning:
    kind: str
    reason: str
    hint: str = ""
    in_doubt: bool = False


_FIX_FILE = "give a catalog you can write with --catalog, or ask whoever owns it"
_SQLITE_FILES = "SQLite also writes PATH-wal and PATH-shm beside it"


def sqlite_meaning(exc: Exception, path: str) -> Meaning:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    text = first_line(exc)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return Meaning(BUSY, f"locked by another writer ({text})")
    if code == sqlite3.SQLITE_READONLY:
        return Meaning(READ_ONLY, f"is read-only here: {why_read_only(Path(path))} ({text})",
                       _FIX_FILE)
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and disk_full(Path(path))):
        # (a full disk is also an I/O error where SQLite grows its -shm or -wal file)
        return Meaning(FULL, "the disk holding it is full (SQLite could not grow its files); "
                       "nothing was written", "free space on that disk and run the command "
                       "again")
    if code == sqlite3.SQLITE_NOTADB:
        return Meaning(REFUSED, f"is not a SQLite database, so not a benchtui catalog ({text})",
                       "give a new file, or a benchtui catalog, with --catalog")
    if code == sqlite3.SQLITE_CORRUPT:
        return Meaning(DAMAGED, f"is damaged ({text})", "benchtui history check --catalog "
                       f"{path} says what is wrong; restore it from a copy")
    if code == sqlite3.SQLITE_CANTOPEN:
        return Meaning(OTHER, f"cannot be opened: {text} (no permission, or its directory is "
                       f"gone or read-only; {_SQLITE_FILES.replace('PATH', path)})",
                       _FIX_FILE)
    if code == sqlite3.SQLITE_IOERR:
        return Meaning(OTHER, f"cannot be read or written: {text} (an input/output error)")
    return Meaning(OTHER, text)


#: SQLSTATE -> kind (PostgreSQL's appendix A, "Error codes").
_STATES = {"40001": BUSY, "40P01": BUSY, "55P03": BUSY, "57014": TIMEOUT, "42501": READ_ONLY,
           "25006": READ_ONLY, "53100": FULL, "53000": FULL, "XX001": DAMAGED,
           "XX002": DAMAGED, "57P01": LOST, "57P02": LOST, "57P03": LOST}


_IN_DOUBT = ("whether its last transaction was committed is not known (it is whole or "
             "absent)")
_NOT_COMMITTED = "the transaction it was in was not committed"


def postgres_meaning(exc: Exception, statement_seconds: float, expired: bool,
                     committing: bool) -> Meaning:
    """``expired``: this side's deadline ended the wait; ``committing``: the call was the
    COMMIT (then the server may have committed before it stopped answering)."""
    state = getattr(exc, "sqlstate", None) or ""
    text = first_line(exc)
    kind = _STATES.get(state, OTHER)
    gone = _IN_DOUBT if committing else _NOT_COMMITTED
    if expired:
        return Meaning(TIMEOUT, f"the server did not answer for {statement_seconds:g} s "
                       f"(stopped, frozen or unreachable); {gone}",
                       "BENCHTUI_CATALOG_STATEMENT_TIMEOUT sets how long to wait",
                       in_doubt=committing)
    if kind == TIMEOUT:
        return Meaning(TIMEOUT, f"a statement took longer than {statement_seconds:g} s "
                       f"({text}); it was not committed",
                       "BENCHTUI_CATALOG_STATEMENT_TIMEOUT sets how long to wait")
    if kind == BUSY:
        return Meaning(BUSY, f"locked by another writer ({text})")
    if kind == READ_ONLY:
        return Meaning(READ_ONLY, f"may not be written by this user or session ({text})",
                       "grant the user INSERT and UPDATE on the catalog's tables")
    if kind == FULL:
        return Meaning(FULL, f"the server's disk is full ({text}); what was being written "
                       "is not in the catalog")
    if kind == DAMAGED:
        return Meaning(DAMAGED, f"the server says its data is damaged ({text})")
    if kind == LOST or (not state and _is_connection_error(exc)):
        return Meaning(LOST, f"the connection to the server was lost ({text}); {gone}",
                       in_doubt=committing)
    return Meaning(OTHER, text)


def _is_connection_error(exc: Exception) -> bool:
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.OperationalError)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def is_db_error(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.Error)
