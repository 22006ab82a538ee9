"""The model: quantile labels, units and histograms."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample, quantile_label
from benchtui.model.units import (
    parse_bits_rate,
    parse_bytes,
    parse_count,
    parse_duration,
    percent_to_ratio,
)


@pytest.mark.parametrize(("pct", "label"), [
    ("99.900000", "0.999"), ("50.000000", "0.5"), ("99.990000", "0.9999"), (99.99, "0.9999"),
    ("1.00", "0.01"), ("100.000000", "1"), ("0.000000", "0"), ("5.00", "0.05"),
])
def test_quantile_label(pct: str | float, label: str) -> None:
    assert quantile_label(pct) == label


def test_units() -> None:
    assert parse_count("22.1k") == pytest.approx(22100)
    assert parse_count("7349") == 7349
    assert parse_bytes("45.9MiB") == pytest.approx(45.9 * 1024**2)
    assert parse_bytes("801kB/s") == pytest.approx(801000)
    assert parse_bytes("782KiB/s") == pytest.approx(782 * 1024)
    assert parse_bytes("10.5MB", si_as_binary=True) == pytest.approx(10.5 * 1024**2)
    assert parse_bits_rate("9.41", "Gbits/sec") == pytest.approx(9.41e9 / 8)
    assert parse_duration("60039msec") == pytest.approx(60.039)
    assert parse_duration("820.31", "nsec") == pytest.approx(820.31e-9)
    assert percent_to_ratio("99.61%") == pytest.approx(0.9961)
    for bad in ("", "abc", "1e999", "nan", "inf", "12 parsecs"):
        assert parse_count(bad) is None
        assert parse_bytes(bad) is None


def test_histogram_quantiles_like_fio() -> None:
    # 100 completions: 90 at 1 ms, 9 at 2 ms, 1 at 10 ms.
    h = LatencyHistogram({1_000_000: 90, 2_000_000: 9, 10_000_000: 1})
    q = h.quantiles([0.5, 0.9, 0.99, 0.999])
    assert q == {0.5: 0.001, 0.9: 0.001, 0.99: 0.002, 0.999: 0.01}
    assert h.mean() == pytest.approx((90e6 + 18e6 + 10e6) / 100 / 1e9)
    assert LatencyHistogram().quantiles([0.5]) == {}


def test_histogram_delta_and_merge() -> None:
    earlier = LatencyHistogram({1000: 5, 2000: 1})
    later = LatencyHistogram({1000: 8, 2000: 1, 4000: 2})
    d = later.delta(earlier)
    assert d.counts == {1000: 3, 4000: 2}
    assert not later.is_reset_from(earlier)
    assert LatencyHistogram({1000: 1}).is_reset_from(earlier)
    merged = LatencyHistogram.merged([d, LatencyHistogram({1000: 1, 8000: 1})])
    assert merged.counts == {1000: 4, 4000: 2, 8000: 1}


@given(st.dictionaries(st.integers(1, 10**12), st.integers(0, 10**6), max_size=50),
       st.lists(st.floats(0, 1), min_size=1, max_size=6))
def test_histogram_quantiles_are_buckets_and_monotonic(counts: dict[int, int],
                                                        qs: list[float]) -> None:
    h = LatencyHistogram(counts)
    got = h.quantiles(qs)
    if h.total() == 0:
        assert got == {}
        return
    keys = {k / 1e9 for k, v in counts.items() if v > 0}
    ordered = sorted(got.items())
    for (_, a), (_, b) in itertools.pairwise(ordered):
        assert a <= b
    assert all(v in keys and math.isfinite(v) for v in got.values())


def test_sample_json_shape() -> None:
    s = Sample(1.5, "fio", "interval", "iops", 10.0, {"job": "a", "op": "read"}, "db1", 2.0)
    assert list(s.to_dict()) == ["t", "elapsed", "host", "tool", "kind", "metric", "value",
                                 "labels"]
    s2 = Sample(None, "fio", "summary", "iops", 10.0, {}, "db1", 2.0)
    assert s2.to_dict()["t"] is None
