"""The live path's fio json+ intervals with histograms (``_fio_json_live``): by the
compiled pass (``walk``, ``find``, ``pick``) and in pure Python (``_fio_json_bins.interval``)
the same totals, percentiles and histograms, dump after dump, on what fio prints and on what
it does not (``test_fio_json_walked``'s mangled dumps); a histogram made at the session's
resolution is the one the session made before from fio's (``coarsened``), running sums and
all; whole streams (the fixtures, the corpus, the real 32-job capture) give the same samples
either way. And ``pick`` answers None, never crashes, on arguments it does not take.
"""

from __future__ import annotations

import lzma
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.model.histogram import LatencyHistogram
from benchtui.parsers import _fio_json_walked
from benchtui.parsers._fio_json_bins import Bins, DeltaHistogram, Running, interval
from benchtui.parsers._fio_json_live import Summed, live_interval
from benchtui.parsers.fio_json import FioJsonParser
from tests.test_fio_json_counts import STREAMS, WIDE
from tests.test_fio_json_probed import BUCKETS, QS
from tests.test_fio_json_walked import PASS, _mangled, _packed, compiled_and_pure, needs_pass

#: The session's resolutions (``model.fio_buckets``): None is fio's own (``benchtui parse``).
BITS = [None, 1, 4, 5, 6]


def _seen(h: LatencyHistogram) -> tuple[object, ...]:
    sums = h.running_sums()
    return (None if sums is None else (list(sums[0]), list(sums[1])),
            sorted(h.counts.items()), h.total())


def _chain(dumps: list[dict[Any, Any]], bits: int | None) -> list[object]:
    """Each dump's interval as ``_fio_json_jobs._deltas`` reads a direction with histograms:
    (total, percentiles, histogram) or None, or the error raised (the chain then restarts)."""
    prev: Bins | None = None
    out: list[object] = []
    for raw in dumps:
        try:
            cur, delta = live_interval(raw, prev)
            if delta is None and prev is not None:  # restarted: read from zero
                cur, delta = live_interval(raw, None)
            if delta is None:
                out.append(None)
            else:
                assert isinstance(delta, (Running, Summed))
                out.append((delta.total, delta.quantiles(QS) if delta.total > 0 else None,
                             _seen(delta.histogram(bits))))
            prev = cur
        except Exception as error:  # noqa: BLE001 - the same error by both paths
            out.append(repr(error))
            prev = None
    return out


def _before(dumps: list[dict[Any, Any]], bits: int | None) -> list[object]:
    """The same as the code before made it: ``interval``'s fine histogram, coarsened by the
    session (``Sinks.deliver``)."""
    prev: Bins | None = None
    out: list[object] = []
    for raw in dumps:
        try:
            cur, delta = interval(raw, prev)
            if delta is None and prev is not None:
                cur, delta = interval(raw, None)
            if delta is None:
                out.append(None)
            else:
                fine = DeltaHistogram(delta.ns, tuple(delta.cum))
                out.append((delta.total, delta.quantiles(QS) if delta.total > 0 else None,
                            _seen(fine if bits is None else fine.coarsened(bits))))
            prev = cur
        except Exception as error:  # noqa: BLE001
            out.append(repr(error))
            prev = None
    return out


def _all_three(dumps: list[dict[Any, Any]], bits: int | None) -> list[object]:
    pure = compiled_and_pure(lambda: _chain(dumps, bits))
    assert pure == _before(dumps, bits)
    return pure


@needs_pass
@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(1, 20), odd=st.sampled_from([0, 0.1, 0.4]),
       bits=st.sampled_from(BITS))
def test_the_pass_gives_what_python_gives(seed: int, n: int, odd: float,
                                          bits: int | None) -> None:
    _all_three(_mangled(seed, n, odd), bits)


@needs_pass
@pytest.mark.parametrize("bits", BITS)
def test_buckets_added_in_and_out_of_order_and_equal_keys(bits: int | None) -> None:
    _all_three([{"1000": 1, "3000": 2}, {"1000": 1, "2000": 1, "3000": 2},
                {"1000": 2, "2000": 1, "2500": 0, "3000": 5}], bits)
    _all_three([{"1000": 1, "3000": 2}, {"1000": 1, "3000": 2, "2000": 1},  # out of order
                {"1000": 2, "3000": 2, "2000": 4}, {"1000": 3, "3000": 4, "2000": 5}], bits)
    _all_three([{"1000": 1, "01000": 2, "2000": 3}, {"1000": 2, "01000": 2, "2000": 3}], bits)
    _all_three([{"1000": 1, "2000": 3}, {"1000": 1, "1000 ": 1, "2000": 3},
                {"1000": 1, "+1500": 1, "2000": 3}, {"1000": 1, "x": 1, "2000": 3}], bits)


@needs_pass
def test_a_wide_dump_is_read_by_the_pass_and_made_coarse_there() -> None:
    keys = [str(b) for b in BUCKETS]
    first = dict.fromkeys(keys, 3)
    second = {k: 3 + i % 7 for i, k in enumerate(keys)}
    saved = _fio_json_walked.PASS
    try:
        _fio_json_walked.PASS = PASS
        cur, _ = live_interval(first, None)
        _, got = live_interval(second, cur)
        assert isinstance(got, Summed) and got.ns is cur.ns
        coarse = got.histogram(4)
        assert coarse.coarsened(4) is coarse  # the session leaves it as it is
        assert len(coarse.counts) < len(got.histogram(None).counts)
    finally:
        _fio_json_walked.PASS = saved
    for bits in BITS:
        _all_three([first, second], bits)


@needs_pass
@pytest.mark.parametrize("args", [
    (_packed(1, 2), [0, 2]), (_packed(1, 2), [-1]), (_packed(1, 2), [1.0]),
    (_packed(1, 2), [True]), (_packed(1, 2), (0, 1)), (_packed(1, 2), []),
    (_packed(1, 2), [2**70]), (b"", [0]), (b"123", [0]), (bytearray(_packed(1)), [0]),
    ([1, 2], [0]), (None, None),
])
def test_pick_of_what_it_does_not_take(args: tuple[Any, ...]) -> None:
    assert PASS is not None
    assert PASS.pick(*args) is None


@needs_pass
def test_pick() -> None:
    assert PASS is not None
    assert PASS.pick(_packed(1, 5, 2**53), [0, 2, 2]) == (1, 2**53, 2**53)
    with pytest.raises(TypeError):
        PASS.pick(_packed(1))


def _samples(data: bytes, bits: int | None) -> list[tuple[Any, ...]]:
    """The parser's samples, told ``bits`` (None: fio's resolution), their histograms as the
    session has them (``coarsened``, which leaves one already that coarse as it is)."""
    parser = FioJsonParser()
    parser.histogram_bits = bits
    out = [*parser.feed_bytes(data), *parser.finish()]
    return [(s.t, s.metric, s.value, s.labels, s.elapsed, s.duration,
             None if s.histogram is None else _seen(
                 s.histogram if bits is None else s.histogram.coarsened(bits)))
            for s in out]


@pytest.mark.parametrize("path", [*STREAMS, WIDE], ids=lambda p: p.name)
def test_streams_by_both_paths_at_every_resolution(path: Path, bins_pass: str) -> None:
    """Told the session's resolution, the parser gives the samples it gave before, their
    histograms those the session made coarse (by each path: ``bins_pass``)."""
    data = path.read_bytes()
    if path.suffix == ".xz":
        data = lzma.decompress(data)
    parser = FioJsonParser()
    fine = [*parser.feed_bytes(data), *parser.finish()]
    for bits in (4, 1) if path == WIDE else (4,):
        expected = [(s.t, s.metric, s.value, s.labels, s.elapsed, s.duration,
                     None if s.histogram is None else _seen(s.histogram.coarsened(bits)))
                    for s in fine]
        assert _samples(data, bits) == expected
    if path == WIDE:  # every job's reads and writes, in every dump
        assert sum(1 for s in fine if s.histogram is not None) == 32 * 2 * 21
