"""The live path's interval buckets, subtracted and summed up in numpy
(``_fio_json_counts``), are those of the exact path in Python (``_fio_json_bins._exact``):
the same running sums, as Python ints, the same percentiles, the same restarts, and for
values fio would not print (floats, huge numbers, strings) the exact path's result or error.
Whole streams parsed with histograms (the corpus's and fixtures' fio JSON, the 32-job capture)
give the same samples and histograms by both; without histograms (the percentiles alone, as
``benchtui parse`` prints them), the same samples by the compiled pass and in pure Python."""

from __future__ import annotations

import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchtui.parsers import _fio_json_jobs, _fio_json_live, _fio_json_walked
from benchtui.parsers._fio_json_bins import Bins, Running, _exact, interval
from benchtui.parsers.fio_json import FioJsonParser
from tests.test_fio_json_probed import QS, _dumps

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
STREAMS = sorted([*(FIXTURES / "fio_json").glob("*.txt"),
                  *(FIXTURES / "corpus" / "fio").glob("*.json"),
                  FIXTURES / "corpus" / "fio" / "grokfio-3.1-status-interval.txt"])
WIDE = ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz"


def _same(raws: list[dict[str, Any]]) -> None:
    """Dump after dump, ``interval`` and ``_exact`` agree (each against its own previous)."""
    fast: Bins | None = None
    slow: Bins | None = None
    for raw in raws:
        fast, a = interval(raw, fast)
        slow, b = _exact(raw, slow)
        assert fast.ns == slow.ns and fast.ascending == slow.ascending
        assert (a is None) == (b is None), raw
        if a is not None and b is not None:
            assert isinstance(a, Running)
            assert a.cum == b.cum and a.total == b.total
            assert list(map(type, a.cum)) == list(map(type, b.cum))  # ints where fio's
            sums = a.histogram().running_sums()
            assert sums is not None and sums == b.histogram().running_sums()
            assert type(sums[1]) is tuple
            if a.total > 0:
                assert a.quantiles(QS) == b.quantiles(QS)


@pytest.mark.parametrize("seed", range(8))
def test_growing_dumps(seed: int) -> None:
    _same(_dumps(seed, 30, 1 + seed * 40, 20 * (seed % 3), 50 + 900 * seed))


def test_restarts_and_buckets_gone() -> None:
    _same([{"1000": 5, "2000": 7, "3000": 1}, {"1000": 6, "3000": 9},
           {"1000": 6, "2500": 1, "3000": 9, "4000": 1}, {"1000": 2, "2500": 7, "3000": 9,
                                                          "4000": 1},
           {"1000": 3, "2500": 8, "3000": 9, "4000": 1},
           {"1000": 3, "2500": 7, "3000": 10, "4000": 1},  # one count down by one
           {"1000": 3, "2500": 7, "3000": 10, "4000": 1, "5000": 0}, {"1000": -1},
           {"2000": 1, "1000": 1}, {"2000": 2, "1000": 1}, {"2000": 2, "1000": 1, "500": 4}])


@pytest.mark.parametrize("odd", [1.5, 2**70, 2**63, 1 << 41, -(1 << 41), True, [1], None])
def test_values_fio_does_not_print(odd: object) -> None:
    """Counts that are not ints within the array's bounds take the exact path, alone or after
    a dump of ints, and before one."""
    good = {"1000": 5, "2000": 7, "3000": 1}
    bad = {"1000": 6, "2000": odd, "3000": 2}
    later = {"1000": 7, "2000": 9, "3000": 2}
    for raws in ([bad, later], [good, bad, later]):
        try:
            _same(raws)  # type: ignore[arg-type]
        except TypeError as fast:  # the same error, raised by the exact path
            with pytest.raises(TypeError) as slow:
                prev = None
                for raw in raws:
                    prev, _ = _exact(raw, prev)  # type: ignore[arg-type]
            assert str(fast) == str(slow.value)


def test_strings_fail_as_before() -> None:
    prev, _ = interval({"1000": 5, "2000": 7}, None)
    with pytest.raises(TypeError, match="unsupported operand"):
        interval({"1000": 6, "2000": "8"}, prev)  # type: ignore[dict-item]


def _samples(data: bytes, histograms: bool = True) -> list[tuple[Any, ...]]:
    parser = FioJsonParser()
    parser.histograms = histograms
    out = [*parser.feed_bytes(data), *parser.finish()]
    return [(s.t, s.metric, s.value, s.labels, s.elapsed, s.duration,
             None if s.histogram is None else (s.histogram.running_sums(), s.histogram.counts))
            for s in out]


@pytest.mark.parametrize("path", [*STREAMS, WIDE], ids=lambda p: p.name)
def test_streams_with_histograms(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = path.read_bytes()
    if path.suffix == ".xz":
        data = lzma.decompress(data)
    fast = _samples(data)
    if path == WIDE:  # every job's reads and writes, in every dump
        assert sum(1 for s in fast if s[6] and s[6][0]) == 32 * 2 * 21
    # (the numpy path against the exact one: the compiled pass set aside, _fio_json_live)
    monkeypatch.setattr(_fio_json_walked, "PASS", None)
    numpy_path = _samples(data)
    monkeypatch.setattr(_fio_json_live, "interval", _exact)
    monkeypatch.setattr(_fio_json_jobs, "interval", _exact)
    assert fast == numpy_path == _samples(data)


@pytest.mark.parametrize("path", [*STREAMS, WIDE], ids=lambda p: p.name)
def test_streams_without_histograms_by_both_paths(path: Path) -> None:
    data = path.read_bytes()
    if path.suffix == ".xz":
        data = lzma.decompress(data)
    built = _fio_json_walked.load_pass()
    if built is None:
        pytest.skip("the compiled pass is not built here")
    saved = _fio_json_walked.PASS
    try:
        _fio_json_walked.PASS = built
        compiled = _samples(data, histograms=False)
        _fio_json_walked.PASS = None
        assert compiled == _samples(data, histograms=False)
    finally:
        _fio_json_walked.PASS = saved
    if path == WIDE:  # every job's read and write percentiles, in every dump but the first
        assert sum(1 for s in compiled if s[1] == "latency_seconds") >= 32 * 2 * 20 * 5


@pytest.mark.parametrize(("histograms", "parsed_here"), [(True, True), (False, True),
                                                         (True, False)])
def test_a_live_run_loads_numpy_when_it_starts_not_on_its_first_document(
        histograms: bool, parsed_here: bool) -> None:
    # A run's ingest readies its parser: with histograms, numpy is imported then (its ~0.1-0.25
    # s import would otherwise stall the controller's loop on the first document, with every
    # host's waiting); without (benchtui parse), never; nor in a controller whose parser
    # workers parse the run (parse_pool: the worker's own ingest readies its parser). In a new
    # process: this one has it.
    code = (
        "import sys\n"
        "from benchtui.parsers.fio_json import FioJsonParser\n"
        "from benchtui.session.ingest import RunIngest\n"
        "assert 'numpy' not in sys.modules\n"
        "parser = FioJsonParser()\n"
        f"parser.histograms = {histograms}\n"
        f"RunIngest(parser, lines_wanted=False, parsed_here={parsed_here})\n"
        "print('numpy' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(histograms and parsed_here)
