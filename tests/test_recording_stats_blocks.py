"""Stats blocks (blocks.py, statsframe.py, blockread.py): ``series_stats`` read from the
pieces the writer summed gives what the records give, whatever the window, the file's age and
its damage; and a report's windows (a run's start plus a skip of 0-60 s, split near its half
and last quarter) are answered from the pieces alone, without decoding a sample."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from benchtui.model import events as ev
from benchtui.store.recording import SessionReader
from benchtui.store.recording import format as fmt
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.series_stats import SeriesStats, series_def
from tests import stats_session

FIXTURE = Path(__file__).parent / "fixtures" / "recording" / "before-stats.btr"
Stats = dict[SeriesDef, SeriesStats]


def by_records(reader: SessionReader, t0: float, t1: float, wanted: object = None) -> Stats:
    """What the records in [t0, t1) give, sample by sample (every frame read: records arrive
    out of order, so a frame may hold one earlier than the frame before it)."""
    out: Stats = {}
    for t, r in reader.timed_records(-math.inf, math.inf):
        if isinstance(r, list) and t0 <= t < t1:
            for s in r:
                key = series_def(s)
                if wanted is not None and not wanted(key):  # type: ignore[operator]
                    continue
                if key in out:
                    out[key].add(t, s)
                else:
                    out[key] = SeriesStats.of(t, s)
    return out


def assert_same(got: Stats, want: Stats) -> None:
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        assert (g.count, g.minimum, g.maximum, g.first_t, g.last_t) == \
            (w.count, w.minimum, w.maximum, w.first_t, w.last_t), key
        assert type(g.minimum) is type(w.minimum) and type(g.maximum) is type(w.maximum)
        assert _close(g.total, w.total) and _close(g.total_sq, w.total_sq), key
        assert (g.histogram is None) == (w.histogram is None), key
        assert (g.partial is None) == (w.partial is None), key
        if g.partial is not None and w.partial is not None:
            assert all(map(_close, g.partial.astuple(), w.partial.astuple())), key
            assert _close(g.mean, w.mean), key
        if g.histogram is not None and w.histogram is not None:
            assert g.histogram.counts == w.histogram.counts, key


def _close(a: float, b: float) -> bool:
    """Equal up to the order of summation (inf - inf is NaN either way)."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12,
                                                             abs_tol=1e-12)


def runs(reader: SessionReader) -> list[tuple[str, str, float, float]]:
    """(host, step, run_start t, run_end t) of every run, as a report finds them."""
    starts: dict[tuple[str, str], float] = {}
    out = []
    for e in reader.events():
        if e.host is None or e.step is None:
            continue
        if e.kind == ev.RUN_START:
            starts[(e.host, e.step)] = e.t
        elif e.kind == ev.RUN_END and (e.host, e.step) in starts:
            out.append((e.host, e.step, starts.pop((e.host, e.step)), e.t))
    return out


def in_step(host: str, step: str) -> object:
    pair = ("step", step)
    return lambda d: d.host == host and pair in d.labels


def report_windows(reader: SessionReader, skips: tuple[float, ...] = (0.0, 5.0, 10.0, 30.0)
                   ) -> list[tuple[float, float, object, str]]:
    """Every run's window after each skip, and its parts split where ``stats_split_near``
    says (near the half and the last quarter), as a report reads them."""
    out = []
    for host, step, t0, t1 in runs(reader):
        wanted = in_step(host, step)
        for skip in skips:
            w0 = t0 + skip
            if w0 >= t1:
                continue
            mid = reader.stats_split_near(w0 + (t1 - w0) / 2, (t1 - w0) / 8, host)
            q3 = reader.stats_split_near(w0 + 3 * (t1 - w0) / 4, (t1 - w0) / 8, host)
            assert w0 < mid < q3 < t1
            out += [(w0, t1, wanted, host), (w0, mid, wanted, host), (mid, q3, wanted, host),
                    (q3, t1, wanted, host)]
    return out


def without_data(src: Path, dst: Path) -> None:
    """A copy whose every DATA frame's payload is zeroed (no sample can be decoded): what
    ``series_stats`` gives then comes from the stats blocks alone."""
    data = bytearray(src.read_bytes())
    pos = fmt.FILE_HEADER_SIZE
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        if h.type == fmt.DATA:
            data[h.payload_offset:h.end] = bytes(h.payload_len)
        pos = h.end
    dst.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("blocks") / "steps.btr"
    stats_session.write(path, stats_session.records())
    return path


def test_report_windows_come_from_the_blocks_alone(synthetic: Path, tmp_path: Path) -> None:
    blind = tmp_path / "blind.btr"
    without_data(synthetic, blind)
    with SessionReader.open(str(synthetic)) as r, SessionReader.open(str(blind)) as b:
        windows = report_windows(r, (0.0, 5.0, 10.0))
        assert len(windows) > 40
        for t0, t1, wanted, _host in windows:
            want = by_records(r, t0, t1, wanted)
            assert want
            assert_same(b.series_stats(t0, t1, wanted), want)  # type: ignore[arg-type]
            assert_same(r.series_stats(t0, t1, wanted), want)  # type: ignore[arg-type]
        assert not b.warnings  # nothing was decoded
        for t0, t1, wanted, _host in report_windows(r, (30.0,)):  # too short to split on cuts
            assert_same(r.series_stats(t0, t1, wanted), by_records(r, t0, t1, wanted))  # type: ignore[arg-type]
        for skip in (15.0, 20.0, 60.0):  # every 5 s of the first minute is a cut
            for host, step, t0, t1 in runs(r):
                got = b.series_stats(t0 + skip, t1 + 1, in_step(host, step))  # type: ignore[arg-type]
                assert got == {} if skip > t1 - t0 else got
        assert not b.warnings


def test_any_window_and_filter_gives_what_the_records_give(synthetic: Path) -> None:
    rng = random.Random(11)
    with SessionReader.open(str(synthetic)) as r:
        filters = [None, lambda d: d.host == "h2", lambda d: d.metric == "latency_histogram",
                   lambda d: d.host == "h3" and ("step", "s1") in d.labels]
        windows = [(r.start, r.end + 1), (-math.inf, math.inf), (r.end + 1, r.end + 9)]
        windows += [(a, a + rng.uniform(0.0, 90.0))
                    for a in (rng.uniform(r.start - 5, r.end) for _ in range(25))]
        windows += [(t0 + 7.0, t1 - 3.3) for _h, _s, t0, t1 in runs(r)[:4]]  # not on cuts
        for t0, t1 in windows:
            for wanted in filters:
                assert_same(r.series_stats(t0, t1, wanted), by_records(r, t0, t1, wanted))


def test_late_events_give_the_same_figures(tmp_path: Path) -> None:
    """Events that reach the writer after samples past their time: their cuts are not made
    where samples already passed them, and the figures stay exact."""
    path = tmp_path / "late.btr"
    stats_session.write(path, stats_session.records(late_events=True, seed=5))
    with SessionReader.open(str(path)) as r:
        for t0, t1, wanted, _host in report_windows(r, (0.0, 5.0)):
            assert_same(r.series_stats(t0, t1, wanted), by_records(r, t0, t1, wanted))  # type: ignore[arg-type]


def test_a_file_written_before_stats_blocks(synthetic: Path) -> None:
    """The fixture is the synthetic session written by the writer before stats blocks: it
    is decoded, and gives what the same session written with them gives."""
    with SessionReader.open(str(FIXTURE)) as old, SessionReader.open(str(synthetic)) as new:
        assert old.meta.stats_seconds is None and not old.warnings
        assert all(s.blocks is None and not s.stats for s in old._segments)
        assert old.sample_count == new.sample_count
        for t0, t1, wanted, host in report_windows(new, (0.0, 5.0))[::3]:
            assert old.stats_split_near(t0 + 13.0, 10.0, host) == t0 + 13.0
            got = old.series_stats(t0, t1, wanted)  # type: ignore[arg-type]
            assert_same(got, by_records(old, t0, t1, wanted))
            assert_same(got, new.series_stats(t0, t1, wanted))  # type: ignore[arg-type]


def stats_frames(path: Path) -> list[fmt.FrameHeader]:
    data = path.read_bytes()
    out, pos = [], fmt.FILE_HEADER_SIZE
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        if h.type == fmt.STATS:
            out.append(h)
        pos = h.end
    return out


def test_damaged_stats_frames_are_decoded_instead(synthetic: Path, tmp_path: Path) -> None:
    frames = stats_frames(synthetic)
    assert len(frames) > 5
    data = bytearray(synthetic.read_bytes())
    for h in frames[1::2]:  # every other one: a byte of its payload flipped
        data[h.payload_offset + h.payload_len // 2] ^= 0x20
    damaged = tmp_path / "stats-damaged.btr"
    damaged.write_bytes(bytes(data))
    with SessionReader.open(str(damaged)) as r, SessionReader.open(str(synthetic)) as ok:
        for t0, t1, wanted, _host in report_windows(r, (5.0,)):
            want = ok.series_stats(t0, t1, wanted)  # type: ignore[arg-type]
            assert_same(r.series_stats(t0, t1, wanted), want)  # type: ignore[arg-type]
            assert_same(want, by_records(r, t0, t1, wanted))
        assert not r.warnings  # the data are intact: nothing is lost


def test_damaged_data_are_summed_as_recorded(synthetic: Path, tmp_path: Path) -> None:
    """A DATA frame damaged in a closed file: a window the stats blocks cover exactly has the
    figures of what was recorded (the reader no longer has those records to decode)."""
    data = bytearray(synthetic.read_bytes())
    pos, found = fmt.FILE_HEADER_SIZE, []
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        if h.type == fmt.DATA and h.segment == 4:
            found.append(h)
        pos = h.end
    data[found[1].payload_offset + 3] ^= 0x01
    damaged = tmp_path / "data-damaged.btr"
    damaged.write_bytes(bytes(data))
    with SessionReader.open(str(damaged)) as r, SessionReader.open(str(synthetic)) as ok:
        for t0, t1, wanted, _host in report_windows(r, (5.0,)):
            assert_same(r.series_stats(t0, t1, wanted), ok.series_stats(t0, t1, wanted))  # type: ignore[arg-type]


@pytest.mark.parametrize("cut", [0.35, 0.6, 0.97])
def test_a_crashed_recording(tmp_path: Path, cut: float) -> None:
    """The recorder died (no index; the last segment has no summary and the open blocks no
    piece): what has no piece is decoded."""
    records = stats_session.records(seed=7)
    path = tmp_path / "crash.btr"
    w = stats_session.write(path, records[:int(len(records) * cut)], close=False)
    w.abandon()
    with SessionReader.open(str(path)) as r:
        assert not r.complete
        for t0, t1, wanted, _host in report_windows(r, (0.0, 5.0)):
            assert_same(r.series_stats(t0, t1, wanted), by_records(r, t0, t1, wanted))  # type: ignore[arg-type]
        assert_same(r.series_stats(r.start, r.end + 1), by_records(r, r.start, r.end + 1))


def test_a_segment_rebuilt_after_a_lost_summary(synthetic: Path, tmp_path: Path) -> None:
    """No index and a SEGMENT_END lost: that segment is decoded whole, and the pieces that
    cover it are not used (its samples would count twice)."""
    data = bytearray(synthetic.read_bytes())
    pos, ends = fmt.FILE_HEADER_SIZE, []
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        if h.type == fmt.SEGMENT_END:
            ends.append(h)
        pos = h.end
    for h in (ends[1], ends[6]):
        data[h.payload_offset + 2] ^= 0x04
    path = tmp_path / "no-summary.btr"
    path.write_bytes(bytes(data[:len(data) - fmt.TRAILER_SIZE]))  # the index is not read
    with SessionReader.open(str(path)) as r:
        assert sum(s.blocks is None for s in r._segments) == 2
        for t0, t1, wanted, _host in report_windows(r, (0.0, 5.0))[::2]:
            assert_same(r.series_stats(t0, t1, wanted), by_records(r, t0, t1, wanted))  # type: ignore[arg-type]


def test_the_real_session_from_the_blocks(recorded: object, reader: SessionReader,
                                          tmp_path: Path) -> None:
    """The real recorded session (fio steps with iostat beside them): a run's window and the
    step's are answered from the stats blocks alone, as the records give them."""
    blind = tmp_path / "blind.btr"
    without_data(Path(reader.path), blind)
    found = runs(reader)
    assert len(found) == 2
    steps = {e.step: e.t for e in reader.events() if e.kind == ev.STEP_START}
    ends = {e.step: e.t for e in reader.events() if e.kind == ev.STEP_END}
    with SessionReader.open(str(blind)) as b:
        for host, step, t0, t1 in found:
            for a, z in ((t0, t1), (steps[step], ends[step]), (steps[step], t1)):
                want = by_records(reader, a, z, in_step(host, step))
                assert want and any(d.metric == "latency_histogram" for d in want)
                assert_same(b.series_stats(a, z, in_step(host, step)), want)  # type: ignore[arg-type]
        assert not b.warnings


def test_odd_values_and_histograms(tmp_path: Path) -> None:
    """Values of every kind the recording keeps (ints small and big, bools, -0.0, infinities,
    fio buckets) and histograms as running sums (the same keys, equal keys, other keys, a
    count that went down, zeros) or as counts (zeros kept): the blocks' figures are the
    records'."""
    from benchtui.model.events import Event
    from benchtui.model.histogram import LatencyHistogram, RunningSumsHistogram
    from benchtui.model.sample import Sample
    from benchtui.store.recording import SessionWriter

    keys = (1000, 2000, 4000, 8000)
    values = [1, 2**60, -(2**55), True, -0.0, 0.0, math.inf, -math.inf, 2.5, 0.000305152,
              1e300, 7.0]
    hists = [RunningSumsHistogram(keys, (1, 3, 3, 9)), RunningSumsHistogram(keys, (0, 2, 5, 5)),
             RunningSumsHistogram(tuple(keys), (4, 4, 4, 4)),
             RunningSumsHistogram((1000, 3000), (2, 7)),
             RunningSumsHistogram(keys, (5, 3, 8, 9)),  # a count went down
             LatencyHistogram({1000: 0, 5000: 3}), LatencyHistogram({})]
    t0 = stats_session.T0
    path = tmp_path / "odd.btr"
    w = SessionWriter(str(path), stats_session.meta(), segment_seconds=4.0)
    w.append([(t0, Event(t0, ev.RUN_START, "start", host="h1", step="x"))])
    for i in range(40):
        t = t0 + 0.5 + i * 0.7
        batch = [Sample(t, "t", "interval", "v", values[(i + j) % len(values)], {"j": str(j)},
                        "h1", None) for j in range(3)]
        batch.append(Sample(None, "t", "interval", "lat", 1.0, {}, "h1", None,
                            hists[i % len(hists)]))
        w.append([(t, batch)])
    w.close()
    blind = tmp_path / "blind.btr"
    without_data(path, blind)
    with SessionReader.open(str(path)) as r, SessionReader.open(str(blind)) as b:
        for a, z in [(t0, t0 + 30), (t0 + 5, t0 + 20), (t0 + 3.3, t0 + 17.9), (t0 - 1, t0 + 99)]:
            assert_same(r.series_stats(a, z), by_records(r, a, z))
        for a, z in [(t0, t0 + 30), (t0 + 5, t0 + 20), (t0 + 10, t0 + 95)]:  # on cuts
            assert_same(b.series_stats(a, z), by_records(r, a, z))
        assert not b.warnings
