"""An interval's latency percentiles from fio json+'s cumulative ``bins`` without subtracting
them bucket by bucket: what ``benchtui parse`` needs when it prints no histogram, in every
dump (where fio added buckets and where it did not: block sums cost fewer instructions than
one C-level pass subtracting every bucket, ~220 per bucket against ~900).

A direction's buckets are cut in blocks of about 1.5 times the square root of their number
(``_width``); a dump's counts are summed per block (C-level passes: ``sum`` of list slices, no
object per bucket).
The blocks are carried from one dump to the next by their last bucket, so that the same block
holds the same buckets in both dumps (and the buckets fio added since, in their place): the
interval's running sum at the end of each block is the difference of the two dumps' running
sums there. Each percentile is found in those sums first, then in the one block that holds
it, whose buckets alone are subtracted one by one (``Probed.quantiles``).

fio only ever adds buckets to a ``bins`` object, in ascending order. The order is checked in
full on a direction's first dump (buckets out of order take the exact path,
``_fio_json_bins.interval``), and afterwards where blocks meet: each block's last bucket must
be found again, in order, in the next dump. A count that went down is seen per block (a
block whose sum went down: fio restarted its counters) and, in the blocks holding a
percentile, per bucket.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate, repeat
from math import ceil, isqrt
from operator import sub

from benchtui.model.histogram import NS_PER_SECOND, LatencyHistogram
from benchtui.parsers._fio_json_bins import BIN_KEYS, Bins

#: A block that grew past this many times the size blocks are cut to is cut again.
_REBLOCK = 2


def _width(n: int) -> int:
    """The size blocks of ``n`` buckets are cut to: 1.5 times the square root of n. Each
    block costs a few thousand instructions in every dump (summed, carried, cut again), each
    bucket of a block holding a percentile ~1,000 (subtracted): counted over the 32-job
    capture's parse, 1x costs 4% more, 0.5x 25% more, 2x the same, 3x 3% more
    (docs/benchmarks/parse_speed.md, round 7)."""
    return max(1, isqrt(n) * 3 // 2)


class Probed:
    """An interval's buckets for its percentiles: the current dump's counts and blocks, the
    previous dump's, and the interval's running sums at the end of each block (a plain
    class: see ``_fio_json_bins.Bins``)."""

    __slots__ = ("cur", "cuts", "ends", "prev", "total")

    def __init__(self, cur: Bins, cuts: list[int], prev: Bins | None, ends: list[int],
                 total: int) -> None:
        self.cur = cur
        self.cuts = cuts  # where cur's blocks end, as the previous dump's blocks carried over
        self.prev = prev
        self.ends = ends
        self.total = total

    def quantiles(self, qs: list[tuple[float, str]]) -> list[tuple[str, float]]:
        """(label, seconds) for each (q, label) of ``qs`` (ascending, ``total`` > 0), as
        ``_fio_json_bins.Running.quantiles`` gives them: the same buckets."""
        keys = self.cur.keys
        assert keys is not None
        ends, cuts, total = self.ends, self.cuts, self.total
        out = []
        k = -1
        run: list[int] = []
        base = start = 0
        for q, label in qs:
            # (the first bucket whose running sum reaches q * total: the same as reaching its
            # ceiling, an int, which ints compare with faster than with a float)
            target = ceil(q * total)
            if k < 0 or target > ends[k]:  # (ascending: a block holds several, in turn)
                k = bisect_left(ends, target)  # (ends[-1] == total >= q * total)
                base = ends[k - 1] if k else 0
                start = cuts[k - 1] if k else 0
                made = self._block(k, start)
                if made is None or made[-1] != ends[k] - base:  # not as fio adds buckets
                    return _by_value(self.cur.raw, self.prev.raw if self.prev else {}, qs)
                run = made
            at = start + bisect_left(run, target - base, 1) - 1
            out.append((label, BIN_KEYS[keys[at]] / NS_PER_SECOND))
        return out

    def _block(self, k: int, start: int) -> list[int] | None:
        """The interval's running sums over block ``k`` (its own: 0 before its first bucket,
        ``start``); None when a count went down."""
        cur, prev = self.cur, self.prev
        assert cur.keys is not None and cur.counts is not None
        stop = self.cuts[k]
        part = cur.counts[start:stop]
        if prev is None:
            run = list(accumulate(part, initial=0))
        else:
            assert prev.cuts is not None and prev.counts is not None
            was, until = (prev.cuts[k - 1] if k else 0), prev.cuts[k]
            if until - was == stop - start:  # no bucket added in this block
                before = prev.counts[was:until]
            else:
                before = list(map(prev.raw.get, cur.keys[start:stop], repeat(0)))
            # (from 0: an interval's counts in one block are small, Python's cached integers)
            run = list(accumulate(map(sub, part, before), initial=0))
        # a count that went down leaves the sums unsorted (sorting sorted ints is one pass)
        return run if run == sorted(run) else None


def probed_interval(raw: dict[str, int], prev: Bins | None
                    ) -> tuple[Bins, Probed | None] | None:
    """``raw`` read and summed per block (against ``prev``, the same job, direction and
    measure in the previous dump), and the interval from prev to it (since zero when prev is
    None); the interval is None when a count went down or a bucket of prev went away (fio
    restarted its counters). None: buckets out of order, for the exact path."""
    if prev is not None and prev.ends is None:
        if prev.cuts is None:  # read by the exact path before
            if not prev.ascending:
                return None
            prev = _blocked(prev.raw, list(prev.raw))
        else:  # by the compiled pass (_fio_json_walked): its keys, as this path lists them
            counts = list(prev.raw.values())
            prev = _bins(prev.raw, prev.keys, counts, prev.cuts, _slices(prev.cuts))
    counts = list(raw.values())
    if prev is None:
        keys = list(raw)
        ns = list(map(BIN_KEYS.__getitem__, keys))
        if ns != sorted(ns):
            return None
        cur = _blocked(raw, keys, counts)
        assert cur.ends is not None
        if not counts or min(counts) < 0:
            return cur, None
        return cur, Probed(cur, cur.cuts or [], None, cur.ends, cur.ends[-1])
    assert prev.keys is not None and prev.ends is not None and prev.cuts is not None
    if len(counts) == len(prev.keys):  # the usual case: no new bucket, same keys, same order
        cuts, slices = prev.cuts, prev.slices
        assert slices is not None
        cur = _bins(raw, prev.keys, counts, cuts, slices)
    else:
        keys = list(raw)
        carried = _carried(keys, prev)
        if carried is None:  # a bucket went away: counters restarted
            return _blocked(raw, keys, counts), None
        cuts, slices = carried, _slices(carried)
        cur = _bins(raw, keys, counts, cuts, slices)
    assert cur.ends is not None
    ends = list(map(sub, cur.ends, prev.ends))
    if ends[0] < 0 or ends != sorted(ends):  # a block's count went down: restarted
        return cur, None
    probed = Probed(cur, cuts, prev, ends, ends[-1])
    if cuts is not prev.cuts and too_coarse(cuts):
        cur = _blocked(raw, cur.keys or [], counts)  # (for the next dump)
    return cur, probed


def _blocked(raw: dict[str, int], keys: list[str], counts: list[int] | None = None) -> Bins:
    """``raw`` cut afresh in blocks of ``_width`` buckets."""
    if counts is None:
        counts = list(raw.values())
    cuts = fresh_cuts(len(counts))
    return _bins(raw, keys, counts, cuts, _slices(cuts))


def fresh_cuts(n: int) -> list[int]:
    """Where ``n`` buckets cut in blocks of ``_width`` end."""
    size = _width(n)
    return [*range(size, n, size), n]


def _bins(raw: dict[str, int], keys: list[str] | None, counts: list[int], cuts: list[int],
          slices: list[slice]) -> Bins:
    """``raw`` with its keys and counts, summed per block (blocks ending at ``cuts``)."""
    cur = Bins(raw, True)
    cur.keys, cur.counts, cur.cuts, cur.slices = keys, counts, cuts, slices
    cur.ends = _sums(counts, slices)
    return cur


def _slices(cuts: list[int]) -> list[slice]:
    """The blocks ending at ``cuts``, as slices (made once, used while no bucket is added)."""
    return list(map(slice, [0, *cuts], cuts))


def _sums(counts: list[int], slices: list[slice]) -> list[int]:
    """The running sums of ``counts`` at the end of each block (one C-level pass)."""
    return list(accumulate(map(sum, map(counts.__getitem__, slices))))


def _carried(keys: list[str], prev: Bins) -> list[int] | None:
    """Where prev's blocks end in ``keys`` (prev's keys and the buckets added since, in
    order): each block's last bucket found again, at most as many places later as buckets
    were added; the buckets past prev's last go to the last block. None when one is not
    found (a bucket went away, or the order changed)."""
    assert prev.keys is not None and prev.cuts is not None
    was = prev.keys
    extra = len(keys) - len(was)
    if extra < 0:
        return None
    index = keys.index
    out = []
    shift = 0
    for end in prev.cuts:
        try:  # (a C-level search; the keys are mostly the very objects of prev's)
            at = index(was[end - 1], end - 1 + shift, end + extra)
        except ValueError:
            return None
        shift = at + 1 - end
        out.append(at + 1)
    out[-1] = len(keys)
    return out


def too_coarse(cuts: list[int]) -> bool:
    """Whether a block grew past ``_REBLOCK`` times the size blocks are cut to."""
    widest: int = max(map(sub, cuts, [0, *cuts[:-1]]))
    return widest > _REBLOCK * _width(cuts[-1])


def _by_value(raw: dict[str, int], before: dict[str, int], qs: list[tuple[float, str]]
              ) -> list[tuple[str, float]]:
    """The percentiles of raw less before, bucket by bucket (when the buckets of a block do
    not follow from the previous dump's: not fio's way)."""
    delta = {BIN_KEYS[k]: v - before.get(k, 0) for k, v in raw.items()}
    found = LatencyHistogram({k: v for k, v in delta.items() if v > 0}).quantiles(
        q for q, _ in qs)
    return [(label, found[q]) for q, label in qs]
