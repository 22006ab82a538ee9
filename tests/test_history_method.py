"""The change-point method held to Apache Otava's own results, and the analysis built on it
(confirmation, transients, environment changes, exclusions, the gate's verdicts).

tests/fixtures/history/otava_changes.json holds Otava 0.8.0's change points (index, p,
means) on synthetic series (steps, noise, outliers, bursts, drifts, several changes,
constants) and real ones (nightly IOPS and latency of real fio sessions, per-second IOPS of
a real fio capture), made by benchmarks/history_otava_fixture.py with Otava installed in a
throwaway virtualenv. The documented differences (benchtui/history/edivisive.py) do not
arise in these series: the change points must be the same, and p and the means equal to
1e-6 (relative).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchtui.history.analysis import (
    CONFIRMED,
    SUSPECTED,
    TRANSIENT,
    Options,
    analyse_plan,
)
from benchtui.history.edivisive import change_points
from benchtui.history.gate import gate
from benchtui.history.ttest import ttest
from tests.history_points import PLAN, fill

FIXTURE = Path(__file__).parent / "fixtures" / "history" / "otava_changes.json"
CASES = json.loads(FIXTURE.read_text())["cases"]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12 + 1e-6 * abs(b)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['name']}-w{c['window']}-p{c['p']}"
                         f"-m{c['min_magnitude']}")
def test_change_points_equal_otavas(case: dict) -> None:
    mine = change_points(case["values"], window=case["window"], max_p=case["p"],
                         min_magnitude=case["min_magnitude"])
    theirs = case["changes"]
    assert [c.index for c in mine] == [c["index"] for c in theirs]
    for c, o in zip(mine, theirs, strict=True):
        assert _close(c.pvalue, o["pvalue"]), (c.pvalue, o["pvalue"])
        assert _close(c.mean_before, o["mean_before"])
        assert _close(c.mean_after, o["mean_after"])


def test_the_fixture_covers_what_the_issue_asks() -> None:
    names = {c["name"].split("-")[0] for c in CASES}
    assert {"step", "noise", "outlier", "real", "multi", "drift"} <= names
    assert any(c["changes"] for c in CASES) and any(not c["changes"] for c in CASES)


def test_ttest_matches_scipys_definition() -> None:
    # scipy.stats.ttest_ind_from_stats(10, 1, 5, 12, 1, 5) (population sds as Otava passes)
    _m1, _m2, _s1, _s2, p = ttest([9, 10, 11, 10, 10], [11, 12, 13, 12, 12])
    assert _close(p, 0.0036942853527829136) or 0 < p < 0.01
    assert ttest([1.0, 1.0], [1.0, 1.0])[4] != ttest([1.0, 1.0], [1.0, 1.0])[4]  # NaN


def _noise(n: int, level: float, sd: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(level, sd) for _ in range(n)]


def _one(url: str, values: list[float], metric: str = "iops", **kw: object):
    cat = fill(url, {("randread", metric, "read", "(fleet)"): values}, **kw)  # type: ignore[arg-type]
    return cat, analyse_plan(cat, PLAN, Options())[0]


def test_a_held_change_is_confirmed_a_young_one_suspected(tmp_path: Path) -> None:
    _cat, a = _one(str(tmp_path / "a.sqlite"), _noise(20, 1000, 5, 1) + _noise(6, 850, 5, 2))
    assert [(f.status, f.verdict, f.run_id) for f in a.changes] == \
        [(CONFIRMED, "regression", 21)]
    _cat, b = _one(str(tmp_path / "b.sqlite"), _noise(20, 1000, 5, 1) + _noise(3, 850, 5, 2))
    assert [(f.status, f.needs) for f in b.changes] == [(SUSPECTED, 2)]


def test_a_single_bad_run_is_transient_never_confirmed(tmp_path: Path) -> None:
    values = _noise(30, 1000, 5, 3)
    values[20] = 700.0
    cat, a = _one(str(tmp_path / "a.sqlite"), values)
    assert all(f.status != CONFIRMED for f in a.changes)
    assert any(f.status == TRANSIENT for f in a.changes) or not a.changes
    assert gate(cat, PLAN, Options()).exit_code == 0


def test_latency_up_is_a_regression_and_is_analysed_on_a_log_scale(tmp_path: Path) -> None:
    values = _noise(20, 1e-4, 2e-6, 4) + _noise(8, 1.3e-4, 2e-6, 5)
    _cat, a = _one(str(tmp_path / "a.sqlite"), values, metric="latency_p99_seconds")
    (f,) = a.changes
    assert f.verdict == "regression" and f.status == CONFIRMED
    assert 26 < f.percent < 34  # the change of the latency itself, not of its logarithm


def test_failed_and_excluded_runs_are_kept_but_not_analysed(tmp_path: Path) -> None:
    values = _noise(20, 1000, 5, 6)
    values[10] = 200.0  # a run whose step failed
    values[15] = 300.0  # a run excluded by hand
    cat = fill(str(tmp_path / "a.sqlite"), {("randread", "iops", "read", "(fleet)"): values},
               outcomes={11: "failed"})
    cat.execute("INSERT INTO annotations (kind, run_id, reason, created) "
                "VALUES ('exclude', 16, 'disk full', 0)")
    (a,) = analyse_plan(cat, PLAN, Options())
    assert len(a.points) == 20 and a.analysed_count == 18
    assert not a.changes
    assert not a.points[10].analysed and a.points[15].excluded == "disk full"


def test_an_environment_change_is_a_boundary_not_a_regression(tmp_path: Path) -> None:
    values = _noise(20, 1000, 5, 7) + _noise(10, 800, 5, 8)
    cat = fill(str(tmp_path / "a.sqlite"), {("randread", "iops", "read", "(fleet)"): values})
    assert gate(cat, PLAN, Options()).exit_code == 3
    cat2 = fill(str(tmp_path / "b.sqlite"), {("randread", "iops", "read", "(fleet)"): values})
    cat2.execute("INSERT INTO annotations (kind, run_id, reason, created) "
                 "VALUES ('env-change', 21, 'kernel 6.12', 0)")
    result = gate(cat2, PLAN, Options())
    assert result.exit_code == 0 and not result.regressions


def test_gate_verdicts_improvements_ack_and_require_history(tmp_path: Path) -> None:
    cat = fill(str(tmp_path / "a.sqlite"), {
        ("randread", "iops", "read", "(fleet)"): _noise(20, 1000, 5, 9) + _noise(8, 1200, 5, 10),
        ("randread", "iops", "read", "h1"): _noise(20, 500, 3, 11) + _noise(8, 600, 3, 12),
        ("seqread", "bandwidth_bytes", "read", "(fleet)"): _noise(28, 1e9, 1e6, 13)})
    result = gate(cat, PLAN, Options())
    assert result.exit_code == 0
    assert len(result.improvements) == 1 and result.improvements[0].hosts == ["h1"]
    assert result.summary() == ("history: 0 regressions, 1 improvement, 0 suspected, "
                                "1 stable, 0 too short")
    assert gate(cat, PLAN, Options(), require=30).exit_code == 4
    # a regression acknowledged before any gate saw it does not fail the gate
    cat2 = fill(str(tmp_path / "b.sqlite"),
                {("randread", "iops", "read", "(fleet)"): _noise(20, 1000, 5, 9)
                 + _noise(8, 800, 5, 10)})
    (a,) = analyse_plan(cat2, PLAN, Options())
    from benchtui.history.gate import sync

    sync(cat2, [a])
    cat2.execute("UPDATE change_points SET acked = 1 WHERE id = ?", (a.changes[0].id,))
    cat2.commit()
    assert gate(cat2, PLAN, Options()).exit_code == 0
