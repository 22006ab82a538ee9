"""The history catalog on a real PostgreSQL server (tests/pg_server.py) that fails: frozen
(SIGSTOP of the postmaster and every backend) in the middle of ``history import`` of 300
sessions, and before a command connects: each wait ends by its documented timeout with one
sentence, nothing half-written, and importing again completes. And a PostgreSQL database
that is not a catalog, or holds one of a newer or an older schema (issues 27 and 29).

Sessions: ``benchtui import`` of a real fio output (tests/history_sessions.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchtui.history import schema
from tests.history_sessions import PLAN, ROOT, benchtui, no_traceback, sessions
from tests.pg_server import PgServer, postgres_cluster

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def server() -> Iterator[PgServer]:
    with postgres_cluster() as pg:
        yield pg


def _database(server: PgServer, name: str) -> str:
    """A new database on the server; its URL."""
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.url.rsplit("/", 1)[0] + f"/{name}"


def _points_per_run(url: str) -> dict[int, int]:
    with psycopg.connect(url) as conn:
        return {int(r[0]): int(r[1]) for r in conn.execute(
            "SELECT r.id, count(p.run_id) FROM runs r LEFT JOIN points p ON p.run_id = r.id "
            "GROUP BY r.id")}


def test_a_server_frozen_mid_import_is_given_up_in_bounded_time(
        server: PgServer, tmp_path: Path) -> None:
    paths = [str(p) for p in sessions(tmp_path / "s", 300)]
    url = _database(server, "frozen")
    env = {**os.environ, "BENCHTUI_CATALOG_STATEMENT_TIMEOUT": "3"}
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "history", "import", *paths,
                             "--catalog", url], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stderr is not None
    said, added = "", 0
    try:
        while added < 25:  # well into the import: then the server stops answering
            line = proc.stderr.readline()
            assert line, said
            said += line
            added += "added run" in line
        server.signal(signal.SIGSTOP)
        frozen = time.monotonic()
        said += proc.stderr.read()
        code = proc.wait(timeout=60)
        took = time.monotonic() - frozen
    finally:
        server.signal(signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in said
    assert code == 1 and took < 3 + 10, (took, said[-2000:])
    last = said.strip().splitlines()[-1]
    assert last.startswith(f"benchtui: history catalog {url}: the server did not answer for "
                           "3 s (stopped, frozen or unreachable)"), last
    assert "BENCHTUI_CATALOG_STATEMENT_TIMEOUT sets how long to wait" in last
    assert "session(s) after it" in last
    # nothing half-written: every run there is whole (7 points: the fleet's and h1's)
    counts = _points_per_run(url)
    assert 25 <= len(counts) < 300 and set(counts.values()) == {7}, counts
    again = benchtui("history", "import", *paths, "--catalog", url)
    no_traceback(again)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr.count("already in the catalog") == len(counts)
    assert again.stderr.count("added run") == 300 - len(counts)
    counts = _points_per_run(url)
    assert len(counts) == 300 and set(counts.values()) == {7}
    checked = benchtui("history", "check", "--catalog", url)
    assert checked.returncode == 0 and "300 run(s) hold what their import wrote" in \
        checked.stdout, checked.stdout


def test_a_frozen_server_is_given_up_while_connecting(server: PgServer, tmp_path: Path
                                                      ) -> None:
    url = _database(server, "connect")
    assert benchtui("history", "import", *map(str, sessions(tmp_path, 2)), "--catalog", url
                    ).returncode == 0
    server.signal(signal.SIGSTOP)
    try:
        start = time.monotonic()
        done = benchtui("history", "show", PLAN, "--catalog", url,
                        env={"BENCHTUI_CATALOG_CONNECT_TIMEOUT": "2"}, timeout=60)
        took = time.monotonic() - start
    finally:
        server.signal(signal.SIGCONT)
    no_traceback(done)
    assert done.returncode == 1 and took < 2 + 10, (took, done.stderr)
    assert done.stderr.startswith(f"benchtui: history catalog {url}: the server did not "
                                  "answer while connecting"), done.stderr
    assert "BENCHTUI_CATALOG_CONNECT_TIMEOUT sets how long to wait" in done.stderr


def test_foreign_newer_and_older_databases(server: PgServer, tmp_path: Path) -> None:
    paths = [str(p) for p in sessions(tmp_path, 3)]
    # a database whose tables are another application's
    url = _database(server, "someone")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE runs (id int, who text)")
    for argv in (("import", *paths), ("show", PLAN)):
        done = benchtui("history", *argv, "--catalog", url)
        no_traceback(done)
        assert done.returncode == 1 and "is not a benchtui catalog (it holds tables of its " \
            "own: runs); nothing was written to it" in done.stderr, done.stderr
    with psycopg.connect(url) as conn:
        tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'public'")}
    assert tables == {"runs"}
    # a catalog of schema version 1 (before runs.digest): upgraded, and said once
    url = _database(server, "older")
    assert benchtui("history", "import", paths[0], "--catalog", url).returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE runs DROP COLUMN digest")
        conn.execute("UPDATE catalog_meta SET value = '1' WHERE key = 'schema'")
    done = benchtui("history", "import", *paths, "--catalog", url)
    assert done.returncode == 0, done.stderr
    assert f"upgraded from schema version 1 to {schema.VERSION}" in done.stderr
    assert done.stderr.count("added run") == 2
    checked = benchtui("history", "check", "--catalog", url)
    assert checked.returncode == 0 and "3 run(s) hold what their import wrote" in \
        checked.stdout, checked.stdout + checked.stderr
    assert "upgraded" not in checked.stderr
    # one made by a newer benchtui: refused, untouched
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE catalog_meta SET value = '99' WHERE key = 'schema'")
    for argv in (("import", *map(str, sessions(tmp_path / "n", 1, prefix="new"))),
                 ("show", PLAN)):
        done = benchtui("history", *argv, "--catalog", url)
        assert done.returncode == 1 and "its schema is version 99, this benchtui knows up " \
            f"to version {schema.VERSION}" in done.stderr, done.stderr
    assert len(_points_per_run(url)) == 3
