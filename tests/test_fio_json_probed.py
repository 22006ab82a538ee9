"""The percentiles ``benchtui parse`` prints without histograms (``_fio_json_probed``: block
sums, only the blocks holding a percentile subtracted) are those of the exact interval
(``_fio_json_bins.interval``: every bucket subtracted), dump after dump, as fio adds buckets
anywhere; a restart of fio's counters is seen as the exact path sees it. Each test runs on
both paths (``bins_pass``): the compiled pass (``_fio_json_walked``) and pure Python."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.parsers._fio_json_bins import Bins, interval
from benchtui.parsers._fio_json_probed import Probed
from benchtui.parsers._fio_json_walked import Walked, percentile_interval
from benchtui.parsers.fio_json import _percentile_list

pytestmark = pytest.mark.usefixtures("bins_pass")

QS = _percentile_list("10:25:75:99.5")
#: fio's bucket values (ns) in its own scheme: 64 buckets per power of two
BUCKETS = sorted({(64 + i) << e for e in range(4, 20) for i in range(64)})


def _dumps(seed: int, n: int, start: int, grow: int, rate: int) -> list[dict[str, int]]:
    """``n`` cumulative bins objects as fio prints them: keys ascending, buckets only added
    (``grow`` at most per dump, anywhere), counts only going up (``rate`` completions)."""
    rnd = random.Random(seed)
    used = set(rnd.sample(BUCKETS, start))
    counts = dict.fromkeys(used, 0)
    out = []
    for _ in range(n):
        for _ in range(rnd.randint(0, grow)):
            counts.setdefault(rnd.choice(BUCKETS), 0)
        keys = sorted(counts)
        for _ in range(rnd.randint(0, rate)):
            k = keys[min(len(keys) - 1, int(rnd.expovariate(4 / len(keys))))]
            counts[k] += 1
        out.append({str(k): counts[k] for k in sorted(counts)})
    return out


def _both(dumps: list[dict[str, int]]) -> list[tuple[object, object]]:
    """Per dump: (exact percentiles and total, probed ones); None for no interval."""
    exact_prev: Bins | None = None
    probed_prev: Bins | None = None
    out: list[tuple[object, object]] = []
    for raw in dumps:
        exact_prev, exact = interval(raw, exact_prev)
        read = percentile_interval(raw, probed_prev)
        assert read is not None
        probed_prev, probed = read
        assert probed is None or isinstance(probed, Probed | Walked)
        out.append((exact and (exact.total, exact.quantiles(QS) if exact.total else None),
                    probed and (probed.total, probed.quantiles(QS) if probed.total else None)))
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), start=st.integers(1, 400), grow=st.integers(0, 40),
       rate=st.integers(0, 3000))
def test_probed_percentiles_are_the_exact_ones(seed: int, start: int, grow: int,
                                               rate: int) -> None:
    for exact, probed in _both(_dumps(seed, 12, start, grow, rate)):
        assert probed == exact


def test_a_capture_growing_from_one_bucket_to_a_thousand() -> None:
    """Blocks carried while buckets are added, cut again when one grew too wide."""
    for exact, probed in _both(_dumps(7, 60, 1, 30, 500)):
        assert probed == exact


def test_a_bucket_gone_or_a_count_down_is_a_restart() -> None:
    first = {"1000": 5, "2000": 7, "3000": 1}
    prev, _ = interval(first, None)
    read = percentile_interval(first, None)
    assert read is not None
    pprev, _ = read
    for raw in ({"1000": 6, "3000": 9},  # a bucket went away
                {"1000": 6, "2500": 1, "3000": 9, "4000": 1},  # ... while others came
                {"1000": 2, "2000": 7, "3000": 1},  # a count went down
                {"1000": 5, "2000": 7}):  # the last bucket went away
        assert interval(raw, prev)[1] is None
        read = percentile_interval(raw, pprev)
        assert read is not None and read[1] is None, raw


def test_buckets_out_of_order_take_the_exact_path() -> None:
    assert percentile_interval({"2000": 1, "1000": 1}, None) is None
    prev, _ = interval({"2000": 1, "1000": 1}, None)
    assert percentile_interval({"2000": 2, "1000": 1}, prev) is None


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000])
def test_from_zero(n: int) -> None:
    raw = {str(k): 1 + i % 3 for i, k in enumerate(BUCKETS[:n])}
    _, exact = interval(raw, None)
    read = percentile_interval(raw, None)
    assert exact is not None and read is not None and read[1] is not None
    assert read[1].quantiles(QS) == exact.quantiles(QS) and read[1].total == exact.total


def test_each_path_reads_what_fio_prints(bins_pass: str) -> None:
    """The compiled pass, where built, reads every dump fio could print (no fallback)."""
    prev = None
    for raw in _dumps(3, 40, 5, 30, 800):
        read = percentile_interval(raw, prev)
        assert read is not None and read[1] is not None
        prev, delta = read
        assert isinstance(delta, Walked if bins_pass == "compiled" else Probed)
