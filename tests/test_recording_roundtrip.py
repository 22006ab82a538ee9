"""Session files: what is written is what is read, exactly (samples, histograms, events, raw
output), by time window, by host and metric; and the reader's refusals."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Sequence
from pathlib import Path

import pytest

from benchtui.errors import RecordingError
from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample
from benchtui.model.text_lines import TextLines
from benchtui.parsers.fio_json import FioJsonParser
from benchtui.parsers.iostat import IostatParser
from benchtui.store.recording import (
    SCHEMA_VERSION,
    Record,
    Recorder,
    SessionMeta,
    SessionReader,
    SessionWriter,
)
from benchtui.store.recording import format as fmt
from benchtui.store.recording.codec import SegmentEncoder
from benchtui.store.recording.decoder import SegmentDecoder
from benchtui.store.recording.histcodec import FIO_BUCKETS, decode_histogram, encode_histogram
from benchtui.store.recording.outputfilter import JsonOutputFilter
from tests.helpers import fixture_text, parse_with

T0 = 1_795_000_000.25

Timed = tuple[float, Record]


def meta(**kw: object) -> SessionMeta:
    base = SessionMeta(SCHEMA_VERSION, "test", "sid-1", "[session]\nname = \"test\"\n",
                       "plan.toml", T0, None, hosts=["db1", "db2"])
    for k, v in kw.items():
        setattr(base, k, v)
    return base


def batches_by_time(samples: list[Sample]) -> list[list[Sample]]:
    out: dict[object, list[Sample]] = {}
    for s in samples:
        out.setdefault(s.t, []).append(s)
    return list(out.values())


def real_records(host: str = "db1", shift: float = 0.0) -> list[Timed]:
    """Real parsed samples (fio json+ with histograms, iostat -x), raw iostat text and events,
    timed as a live session would have delivered them (one batch per interval)."""
    fio, _ = parse_with(FioJsonParser, fixture_text("fio_json/randread_randwrite.jsonplus.txt"),
                        host=host)
    io_text = fixture_text("disk/real_sysstat12_x_t.txt")
    iostat, _ = parse_with(IostatParser, io_text, host=host, t=T0)
    assert any(s.histogram for s in fio) and iostat
    out: list[Timed] = [(T0 + shift, Event(T0 + shift, ev.FACTS, f"{host}: facts", host=host,
                                           data={"facts": {"os": "Debian", "cpu_count": 2}}))]
    t = T0 + shift + 0.5
    for batch in batches_by_time(fio):
        out.append((t, batch))
        t += 1.0
    for i, batch in enumerate(batches_by_time(iostat)):
        out.append((t, batch))
        out.append((t, OutputLines(t, host, "randrw", "iostat", "monitor",
                                   tuple(io_text.splitlines()[i * 4:i * 4 + 4]))))
        t += 1.0
    out.append((t, Event(t, ev.STEP_END, "step done", ev.WARNING, host, "randrw",
                         {"ok": True, "n": 3, "list": [1, 2.5, "x"]})))
    return out


def assert_same_records(got: list[Timed], want: list[Timed]) -> None:
    assert len(got) == len(want)
    for (tg, g), (tw, w) in zip(got, want, strict=True):
        assert tg == tw
        if isinstance(w, list):
            assert isinstance(g, list)
            assert_same_samples(g, w)
        else:
            assert g == w


def assert_same_samples(got: list[Sample], want: list[Sample]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.to_dict() == w.to_dict()
        assert list(g.labels.items()) == list(w.labels.items())  # the order too
        assert type(g.value) is type(w.value)
        assert struct.pack("<d", g.value) == struct.pack("<d", w.value)
        assert (g.histogram is None) == (w.histogram is None)
        if w.histogram is not None:
            assert g.histogram is not None
            assert g.histogram.counts == w.histogram.counts


def write(path: Path, records: list[Timed], *, per_frame: int = 3, **kw: object) -> None:
    w = SessionWriter(str(path), meta(), **kw)  # type: ignore[arg-type]
    for i in range(0, len(records), per_frame):
        w.append(records[i:i + per_frame])
    w.close(ended=T0 + 1000)


def test_frame_codec_round_trips_real_samples_exactly() -> None:
    records = real_records()
    enc, dec = SegmentEncoder(), SegmentDecoder()
    got: list[Timed] = []
    for i in range(0, len(records), 4):
        got += dec.decode(enc.encode(records[i:i + 4]))
    assert_same_records(got, records)


@pytest.mark.parametrize("value", [
    0.0, -0.0, 1.0, -7.0, 2.0**60, 1e300, -1e-300, 5e-324, 0.1, 0.16920000000000002, 2.73,
    -123.456, 0.000305152, FIO_BUCKETS[700] / 1e9, 12214.76510067114, math.pi, 1e16, 123456789.0,
    float("inf"), float("-inf"), 3, -(2**70), 0])
def test_every_kind_of_value_comes_back_bit_for_bit(value: float) -> None:
    s = Sample(T0, "fio", "interval", "iops", value, {"job": "j"}, "h", None)
    enc, dec = SegmentEncoder(), SegmentDecoder()
    (_, got), = dec.decode(enc.encode([(T0, [s])]))
    assert isinstance(got, list)
    assert type(got[0].value) is type(value)
    assert repr(got[0].value) == repr(value)
    assert got[0].t == T0 and got[0].elapsed is None


def test_histograms_with_fio_and_other_keys() -> None:
    for counts in ({}, {0: 0}, {FIO_BUCKETS[5]: 3, FIO_BUCKETS[900]: 10**12},
                   {-5: 1, 3: 0, 1_000_001: 7, 2**40: 2}):
        buf = bytearray()
        encode_histogram(buf, counts)
        assert decode_histogram(bytes(buf)) == (counts, len(buf))


def test_file_round_trip_with_many_segments_and_windows(tmp_path: Path) -> None:
    records = real_records("db1") + real_records("db2", shift=40.0)
    path = tmp_path / "s.btr"
    write(path, records, segment_seconds=2.0)
    with SessionReader.open(str(path)) as r:
        assert r.complete and not r.warnings
        assert r.segment_count > 3
        assert r.meta.name == "test" and r.meta.ended == T0 + 1000
        assert r.meta.facts == {"db1": {"os": "Debian", "cpu_count": 2},
                                "db2": {"os": "Debian", "cpu_count": 2}}
        assert r.start == records[0][0] and r.end == max(t for t, _ in records)
        assert_same_records(list(r.timed_records(r.start, math.inf)), records)
        # any window: exactly the records whose time is in [t0, t1), in order
        for a, b in [(T0, T0 + 3), (T0 + 2.6, T0 + 41.1), (T0 + 10, T0 + 10.5),
                     (T0 + 45, T0 + 1e6), (0, T0)]:
            want = [(t, x) for t, x in records if a <= t < b]
            assert_same_records(list(r.timed_records(a, b)), want)
            assert len(list(r.records(a, b))) == len(want)
        all_samples = [s for _, x in records if isinstance(x, list) for s in x]
        assert r.sample_count == len(all_samples)
        assert_same_samples(list(r.samples()), all_samples)
        only = list(r.samples(hosts=["db2"], metrics=["iops", "latency_histogram"]))
        assert_same_samples(only, [s for s in all_samples if s.host == "db2"
                                   and s.metric in ("iops", "latency_histogram")])
        ts = sorted({s.t for s in all_samples if s.t is not None})
        mid = ts[len(ts) // 2]
        assert_same_samples(list(r.samples(t0=mid, t1=mid + 2)),
                            [s for s in all_samples if s.t is not None and mid <= s.t < mid + 2])
        assert [e for _, e in records if isinstance(e, Event)] == r.events()
        assert r.host_sample_counts().keys() == {"db1", "db2"}


def test_records_out_of_time_order_are_found_at_a_windows_edge(tmp_path: Path) -> None:
    """An event stamped when it happened can reach the file after records of later times
    (frames are sealed by arrival): a window that ends between them still holds it, and
    so does the newest-records path replay seeks with."""
    path = tmp_path / "late.btr"
    writer = SessionWriter(str(path), meta())
    early = Event(T0 + 10.0, ev.INFO, "early")
    later = Event(T0 + 12.0, ev.INFO, "later")
    late = Event(T0 + 11.0, ev.INFO, "stamped at 11 s, written after the 12-s frame")
    for record in (early, later, late):
        writer.append([(record.t, record)])
    writer.close()
    with SessionReader.open(str(path)) as reader:
        found = [r for _t, r in reader.timed_records(T0, T0 + 11.5)]
        assert found == [early, late]
        assert [r for _t, r in reader.newest_records(T0, T0 + 11.5)] == [early, late]
        assert [r for _t, r in reader.timed_records(T0 + 11.5, T0 + 20)] == [later]


def test_gaps_are_silences_over_two_seconds(tmp_path: Path) -> None:
    def batch(host: str, t: float) -> Timed:
        return (t, [Sample(t, "iostat", "interval", "disk_util_ratio", 0.5, {"device": "sda"},
                           host)])

    times = [0, 1, 2, 3, 7.5, 8.5, 9.5]  # 3 -> 7.5: a gap of 4.5 s
    records = sorted([batch("a", T0 + x) for x in times] + [batch("b", T0 + x) for x in
                                                              range(10)], key=lambda r: r[0])
    path = tmp_path / "g.btr"
    write(path, records, per_frame=1, segment_seconds=4.0)  # the gap spans segments
    with SessionReader.open(str(path)) as r:
        gaps = r.gaps()
    assert [(g.host, g.t0, g.t1) for g in gaps] == [("a", T0 + 3, T0 + 7.5)]
    assert gaps[0].seconds == 4.5
    # a host that stops for good has a gap up to the end
    path2 = tmp_path / "g2.btr"
    write(path2, [*records, batch("b", T0 + 20)], per_frame=1, segment_seconds=4.0)
    with SessionReader.open(str(path2)) as r:
        assert [(g.host, g.t0, g.t1) for g in r.gaps()] == [
            ("a", T0 + 3, T0 + 7.5), ("b", T0 + 9, T0 + 20), ("a", T0 + 9.5, T0 + 20)]


@pytest.mark.parametrize("as_text", [False, True], ids=["tuples", "text"])
def test_json_tool_output_is_left_out_but_text_kept(as_text: bool) -> None:
    """The same whether the lines come as tuples or as ``TextLines`` (live: the chunk's
    text, split only where kept)."""
    def lines(*text: str) -> Sequence[str]:
        return TextLines("\n".join(text)) if as_text else text

    f = JsonOutputFilter()
    fio = [OutputLines(T0, "h", "s", "fio", "step", lines("fio: warning: x", "{", '  "a" : {')),
           OutputLines(T0, "h", "s", "fio", "step", lines("  }", "}", "{")),
           OutputLines(T0, "h", "s", "fio", "step", lines("}",))]
    kept = [f(o) for o in fio]
    assert kept[0] is not None and kept[0].lines == ("fio: warning: x",)
    assert kept[1] is None and kept[2] is None
    iperf = OutputLines(T0, "h", "s", "iperf3", "step", lines("[  5]   0.00-1.00 sec",
                                                              '{"a": 1}', "[SUM] x"))
    assert f(iperf).lines == ("[  5]   0.00-1.00 sec", "[SUM] x")  # type: ignore[union-attr]
    text = OutputLines(T0, "h", "s", "iostat", "step", lines("Device r/s", "sda 1.0"))
    assert f(text) is text  # (nothing left out: passed as it came)
    first_json_only = f(OutputLines(T0, "g", "s", "fio", "step", lines("{",)))
    assert first_json_only is not None and first_json_only.lines == ()  # the tool is announced
    assert f.dropped == 8


def test_recorder_thread_writes_and_closes(tmp_path: Path) -> None:
    path = tmp_path / "r.btr"
    rec = Recorder(str(path), meta(), flush_seconds=0.05)
    records = real_records()
    for _t, r in records:
        if isinstance(r, list):
            rec.on_samples(r)
        elif isinstance(r, Event):
            rec.on_event(r)
        else:
            rec.on_output(r)
    rec.close()
    rec.close()  # twice is fine
    rec.on_event(Event(T0, ev.MARK, "after close: ignored"))
    with SessionReader.open(str(path)) as reader:
        got = list(reader.records(0, math.inf))
    assert len(got) == len(records)
    assert_same_samples([s for x in got if isinstance(x, list) for s in x],
                        [s for _, x in records if isinstance(x, list) for s in x])


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "x.btr"
    path.write_bytes(b"precious")
    with pytest.raises(RecordingError, match="already exists"):
        SessionWriter(str(path), meta())
    assert path.read_bytes() == b"precious"


def test_refusals_are_one_sentence(tmp_path: Path) -> None:
    cases = {"missing.btr": None, "empty.btr": b"", "text.btr": b"[session]\nname = 'x'\n",
             "short.btr": b"BTUISE"}
    for name, content in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
    messages = {}
    for name in cases:
        with pytest.raises(RecordingError) as info:
            SessionReader.open(str(tmp_path / name))
        messages[name] = str(info.value)
    assert "no such file" in messages["missing.btr"]
    assert "empty" in messages["empty.btr"]
    assert "not a benchtui session file" in messages["text.btr"]
    assert "cut short" in messages["short.btr"]
    assert all("\n" not in m for m in messages.values())


def test_a_newer_schema_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "new.btr"
    write(path, real_records())
    data = bytearray(path.read_bytes())
    data[:fmt.FILE_HEADER_SIZE] = fmt.file_header(SCHEMA_VERSION + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(RecordingError) as info:
        SessionReader.open(str(path))
    assert str(info.value) == (
        f"{path}: was written by a newer benchtui (schema {SCHEMA_VERSION + 1}, this one "
        f"reads up to {SCHEMA_VERSION}): upgrade benchtui to read it")


def test_an_unclosed_file_is_read_by_walking_its_frames(tmp_path: Path) -> None:
    records = real_records()
    path = tmp_path / "crash.btr"
    w = SessionWriter(str(path), meta(), segment_seconds=3.0)
    for i in range(0, len(records), 2):
        w.append(records[i:i + 2])
    w.abandon()  # what a kill -9 leaves: no index, an open segment
    with SessionReader.open(str(path)) as r:
        assert not r.complete and r.meta.ended is None
        assert len(r.warnings) == 1 and "was not closed" in r.warnings[0]
        assert_same_records(list(r.timed_records(0, math.inf)), records)
        assert r.events() == [x for _, x in records if isinstance(x, Event)]
        assert r.meta.facts["db1"]["os"] == "Debian"


def test_histogram_is_decoded_only_when_read() -> None:
    s = Sample(T0, "fio", "interval", "latency_histogram", 3.0, {"job": "j"}, "h", 1.0,
               LatencyHistogram({FIO_BUCKETS[300]: 2, FIO_BUCKETS[301]: 1}))
    enc, dec = SegmentEncoder(), SegmentDecoder()
    (_, got), = dec.decode(enc.encode([(T0, [s])]))
    assert isinstance(got, list)
    h = got[0].histogram
    assert h is not None and type(h).__name__ == "RecordedHistogram"
    assert h == s.histogram and h.total() == 3 and h.quantile(0.5) == FIO_BUCKETS[300] / 1e9


def _filter_by_line(lines: tuple[str, ...], in_json: bool) -> tuple[list[str], bool]:
    """The JSON filter's rule, line by line (the filter itself works on the joined text)."""
    kept = []
    for line in lines:
        if in_json:
            in_json = not line.startswith("}")
            continue
        if line.startswith("{"):
            in_json = not (line.rstrip().endswith("}") and line.count("{") == line.count("}"))
            continue
        kept.append(line)
    return kept, in_json


@pytest.mark.parametrize("hops", [None, 1])
def test_json_filter_agrees_with_the_rule_line_by_line(hops: int | None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``hops``: braces inside lines passed over before the filter looks for a line end and
    a brace together (None: as it is; 1: the pair looked for at the second)."""
    from benchtui.store.recording import outputfilter
    from benchtui.store.recording.outputfilter import _split, _split_text

    if hops is not None:
        monkeypatch.setattr(outputfilter, "_HOPS", hops)
    rng = random.Random(3)
    pool = ["{", "}", "  }", '  "a" : {', "fio: warn", "", "[  5] x", '{"a": 1}', '{"a": {',
            "}}", "text {", "  {", "{}", " ", "}{"]
    for _ in range(5000):
        lines = tuple(rng.choice(pool) for _ in range(rng.randrange(0, 12)))
        state = rng.random() < 0.5
        assert _split(lines, state) == _filter_by_line(lines, state), (lines, state)
        if lines:  # (a text is one line at least)
            assert _split_text("\n".join(lines), state) == _split(lines, state), (lines, state)


def test_empty_sessions(tmp_path: Path) -> None:
    closed = tmp_path / "closed.btr"
    SessionWriter(str(closed), meta()).close(ended=T0 + 5)
    with SessionReader.open(str(closed)) as r:
        assert r.complete and not r.warnings
        assert (r.start, r.end, r.sample_count, r.events(), r.gaps()) == (T0, T0, 0, [], [])
        assert list(r.records(-math.inf, math.inf)) == []
    crashed = tmp_path / "crashed.btr"
    SessionWriter(str(crashed), meta()).abandon()
    with SessionReader.open(str(crashed)) as r:
        assert r.warnings == ["the recording was not closed and holds no records"]
        assert r.meta.name == "test" and list(r.samples()) == []


def test_lines_as_text_record_the_same_bytes(tmp_path: Path) -> None:
    """Live, a chunk's lines come as one ``TextLines`` (split when read): the recording is
    byte for byte the one made of the same lines as tuples."""
    records = real_records()
    as_text = [(t, OutputLines(r.t, r.host, r.step, r.tool, r.role, TextLines("\n".join(r.lines)))
                if isinstance(r, OutputLines) and r.lines else r) for t, r in records]
    assert any(isinstance(r, OutputLines) and isinstance(r.lines, TextLines) for _, r in as_text)
    write(tmp_path / "tuples.btr", records)
    write(tmp_path / "text.btr", as_text)
    assert (tmp_path / "text.btr").read_bytes() == (tmp_path / "tuples.btr").read_bytes()
