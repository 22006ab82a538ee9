"""Per-interval latency percentiles and histograms from fio json+'s cumulative ``bins``, fast.

fio prints, per direction and latency measure, ``bins``: bucket value (ns, as text) -> count
since the job started, in ascending bucket order. The interval's histogram is the difference
of two consecutive dumps. A one-hour capture of 2 jobs holds ~3600 dumps x ~1000 buckets per
direction, a 32-job dump ~25,000 buckets: each per-bucket step costs a good part of what
decoding them cost, so each bucket is touched as little as possible, in C-level passes
(``map(sub, ...)``, ``accumulate``, ``bisect``) with no per-bucket Python code:

* the bucket keys are read once, and again only for the buckets fio added since (``_added``);
* a direction without new completions is not read at all (``_fio_json_jobs``);
* when the interval histogram is wanted, one pass makes its running sums (subtract, sum up),
  from which the percentiles are bisected; the histogram itself (a ``LatencyHistogram``) is
  built only when someone reads it (``DeltaHistogram``), e.g. the live store merging hosts'
  histograms;
* when only the percentiles are (``benchtui parse`` without --histograms) and the buckets are
  many (``_BLOCKED_MIN``), the counts are summed in blocks of about the square root of their
  number (``sum`` of list slices: C, no object per bucket); each percentile is found in the
  block sums first, then in the one block that holds it, the only buckets subtracted one by
  one (``Blocked``).

Quantiles are taken as ``LatencyHistogram.quantiles`` takes them (the first bucket whose
cumulative count reaches ``q * total``); the tests check both agree.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection
from dataclasses import dataclass
from itertools import accumulate
from math import isqrt
from operator import sub

from benchtui.model.histogram import (
    NS_PER_SECOND,
    LatencyHistogram,
    RunningSumsHistogram,
    counts_from_sums,
)

#: Fewer buckets than this are subtracted one by one even for percentiles alone: summing
#: blocks pays off past it (measured: 2 jobs of ~1000 buckets, 7% less time; 32 jobs of ~400,
#: 13% more).
_BLOCKED_MIN = 640


class _BinKeys(dict[str, int]):
    """fio's bucket keys (text) -> ns; fio has under 2000 distinct buckets, converted once."""

    def __missing__(self, key: str) -> int:
        value = int(key)
        if len(self) < 65536:
            self[key] = value
        return value


_BIN_KEYS = _BinKeys()


@dataclass(slots=True)
class Bins:
    """One cumulative ``bins`` object of one dump, ready to be subtracted from the next."""

    raw: dict[str, int]  # as decoded: fio's order (ascending buckets)
    ns: list[int]  # its keys as integers, in the same order
    ascending: bool
    counts: list[int] | None = None  # (Blocked) its counts in that order,
    sums: list[int] | None = None  # summed per block of ``block`` buckets
    block: int = 0


@dataclass(slots=True)
class Running:
    """An interval's buckets as the running sums of its counts (for a histogram)."""

    ns: list[int]  # the buckets (ns)
    ascending: bool
    cum: list[int]
    total: int

    def quantiles(self, qs: list[tuple[float, str]]) -> list[tuple[str, float]]:
        """(label, seconds) for each (q, label) of ``qs`` (``total`` > 0)."""
        ns, cum = self.ns, self.cum
        if not self.ascending:
            found = LatencyHistogram(counts_of(ns, cum)).quantiles(q for q, _ in qs)
            return [(label, found[q]) for q, label in qs]
        # cum[-1] == total >= q * total for q <= 1: bisect_left stays within the buckets
        return [(label, ns[bisect_left(cum, q * self.total)] / NS_PER_SECOND) for q, label in qs]

    def histogram(self) -> DeltaHistogram:
        return DeltaHistogram(self.ns, tuple(self.cum))


@dataclass(slots=True)
class Blocked:
    """An interval's buckets as two dumps' counts, summed per block (for percentiles only)."""

    cur: Bins
    before: list[int] | None  # the previous counts in cur's order (0: a new bucket); None: 0s
    sums: list[int]  # the interval's counts per block
    total: int

    def quantiles(self, qs: list[tuple[float, str]]) -> list[tuple[str, float]]:
        """As ``Running.quantiles``: the same buckets."""
        cur, before = self.cur, self.before
        assert cur.counts is not None
        if not cur.ascending:
            counts = cur.counts if before is None else list(map(sub, cur.counts, before))
            return Running(cur.ns, False, list(accumulate(counts)), self.total).quantiles(qs)
        ns, counts, size = cur.ns, cur.counts, cur.block
        ends = list(accumulate(self.sums))  # running sums at each block's last bucket
        inner: dict[int, list[int]] = {}
        out = []
        for q, label in qs:
            target = q * self.total
            b = bisect_left(ends, target)  # (ends[-1] == total >= q * total)
            run = inner.get(b)
            if run is None:
                start = b * size
                part = counts[start:start + size]
                if before is not None:
                    part = list(map(sub, part, before[start:start + size]))
                run = inner[b] = list(accumulate(part, initial=ends[b - 1] if b else 0))
            out.append((label, ns[b * size + bisect_left(run, target, 1) - 1] / NS_PER_SECOND))
        return out


def interval(raw: dict[str, int], prev: Bins | None, *, histogram: bool = True
             ) -> tuple[Bins, Running | Blocked | None]:
    """``raw`` read (against ``prev``, the same job, direction and measure in the previous
    dump), and the interval from prev to it (since zero when ``prev`` is None): ``Running``
    when its ``histogram`` is wanted or the buckets are few, else ``Blocked``. None when the
    buckets do not follow from prev's (a bucket went away or a count went down: fio
    restarted its counters); for ``Blocked``, the counts are checked per block.

    Buckets are only ever added to a cumulative ``bins`` object, in their place (fio prints
    them in ascending order): while the count of buckets is the previous dump's, so are the
    keys, read once; when buckets were added, only the new ones are read."""
    before: Collection[int] | None = None
    if prev is None:
        ns = list(map(_BIN_KEYS.__getitem__, raw))
        cur = Bins(raw, ns, ns == sorted(ns))
    elif len(prev.raw) == len(raw):  # the usual case: no new bucket, same keys, same order
        cur = Bins(raw, prev.ns, prev.ascending)
        before = prev.counts if prev.counts is not None else prev.raw.values()
    else:
        added = _added(raw, prev)
        if added is None:  # a bucket went away: counters restarted
            return interval(raw, None, histogram=histogram)[0], None
        ns = prev.ns[:]
        aligned = prev.counts[:] if prev.counts is not None else list(prev.raw.values())
        for i, value in added:
            ns.insert(i, value)
            aligned.insert(i, 0)
        before = aligned
        last = len(ns) - 1
        cur = Bins(raw, ns, prev.ascending and all(
            (i == 0 or ns[i - 1] < ns[i]) and (i == last or ns[i] < ns[i + 1]) for i, _ in added))
    if histogram or len(raw) < _BLOCKED_MIN:
        cum = list(accumulate(raw.values() if before is None else map(sub, raw.values(), before)))
        if not cum or cum[0] < 0 or cum != sorted(cum):  # counts never go down, nor their sums
            return cur, None
        return cur, Running(cur.ns, cur.ascending, cum, cum[-1])
    counts = cur.counts = list(raw.values())
    size = cur.block = isqrt(len(counts))
    sums = cur.sums = [sum(counts[i:i + size]) for i in range(0, len(counts), size)]
    if before is not None:
        before = before if isinstance(before, list) else list(before)
        if prev is not None and before is prev.counts and prev.block == size:
            assert prev.sums is not None
            earlier = prev.sums
        else:
            earlier = [sum(before[i:i + size]) for i in range(0, len(before), size)]
        sums = list(map(sub, sums, earlier))
    if not sums or min(sums) < 0:
        return cur, None
    return cur, Blocked(cur, before, sums, sum(sums))


def _added(raw: dict[str, int], prev: Bins) -> list[tuple[int, int]] | None:
    """(position in raw, bucket ns) of the buckets raw has that prev has not, in order; None
    when prev has a bucket that raw has not (one lookup per bucket: the cheapest way found,
    a set difference costs more)."""
    old = prev.raw
    added = [(i, _BIN_KEYS[key]) for i, key in enumerate(raw) if key not in old]
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
