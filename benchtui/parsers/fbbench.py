"""fastblock's ``fbbench`` (an SPDK application) output.

What is parsed (see fastblock's ``tools/fbbench.cc`` and ``tools/fbbench.h``):

- the command line (``./fbbench -o ADDR -t PORT -S 4096 -k 20 -m 0x8 -T write -Q 8``) when it
  is in the text: ``-T`` gives the operation (``write``, or ``rpc``: an RPC round trip with no
  storage I/O; fbbench's default when ``-T`` is absent), ``-S`` the I/O size in bytes;
- the per-second SPDK log line ``[2023-08-29 14:57:12.138883] .../fbbench.cc:  66:print_stats:
  *NOTICE*: last second processed: 86153``: the operations completed since the previous one.
  A 1-second SPDK poller prints it; its count is the run's elapsed seconds;
- ``ops is: 89182, average latency is 11.213025us``: ``ops`` is the total completed divided by
  the elapsed seconds (integer division), and the "average latency" is NOT measured: fbbench
  prints 1e6 / ops, which is the mean latency only at queue depth 1 (at QD 8 it prints 3.3 us
  while the histogram's median is 26 us);
- ``latency histogram: min:10.000000us 10.000000%:10.727619us 50.000000%:... 99.900000%:...
  max:10163.000000us``: min and max measured latencies, and the 10/50/90/95/99/99.9 percentiles
  of SPDK's latency histogram (each the upper edge of the histogram bucket where the cumulative
  count reaches the percentile). There is no mean in it. All figures are in microseconds.

Samples (labels ``job`` = ``fbbench``, ``op`` = ``write``/``rpc``, or ``total`` when the command
line was not seen and no ``op`` keyword was given; ``run="2"``... for the second and later runs
of a stream holding several):

- interval ``iops`` = the per-second count (the poller period is taken as exactly 1 s, as fbbench
  does), and for ``write`` with a known ``-S``, ``bandwidth_bytes`` = count x io_size;
- summary ``iops`` (``ops is``), ``latency_mean_seconds{measure=ops_derived}`` (the printed
  "average latency"), ``latency_seconds{measure=lat,quantile}``, ``latency_min_seconds`` and
  ``latency_max_seconds`` (``measure=lat``).

Time: the SPDK log prefix is the tool's clock (local time without a zone, see ``_wallclock``);
the summary lines carry none and take the time of the last per-second line (they are printed by
the same poller call). ``elapsed`` is the number of per-second lines so far.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import SUMMARY, Sample, quantile_label
from benchtui.model.units import parse_duration, parse_float
from benchtui.parsers._wallclock import STAMP, ZoneGuess
from benchtui.parsers.base import Parser

_PER_SECOND: Final = "last second processed:"
_OPS = re.compile(r"^ops is:\s*(-?\d{1,18}),\s*average latency is\s*(\S+?)(us|ms|ns|s)?\s*$")
_HIST_ITEM = re.compile(r"(min|max|\d+(?:\.\d+)?%):\s*([0-9.eE+-]+)(us|ms|ns|s)\b")
_CMD = re.compile(r"(?:^|[\s/])fbbench\s+(-.*)$")
#: fbbench's getopt string is "E:f:I:o:t:S:T:k:Q:"; SPDK's own options with a value too.
_OPTS_WITH_VALUE: Final = frozenset("EfIotSTkQcmrsinpBAWLe")


def parse_command(args: str) -> dict[str, str]:
    """fbbench's single-letter options (``-T write`` or ``-Twrite``) -> {letter: value}."""
    found: dict[str, str] = {}
    tokens = args.split()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if len(tok) >= 2 and tok[0] == "-" and tok[1] != "-":
            letter = tok[1]
            if len(tok) > 2:
                found[letter] = tok[2:]
            elif letter in _OPTS_WITH_VALUE and i + 1 < len(tokens):
                found[letter] = tokens[i + 1]
                i += 1
        i += 1
    return found


class FbbenchParser(Parser):
    name: ClassVar[str] = "fbbench"
    tool: ClassVar[str] = "fbbench"
    description: ClassVar[str] = "fastblock fbbench per-second counts, ops and latency histogram"
    stamps_own_lines: ClassVar[bool] = True

    def __init__(self, host: str = "-", source: str = "-", *, op: str | None = None,
                 io_size: int | None = None) -> None:
        super().__init__(host, source)
        self._kw_op = op
        self._kw_io_size = io_size
        self._clock = ZoneGuess()
        #: Runs in this stream (a report may paste several): the 2nd on get a ``run`` label.
        self._run_no = 0
        self._has_data = True
        self._new_run(None, None)

    def _new_run(self, op: str | None, io_size: int | None) -> None:
        if self._has_data:
            self._run_no += 1
        self._op = self._kw_op or op or "total"
        self._io_size = self._kw_io_size or io_size
        self._seconds = 0
        self._last_t: float | None = None
        self._has_data = False
        self._run_length: float | None = None

    def _labels(self, measure: str | None = None) -> dict[str, str]:
        labels = {"job": "fbbench", "op": self._op}
        if measure is not None:
            labels["measure"] = measure
        if self._run_no > 1:
            labels["run"] = str(self._run_no)
        return labels

    @classmethod
    def detect(cls, head: str) -> int:
        if re.search(r"print_stats: \*NOTICE\*: last second processed: \d+", head):
            return 90
        if re.search(r"^ops is: -?\d+, average latency is ", head, re.MULTILINE):
            return 85
        if re.search(r"^latency histogram: min:[0-9.]+us ", head, re.MULTILINE):
            return 70
        return 0

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if _PER_SECOND in line:
            return self._per_second(line, t)
        s = line.strip()
        if s.startswith("ops is:"):
            return self._ops(s, t)
        if s.startswith("latency histogram:"):
            return self._histogram(s, t)
        if "fbbench" in s:
            m = _CMD.search(s)
            if m is not None:
                self._command(m.group(1))
                return None
        if "Starting SPDK" in s:
            if self._has_data:
                self._new_run(self._op if self._op != "total" else None, self._io_size)
            return None
        self.unknown()
        return None

    def _command(self, args: str) -> None:
        opts = parse_command(args)
        kind = opts.get("T")
        # fbbench.cc: "rpc" selects the RPC bench; any other -T value selects write; no -T: rpc.
        op = "rpc" if kind is None or kind == "rpc" else "write"
        size = opts.get("S")
        io_size = int(size) if size and size.isdigit() and int(size) > 0 else None
        self._new_run(op, io_size)
        seconds = opts.get("k")
        if seconds and seconds.isdigit() and int(seconds) > 0:
            self._run_length = float(seconds)

    def _when(self, line: str, t: float | None) -> float | None:
        start = line.find("[")
        if 0 <= start < 4:
            m = STAMP.match(line, start + 1)
            if m is not None:
                return self._clock.epoch(m, t)
        return t

    def _per_second(self, line: str, t: float | None) -> list[Sample] | None:
        tail = line[line.index(_PER_SECOND) + len(_PER_SECOND):].strip()
        if not tail.lstrip("-").isdigit() or len(tail) > 18:
            self.warn("fbbench per-second count is not a number", line)
            return None
        count = int(tail)
        if count < 0:
            self.warn("fbbench per-second count is negative", line)
            return None
        self._seconds += 1
        self._has_data = True
        when = self._when(line, t)
        self._last_t = when
        elapsed = float(self._seconds)
        labels = self._labels()
        out = [self.sample("iops", float(count), labels, when, elapsed=elapsed)]
        if self._op == "write" and self._io_size:
            out.append(self.sample("bandwidth_bytes", float(count * self._io_size), labels, when,
                                   elapsed=elapsed))
        return out

    def _summary_time(self, t: float | None) -> tuple[float | None, float]:
        when = self._last_t if self._last_t is not None else t
        elapsed = float(self._seconds) if self._seconds else (self._run_length or 0.0)
        return when, elapsed

    def _ops(self, s: str, t: float | None) -> list[Sample] | None:
        m = _OPS.match(s)
        if m is None:
            self.warn("fbbench ops line not understood", s)
            return None
        self._has_data = True
        when, elapsed = self._summary_time(t)
        labels = self._labels()
        out = [self.sample("iops", float(int(m.group(1))), labels, when, kind=SUMMARY,
                           elapsed=elapsed)]
        latency = parse_duration(m.group(2), m.group(3) or "us")
        if latency is not None and latency > 0:
            out.append(self.sample("latency_mean_seconds", latency,
                                   self._labels("ops_derived"), when, kind=SUMMARY,
                                   elapsed=elapsed))
        return out

    def _histogram(self, s: str, t: float | None) -> list[Sample] | None:
        items = _HIST_ITEM.findall(s)
        if not items:
            self.warn("fbbench latency histogram line not understood", s)
            return None
        self._has_data = True
        when, elapsed = self._summary_time(t)
        labels = self._labels("lat")
        out: list[Sample] = []
        for key, number, unit in items:
            value = parse_duration(number, unit)
            if value is None or value < 0:
                self.warn(f"fbbench latency {key} is not a number", s)
                continue
            if key == "min":
                out.append(self.sample("latency_min_seconds", value, labels, when, kind=SUMMARY,
                                       elapsed=elapsed))
            elif key == "max":
                out.append(self.sample("latency_max_seconds", value, labels, when, kind=SUMMARY,
                                       elapsed=elapsed))
            else:
                percent = parse_float(key[:-1])
                if percent is None or not 0 <= percent <= 100:
                    self.warn(f"fbbench latency percentile {key} out of range", s)
                    continue
                out.append(self.sample("latency_seconds", value,
                                       {**labels, "quantile": quantile_label(key[:-1])}, when,
                                       kind=SUMMARY, elapsed=elapsed))
        return out
