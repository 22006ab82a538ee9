"""An interval's latency percentiles and histogram from fio json+'s cumulative ``bins``, in
the compiled pass, for the live path (histograms on); ``_fio_json_bins.interval`` (numpy,
pure Python) where the pass is not built, is not wanted, or does not take the input.

The live controller wants, per job and direction of every dump, the interval's percentiles
and (for the first measure) its histogram at the session's resolution (``histogram_bits``,
4 by default: ~100 buckets where fio prints ~400-1,000). ``interval`` makes the running sum
of every fine bucket as a Python int; the session then coarsens them and frees the fine
ones: ~14 µs a direction of the 32-job capture, 0.9 ms of a 32-job document. Here the pass
walks the dump once beside the previous dump's packed counts (``_fio_json_pass.walk``), the
percentiles are bisected in its int64 sums (``find``) and only the coarse buckets' sums
become Python ints (``pick``, at the positions ``model.histogram.coarse_plan`` gives): ~5.5 µs
a direction. A parser not told the session's resolution (``benchtui parse --histograms``)
gets fio's, as before.

The samples are the pure path's, sample for sample: the same percentiles (the same buckets
found: ``_fio_json_walked``), the same histograms (the coarse keys and running sums
``LatencyHistogram.coarsened`` gives the pure path's, which the session then leaves as they
are). The pass takes only what fio prints (``_fio_json_walked``); anything else, a counter
restarted or buckets out of order, is read by ``interval``, which decides what it means; a
direction it read goes on with it until its counters restart (nothing is kept twice).
"""

from __future__ import annotations

from benchtui.model.fio_buckets import FIO_PLAT_BITS
from benchtui.model.histogram import LatencyHistogram, RunningSumsHistogram, coarse_plan
from benchtui.parsers import _fio_json_walked as walked
from benchtui.parsers._fio_json_bins import BIN_KEYS, Bins, DeltaHistogram, Running, interval


class Summed(walked.Walked):
    """An interval's buckets as the compiled pass left them (``Walked``), with the buckets'
    values (ns, ascending: the list the job's dumps share while fio adds none), for its
    histogram."""

    __slots__ = ("ns",)

    def __init__(self, keys: list[str], sums: bytes, total: int, ns: list[int]) -> None:
        super().__init__(keys, sums, total)
        self.ns = ns

    def histogram(self, bits: int | None) -> LatencyHistogram:
        """The interval's histogram at ``bits`` (None: fio's own resolution), as
        ``Running.histogram`` makes it."""
        ns = self.ns
        if bits is not None and bits < FIO_PLAT_BITS and walked.PASS is not None:
            plan = coarse_plan(ns, bits)
            if not plan.same and plan.ascending:
                picked = walked.PASS.pick(self.sums, plan.ends)
                if picked is not None:
                    return RunningSumsHistogram(plan.coarse, picked)
        fine = DeltaHistogram(ns, tuple(memoryview(self.sums).cast("q").tolist()))
        return fine if bits is None else fine.coarsened(bits)


def live_interval(raw: dict[str, int], prev: Bins | None) -> tuple[Bins, Summed | Running | None]:
    """``interval(raw, prev)``: ``raw`` read against ``prev`` and the interval between them,
    by the compiled pass where it takes them."""
    walk = walked.PASS
    if walk is None:
        return interval(raw, prev)
    if prev is None:
        done = walk.walk(raw, None, None, None)
    elif prev.packed is None or prev.keys is None:
        return interval(raw, prev)  # (prev read by ``interval``: it goes on)
    else:  # (buckets added: the previous dump's as one block, whose blocks are not kept)
        m = len(prev.keys)
        done = walk.walk(raw, prev.packed, prev.keys, None if m == len(raw) else [m])
    if done is None:
        return interval(raw, prev)
    total, sums, packed, keys, _ = done
    if prev is not None and keys is prev.keys:  # the same buckets: the same values
        cur = Bins(raw, prev.ascending, prev.ns)
    else:  # a first dump (its keys ascending digits: the pass checked), or buckets added
        ns = list(map(BIN_KEYS.__getitem__, keys))
        cur = Bins(raw, (prev is None or prev.ascending)
                   and not any(map(int.__ge__, ns[:-1], ns[1:])), ns)
    cur.keys, cur.packed = keys, packed
    ns = cur.bucket_ns()
    if not cur.ascending:  # (buckets added out of order: not fio's) as ``interval`` reads it
        return cur, Running(ns, False, memoryview(sums).cast("q").tolist(), total)
    return cur, Summed(keys, sums, total, ns)
