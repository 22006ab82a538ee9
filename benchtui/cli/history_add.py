"""Sessions into the history catalog: ``history import``, and ``record --history`` /
``run --record ... --history-catalog`` (the catalog checked before the run, the session
added after it). docs/history.md.

Any number of these may run at once on one catalog: each session is added once, the others
say it is already there (``ingest.py``); a lock another writer holds is waited for and said
(``Catalog.write``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchtui.history.catalog import CatalogError


def say(text: str) -> None:
    print(f"benchtui: {text}", file=sys.stderr)


def import_sessions(args: argparse.Namespace) -> int:
    """Each session added (or said to be there already); a session refused or unreadable
    is said and the others still added; a catalog that cannot be written ends the import
    with one sentence and the count of sessions not imported."""
    from benchtui.errors import RecordingError
    from benchtui.history.catalog import CatalogError, open_catalog
    from benchtui.history.ingest import Importer, SessionRefused

    code = 0
    with open_catalog(args.catalog, say=say) as catalog:
        importer = Importer(catalog, skip=args.skip)
        attrs = dict(args.attr)
        for i, path in enumerate(args.sessions):
            try:
                done = importer.add(path, attrs)
            except (RecordingError, SessionRefused) as exc:
                say(str(exc))
                code = 1
                continue
            except CatalogError as exc:
                say(f"{exc}; {_not_imported(path, len(args.sessions) - i - 1, exc)}")
                return 1
            if done.new:
                print(f"history: added run {done.run_id}: {path} (plan {done.plan}, "
                      f"{done.outcome}, {done.points} points)", file=sys.stderr)
            else:
                print(f"history: {path} is already in the catalog as run {done.run_id}; "
                      "nothing changed", file=sys.stderr)
    return code


def _not_imported(path: str, after: int, exc: CatalogError) -> str:
    """What an import cut by ``exc`` at ``path`` left undone, and how to finish it."""
    this = f"{path} may have been added or not" if exc.in_doubt else f"{path} was not added"
    rest = f", nor the {after} session(s) after it" if after else ""
    again = " (import them again: those already added are said so)" if after or \
        exc.in_doubt else ""
    return f"{this}{rest}{again}"


def check_catalog_for_recording(url: str | None) -> None:
    """``record --history`` and ``run --record ... --history-catalog``, before the run:
    the catalog can be opened (made, upgraded) and written; CatalogError otherwise, so that
    a nightly job learns it before the run, not after it."""
    from benchtui.history.catalog import open_catalog

    with open_catalog(url or None, say=say) as catalog:
        catalog.check_writable()


def add_recorded(path: str, url: str | None, attrs: list[tuple[str, str]] | None = None
                 ) -> bool:
    """``record --history`` and ``run --record ... --history-catalog``: add the session
    just recorded, with its ``--attr`` attributes; one sentence on stderr either way. False
    when it could not be added."""
    from benchtui.errors import BenchtuiError
    from benchtui.history.catalog import open_catalog
    from benchtui.history.ingest import Importer

    try:
        with open_catalog(url or None, say=say) as catalog:
            done = Importer(catalog).add(path, dict(attrs or ()))
            if done.new:
                say(f"history: added run {done.run_id} to {catalog.name} ({done.outcome}, "
                    f"{done.points} points)")
            else:
                say(f"history: {path} is already in {catalog.name} as run {done.run_id}")
    except BenchtuiError as exc:
        say(f"{exc}; the recording {path} is whole: add it later with benchtui history "
            "import")
        return False
    return True
