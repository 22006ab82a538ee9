"""``history check``: is the catalog whole, and does it still hold what was imported?

Read only (the catalog is opened so that nothing can be written, and an older one is not
upgraded). What it looks at:

- structure (SQLite): ``PRAGMA integrity_check``: every page, b-tree, index entry and
  record format; ``PRAGMA foreign_key_check``: every point, step and attribute belongs to
  a run and a series that exist. PostgreSQL checks its own pages (with data checksums, when
  the cluster has them: said);
- figures: each run's digest (``digest.py``) computed again from what is stored: a figure,
  a series' identity, a step's outcome or the run's own fields that changed since the
  import (one flipped bit in a value passes the structure checks: a page with a wrong
  number in it is still a well-formed page) names the run;
- values: every point beyond the bounds (``bounds.py``);
- the schema version (an older one is said: the next command that writes upgrades it).

What it cannot see: a change in what the digest does not cover (attributes, annotations,
change points, gates), or one made by someone who also wrote the digest again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchtui.history import schema
from benchtui.history.bounds import beyond, sql_within
from benchtui.history.catalog import POSTGRESQL, Catalog, CatalogError
from benchtui.history.digest import stored_runs

#: Problems listed by kind at most this many times (then counted).
_SHOWN = 20


@dataclass
class CheckResult:
    catalog: str
    kind: str
    version: int | None
    runs: int = 0
    points: int = 0
    #: What was checked, in words, one per line.
    checked: list[str] = field(default_factory=list)
    #: What is wrong, one sentence each.
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check(catalog: Catalog) -> CheckResult:
    out = CheckResult(catalog.name, catalog.kind, catalog.version)
    if catalog.kind == POSTGRESQL:
        sums = catalog.one("SHOW data_checksums")
        out.checked.append("structure: the server's own (data checksums "
                           f"{'on' if sums and sums[0] == 'on' else 'off'} in this cluster)")
    else:
        _structure(catalog, out)
        if out.problems:  # a damaged file: what is read next cannot be trusted
            return out
    counts = catalog.one("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM points)")
    out.runs, out.points = (int(counts[0]), int(counts[1])) if counts else (0, 0)
    _digests(catalog, out)
    _values(catalog, out)
    if out.version is not None and out.version < schema.VERSION:
        out.checked.append(f"schema: version {out.version}, older than this benchtui's "
                           f"{schema.VERSION}; the next command that writes upgrades it")
    else:
        out.checked.append(f"schema: version {out.version}")
    return out


def _structure(catalog: Catalog, out: CheckResult) -> None:
    try:
        found = [str(r[0]) for r in catalog.rows("PRAGMA integrity_check(100)")]
    except CatalogError as exc:
        out.problems.append(f"structure: {exc.reason}")
        return
    if found != ["ok"]:
        out.problems += [f"structure: {line}" for line in found[:_SHOWN]]
        return
    out.checked.append("structure: every page, b-tree, index and record "
                       "(PRAGMA integrity_check)")
    orphans = catalog.rows("PRAGMA foreign_key_check")
    for table, rowid, parent, _fk in orphans[:_SHOWN]:
        out.problems.append(f"references: row {rowid} of {table} points to a {parent} row "
                            "that is not there")
    if len(orphans) > _SHOWN:
        out.problems.append(f"references: {len(orphans) - _SHOWN} more such rows")
    if not orphans:
        out.checked.append("references: every row's run and series exist "
                           "(PRAGMA foreign_key_check)")


def _digests(catalog: Catalog, out: CheckResult) -> None:
    names = {int(r[0]): f"run {r[0]} ({r[1]})"
             for r in catalog.rows("SELECT id, path FROM runs")}
    changed, missing, matched = [], [], 0
    for run_id, stored, now in stored_runs(catalog):
        if stored is None:
            missing.append(run_id)
        elif stored != now:
            changed.append(run_id)
        else:
            matched += 1
    for run_id in changed[:_SHOWN]:
        out.problems.append(f"figures: {names.get(run_id, run_id)}: what is stored differs "
                            "from what its import wrote (a figure, a series, a step or the "
                            "run itself changed since); import its session again into a new "
                            "catalog, or exclude it (history exclude)")
    if len(changed) > _SHOWN:
        out.problems.append(f"figures: {len(changed) - _SHOWN} more runs changed")
    covered = f"{matched} run(s) hold what their import wrote (digest)"
    if missing:
        covered += (f"; {len(missing)} without a digest (schema version 1: the next command "
                    "that writes gives them one)")
    out.checked.append(f"figures: {covered}")


def _values(catalog: Catalog, out: CheckResult) -> None:
    rows = outside_bounds(catalog)
    for run_id, path, scope, metric, op, value in rows[:_SHOWN]:
        out.problems.append(f"values: run {run_id} ({path}), {scope}: "
                            f"{beyond(metric, op, value)}; left out of every analysis")
    if len(rows) > _SHOWN:
        out.problems.append(f"values: {len(rows) - _SHOWN} more points beyond the bounds")
    if not rows:
        out.checked.append("values: every figure within its bounds")


def outside_bounds(catalog: Catalog, plan: str | None = None
                   ) -> list[tuple[int, str, str, str, str, float]]:
    """(run id, session path, scope, metric, op, value) of every point beyond the bounds
    (of ``plan``'s runs), in run order."""
    where, params = ("AND s.plan = ? ", (plan,)) if plan is not None else ("", ())
    return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), float(r[5]))
            for r in catalog.rows(
                "SELECT r.id, r.path, s.scope, s.metric, s.op, p.value FROM points p "
                "JOIN series s ON s.id = p.series_id JOIN runs r ON r.id = p.run_id "
                f"WHERE NOT {sql_within('s.metric', 'p.value')} {where}"
                "ORDER BY r.id, s.step, s.scope, s.metric, s.op", params)]
