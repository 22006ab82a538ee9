"""``rados bench`` text output (write, seq and rand modes).

What is parsed (see Ceph's ``src/common/obj_bencher.cc``):

- the per-second table ``  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)
  avg lat(s)`` (``last lat`` / ``avg lat`` without ``(s)`` before Luminous), its header repeated
  every 20 rows; a row where no operation completed since the previous one prints ``0`` for
  ``cur MB/s`` and ``-`` for ``last lat``;
- the stamped line printed before every repeated header, ``<local time> min lat: .. max lat: ..
  avg lat: ..`` (``2018-10-11 11:57:52.537579`` before Octopus, ``2023-04-18T15:12:33.881436+0800``
  since), and the same stamp in front of every line with ``--show-time``: they give the tool's
  clock (see ``_wallclock``), anchored on the next row (the stamp is taken for that row);
- the end-of-run summary (``Total time run:`` ... ``Min latency(s):``), write and read forms;
- the command line (``rados bench -p POOL SECS write|seq|rand``, ``rados -p POOL bench ...``) when
  it is part of the text: it names the pool (the ``job`` label) and the mode.

The operation (``op`` label) is ``write`` for the write mode and ``read`` for seq and rand. It
comes from, in this order: the ``mode`` keyword (``write``/``seq``/``rand``, what a session
passes); the ``Maintaining N concurrent writes`` line that only the write mode prints before its
table; the command line; otherwise ``read`` is inferred when the table starts without that line.
The summary's ``Total writes made`` / ``Total reads made`` decides for the summary samples. A
stream holding several runs (a pasted report) labels the second and later ones ``run="2"``...

"MB/s" in rados bench is MiB/s (the code divides by 1024*1024).

Per-row values (kind ``interval``, ``elapsed`` = the ``sec`` column; rows of second 0 carry no
interval and give nothing):

- ``iops``: completed operations per second computed as rados bench computes its own IOPS
  history: finished operations since the last row where ``finished`` changed, divided by the
  seconds since that row; 0 on a row where nothing completed. After a stall the burst is thus
  spread over the stalled seconds, exactly like ``cur MB/s`` (``iops`` x op size == ``cur MB/s``)
  and like the summary's Max/Min/Stddev IOPS.
- ``bandwidth_bytes``: ``cur MB/s`` x 1048576.
- ``ops_in_flight``: ``Cur ops``.
- ``latency_last_seconds``: ``last lat``, the latency of the most recently completed operation.
- ``latency_mean_seconds{measure=lat}``: the mean latency of the operations completed in this
  interval, derived from the running mean: (avg_i x finished_i - avg_j x finished_j) /
  (finished_i - finished_j) for the previous row j (rados bench prints avg lat = total latency /
  finished). Rows with no completion give none.
- ``latency_running_mean_seconds{measure=lat}``: ``avg lat`` as printed, the mean over all
  operations completed since the start.

The partial last interval: rados bench prints no row for the operations that complete after the
last row (the writes still in flight when the time is up, the tail of a seq run) but its summary
says how many there were in all (``Total writes made``) and when the run ended (``Total time
run``). When the run ended at most 2.5 s after the last row (rados bench prints a row every
second while it drains; the last whole second's row is often missing), ``iops`` and
``bandwidth_bytes`` (ops x ``Write size``) are emitted for that tail, ``elapsed`` = the run time
and ``duration`` = its length (e.g. last row 180, ``Total time run: 181.51``: 1.51 s). A run
that ended within its first second (a seq read of few objects) has only the row at 0, printed
as it starts: its tail is the whole run, its only interval.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import SUMMARY, Sample
from benchtui.model.units import parse_float
from benchtui.parsers._wallclock import STAMP, ZoneGuess
from benchtui.parsers.base import Parser

MIB: Final = 1048576.0

_HEADER = re.compile(r"^\s*sec\s+Cur ops\s+started\s+finished\s+avg MB/s\s+cur MB/s\s+last lat")
_ROW = re.compile(
    r"^\s*(\d{1,12})\s+(\d{1,15})\s+(\d{1,15})\s+(\d{1,15})\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)
_WRITE_INTRO = re.compile(r"^Maintaining (\d+) concurrent writes of (\d+) bytes to objects of size")
_AVG_IOPS_NO_COLON = re.compile(r"^(Average IOPS)\s+(\S+)$")
_MODES: Final = {"write": "write", "seq": "read", "rand": "read"}
#: The longest tail after the last row: rados bench prints a row every second while it drains
#: (seen: 1.07 to 1.52 s in real runs, the row of the last whole second not printed).
_TAIL_MAX_SECONDS: Final = 2.5

# Summary keys (lowercase, "(s)" removed) -> field name.
_SUMMARY_KEYS: Final = {
    "total time run": "time", "total writes made": "made_w", "total reads made": "made_r",
    "write size": "size_w", "read size": "size_r", "object size": "object_size",
    "bandwidth (mb/sec)": "bw", "stddev bandwidth": "bw_stddev",
    "max bandwidth (mb/sec)": "bw_max", "min bandwidth (mb/sec)": "bw_min",
    "average iops": "iops", "stddev iops": "iops_stddev", "max iops": "iops_max",
    "min iops": "iops_min", "average latency": "lat_mean", "stddev latency": "lat_stddev",
    "max latency": "lat_max", "min latency": "lat_min",
}
# Summary field -> (metric, multiplier, is a latency).
_SUMMARY_METRICS: Final = (
    ("bw", "bandwidth_bytes", MIB, False), ("bw_stddev", "bandwidth_stddev_bytes", MIB, False),
    ("bw_max", "bandwidth_max_bytes", MIB, False), ("bw_min", "bandwidth_min_bytes", MIB, False),
    ("iops_stddev", "iops_stddev", 1.0, False), ("iops_max", "iops_max", 1.0, False),
    ("iops_min", "iops_min", 1.0, False), ("lat_mean", "latency_mean_seconds", 1.0, True),
    ("lat_stddev", "latency_stddev_seconds", 1.0, True),
    ("lat_max", "latency_max_seconds", 1.0, True), ("lat_min", "latency_min_seconds", 1.0, True),
)


def parse_command(line: str) -> tuple[str | None, str | None] | None:
    """(pool, mode) of a ``rados ... bench [opts] SECS MODE`` command line, None if the line
    is not one (HTML markup around it, a blog's highlighted code, is left out)."""
    tokens = (re.sub(r"<[^>]*>", " ", line) if "<" in line else line).split()
    try:
        i_rados = next(i for i, tok in enumerate(tokens)
                       if tok == "rados" or tok.endswith("/rados"))
        i_bench = tokens.index("bench", i_rados + 1)
    except (StopIteration, ValueError):
        return None
    mode = None
    for j in range(i_bench + 1, len(tokens) - 1):
        if tokens[j].isdigit() and tokens[j + 1] in _MODES:
            mode = tokens[j + 1]
            break
    pool = None
    for i in range(i_rados + 1, len(tokens)):
        tok = tokens[i]
        if tok in ("-p", "--pool") and i + 1 < len(tokens):
            pool = tokens[i + 1]
        elif tok.startswith("--pool="):
            pool = tok[7:]
    if pool is not None and (not pool or pool.startswith("<")):
        pool = None  # a syntax line like "rados bench -p <pool_name> ..."
    return pool, mode


class RadosBenchParser(Parser):
    name: ClassVar[str] = "rados-bench"
    tool: ClassVar[str] = "rados_bench"
    aliases: ClassVar[tuple[str, ...]] = ("rados",)
    description: ClassVar[str] = "Ceph rados bench write/seq/rand per-second table and summary"
    stamps_own_lines: ClassVar[bool] = True

    def __init__(self, host: str = "-", source: str = "-", *, mode: str | None = None,
                 pool: str | None = None) -> None:
        super().__init__(host, source)
        self._kw_op = _MODES.get(mode) if mode else None
        self._kw_pool = pool
        self._clock = ZoneGuess()
        #: Runs in this stream (a report may paste several): the 2nd on get a ``run`` label.
        self._run_no = 0
        self._has_data = True
        self._new_run(None, None)

    def _new_run(self, pool: str | None, mode: str | None) -> None:
        if self._has_data:
            self._run_no += 1
        self._job = self._kw_pool or pool or "rados"
        self._op: str | None = self._kw_op or (_MODES[mode] if mode else None)
        self._write_intro = False
        self._in_table = False
        #: Rows or a summary were seen in this run.
        self._has_data = False
        #: The summary of this run was emitted.
        self._done = False
        #: (sec, finished, avg lat) of the previous row.
        self._prev: tuple[int, int, float | None] | None = None
        #: (sec, finished) of the last row where finished changed (rados bench's previous_writes).
        self._change: tuple[int, int] | None = None
        #: Unix time of the tool's second 0, once a stamp was seen.
        self._base: float | None = None
        self._stamp: float | None = None
        self._summary: dict[str, float] | None = None

    def _start_run(self, pool: str | None, mode: str | None, t: float | None) -> list[Sample]:
        """A new run begins: emit what is left of the previous one's summary, then reset."""
        pending = self._emit_summary(t) if self._summary else []
        self._new_run(pool, mode)
        return pending

    def _labels(self, op: str | None, measure: str | None = None) -> dict[str, str]:
        labels = {"job": self._job}
        if op is not None:
            labels["op"] = op
        if measure is not None:
            labels["measure"] = measure
        if self._run_no > 1:
            labels["run"] = str(self._run_no)
        return labels

    @classmethod
    def detect(cls, head: str) -> int:
        if re.search(r"^\s*sec\s+Cur ops\s+started\s+finished\s+avg MB/s", head, re.MULTILINE):
            return 90
        if (re.search(r"^\s*Total (?:writes|reads) made:", head, re.MULTILINE)
                and "Bandwidth (MB/sec):" in head):
            return 80
        if re.search(r"^\s*Maintaining \d+ concurrent writes of \d+ bytes", head, re.MULTILINE):
            return 60
        return 0

    # --- lines ----------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        s = line.strip()
        if not s:
            return None
        if s[0].isdigit() and len(s) >= 19 and s[4] == "-":
            m = STAMP.match(s)
            if m is not None:
                stamp = self._clock.epoch(m, t)
                s = s[m.end():].strip()
                if stamp is not None:
                    self._stamp = stamp
                if not s or s.startswith("min lat:"):
                    return None
        if s[0].isdigit():
            return self._row(s, t)
        if self._summary is not None or s.startswith("Total time run"):
            done = self._summary_line(s, t)
            if done is None or isinstance(done, list):
                return done
        if s.startswith("sec") and _HEADER.match(s):
            out = self._start_run(None, None, t) if self._done or self._summary else None
            self._in_table = True
            if self._op is None:
                # No "Maintaining ... writes" line before the table: a seq or rand run.
                self._op = "write" if self._write_intro else "read"
            return out
        if s.startswith("Maintaining"):
            if _WRITE_INTRO.match(s) is None:
                self.unknown()
                return None
            out = self._start_run(None, None, t) if self._has_data else None
            self._write_intro = True
            self._op = self._kw_op or "write"
            return out
        if s.startswith("hints ="):
            if self._has_data or self._write_intro:
                return self._start_run(None, None, t)
            return None
        if "rados" in s and "bench" in s:
            cmd = parse_command(s)
            if cmd is not None:
                return self._start_run(*cmd, t)
        if s.startswith("Object prefix:"):
            return None
        self.unknown()
        return None

    def _row(self, s: str, t: float | None) -> list[Sample] | None:
        m = _ROW.match(s)
        if m is None or not self._in_table:
            self.unknown()
            return None
        sec, cur_ops, _started, finished = (int(m.group(i)) for i in range(1, 5))
        pending: list[Sample] = []
        if self._prev is not None and sec <= self._prev[0]:
            if sec != 0:
                self.warn("rados bench row out of order (second did not increase)", s)
                return None
            # Second 0 again without a new header: a new run of the same job and operation.
            job, op = self._job, self._op
            pending = self._start_run(None, None, t)
            self._job, self._op, self._in_table = job, op, True
        self._has_data = True
        avg_lat = parse_float(m.group(8))
        if self._stamp is not None:
            self._base = self._stamp - sec
            self._stamp = None
        prev, self._prev = self._prev, (sec, finished, avg_lat)
        if sec == 0:
            self._change = (0, finished)
            return pending or None
        when = self._base + sec if self._base is not None else t
        elapsed = float(sec)
        op = self._op or "read"
        labels = self._labels(op)
        out = pending
        out.append(self.sample("ops_in_flight", float(cur_ops), self._labels(None), when,
                               elapsed=elapsed))
        if self._change is not None and finished >= self._change[1] and sec > self._change[0]:
            c_sec, c_fin = self._change
            iops = (finished - c_fin) / (sec - c_sec) if finished != c_fin else 0.0
            out.append(self.sample("iops", iops, labels, when, elapsed=elapsed))
        if self._change is None or finished != self._change[1]:
            self._change = (sec, finished)
        cur_bw = parse_float(m.group(6))
        if cur_bw is not None and cur_bw >= 0:
            out.append(self.sample("bandwidth_bytes", cur_bw * MIB, labels, when, elapsed=elapsed))
        last_lat = m.group(7)
        if last_lat != "-":
            value = parse_float(last_lat)
            if value is None:
                self.warn("rados bench last lat is not a number", s)
            elif finished > 0:
                out.append(self.sample("latency_last_seconds", value, labels, when,
                                       elapsed=elapsed))
        if avg_lat is not None and finished > 0:
            lat_labels = self._labels(op, "lat")
            if prev is not None and prev[2] is not None and finished > prev[1]:
                mean = (avg_lat * finished - prev[2] * prev[1]) / (finished - prev[1])
                if mean > 0:
                    out.append(self.sample("latency_mean_seconds", mean, lat_labels, when,
                                           elapsed=elapsed))
            out.append(self.sample("latency_running_mean_seconds", avg_lat, lat_labels, when,
                                   elapsed=elapsed))
        return out

    # --- summary --------------------------------------------------------------------------

    def _summary_line(self, s: str, t: float | None) -> list[Sample] | bool | None:
        """None or samples when the line belongs to the summary; False when it does not (never
        True)."""
        key, sep, raw = s.partition(":")
        if not sep:
            m = _AVG_IOPS_NO_COLON.match(s)  # "Average IOPS          5" (seq mode, some versions)
            if m is None:
                return False
            key, raw = m.group(1), m.group(2)
        field = _SUMMARY_KEYS.get(key.strip().lower().replace("(s)", "").strip())
        if field is None:
            return False
        pending: list[Sample] = []
        if field == "time":
            if self._summary:
                pending = self._emit_summary(t)
            self._summary = {}
            self._has_data = True
        value = parse_float(raw.strip())
        if value is None or value < 0:
            self.warn(f"rados bench summary value is not a number ({key.strip()})", s)
        elif self._summary is not None:
            self._summary[field] = value
        if field == "lat_min":
            pending.extend(self._emit_summary(t))
        return pending or None

    def _emit_summary(self, t: float | None) -> list[Sample]:
        summary, self._summary = self._summary, None
        self._in_table = False
        self._done = True
        if not summary:
            return []
        if "made_w" in summary or "size_w" in summary:
            op = "write"
        elif "made_r" in summary or "size_r" in summary:
            op = "read"
        else:
            op = self._op or "read"
        run_time = summary.get("time")
        when = self._base + run_time if self._base is not None and run_time else t
        if when is None and run_time is None and self._prev is not None:
            run_time = float(self._prev[0])
        labels = self._labels(op)
        lat_labels = self._labels(op, "lat")
        made = summary.get("made_w", summary.get("made_r"))
        out = self._tail(summary, made, run_time, when, labels)
        if made is not None and run_time:
            # "Average IOPS" is printed truncated to an integer: made / time is the exact rate.
            out.append(self.sample("iops", made / run_time, labels, when, kind=SUMMARY,
                                   elapsed=run_time))
        elif "iops" in summary:
            out.append(self.sample("iops", summary["iops"], labels, when, kind=SUMMARY,
                                   elapsed=run_time))
        for field, metric, mult, is_lat in _SUMMARY_METRICS:
            if field in summary:
                out.append(self.sample(metric, summary[field] * mult,
                                       lat_labels if is_lat else labels, when, kind=SUMMARY,
                                       elapsed=run_time))
        if when is None and run_time is None:
            return []  # nothing to place the figures with (no clock, no run length)
        return out

    def _tail(self, summary: dict[str, float], made: float | None, run_time: float | None,
              when: float | None, labels: dict[str, str]) -> list[Sample]:
        """The partial last interval: the operations that completed after the last row (the
        in-flight ones drained once the time was up, or a seq/rand run that ran out of objects),
        over the seconds from that row to ``Total time run``. rados bench prints no row for it;
        its figures follow from the summary and the last row."""
        if self._prev is None or made is None or not run_time:
            return []
        sec, finished = self._prev[0], self._prev[1]
        span = run_time - sec
        if made <= finished or not 0 < span <= _TAIL_MAX_SECONDS:
            return []  # (a longer gap: rows are missing from the text, the tail is unknown)
        size = summary.get("size_w", summary.get("size_r"))
        ops = made - finished
        span = round(span, 9)
        out = [self.sample("iops", ops / span, labels, when, elapsed=run_time, duration=span)]
        if size is not None and size > 0:
            out.append(self.sample("bandwidth_bytes", ops * size / span, labels, when,
                                   elapsed=run_time, duration=span))
        return out

    def flush(self) -> list[Sample] | None:
        if self._summary:
            return self._emit_summary(None)
        return None

