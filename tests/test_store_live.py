"""The live store: bounded series, fleet sums, fleet percentiles from merged histograms."""

from __future__ import annotations

import pytest

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC, Sample
from benchtui.store.live import LiveStore


def s(host: str, metric: str, value: float, t: float, **labels: str) -> Sample:
    return Sample(t, "fio", "interval", metric, value, labels, host)


def test_series_are_bounded_by_the_window() -> None:
    store = LiveStore(window=5)
    store.add(s("h1", "iops", float(i), float(i), job="j", op="read") for i in range(100))
    (series,) = store.find("iops")
    assert list(series.values) == [95.0, 96.0, 97.0, 98.0, 99.0]
    assert series.last_t == 99.0
    assert store.samples_total == 100


def test_fleet_sum_and_hosts() -> None:
    store = LiveStore()
    store.add([s("h1", "iops", 100.0, 1.0, job="j", op="read"),
               s("h2", "iops", 250.0, 1.0, job="j", op="read"),
               s("h2", "iops", 50.0, 1.0, job="j", op="write")])
    assert store.fleet_sum("iops", op="read") == 350.0
    assert store.fleet_sum("iops") == 400.0
    assert store.hosts() == ["h1", "h2"]


def test_fleet_latency_is_from_merged_histograms_not_averaged_percentiles() -> None:
    # Host 1: 99 fast ops at 1 ms; host 2: 1 op at 100 ms. Averaging the hosts' p99 would say
    # ~50 ms; the true fleet p99 over 100 ops is 1 ms and p99.9 is 100 ms.
    h1 = LatencyHistogram({1_000_000: 99})
    h2 = LatencyHistogram({100_000_000: 1})
    store = LiveStore()
    for host, h in (("h1", h1), ("h2", h2)):
        sample = Sample(1.0, "fio", "interval", HISTOGRAM_METRIC, float(h.total()),
                        {"job": "j", "op": "read", "measure": "clat"}, host, histogram=h)
        store.add([sample])
    q = store.fleet_latency((0.5, 0.99, 0.999), op="read")
    assert q == {0.5: 0.001, 0.99: 0.001, 0.999: 0.1}
    assert store.fleet_latency(op="write") == {}


def test_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window"):
        LiveStore(window=0)


def test_a_batch_like_the_last_goes_where_it_went_and_one_unlike_it_does_not() -> None:
    """``add`` reuses where a batch's samples went for the next batch alike (host, tool,
    size, metrics, labels, kinds, histograms); any difference places it afresh: the store
    holds what sample-by-sample placing gives, whatever the batches look like."""
    hist = LatencyHistogram({1000: 3, 2000: 1})

    def batch(t: float, host: str = "h1", op: str = "read",
              histogram: LatencyHistogram | None = hist, kind: str = "interval") -> list[Sample]:
        return [Sample(t, "fio", kind, "iops", 10 * t, {"job": "j", "op": op}, host),
                Sample(t, "fio", "interval", HISTOGRAM_METRIC, 4.0, {"job": "j", "op": op},
                       host, histogram=histogram),
                Sample(t, "fio", "interval", "bw", t, {"op": op, "job": "j"}, host)]

    batches = [batch(1.0), batch(2.0), batch(3.0, op="write"), batch(4.0),
               batch(5.0, histogram=None), batch(6.0, host="h2"), batch(7.0, kind="summary"),
               batch(8.0) + batch(8.0, host="h2")[:1], batch(9.0)]
    store, each = LiveStore(), LiveStore()
    for b in batches:
        store.add(b)
        for sample in b:
            each.add([sample])
    for got in (store, each):
        assert got.samples_total == sum(map(len, batches))
        series = {k: (list(v.times), list(v.values)) for k, v in got.series.items()}
        assert series[("h1", "fio", "iops", (("job", "j"), ("op", "read")))] == (
            [1.0, 2.0, 4.0, 5.0, 8.0, 9.0], [10.0, 20.0, 40.0, 50.0, 80.0, 90.0])
        assert series[("h1", "fio", "iops", (("job", "j"), ("op", "write")))] == ([3.0], [30.0])
        assert series[("h2", "fio", "iops", (("job", "j"), ("op", "read")))] == (
            [6.0, 8.0], [60.0, 80.0])
        # a histogram sample without its histogram is a series of its count
        assert series[("h1", "fio", HISTOGRAM_METRIC, (("job", "j"), ("op", "read")))] == (
            [5.0], [4.0])
        assert [s.t for s in got.summaries] == [7.0]
        assert got.host_last_t == {"h1": 9.0, "h2": 8.0}
        assert got.fleet_histogram(op="read").counts == {1000: 6, 2000: 2}
    assert {k: list(v.values) for k, v in store.series.items()} == \
        {k: list(v.values) for k, v in each.series.items()}
