"""``SessionReader.newest_records``: the records of a span with each series' last sample only
(what replay shows at once after a seek), on a written session with more than 128 strings a
segment (string ids of two bytes) and a span across segments."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import SUMMARY, Sample
from benchtui.store.recording import SCHEMA_VERSION, SessionMeta, SessionReader, SessionWriter
from benchtui.store.recording.codec import TimedRecord

HOSTS = [f"h{i:02d}" for i in range(40)]
T0 = 1_800_000_000.0


def _batch(rng: random.Random, host: int, second: int, t: float) -> list[Sample]:
    out = [Sample(t, "tool", "interval", f"m{k}", rng.random() * 1000,
                  {"device": f"d{k % 7}", "job": f"{HOSTS[host]}-{k % 5}", "q": str(k)},
                  HOSTS[host], float(second), None)
           for k in range(12) if (k + second) % 4 or k < 6]  # some series skip a second
    if second % 5 == 4 and host % 3 == 0:
        out.append(Sample(t, "tool", SUMMARY, "iops", 1.0 + host + second, {"job": "a"},
                          HOSTS[host], None, None))
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[TimedRecord]]:
    rng = random.Random(5)
    path = tmp_path_factory.mktemp("newest") / "s.btr"
    meta = SessionMeta(SCHEMA_VERSION, "newest", "id", "", None, T0, None, hosts=HOSTS)
    writer = SessionWriter(str(path), meta, segment_seconds=10.0)
    records: list[TimedRecord] = []
    for second in range(30):
        this: list[TimedRecord] = []
        for host in range(len(HOSTS)):
            t = T0 + second + host * 0.01
            this.append((t, _batch(rng, host, second, t)))
        t = T0 + second + 0.5
        this.append((t, Event(t, "mark", f"second {second}")))
        this.append((t, OutputLines(t, HOSTS[second % 40], "s", "iostat", "step",
                                    (f"line {second}",))))
        writer.append(this)
        writer.write_frame()
        records += this
    writer.close()
    return path, records


def _key(s: Sample) -> object:
    return (s.host, s.tool, s.kind, s.metric, tuple(sorted(s.labels.items())))


@pytest.mark.parametrize(("a", "b"), [(4.5, 11.3), (9.2, 21.7), (0.0, 30.0), (12.0, 12.4)])
def test_newest_records_keep_each_series_last_sample_and_everything_else(
        written: tuple[Path, list[TimedRecord]], a: float, b: float) -> None:
    path, _ = written
    with SessionReader.open(str(path)) as reader:
        t0, t1 = T0 + a, T0 + b
        every = list(reader.timed_records(t0, t1))
        newest = reader.newest_records(t0, t1)
        assert reader.segment_count >= 3  # the span crosses segments
    # every sample of the span: its series' last one, or a summary
    last: dict[object, tuple[float, float]] = {}
    summaries = []
    for t, r in every:
        if isinstance(r, list):
            for s in r:
                if s.kind == SUMMARY:
                    summaries.append((t, s.host, s.value))
                else:
                    last[_key(s)] = (t, s.value)
    kept = [(t, s) for t, r in newest if isinstance(r, list) for s in r]
    assert {_key(s): (t, s.value) for t, s in kept if s.kind != SUMMARY} == last
    assert len([s for _, s in kept if s.kind != SUMMARY]) == len(last)
    assert [(t, s.host, s.value) for t, s in kept if s.kind == SUMMARY] == summaries
    # events and output whole, and everything in the recorded order
    assert [(t, r) for t, r in newest if not isinstance(r, list)] == \
        [(t, r) for t, r in every if not isinstance(r, list)]
    times = [t for t, _ in newest]
    assert times == sorted(times) and all(t0 <= t < t1 for t in times)
    assert not any(isinstance(r, list) and not r for _, r in newest)


def test_newest_records_of_the_whole_session_match_what_was_written(
        written: tuple[Path, list[TimedRecord]]) -> None:
    path, records = written
    with SessionReader.open(str(path)) as reader:
        newest = reader.newest_records(-math.inf, math.inf)
    want: dict[object, float] = {}
    for _t, r in records:
        if isinstance(r, list):
            for s in r:
                if s.kind != SUMMARY:
                    want[_key(s)] = s.value
    got = {_key(s): s.value for _, r in newest if isinstance(r, list) for s in r
           if s.kind != SUMMARY}
    assert got == want and len(want) > 40 * 12 - 1
