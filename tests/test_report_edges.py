"""A report's windows start and end with their tools, off the recording's stats-block cuts:
their figures, read from the blocks with the seconds at their edges decoded for every host
at once (``report/run_reads.py``, ``SessionReader.series_stats_many``), are what decoding
every sample gives."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from benchtui.report.build import ReportOptions, build_report
from benchtui.report.figures import METRICS
from benchtui.report.model import Row
from benchtui.report.window import TOOL_METRICS
from benchtui.session.compare import FLEET
from benchtui.store.recording import SessionReader, StatsQuery
from tests import stats_session
from tests.test_recording_stats_blocks import (
    FIXTURE,
    Stats,
    assert_same,
    by_records,
    in_step,
    runs,
)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("edges") / "steps.btr"
    stats_session.write(path, stats_session.records())
    return path


def test_many_queries_at_once_give_what_each_gives_alone(synthetic: Path) -> None:
    """Windows of every host off the cuts, asked together: each is what its records give,
    and what it gives asked alone (without histograms when asked so)."""
    rng = random.Random(5)
    with SessionReader.open(str(synthetic)) as r:
        queries = []
        for host, step, t0, t1 in runs(r):
            wanted = in_step(host, step)
            for _ in range(3):
                a = rng.uniform(t0 - 2.0, t1)
                b = a + rng.uniform(0.1, 25.0)
                queries.append(StatsQuery(a, b, wanted, host, rng.random() < 0.7))  # type: ignore[arg-type]
        queries.append(StatsQuery(r.start, r.end + 1))
        queries.append(StatsQuery(r.start + 3.3, r.start + 51.7, lambda d: d.host == "h2"))
        got = r.series_stats_many(queries)
        assert len(got) == len(queries) and sum(map(bool, got)) > 30
        for q, stats in zip(queries, got, strict=True):
            want = by_records(r, q.t0, q.t1, q.wanted)
            if not q.histograms:
                for st in want.values():
                    st.histogram = None
            assert_same(stats, want)
            assert_same(stats, r.series_stats(q.t0, q.t1, q.wanted, q.host,
                                              histograms=q.histograms))


def _brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``series_stats`` a report asks answered by decoding every record (the
    reference, not a stand-in: ``by_records`` reads the file's own records)."""
    def many(self: SessionReader, queries: list[StatsQuery]) -> list[Stats]:
        out: list[Stats] = []
        for q in queries:
            stats = by_records(self, q.t0, q.t1, q.wanted)
            if not q.histograms:
                for st in stats.values():
                    st.histogram = None
            out.append(stats)
        return out
    monkeypatch.setattr(SessionReader, "series_stats_many", many)


def _same_rows(got: list[Row], want: list[Row]) -> None:
    assert [(r.step, r.host, r.label, r.t0, r.t1) for r in got] == \
        [(r.step, r.host, r.label, r.t0, r.t1) for r in want]
    for g, w in zip(got, want, strict=True):
        assert [(v.metric, v.op, v.item, v.source) for v in g.values] == \
            [(v.metric, v.op, v.item, v.source) for v in w.values], g.host
        for gv, wv in zip(g.values, w.values, strict=True):
            assert math.isclose(gv.value, wv.value, rel_tol=1e-9, abs_tol=1e-15), \
                (g.step, g.host, gv.metric, gv.op)
        gs, ws = g.steadiness, w.steadiness
        assert (gs is None) == (ws is None)
        if gs is not None and ws is not None:
            assert (gs.steady, gs.points) == (ws.steady, ws.points)
            assert math.isclose(gs.cv, ws.cv, rel_tol=1e-9, abs_tol=1e-12)
            assert math.isclose(gs.trend, ws.trend, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("skip", [0.0, 1.0, 5.0, 7.5])
def test_a_reports_figures_are_what_every_sample_gives(synthetic: Path, skip: float,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The report of the session with stats blocks, and of the same session written before
    them (every window decoded), each against the same report with every read decoded
    sample by sample: the same rows, value for value and steadiness verdict for verdict."""
    options = ReportOptions(skip=skip)
    for path in (synthetic, FIXTURE):
        got = build_report([str(path)], options)
        with monkeypatch.context() as m:
            _brute_force(m)
            brute = build_report([str(path)], options)
        rows = [r for r in got.rows if r.host != FLEET]
        assert len(rows) == 12 and all(r.get("iops", "read") for r in rows)
        assert sum(r.steadiness is not None for r in rows) == 12
        with SessionReader.open(str(path)) as r:
            started = {(h, s): t0 for h, s, t0, _t1 in runs(r)}
        # the windows are the tools' own, off the cuts (the run's start plus 5 s multiples)
        assert all(0.01 < (r.t0 - started[(r.host, r.step)]) % 5.0 < 4.99 for r in rows)
        _same_rows(got.rows, brute.rows)


def test_a_report_reads_what_its_figures_and_windows_are_made_of() -> None:
    """The series a report reads of a run (``figures.METRICS``) hold those that tell when
    its tool ran (``window.TOOL_METRICS``)."""
    assert TOOL_METRICS <= METRICS
