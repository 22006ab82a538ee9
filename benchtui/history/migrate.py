"""What a database is before the catalog uses it, and its schema brought to this version.

- a new database (a SQLite file with no table; a PostgreSQL schema with none of the
  catalog's tables) becomes a catalog when the command may create one;
- a benchtui catalog of this version is used as it is (nothing run); one of an older
  version is upgraded in one transaction (``schema.py`` says how), and this is said; one
  of a newer version is refused: this benchtui does not know what its tables mean;
- anything else is not a benchtui catalog and is refused without a byte written: a SQLite
  file holding tables of its own, a PostgreSQL schema holding a table named like the
  catalog's without its ``catalog_meta``.

Only reads happen until the database is known to be a catalog (or an empty one to make).
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from benchtui import __version__
from benchtui.history import schema
from benchtui.history.dberrors import REFUSED, CatalogError
from benchtui.history.digest import fill_digests

if TYPE_CHECKING:
    from benchtui.history.database import Catalog

_UPGRADE_HINT = "upgrade benchtui (pip install -U benchtui) to use it"


def prepare(catalog: Catalog, *, create: bool, upgrade: bool) -> None:
    """Check the catalog's schema (the module's docstring) and set ``catalog.version``;
    CatalogError when it cannot be used."""
    version = _version(catalog)
    catalog.commit()  # (PostgreSQL: the reads opened a transaction)
    if version is None:
        if not create:
            raise CatalogError(catalog.name, "holds no history catalog yet",
                               hint="import sessions first (benchtui history import "
                               "SESSION...)")
        catalog.write(lambda: _make_or_upgrade(catalog))
        _wal(catalog)
        version = schema.VERSION
    elif version > schema.VERSION:
        made_by = _meta(catalog, "benchtui")
        by = f" (benchtui {made_by})" if made_by else ""
        raise CatalogError(catalog.name, f"was made by a newer benchtui{by}: its schema is "
                           f"version {version}, this benchtui knows up to version "
                           f"{schema.VERSION}; it was left as it was",
                           _UPGRADE_HINT, REFUSED)
    elif version < schema.VERSION and upgrade:
        was = catalog.write(lambda: _make_or_upgrade(catalog))
        if was is not None and was < schema.VERSION:
            catalog.say(f"history catalog {catalog.name}: upgraded from schema version {was} "
                        f"to {schema.VERSION} (made by an older benchtui)")
        version = schema.VERSION
    catalog.version = version


def _tables(catalog: Catalog) -> set[str]:
    if catalog.kind == "postgresql":
        rows = catalog.rows("SELECT table_name FROM information_schema.tables "
                            "WHERE table_schema = current_schema()")
    else:
        rows = catalog.rows("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                            "AND name NOT LIKE 'sqlite_%'")
    return {str(r[0]) for r in rows}


def _meta(catalog: Catalog, key: str) -> str | None:
    row = catalog.one("SELECT value FROM catalog_meta WHERE key = ?", (key,))
    return None if row is None else str(row[0])


def _version(catalog: Catalog) -> int | None:
    """The catalog's schema version; None for a new database; CatalogError for one that is
    not a catalog."""
    tables = _tables(catalog)
    if "catalog_meta" not in tables:
        ours = sorted(tables & set(schema.TABLES)) if catalog.kind == "postgresql" \
            else sorted(tables)
        if not ours:
            return None
        shown = ", ".join(ours[:6]) + (", ..." if len(ours) > 6 else "")
        raise CatalogError(catalog.name, f"is not a benchtui catalog (it holds tables of its "
                           f"own: {shown}); nothing was written to it",
                           "give a new file, or a benchtui catalog, with --catalog", REFUSED)
    text = _meta(catalog, "schema")
    if text is None or not text.strip().isdigit():
        raise CatalogError(catalog.name, "is not a benchtui catalog (its catalog_meta table "
                           "says no schema version); nothing was written to it",
                           "give a new file, or a benchtui catalog, with --catalog", REFUSED)
    return int(text)


def _make_or_upgrade(catalog: Catalog) -> int | None:
    """Inside a write transaction: make the catalog, or bring it to this version; the
    version it had (None: it was new). Another process may have done it meanwhile: then
    nothing is run."""
    catalog.lock_schema()
    was = _version(catalog)
    if was is not None and was >= schema.VERSION:
        return was
    for stmt in schema.table_statements(catalog.kind):
        catalog.execute(stmt)
    if was is not None:
        for since, table, column in schema.ADDED_COLUMNS:
            if since > was and column.split()[0] not in _columns(catalog, table):
                catalog.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
        for stmt in schema.drop_view_statements():
            catalog.execute(stmt)
    for stmt in schema.index_statements(catalog.kind) + schema.view_statements(catalog.kind):
        catalog.execute(stmt)
    if was is not None:
        fill_digests(catalog)
    for key, value in (("schema", str(schema.VERSION)), ("benchtui", __version__)):
        catalog.execute("INSERT INTO catalog_meta (key, value) VALUES (?, ?) ON CONFLICT (key) "
                        "DO UPDATE SET value = excluded.value", (key, value))
    return was


def _columns(catalog: Catalog, table: str) -> set[str]:
    if catalog.kind == "postgresql":
        rows = catalog.rows("SELECT column_name FROM information_schema.columns "
                            "WHERE table_schema = current_schema() AND table_name = ?",
                            (table,))
        return {str(r[0]) for r in rows}
    return {str(r[1]) for r in catalog.rows(f"PRAGMA table_info({table})")}


def _wal(catalog: Catalog) -> None:
    """A new SQLite catalog keeps its journal in WAL mode (readers never wait on the
    writer); set once, kept in the file. A file system that cannot do it keeps SQLite's
    rollback journal."""
    if catalog.kind != "sqlite":
        return
    with suppress(CatalogError):
        catalog.execute("PRAGMA journal_mode = WAL")
