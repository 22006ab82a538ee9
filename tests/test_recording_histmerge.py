"""Stats pieces' histograms decoded in numpy and added up (``store/recording/histmerge.py``):
the counts are exactly those of ``decode_histogram`` added up key by key, for fio's buckets
at every resolution, other keys, counts past int64's comfort, several resolutions in one
series; damaged bytes give the same ``CodecError`` or the same counts."""

from __future__ import annotations

import random

import pytest

from benchtui.model.fio_buckets import FIO_PLAT_BITS, MIN_BITS, bucket_values
from benchtui.store.recording.histcodec import decode_histogram, encode_histogram
from benchtui.store.recording.histmerge import merged, read_histogram
from benchtui.store.recording.varint import CodecError


def _encoded(counts: dict[int, int]) -> bytes:
    out = bytearray()
    encode_histogram(out, counts)
    return bytes(out)


def _histogram(rng: random.Random, bits: int | None, big: bool = False) -> dict[int, int]:
    """A fio-like histogram at ``bits`` (None: keys that are no fio bucket)."""
    keys = bucket_values(bits) if bits is not None else range(1, 10**7, 997)
    n = rng.randint(1, 250)
    chosen = sorted(rng.sample(range(len(keys)), min(n, len(keys))))
    top = 2**70 if big else 10**6
    return {keys[i]: rng.choice((0, 1, rng.randint(0, top))) for i in chosen}


def _added(blobs: list[bytes]) -> dict[int, int]:
    out: dict[int, int] = {}
    for b in blobs:
        for k, c in decode_histogram(b)[0].items():
            out[k] = out.get(k, 0) + c
    return out


@pytest.mark.parametrize("bits", [*range(MIN_BITS, FIO_PLAT_BITS + 1), None])
def test_pieces_add_up_to_what_decoding_each_gives(bits: int | None) -> None:
    rng = random.Random(bits or 0)
    for round_ in range(40):
        blobs = [_encoded(_histogram(rng, bits, big=round_ % 10 == 9))
                 for _ in range(rng.randint(1, 30))]
        hists = [read_histogram(b) for b in blobs]
        for b, h in zip(blobs, hists, strict=True):
            assert h.as_dict() == decode_histogram(b)[0]
            assert list(h.as_dict()) == list(decode_histogram(b)[0])  # (the same order)
        assert merged(hists) == _added(blobs)


def test_a_series_with_pieces_at_several_resolutions() -> None:
    rng = random.Random(7)
    blobs = [_encoded(_histogram(rng, rng.choice((3, 4, 6)))) for _ in range(20)]
    blobs.append(_encoded({}))
    assert merged([read_histogram(b) for b in blobs]) == _added(blobs)


def test_damaged_histograms_fail_or_decode_as_decode_histogram_does() -> None:
    """Every prefix, and random byte changes: ``CodecError`` exactly where
    ``decode_histogram`` raises it, and the same counts where it decodes."""
    rng = random.Random(11)
    tried = failed = 0
    for _ in range(25):
        blob = _encoded(_histogram(rng, rng.choice((4, 6, None))))
        variants = [blob[:i] for i in range(len(blob))]
        for _ in range(30):
            b = bytearray(blob)
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            variants.append(bytes(b))
        for v in variants:
            tried += 1
            try:
                want: dict[int, int] | None = decode_histogram(v)[0]
            except CodecError:
                want = None
            if want is None:
                failed += 1
                with pytest.raises(CodecError):
                    read_histogram(v)
            else:
                assert read_histogram(v).as_dict() == want
    assert tried > 2000 and 0 < failed < tried
