"""A real local fio run (``--status-interval=1 --output-format=json+``): every interval, the
first and the last included, is a rate over the time the job really ran in it.

fio's final report arrives a fraction of a second after its last status dump; the job ran only
part of that time (the rest is fio's shutdown). The expected rates are worked out here from
fio's own documents (standard library ``json``): Δ``clat_ns.N`` / Δ``job_runtime``.
"""

from __future__ import annotations

import subprocess
from itertools import pairwise
from pathlib import Path

import pytest

from benchtui.model.sample import INTERVAL, Sample
from benchtui.parsers.fio_json import FioJsonParser
from tests.helpers import check_invariants, pick, require_tool
from tests.test_parse_fio_json import docs as fio_documents


def _fio(tmp_path: Path, engine: str) -> str:
    cmd = [require_tool("fio"), f"--ioengine={engine}", "--direct=1", "--size=16m", "--bs=4k",
           "--rw=randread", "--iodepth=4" if engine == "libaio" else "--iodepth=1",
           "--time_based", "--runtime=4", "--status-interval=1", "--output-format=json+",
           "--name=partial", f"--filename={tmp_path / 'f.dat'}"]
    proc = subprocess.run(cmd, capture_output=True, timeout=60, check=False, cwd=tmp_path)
    if proc.returncode != 0 and engine == "libaio":
        pytest.skip(f"fio cannot use libaio here: {proc.stderr.decode()[:200]}")
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def _intervals(text: str, *, live: bool) -> list[Sample]:
    parser = FioJsonParser(source="real")
    if live:  # as the engine feeds a running fio: line by line, a known status stream
        parser.stream = True
        samples = [s for line in text.split("\n") for s in parser.feed(line)] + parser.finish()
    else:
        samples = parser.feed_text(text) + parser.finish()
    check_invariants(samples)
    assert not parser.warnings, parser.warnings
    return pick(samples, "iops", INTERVAL, job="partial", op="read")


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["libaio", "psync"])
def test_every_interval_is_a_rate_over_the_jobs_runtime(tmp_path: Path, engine: str) -> None:
    text = _fio(tmp_path, engine)
    docs = fio_documents(text)
    assert len(docs) >= 4
    jobs = [d["jobs"][0] for d in docs]
    counts = [j["read"]["clat_ns"]["N"] for j in jobs]
    runtimes = [j["job_runtime"] for j in jobs]  # ms
    # fio's own figures: the first interval from the job's start, then dump to dump
    want = [counts[0] / (runtimes[0] / 1000)]
    want += [(n2 - n1) / ((r2 - r1) / 1000)
             for (n1, r1), (n2, r2) in pairwise(zip(counts, runtimes, strict=True))]
    spans = [runtimes[0] / 1000] + [(b - a) / 1000 for a, b in pairwise(runtimes)]
    # the final report's interval is partial: the job ran less than a status interval
    assert spans[-1] < 0.9, spans
    for live in (False, True):
        got = _intervals(text, live=live)
        assert len(got) == len(want), (live, len(got), len(want))
        for i, (sample, rate) in enumerate(zip(got, want, strict=True)):
            assert sample.value == pytest.approx(rate, rel=0.01), (live, i)
            assert sample.t == docs[i]["timestamp_ms"] / 1000
        # the partial first and last intervals say how long they covered; the others do not
        assert got[0].duration == pytest.approx(spans[0])
        assert got[-1].duration == pytest.approx(spans[-1])
        assert [s.duration for s in got[1:-1]] == [None] * (len(got) - 2)
        # weighted by the seconds each covers, the intervals hold every read fio counted
        total = sum(s.value * (1.0 if s.duration is None else s.duration) for s in got)
        assert total == pytest.approx(counts[-1], rel=0.01)
