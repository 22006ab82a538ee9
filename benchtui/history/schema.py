"""The catalog's tables and views, for SQLite and PostgreSQL (docs/history.md documents
them; the DDL is the same but for identity columns and time conversion).

Tables:

- ``runs``: one per session imported: its plan, name, path, when it started and ended, how
  it ended (``outcome``: completed, failed, interrupted, watchdog, deadline), where it came
  from (recorded or imported) and when it was added;
- ``run_attributes``: name/value pairs of a run (commit, branch, version, build, anything
  given with ``--attr``);
- ``step_runs``: how each step of a run ended and how many repeats it had;
- ``environments``: the stable host facts an environment key stands for;
- ``series``: plan, step, the step's effective arguments (key and text), metric, op, scope
  (``(fleet)`` or a host) and environment;
- ``points``: one value per series and run (the median of its repeats), with the step's
  outcome (only ``completed`` points are analysed);
- ``annotations``: ``exclude`` (a run left out, with a reason), ``env-change`` (a boundary:
  the analysis starts again after it), ``ack`` (a change acknowledged);
- ``change_points``: every change found, with its figures, verdict, when it was first seen,
  confirmed, gated and acknowledged;
- ``gates``: each gate's time, plan, exit status and summary line.

Views: ``history_runs`` (one row per run, attributes as columns) and ``history_metrics``
(one row per run, step, scope and environment; one column per metric and op:
``iops_read``, ``bw_write``, ``lat_p99_read``, ``util``...): the shape Otava's PostgreSQL
importer and Grafana read.

Versions. ``catalog_meta`` holds the schema version (``schema``) and the benchtui that
made or last upgraded the catalog (``benchtui``). Every change is additive and bumps
``VERSION``:

1. a new table, index or view goes into ``_TABLES`` or ``view_statements`` (and its name into
   ``TABLES`` or ``VIEWS``): ``migrate.py`` makes it, in a new catalog and when an older
   one is upgraded (``CREATE ... IF NOT EXISTS``); a view whose definition changes needs
   nothing more: the views are dropped and made again on every upgrade;
2. a new column of an existing table goes into ``_TABLES`` (for new catalogs) and into
   ``ADDED_COLUMNS`` with the version that added it (an upgrade adds it to older ones,
   ``NULL`` in the rows already there: give it no ``NOT NULL`` without a ``DEFAULT``);
3. ``VERSION`` is that version, and the list below and docs/history.md's table of versions
   say what it added.

``migrate.py`` refuses a catalog whose version is newer than ``VERSION`` and
upgrades an older one in one transaction (docs/history.md, "Schema versions").

- 1: the tables above;
- 2: ``runs.digest``: a digest of what the import wrote for the run (``digest.py``),
  which ``history check`` recomputes.
"""

from __future__ import annotations

from benchtui.history.series import METRICS, OPS, column

VERSION = 2
#: (version, table, column and its type): the columns added to tables that existed before
#: that version; an upgrade adds those its catalog lacks.
ADDED_COLUMNS: tuple[tuple[int, str, str], ...] = (
    (2, "runs", "digest TEXT"),
)
#: Every table of the catalog (a database with one of these and no ``catalog_meta`` schema
#: version is not a benchtui catalog: it is never written to).
TABLES = ("catalog_meta", "runs", "run_attributes", "step_runs", "environments", "series",
          "points", "annotations", "change_points", "gates")
VIEWS = ("history_runs", "history_metrics")
ATTRIBUTES = ("commit", "branch", "version", "build")

_TABLES = """
CREATE TABLE IF NOT EXISTS catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id {id}, session_key TEXT NOT NULL UNIQUE, plan TEXT NOT NULL, session_name TEXT NOT NULL,
    path TEXT NOT NULL, started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION,
    outcome TEXT NOT NULL, source TEXT NOT NULL, added DOUBLE PRECISION NOT NULL,
    digest TEXT);
CREATE TABLE IF NOT EXISTS run_attributes (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, name TEXT NOT NULL,
    value TEXT NOT NULL, PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS step_runs (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step TEXT NOT NULL,
    args_key TEXT NOT NULL, outcome TEXT NOT NULL, repeats INTEGER NOT NULL,
    PRIMARY KEY (run_id, step));
CREATE TABLE IF NOT EXISTS environments (key TEXT PRIMARY KEY, facts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS series (
    id {id}, plan TEXT NOT NULL, step TEXT NOT NULL, args_key TEXT NOT NULL,
    args TEXT NOT NULL, metric TEXT NOT NULL, op TEXT NOT NULL, scope TEXT NOT NULL,
    env_key TEXT NOT NULL, UNIQUE (plan, step, args_key, metric, op, scope, env_key));
CREATE TABLE IF NOT EXISTS points (
    series_id BIGINT NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    value DOUBLE PRECISION NOT NULL, repeats INTEGER NOT NULL, outcome TEXT NOT NULL,
    PRIMARY KEY (series_id, run_id));
CREATE INDEX IF NOT EXISTS points_run ON points (run_id);
CREATE TABLE IF NOT EXISTS annotations (
    id {id}, kind TEXT NOT NULL, run_id BIGINT REFERENCES runs(id) ON DELETE CASCADE,
    change_id BIGINT, reason TEXT NOT NULL, created DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS change_points (
    id {id}, series_id BIGINT NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    run_id BIGINT NOT NULL, prev_run_id BIGINT NOT NULL,
    mean_before DOUBLE PRECISION NOT NULL, sd_before DOUBLE PRECISION NOT NULL,
    mean_after DOUBLE PRECISION NOT NULL, sd_after DOUBLE PRECISION NOT NULL,
    change DOUBLE PRECISION NOT NULL, pvalue DOUBLE PRECISION NOT NULL,
    verdict TEXT NOT NULL, first_seen DOUBLE PRECISION NOT NULL,
    confirmed DOUBLE PRECISION, gated DOUBLE PRECISION, acked DOUBLE PRECISION,
    UNIQUE (series_id, run_id));
CREATE TABLE IF NOT EXISTS gates (
    id {id}, plan TEXT NOT NULL, t DOUBLE PRECISION NOT NULL, exit_code INTEGER NOT NULL,
    summary TEXT NOT NULL);
"""


def _time(kind: str, expr: str) -> str:
    if kind == "postgresql":
        return f"to_timestamp({expr})"
    return f"datetime({expr}, 'unixepoch')"


def _attr(name: str) -> str:
    return (f"(SELECT a.value FROM run_attributes a WHERE a.run_id = r.id "
            f"AND a.name = '{name}') AS \"{name}\"")


def view_statements(kind: str) -> list[str]:
    """The views (``CREATE OR REPLACE VIEW`` on PostgreSQL, ``IF NOT EXISTS`` on SQLite)."""
    runs = (f"CREATE VIEW history_runs AS SELECT r.id AS run_id, r.plan, r.session_name, "
            f"{_time(kind, 'r.started')} AS time, r.started, r.ended, r.outcome, r.source, "
            f"r.path, {', '.join(_attr(a) for a in ATTRIBUTES)} FROM runs r")
    cols = []
    for m in METRICS:
        for op in (("",) if m.name == "disk_util_ratio" else OPS):
            cols.append(f"MAX(CASE WHEN s.metric = '{m.name}' AND s.op = '{op}' "
                        f"THEN p.value END) AS {column(m.name, op)}")
    metrics = (f"CREATE VIEW history_metrics AS SELECT r.id AS run_id, r.plan, s.step, "
               f"s.scope, s.env_key, s.args_key, {_time(kind, 'r.started')} AS time, "
               f"r.started, MIN(p.outcome) AS outcome, "
               f"{', '.join(_attr(a) for a in ATTRIBUTES)}, {', '.join(cols)} "
               f"FROM points p JOIN series s ON s.id = p.series_id "
               f"JOIN runs r ON r.id = p.run_id "
               f"GROUP BY r.id, r.plan, s.step, s.scope, s.env_key, s.args_key, r.started")
    make = "CREATE OR REPLACE VIEW" if kind == "postgresql" else "CREATE VIEW IF NOT EXISTS"
    return [v.replace("CREATE VIEW", make, 1) for v in (runs, metrics)]


def _ident(kind: str) -> str:
    return "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" if kind == "postgresql" \
        else "INTEGER PRIMARY KEY"


def _tables_text(kind: str) -> list[str]:
    return [s.strip() for s in _TABLES.format(id=_ident(kind)).split(";") if s.strip()]


def table_statements(kind: str) -> list[str]:
    """``CREATE TABLE IF NOT EXISTS`` of every table, as this version has it."""
    return [s for s in _tables_text(kind) if s.startswith("CREATE TABLE")]


def index_statements(kind: str) -> list[str]:
    return [s for s in _tables_text(kind) if s.startswith("CREATE INDEX")]


def drop_view_statements() -> list[str]:
    return [f"DROP VIEW IF EXISTS {v}" for v in VIEWS]
