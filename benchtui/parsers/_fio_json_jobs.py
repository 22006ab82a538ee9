"""One fio job followed from status dump to status dump (``fio_json.FioJsonParser``'s state).

A dump's job is read into its counters per direction (``snapshot``: completions, bytes,
runtime, latency means, the cumulative ``bins``). ``JobState.step`` compares them with the
previous dump's: whether fio restarted its counters (the end of ``ramp_time``, a restarted
job), how long the job did I/O in between (``work_ms``), and the running sums of the
interval's latency buckets (``_fio_json_bins.interval``; with histograms, the compiled pass
where it is built: ``_fio_json_live``). The work follows what changed: a
direction without new completions keeps its buckets as they were, unread.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchtui.parsers import _fio_json_units as units
from benchtui.parsers._fio_json_bins import Bins, Running, interval
from benchtui.parsers._fio_json_live import Summed, live_interval
from benchtui.parsers._fio_json_probed import Probed
from benchtui.parsers._fio_json_walked import Walked, percentile_interval

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any

#: An interval's latency buckets, as the path that read them keeps them.
Latencies = Running | Summed | Probed | Walked

OPS = ("read", "write", "trim")
#: (measure label, fio's key) of the latencies fio reports per direction.
MEASURES = (("clat", "clat_ns"), ("slat", "slat_ns"), ("lat", "lat_ns"))
#: How much later than the previous dump a counter reset may seem to have happened (clock skew
#: between fio's timestamp and its runtime accounting).
RESET_SLACK_MS = 100
_NUMBER = (int, float)


@dataclass(slots=True)
class Dir:
    """The counters of one direction in one dump."""

    n: int | float  # completions: clat_ns.N, or lat_ns.N when clat is not measured
    io: int | float  # io_bytes
    runtime: int | float  # ms
    ios: int | float  # total_ios
    stats: dict[str, tuple[int | float, int | float]]  # measure -> (N, mean)
    raw: dict[str, dict[str, int]]  # measure -> bins as decoded
    bins: dict[str, Bins]  # the same, read (by JobState.step)


ZERO = Dir(0, 0, 0, 0, {}, {}, {})


def snapshot(d: object) -> Dir | None:
    """The counters of one direction of a job (None: not a direction object)."""
    if type(d) is not dict:
        return None
    io, runtime, ios = d.get("io_bytes", 0), d.get("runtime", 0), d.get("total_ios", 0)
    if not io and not ios and not runtime:
        return ZERO  # a direction the job does not use (shared, never written to)
    stats: dict[str, tuple[int | float, int | float]] = {}
    raw: dict[str, dict[str, int]] = {}
    if "clat_ns" in d and "io_kbytes" in d:  # fio 3.x, the usual case: no conversion
        for measure, key in MEASURES:
            x = d.get(key)
            if type(x) is dict:
                n = x.get("N", ios)
                if (isinstance(n, _NUMBER) and n > 0 and ("N" in x or x.get("max"))
                        and isinstance(mean := x.get("mean"), _NUMBER)):
                    stats[measure] = (n, mean)
                b = x.get("bins")
                if type(b) is dict and b:
                    raw[measure] = b
    else:  # fio 2.x (us, io in KiB) or a direction without clat_ns
        io = units.io_bytes(d) or 0
        for measure, x, scale in units.latency_blocks(d):
            n, mean = units.count(d, x), units.number(x.get("mean"))
            if n > 0 and mean is not None:
                stats[measure] = (n, mean * scale)
            b = x.get("bins")
            if type(b) is dict and b and (ns := units.bins_ns(b, scale)) is not None:
                raw[measure] = ns
    # (fio before 3.17: no N, the count is total_ios, once a latency was measured)
    n = stats["clat"][0] if "clat" in stats else stats["lat"][0] if "lat" in stats else 0
    return Dir(n, io if type(io) in _NUMBER else 0, runtime if type(runtime) in _NUMBER else 0,
               ios if type(ios) in _NUMBER else 0, stats, raw, {})


@dataclass(slots=True)
class Step:
    """What one job's interval is computed from."""

    cur: dict[str, Dir]
    prev: dict[str, Dir]
    deltas: dict[tuple[str, str], Latencies]  # (op, measure) -> interval's latencies
    reset: bool  # from the job's (or its counters') start
    first: bool  # the job's first dump
    dts: int | float | None  # ms between this dump and the previous one
    span_ms: float  # how long the job did I/O in the interval
    finished: bool  # no completion and the job was not running
    ts: int | float | None  # this dump's timestamp_ms
    active: set[str]  # the job's directions that ever completed I/O
    #: the interval's seconds of work when it is not the nominal one (set by the parser)
    duration: float | None = None


class JobState:
    """One job's counters in the last dump, and what it has done so far."""

    __slots__ = ("active", "dirs", "fresh", "job_ms", "ramping", "ts")

    def __init__(self, ts: int | float | None) -> None:
        self.ts = ts
        self.fresh = True  # no dump read yet
        self.dirs: dict[str, Dir] = {}
        self.job_ms: int | float | None = None  # job_runtime (fio 3.x)
        self.ramping = False
        self.active: set[str] = set()  # directions that ever completed I/O

    def step(self, job: dict[str, Any], ts: int | float | None, *, histogram: bool) -> Step:
        """This dump of the job, against the previous one (which it then replaces);
        ``histogram``: the intervals' latency histograms are wanted."""
        cur: dict[str, Dir] = {}
        for op in OPS:
            c = snapshot(job.get(op))
            if c is not None:
                cur[op] = c
        first = not self.dirs
        reset = self.fresh or _counters_dropped(self.dirs, cur)
        self.fresh = False
        dts = None if ts is None or self.ts is None else ts - self.ts
        run_ms = max([c.runtime for c in cur.values()], default=0)
        job_ms = job.get("job_runtime")
        if type(job_ms) is not int and type(job_ms) is not float:
            job_ms = None
        prev_job_ms, self.job_ms = self.job_ms, job_ms
        prev_run_ms = max([p.runtime for p in self.dirs.values()], default=0)
        if not reset and self.ramping and any(c.n > 0 for c in cur.values()):
            # ramp_time over: fio zeroed the counters; its runtime restarted with them
            reset = dts is not None and run_ms <= dts + RESET_SLACK_MS
        prev = {} if reset else self.dirs
        deltas = _deltas(cur, prev, histogram)
        if deltas is None:  # a bucket went down or away: counters restarted
            reset, prev = True, {}
            deltas = _deltas(cur, prev, histogram)
            assert deltas is not None
        self.ramping = any(c.io > 0 and c.n == 0 for c in cur.values())
        self.dirs, self.ts = cur, ts
        for op, c in cur.items():
            if c.n > 0:
                self.active.add(op)
        finished = False
        if reset:
            span = work_ms(job_ms, run_ms, None)
        elif dts is None or dts <= 0:
            span = 0.0
        else:
            finished = run_ms - prev_run_ms < dts / 2 and all(
                c.n == prev[op].n for op, c in cur.items() if op in prev)
            span = work_ms(None if job_ms is None or prev_job_ms is None
                           else job_ms - prev_job_ms, run_ms - prev_run_ms, dts)
        return Step(cur, prev, deltas, reset, first, dts, span, finished, ts, self.active)


def _deltas(cur: dict[str, Dir], prev: dict[str, Dir], histogram: bool
            ) -> dict[tuple[str, str], Latencies] | None:
    """(op, measure) -> the interval's latency buckets (``cur`` less ``prev``); None when a
    bucket went down or away (never when ``prev`` is empty). A direction whose completions
    did not change and whose buckets are the previous dump's (compared in C) is not read
    again."""
    deltas: dict[tuple[str, str], Latencies] = {}
    for op, c in cur.items():
        p = prev.get(op, ZERO)
        since = p.bins
        for measure, raw in c.raw.items():
            earlier = since.get(measure)
            if earlier is not None and c.n == p.n and raw == earlier.raw:
                c.bins[measure] = earlier  # nothing completed: nothing to subtract
                continue
            # Without histograms, the percentiles alone: the compiled pass, or block sums
            read = live_interval(raw, earlier) if histogram \
                else percentile_interval(raw, earlier)
            c.bins[measure], delta = read if read is not None else interval(raw, earlier)
            if delta is not None:
                deltas[(op, measure)] = delta
            elif prev:
                return None
    return deltas


def work_ms(job_ms: float | None, dir_ms: float, dts: float | None) -> float:
    """How long (ms) the job did I/O in an interval: the change of fio's ``job_runtime`` (fio
    3.x), else of its largest direction ``runtime``, else the time between the documents.

    ``job_runtime`` of a group (``group_reporting``) is the SUM over its jobs while a direction's
    ``runtime`` is their longest: it is used only when it agrees with the direction's."""
    if job_ms is not None and job_ms > 0 and (dir_ms <= 0 or job_ms <= dir_ms * 1.25 + 2):
        span = job_ms
    elif dir_ms > 0:
        span = dir_ms
    else:
        return dts or 0.0
    if dts is not None and dts > 0 and span > dts + RESET_SLACK_MS:
        return dts  # runtime ran faster than the clock: not believable
    return span


def _counters_dropped(prev: dict[str, Dir], cur: dict[str, Dir]) -> bool:
    for op, c in cur.items():
        p = prev.get(op)
        if p is not None and (c.n < p.n or c.io < p.io or c.ios < p.ios
                              or c.runtime < p.runtime):
            return True
    return False
