"""The report's arithmetic on per-series statistics: jobs summed, fleet percentiles from
merged histograms (not averaged), the steadiness verdict, and the gate's thresholds."""

from __future__ import annotations

import pytest

from benchtui.errors import UsageError
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample
from benchtui.report import figures
from benchtui.report.gate import ABOVE, BELOW, parse_threshold, regressions
from benchtui.report.markdown import render_markdown, report_tables
from benchtui.report.model import Report, Row, Value
from benchtui.report.steady import steadiness
from benchtui.report.window import without_part
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import SeriesStats, accumulate_stats


def _stats(points: dict[tuple[str, tuple[tuple[str, str], ...]], list[float]],
           hist: dict[int, int] | None = None) -> dict[SeriesDef, SeriesStats]:
    batches = []
    for (metric, labels), values in points.items():
        for i, v in enumerate(values):
            s = Sample(t=float(i), tool="fio", kind="interval", metric=metric, value=v,
                       labels=dict(labels), host="h")
            if metric == "latency_histogram" and hist is not None:
                s.histogram = LatencyHistogram(dict(hist))
            batches.append((float(i), [s]))
    return accumulate_stats(batches)


def _job(n: int, op: str = "read") -> tuple[tuple[str, str], ...]:
    return (("job", f"j{n}"), ("op", op))


def test_jobs_add_up_and_status_lines_do_not_double() -> None:
    stats = _stats({("iops", _job(1)): [100, 200], ("iops", _job(2)): [300, 300],
                    ("iops", (("job", "all"), ("op", "read"))): [999, 999]})
    assert figures.summed(stats, "iops", "interval") == {"read": 450.0}
    only_all = _stats({("iops", (("job", "all"), ("op", "write"))): [10, 30]})
    assert figures.summed(only_all, "iops", "interval") == {"write": 20.0}


def test_fleet_percentiles_are_quantiles_of_merged_histograms() -> None:
    fast = _stats({("iops", _job(1)): [1000], ("latency_histogram",
                   (*_job(1), ("measure", "clat"))): [99]}, hist={100_000: 99, 200_000: 1})
    slow = _stats({("iops", _job(1)): [10], ("latency_histogram",
                   (*_job(1), ("measure", "clat"))): [1]}, hist={50_000_000: 1})
    a = figures.io_figures(fast, None, prefer_summary=False)
    b = figures.io_figures(slow, None, prefer_summary=False)
    fleet = figures.fleet_io([a, b])
    assert fleet.iops == {"read": 1010.0}
    merged = LatencyHistogram({100_000: 99, 200_000: 1, 50_000_000: 1})
    assert fleet.quantiles["read"]["p99"] == merged.quantile(0.99)
    # an average of the hosts' p99 would say 25 ms; the fleet's p99 is 0.2 ms
    assert fleet.quantiles["read"]["p99"] == pytest.approx(200e-6)
    assert fleet.latency_source["read"] == "histogram"


def _iops(values: list[float]) -> dict[SeriesDef, SeriesStats]:
    return _stats({("iops", _job(1)): values})


def test_steadiness() -> None:
    flat = steadiness(_iops([1000, 1010, 990, 1000]), _iops([1005, 995, 1000, 1000]))
    assert flat is not None and flat.steady and flat.cv < 0.02
    noisy = steadiness(_iops([500, 1500, 400, 1600]), _iops([1500, 500, 1400, 600]))
    assert noisy is not None and not noisy.steady and "varies" in noisy.describe()
    falling = steadiness(_iops([1000, 1000, 1000, 1000]), _iops([850, 850, 850, 850]))
    assert falling is not None and not falling.steady and falling.trend == pytest.approx(-0.15)
    assert steadiness(_iops([1000]), _iops([1000])) is None  # too few points to tell


def _report(*values: Value) -> Report:
    row = Row("s", "randread", "h", "randread", 1, 0.0, 1.0, list(values))
    return Report(["s"], [row])


def test_thresholds() -> None:
    below = parse_threshold("95%", BELOW)
    p99 = parse_threshold("p99=110%", ABOVE)
    assert below.metrics[0] == "iops" and p99.metrics == ("latency_p99_seconds",)
    report = _report(Value("iops", "read", 90, "ops/s", baseline=100),
                     Value("latency_p99_seconds", "read", 1.2, "s", baseline=1.0),
                     Value("latency_p50_seconds", "read", 5.0, "s", baseline=1.0))
    found = regressions(report, [below, p99])
    assert [(r.value.metric, r.threshold.direction) for r in found] == [
        ("iops", BELOW), ("latency_p99_seconds", ABOVE)]
    assert not regressions(report, [parse_threshold("iops=90%", BELOW)])
    for bad in ("ninety", "p42=10%", "=5%"):
        with pytest.raises(UsageError):
            parse_threshold(bad, ABOVE)
    # a bare number is not taken as a percentage silently: the error shows the form
    with pytest.raises(UsageError, match=r"--fail-below '95' needs its percent sign: write "
                       r"--fail-below 95%"):
        parse_threshold("95", BELOW)
    with pytest.raises(UsageError, match=r"write --fail-above p99=110%"):
        parse_threshold("p99=110", ABOVE)


def _step_rows(step: str, *values: Value) -> list[Row]:
    return [Row("s", step, h, step, 1, 0.0, 1.0, list(values)) for h in ("h1", "h2")]


def test_shares_only_beside_figures_that_compare_and_lower_is_better_said() -> None:
    util = Value("disk_util_ratio", "", 0.032, "ratio", item="vda", baseline=0.0097)
    await_ = Value("disk_await_seconds", "read", 2e-4, "s", item="vda", baseline=1e-4)
    net = Value("net_bandwidth_bytes", "send", 2.9e9, "B/s", baseline=2.2e9)
    tables = report_tables(Report(["s"], _step_rows("net", net, util, await_)))
    (table,) = [t for t in tables if t.step == "net"]
    cells = dict(zip(table.header, table.body[0], strict=True))
    # a network step: the disk's figures are context, not compared ("3.20% (330%)")
    assert cells["disk util"] == "3.20% vda" and cells["disk await"] == "r 200 µs"
    assert cells["net send"].endswith("(132%)")
    assert table.note == ""
    p99 = Value("latency_p99_seconds", "read", 1e-3, "s", baseline=2e-3)
    iops = Value("iops", "read", 9e4, "ops/s", baseline=1e5)
    tables = report_tables(Report(["s"], _step_rows("rand", iops, p99, util, await_)))
    (table,) = [t for t in tables if t.step == "rand"]
    cells = dict(zip(table.header, table.body[0], strict=True))
    # an I/O step: its devices compare too; which percentages are better lower is said
    assert cells["disk util"] == "3.20% (330%) vda" and cells["r p99"] == "1.00 ms (50%)"
    assert table.note == "latency and await: lower is better (under 100% of the baseline's " \
        "is better)"
    markdown = render_markdown(Report(["s"], _step_rows("rand", iops, p99)))
    assert "\n_latency: lower is better (under 100% of the baseline's is better)_\n" in markdown


def test_a_windows_stats_less_its_edges_are_the_windows_own() -> None:
    """``window.without_part``: a stretch's statistics less those of its first seconds are
    the statistics of the rest (means, deviations, histograms), what the report reads when
    it takes a window from the recording's stats blocks; a partial interval in the part is
    refused (its weight depends on the series' times)."""
    def batch(t: float, v: float, counts: dict[int, int], duration: float | None = None
              ) -> tuple[float, list[Sample]]:
        util = Sample(t=t, tool="iostat", kind="interval", metric="disk_util_ratio", value=v,
                      labels={"device": "sda"}, host="h")
        hist = Sample(t=t, tool="fio", kind="interval", metric="latency_histogram",
                      value=float(sum(counts.values())), labels={"op": "read"}, host="h",
                      duration=duration)
        hist.histogram = LatencyHistogram(dict(counts))
        return t, [util, hist]

    data = [batch(float(i), 0.1 * i, {1000 * (i % 3 + 1): i + 1}) for i in range(10)]
    whole = accumulate_stats(data)
    assert without_part(whole, accumulate_stats(data[:4]))
    rest = accumulate_stats(data[4:])
    for d, st in rest.items():
        assert (whole[d].count, whole[d].total, whole[d].mean, whole[d].stdev) == \
            pytest.approx((st.count, st.total, st.mean, st.stdev))
        if st.histogram is not None:
            assert whole[d].histogram == st.histogram
    partial = [batch(0.0, 0.5, {1000: 1}, duration=0.3), *data[1:]]
    stats = accumulate_stats(partial)
    before = {d: (st.count, st.total) for d, st in stats.items()}
    assert not without_part(stats, accumulate_stats(partial[:2]))
    assert {d: (st.count, st.total) for d, st in stats.items()} == before
