"""fio's latency bucket scheme, at fio's own resolution or a coarser declared one.

fio (stat.c) counts completion latencies in buckets: values below ``2 << bits`` ns have a
bucket each; above, every power of two is split into ``1 << bits`` equal buckets, and a
bucket's value (the key of json+'s ``bins``) is its midpoint. fio uses ``bits`` =
``FIO_IO_U_PLAT_BITS`` = 6 (64 buckets per power of two) and ``FIO_IO_U_PLAT_GROUPS`` = 29
groups. The same functions with fewer bits describe a coarser histogram of the same range:
with 4 bits each coarse bucket is exactly 4 of fio's (fio's buckets nest in the coarse ones),
and its key is the value fio's scheme gives the coarse bucket (its midpoint), so a percentile
read from it is within ``2 ** -(bits + 1)`` (3.1% at 4 bits) of the one read from fio's
buckets. Coarsening an already coarse histogram changes nothing.

``plat_val_to_idx`` and ``plat_idx_to_val`` follow fio's functions of the same names, with the
number of bits as a parameter (fio's are for 6). Values are integers: ns.
"""

from __future__ import annotations

from functools import cache

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

#: fio's FIO_IO_U_PLAT_BITS: its histograms' resolution (64 buckets per power of two).
FIO_PLAT_BITS: Final = 6
#: fio's FIO_IO_U_PLAT_GROUPS at FIO_PLAT_BITS: the value range its buckets cover.
FIO_PLAT_GROUPS: Final = 29
#: The coarsest resolution benchtui accepts (2 buckets per power of two).
MIN_BITS: Final = 1
#: The default resolution of a session's histograms (16 buckets per power of two).
DEFAULT_BITS: Final = 4


def plat_nr(bits: int) -> int:
    """The number of buckets at ``bits`` covering fio's range (fio's PLAT_NR at 6 bits): the
    top value fio can hold (2 ** 34 ns) lands in the last group at any resolution."""
    return (FIO_PLAT_GROUPS + FIO_PLAT_BITS - bits) << bits


def plat_val_to_idx(val: int, bits: int = FIO_PLAT_BITS) -> int:
    """The index of the bucket holding ``val`` ns (fio's ``plat_val_to_idx``)."""
    msb = val.bit_length() - 1 if val > 0 else 0
    if msb <= bits:  # below 2 << bits: every value is its own bucket
        return val
    error_bits = msb - bits
    base = (error_bits + 1) << bits
    offset = ((1 << bits) - 1) & (val >> error_bits)
    return min(base + offset, plat_nr(bits) - 1)


def plat_idx_to_val(idx: int, bits: int = FIO_PLAT_BITS) -> int:
    """The value (ns) of bucket ``idx`` (fio's ``plat_idx_to_val``): the bucket's midpoint,
    ``base + (k + 0.5) * 2 ** error_bits``, in integers (exact: error_bits >= 1 here)."""
    if idx < (2 << bits):
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    k = idx & ((1 << bits) - 1)
    return base + (k << error_bits) + (1 << (error_bits - 1))


@cache
def bucket_values(bits: int = FIO_PLAT_BITS) -> tuple[int, ...]:
    """Bucket index -> value (ns), for every bucket at ``bits``."""
    return tuple(plat_idx_to_val(i, bits) for i in range(plat_nr(bits)))


@cache
def bucket_index(bits: int = FIO_PLAT_BITS) -> dict[int, int]:
    """Bucket value (ns) -> index at ``bits``; the inverse of ``bucket_values``."""
    return {v: i for i, v in enumerate(bucket_values(bits))}


def check_bits(bits: int) -> int:
    """``bits`` when it is a resolution benchtui knows (1..6); ValueError otherwise."""
    if isinstance(bits, bool) or not isinstance(bits, int) \
            or not MIN_BITS <= bits <= FIO_PLAT_BITS:
        raise ValueError(f"histogram bits must be a whole number from {MIN_BITS} to "
                         f"{FIO_PLAT_BITS}, not {bits!r}")
    return bits


def relative_error(bits: int) -> float:
    """The largest relative distance between a value and its bucket's value at ``bits``:
    half a bucket over the bottom of its power of two."""
    return 2.0 ** -(bits + 1)


class _CoarseKeys(dict[int, int]):
    """A key (ns) -> the value of the bucket holding it at one resolution; made on first use
    (a session sees a few hundred distinct keys)."""

    def __init__(self, bits: int) -> None:
        super().__init__()
        self.bits = bits

    def __missing__(self, key: int) -> int:
        bits = self.bits
        value = plat_idx_to_val(plat_val_to_idx(key, bits), bits) if key >= 0 else key
        if len(self) < 65536:
            self[key] = value
        return value


_COARSE_KEYS: Final = {b: _CoarseKeys(b) for b in range(MIN_BITS, FIO_PLAT_BITS + 1)}


def coarse_keys(bits: int) -> dict[int, int]:
    """key (ns) -> its bucket's value at ``bits``, as a dict made on first use per key (index
    it: ``coarse_keys(4)[key]``; ``map(coarse_keys(4).__getitem__, keys)`` runs in C)."""
    return _COARSE_KEYS[check_bits(bits)]


def coarse_key(key: int, bits: int) -> int:
    """The value of the bucket holding ``key`` ns at ``bits``."""
    return coarse_keys(bits)[key]
