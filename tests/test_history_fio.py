"""The history end to end on real fio sessions: a rate-limited step (fio ``rate_iops`` in a
file the job includes, so that the plan, and so the series, stays the same while the level
the "system" delivers changes).

The nightly job of issue 28, as a user runs it: 16 nights recorded with ``benchtui record
... --history CATALOG --attr commit=cNN``, each followed by ``benchtui history gate``: 4
nights at 400 IOPS, one bad night at 300, 4 at 400, then 7 at 340 (15% lower). Before
them 4 spare sessions at 400 and after them 6 more (without the catalog), and the catalogs
the other tests make from these sessions, imported into SQLite and into a real PostgreSQL
server: 8 nights at 400 then 6 at 340 (the bad night left out); a single bad run among good
ones; a cut run.

The gates look at IOPS and bandwidth only (``--metric``): the rate holds those whatever else
the machine runs, while the latency of a read served from the page cache moves with the
load of the tests running beside these (a real change the gate would rightly report).

Each fio run lasts 3 s (docs/history.md's example: 6 s); each run's figure is fio's own
end-of-run IOPS (as the report's), so the levels read what fio was held to: 400 and 340.
Not always: on a machine loaded enough, a run starved of CPU near its end does fewer I/Os
than its rate (``HELD``). Each session's IOPS is checked: the tests that need exact
levels take the sessions that held their rate (the spares stand in), and the nightly job
says which of its nights did not (``Recorded.slowed``).

The gates are given ``--min-change 3%``, as docs/history.md's nightly job is: a run held
to its rate is within 0.15% of it, so two nights in a row that the load slowed by a
percent are a level of their own to a gate that reports any change (a real change of what
fio delivered, -1%, which then took the drop that followed it into its level: "-9.2%
between run 6 and run 7" in a failed run of the suite). What these tests are about is the
drop of 15%.
"""

from __future__ import annotations

import atexit
import csv
import functools
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchtui.store.recording import SessionReader
from tests.helpers import require_tool
from tests.pg_server import postgres_server

ROOT = Path(__file__).resolve().parents[1]
STEP = "randread-limited"
PLAN = f"""
[session]
name = "nightly"

[hosts.here]
local = true

[[step]]
name = "{STEP}"
tool = "fio"
hosts = "all"
jobfile = "job.fio"
"""
JOB = """[limited]
filename={data}
size=8m
rw=randread
bs=4k
ioengine=psync
runtime=3
time_based
include {rate}
{priority}"""
#: Run as root (CI is), fio's job runs at nice -10: a job starved of CPU near its end does
#: fewer I/Os than its rate (``HELD``), and a CI run saw four nights in a row slowed by 2-6%
#: (376 and 391 IOPS held to 400, then 323 and 325 held to 340) and the gate say 3 twice.
#: Ten times the weight of the suite's processes keeps it to its rate; the gate, not fio
#: under load, is what these tests are about. Without root fio could not take it.
PRIORITY = "nice=-10\n" if os.geteuid() == 0 else ""
HIGH, LOW, BAD = 400, 340, 300
#: Recorded first, without the catalog: spares at the old level (see ``clean``).
SPARE = [HIGH] * 4
#: The nights of the nightly job (recorded with ``--history``, gated after each): the bad
#: night is the 5th, the drop starts at the 10th (its 5th run at the new level: night 14).
NIGHTLY = [HIGH] * 4 + [BAD] + [HIGH] * 4 + [LOW] * 7
FIRST_LOW = NIGHTLY.index(LOW) + 1
#: Then, recorded without the catalog, 6 more at the old level (5 and a spare).
AFTER = [HIGH] * 6
ORDER = SPARE + NIGHTLY + AFTER
#: A session whose fio did not hold its rate within this (relative) was slowed by the load
#: of the machine (fio's rate is a ceiling: a run starved of CPU near its end does fewer
#: I/Os), and is not what these tests assume: no noise at all. A run that held its rate is
#: within 0.15% of it (fio's run time is in whole milliseconds, give or take an I/O); one
#: 1% off after two that were 1% off the other way is a transient to the analysis (its
#: floor, ``transients.FLOOR``): half of that is still no noise to it.
HELD = 0.005

pytestmark = pytest.mark.slow


def benchtui(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


#: The smallest change the analyses of these tests report (see the module's docstring).
MIN_CHANGE = ("--min-change", "3%")
#: What the gates of these tests look at (see the module's docstring).
THROUGHPUT = ("--metric", "iops", "--metric", "bw", *MIN_CHANGE)


@dataclass(frozen=True)
class Recorded:
    top: Path
    #: Every session file, in the order recorded (``ORDER``), and fio's IOPS in each.
    paths: list[Path]
    iops: list[float]
    #: The nightly job's catalog, and each night's gate (exit status, output).
    catalog: str
    gates: list[tuple[int, str]]

    def held(self, k: int) -> bool:
        """Whether fio held its rate in the ``k``-th session."""
        return abs(self.iops[k] / ORDER[k] - 1) <= HELD

    def slowed(self) -> list[int]:
        """The nights of the nightly job whose fio did not hold its rate."""
        return [n for n in range(1, len(NIGHTLY) + 1) if not self.held(len(SPARE) + n - 1)]


def _iops(path: Path) -> float:
    """fio's own end-of-run IOPS in a session (one host, one job: the report's figure, and
    so the catalog's), read from the file (not through a ``report`` process each)."""
    with SessionReader.open(str(path)) as reader:
        found = [s.value for s in reader.samples(metrics=("iops",), t0=reader.start,
                                                 t1=reader.end + 1)
                 if s.kind == "summary" and s.labels.get("op") == "read"]
    assert len(found) == 1, (path, found)
    return found[0]


@functools.cache
def recorded() -> Recorded:
    """The 26 sessions, recorded once per test run (about 5 s each): 4 spares, the nightly
    job's 16 with its catalog and its gates, then 6 more."""
    top = Path(tempfile.mkdtemp(prefix="benchtui-history-"))
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    rate = top / "rate.fio"
    (top / "job.fio").write_text(JOB.format(data=top / "data.bin", rate=rate,
                                            priority=PRIORITY))
    (top / "plan.toml").write_text(PLAN)
    catalog = str(top / "nightly.sqlite")
    paths, gates = [], []
    for k, iops in enumerate(ORDER):
        night = k - len(SPARE) + 1
        rate.write_text(f"rate_iops={iops}\n")
        path = top / (f"night-{night:02d}.btr" if night > 0 else f"spare-{k}.btr")
        history = ("--history", catalog, "--attr", f"commit=c{night:02d}", "--attr",
                   "branch=main") if 0 < night <= len(NIGHTLY) else ()
        done = benchtui("record", str(top / "plan.toml"), "-o", str(path), *history)
        assert done.returncode == 0, done.stderr
        paths.append(path)
        if history:
            assert f"history: added run {night} to" in done.stderr, done.stderr
            gated = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT)
            gates.append((gated.returncode, gated.stdout + gated.stderr))
    return Recorded(top, paths, [_iops(p) for p in paths], catalog, gates)


def _import(catalog: str, paths: list[Path]) -> None:
    """Import ``paths`` in order, as commits c01, c02...."""
    for i, path in enumerate(paths, 1):
        done = benchtui("history", "import", str(path), "--catalog", catalog, "--skip", "1",
                        "--attr", f"commit=c{i:02d}", "--attr", "branch=main")
        assert done.returncode == 0, done.stderr
        assert "added run" in done.stderr


def clean(rate: int, *, before: int | None = None, after: int | None = None) -> list[Path]:
    """The sessions at ``rate`` whose fio held it, recorded before or after the ``k``-th
    session of ``ORDER``; the bad night is never one of them."""
    rec = recorded()
    return [p for k, (p, r) in enumerate(zip(rec.paths, ORDER, strict=True))
            if r == rate and rec.held(k) and (before is None or k < before)
            and (after is None or k >= after) and k != len(SPARE) + NIGHTLY.index(BAD)]


def fourteen() -> list[Path]:
    """8 sessions at 400 then 6 at 340, each at its rate (the spares stand in for the
    nightly job's nights that the load of the machine slowed)."""
    first_low = len(SPARE) + FIRST_LOW - 1
    high, low = clean(HIGH, before=first_low)[-8:], clean(LOW)[:6]
    if len(high) < 8 or len(low) < 6:
        pytest.skip(f"the load of this machine slowed fio below its rate in too many "
                    f"sessions: {_figures_of(recorded())}")
    return high + low


def _figures_of(rec: Recorded) -> str:
    return ", ".join(f"{p.name}: {v:.1f} (rate {r})"
                     for p, v, r in zip(rec.paths, rec.iops, ORDER, strict=True))


def _levels_change(rec: Recorded, *, held_only: bool) -> float:
    """The drop in percent between the nightly job's two levels as fio delivered them: the
    mean IOPS of its nights at ``LOW`` against that of its nights at ``HIGH`` (the bad night
    apart); of the nights that held their rate only, or of all."""
    first = len(SPARE)
    nights = [(v, r) for k, (v, r) in enumerate(zip(rec.iops[first:], NIGHTLY, strict=False),
                                                 first) if rec.held(k) or not held_only]
    before = [v for v, r in nights if r == HIGH]
    after = [v for v, r in nights if r == LOW]
    return (statistics.fmean(after) / statistics.fmean(before) - 1) * 100


def _check_regression(catalog: str) -> None:
    done = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # (a run the load slowed by a percent may be a suspected change of a percent)
    assert lines[0].startswith("history: 1 regression, 0 improvements, "), lines
    line = next(x for x in lines[1:] if x.strip().startswith("regression:"))
    assert STEP in line
    found = re.search(r"IOPS read (-\d+\.\d)%", line)
    assert found is not None, line
    assert -16.5 < float(found.group(1)) < -13.5, line
    # the change happened between the 8th run and the 9th (commits c08 -> c09)
    assert "between run 8 " in line and "and run 9 " in line, line
    assert "commit c08 -> c09" in line, line
    assert re.search(r"hosts: here -1\d\.\d% \(\d+ -> \d+\)", line), line
    # a gate reports a change once: the next night's gate passes
    again = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT)
    assert again.returncode == 0, again.stdout
    assert again.stdout.startswith("history: 0 regressions"), again.stdout


def test_the_nightly_job_catches_the_drop_by_its_fifth_run_whatever_the_bad_night(
        ) -> None:
    """Issue 28: the bad night (300 IOPS, night 5) is a transient: it neither fails a gate
    nor stays in the level before the drop, so the drop (-15%) fails the gate by its 5th run
    at the new level, once, its size within a point and the host's own change named.

    A night the load of the machine slowed (fio below its rate: ``Recorded.slowed``) is
    noise these nights do not have otherwise: a slowed night either side of the drop is a
    run between the levels, which the gate counts in the drop until both steps have held
    (the size it reports then lies between the two, and the drop is placed a run off), and
    one after two nights slowed the other way is a transient, which moves the run the drop
    is said to follow; the rest holds whatever the load."""
    require_tool("fio")
    rec = recorded()
    codes = [code for code, _out in rec.gates]
    where = f"{list(enumerate(codes, 1))}; {_figures_of(rec)}"
    assert 3 not in codes[:FIRST_LOW - 1], where
    failed = codes.index(3) + 1 if 3 in codes else None
    assert failed is not None and failed <= FIRST_LOW + 4, where
    # once: after it, the gate passes
    assert all(code == 0 for code in codes[failed:]), where
    out = rec.gates[failed - 1][1]
    line = next(x for x in out.splitlines() if x.strip().startswith("regression:")) \
        + f"\n(the nights' fio IOPS: {_figures_of(rec)})"
    assert f": {STEP}: IOPS read -" in line, line
    size = re.search(r"IOPS read (-\d+\.\d)%", line)
    host = re.search(r"hosts: here (-\d+\.\d)% \((\d+) -> (\d+)\)", line)
    assert size is not None and host is not None and host.group(1) == size.group(1), line
    # every night as fio was told (else a run between the levels, or a transient)
    exact = not rec.slowed()
    if exact:
        assert -16.0 <= float(size.group(1)) <= -14.0, line
        assert f"between run {FIRST_LOW - 1} " in line and f"and run {FIRST_LOW} " in line, \
            line
        assert f"commit c{FIRST_LOW - 1:02d} -> c{FIRST_LOW:02d}" in line, line
        assert (host.group(2), host.group(3)) in (("400", "340"), ("399", "340")), line
        # the bad night is not in the level before it (it would make its deviation 30)
        level = re.search(r"IOPS read (\d+) ± ([\d.]+) -> (\d+) ± ([\d.]+)", line)
        assert level is not None and float(level.group(2)) < 3, line
    else:
        assert -16.0 <= float(size.group(1)) <= -11.0, line
    # once every step has held, the drop is measured from the level that held: -15%
    # (after it, a run the load slowed by a percent may be a change of a percent)
    analysed = benchtui("history", "analyze", "nightly", "--catalog", rec.catalog,
                        "--format", "json", *MIN_CHANGE)
    doc = json.loads(analysed.stdout)
    drops = [c for g in doc[f"nightly.{STEP}.(fleet)"] for c in g["changes"]
             if c["metric"] == "iops.read" and c["status"] == "confirmed"]
    assert len(drops) == 1, (drops, where)
    change = drops[0]["forward_change_percent"]
    if exact:
        assert -16.0 <= change <= -14.0, (drops, where)
    else:
        # nights slowed by the load: the drop the nights' own figures show, within a point,
        # with the slowed nights in their levels or (taken for transients) out of them
        expected = [_levels_change(rec, held_only=h) for h in (False, True)]
        assert min(abs(change - x) for x in expected) <= 1.0, (change, expected, drops, where)
    if exact:
        assert (drops[0]["prev_run_id"], drops[0]["run_id"]) == (FIRST_LOW - 1, FIRST_LOW), drops
    # show and analyze list the bad night as a transient (and any night the load slowed
    # as much)
    shown = benchtui("history", "show", "nightly", "--catalog", rec.catalog, "--metric",
                     "iops", "--host", "(fleet)")
    assert re.search(r"transients \(one-off runs, left out of the levels, never gated\): "
                     r".*run 5 \(night-05\.btr, (29|30)\d, -2[4-6]\.\d%\)", shown.stdout), \
        shown.stdout
    odd = {t["run_id"]: t["deviation_percent"] for g in doc[f"nightly.{STEP}.(fleet)"]
           for t in g.get("transients", ()) if t["metric"] == "iops.read"}
    assert -26 < odd.get(5, 0) < -24, odd
    table = benchtui("history", "analyze", "nightly", "--catalog", rec.catalog,
                     "--metric", "iops", "--host", "(fleet)", *MIN_CHANGE)
    assert re.search(r"\| ([\d, (+\-.%)]+, )?5 \(-2[4-6]\.\d%\)[^|]*\|$", table.stdout, re.M), \
        table.stdout


def test_sqlite_gate_fails_on_the_sustained_drop(tmp_path: Path) -> None:
    require_tool("fio")
    catalog = str(tmp_path / "history.sqlite")
    _import(catalog, fourteen())
    # importing a session twice changes nothing
    twice = benchtui("history", "import", str(fourteen()[0]), "--catalog", catalog)
    assert twice.returncode == 0 and "already in the catalog as run 1" in twice.stderr
    _check_regression(catalog)
    shown = benchtui("history", "show", "nightly", "--catalog", catalog, "--metric", "iops",
                     "--host", "(fleet)", *MIN_CHANGE)
    assert shown.returncode == 0, shown.stderr
    assert "confirmed regression" in shown.stdout and "14 runs" in shown.stdout


def test_postgresql_gate_fails_on_the_sustained_drop() -> None:
    require_tool("fio")
    with postgres_server() as url:
        _import(url, fourteen())
        _check_regression(url)
        exported = benchtui("history", "export", "nightly", "--catalog", url, "--csv")
        assert exported.returncode == 0, exported.stderr
        header, *rows = exported.stdout.splitlines()
        assert "iops_read" in header.split(",") and len(rows) == 28  # fleet + host x 14


def _figures(catalog: str) -> str:
    """The fleet's IOPS run by run, for an assertion's message."""
    done = benchtui("history", "export", "nightly", "--catalog", catalog, "--csv")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    return "fleet IOPS by run: " + ", ".join(
        f"{r['run_id']}: {float(r['iops_read']):.1f}" for r in rows
        if r["scope"] == "(fleet)" and r["iops_read"])


def test_eleven_sessions_the_change_is_only_suspected(tmp_path: Path) -> None:
    """8 runs at 400 then 3 at 340: found, but not yet held for ``--confirm``'s 5 runs."""
    require_tool("fio")
    catalog = str(tmp_path / "history.sqlite")
    _import(catalog, fourteen()[:11])
    done = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("history: 0 regressions, 0 improvements, 1 suspected"), \
        done.stdout + _figures(catalog)
    assert "needs 2 more run(s)" in done.stdout, done.stdout


def test_a_single_bad_run_among_good_ones_is_never_confirmed(tmp_path: Path) -> None:
    require_tool("fio")
    catalog = str(tmp_path / "history.sqlite")
    # 8 good nights, one bad one (the first at the lower rate), 5 good ones
    later = clean(HIGH, after=len(SPARE) + len(NIGHTLY))
    if len(later) < 5:
        pytest.skip(f"the load of this machine slowed fio below its rate in too many "
                    f"sessions: {_figures_of(recorded())}")
    chosen = fourteen()[:9] + later[:5]
    for path in chosen:
        done = benchtui("history", "import", str(path), "--catalog", catalog, "--skip", "1")
        assert done.returncode == 0, done.stderr
    done = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "regression:" not in done.stdout, done.stdout
    shown = benchtui("history", "show", "nightly", "--catalog", catalog, "--metric", "iops",
                     "--host", "(fleet)", *MIN_CHANGE)
    # the bad run is a transient, never a change (a run the load slowed by a percent or two
    # may make a change of a percent or two here, never a confirmed one)
    assert re.search(r"transients \(.*\): run 9 \(night-1\d\.btr, 3[34]\d, -1[45]\.\d%\)",
                     shown.stdout), shown.stdout
    verdict = next(x for x in shown.stdout.splitlines() if "verdict:" in x)
    assert "confirmed" not in verdict, shown.stdout


def test_record_and_run_add_the_session_when_it_ends(tmp_path: Path) -> None:
    require_tool("fio")
    top = tmp_path
    (top / "rate.fio").write_text(f"rate_iops={HIGH}\n")
    (top / "job.fio").write_text(JOB.format(data=top / "data.bin", rate=top / "rate.fio",
                                            priority=PRIORITY))
    (top / "plan.toml").write_text(PLAN)
    catalog = str(tmp_path / "hooks.sqlite")
    # --attr without the catalog goes nowhere: a usage error, nothing run
    done = benchtui("record", str(top / "plan.toml"), "-o", str(tmp_path / "r.btr"),
                    "--attr", "commit=abc")
    assert done.returncode == 2 and "give --history too" in done.stderr, done.stderr
    done = benchtui("run", str(top / "plan.toml"), "--jsonl", "--record",
                    str(tmp_path / "j.btr"), "--history-catalog", catalog,
                    "--attr", "commit=b2", "--attr", "build=42")
    assert done.returncode == 0, done.stderr
    assert "history: added run 1 to" in done.stderr
    exported = benchtui("history", "export", "nightly", "--catalog", catalog)
    (row,) = [r for r in csv.DictReader(io.StringIO(exported.stdout)) if r["scope"] == "here"]
    assert (row["commit"], row["build"]) == ("b2", "42"), row
    shown = benchtui("history", "show", "nightly", "--catalog", catalog, "--metric", "iops",
                     "--host", "(fleet)", *MIN_CHANGE)
    assert "(1 runs, 1 recorded)" in shown.stdout, shown.stdout


def test_an_interrupted_run_is_kept_and_shown_never_analysed(tmp_path: Path) -> None:
    import signal
    import time

    require_tool("fio")
    top = recorded().top  # the same plan and jobfile: the same series
    (top / "rate.fio").write_text(f"rate_iops={LOW // 2}\n")
    cut = tmp_path / "cut.btr"
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "record", str(top / "plan.toml"),
                             "-o", str(cut)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    err = ""
    while time.monotonic() < deadline and "run" not in err:  # wait for the step to start
        line = proc.stderr.readline() if proc.stderr else ""
        err += line
        if "step randread-limited on" in line:
            break
    time.sleep(2.0)  # of its 3 s: past the 1 s skip, well before its end
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    catalog = str(tmp_path / "c.sqlite")
    _import(catalog, fourteen()[:8])
    done = benchtui("history", "import", str(cut), "--catalog", catalog, "--skip", "1")
    assert done.returncode == 0 and "interrupted" in done.stderr, done.stderr
    shown = benchtui("history", "show", "nightly", "--catalog", catalog, "--metric", "iops",
                     "--host", "(fleet)", *MIN_CHANGE)
    assert "(8 runs, 9 recorded)" in shown.stdout, shown.stdout
    spark = shown.stdout.splitlines()[1].strip()
    # 8 points: never "stable", a change needs 5 runs either side to be confirmed ("too
    # short", or a change that is not confirmed)
    assert spark.endswith("·") and "verdict: stable" not in shown.stdout, shown.stdout
    # a nightly job whose benchmark no longer completes must not pass (--require-complete 1)
    gate = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT)
    assert gate.returncode == 3, gate.stdout
    assert re.match(r"history: 0 regressions, .*, 0 stable, 2 too short(, \d pending)?; the "
                    r"newest run did not complete\n", gate.stdout), gate.stdout
    assert re.search(r"incomplete: run 9 \(cut\.btr, [-\d: ]+, interrupted\): not analysed; "
                     r"fails the gate \(--require-complete 1\)", gate.stdout), gate.stdout
    gate = benchtui("history", "gate", "nightly", "--catalog", catalog, *THROUGHPUT,
                    "--require-complete", "2")
    assert gate.returncode == 0 and "not yet a failure" in gate.stdout, gate.stdout


def _concurrent_imports(catalog: str, paths: list[Path], processes: int = 10) -> None:
    """``processes`` imports of the same sessions at once, as real processes: each session
    is added once, the others are told it is there; every process exits 0."""
    argv = [sys.executable, "-m", "benchtui", "history", "import", *map(str, paths),
            "--catalog", catalog, "--skip", "1"]
    procs = [subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(processes)]
    outs = [(p.wait(timeout=300), p.communicate()[1]) for p in procs]
    said = "\n".join(err for _code, err in outs)
    assert "Traceback" not in said
    assert [code for code, _err in outs] == [0] * processes, said
    assert said.count("added run") == len(paths), said
    assert said.count("is already in the catalog as run") == (processes - 1) * len(paths)
    for path in paths:  # each session added once, by one of the processes
        assert sum(f": {path} (plan" in line for line in said.splitlines()) == 1, path
    runs = benchtui("history", "export", "nightly", "--catalog", catalog, "--csv")
    rows = list(csv.DictReader(io.StringIO(runs.stdout)))
    assert len({r["run_id"] for r in rows}) == len(paths) and len(rows) == 2 * len(paths)
    checked = benchtui("history", "check", "--catalog", catalog)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_ten_concurrent_imports_of_the_same_sessions_sqlite(tmp_path: Path) -> None:
    require_tool("fio")
    _concurrent_imports(str(tmp_path / "history.sqlite"), fourteen())


def test_ten_concurrent_imports_of_the_same_sessions_postgresql() -> None:
    require_tool("fio")
    with postgres_server() as url:
        _concurrent_imports(url, fourteen())
