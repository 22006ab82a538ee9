"""SessionReader.series_stats: per-series count/sum/min/max and merged histograms over a
stretch of a real recorded session, checked against the records themselves."""

from __future__ import annotations

import math

import pytest

from benchtui.model.histogram import LatencyHistogram
from benchtui.store.recording import SessionReader
from benchtui.store.recording.series_stats import SeriesStats, series_def


def _brute(reader: SessionReader, t0: float, t1: float) -> dict[object, SeriesStats]:
    """The samples that arrived in [t0, t1), from every record (records arrive slightly out of
    order: a frame may hold one earlier than the frame before it)."""
    out: dict[object, SeriesStats] = {}
    for t, r in reader.timed_records(-math.inf, math.inf):
        if isinstance(r, list) and t0 <= t < t1:
            for s in r:
                key = series_def(s)
                if key in out:
                    out[key].add(t, s)
                else:
                    out[key] = SeriesStats.of(t, s)
    return out


def test_series_stats_equal_the_records_of_every_stretch(reader: SessionReader) -> None:
    span = reader.end - reader.start
    stretches = [(reader.start, reader.end + 1), (reader.start + span / 3, reader.end - span / 4)]
    for t0, t1 in stretches:
        got = reader.series_stats(t0, t1)
        want = _brute(reader, t0, t1)
        assert got.keys() == want.keys() and got
        for key, w in want.items():
            g = got[key]
            assert (g.count, g.minimum, g.maximum, g.first_t, g.last_t) == \
                (w.count, w.minimum, w.maximum, w.first_t, w.last_t)
            assert math.isclose(g.total, w.total, rel_tol=1e-12, abs_tol=1e-12)
            assert math.isclose(g.total_sq, w.total_sq, rel_tol=1e-12, abs_tol=1e-12)
            assert (g.histogram is None) == (w.histogram is None)
            if g.histogram is not None and w.histogram is not None:
                assert g.histogram.counts == w.histogram.counts


def test_series_stats_filter_and_histograms(reader: SessionReader) -> None:
    got = reader.series_stats(reader.start, reader.end + 1,
                              lambda d: d.metric == "latency_histogram")
    assert got and {k.metric for k in got} == {"latency_histogram"}
    for st in got.values():
        assert isinstance(st.histogram, LatencyHistogram)
        assert st.histogram.total() == st.total  # a histogram sample's value is its count
    iops = reader.series_stats(reader.start, reader.end + 1, lambda d: d.metric == "iops")
    for st in iops.values():  # a plain mean, each partial interval weighted by its seconds
        if st.partial is None:
            assert st.mean == st.total / st.count
        else:
            p, k = st.partial, 1.0 / st.interval
            weight = st.count - p.count + p.seconds * k
            assert st.mean == pytest.approx((st.total - p.total + p.weighted * k) / weight)
    assert any(st.partial is not None for st in iops.values())  # fio's last interval
    for st in iops.values():
        assert st.minimum <= st.mean <= st.maximum
        assert 0 <= st.stdev <= st.maximum - st.minimum
    assert reader.series_stats(reader.end + 10, reader.end + 20) == {}
