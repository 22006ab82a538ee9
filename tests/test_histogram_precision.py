"""Latency histograms at a declared precision: fio's bucket scheme at fewer sub-bucket bits.

Checked against fio's own numbers: the bins and percentiles of real json+ captures
(tests/fixtures/fio_json, fio 3.33), and a transliteration of fio's stat.c functions made
here independently of benchtui's (fio computes a bucket's value in floating point).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchtui.cli.main import main
from benchtui.model.fio_buckets import (
    DEFAULT_BITS,
    FIO_PLAT_BITS,
    bucket_values,
    coarse_key,
    plat_idx_to_val,
    plat_nr,
    plat_val_to_idx,
    relative_error,
)
from benchtui.model.histogram import LatencyHistogram, RunningSumsHistogram
from benchtui.parsers.fio_json import FioJsonParser
from benchtui.store.recording import SessionReader
from benchtui.store.recording.histcodec import (
    MODE_FIO,
    MODE_FIO_BITS,
    HistogramEncoder,
    decode_histogram,
    encode_histogram,
)
from benchtui.store.recording.varint import get_uvarint
from tests.replay_recording import RecordedRun

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fio_json"
JSONPLUS = sorted(FIXTURES.glob("*.jsonplus.txt"))
COARSER = range(1, FIO_PLAT_BITS)  # 1..5: the resolutions that change fio's histograms
QS = (0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0)


# --- fio's stat.c, transliterated (PLAT_BITS as a parameter) -----------------------------------

def fio_val_to_idx(val: int, bits: int) -> int:
    msb = 0 if val == 0 else val.bit_length() - 1
    if msb <= bits:
        return val
    error_bits = msb - bits
    base = (error_bits + 1) << bits
    offset = ((1 << bits) - 1) & (val >> error_bits)
    nr = plat_nr(bits)
    return base + offset if base + offset < nr - 1 else nr - 1


def fio_idx_to_val(idx: int, bits: int) -> int:
    if idx < (1 << bits) << 1:
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    k = idx % (1 << bits)
    return int(base + ((k + 0.5) * (1 << error_bits)))  # fio: unsigned long long of a double


def fio_documents() -> Iterator[dict[str, object]]:
    """Every JSON document of the json+ captures (fio prints them one after another)."""
    decoder = json.JSONDecoder()
    for path in JSONPLUS:
        text = path.read_text()
        pos = text.find("{")
        while pos >= 0:
            doc, end = decoder.raw_decode(text, pos)
            yield doc
            pos = text.find("{", end)
            while pos >= 0 and text[pos - 1] not in "\n":
                pos = text.find("{", pos + 1)


def fio_latencies() -> list[tuple[LatencyHistogram, dict[str, float]]]:
    """(the cumulative histogram, fio's percentiles of it) of every clat/lat with bins."""
    found = []
    for doc in fio_documents():
        for job in doc.get("jobs", []):  # type: ignore[attr-defined]
            for op in ("read", "write", "trim"):
                for measure in ("clat_ns", "lat_ns"):
                    lat = job.get(op, {}).get(measure, {})
                    if lat.get("bins") and lat.get("percentile"):
                        found.append((LatencyHistogram.from_fio_bins(lat["bins"]),
                                      lat["percentile"]))
    return found


# --- the scheme ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bits", range(1, FIO_PLAT_BITS + 1))
def test_the_bucket_table_is_fios_at_every_resolution(bits: int) -> None:
    values = bucket_values(bits)
    assert len(values) == plat_nr(bits)
    assert values == tuple(fio_idx_to_val(i, bits) for i in range(plat_nr(bits)))
    assert [plat_val_to_idx(v, bits) for v in values] == list(range(len(values)))
    assert list(values) == sorted(set(values))
    # Every value maps as fio maps it, including far past the top (fio clamps there).
    for v in [*range(0, 5000, 7), 10**6 + 3, 2**33 + 5, 2**40]:
        assert plat_val_to_idx(v, bits) == fio_val_to_idx(v, bits)


def test_fios_own_table_has_fios_size() -> None:
    assert plat_nr(FIO_PLAT_BITS) == 29 * 64  # FIO_IO_U_PLAT_NR
    assert bucket_values(FIO_PLAT_BITS)[-1] == plat_idx_to_val(29 * 64 - 1)


@pytest.mark.parametrize("bits", COARSER)
def test_fios_buckets_nest_in_the_coarse_ones(bits: int) -> None:
    """A fine bucket's whole range lies in the coarse bucket its key maps to."""
    fine = bucket_values(FIO_PLAT_BITS)
    for i, key in enumerate(fine):
        low = high = key  # below 128 ns a bucket is one value
        if i >= 128:
            e = (i >> FIO_PLAT_BITS) - 1
            low = key - (1 << (e - 1))
            high = key + (1 << (e - 1)) - 1
        assert coarse_key(low, bits) == coarse_key(high, bits) == coarse_key(key, bits)


# --- real fio output ----------------------------------------------------------------------------

def test_the_fixtures_hold_bins() -> None:
    assert len(fio_latencies()) >= 10


@pytest.mark.parametrize("bits", COARSER)
def test_real_bins_coarsen_to_fios_scheme(bits: int) -> None:
    fine_values = set(bucket_values(FIO_PLAT_BITS))
    coarse_values = set(bucket_values(bits))
    for fine, _ in fio_latencies():
        assert set(fine.counts) <= fine_values  # fio's keys are its bucket values
        coarse = fine.coarsened(bits)
        assert set(coarse.counts) <= coarse_values
        for key in fine.counts:  # each key went to the value fio's scheme gives its bucket
            assert coarse_key(key, bits) == fio_idx_to_val(fio_val_to_idx(key, bits), bits)
        assert coarse.total() == fine.total()
        assert len(coarse.counts) <= len(fine.counts)
        assert coarse.coarsened(bits) is coarse  # idempotent


@pytest.mark.parametrize("bits", COARSER)
def test_percentiles_stay_within_the_bound_of_fios(bits: int) -> None:
    bound = relative_error(bits)
    checked = 0
    for fine, percentiles in fio_latencies():
        coarse = fine.coarsened(bits)
        for pct, fio_value in percentiles.items():
            q = float(pct) / 100
            ours = fine.quantile(q)
            assert ours is not None
            if round(ours * 1e9) != fio_value:
                continue  # a rounding tie at a bucket edge (fio sums in long double)
            got = coarse.quantile(q)
            assert got is not None
            assert abs(got * 1e9 - fio_value) <= bound * fio_value
            checked += 1
    assert checked >= 50


def test_the_default_bound_is_about_three_percent() -> None:
    assert relative_error(4) == pytest.approx(0.03125)
    assert relative_error(6) == pytest.approx(1 / 128)


def test_the_parsers_running_sums_coarsen_as_their_counts_do() -> None:
    """The parser's histograms hold running sums; the coarse ones hold running sums too,
    with the same counts as coarsening the counts would give."""
    parser = FioJsonParser(host="h")
    samples = parser.feed_text((FIXTURES / "randread_randwrite.jsonplus.txt").read_text())
    samples += parser.finish()
    hists = [s.histogram for s in samples if s.histogram is not None]
    assert hists
    for h in hists:
        assert h.running_sums() is not None
        coarse = h.coarsened(4)
        assert isinstance(coarse, RunningSumsHistogram) and coarse.running_sums() is not None
        assert coarse.counts == LatencyHistogram(dict(h.counts)).coarsened(4).counts
        assert coarse.total() == h.total() and coarse.coarsened(4) is coarse
        assert h.coarsened(FIO_PLAT_BITS) is h


# --- properties ---------------------------------------------------------------------------------

fine_keys = st.sampled_from(bucket_values(FIO_PLAT_BITS))
histograms = st.dictionaries(fine_keys, st.integers(1, 10**9), max_size=200)


def as_running_sums(counts: dict[int, int]) -> RunningSumsHistogram:
    keys = sorted(counts)
    cum, total = [], 0
    for k in keys:
        total += counts[k]
        cum.append(total)
    return RunningSumsHistogram(keys, tuple(cum))


@given(histograms, st.integers(1, FIO_PLAT_BITS - 1), st.integers(1, FIO_PLAT_BITS - 1))
def test_coarsening_properties(counts: dict[int, int], bits: int, coarser: int) -> None:
    fine = LatencyHistogram(counts)
    coarse = fine.coarsened(bits)
    assert coarse.total() == fine.total()
    assert set(coarse.counts) <= set(bucket_values(bits))
    assert coarse.coarsened(bits).counts == coarse.counts
    assert as_running_sums(counts).coarsened(bits).counts == coarse.counts
    # Buckets nest: coarsening in two steps is coarsening in one.
    low = min(bits, coarser)
    assert coarse.coarsened(low).counts == fine.coarsened(low).counts
    if counts:
        bound = relative_error(bits)
        want, got = fine.quantiles(QS), coarse.quantiles(QS)
        for q in QS:
            assert abs(got[q] - want[q]) <= bound * want[q] + 1e-18


@given(st.dictionaries(st.integers(0, 2**45), st.integers(0, 1000), max_size=50),
       st.integers(1, FIO_PLAT_BITS - 1))
def test_any_keys_coarsen_into_the_table(counts: dict[int, int], bits: int) -> None:
    coarse = LatencyHistogram(counts).coarsened(bits)
    assert sum(coarse.counts.values()) == sum(counts.values())
    assert set(coarse.counts) <= set(bucket_values(bits))
    assert coarse.coarsened(bits).counts == coarse.counts


# --- in a recording -----------------------------------------------------------------------------

@given(histograms, st.integers(1, FIO_PLAT_BITS))
def test_coarse_histograms_are_recorded_as_bucket_indexes(counts: dict[int, int],
                                                          bits: int) -> None:
    coarse = as_running_sums(counts).coarsened(bits)
    expected = dict(as_running_sums(counts).coarsened(bits).counts)
    from_sums, from_counts = bytearray(), bytearray()
    HistogramEncoder().encode(from_sums, coarse)
    encode_histogram(from_counts, expected)
    assert from_sums == from_counts
    assert decode_histogram(bytes(from_sums)) == (expected, len(from_sums))
    if expected:  # written as bucket indexes of a table of fio's scheme, not as keys
        _, pos = get_uvarint(bytes(from_sums), 0)
        assert from_sums[pos] in (MODE_FIO, MODE_FIO_BITS)


# --- a real session -----------------------------------------------------------------------------

def test_a_recorded_session_holds_coarse_histograms_exactly_as_live(
        recorded: RecordedRun, reader: SessionReader) -> None:
    """The engine coarsens once, before every sink: the live samples and the recording hold
    the same histograms, at the default 4 bits, and the file says so."""
    assert reader.meta.histogram_bits == DEFAULT_BITS == 4
    live = [s for s in recorded.samples if s.histogram is not None]
    played = [s for s in reader.samples() if s.histogram is not None]
    assert len(live) == len(played) > 5
    table, fine = set(bucket_values(4)), set(bucket_values(FIO_PLAT_BITS))
    for a, b in zip(live, played, strict=True):
        assert a.to_dict() == b.to_dict()
        assert a.histogram is not None and b.histogram is not None
        assert a.histogram.counts == b.histogram.counts
        assert set(b.histogram.counts) <= table
        assert b.histogram.coarsened(4).counts == b.histogram.counts
    keys = {k for s in played if s.histogram is not None for k in s.histogram.counts}
    assert keys - fine  # coarse buckets, not fio's
    # fio's own percentiles are kept as fio printed them: many are not coarse buckets.
    pct = {round(s.value * 1e9) for s in reader.samples(metrics=["latency_seconds"])}
    assert pct - table


def test_info_says_the_precision(recorded: RecordedRun, capsys: pytest.CaptureFixture[str]
                                 ) -> None:
    assert main(["info", str(recorded.path)]) == 0
    out = capsys.readouterr().out
    assert ("precision latency histograms at 4 bits: 16 buckets per power of two, percentiles "
            "within 3.1% of fio's") in out
    assert main(["info", str(recorded.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["histogram_bits"] == 4
