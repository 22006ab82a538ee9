"""An interval's running sums from fio json+'s cumulative bucket counts, in numpy: what the
live engine (histograms on) does with every bucket of every dump.

Subtracting two dumps' counts and summing them up in C-level passes over Python ints costs
~600 instructions a bucket (a pass through ``map(sub)``, ``accumulate``, a sort checking the
sums); numpy does the same arithmetic on int64 at a few instructions a bucket once the counts
are in an array, which costs one pass over the decoded ints (``struct.pack``, read by
``np.frombuffer``). The running sums go back to Python ints (``tolist``): the histograms
handed on are what they were.

The arithmetic is exact, as Python's: the counts are taken only when every one is an int
(``struct`` packs nothing else as int64) from 0 to ``LIMIT`` and the buckets are at most
``MAX_BUCKETS``, so no difference nor sum can leave int64. Anything else (a float, a huge
number, a string: not fio's) is None here, for the exact path in Python
(``_fio_json_bins``), which gives what it always gave, errors included.

numpy is imported with this module, on the first dump read with histograms: ``benchtui
parse`` without them never imports it.
"""

from __future__ import annotations

from collections.abc import Collection
from struct import error as StructError
from struct import pack

import numpy as np
from numpy.typing import NDArray

#: A bucket's count beyond this (10^12 I/Os in one bucket) is not taken in an array.
LIMIT = 1 << 40
#: Nor more buckets than this (fio has under 2,000): sums stay under 2^62.
MAX_BUCKETS = 1 << 20

Counts = NDArray[np.int64]
_largest = np.maximum.reduce
_smallest = np.minimum.reduce


def counts(values: Collection[object]) -> Counts | None:
    """``values`` (one ``bins`` object's, as decoded) as an int64 array; None when they are
    not all ints from 0 to ``LIMIT`` (or none, or too many)."""
    size = len(values)
    if not 0 < size <= MAX_BUCKETS:
        return None
    try:  # (~180 instructions a count: np.array of their list ~400, np.fromiter ~300)
        packed = pack(f"{size}q", *values)
    except (StructError, TypeError, OverflowError):  # a float, a string, past int64...
        return None
    found = np.frombuffer(packed, np.int64)
    # (ufuncs' own reduce: ndarray.max goes through a Python function; read as unsigned, a
    # negative count is past LIMIT too: not fio's)
    if _largest(found.view(np.uint64)) > LIMIT:
        return None
    return found


def aligned(before: Counts, added: list[int], size: int) -> Counts:
    """``before`` with zeros inserted at the positions ``added`` (positions in the result,
    ascending), ``size`` long."""
    out = np.zeros(size, np.int64)
    keep = np.ones(size, np.bool_)
    keep[added] = False
    out[keep] = before
    return out


def running(now: Counts, before: Counts | None) -> list[int] | None:
    """The running sums of ``now`` less ``before`` (from zero when None), as Python ints;
    None when a count went down (its sums would not be sorted)."""
    delta = now if before is None else now - before
    if _smallest(delta) < 0:
        return None
    sums: list[int] = delta.cumsum().tolist()
    return sums
