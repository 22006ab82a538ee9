"""A run's digest: what the import wrote for a session, summed up in one hash kept in
``runs.digest``, so that ``history check`` can tell a stored figure that changed since
(one flipped bit in a page of the file changes a figure, and a well-formed page with a
wrong number in it passes SQLite's own checks).

What it covers: the run's session key, plan, start, end and outcome; each step's args key,
outcome and repeats; and every point: its series (plan, step, args key, metric, op, scope,
environment), its figure (exactly: the float's shortest repr), repeats and outcome. What it
does not: attributes, annotations (``ack``, ``exclude``, ``env-change``) and change points,
which are written later on purpose and are the user's or the analysis's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchtui.history.database import Catalog

#: (session_key, plan, started, ended, outcome)
RunFields = tuple[str, str, float, float | None, str]
#: (step, args_key, outcome, repeats)
StepFields = tuple[str, str, str, int]
#: (plan, step, args_key, metric, op, scope, env_key, value, repeats, outcome)
PointFields = tuple[str, str, str, str, str, str, str, float, int, str]


def run_digest(run: RunFields, steps: Iterable[StepFields],
               points: Iterable[PointFields]) -> str:
    """The digest of a run's rows (floats as the shortest repr that reads back exactly)."""
    doc = [list(run), sorted(list(s) for s in steps), sorted(list(p) for p in points)]
    text = json.dumps(doc, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_RUNS = "SELECT id, session_key, plan, started, ended, outcome, digest FROM runs"
_STEPS = "SELECT run_id, step, args_key, outcome, repeats FROM step_runs"
_POINTS = ("SELECT p.run_id, s.plan, s.step, s.args_key, s.metric, s.op, s.scope, s.env_key, "
           "p.value, p.repeats, p.outcome FROM points p JOIN series s ON s.id = p.series_id")


def stored_runs(catalog: Catalog, *, missing_only: bool = False
                ) -> Iterator[tuple[int, str | None, str]]:
    """(run id, digest stored, digest of what is stored now) of every run (or of those
    with no digest), run by run, reading the points once in run order."""
    where = " WHERE digest IS NULL" if missing_only else ""
    runs = {int(r[0]): r for r in catalog.rows(f"{_RUNS}{where} ORDER BY id")}
    if not runs:
        return
    steps: dict[int, list[StepFields]] = {}
    for r in catalog.rows(f"{_STEPS} ORDER BY run_id"):
        if int(r[0]) in runs:
            steps.setdefault(int(r[0]), []).append((r[1], r[2], r[3], int(r[4])))
    points = catalog.iterate(f"{_POINTS} ORDER BY p.run_id")
    seen: set[int] = set()
    for run_id, group in groupby(points, key=lambda r: int(r[0])):
        row = runs.get(run_id)
        if row is None:
            continue
        seen.add(run_id)
        pts = [(*p[1:8], float(p[8]), int(p[9]), p[10]) for p in group]
        yield run_id, row[6], run_digest(_fields(row), steps.get(run_id, ()), pts)
    for run_id, row in runs.items():
        if run_id not in seen:  # a run with no point (a step that gave no figure)
            yield run_id, row[6], run_digest(_fields(row), steps.get(run_id, ()), ())


def _fields(row: tuple[Any, ...]) -> RunFields:
    return (str(row[1]), str(row[2]), float(row[3]),
            None if row[4] is None else float(row[4]), str(row[5]))


def fill_digests(catalog: Catalog) -> int:
    """Inside a write transaction (an upgrade): give every run without a digest the digest
    of what it holds now; how many."""
    found = [(digest, run_id) for run_id, _stored, digest in
             stored_runs(catalog, missing_only=True)]
    catalog.executemany("UPDATE runs SET digest = ? WHERE id = ?", found)
    return len(found)
