"""The history catalog as a hostile user finds it (issue 29), on SQLite: absurd figures, ids
beyond the database's range, a foreign database, catalogs made by an older and a newer
benchtui, a flipped bit in a stored figure, a read-only file system and a full one, a
catalog locked by another writer, a host named ``(fleet)``. One sentence each, never a
traceback, and nothing written where nothing may be.

Sessions: ``benchtui import`` of a real fio output, edited where the figure must be absurd
(tests/history_sessions.py)."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.history import schema
from tests.helpers import FIXTURES
from tests.history_sessions import (
    PLAN,
    ROOT,
    benchtui,
    in_namespace,
    no_traceback,
    session,
    sessions,
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _runs(catalog: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(catalog) as conn:
        return [(int(r[0]), str(r[1])) for r in conn.execute("SELECT id, path FROM runs "
                                                             "ORDER BY id")]


def test_absurd_figures_are_refused_at_import_and_left_out_when_stored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok1 = session(tmp_path, "ok-1.btr", day=1)
    big154 = session(tmp_path, "big-154.btr", iops="1" + "0" * 154, day=2)
    big308 = session(tmp_path, "big-308.btr", iops="1" + "0" * 308, hosts=("h1", "h2"), day=3)
    ok2 = session(tmp_path, "ok-2.btr", day=4)
    catalog = tmp_path / "c.sqlite"
    code, _out, err = run(capsys, "history", "import", str(ok1), str(big154), str(big308),
                          str(ok2), "--catalog", str(catalog))
    assert code == 1, err
    lines = err.strip().splitlines()
    refused = [x for x in lines if "was not added" in x]
    assert len(refused) == 2, err
    assert refused[0].startswith(f"benchtui: {big154}: host h1, step randread: IOPS read of "
                                 "1e+154 ops/s is beyond any tool's range"), refused[0]
    assert refused[1].startswith(f"benchtui: {big308}: host h1, step randread: IOPS read of "
                                 "1e+308 ops/s is beyond any tool's range"), refused[1]
    assert sum("added run" in x for x in lines) == 2  # the others still go in
    # nothing of the absurd sessions is stored: no fleet IOPS of inf, no mean latency of 0
    assert [p for _i, p in _runs(catalog)] == [str(ok1), str(ok2)]

    # a catalog that already holds such figures (an older benchtui stored them): the point
    # is left out with a sentence, the analysis goes on
    with sqlite3.connect(catalog) as conn:
        conn.execute("UPDATE points SET value = 1e308 WHERE run_id = 2 AND series_id = "
                     "(SELECT id FROM series WHERE scope = 'h1' AND metric = 'iops')")
        conn.execute("UPDATE points SET value = 9e999 WHERE run_id = 2 AND series_id = "
                     "(SELECT id FROM series WHERE scope = '(fleet)' AND metric = 'iops')")
    for command in (("show",), ("gate",), ("analyze", "--format", "json"),
                    ("analyze", "--format", "html", "-o", str(tmp_path / "h.html"))):
        code, _out, err = run(capsys, "history", command[0], PLAN, *command[1:],
                              "--catalog", str(catalog))
        assert code == 0, err
        assert f"run 2 ({ok2}), h1: IOPS read of 1e+308 ops/s is beyond any tool's range" \
            in err, err
        assert f"run 2 ({ok2}), (fleet): IOPS read is not a finite number (inf)" in err, err
    code, out, _err = run(capsys, "history", "check", "--catalog", str(catalog))
    assert code == 1 and "DAMAGE: values: run 2" in out, out
    assert "DAMAGE: figures: run 2" in out  # and its digest no longer matches


def test_ids_beyond_the_database_range_are_no_such_change_or_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = str(tmp_path / "c.sqlite")
    assert run(capsys, "history", "import", str(session(tmp_path, "s.btr")), "--catalog",
               catalog)[0] == 0
    for argv, said in ((("ack", str(2**63)), f"there is no change {2**63} "),
                       (("exclude", str(2**63), "--reason", "x"), f"there is no run {2**63} "),
                       (("env-change", str(2**64 + 5)), f"there is no run {2**64 + 5} "),
                       (("exclude", str(2**63 - 1), "--reason", "x"),
                        f"there is no run {2**63 - 1} ")):
        code, _out, err = run(capsys, "history", *argv, "--catalog", catalog)
        assert code == 2 and said in err, err


def test_a_foreign_database_is_refused_and_left_byte_identical(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "app.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE runs (id INTEGER, who TEXT)")
        conn.execute("INSERT INTO runs VALUES (1, 'not benchtui')")
    conn.close()
    s = session(tmp_path / "s", "s.btr")
    before, files = _digest(foreign), sorted(p.name for p in tmp_path.iterdir())
    for argv in (("show", PLAN), ("gate", PLAN), ("export",), ("check",), ("import", str(s)),
                 ("exclude", "1", "--reason", "x")):
        code, _out, err = run(capsys, "history", *argv, "--catalog", str(foreign))
        assert code == 1, (argv, err)
        assert f"history catalog {foreign}: is not a benchtui catalog (it holds tables of its " \
               "own: runs); nothing was written to it" in err, err
    assert _digest(foreign) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files  # no -wal, no -shm
    # record --history finds out before the run: no recording is made
    out = tmp_path / "r.btr"
    code, _out, err = run(capsys, "record", "plan.toml", "-o", str(out), "--history",
                          str(foreign))
    assert code == 1 and "is not a benchtui catalog" in err and not out.exists(), err
    # an empty file is no catalog yet to a command that reads, and stays empty
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    code, _out, err = run(capsys, "history", "show", PLAN, "--catalog", str(empty))
    assert code == 1 and "holds no history catalog yet" in err
    assert empty.stat().st_size == 0


def test_schema_versions_newer_refused_older_upgraded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a catalog of schema version 1, made by benchtui before versions were checked
    old = tmp_path / "v1.sqlite"
    old.write_bytes((FIXTURES / "history" / "catalog_v1.sqlite").read_bytes())
    code, out, err = run(capsys, "history", "show", PLAN, "--catalog", str(old))
    assert code == 0, err
    assert f"history catalog {old}: upgraded from schema version 1 to {schema.VERSION}" in err
    assert "(3 runs, 3 recorded)" in out
    code, out, err = run(capsys, "history", "check", "--catalog", str(old))
    assert code == 0 and "3 run(s) hold what their import wrote" in out, out
    assert "upgraded" not in err  # once
    code, _out, err = run(capsys, "history", "import", str(session(tmp_path, "s.btr")),
                          "--catalog", str(old))
    assert code == 0 and "added run 4" in err, err
    # one made by a newer benchtui: refused, untouched
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE catalog_meta SET value = '99' WHERE key = 'schema'")
    conn.close()
    before = _digest(old)
    for argv in (("show", PLAN), ("import", str(session(tmp_path, "t.btr", day=9))),
                 ("check",)):
        code, _out, err = run(capsys, "history", *argv, "--catalog", str(old))
        assert code == 1, err
        assert "was made by a newer benchtui (benchtui 0.1.0): its schema is version 99, " \
               f"this benchtui knows up to version {schema.VERSION}" in err, err
    assert _digest(old) == before


def test_history_check_finds_a_flipped_bit_in_a_figure_and_a_damaged_page(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = tmp_path / "c.sqlite"
    paths = sessions(tmp_path / "s", 3)
    assert run(capsys, "history", "import", *map(str, paths), "--catalog", str(catalog))[0] == 0
    code, out, _err = run(capsys, "history", "check", "--catalog", str(catalog))
    assert code == 0 and out.strip().endswith("history check: no damage found"), out
    with sqlite3.connect(catalog) as conn:  # a figure stored as an 8-byte double
        (value,) = conn.execute("SELECT value FROM points WHERE run_id = 2 AND "
                                "value != CAST(value AS INTEGER) LIMIT 1").fetchone()
    conn.close()
    data = bytearray(catalog.read_bytes())
    packed = struct.pack(">d", value)
    assert data.count(packed) >= 1
    at = data.index(packed) + 7
    data[at] ^= 0x01  # the last bit of its mantissa
    catalog.write_bytes(bytes(data))
    code, out, _err = run(capsys, "history", "check", "--catalog", str(catalog))
    assert code == 1, out
    assert "ok: structure: every page" in out  # SQLite's own checks see nothing wrong
    damaged = [x for x in out.splitlines() if "DAMAGE" in x]
    assert len(damaged) == 1 and "figures: run" in damaged[0], out
    assert "what is stored differs from what its import wrote" in damaged[0]
    # a damaged page (the points table's root: its page type byte) is found when the catalog
    # is opened, before anything is read or written in it
    with sqlite3.connect(catalog) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'points'"
                               ).fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    data = bytearray(catalog.read_bytes())
    data[(root - 1) * size] = 0x07  # not a b-tree page type
    catalog.write_bytes(bytes(data))
    before = _digest(catalog)
    for argv in (("show", PLAN), ("import", str(session(tmp_path, "t.btr", day=9)))):
        code, _out, err = run(capsys, "history", *argv, "--catalog", str(catalog))
        assert code == 1 and f"history catalog {catalog}: is damaged" in err, err
        assert f"benchtui history check --catalog {catalog}" in err
    assert _digest(catalog) == before
    code, out, _err = run(capsys, "history", "check", "--catalog", str(catalog))
    assert code == 1 and "DAMAGE: structure:" in out, out


def test_a_host_named_fleet_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from benchtui.session import importer
    from tests.history_sessions import fio_output

    out = tmp_path / "f.btr"
    code, _out, err = run(capsys, "import", str(fio_output(tmp_path)), "--host", "(fleet)",
                          "--step", "randread", "-o", str(out))
    assert code == 2 and "'(fleet)' cannot be a host name" in err and not out.exists(), err
    plan = tmp_path / "p.toml"
    plan.write_text('[hosts."(fleet)"]\nlocal = true\n[[step]]\nname = "x"\ntool = "fio"\n'
                    'hosts = "all"\nargs = ["--name=x"]\n')
    code, _out, err = run(capsys, "check", str(plan))
    assert code == 2 and 'host name "(fleet)" may hold only letters' in err, err
    # a session an older benchtui imported with such a host: refused by history import
    monkeypatch.setattr(importer, "_refuse_reserved_hosts", lambda runs: None)
    old = session(tmp_path, "old.btr", hosts=("(fleet)", "h2"))
    monkeypatch.undo()
    code, _out, err = run(capsys, "history", "import", str(old), "--catalog",
                          str(tmp_path / "c.sqlite"))
    assert code == 1, err
    assert f"{old}: a host is named '(fleet)', the name benchtui keeps for the fleet's " \
           "figures; the session was not added" in err


def test_read_only_and_full_file_systems_are_told_apart(tmp_path: Path) -> None:
    paths = sessions(tmp_path / "s", 14)
    ro, full = tmp_path / "ro", tmp_path / "full"
    ro.mkdir()
    full.mkdir()
    assert benchtui("history", "import", str(paths[0]), "--catalog", str(ro / "c.sqlite")
                    ).returncode == 0
    plan = ROOT / "examples" / "local-demo.toml"
    done = in_namespace(f"""
        mount --bind {ro} {ro} && mount -o remount,ro,bind {ro} || exit 99
        $BT history import {paths[1]} --catalog {ro}/c.sqlite; echo "import $?"
        $BT history show {PLAN} --catalog {ro}/c.sqlite >/dev/null; echo "show $?"
        $BT history check --catalog {ro}/c.sqlite >/dev/null; echo "check $?"
        $BT record {plan} -o {tmp_path}/r.btr --history {ro}/c.sqlite; echo "record $?"
    """)
    assert done.returncode != 99, done.stderr
    no_traceback(done)
    assert done.stdout.split() == ["import", "1", "show", "0", "check", "0", "record", "1"], \
        done.stdout + done.stderr
    read_only = f"history catalog {ro}/c.sqlite: is read-only here: its file system is " \
                "mounted read-only"
    assert done.stderr.count(read_only) == 2, done.stderr  # import, and record before its run
    assert not (tmp_path / "r.btr").exists()
    done = in_namespace(f"""
        mount -t tmpfs -o size=2m benchtui-full {full} || exit 99
        $BT history import {paths[0]} --catalog {full}/c.sqlite 2>/dev/null
        head -c $(( $(df -k --output=avail {full} | tail -1) * 1024 - 4096 )) /dev/zero \\
            > {full}/filler 2>/dev/null
        $BT history import {' '.join(map(str, paths[1:]))} --catalog {full}/c.sqlite
        echo "full $?"
        rm {full}/filler
        $BT history import {' '.join(map(str, paths[1:]))} --catalog {full}/c.sqlite \\
            2>/dev/null; echo "freed $?"
        $BT history check --catalog {full}/c.sqlite | tail -1
    """)
    assert done.returncode != 99, done.stderr
    no_traceback(done)
    assert "history catalog" in done.stderr and "the disk holding it is full" in done.stderr
    assert "read-only" not in done.stderr
    assert done.stdout.split("\n")[:3] == ["full 1", "freed 0", "history check: no damage "
                                           "found"], done.stdout + done.stderr


def _hold_lock(catalog: Path) -> subprocess.Popen[str]:
    """Another process holding the catalog's write lock until a line on its stdin."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(catalog)!r}); c.execute('BEGIN IMMEDIATE')\n"
         "print('locked', flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_locked_catalog_is_waited_for_said_and_given_up_in_bounded_time(
        tmp_path: Path) -> None:
    paths = sessions(tmp_path / "s", 4)
    catalog = tmp_path / "c.sqlite"
    assert benchtui("history", "import", str(paths[0]), "--catalog", str(catalog)
                    ).returncode == 0
    waits = {"BENCHTUI_CATALOG_LOCK_TIMEOUT": "0.5", "BENCHTUI_CATALOG_RETRY": "2"}
    holder = _hold_lock(catalog)
    try:
        start = time.monotonic()
        done = benchtui("history", "import", *map(str, paths), "--catalog", str(catalog),
                        env=waits)
        took = time.monotonic() - start
    finally:
        holder.communicate("\n", timeout=30)
    no_traceback(done)
    assert done.returncode == 1 and took < 20, (took, done.stderr)
    assert "is already in the catalog as run 1" in done.stderr
    assert f"history catalog {catalog}: locked by another writer (database is locked); " \
           "trying again for up to 2 s" in done.stderr
    # (the last try began before 2 s had passed, and waits for the lock like every other)
    assert re.search(r"still locked by another writer after [23] s; nothing was written",
                     done.stderr), done.stderr
    assert f"{paths[1]} was not added, nor the 2 session(s) after it" in done.stderr
    # the lock let go while the import waits: it goes on and adds every session
    holder = _hold_lock(catalog)
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "history", "import",
                             *map(str, paths), "--catalog", str(catalog)], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True,
                            env={**__import__("os").environ, **waits,
                                 "BENCHTUI_CATALOG_RETRY": "60"})
    assert proc.stderr is not None
    said = ""
    while "trying again" not in said:
        line = proc.stderr.readline()
        assert line, said
        said += line
    holder.communicate("\n", timeout=30)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 0, said + rest
    assert [i for i, _p in _runs(catalog)] == [1, 2, 3, 4]


def test_wait_settings_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHTUI_CATALOG_LOCK_TIMEOUT", "soon")
    code, _out, err = run(capsys, "history", "show", PLAN, "--catalog",
                          str(tmp_path / "c.sqlite"))
    assert code == 2 and "BENCHTUI_CATALOG_LOCK_TIMEOUT must be a number of seconds above " \
        "0 (at most 86400), not 'soon'" in err, err
