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
import math
import random
from pathlib import Path

import pytest

from benchtui.history.analysis import (
    CONFIRMED,
    SUSPECTED,
    TRANSIENT,
    Analysed,
    Options,
    Point,
    SeriesKey,
    analyse,
    analyse_plan,
)
from benchtui.history.edivisive import change_points
from benchtui.history.gate import gate
from benchtui.history.transients import transients
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
    assert len(result.improvements) == 1
    assert [h for h, _f in result.improvements[0].hosts] == ["h1"]
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


def _analysed(values: list[float], case: dict | None = None) -> Analysed:
    """``values`` analysed as a series of IOPS (a fixture case named for latency: of mean
    latency, on a log scale)."""
    latency = case is not None and "lat" in case["name"]
    key = SeriesKey(1, PLAN, "randread", "a", "latency_mean_seconds" if latency else "iops",
                    "read", "(fleet)", "e")
    points = [Point(i + 1, float(i), v, "completed", "s", "p") for i, v in enumerate(values)]
    options = Options() if case is None else Options(window=case["window"], p=case["p"],
                                                     min_change=case["min_magnitude"])
    return analyse(key, points, options)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['name']}-w{c['window']}-p{c['p']}"
                         f"-m{c['min_magnitude']}")
def test_the_analysis_keeps_otavas_change_points_where_there_are_no_outliers(case: dict
                                                                             ) -> None:
    """Transients set apart, dropped change points recovered: on series without outliers
    nothing is set apart and the change points are Otava's; on those with outliers, the
    outliers are the transients (or the newest point is pending) and none is a change.
    (The real latency of a loaded machine has odd runs too: there, only the second.)"""
    a = _analysed(case["values"], case)
    kind = case["name"].split("-")[0]
    if "lat" in case["name"]:  # Otava's on the logarithms, as the analysis tests latency
        theirs = [c.index for c in change_points([math.log(v) for v in case["values"]],
                                                 window=case["window"], max_p=case["p"],
                                                 min_magnitude=case["min_magnitude"])]
    else:
        theirs = [c["index"] for c in case["changes"]]
    if kind in ("outlier", "burst"):
        odd = sorted(a.transients) + ([a.pending.index] if a.pending else [])
        values = case["values"]
        level = sorted(values)[len(values) // 2]
        big = [i for i, v in enumerate(values) if abs(v / level - 1) > 0.1]
        # (and, at most, one run of the noise beyond 3.5 sd: outlier-0's 193 among 200s)
        assert set(big) <= set(odd) and len(odd) <= len(big) + 1, (odd, big)
        assert not a.changes
    elif kind == "real" and (a.transients or a.pending):
        # real runs may have odd ones (a latency of cache misses among hits): set apart,
        # the change points are those of the other runs, only none of them at an odd run
        assert not {f.at for f in a.changes} & set(a.transients)
    else:
        assert not a.transients and a.pending is None
        assert [f.at for f in a.changes] == theirs


def test_transients_one_off_runs_and_bursts_never_a_change() -> None:
    flat = [1000.0 + (i * 7919 % 13) for i in range(30)]  # +-0.6%, deterministic
    # a bad night, a burst of two, a lucky one
    values = list(flat)
    values[8] = 700.0
    values[15], values[16] = 800.0, 790.0
    values[22] = 1300.0
    odd = transients(values, span=5)
    assert [t.index for t in odd.transients] == [8, 15, 16, 22] and odd.pending is None
    assert odd.transients[0].deviation == pytest.approx(700 / 1007.5 - 1)  # its neighbours
    # the first run of a new level is none, nor a step between two levels
    step = flat[:15] + [900.0 + v - 1000 for v in flat[15:]]
    assert transients(step, span=5).transients == []
    stairs = [100.0, 100.5, 200.0, 201.0, 400.0, 402.0, 800.0, 801.0]
    assert transients(stairs, span=5).transients == []
    # the newest run far from the level before it is pending, until the next run tells
    assert transients([*flat, 700.0], span=5).pending is not None
    assert transients([*flat, 700.0, 700.5], span=5).pending is None
    assert [t.index for t in transients([*flat, 700.0, 1001.0],
                                        span=5).transients] == [30]
    # with no noise at all, a run is apart when it differs by more than the floor (1%)
    assert [t.index for t in transients([400.0] * 6 + [395.0] + [400.0] * 3,
                                        span=5).transients] == [6]
    assert transients([400.0] * 6 + [398.0] + [400.0] * 3, span=5).transients == []
    assert transients([400.0] * 6 + [398.0], span=5).pending is None


def test_a_bad_first_night_at_the_new_level_still_counts_as_a_night() -> None:
    """The first run at the new level was a bad one (a transient): the new level has held
    for 5 runs at the 5th, not the 6th."""
    values = [1000.0 + (i * 7919 % 13) for i in range(30)] + [600.0] + \
        [900.0 + (i * 7919 % 13) for i in range(4)]
    a = _analysed(values)
    assert sorted(a.transients) == [30]
    (f,) = a.changes
    assert (f.status, f.run_id, f.prev_run_id) == (CONFIRMED, 32, 30)


def test_the_ttest_takes_any_finite_figure() -> None:
    """Figures near the largest float (1e154 squared, 1e308 summed) overflowed: the
    t-test and the method now scale them by a power of two (exactly: the same numbers)."""
    m1, m2, s1, s2, p = ttest([1e154, 2e154, 1.5e154], [1e308, 1.7e308, 1.2e308])
    assert (m1, m2) == (1.5e154, pytest.approx(1.3e308)) and 0 < p < 0.01
    assert s1 == pytest.approx(4.0824829e153) and s2 == pytest.approx(2.9439203e307)
    assert ttest([1.7e308] * 3, [-1.7e308] * 2)[4] < 1e-10
    left, right = [9.0, 10.0, 11.0, 10.0, 10.0], [11.0, 12.0, 13.0, 12.0, 12.0]
    small = ttest(left, right)
    big = ttest([v * 2.0 ** 900 for v in left], [v * 2.0 ** 900 for v in right])  # ~1e271
    assert big == (*(x * 2.0 ** 900 for x in small[:4]), small[4])
    assert [(c.index, c.forward) for c in change_points([1e307] * 10 + [1.7e308] * 10)] == \
        [(10, pytest.approx(16.0))]
    a = _analysed([1e154] * 12 + [1e155] * 6)
    assert [(f.at, f.status) for f in a.changes] == [(12, CONFIRMED)]
