"""``Sample.duration`` (a partial interval's seconds of work) through the pipeline: the
session file keeps it (back-compatibly), and every consumer that combines interval values
weights them by it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from benchtui.model.sample import Sample
from benchtui.store.recording import SessionReader, SessionWriter
from benchtui.store.recording.codec import SegmentEncoder
from benchtui.store.recording.decoder import SegmentDecoder
from benchtui.store.recording.series_stats import accumulate_stats
from tests.test_recording_roundtrip import T0, assert_same_records, meta, real_records


def _with_partials(records: list[tuple[float, object]], every: int = 3
                   ) -> list[tuple[float, object]]:
    """``real_records`` with every third sample marked partial (0.241 s, and a whole number),
    the others not (whatever their parser said); ``every=0``: none."""
    out: list[tuple[float, object]] = []
    n = 0
    for t, r in records:
        if isinstance(r, list):
            batch = []
            for s in r:
                n += 1
                partial = every and n % every == 0
                batch.append(dataclasses.replace(s, duration=0.241 if partial else
                                                 (2.0 if every and n % 7 == 0 else None)))
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
    records = _with_partials(real_records(), every=0)  # (the parsers' own durations gone)
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


def test_a_partial_last_interval_does_not_make_a_flat_run_unsteady() -> None:
    from benchtui.report.steady import steadiness

    # 20 flat seconds, then fio's last 0.24 s at a noisy rate (few ios over little time)
    samples = _iops([1000.0] * 20 + [1500.0], [None] * 20 + [0.24])
    third = accumulate_stats([(T0, samples[10:15])])
    fourth = accumulate_stats([(T0, samples[15:])])
    verdict = steadiness(third, fourth)
    assert verdict is not None and verdict.steady, verdict
    # the same point counted as a whole second is what flagged flat runs before
    nominal = [dataclasses.replace(s, duration=None) for s in samples]
    worse = steadiness(accumulate_stats([(T0, nominal[10:15])]),
                       accumulate_stats([(T0, nominal[15:])]))
    assert worse is not None and not worse.steady


def test_plots_mark_a_partial_interval_and_weigh_it_when_averaging() -> None:
    from benchtui.report.series import _Accumulator, downsample

    acc = _Accumulator()
    for job in ("a", "b"):
        for s in _iops([1000.0] * 5 + [900.0], [None] * 5 + [0.24], job=job):
            acc.feed(dataclasses.replace(s, labels={**s.labels, "step": "x"}))
    points = acc.sums[("iops", "read", False)]
    assert len(points) == 6 and max(points.values()) == 2000.0
    durations = acc.durations[("iops", "read", False)]
    assert list(durations.values()) == [0.24]
    down = downsample([0.0, 1.0, 1.25], [1000.0, 1000.0, 4000.0], limit=1,
                      durations=[None, None, 0.25])
    assert down.values == (pytest.approx((1000 + 1000 + 0.25 * 4000) / 2.25),)
    kept = downsample([0.0, 1.0, 1.25], [1.0, 2.0, 3.0], durations=[None, None, 0.25])
    assert kept.partial() == ([1.25], [3.0])


def test_the_jobs_tab_gives_fios_own_end_of_run_figure() -> None:
    from benchtui.store.figures import job_figures
    from benchtui.store.fleet import FleetState

    state = FleetState("s", ["h"])
    interval = _iops([14800.0], [None])
    state.on_samples([dataclasses.replace(s, labels={**s.labels, "step": "r"})
                      for s in interval])
    got = job_figures(state, "h")
    assert got == {("r", "j", "read"): ({"iops": 14800.0}, False)}
    state.on_samples([Sample(T0 + 21, "fio", "summary", "iops", 22100.0,
                             {"job": "j", "op": "read", "step": "r"}, "h", 20.2),
                      Sample(T0 + 21, "fio", "summary", "bandwidth_bytes", 5e6,
                             {"job": "group 0", "op": "read", "step": "r"}, "h", 20.2)])
    assert job_figures(state, "h") == {("r", "j", "read"): ({"iops": 22100.0}, True)}


def test_end_of_run_does_not_add_fios_group_lines_to_its_jobs() -> None:
    from benchtui.store.figures import end_of_run
    from benchtui.store.fleet import FleetState

    state = FleetState("s", ["h"])
    state.on_samples([
        Sample(T0, "fio", "summary", "bandwidth_bytes", 4e6, {"job": "a", "op": "read"}, "h"),
        Sample(T0, "fio", "summary", "bandwidth_bytes", 4e6, {"job": "b", "op": "read"}, "h"),
        Sample(T0, "fio", "summary", "bandwidth_bytes", 8e6, {"job": "group 0", "op": "read"},
               "h"),
        Sample(T0, "fio", "summary", "iops", 900.0, {"job": "all", "op": "read"}, "h")])
    iops, bandwidth, _lat = end_of_run(state, "h")
    assert bandwidth == {"read": 8e6} and iops == {"read": 900.0}


def test_iperf3s_end_of_run_figures_stay_on_the_net_row() -> None:
    from benchtui.model import events as ev
    from benchtui.model.events import Event
    from benchtui.parsers.iperf3 import Iperf3Parser
    from benchtui.store.figures import host_figures
    from benchtui.store.fleet import FleetState
    from tests.helpers import fixture_text, parse_with

    samples, _ = parse_with(Iperf3Parser, fixture_text("net/iperf3_seed000_run1_vm_to_vm.txt"),
                            host="h", t=T0)
    state = FleetState("s", ["h"])
    state.on_event(Event(T0 - 1, ev.STEP_START, "step net", step="net",
                         data={"hosts": ["h"], "tool": "iperf3"}))
    state.on_event(Event(T0 - 1, ev.HOST_STATE, "h: running", host="h",
                         data={"state": "running"}))
    state.on_samples([dataclasses.replace(s, labels={**s.labels, "step": "net"})
                      for s in samples])
    newest = max(s.t for s in samples if s.t is not None)
    live = host_figures(state, "h", newest)
    assert live.net_send is not None and not live.net_final
    state.on_event(Event(newest + 0.5, ev.HOST_STATE, "h: done", host="h",
                         data={"state": "done"}))
    after = host_figures(state, "h", newest + 30)
    summary = [s for s in samples if s.kind == "summary" and s.metric == "net_bandwidth_bytes"
               and s.labels.get("direction") == "send"]
    assert after.net_final and after.net_send == pytest.approx(sum(s.value for s in summary))
    assert after.net_receive is not None and after.retransmits == 13596.0


def test_the_ghost_digest_carries_the_net_figures() -> None:
    from benchtui.session.ghost_digest import GhostDigest
    from benchtui.store.fleet import FleetState

    state = FleetState("s", ["h"])
    state.on_samples([Sample(T0, "iperf3", "interval", "net_bandwidth_bytes", 1.25e8,
                             {"direction": "send", "stream": "sum"}, "h", 1.0),
                      Sample(T0, "iperf3", "interval", "net_bandwidth_bytes", 5e7,
                             {"direction": "send", "stream": "5"}, "h", 1.0)])
    figures = dict(GhostDigest().host(state, "h", T0))
    assert figures[("net", "send")] == 1.25e8 and ("net", "receive") not in figures


def test_the_report_says_whose_figures_and_how_fine_its_histograms_are() -> None:
    from benchtui.report.figures import (
        bucket_width,
        coarse_threshold_warnings,
        resolution_sentence,
        sources_sentences,
    )
    from benchtui.report.model import Row, Value

    assert bucket_width(4) == 0.0625 and bucket_width(6) == 0.015625
    assert "histogram_bits` 4: a bucket is up to 6.25% wide" in resolution_sentence(4)
    assert "histogram_bits` 6" in resolution_sentence(None)  # fio's own
    row = Row("s", "r", "h", "r", 1, T0, T0 + 20, [
        Value("iops", "read", 22100.0, "ops/s", source="summary"),
        Value("latency_p99_seconds", "read", 1e-3, "s", source="histogram")])
    said = " ".join(sources_sentences([row]))
    assert "IOPS and bandwidth: **the tool's own** end-of-run" in said
    assert "latency percentiles: **benchtui's**" in said
    p99 = ("latency_p99_seconds",)
    warned = coarse_threshold_warnings(105.0, p99, {"new": 4, "old": 4})
    assert len(warned) == 1 and "new, old" in warned[0] and "6.25%" in warned[0]
    assert coarse_threshold_warnings(110.0, p99, {"new": 4}) == []
    assert coarse_threshold_warnings(101.0, p99, {"new": None})  # fio's 1.56%
    assert coarse_threshold_warnings(101.0, ("iops",), {"new": 4}) == []


def test_dump_carries_the_duration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import orjson

    from benchtui.cli.main import main

    path = tmp_path / "d.btr"
    w = SessionWriter(str(path), meta())
    w.append([(T0 + 1, _iops([1000.0, 1000.0, 700.0], [None, None, 0.24]))])
    w.close(ended=T0 + 10)
    assert main(["dump", str(path)]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r.get("duration") for r in rows] == [None, None, 0.24]
    assert list(rows[2])[:3] == ["t", "elapsed", "duration"]  # docs/SAMPLES.md's order


def test_the_gate_warns_of_a_threshold_finer_than_the_histograms(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchtui.cli.main import main
    from tests import stats_session

    old, new = tmp_path / "old.btr", tmp_path / "new.btr"
    stats_session.write(old, stats_session.records(steps=1, run_seconds=12))
    stats_session.write(new, stats_session.records(steps=1, run_seconds=12, seed=4))
    out = tmp_path / "r.md"
    code = main(["report", str(new), "--baseline", f"session={old}", "--skip", "2",
                 "--fail-above", "p99=101%", "-o", str(out)])
    assert code in (0, 3)
    err = capsys.readouterr().err
    # (the sessions are named after their files: both come from the same plan)
    assert "101% is finer than the latency histograms of new can tell: at " \
           "histogram_bits 6 a bucket is up to 1.56% wide" in err
    assert "fio's own resolution, the finest there is: allow more" in err
    text = out.read_text()
    assert "`histogram_bits` 6: a bucket is up to 1.56% wide" in text
    assert "101% is finer" in text
    main(["report", str(new), "--baseline", f"session={old}", "--skip", "2",
          "--fail-above", "p99=110%", "-o", str(tmp_path / "r2.md")])
    assert "finer" not in capsys.readouterr().err
