"""Per-interval latency percentiles and histograms from fio json+'s cumulative ``bins``, fast.

fio prints, per direction and latency measure, ``bins``: bucket value (ns, as text) -> count
since the job started, in ascending bucket order. The interval's histogram is the difference
of two consecutive dumps. A one-hour capture of 2 jobs holds ~3600 dumps x ~1000 buckets per
direction, a 32-job dump ~25,000 buckets: each per-bucket step costs a good part of what
decoding them cost, so each bucket is touched as little as possible, in C-level passes
(numpy, ``map(sub, ...)``, ``accumulate``, ``bisect``) with no per-bucket Python code:

* the bucket keys are read once, and again only for the buckets fio added since (``_added``);
* a direction without new completions is not read at all (``_fio_json_jobs``);
* when the interval histogram is wanted, its running sums are made in numpy
  (``_fio_json_counts``: the counts packed once, subtracted and summed up as int64, back to
  Python ints), from which the percentiles are bisected; counts that are not plain ints go
  through C-level passes over Python's ints instead (``_exact``), with the same result;
  the histogram itself (a ``LatencyHistogram``) is built only when someone reads it
  (``DeltaHistogram``), e.g. the live store merging hosts' histograms;
* when only the percentiles are (``benchtui parse`` without --histograms), no bucket is
  subtracted but those of the few blocks that hold a percentile (``_fio_json_probed``).

Quantiles are taken as ``LatencyHistogram.quantiles`` takes them (the first bucket whose
cumulative count reaches ``q * total``); the tests check both agree.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection
from itertools import accumulate
from operator import sub
from types import ModuleType

from benchtui.model.histogram import (
    NS_PER_SECOND,
    LatencyHistogram,
    RunningSumsHistogram,
    counts_from_sums,
)

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from benchtui.parsers._fio_json_counts import Counts


class _BinKeys(dict[str, int]):
    """fio's bucket keys (text) -> ns; fio has under 2000 distinct buckets, converted once."""

    def __missing__(self, key: str) -> int:
        value = int(key)
        if len(self) < 65536:
            self[key] = value
        return value


BIN_KEYS = _BinKeys()


class Bins:
    """One cumulative ``bins`` object of one dump, ready to be subtracted from the next.

    (This module's records are plain classes with slots, not dataclasses: each dataclass
    costs ~2.4 M instructions to create when the module is imported, which every
    ``benchtui parse`` pays. Made with positional arguments only: a class called with
    keywords has them packed in a dict, ~1,000 instructions more a call.)"""

    __slots__ = ("array", "ascending", "counts", "cuts", "ends", "keys", "ns", "packed", "raw",
                 "slices")

    def __init__(self, raw: dict[str, int], ascending: bool, ns: list[int] | None = None
                 ) -> None:
        self.raw = raw  # as decoded: fio's order (ascending buckets)
        self.ascending = ascending
        self.ns = ns  # its keys as integers, in the same order (made when needed)
        #: (``interval``, which sets it) its counts as an int64 array (``_fio_json_counts``)
        self.array: Counts | None = None
        #: (``_fio_json_probed``, which sets them) its keys as decoded, its counts in that
        #: order, where each of its blocks of buckets ends (the last: len(keys)), the running
        #: sums at those ends and the blocks as slices (made once)
        self.keys: list[str] | None = None
        self.counts: list[int] | None = None
        self.cuts: list[int] | None = None
        self.ends: list[int] | None = None
        self.slices: list[slice] | None = None
        #: (``_fio_json_walked``, which sets it with keys and cuts, not ends) its counts as
        #: int64 in native order, packed by the compiled pass
        self.packed: bytes | None = None

    def bucket_ns(self) -> list[int]:
        if self.ns is None:
            self.ns = list(map(BIN_KEYS.__getitem__, self.raw))
        return self.ns


class Running:
    """An interval's buckets as the running sums of its counts (for a histogram)."""

    __slots__ = ("ascending", "cum", "ns", "total")

    def __init__(self, ns: list[int], ascending: bool, cum: list[int], total: int) -> None:
        self.ns = ns  # the buckets (ns)
        self.ascending = ascending
        self.cum = cum
        self.total = total

    def quantiles(self, qs: list[tuple[float, str]]) -> list[tuple[str, float]]:
        """(label, seconds) for each (q, label) of ``qs`` (``total`` > 0)."""
        ns, cum = self.ns, self.cum
        if not self.ascending:
            found = LatencyHistogram(counts_of(ns, cum)).quantiles(q for q, _ in qs)
            return [(label, found[q]) for q, label in qs]
        # cum[-1] == total >= q * total for q <= 1: bisect_left stays within the buckets
        return [(label, ns[bisect_left(cum, q * self.total)] / NS_PER_SECOND) for q, label in qs]

    def histogram(self, bits: int | None = None) -> LatencyHistogram:
        """The interval's histogram at ``bits`` (``model.fio_buckets``; None: fio's own)."""
        fine = DeltaHistogram(self.ns, tuple(self.cum))
        return fine if bits is None else fine.coarsened(bits)


def interval(raw: dict[str, int], prev: Bins | None) -> tuple[Bins, Running | None]:
    """``raw`` read (against ``prev``, the same job, direction and measure in the previous
    dump), and the interval from prev to it (since zero when ``prev`` is None) as running
    sums. None when the buckets do not follow from prev's (a bucket went away or a count went
    down: fio restarted its counters).

    Buckets are only ever added to a cumulative ``bins`` object, in their place (fio prints
    them in ascending order): while the count of buckets is the previous dump's, so are the
    keys, read once; when buckets were added, only the new ones are read. The counts are
    subtracted and summed up in numpy (``_fio_json_counts``) when they are ints as fio
    prints them, else by ``_exact``: the same sums."""
    arrays = _ARRAYS or load_arrays()
    now = arrays.counts(raw.values())
    before: Counts | None = None
    if now is None:
        return _exact(raw, prev)
    if prev is None:
        ns = list(map(BIN_KEYS.__getitem__, raw))
        cur = Bins(raw, ns == sorted(ns), ns)
    else:
        was = prev.array if prev.array is not None else arrays.counts(prev.raw.values())
        if was is None:
            return _exact(raw, prev)
        if len(prev.raw) == len(raw):  # the usual case: no new bucket, same keys, same order
            cur = Bins(raw, prev.ascending, prev.bucket_ns())
            before = was
        else:
            added = _added(raw, prev)
            if added is None:  # a bucket went away: counters restarted
                return interval(raw, None)[0], None
            cur = _with_added(raw, prev, added)
            before = arrays.aligned(was, [i for i, _ in added], len(raw))
    cur.array = now
    cum = arrays.running(now, before)
    if cum is None:  # a count went down
        return cur, None
    return cur, Running(cur.bucket_ns(), cur.ascending, cum, cum[-1])


def load_arrays() -> ModuleType:
    """``_fio_json_counts``, imported on first use: numpy, which ``benchtui parse`` without
    histograms never needs (not an import statement in ``interval``: importlib's
    ``_handle_fromlist`` ran at every call). A live run's parser loads it when the run
    starts (``FioJsonParser.ready``), not on its first document."""
    global _ARRAYS  # noqa: PLW0603 - a module imported once
    from benchtui.parsers import _fio_json_counts

    _ARRAYS = _fio_json_counts
    return _ARRAYS


_ARRAYS: ModuleType | None = None


def _exact(raw: dict[str, int], prev: Bins | None) -> tuple[Bins, Running | None]:
    """``interval`` in Python's C-level passes over the decoded values, whatever they are (a
    value fio would not print fails here as it always did)."""
    before: Collection[int] | None = None
    if prev is None:
        ns = list(map(BIN_KEYS.__getitem__, raw))
        cur = Bins(raw, ns == sorted(ns), ns)
    elif len(prev.raw) == len(raw):
        cur = Bins(raw, prev.ascending, prev.bucket_ns())
        before = prev.raw.values()
    else:
        added = _added(raw, prev)
        if added is None:
            return _exact(raw, None)[0], None
        cur = _with_added(raw, prev, added)
        aligned = list(prev.raw.values())
        for i, _ in added:
            aligned.insert(i, 0)
        before = aligned
    cum = list(accumulate(raw.values() if before is None else map(sub, raw.values(), before)))
    if not cum or cum[0] < 0 or cum != sorted(cum):  # counts never go down, nor their sums
        return cur, None
    return cur, Running(cur.bucket_ns(), cur.ascending, cum, cum[-1])


def _with_added(raw: dict[str, int], prev: Bins, added: list[tuple[int, int]]) -> Bins:
    """``raw`` read: prev's bucket keys with those ``added`` (position, ns) in their place."""
    ns = prev.bucket_ns()[:]
    for i, value in added:
        ns.insert(i, value)
    last = len(ns) - 1
    return Bins(raw, prev.ascending and all(
        (i == 0 or ns[i - 1] < ns[i]) and (i == last or ns[i] < ns[i + 1]) for i, _ in added),
        ns)


def _added(raw: dict[str, int], prev: Bins) -> list[tuple[int, int]] | None:
    """(position in raw, bucket ns) of the buckets raw has that prev has not, in order; None
    when prev has a bucket that raw has not (one lookup per bucket: the cheapest way found,
    a set difference costs more)."""
    old = prev.raw
    added = [(i, BIN_KEYS[key]) for i, key in enumerate(raw) if key not in old]
    return added if len(added) == len(raw) - len(old) else None


#: bucket ns -> count (the buckets with a count only), from the running sums.
counts_of = counts_from_sums


class DeltaHistogram(RunningSumsHistogram):
    """An interval's histogram as the parser makes it: fio's bucket keys and the running sums
    of the interval's counts (a tuple of ints, soon left alone by the garbage collector). Its
    ``counts`` dict is made on first use: parsing a file to print samples never needs it; an
    hour of dumps makes ~15000 histograms. Readable from two threads at once
    (``LazyHistogram``): the event loop's consumers and the recorder's thread."""

    __slots__ = ()
