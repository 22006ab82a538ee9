"""The nightly gate of issue 28, night by night on a catalog written through its own tables:
one bad night neither hides nor shrinks a lasting change; the hosts that moved are named
with their own change; ``--scope host``; p-values printed at any size; nothing called
stable that could not be tested; the newest runs that did not complete.

The series are the issue's: 20 nights of a 2-host plan, h1 always at 2000 IOPS, h2 at
2000 but night 5 alone at 1500 and 1700 (-15%) from night 9 on; the fleet 4000 -> 3700
(-7.5%). As from fio's ``--rate_iops``: no noise at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.history.analysis import Options, analyse_plan
from benchtui.history.catalog import open_catalog
from benchtui.history.gate import gate
from benchtui.history.render import gate_lines, p_text
from tests.history_points import PLAN, fill, night, series

FLEET, H1, H2 = (("randread", "iops", "read", scope) for scope in ("(fleet)", "h1", "h2"))


def h2(n: int) -> float:
    return 1500.0 if n == 5 else 1700.0 if n >= 9 else 2000.0


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_one_bad_night_neither_hides_nor_shrinks_the_change(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = str(tmp_path / "c.sqlite")
    cat = open_catalog(url)
    ids = series(cat, [FLEET, H1, H2])
    codes, lines = [], []
    for n in range(1, 21):
        night(cat, n, {ids[FLEET]: 2000.0 + h2(n), ids[H1]: 2000.0, ids[H2]: h2(n)})
        result = gate(cat, PLAN, Options())
        codes.append(result.exit_code)
        lines.append(gate_lines(result))
    cat.close()
    # never before the change; by its 5th night at the new level (night 13); once
    assert codes == [0] * 12 + [3] + [0] * 7, codes
    assert lines[4][0].startswith("history: 0 regressions, 0 improvements, 0 suspected, "
                                  "0 stable, 1 too short"), lines[4]
    # the bad night, while it is the newest: pending, out of the analysis
    assert "  pending: randread iops read (fleet): run 5 (night-005.btr, 3.50k, -12.5%) from " \
        "the level before it: a transient or the first run of a new level; the next run " \
        "tells" in lines[4], lines[4]
    assert lines[10][0].startswith("history: 0 regressions, 0 improvements, 1 suspected"), \
        lines[10]
    (line,) = [x.strip() for x in lines[12][1:] if x.strip().startswith("regression")]
    assert line.startswith("regression: randread: IOPS read -7.5%; IOPS read 4.00k ± 0 -> "
                           "3.70k ± 0, p < 1e-300; between run 8 (night-008.btr, "), line
    assert "commit c8 -> c9; hosts: h2 -15.0% (2.00k -> 1.70k) (change " in line, line
    # show and analyze list the bad night as a transient, out of the levels
    code, out = run(capsys, "history", "show", PLAN, "--catalog", url, "--host", "(fleet)")
    assert code == 0
    assert "transients (one-off runs, left out of the levels, never gated): run 5 " \
        "(night-005.btr, 3.50k, -12.5%)" in out, out
    assert "levels: 4.00k (7 runs) -> 3.70k (12 runs)" in out, out
    assert "last change: -7.5% at run 9 (night-009.btr, " in out and "commit c8 -> c9), " \
        "p < 1e-300" in out, out
    code, out = run(capsys, "history", "show", PLAN, "--catalog", url, "--host", "h2")
    assert "last change: -15.0% at run 9" in out and "run 5 (night-005.btr, 1.50k, -25.0%)" \
        in out, out
    code, out = run(capsys, "history", "analyze", PLAN, "--catalog", url)
    assert "| randread iops read h2 | 20 | 1.70k ± 0 | -15.0% | 9 | commit c8 -> c9 | " \
        "< 1e-300 | confirmed regression | 5 (-25.0%) |" in out, out
    code, out = run(capsys, "history", "analyze", PLAN, "--catalog", url, "--format", "json")
    groups = json.loads(out)[f"{PLAN}.randread.h2"]
    (bad,) = [g for g in groups if g.get("transients")]
    assert bad["changes"] == [] and bad["attributes"]["commit"] == "c5"
    assert bad["transients"][0]["level"] == 2000.0 and bad["transients"][0]["run_id"] == 5


def test_scope_host_gates_on_the_hosts_own_series(tmp_path: Path) -> None:
    cat = fill(str(tmp_path / "c.sqlite"), {
        FLEET: [2000.0 + h2(n) for n in range(1, 21)], H1: [2000.0] * 20,
        H2: [h2(n) for n in range(1, 21)]})
    result = gate(cat, PLAN, Options(), scope="host")
    assert result.exit_code == 3
    assert result.summary().startswith("history: 1 regression, 0 improvements, 0 suspected, "
                                       "1 stable"), result.summary()
    line = gate_lines(result)[1]
    assert line.startswith("  regression: randread on h2: IOPS read -15.0%; IOPS read 2.00k ± "
                           "0 -> 1.70k ± 0"), line
    assert "hosts:" not in line
    # the fleet's series then gates apart (its own change, not yet gated)
    assert gate(cat, PLAN, Options(), scope="all").summary().startswith(
        "history: 1 regression"), "the fleet's change"


def test_p_values_print_honestly_at_any_size() -> None:
    assert [p_text(p) for p in (0.0, 1e-320, 1e-300, 2.8e-34, 0.0004, 0.012)] == \
        ["< 1e-300", "< 1e-300", "1.0e-300", "2.8e-34", "4.0e-04", "0.012"]


def test_what_could_not_be_tested_is_never_stable(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A two-point series with a 75% drop cannot be tested (the t-test needs a third
    point): too short, whatever --require-history says; three points: suspected."""
    url = str(tmp_path / "c.sqlite")
    fill(url, {FLEET: [400.0, 100.0]}).close()
    for extra in ((), ("--require-history", "2")):
        code, out = run(capsys, "history", "gate", PLAN, "--catalog", url, *extra)
        assert code == 0 and out.startswith("history: 0 regressions, 0 improvements, "
                                            "0 suspected, 0 stable, 1 too short"), out
        assert "too short: randread iops read (fleet): 2 of the 10 points needed" in out, out
    code, out = run(capsys, "history", "show", PLAN, "--catalog", url)
    assert "verdict: too short (2 of 10 points)" in out, out
    url3 = str(tmp_path / "three.sqlite")
    fill(url3, {FLEET: [400.0, 400.0, 100.0]}).close()
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url3)
    assert out.startswith("history: 0 regressions, 0 improvements, 1 suspected"), out


def test_the_newest_runs_that_did_not_complete(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Twelve good nights, then three cut or failed (one at half the IOPS): the gate says
    how many and which, and fails when the newest --require-complete did not complete."""
    url = str(tmp_path / "c.sqlite")
    values = [1000.0 + (i % 3) for i in range(12)] + [500.0, 990.0, 1001.0]
    fill(url, {FLEET: values}, outcomes={13: "interrupted", 14: "failed",
                                         15: "interrupted"}).close()
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url,
                    "--require-history", "10")
    assert code == 3, out
    assert out.startswith("history: 0 regressions, 0 improvements, 0 suspected, 1 stable, "
                          "0 too short; the newest 3 runs did not complete"), out
    assert re.search(r"incomplete: run 13 \(night-013\.btr, [-\d: ]+, interrupted\), run 14 "
                     r"\(night-014\.btr, [-\d: ]+, failed\), run 15 \(night-015\.btr, "
                     r"[-\d: ]+, interrupted\): not analysed; fails the gate "
                     r"\(--require-complete 1\)", out), out
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url, "--require-complete",
                    "3")
    assert code == 3, out
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url, "--require-complete",
                    "4")
    assert code == 0 and "not yet a failure (--require-complete 4)" in out, out
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url, "--require-complete",
                    "0")
    assert code == 0, out
    # a completed run after them: nothing to say
    cat = open_catalog(url)
    night(cat, 16, {1: 1000.0})
    cat.close()
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url)
    assert code == 0 and "incomplete" not in out and "did not complete" not in out, out


def test_attributes_either_side_of_a_change(tmp_path: Path) -> None:
    cat = open_catalog(str(tmp_path / "c.sqlite"))
    ids = series(cat, [FLEET])
    for n in range(1, 19):
        night(cat, n, {ids[FLEET]: 1000.0 + n % 3 if n <= 12 else 800.0 + n % 3},
              attributes={"commit": f"c{n:02d}", "build": str(40 + n // 13),
                          "branch": "main"})
    (a,) = analyse_plan(cat, PLAN, Options())
    line = gate_lines(gate(cat, PLAN, Options()))[1]
    assert "commit c12 -> c13, build 40 -> 41;" not in line  # a host list follows no ';'
    assert "between run 12 (night-012.btr, " in line and \
        "commit c12 -> c13, build 40 -> 41 (change 1)" in line, line
    assert "branch" not in line  # the same either side
    assert a.points[12].attributes == {"commit": "c13", "build": "41", "branch": "main"}


def test_a_long_streak_of_incomplete_runs_is_counted(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    url = str(tmp_path / "c.sqlite")
    fill(url, {FLEET: [1000.0] * 19}, outcomes=dict.fromkeys(range(12, 20), "watchdog")).close()
    code, out = run(capsys, "history", "gate", PLAN, "--catalog", url)
    assert code == 3 and "the newest 8 runs did not complete" in out, out
    assert "incomplete: 8 runs, the newest 5: run 15 (night-015.btr, " in out, out
    assert "run 19 (night-019.btr, " in out and "run 14 (" not in out, out


#: Real nights of a rate-held fio (400 IOPS, the bad night 300, 340 from night 10) on this
#: machine while 8 test suites ran beside it: fio starved of CPU for a second does fewer
#: I/Os than its rate (the figures of three runs of tests/test_history_fio.py).
LOADED = {
    "a run between the levels": [399.9, 399.9, 399.6, 399.9, 299.9, 399.4, 399.9, 266.0,
                                 360.1, 339.8, 339.6, 339.2, 339.7, 320.5, 339.9, 339.9],
    "three bad nights in a row": [399.9, 399.5, 399.5, 338.8, 299.8, 384.5, 399.0, 398.9,
                                  400.2, 340.0, 339.9, 339.8, 340.0, 339.5, 339.7, 339.9],
    "one night in three slowed": [399.1, 376.5, 399.9, 397.9, 299.9, 400.2, 346.6, 399.7,
                                  399.1, 340.1, 339.9, 339.2, 306.9, 339.8, 339.9, 103.4],
}


@pytest.mark.parametrize("name", LOADED)
def test_a_loaded_machine_s_nights_gate_once_by_the_fifth_run(tmp_path: Path, name: str
                                                             ) -> None:
    """The drop fails one gate, by its 5th run at the new level, whatever the runs the load
    slowed (a run between the levels counts in the drop until both steps have held, not
    one failure per step); once each step has held, it is measured from the level that
    held: -15%, between the last run at 400 and the first at 340."""
    values = LOADED[name]
    cat = open_catalog(str(tmp_path / "c.sqlite"))
    ids = series(cat, [FLEET])
    codes = []
    for n, v in enumerate(values, 1):
        night(cat, n, {ids[FLEET]: v})
        codes.append(gate(cat, PLAN, Options()).exit_code)
    assert codes.count(3) == 1 and codes.index(3) + 1 <= 14, codes
    (a,) = analyse_plan(cat, PLAN, Options())
    last = a.changes[-1]
    assert (last.status, last.run_id) == ("confirmed", 10), a.changes
    assert values[last.prev_run_id - 1] > 395, a.changes  # the last run at 400
    assert -15.5 < last.percent < -14.5
