"""benchtui.model.format: base units to short strings for people."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchtui.model.format import (
    MISSING,
    format_bit_rate,
    format_byte_rate,
    format_bytes,
    format_count,
    format_duration,
    format_latency,
    format_metric,
    format_ratio,
)

ALL = (
    format_count, format_bytes, format_byte_rate, format_bit_rate, format_latency,
    format_duration, format_ratio,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"), (7, "7"), (412, "412"), (412.3, "412"), (12.34, "12.3"), (0.5, "0.50"),
        (999, "999"), (999.6, "1.00k"), (1000, "1.00k"), (12_345, "12.3k"), (123_456, "123k"),
        (999_700, "1.00M"), (1_250_000, "1.25M"), (3.2e9, "3.20G"), (-12_345, "-12.3k"),
    ],
)
def test_counts(value: float, text: str) -> None:
    assert format_count(value) == text


def test_count_with_unit() -> None:
    assert format_count(1_250_000, "IOPS") == "1.25M IOPS"
    assert format_count(None, "IOPS") == MISSING


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0 B"), (512, "512 B"), (999, "999 B"), (1000, "0.98 KiB"), (4096, "4.00 KiB"),
        (412 * 1024**2, "412 MiB"), (1.5 * 1024**3, "1.50 GiB"), (1023.9 * 1024, "1.00 MiB"),
        (2 * 1024**4, "2.00 TiB"),
    ],
)
def test_bytes(value: float, text: str) -> None:
    assert format_bytes(value) == text


def test_byte_rate() -> None:
    assert format_byte_rate(412 * 1024**2) == "412 MiB/s"
    assert format_byte_rate(45.9 * 1024**2) == "45.9 MiB/s"
    assert format_byte_rate(None) == MISSING


@pytest.mark.parametrize(
    ("bytes_per_second", "text"),
    [(9.41e9 / 8, "9.41 Gbit/s"), (100e6 / 8, "100 Mbit/s"), (12.5, "100 bit/s"), (0, "0 bit/s"),
     (999.9e6 / 8, "1.00 Gbit/s")],
)
def test_bit_rate(bytes_per_second: float, text: str) -> None:
    assert format_bit_rate(bytes_per_second) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"), (850e-9, "850 ns"), (1.5e-9, "1.50 ns"), (412e-6, "412 µs"),
        (0.000_999_7, "1.00 ms"), (1.234e-3, "1.23 ms"), (0.0999, "99.9 ms"), (2.5, "2.50 s"),
        (1234.0, "1234 s"), (-412e-6, "-412 µs"),
    ],
)
def test_latency(seconds: float, text: str) -> None:
    assert format_latency(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"), (4.4, "4s"), (45, "45s"), (59.6, "1m00s"), (185, "3m05s"), (3720, "1h02m"),
        (86400 * 2 + 3 * 3600 + 59, "2d03h"), (-5, "-5s"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("ratio", "text"),
    [(0, "0%"), (0.875, "87.5%"), (1.0, "100%"), (0.0042, "0.42%"), (0.12345, "12.3%"),
     (0.9996, "100%"), (1.5, "150%"), (-1e6, "-100M%")],
)
def test_ratio(ratio: float, text: str) -> None:
    assert format_ratio(ratio) == text


@pytest.mark.parametrize("bad", [None, math.nan, math.inf, -math.inf])
def test_missing_values_show_a_dash(bad: float | None) -> None:
    for fmt in ALL:
        assert fmt(bad) == MISSING


@pytest.mark.parametrize(
    ("metric", "value", "text"),
    [
        ("iops", 22_100, "22.1k"),
        ("bandwidth_bytes", 412 * 1024**2, "412 MiB/s"),
        ("disk_bandwidth_bytes", 4096, "4.00 KiB/s"),
        ("net_bandwidth_bytes", 9.41e9 / 8, "9.41 Gbit/s"),
        ("latency_seconds", 412e-6, "412 µs"),
        ("disk_await_seconds", 0.0021, "2.10 ms"),
        ("disk_util_ratio", 0.5, "50.0%"),
        ("net_retransmits", 3, "3"),
        ("disk_queue_depth", 31.7, "31.7"),
    ],
)
def test_format_by_metric_name(metric: str, value: float, text: str) -> None:
    assert format_metric(metric, value) == text


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_gives_a_short_string(value: float) -> None:
    for fmt in ALL:
        text = fmt(value)
        assert "nan" not in text.lower() and "inf" not in text.lower()
        assert 1 <= len(text) <= 12 or abs(value) > 1e6
