"""benchtui.model.histogram.merged_quantiles: quantiles of merged histograms held as running
sums, found by a binary search over the union of their keys, are the quantiles of the merged
counts (``LatencyHistogram.merged(...).quantiles``), whatever keys, counts and empty buckets
the parts have; and a part without running sums still merges."""

from __future__ import annotations

import random

import pytest

from benchtui.model.histogram import LatencyHistogram, RunningSumsHistogram, merged_quantiles

QS = (0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0, 1.5)


def sums_histogram(counts: list[tuple[int, int]]) -> RunningSumsHistogram:
    """A histogram held as (ascending keys, running sums), zero counts kept as buckets."""
    keys, cum, total = [], [], 0
    for key, count in sorted(counts):
        total += count
        keys.append(key)
        cum.append(total)
    return RunningSumsHistogram(keys, tuple(cum))


def expected(parts: list[list[tuple[int, int]]]) -> dict[float, float]:
    merged = LatencyHistogram()
    for counts in parts:
        merged.merge(LatencyHistogram({k: v for k, v in counts if v}))
    return merged.quantiles(QS)


@pytest.mark.parametrize("seed", range(40))
def test_running_sums_give_the_quantiles_of_the_merged_counts(seed: int) -> None:
    rnd = random.Random(seed)
    grid = sorted(rnd.sample(range(1_000, 50_000_000), 300))
    parts = []
    for _ in range(rnd.choice((1, 2, 3, 64))):
        keys = rnd.sample(grid, rnd.randint(1, 120))
        parts.append([(k, rnd.choice((0, 0, 1, 3, 1000, rnd.randint(0, 10**6))))
                      for k in keys])
    histograms = [sums_histogram(p) for p in parts]
    got = merged_quantiles(histograms, QS)
    assert got == expected(parts)
    assert all(h.running_sums() is not None for h in histograms)  # no dict was made


def test_shared_keys_empty_parts_and_parts_without_running_sums() -> None:
    keys = [1_000, 2_000, 4_000, 8_000]
    a = RunningSumsHistogram(keys, (0, 5, 5, 6))
    b = RunningSumsHistogram(keys, (1, 1, 1, 1))
    assert merged_quantiles([a, b], (0.0, 0.5, 0.9, 1.0)) == {
        0.0: 1e-6, 0.5: 2e-6, 0.9: 8e-6, 1.0: 8e-6}
    empty = RunningSumsHistogram(keys, (0, 0, 0, 0))
    assert merged_quantiles([empty, empty], (0.5,)) == {}
    assert merged_quantiles([], (0.5,)) == {}
    plain = LatencyHistogram({16_000: 10})
    assert merged_quantiles([a, plain], (0.5, 0.99)) == {0.5: 16e-6, 0.99: 16e-6}
    # keys out of order: merged as counts
    shuffled = RunningSumsHistogram([2_000, 1_000], (3, 4))
    assert merged_quantiles([shuffled, b], (0.5,)) == {0.5: 2e-6}
