"""Sparse latency histograms in fio's bucket scheme.

fio's json+ output has, per direction, ``clat_ns.bins``: a map from a bucket's value in
nanoseconds to the number of completions that fell in it, counted since the job started.
A per-interval histogram is the difference of two consecutive cumulative maps; histograms of
many hosts merge by adding counts (bucket values are the same everywhere: fio computes them
from a fixed table). Percentiles are taken as fio takes them: the value of the first bucket at
which the cumulative count reaches ``q * total``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, islice
from operator import itemgetter, sub

from benchtui.model.fio_buckets import FIO_PLAT_BITS, coarse_keys

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any

NS_PER_SECOND = 1_000_000_000


@dataclass(slots=True)
class LatencyHistogram:
    """Counts per bucket; keys are bucket values in nanoseconds."""

    counts: dict[int, int] = field(default_factory=dict)

    @classmethod
    def from_fio_bins(cls, bins: Mapping[str, int]) -> LatencyHistogram:
        """Build from fio's json+ ``bins`` object (string keys in ns)."""
        return cls({int(k): int(v) for k, v in bins.items()})

    def total(self) -> int:
        return sum(self.counts.values())

    def running_sums(self) -> tuple[Sequence[int], Sequence[int]] | None:
        """(bucket keys, running sums of their counts) when the histogram holds its counts
        that way and has not made its dict yet (``DeltaHistogram``: a reader, the recorder,
        need not make it); None otherwise. ``counts`` leaves out the keys whose count is 0."""
        return None

    def __bool__(self) -> bool:
        return any(self.counts.values())

    def delta(self, earlier: LatencyHistogram) -> LatencyHistogram:
        """self - earlier, for cumulative histograms. A bucket that went down (a counter reset)
        makes the whole delta meaningless: the caller must check ``is_reset_from`` first."""
        prev = earlier.counts
        out: dict[int, int] = {}
        for k, v in self.counts.items():
            d = v - prev.get(k, 0)
            if d > 0:
                out[k] = d
        return LatencyHistogram(out)

    def is_reset_from(self, earlier: LatencyHistogram) -> bool:
        """True when some bucket count decreased: the tool restarted its counters."""
        cur = self.counts
        return any(cur.get(k, 0) < v for k, v in earlier.counts.items())

    def merge(self, other: LatencyHistogram) -> None:
        """Add other's counts into self (fleet-wide aggregation)."""
        c = self.counts
        get = c.get
        for k, v in other.counts.items():
            c[k] = get(k, 0) + v

    @classmethod
    def merged(cls, parts: Iterable[LatencyHistogram]) -> LatencyHistogram:
        out = cls()
        for p in parts:
            out.merge(p)
        return out

    def quantiles(self, qs: Iterable[float]) -> dict[float, float]:
        """Quantiles (0..1) -> latency in seconds. Empty when the histogram holds nothing."""
        counts = self.counts
        keys = sorted(counts)
        values = list(map(counts.__getitem__, keys))  # C-level: the console runs this a lot
        if values and min(values) <= 0:
            keys = [k for k in keys if counts[k] > 0]
            values = list(map(counts.__getitem__, keys))
        if not keys:
            return {}
        cums = list(accumulate(values))
        total = cums[-1]
        last = len(keys) - 1
        return {q: keys[min(bisect_left(cums, q * total), last)] / NS_PER_SECOND for q in qs}

    def quantile(self, q: float) -> float | None:
        return self.quantiles([q]).get(q)

    def mean(self) -> float | None:
        total = self.total()
        if total == 0:
            return None
        return sum(k * v for k, v in self.counts.items()) / total / NS_PER_SECOND

    def to_json_buckets(self) -> dict[str, int]:
        """For JSON output: bucket value in seconds (as text) -> count, ascending."""
        return {repr(k / NS_PER_SECOND): v for k, v in sorted(self.counts.items())}

    def coarsened(self, bits: int) -> LatencyHistogram:
        """This histogram at ``bits`` sub-bucket bits per power of two of fio's scheme
        (``fio_buckets``): each count moves to the coarse bucket holding its key, keyed by
        that bucket's value. ``bits`` = 6 (fio's own resolution) returns self, as does a
        histogram already that coarse. Totals are kept; a histogram holding running sums
        (the parser's) gives one holding running sums, made with C-level passes."""
        if bits >= FIO_PLAT_BITS:
            return self
        sums = self.running_sums()
        if sums is not None and len(sums[0]) == len(sums[1]):
            plan = coarse_plan(sums[0], bits)
            if plan.same:
                return self
            if plan.ascending:
                return RunningSumsHistogram(plan.coarse, plan.take(sums[1]))
        keymap = coarse_keys(bits)
        counts = self.counts
        if all(map(int.__eq__, map(keymap.__getitem__, counts), counts)):
            return self
        out: dict[int, int] = {}
        get = out.get
        for k, v in counts.items():
            c = keymap[k]
            out[c] = get(c, 0) + v
        return LatencyHistogram(out)


_COUNTS: Any = LatencyHistogram.__dict__["counts"]  # the slot that holds a histogram's counts


class LazyHistogram(LatencyHistogram):
    """A ``LatencyHistogram`` whose ``counts`` dict is made on first use from a compact
    pending form (``_make``): parsers and readers make many histograms whose dict is never
    needed. Safe to read from two threads at once: the pending form is one attribute, read
    once and cleared only after the dict is in place, so a reader sees one or the other."""

    __slots__ = ("_pending",)

    def __init__(self, pending: object) -> None:  # the counts dict: on first use
        self._pending: object = pending

    def _make(self, pending: Any) -> dict[int, int]:
        raise NotImplementedError

    @property
    def counts(self) -> dict[int, int]:
        pending = self._pending
        if pending is not None:
            made = self._make(pending)
            _COUNTS.__set__(self, made)
            self._pending = None
            return made
        counts: dict[int, int] = _COUNTS.__get__(self)
        return counts

    @counts.setter
    def counts(self, value: dict[int, int]) -> None:
        _COUNTS.__set__(self, value)
        self._pending = None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LatencyHistogram):
            return self.counts == other.counts
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(counts={self.counts!r})"


def counts_from_sums(keys: Sequence[int], cum: Sequence[int]) -> dict[int, int]:
    """bucket -> count (the buckets with a count only), from running sums of the counts."""
    counts = list(map(sub, cum, [0, *cum[:-1]]))
    return dict(zip(compress(keys, counts), filter(None, counts), strict=False))


class RunningSumsHistogram(LazyHistogram):
    """A ``LatencyHistogram`` held as bucket keys (ascending) and the running sums of their
    counts; ``counts`` is made on first use (the recorder encodes the sums directly)."""

    __slots__ = ()

    def __init__(self, keys: Sequence[int], cum: Sequence[int]) -> None:
        super().__init__((keys, cum))

    def _make(self, pending: tuple[Sequence[int], Sequence[int]]) -> dict[int, int]:
        return counts_from_sums(*pending)

    def running_sums(self) -> tuple[Sequence[int], Sequence[int]] | None:
        pending: tuple[Sequence[int], Sequence[int]] | None = self._pending  # type: ignore[assignment]
        return pending  # one read: the state, or None once the dict is made



def merged_quantiles(parts: Sequence[LatencyHistogram], qs: Iterable[float]
                     ) -> dict[float, float]:
    """``LatencyHistogram.merged(parts).quantiles(qs)``, without merging when every part
    holds running sums over ascending keys (``running_sums``: the parsers' and the engine's
    histograms). The merged running sum at a key is the sum of each part's running sum at
    its last key not above it (a ``bisect`` each), so a quantile is a binary search over the
    union of the parts' keys: ~10 such sums, where a merge adds every bucket of every part in
    Python (the console asks this of the fleet's 64 histograms every second, and of a
    host's jobs at each of its updates). Running sums never go down (a parser gives none
    for an interval whose counters went back)."""
    if not parts:
        return {}
    sums = [s for s in [p.running_sums() for p in parts]
            if s is not None and len(s[0]) == len(s[1]) and len(s[0])]
    union = _union([keys for keys, _ in sums]) if len(sums) == len(parts) else None
    if union is None:
        return _merged(parts).quantiles(qs)
    total = sum(cum[-1] for _keys, cum in sums)
    if total <= 0:
        return {}

    out: dict[float, float] = {}
    last = len(union) - 1
    start, before = 0, 0.0
    for q in qs:
        # the first key at which the running sum reaches q * total (at most the total: the
        # last key with a count), or for q = 0 the first key with a count; the merged
        # running sum at a key is each part's at its last key not above it (inline: ~30 of
        # them per call, a call each was a third of the time)
        target = min(q * total, total)
        # a larger target is reached no earlier: ascending quantiles search from the last
        lo, hi = (start if target > 0 and target >= before else 0), last
        while lo < hi:
            mid = (lo + hi) // 2
            x = union[mid]
            reached = 0
            for keys, cum in sums:
                i = bisect_right(keys, x)
                if i:
                    reached += cum[i - 1]
            if reached >= target if target > 0 else reached > 0:
                hi = mid
            else:
                lo = mid + 1
        out[q] = union[lo] / NS_PER_SECOND
        start, before = lo, target
    return out


def _merged(parts: Sequence[LatencyHistogram]) -> LatencyHistogram:
    merged = LatencyHistogram(dict(parts[0].counts))  # a C-level copy, then add the rest
    for part in parts[1:]:
        merged.merge(part)
    return merged


#: Key lists (by identity) -> the lists and their union.
_UNIONS: dict[tuple[int, ...], tuple[tuple[Sequence[int], ...], Sequence[int]]] = {}


def _union(key_lists: list[Sequence[int]]) -> Sequence[int] | None:
    """The union of ``key_lists``, ascending; None when a list is not strictly ascending.
    Made once per set of lists: a parser keeps one key list per job while no new bucket
    appears, and the engine's coarsening one per such list."""
    ident = tuple(map(id, key_lists))
    hit = _UNIONS.get(ident)
    if hit is not None and all(a is b for a, b in zip(hit[0], key_lists, strict=True)):
        return hit[1]
    if not all(all(map(int.__lt__, keys[:-1], keys[1:])) for keys in key_lists):
        return None
    first = key_lists[0]
    union = first if all(keys is first or keys == first for keys in key_lists) \
        else sorted(set().union(*key_lists))
    if len(_UNIONS) >= 256:
        _UNIONS.clear()
    _UNIONS[ident] = (tuple(key_lists), union)
    return union

class _CoarsePlan:
    """How to coarsen running sums over one list of ascending keys: the coarse keys, and the
    position of the last fine key of each (its running sum is the coarse bucket's). A parser
    shares one key list between the intervals of a job, so a plan is made once per list.
    ``take`` picks those sums into a tuple in one C call (an ``itemgetter`` of the
    positions: ~4x faster than a ``map`` of ``__getitem__``; every fio json+ histogram the
    controller takes in is coarsened so, ~4% of its busy time at 2 jobs a host)."""

    __slots__ = ("_pick", "ascending", "coarse", "ends", "keys", "same")

    def __init__(self, keys: Sequence[int], bits: int) -> None:
        self.keys = keys
        mapped = list(map(coarse_keys(bits).__getitem__, keys))
        self.ascending = not any(map(int.__gt__, keys[:-1], keys[1:]))
        self.same = mapped == list(keys)
        last = len(mapped) - 1
        self.ends = [i for i in range(last) if mapped[i] != mapped[i + 1]]
        if mapped:
            self.ends.append(last)
        self.coarse = [mapped[i] for i in self.ends]
        ends = self.ends
        self._pick = itemgetter(*ends) if len(ends) > 1 else None

    def take(self, sums: Sequence[int]) -> tuple[int, ...]:
        """The running sums at ``ends``, as a tuple."""
        if self._pick is not None:
            picked: tuple[int, ...] = self._pick(sums)
            return picked
        return tuple(map(sums.__getitem__, self.ends))  # (an itemgetter of one: no tuple)


_PLANS: dict[tuple[int, int], _CoarsePlan] = {}
#: Plans kept at most: one per job and direction of every run that is followed (32 hosts x
#: 32 fio jobs x 2 directions need 2,048; with 1,024 the cache was emptied again and again
#: and making plans took a sixth of the controller's time).
_MAX_PLANS = 1 << 14


def coarse_plan(keys: Sequence[int], bits: int) -> _CoarsePlan:
    """How running sums over ``keys`` are coarsened to ``bits`` (made once per key list,
    kept while that list lives): what ``coarsened`` does, for a parser that makes its
    histograms at the session's resolution itself (``parsers/_fio_json_live``)."""
    plan = _PLANS.get((id(keys), bits))
    if plan is None or plan.keys is not keys:
        if len(_PLANS) >= _MAX_PLANS:  # the older half goes (a dict keeps insertion order)
            for old in list(islice(_PLANS, _MAX_PLANS // 2)):
                del _PLANS[old]
        plan = _PLANS[id(keys), bits] = _CoarsePlan(keys, bits)
    return plan
