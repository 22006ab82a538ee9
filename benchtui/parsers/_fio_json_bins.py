"""Per-interval latency histograms from fio json+'s cumulative ``bins``, fast.

fio prints, per direction and latency measure, ``bins``: bucket value (ns, as text) -> count
since the job started, in ascending bucket order. The interval's histogram is the difference
of two consecutive dumps. A one-hour capture holds ~3600 dumps x ~1000 buckets per job, so this
works with C-level passes (``map(sub, ...)``, ``accumulate``, ``bisect``) and no per-bucket
Python code; the interval histogram itself (a ``LatencyHistogram``) is built only
when someone reads it (``DeltaHistogram``), e.g. the live store merging hosts' histograms.

Quantiles are taken as ``LatencyHistogram.quantiles`` takes them (the first bucket whose
cumulative count reaches ``q * total``); the tests check both agree.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import sub

from benchtui.model.histogram import (
    NS_PER_SECOND,
    LatencyHistogram,
    RunningSumsHistogram,
    counts_from_sums,
)


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


def read_bins(raw: dict[str, int], prev: Bins | None) -> Bins:
    """``raw`` with its keys as integers. Buckets are only ever added to a cumulative
    ``bins`` object, so while the count of buckets is the previous dump's (``prev``, the same
    job, direction and measure, counters not reset), so are the keys: converted once."""
    if prev is not None and len(prev.raw) == len(raw):
        return Bins(raw, prev.ns, prev.ascending)
    ns = list(map(_BIN_KEYS.__getitem__, raw))
    return Bins(raw, ns, ns == sorted(ns))


def interval_cum(cur: Bins, prev: Bins | None) -> list[int] | None:
    """Running sums of the interval's counts per bucket (cur - prev; since zero when ``prev``
    is None), in cur's bucket order, or None when a bucket count went down (fio restarted its
    counters): counts never go down, so neither do their running sums."""
    raw = cur.raw
    if prev is None:
        cum = list(accumulate(raw.values()))
    elif len(prev.raw) == len(raw):  # the usual case: no new bucket, same keys, same order
        cum = list(accumulate(map(sub, raw.values(), prev.raw.values())))
    else:  # new buckets appeared: align the earlier counts on cur's keys
        if len(raw) < len(prev.raw) or not prev.raw.keys() <= raw.keys():
            return None
        cum = list(accumulate(map(sub, raw.values(), map(prev.raw.get, raw, repeat(0)))))
    if cum and (cum[0] < 0 or cum != sorted(cum)):
        return None
    return cum


def quantiles(ns: list[int], cum: list[int], ascending: bool,
              qs: list[tuple[float, str]]) -> list[tuple[str, float]]:
    """(label, seconds) for each (q, label) of ``qs``, from the running sums of an interval's
    counts (``cum[-1]`` > 0)."""
    if not ascending:
        hist = LatencyHistogram(counts_of(ns, cum))
        found = hist.quantiles(q for q, _ in qs)
        return [(label, found[q]) for q, label in qs]
    total = cum[-1]
    # cum[-1] == total >= q * total for q <= 1: bisect_left stays within the buckets
    return [(label, ns[bisect_left(cum, q * total)] / NS_PER_SECOND) for q, label in qs]


#: bucket ns -> count (the buckets with a count only), from the running sums.
counts_of = counts_from_sums


class DeltaHistogram(RunningSumsHistogram):
    """An interval's histogram as the parser makes it: fio's bucket keys and the running sums
    of the interval's counts (a tuple of ints, soon left alone by the garbage collector). Its
    ``counts`` dict is made on first use: parsing a file to print samples never needs it; an
    hour of dumps makes ~15000 histograms. Readable from two threads at once
    (``LazyHistogram``): the event loop's consumers and the recorder's thread."""

    __slots__ = ()
