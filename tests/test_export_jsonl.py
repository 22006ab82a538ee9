"""The JSON Lines writer writes each sample as orjson writes ``Sample.to_dict()`` (the public
schema of docs/SAMPLES.md), whichever of its fields are set: by its compiled part
(``export/_jsonl_lines.c``, where built) and by its pure-Python path alike (each test runs
both)."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from benchtui.export import formats
from benchtui.export.formats import JsonlWriter
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample
from benchtui.parsers.fio_json import FioJsonParser
from tests.corpus import CORPUS, corpus_files, parse_file

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True, params=["compiled", "python"])
def writer_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                ) -> Iterator[str]:
    """Each test twice: the compiled writer (it must be built here: scripts/setup builds it
    in place) and pure Python."""
    if request.param == "compiled":
        assert formats.LINES is not None, "the compiled writer is not built (scripts/setup)"
    else:
        monkeypatch.setattr(formats, "LINES", None)
    yield request.param


def _expected(samples: list[Sample], histograms: bool) -> str:
    return "".join(orjson.dumps(s.to_dict()).decode() + "\n" for s in samples
                   if histograms or s.histogram is None)


def _written(samples: list[Sample], histograms: bool) -> str:
    out = io.StringIO()
    writer = JsonlWriter(out, histograms=histograms)
    assert writer.write(iter(samples)) == len([s for s in samples
                                                if histograms or s.histogram is None])
    return out.getvalue()


def test_every_shape_of_sample_as_to_dict() -> None:
    shared = {"job": "a\"b\n\u2028", "op": "read"}
    samples = [
        Sample(1.5, "fio", "interval", "iops", 10.0, shared, "h", 2.0),
        Sample(1.5, "fio", "interval", "iops", 11.0, shared, "h", 2.0, None, 0.5),
        Sample(None, "fio", "summary", "iops", 3, {}, "h"),
        Sample(-0.0, "x", "summary", "m", 1e-300, {"u": "é"}, "h", None, None, math.inf),
        Sample(2.0, "x", "interval", "m", math.nan, {}, "h", math.nan, None, 1e16),
        Sample(3.0, "fio", "interval", "latency_histogram", 2.0, shared, "h", 4.0,
               LatencyHistogram({1000: 1, 2000: 1})),
    ]
    for histograms in (False, True):
        assert _written(samples, histograms) == _expected(samples, histograms)


class _Str(str):
    pass


def test_what_the_compiled_writer_leaves_to_orjson() -> None:
    """Samples the compiled part does not write itself (a bool or a float subclass for a
    number, a str subclass, a lone surrogate, an int past 64 bits, a labels dict of another
    kind, a sample subclass, a slot never set) come out as orjson writes them, or fail as
    orjson fails, in their place among the others."""
    class Subsample(Sample):
        __slots__ = ()

    unset = Sample.__new__(Sample)
    usual = Sample(1.0, "fio", "interval", "iops", 1e-7, {"a": "b"}, "h", 0.00001)
    odd = [
        Sample(1.0, "fio", "interval", "iops", True, {}, "h", 2.0),
        Sample(1.0, "fio", "interval", "iops", 2**63 - 1, {}, "h", 2.0),
        Sample(1.0, "fio", "interval", "iops", -(2**63), {"\x7f\x00\x1f": "\t\r\b\f"},
               "h", 2),
        Sample(1.0, _Str("fio"), "interval", "iops", 1.0, {}, "h", 2.0),
        Sample(1.0, "fio", "interval", "iops", 1.0, {"k": _Str("v")}, "h", 2.0),
        Sample(1.0, "fio", "interval", "iops", 1.0, {"k": "v"}, "h\u00e9\u4e2d", 2.0),
        Sample(1.0, "fio", "interval", "iops", 1.0, {}, "h", 2.0, None, 1e-5),
        Sample(None, "fio", "summary", "iops", 1.5e300, {}, "h"),
        Subsample(1.0, "fio", "interval", "iops", 1.0, {}, "h", 2.0),
    ]
    samples = [x for o in odd for x in (usual, o)]
    assert _written(samples, False) == _expected(samples, False)
    for bad in (Sample(1.0, "fio", "interval", "iops", 1.0, {}, "h\ud800", 2.0),
                Sample(1.0, "fio", "interval", "iops", 2**64, {}, "h", 2.0)):
        with pytest.raises(orjson.JSONEncodeError):
            JsonlWriter(io.StringIO()).write([usual, bad])
    with pytest.raises(AttributeError):
        JsonlWriter(io.StringIO()).write([usual, unset])


def test_fio_json_samples_as_to_dict() -> None:
    found = sorted((FIXTURES / "fio_json").iterdir())
    assert found
    for histograms in (False, True):
        samples: list[Sample] = []
        for path in found:
            parser = FioJsonParser()
            parser.histograms = histograms
            samples += parser.feed_bytes(path.read_bytes()) + parser.finish()
        assert len(samples) > 100
        assert _written(samples, histograms) == _expected(samples, histograms)


def test_every_corpus_file_as_to_dict() -> None:
    """Each tool's samples of the shared corpus (summaries, partial intervals, odd labels):
    the writer's lines are ``to_dict``'s, one by one, in order."""
    tools = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    assert len(tools) >= 4
    written = 0
    for tool in tools:
        for name in corpus_files(tool):
            samples = parse_file(tool, name).samples
            assert _written(samples, False) == _expected(samples, False), (tool, name)
            written += len(samples)
    assert written > 1000
