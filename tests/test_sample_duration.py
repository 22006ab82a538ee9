"""``Sample.duration`` (a partial interval's seconds of work) through the pipeline: the
session file keeps it (back-compatibly), and every consumer that combines interval values
weights them by it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from benchtui.model.sample import Sample
from benchtui.store.recording import SessionReader, SessionWriter
from benchtui.store.recording.codec import SegmentEncoder
from benchtui.store.recording.decoder import SegmentDecoder
from benchtui.store.recording.series_stats import accumulate_stats
from tests.test_recording_roundtrip import T0, assert_same_records, meta, real_records


def _with_partials(records: list[tuple[float, object]]) -> list[tuple[float, object]]:
    """``real_records`` with every third sample marked partial (0.241 s, and a whole number)."""
    out: list[tuple[float, object]] = []
    n = 0
    for t, r in records:
        if isinstance(r, list):
            batch = []
            for s in r:
                n += 1
                batch.append(dataclasses.replace(s, duration=0.241 if n % 3 == 0 else
                                                 (2.0 if n % 7 == 0 else None)))
            out.append((t, batch))
        else:
            out.append((t, r))
    return out


def test_frame_codec_keeps_durations() -> None:
    records = _with_partials(real_records())  # type: ignore[arg-type]
    enc, dec = SegmentEncoder(), SegmentDecoder()
    got: list[tuple[float, object]] = []
    for i in range(0, len(records), 4):
        got += dec.decode(enc.encode(records[i:i + 4]))  # type: ignore[arg-type]
    assert_same_records(got, records)  # type: ignore[arg-type]
    durations = [s.duration for _, r in got if isinstance(r, list) for s in r]
    assert 0.241 in durations and 2.0 in durations and None in durations


def test_a_frame_without_durations_is_byte_for_byte_as_before() -> None:
    """No sample with a duration: the frame body ends with the output lines, as frames
    always did (older files read the same, and older readers read newer files)."""
    records = real_records()
    body = SegmentEncoder().encode(records[:4])  # type: ignore[arg-type]
    body2 = SegmentEncoder().encode(_with_partials(records)[:4])  # type: ignore[arg-type]
    # the durations are one blob appended: an older reader, which stops after the output
    # lines, reads the same records (durations aside)
    assert len(body2) > len(body) and body2[:len(body)] == body


def test_file_round_trip_keeps_durations(tmp_path: Path) -> None:
    records = _with_partials(real_records())
    path = tmp_path / "d.btr"
    w = SessionWriter(str(path), meta())
    for i in range(0, len(records), 3):
        w.append(records[i:i + 3])  # type: ignore[arg-type]
    w.close(ended=T0 + 1000)
    with SessionReader.open(str(path)) as r:
        assert_same_records(list(r.timed_records(r.start, math.inf)), records)  # type: ignore[arg-type]
        got = [s for s in r.samples() if s.duration is not None]
        assert got and all(s.to_dict()["duration"] in (0.241, 2.0) for s in got)


def _iops(values: list[float], durations: list[float | None], job: str = "j",
          host: str = "h") -> list[Sample]:
    """One sample a second; a partial one (a duration) ends that long after the one before."""
    out = []
    t = T0
    for v, d in zip(values, durations, strict=True):
        t += 1.0 if d is None else d
        out.append(Sample(t, "fio", "interval", "iops", v, {"job": job, "op": "read"}, host,
                          t - T0, duration=d))
    return out


def test_a_windows_mean_weights_a_partial_interval_by_its_duration() -> None:
    # 19 full seconds at 1000, then 0.25 s at 2000: (19*1000 + 0.25*2000) / 19.25
    samples = _iops([1000.0] * 19 + [2000.0], [None] * 19 + [0.25])
    (st,) = accumulate_stats([(T0, samples)]).values()
    assert st.mean == (19 * 1000 + 0.25 * 2000) / 19.25
    assert st.count == 20
    plain = accumulate_stats([(T0, _iops([1000.0] * 19 + [2000.0], [None] * 20))])
    assert next(iter(plain.values())).mean == (19 * 1000 + 2000) / 20


def test_stats_blocks_keep_partial_intervals(tmp_path: Path) -> None:
    """The recorder's stats blocks (STATS frames) carry the partial intervals' sums: a
    report's window read from the blocks alone weighs them as the decoded samples do."""
    from tests import stats_session
    from tests.test_recording_stats_blocks import assert_same, by_records, report_windows

    path = tmp_path / "p.btr"
    stats_session.write(path, stats_session.records(steps=2, partial_last=0.3))
    with SessionReader.open(str(path)) as r:
        windows = report_windows(r, (0.0,))
        assert windows
        seen = False
        for t0, t1, wanted, _host in windows:
            want = by_records(r, t0, t1, wanted)
            got = r.series_stats(t0, t1, wanted)  # type: ignore[arg-type]
            assert_same(got, want)
            seen = seen or any(st.partial is not None for st in got.values())
        assert seen
