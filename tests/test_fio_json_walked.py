"""The compiled pass over fio json+'s ``bins`` (``_fio_json_walked``, ``_fio_json_pass.c``)
against the pure-Python path, dump after dump, on what fio prints and on what it does not:
buckets added anywhere, restarts (a count going down, a bucket gone), counts at and past the
pass's bounds (2**53, int64, beyond), values that are not ints, keys that are not fio's
(out of order, not digits, equal by value). Each dump's result (no interval, its total, its
percentiles, or the error raised) is the same by both, as ``_fio_json_jobs._deltas`` reads a
direction: a restart read again from zero, buckets out of order by the exact path.

Also: the pass is built in a development checkout (scripts/setup builds it), and its
functions answer None, never crash, on arguments of the wrong kind.
"""

from __future__ import annotations

import importlib.util
import lzma
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.parsers import _fio_json_walked
from benchtui.parsers._fio_json_bins import Bins, interval
from benchtui.parsers._fio_json_walked import Walked, load_pass, percentile_interval
from tests.test_fio_json_counts import WIDE
from tests.test_fio_json_probed import BUCKETS, QS

PASS = load_pass()
#: Whether the pass is built here (whatever BENCHTUI_PURE_PYTHON says).
BUILT = importlib.util.find_spec("benchtui.parsers._fio_json_pass") is not None
needs_pass = pytest.mark.skipif(PASS is None, reason="the compiled pass is not built here")

#: Counts the pass leaves to Python: past its bound, past int64, not ints.
ODD_COUNTS: list[Any] = [2**53 + 1, 2**63, 2**70, -1, 1.5, 2.0, True, None, "7", [1]]
#: Keys the pass leaves to Python on a first dump (and what they do after).
ODD_KEYS = [" 1200", "+1300", "1_400", "x", "١٢", "0" * 19 + "9", ""]


def _chain(dumps: list[dict[Any, Any]], qs: list[tuple[Any, str]] = QS) -> list[object]:
    """Each dump's interval as ``_deltas`` reads one direction: (total, percentiles) or
    None, or the error raised (the chain then starts again from zero)."""
    prev: Bins | None = None
    out: list[object] = []
    for raw in dumps:
        try:
            read = percentile_interval(raw, prev)
            cur, delta = read if read is not None else interval(raw, prev)
            if delta is None and prev is not None:  # restarted: read from zero
                read = percentile_interval(raw, None)
                cur, delta = read if read is not None else interval(raw, None)
            out.append(delta and (delta.total, delta.quantiles(qs) if delta.total > 0
                                  else None))
            prev = cur
        except Exception as error:  # noqa: BLE001 - the same error by both paths
            out.append(repr(error))
            prev = None
    return out


def compiled_and_pure(run: Callable[[], list[object]]) -> list[object]:
    """``run()`` with the compiled pass, then in pure Python (``_fio_json_walked.PASS``
    None): the two must be equal; the pure one."""
    saved = _fio_json_walked.PASS
    try:
        _fio_json_walked.PASS = PASS
        compiled = run()
        _fio_json_walked.PASS = None
        pure = run()
    finally:
        _fio_json_walked.PASS = saved
    assert compiled == pure
    return pure


def _both(dumps: list[dict[Any, Any]], qs: list[tuple[Any, str]] = QS) -> list[object]:
    return compiled_and_pure(lambda: _chain(dumps, qs))


def _mangled(seed: int, n: int, odd: float) -> list[dict[Any, Any]]:
    """``n`` dumps of cumulative bins, fio's way mostly: buckets added anywhere, counts
    going up; with chance ``odd`` per dump something else: a restart (counts from zero,
    fewer buckets), a count down by one, a bucket gone, a count or key fio does not print,
    two buckets swapped, a count near the pass's bounds."""
    rnd = random.Random(seed)
    counts = dict.fromkeys(map(str, sorted(rnd.sample(BUCKETS, rnd.randint(1, 60)))), 0)
    out: list[dict[Any, Any]] = []
    for _ in range(n):
        for _ in range(rnd.randint(0, 8)):
            counts.setdefault(str(rnd.choice(BUCKETS)), 0)
        counts = dict(sorted(counts.items(), key=lambda kv: int(kv[0])))
        keys = list(counts)
        for _ in range(rnd.randint(0, 400)):
            counts[rnd.choice(keys)] += 1
        dump: dict[Any, Any] = dict(counts)
        if rnd.random() < odd:
            what = rnd.randrange(8)
            key = rnd.choice(keys)
            if what == 0:  # fio restarted: fewer buckets, counts from zero
                counts = {k: 0 for k in keys if rnd.random() < 0.7} or {keys[0]: 0}
                dump = dict(counts)
            elif what == 1:  # a count down by one
                counts[key] = dump[key] = max(0, counts[key] - 1)
            elif what == 2:  # a bucket gone (this dump only)
                del dump[key]
            elif what == 3:
                dump[key] = rnd.choice(ODD_COUNTS)
            elif what == 4:  # a key fio does not print, in the dump's place
                dump = {(rnd.choice(ODD_KEYS) if k == key else k): v for k, v in dump.items()}
            elif what == 5 and len(keys) > 1:  # two buckets out of order
                i = rnd.randrange(len(keys) - 1)
                order = [*keys[:i], keys[i + 1], keys[i], *keys[i + 2:]]
                dump = {k: dump[k] for k in order}
            elif what == 6:  # at the pass's bound, and past it
                counts[key] = dump[key] = counts[key] + rnd.choice([2**53 - sum(counts.values()),
                                                                    2**53, 2**62])
            else:
                dump = {}
        out.append(dump)
    return out


@needs_pass
@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(1, 25), odd=st.sampled_from([0, 0.1, 0.4]))
def test_the_pass_gives_what_python_gives(seed: int, n: int, odd: float) -> None:
    _both(_mangled(seed, n, odd))


@needs_pass
@pytest.mark.parametrize("odd", ODD_COUNTS)
def test_counts_fio_does_not_print(odd: object) -> None:
    good = {"1000": 5, "2000": 7, "3000": 1}
    bad: dict[str, Any] = {"1000": 6, "2000": odd, "3000": 2}
    later = {"1000": 7, "2000": 9, "3000": 2, "4000": 1}
    for dumps in ([bad, later], [good, bad, later], [good, later, bad]):
        _both(dumps)


@needs_pass
@pytest.mark.parametrize("key", ODD_KEYS)
def test_keys_fio_does_not_print(key: str) -> None:
    good = {"1000": 5, "2000": 7, "3000": 1}
    odd = {"1000": 6, key: 3, "3000": 2}
    later = {"1000": 7, key: 4, "3000": 2, "4000": 1}
    for dumps in ([odd, later], [good, odd, later], [good, {"1000": 5, "2000": 7, key: 1}]):
        _both(dumps)


@needs_pass
def test_counts_at_the_bound_and_equal_keys() -> None:
    edge = 2**53
    _both([{"1000": edge - 1, "2000": 1}, {"1000": edge - 1, "2000": 1, "3000": 0},
           {"1000": edge, "2000": 1, "3000": 0}, {"1000": edge, "2000": 1, "3000": 2}])
    _both([{"1000": 1, "01000": 2, "2000": 3}, {"1000": 2, "01000": 2, "2000": 3}])
    _both([{"1000": 1, "2000": 0}, {"1000": 1, "1500": 0, "2000": 0}])  # nothing completed


@needs_pass
def test_percentiles_that_are_not_fios() -> None:
    """qs (ascending, as ``_percentile_list`` gives them) that are not 0 < q <= 1 floats:
    the pure path's answer, the same buckets."""
    dumps = [{"1000": 1, "2000": 3}, {"1000": 2, "2000": 9, "3000": 1}]
    _both(dumps, [(1e-300, "tiny"), (0.25, "25"), (0.5, "50"), (1, "max")])


@needs_pass
def test_the_pass_reads_a_wide_dump_in_one_go() -> None:
    keys = [str(b) for b in BUCKETS]
    first = dict.fromkeys(keys, 3)
    second = {k: 3 + i % 7 for i, k in enumerate(keys)}
    read = percentile_interval(first, None)
    assert read is not None
    got = percentile_interval(second, read[0])
    assert got is not None and isinstance(got[1], Walked)
    _both([first, second])


def _packed(*counts: int) -> bytes:
    return b"".join(c.to_bytes(8, sys.byteorder, signed=True) for c in counts)


@needs_pass
@pytest.mark.parametrize("args", [
    ({"2": 1, "1": 1}, None, None, None), ({"1": 1, "01": 1}, None, None, None),
    ({"a": 1}, None, None, None), ({1: 1}, None, None, None), ({}, None, None, None),
    ({"1": 2**53 + 1}, None, None, None), ({"1": 2**53, "2": 1}, None, None, None),
    ({"1": -1}, None, None, None), ({"1": 1.0}, None, None, None), ([1], None, None, None),
    ({"1": 1, "2": 2}, _packed(1), None, [1]),  # prev's counts without its keys
    ({"1": 1, "2": 2}, _packed(1, 2, 3), ["1", "2"], [2]),  # prev's counts and keys disagree
    ({"1": 1, "2": 2}, [1, 2], ["1", "2"], [2]),  # prev's counts not packed
    ({"1": 1, "2": 1}, _packed(1, 2), ["1", "2"], [2]),  # a count down
    ({"1": 1, "2": 2}, _packed(1, 2), ["1", "3"], [2]),  # other keys, as many
    ({"1": 1, "2": 2}, _packed(1), ["3"], [1]),  # a bucket gone, another added
    ({"1": 1}, _packed(1, 1), ["1", "2"], [2]),  # a bucket gone
    ({"2": 1, "1": 2}, _packed(1, 1), ["1", "2"], [2]),  # two buckets swapped
    ({"1": 1, "2": 2}, _packed(1), ["1"], None), ({"1": 1, "2": 2}, _packed(1), ["1"], [2]),
    ({"1": 1, "2": 2}, _packed(1), ["1"], [0, 1]), ({"1": 1, "2": 2}, _packed(1), ["1"], ["1"]),
    ({"1": 1, "2": 2}, _packed(1), ["1"], (1,)), ({"1": 1, "2": 2}, _packed(1), ["1"], []),
    ({"1": 1, "2": 2}, _packed(1), ("1",), [1]), ({"1": 1}, _packed(), [], [0]),
])
def test_walk_of_what_it_does_not_take(args: tuple[Any, ...]) -> None:
    assert PASS is not None
    assert PASS.walk(*args) is None


@needs_pass
def test_walk_and_find() -> None:
    assert PASS is not None
    first = {"1000": 1, "2000": 3}
    assert PASS.walk(first, None, None, None) == (4, _packed(1, 4), _packed(1, 3),
                                                  ["1000", "2000"], None)
    keys = ["1000", "2000"]
    same = PASS.walk({"1000": 2, "2000": 3}, _packed(1, 3), keys, [2])
    assert same is not None and same[:3] == (1, _packed(1, 1), _packed(2, 3))
    assert same[3] is keys and same[4] is None
    keys4 = ["1000", "1500", "2000", "3000"]
    added = PASS.walk(dict(zip(keys4, [2, 1, 9, 0], strict=True)), _packed(1, 3), keys, [1, 2])
    assert added == (8, _packed(1, 2, 8, 8), _packed(2, 1, 9, 0), keys4, [1, 4])
    sums = added[1]
    assert PASS.find(keys4, sums, [(0.1, "10"), (0.5, "50"), (1.0, "100")]) == [
        ("10", 1e-06), ("50", 2e-06), ("100", 2e-06)]
    assert PASS.find(["1", "x", "3", "4"], sums, [(0.1, "10")]) == [("10", 1e-09)]
    assert PASS.find(["1", "x", "3", "4"], sums, [(0.25, "25")]) is None  # not digits
    for odd in ([(1, "1")], [(1.5, "x")], [(0.0, "0")], [(float("nan"), "nan")], [()],
                [0.5], ((0.5, "50"),), [(0.5, "50", "")]):
        assert PASS.find(keys4, sums, odd) is None
    assert PASS.find(keys4[:3], sums, [(0.5, "50")]) is None  # not its keys
    assert PASS.find(keys4, sums[:-1], [(0.5, "50")]) is None
    assert PASS.find(keys4, bytes(32), [(0.5, "50")]) is None  # nothing in it
    with pytest.raises(TypeError):
        PASS.walk(first)


def test_the_pass_is_built_in_a_development_checkout() -> None:
    """scripts/setup builds it in place; BENCHTUI_PURE_PYTHON=1 keeps it unused."""
    if os.environ.get("BENCHTUI_PURE_PYTHON", "0") not in ("", "0"):
        assert PASS is None
        pytest.skip("BENCHTUI_PURE_PYTHON is set")
    assert PASS is not None, "the compiled pass is not built: run scripts/setup"


def test_benchtui_parse_of_the_wide_capture_by_both_paths(tmp_path: Path) -> None:
    """``benchtui parse`` of the real 32-job capture prints the same bytes with the compiled
    pass and with BENCHTUI_PURE_PYTHON=1; the first imports the pass, the second does not."""
    path = tmp_path / "wide.json"
    path.write_bytes(lzma.decompress(WIDE.read_bytes()))
    outs = {}
    for pure in ("0", "1"):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "benchtui", "parse", str(path)],
            capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "BENCHTUI_PURE_PYTHON": pure})
        assert done.returncode == 0, done.stderr[-2000:]
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
        assert ("benchtui.parsers._fio_json_pass" in imported) == (pure == "0" and BUILT)
        outs[pure] = done.stdout
    assert outs["0"] == outs["1"]
    assert outs["0"].count('"metric":"latency_seconds"') >= 32 * 2 * 20 * 5
