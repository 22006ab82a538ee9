"""The figure track: the console's figures written by the recorder (FIGS frames) so that a
baseline's ghost reads them instead of computing them from the samples again
(``session.figure_track``, ``store.recording.figframe``/``figread``).

On the real sessions of tests/baseline_recording.py (recorded by the real engine, fio and
iostat, through ``record_cmd.recording``): the track is there, and the ghost read from it is
the ghost computed from the samples of the same records written without it, point for point;
a recording cut short is read as far as its track goes and computed past it; a damaged FIGS
frame, or a track of other figures, is computed instead."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.model.events import Event
from benchtui.session.baseline import BaselineSeries
from benchtui.session.figure_track import FigureRecorder
from benchtui.session.ghost_digest import GhostDigest
from benchtui.session.importer import import_outputs
from benchtui.store.recording import SessionReader, SessionWriter
from benchtui.store.recording import format as fmt
from benchtui.store.recording.figframe import FLEET_HOST, Tick, decode, encode
from benchtui.store.recording.varint import CodecError
from tests.baseline_recording import STEP, BaselinePair

Points = dict[tuple[str, tuple[str, ...]], tuple[list[float], list[float]]]


def rerecord(src: Path, dst: Path, *, track: bool, segment_seconds: float = 60.0,
             cut_after: float | None = None, digest: str | None = None) -> None:
    """The records of ``src`` written again to ``dst`` as the recorder writes them, with the
    figure track computed as ``recording()`` computes it (``track``) or without one;
    ``cut_after`` seconds: the writer abandoned there (what a kill -9 leaves)."""
    with SessionReader.open(str(src)) as reader:
        name = GhostDigest.name if track else None
        meta = replace(reader.meta, figures=digest or name, ended=None,
                       facts=dict(reader.meta.facts), hosts=list(reader.meta.hosts))
        writer = SessionWriter(str(dst), meta, segment_seconds=segment_seconds)
        figures = FigureRecorder(GhostDigest(), writer.add_figures) if track else None
        for t, record in reader.timed_records(reader.start, reader.end + 1.0):
            writer.append([(t, record)])
            if figures is not None:
                if isinstance(record, Event):
                    figures.on_event(record)
                elif isinstance(record, list):
                    figures.on_samples(record, t)
            if cut_after is not None and t > reader.start + cut_after:
                writer.abandon()
                return
        writer.close(ended=reader.meta.ended)


def ghost_points(path: Path, step: str = STEP, seconds: float = 30.0
                 ) -> tuple[Points, BaselineSeries]:
    """Every figure the ghost has of the step (shorter than ``seconds``), as the worker
    gets them."""
    baseline = BaselineSeries.open(str(path), GhostDigest(), threaded=False)
    hosts = list(baseline.layout.hosts(step))
    run = baseline.start_step(step, 1000.0, hosts, {"repeat": 1})
    assert run is not None
    baseline.want(1000.0 + seconds, 2 * seconds)  # past the step's end: all of it
    points = {k: (list(p.elapsed), list(p.values)) for k, p in run._load.points.items()}
    baseline.close()
    return points, baseline


def assert_same(read: Points, computed: Points) -> None:
    assert read.keys() == computed.keys()
    for key, (times, values) in computed.items():
        assert read[key][0] == pytest.approx(times, abs=1e-9), key
        # the track keeps values within 2**-16
        assert read[key][1] == pytest.approx(values, rel=2**-16, nan_ok=True), key


def test_a_recording_holds_the_console_figures(baseline_pair: BaselinePair) -> None:
    with SessionReader.open(str(baseline_pair.old)) as reader:
        assert reader.meta.figures == GhostDigest.name
        track = reader.figure_track
        assert track is not None and track.until is not None
        ticks = track.ticks(reader.start, reader.end + 1.0)
        assert ticks is not None
        hosts = {host for _t, host, _f in ticks}
        assert hosts == {"here", FLEET_HOST}
        keys = {key for _t, host, figures in ticks if host == "here" for key, _v in figures}
        assert {("iops", "read"), ("bandwidth_bytes", "read"), ("lat", "read", "p99")} <= keys
        # the baseline reads 400 IOPS
        iops = [v for _t, host, figures in ticks if host == "here"
                for key, v in figures if key == ("iops", "read")]
        assert 300 < sorted(iops)[len(iops) // 2] < 500


def test_info_says_whether_a_file_has_the_track(baseline_pair: BaselinePair, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bare.btr"
    rerecord(baseline_pair.old, bare, track=False)
    assert main(["info", str(baseline_pair.old)]) == 0
    assert f"figures   the console's figures per second ({GhostDigest.name})" \
        in capsys.readouterr().out
    assert main(["info", str(bare)]) == 0
    assert "figures   no figure track: a --baseline ghost" in capsys.readouterr().out
    assert main(["info", "--json", str(baseline_pair.old)]) == 0
    assert f'"figures": "{GhostDigest.name}"' in capsys.readouterr().out


def test_the_ghost_read_from_the_track_is_the_one_computed(baseline_pair: BaselinePair,
                                                          tmp_path: Path) -> None:
    bare = tmp_path / "bare.btr"
    rerecord(baseline_pair.old, bare, track=False)
    read, reading = ghost_points(baseline_pair.old)
    computed, computing = ghost_points(bare)
    assert reading.figures_read > 0 and reading.figures_computed == 0
    assert computing.figures_read == 0 and computing.figures_computed > 0
    assert len(computed) >= 8
    assert_same(read, computed)


def test_a_recording_cut_short_is_computed_past_its_track(baseline_pair: BaselinePair,
                                                          tmp_path: Path) -> None:
    cut, bare = tmp_path / "cut.btr", tmp_path / "bare.btr"
    # one-second segments; the writer dies 6 s in, with the step's last seconds unsealed
    rerecord(baseline_pair.old, cut, track=True, segment_seconds=1.0, cut_after=6.0)
    rerecord(baseline_pair.old, bare, track=False, segment_seconds=1.0, cut_after=6.0)
    with SessionReader.open(str(cut)) as reader:
        assert not reader.complete
        track = reader.figure_track
        assert track is not None and track.until is not None and track.until < reader.end
    read, mixed = ghost_points(cut)
    computed, _ = ghost_points(bare)
    assert mixed.figures_read > 0 and mixed.figures_computed > 0
    assert_same(read, computed)


def test_a_damaged_track_or_another_digest_is_computed(baseline_pair: BaselinePair,
                                                       tmp_path: Path) -> None:
    computed, _ = ghost_points(baseline_pair.old)
    other = tmp_path / "other.btr"
    rerecord(baseline_pair.old, other, track=True, digest="ghost/0")
    points, baseline = ghost_points(other)
    assert baseline.figures_read == 0 and baseline.figures_computed > 0
    assert_same(points, computed)

    damaged = tmp_path / "damaged.btr"
    damaged.write_bytes(baseline_pair.old.read_bytes())
    with SessionReader.open(str(damaged)) as reader:
        track = reader.figure_track
        assert track is not None
        at = track._frames[0][2]
    data = bytearray(damaged.read_bytes())
    data[at + fmt.FRAME_HEADER_SIZE + 3] ^= 0xFF  # the payload's CRC no longer holds
    damaged.write_bytes(bytes(data))
    points, baseline = ghost_points(damaged)
    assert baseline.figures_read == 0 and baseline.figures_computed > 0
    assert_same(points, computed)


def test_an_imported_session_has_its_track_too(tmp_path: Path) -> None:
    """``benchtui import`` writes the track as the recorder does (fio json+ with a status
    interval: per-second figures)."""
    capture = Path(__file__).resolve().parent.parent / "benchmarks/captures"
    outputs = [str(capture / "fio-json-plus-2jobs.json")]
    with_track, bare = tmp_path / "track.btr", tmp_path / "bare.btr"
    assert main(["import", *outputs, "--host", "a", "--step", "randrw", "-o",
                 str(with_track)]) == 0
    import_outputs(outputs, str(bare), hosts=["a"], steps=["randrw"])
    with SessionReader.open(str(with_track)) as reader:
        assert reader.meta.figures == GhostDigest.name and reader.figure_track is not None
    read, reading = ghost_points(with_track, "randrw", 600.0)
    computed, computing = ghost_points(bare, "randrw", 600.0)
    assert reading.figures_read > 0 and reading.figures_computed == 0
    assert computing.figures_computed > 0
    assert len(read[("a", ("iops", "read"))][0]) >= 3  # (the capture is 6 s long)
    assert_same(read, computed)


def test_figure_frames_round_trip_and_refuse_damage() -> None:
    ticks: list[Tick] = [
        (1000.25, "h1", [(("iops", "read"), 12345.5), (("lat", "read", "p99"), 2.5e-4)]),
        (1000.5, FLEET_HOST, [(("fleet", "iops", "read"), 24691.0)]),
        (1001.25, "h1", [(("iops", "read"), math.inf), (("iops", "write"), math.nan)])]
    back = decode(encode(ticks))
    assert [(t, h) for t, h, _f in back] == [(t, h) for t, h, _f in ticks]
    assert back[0][2][0] == (("iops", "read"), 12345.5)
    assert back[0][2][1][1] == pytest.approx(2.5e-4, rel=2**-16)
    many = [(("v",), 1.0 + i / 7919.0) for i in range(5000)]
    kept = decode(encode([(0.0, "h", many)]))[0][2]
    assert max(abs(b - a) / a for (_k, a), (_k2, b) in zip(many, kept, strict=True)) <= 2**-16
    assert math.isinf(back[2][2][0][1]) and math.isnan(back[2][2][1][1])
    assert decode(encode([])) == []
    payload = encode(ticks)
    for bad in (payload[:-3], payload + b"\x00", b"\x05{}" + payload[3:], b""):
        with pytest.raises(CodecError):
            decode(bad)


class _BrokenDigest(GhostDigest):
    """The console's figures, until the third host's batch: then a bug."""

    def __init__(self) -> None:
        self.calls = 0

    def host(self, state, host, t):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 3:
            raise ZeroDivisionError("a bug")
        return super().host(state, host, t)


def test_a_track_that_fails_stops_and_the_file_says_it_has_none(
        baseline_pair: BaselinePair, tmp_path: Path) -> None:
    """A bug in the figures stops the track, not the recording: the file is written whole,
    says it has no track, and its ghost is computed."""
    out = tmp_path / "broken.btr"
    with SessionReader.open(str(baseline_pair.old)) as reader:
        meta = replace(reader.meta, figures=GhostDigest.name, ended=None,
                       facts=dict(reader.meta.facts), hosts=list(reader.meta.hosts))
        writer = SessionWriter(str(out), meta)
        figures = FigureRecorder(_BrokenDigest(), writer.add_figures,
                                 on_error=lambda: writer.set_meta(figures=None))
        records = list(reader.timed_records(reader.start, reader.end + 1.0))
        for t, record in records:
            writer.append([(t, record)])
            if isinstance(record, Event):
                figures.on_event(record)
            elif isinstance(record, list):
                figures.on_samples(record, t)
        writer.close(ended=reader.meta.ended)
    assert figures.error is not None and "ZeroDivisionError: a bug" in figures.error
    with SessionReader.open(str(out)) as reader:
        assert reader.meta.figures is None and reader.figure_track is None
        assert reader.sample_count == sum(len(r) for _t, r in records if isinstance(r, list))
    computed, baseline = ghost_points(out)
    assert baseline.figures_computed > 0 and computed


def test_the_samples_read_are_chosen_again_at_each_step() -> None:
    """Which samples the track reads is the step's: a host outside a step's hosts is not
    read in it, whatever an earlier step read of the same batches."""
    from benchtui.model import events as ev
    from benchtui.model.sample import Sample

    written: list[tuple[float, str | None]] = []
    figures = FigureRecorder(GhostDigest(), lambda t, host, kept: written.append((t, host)))

    def batch(host: str, t: float) -> list[Sample]:
        return [Sample(t, "fio", "interval", "iops", 100.0, {"job": "j", "op": op}, host)
                for op in ("read", "write")]

    for step, hosts, start in (("one", ["h1"], 100.0), ("two", ["h2"], 200.0)):
        figures.on_event(Event(start, ev.STEP_START, step, step=step, data={"hosts": hosts}))
        for k in range(3):
            for host in ("h1", "h2"):
                figures.on_samples(batch(host, start + k + 1))
        figures.on_event(Event(start + 5, ev.STEP_END, step, step=step))
    assert figures.error is None
    assert {host for t, host in written if t < 200 and host} == {"h1"}
    assert {host for t, host in written if t > 200 and host} == {"h2"}
