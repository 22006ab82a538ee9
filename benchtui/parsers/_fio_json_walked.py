"""An interval's latency percentiles from fio json+'s cumulative ``bins`` in one compiled
pass, when the optional C extension ``_fio_json_pass`` is there; the pure-Python path
(``_fio_json_probed``) otherwise, and for any input the pass does not take as fio prints it.

``benchtui parse`` of a wide fio job spends most of its own work on the buckets: a 32-job
json+ document carries ~25,000, and every dump's interval is wanted. In Python's C-level
passes (``_fio_json_probed``: counts and keys listed, block sums, blocks carried, the
percentiles' blocks subtracted) a bucket costs 70-1,000 instructions a pass; the compiled
pass walks a dump's dict once beside the previous dump's packed counts (~100-140
instructions a bucket, half of it ``PyDict_Next``): each count subtracted, the interval's
running sums kept as int64 in a bytes object, the percentiles bisected in them
(``Walked.quantiles``). docs/benchmarks/parse_speed.md, round 8, has the counts.

The outputs are the pure-Python path's, sample for sample. The pass takes only plain str
keys and plain int counts in [0, 2**53] that never go down, with every bucket of the
previous dump still there, in order (and, on a first dump, keys of plain digits in strictly
ascending order; on a dump with as many buckets, the previous dump's keys): then both paths
find the very buckets ``LatencyHistogram.quantiles`` would. Anything else (a count going
down, a bucket gone: fio restarted its counters; or what fio does not print) is left to
``_fio_json_probed``, which decides what it means. So that it decides as if it had read
every dump itself, the pass keeps what that path would have kept (the keys list, where the
blocks end: carried, cut again where that path would) but the block sums, which it makes
from the dump when it needs them.

``BENCHTUI_PURE_PYTHON=1`` in the environment keeps the extension unused (read when this
module is first imported; docs/install.md, docs/architecture.md "The compiled pass").
"""

from __future__ import annotations

from bisect import bisect_left
from math import ceil
from types import ModuleType

from benchtui import compiled
from benchtui.model.histogram import NS_PER_SECOND
from benchtui.parsers._fio_json_bins import BIN_KEYS, Bins
from benchtui.parsers._fio_json_probed import Probed, fresh_cuts, probed_interval, too_coarse


def load_pass() -> ModuleType | None:
    """The compiled pass, or None: not built (no compiler where benchtui was installed) or
    not wanted (``BENCHTUI_PURE_PYTHON`` set to anything but 0)."""
    if not compiled.wanted():
        return None
    try:
        from benchtui.parsers import _fio_json_pass
    except ImportError:
        return None
    return _fio_json_pass


#: The compiled pass this process uses (None: pure Python). Tests set it to run both paths.
PASS: ModuleType | None = load_pass()


class Walked:
    """An interval's buckets as the compiled pass left them: the current dump's bucket keys
    and the interval's running sums (int64, native order, one per bucket, in the keys'
    order)."""

    __slots__ = ("keys", "sums", "total")

    def __init__(self, keys: list[str], sums: bytes, total: int) -> None:
        self.keys = keys
        self.sums = sums
        self.total = total

    def quantiles(self, qs: list[tuple[float, str]]) -> list[tuple[str, float]]:
        """(label, seconds) for each (q, label) of ``qs`` (``total`` > 0): the first bucket
        whose running sum reaches ``q * total``, as ``Probed.quantiles`` finds it."""
        found: list[tuple[str, float]] | None = (
            None if PASS is None else PASS.find(self.keys, self.sums, qs))
        if found is not None:
            return found
        # (a q that is not a 0 < q <= 1 float, a key that is not plain digits: in Python)
        sums = memoryview(self.sums).cast("q").tolist()
        return [(label, BIN_KEYS[self.keys[bisect_left(sums, ceil(q * self.total))]]
                 / NS_PER_SECOND) for q, label in qs]


def percentile_interval(raw: dict[str, int], prev: Bins | None
                        ) -> tuple[Bins, Probed | Walked | None] | None:
    """``_fio_json_probed.probed_interval``: ``raw`` read against ``prev`` and the interval
    between them, by the compiled pass where it takes them, else in Python.

    A dump the pass read keeps its keys (the previous dump's list while no bucket is added,
    as the Python path has them), its counts packed (``Bins.packed``) and where its blocks
    end, not their sums (``Bins.ends`` None): the Python path completes it if it must read
    the next dump. A dump that path read (or the exact one) is followed by it."""
    walk = PASS
    if walk is None or (prev is not None and prev.packed is None):
        # (prev read by the Python path, or by the exact one: that path goes on)
        return probed_interval(raw, prev)
    done = (walk.walk(raw, None, None, None) if prev is None
            else walk.walk(raw, prev.packed, prev.keys, prev.cuts))
    if done is None:
        return probed_interval(raw, prev)
    total, sums, packed, keys, carried = done
    cur = Bins(raw, True)
    cur.keys, cur.packed = keys, packed
    if prev is None:
        cur.cuts = fresh_cuts(len(keys))
    elif carried is None:  # the same buckets, the same blocks
        cur.cuts = prev.cuts
    else:  # buckets added: blocks carried, cut afresh when one grew too wide
        cur.cuts = fresh_cuts(len(keys)) if too_coarse(carried) else carried
    return cur, Walked(keys, sums, total)
