"""The recorder's fast encoders write exactly the bytes of the plain ones: planed varints and
zigzags by table, histograms from fio's running sums by lane arithmetic (no counts dict), the
frame's time table a distinct time at a time, segment summaries by C-level folds; and the
lazy fio histogram may be read from two threads."""

from __future__ import annotations

import math
import random
import struct
import threading
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.model.events import Event
from benchtui.model.fio_buckets import bucket_values
from benchtui.model.histogram import LatencyHistogram, counts_from_sums
from benchtui.model.sample import Sample
from benchtui.parsers._fio_json_bins import DeltaHistogram, counts_of
from benchtui.store.recording import SCHEMA_VERSION, Recorder, SessionMeta, SessionReader
from benchtui.store.recording.codec import SegmentEncoder
from benchtui.store.recording.decoder import SegmentDecoder
from benchtui.store.recording.histcodec import (
    FIO_BUCKETS,
    HistogramEncoder,
    RecordedHistogram,
    decode_histogram,
    decode_running_sums,
    encode_histogram,
)
from benchtui.store.recording.lanes import LANES_32, LANES_64, LaneWidth
from benchtui.store.recording.model import Gap
from benchtui.store.recording.stats import GAP_SECONDS, SegmentStats
from benchtui.store.recording.varint import (
    CodecError,
    get_uvarints,
    put_blob,
    put_list,
    put_uvarints,
    zigzag,
    zigzags,
)

T0 = 1_795_000_000.25


def plain_uvarints(values: list[int]) -> bytes:
    """The planed varints of docs/session-format.md, a number at a time."""
    out = bytearray()
    vs = list(values)
    while vs:
        out += bytes((v & 0x7F) | (0x80 if v > 0x7F else 0) for v in vs)
        vs = [v >> 7 for v in vs if v > 0x7F]
    return bytes(out)


@given(st.lists(st.one_of(st.integers(0, 300), st.integers(0, 2**70)), max_size=60))
def test_planed_varints_are_the_plain_ones(values: list[int]) -> None:
    out = bytearray()
    put_uvarints(out, values)
    assert bytes(out) == plain_uvarints(values)
    assert get_uvarints(bytes(out), 0, len(values)) == (values, len(out))


@given(st.lists(st.one_of(st.integers(-40000, 40000), st.integers(-2**70, 2**70)), max_size=60))
def test_zigzags_by_table_are_the_plain_ones(values: list[int]) -> None:
    assert zigzags(values) == [zigzag(v) for v in values]
    assert zigzags(iter(values)) == [zigzag(v) for v in values]


def test_a_negative_varint_is_refused() -> None:
    for bad in ([-1], [200, -3], [2**20, -1]):
        try:
            put_uvarints(bytearray(), bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")


def plain_bytes(ns: Sequence[int], cum: Sequence[int]) -> bytes:
    out = bytearray()
    encode_histogram(out, counts_of(ns, cum))
    return bytes(out)


def check_sums(encoder: HistogramEncoder, ns: list[int], cum: tuple[int, ...]) -> None:
    got = bytearray()
    encoder.encode(got, DeltaHistogram(ns, cum))
    assert bytes(got) == plain_bytes(ns, cum), (ns, cum)
    assert decode_histogram(bytes(got)) == (counts_of(ns, cum), len(got))


@settings(max_examples=300)
@given(st.data())
def test_histograms_from_running_sums_are_the_plain_bytes(data: st.DataObject) -> None:
    n = data.draw(st.sampled_from([0, 1, 2, 3, 40, 700, len(FIO_BUCKETS)]))
    start = data.draw(st.integers(0, len(FIO_BUCKETS) - n))
    ns = list(FIO_BUCKETS[start:start + n])
    top = data.draw(st.sampled_from([1, 200, 2**19, 2**21, 2**45, 2**53, 2**70]))
    rng = random.Random(data.draw(st.integers(0, 2**32)))  # (hypothesis is slow at long lists)
    counts = [rng.choice([0, rng.randint(0, top)]) for _ in range(n)]
    shape = data.draw(st.sampled_from(["fio", "descending", "other keys", "a count down"]))
    if shape == "descending":
        ns.reverse()
    elif shape == "other keys" and n:
        ns[data.draw(st.integers(0, n - 1))] = 7  # not a fio bucket
    elif shape == "a count down" and n:
        counts[data.draw(st.integers(0, n - 1))] = -data.draw(st.integers(1, 100))
    check_sums(HistogramEncoder(), ns, tuple(accumulate(counts)))


def test_histograms_of_a_real_fio_run_and_the_key_list_cache() -> None:
    rng = random.Random(5)
    encoder = HistogramEncoder(capacity=3)
    lists = [list(FIO_BUCKETS[i:i + 600]) for i in range(0, 1200, 100)]
    for _ in range(200):  # several key lists, more than the cache holds, in turn
        ns = rng.choice(lists)
        counts = [rng.choice([0, rng.randint(1, 400), rng.randint(1, 20)]) for _ in ns]
        check_sums(encoder, ns, tuple(accumulate(counts)))


def test_a_histogram_with_its_dict_made_or_set_uses_the_dict() -> None:
    ns = list(FIO_BUCKETS[100:110])
    cum = tuple(accumulate([0, 3, 0, 9, 1, 0, 0, 2, 5, 0]))
    made = DeltaHistogram(ns, cum)
    assert made.running_sums() == (ns, cum)
    assert made.counts == counts_of(ns, cum)
    assert made.running_sums() is None
    given_dict = DeltaHistogram(ns, cum)
    given_dict.counts = {FIO_BUCKETS[3]: 4}
    assert given_dict.running_sums() is None
    for h in (made, given_dict, LatencyHistogram({5: 1, -2: 0})):
        got = bytearray()
        HistogramEncoder().encode(got, h)
        want = bytearray()
        encode_histogram(want, h.counts)
        assert got == want


def test_the_lazy_histogram_read_from_two_threads() -> None:
    ns = list(FIO_BUCKETS[200:900])
    rng = random.Random(1)
    hists = [DeltaHistogram(ns, tuple(accumulate(rng.randint(0, 50) for _ in ns)))
             for _ in range(300)]
    want = [plain_bytes(*h.running_sums() or ((), ())) for h in hists]
    got: list[bytes] = []

    def record() -> None:
        encoder = HistogramEncoder()
        for h in hists:
            out = bytearray()
            encoder.encode(out, h)
            got.append(bytes(out))

    thread = threading.Thread(target=record)
    thread.start()
    for h in hists:  # the event loop's consumers make the dicts meanwhile
        assert sum(h.counts.values()) >= 0
    thread.join()
    assert got == want


def test_times_of_a_batch_come_back_bit_for_bit() -> None:
    nan = float("nan")
    times = [T0, T0, None, 0.0, -0.0, T0 + 1, nan, 0.0, None, T0 + 1, -0.0, math.inf, T0]
    batch = [Sample(t, "fio", "interval", "iops", 1.0, {"job": "j"}, "h", e)
             for t, e in zip(times, reversed(times), strict=True)]
    enc, dec = SegmentEncoder(), SegmentDecoder()
    (_, got), = dec.decode(enc.encode([(T0, batch)]))
    assert isinstance(got, list)
    for g, w in zip(got, batch, strict=True):
        for a, b in ((g.t, w.t), (g.elapsed, w.elapsed)):
            assert (a is None) == (b is None)
            if a is not None and b is not None:
                assert struct.pack("<d", a) == struct.pack("<d", b)


def plain_stats(records: list[tuple[float, list[Sample]]]) -> SegmentStats:
    """SegmentStats.add as it was: a sample at a time."""
    out = SegmentStats(0)
    for t, r in records:
        out.t0 = t if out.t0 is None or t < out.t0 else out.t0
        out.t1 = t if out.t1 is None or t > out.t1 else out.t1
        out.samples += len(r)
        per: dict[str, int] = {}
        for s in r:
            st_ = t if s.t is None else s.t
            if out.st0 is None or st_ < out.st0:
                out.st0 = st_
            if out.st1 is None or st_ > out.st1:
                out.st1 = st_
            per[s.host] = per.get(s.host, 0) + 1
        for host, n in per.items():
            out.hosts[host] = out.hosts.get(host, 0) + n
            before = out.last.get(host)
            if before is not None and t - before > GAP_SECONDS:
                out.gaps.append(Gap(host, before, t))
            if before is None or t > before:
                out.last[host] = t
    return out


def test_segment_summaries_as_a_sample_at_a_time() -> None:
    rng = random.Random(7)
    records: list[tuple[float, list[Sample]]] = []
    t = T0
    for _ in range(200):
        t += rng.choice([0.5, 1.0, 3.0])
        batch = [Sample(rng.choice([None, t - 1, t - 5, t + 2, float("nan")]), "x", "interval",
                        "m", 1.0, {}, rng.choice(["a", "b", "c"]) if rng.random() < 0.3 else "a")
                 for _ in range(rng.randint(0, 6))]
        records.append((t, batch))
    fast = SegmentStats(0)
    fast.add(records)
    want = plain_stats(records)
    assert repr(fast.to_json()) == repr(want.to_json())


def test_the_sinks_encode_at_once(tmp_path: Path) -> None:
    """What a sink was given is in the frame being built when the sink returns: a batch
    changed afterwards is recorded as it was (the recorder keeps no reference to it)."""
    path = tmp_path / "r.btr"
    rec = Recorder(str(path), SessionMeta(SCHEMA_VERSION, "t", "s", "", None, T0, None),
                   flush_seconds=3600)
    batch = [Sample(T0, "fio", "interval", "iops", 5.0, {"job": "j"}, "h")]
    rec.on_samples(batch)
    batch[0].value = 6.0
    batch.append(Sample(T0, "fio", "interval", "iops", 7.0, {"job": "k"}, "h"))
    rec.on_event(Event(T0 + 1, "mark", "x"))
    rec.close()
    with SessionReader.open(str(path)) as reader:
        got = list(reader.records(0, math.inf))
    assert [s.value for s in got[0]] == [5.0]  # type: ignore[union-attr]
    assert isinstance(got[1], Event)


def test_a_batch_like_the_previous_one_is_still_told_apart() -> None:
    """Series ids of a batch like the previous one of its host, tool and size come from that
    one; a sample that differs anywhere (host, kind, metric, a label, the labels' order) gets
    its own series, and every record comes back as it was."""
    def batch(t: float, **change: object) -> list[Sample]:
        out = [Sample(t, "fio", "interval", "iops", 1.0, {"job": "a", "op": "read"}, "h1"),
               Sample(t, "fio", "interval", "iops", 2.0, {"job": "a", "op": "write"}, "h1"),
               Sample(t, "fio", "interval", "lat", 3.0, {"job": "a", "op": "read"}, "h1")]
        for key, value in change.items():
            setattr(out[1], key, value)
        return out

    records = [(T0 + i, b) for i, b in enumerate([
        batch(T0), batch(T0 + 1), batch(T0 + 2, labels={"op": "write", "job": "a"}),
        batch(T0 + 3, host="h2"), batch(T0 + 4, kind="summary"), batch(T0 + 5, metric="x"),
        batch(T0 + 6, labels={"job": "b", "op": "write"}), batch(T0 + 7, tool="fio2"),
        batch(T0 + 8)])]
    enc, dec = SegmentEncoder(), SegmentDecoder()
    got = dec.decode(enc.encode(records[:4])) + dec.decode(enc.encode(records[4:]))
    assert len(got) == len(records)
    for (_, g), (_, w) in zip(got, records, strict=True):
        assert isinstance(g, list) and isinstance(w, list)
        for a, b in zip(g, w, strict=True):
            assert a.to_dict() == b.to_dict()
            assert list(a.labels.items()) == list(b.labels.items())
    assert len(enc.series_ids) == 3 + 6  # the three, and one for each change


@given(st.sampled_from([LANES_32, LANES_64]), st.data())
def test_lane_varint_planes_are_the_plain_ones(width: LaneWidth, data: st.DataObject) -> None:
    top = (1 << (width.bits - 11)) - 1
    values = data.draw(st.lists(st.one_of(st.integers(0, 127), st.integers(0, 300),
                                          st.integers(0, top)), min_size=1, max_size=80))
    if data.draw(st.booleans()):  # a big first number, small others (a histogram's usual)
        values = [data.draw(st.integers(128, top)), *(v & 0x7F for v in values[1:])]
    out = bytearray()
    width.varint_planes(out, width.pack(values), len(values))
    assert bytes(out) == plain_uvarints(values)


@settings(max_examples=200)
@given(st.data())
def test_histograms_decoded_to_running_sums_are_the_decoded_counts(data: st.DataObject
                                                                   ) -> None:
    """``decode_running_sums`` (a baseline's ghost reads histograms so) gives the keys and
    the running sums of what ``decode_histogram`` gives, in every encoding mode."""
    bits = data.draw(st.sampled_from([None, 1, 4, 5]))
    values = FIO_BUCKETS if bits is None else bucket_values(bits)
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    n = data.draw(st.sampled_from([0, 1, 5, 120, 400]))
    keys = sorted(rng.sample(range(len(values)), min(n, len(values))))
    ns = [values[i] for i in keys]
    if data.draw(st.booleans()) and ns:
        ns[rng.randrange(len(ns))] += 1  # not a bucket of the scheme: keys written out
        ns = sorted(set(ns))
    counts = {k: rng.choice([0, 1, rng.randint(0, 2**40)]) for k in ns}
    out = bytearray()
    encode_histogram(out, counts)
    decoded, end = decode_histogram(bytes(out))
    got_keys, got_sums, got_end = decode_running_sums(bytes(out))
    assert got_end == end
    assert got_keys == list(decoded)
    assert got_sums == list(accumulate(decoded.values()))
    made = RecordedHistogram(bytes(out)).with_running_sums()
    assert counts_from_sums(*(made.running_sums() or ([], []))) \
        == {k: v for k, v in decoded.items() if v}


def test_a_damaged_decimal_exponent_is_damage_not_a_hang() -> None:
    """A sample stored as m / 10**k whose k was damaged (here to 2**62) is refused as damage
    at once: 10 ** k of such a k would not finish, and the reader would hang on the file."""
    sample = Sample(T0, "iostat", "interval", "util", 2.73, {}, "h", 1.0)
    body = SegmentEncoder().encode([(T0, [sample])])
    decimal, damaged = bytearray(), bytearray()
    for blob, exponent in ((decimal, 2), (damaged, 2**62)):  # 2.73 is zigzag 273 / 10**2
        values = bytearray()
        put_list(values, [546, exponent])
        put_blob(blob, values)  # the frame's blob of decimals
    assert body.count(bytes(decimal)) == 1
    (_, got), = SegmentDecoder().decode(body)
    assert got == [sample]
    with pytest.raises(CodecError, match="exponent"):
        SegmentDecoder().decode(body.replace(bytes(decimal), bytes(damaged)))
