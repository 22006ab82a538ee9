"""SPDK ``spdk_nvme_perf`` output (app/spdk_nvme_perf/perf.c; examples/nvme/perf/perf.c, the
``perf`` example, before v23.09), every version from v18 (docs/tools/spdk-nvme-perf.md):

- the result table, one row per namespace and core, then ``Total``::

      ========================================================
                                                           Latency(us)
      Device Information                     :       IOPS      MiB/s    Average   min    max
      PCIE (0000:00:04.0) NSID 1 from core  0:  412345.67    1610.73     310.21 12.34 4123.45
      ========================================================
      Total                                  :  412345.67    1610.73     310.21 12.34 4123.45

  (before v20: ``MB/s``, still MiB: ``/ (1024 * 1024)``; the device name is the controller's:
  ``PCIE (0000:00:04.0) NSID 1``, ``TCP (addr:10.0.0.1 subnqn:nqn...) NSID 1``, or before v20
  the model and serial number, ``INTEL SSDPE2KX010T8 (BTLJ...) from core 0``);
- ``-L``: ``Summary latency data for NAME from core N:`` and the percentiles; ``-LL`` also
  ``Latency histogram for NAME from core N:`` and its buckets (``_spdk_perf``);
- every second, when stdout is a terminal (``script``, ``ssh -t``): ``412345 IOPS, 1610.73
  MiB/s`` rewritten in place with ``\\r`` (v20+: I/Os completed in that second, all
  namespaces), ``[warmup] ...`` during ``-a`` (then an ``ESC[2K`` erasing it), ``  1 Core(s):
  99.80% Busy`` with ``-m``.

Samples: the rows: ``summary`` ``iops``, ``bandwidth_bytes``, ``latency_mean_seconds``,
``latency_min_seconds``, ``latency_max_seconds`` (``measure="lat"``: submission to completion),
labels ``job`` = the device name as printed, ``core`` = the core number, ``op`` from the
workload (``-w``: ``read``/``write``; ``rw``/``randrw``, which perf reports as one figure, and an
unknown workload are ``total``: pass the command line's ``-w`` as ``workload``); ``Total`` is
``job="all"``. The percentiles (``latency_seconds``, ``quantile``) and the histogram
(``latency_histogram``) are ``summary`` samples of the same labels. The per-second lines are
``interval`` ``iops`` and ``bandwidth_bytes`` of ``job="all"``; warm-up lines are left out, as
perf leaves the warm-up out of its result.

``elapsed``: the per-second lines' count; the result's, the ``-t`` of the command line when it
is in the stream, else the count of per-second lines. perf prints no clock: ``t`` is the time
the line was received (``null`` in a file).
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import SUMMARY, Sample
from benchtui.parsers._spdk_perf import US, LatencyTable, number, op_of, options
from benchtui.parsers.base import Parser

MIB: Final = 1024.0 * 1024.0
_F: Final = r"(-?\d+(?:\.\d+)?)"
_HEADER: Final = re.compile(
    r"^Device Information\s*:\s*IOPS\s+(?:MiB/s|MB/s)\s+Average\s+min\s+max\s*$")
_ROW: Final = re.compile(
    rf"^(?P<name>.+?)\s+from core\s+(?P<core>\d+):\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s*$")
_TOTAL: Final = re.compile(rf"^Total\s*:\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s*$")
_PER_SECOND: Final = re.compile(
    r"^(?:\x1b\[2K)?(?P<warmup>\[warmup\] )?\s*(?P<iops>\d+) IOPS,\s+(?P<mib>\d+(?:\.\d+)?) MiB/s"
    r"(?:\s*\d+ Core\(s\):\s+\d+(?:\.\d+)?% Busy)?\s*$")
_TABLE_FOR: Final = re.compile(
    r"^(?:Summary latency data|Latency histogram) for (?P<name>.+?)\s+from core (?P<core>\d+):")
_COMMAND: Final = re.compile(r"(?:^|[\s/])(?:spdk_nvme_perf|perf)\s+-")


class SpdkNvmePerfParser(Parser):
    """SPDK spdk_nvme_perf (perf): result table, -L/-LL latency tables, per-second lines."""

    name: ClassVar[str] = "spdk-nvme-perf"
    tool: ClassVar[str] = "spdk_nvme_perf"
    aliases: ClassVar[tuple[str, ...]] = ("spdk_nvme_perf", "nvme-perf")
    description: ClassVar[str] = (
        "SPDK spdk_nvme_perf: result table, -L/-LL latency, per-second lines (v18-v26)")
    conflicts: ClassVar[tuple[str, ...]] = ("bdevperf",)

    def __init__(self, host: str = "-", source: str = "-", *,
                 workload: str | None = None) -> None:
        super().__init__(host, source)
        self._workload = workload
        self._seconds: float | None = None  # -t
        self._ticks = 0  # per-second lines (warm-up left out)
        self._rows: dict[tuple[str, str], str] = {}  # (name truncated to 43, core) -> name
        self._in_table = False
        self._latency: LatencyTable | None = None

    @classmethod
    def detect(cls, head: str) -> int:
        if re.search(r"^Device Information\s*:\s*IOPS\s+Mi?B/s\s+Average\s+min\s+max", head,
                     re.MULTILINE):
            return 95
        if re.search(r"^Initialization complete\. Launching workers\.", head, re.MULTILINE):
            return 90
        if re.search(r" from core\s+\d+:\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d\s", head):
            return 80
        if re.search(r"^(?:\[warmup\] )?\s*\d+ IOPS,\s+\d+\.\d\d MiB/s", head, re.MULTILINE):
            return 60
        return 0

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if self._latency is not None:
            if self._latency.line(line) or line.lstrip().startswith(("=====", "Range in us")):
                return None
            out = self._end_latency(t)
            return out + (self.parse_line(line, t) or [])
        s = line.strip()
        if not s:
            return None
        m = _PER_SECOND.match(s)
        if m is not None:
            return self._per_second(m, t)
        if _HEADER.match(s) is not None:
            self._in_table = True
            return None
        m = _ROW.match(s)
        if m is not None and self._in_table:
            return self._row(m, t)
        m = _TOTAL.match(s)
        if m is not None and self._in_table:
            self._in_table = False
            return self._result({"job": "all", "op": op_of(self._workload)}, m, 1, t)
        m = _TABLE_FOR.match(s)
        if m is not None:
            self._latency = LatencyTable(self._labels(m.group("name"), m.group("core")),
                                         self._elapsed())
            return None
        if _COMMAND.search(line) is not None:
            # (the DPDK EAL parameters line names the program too, with options of its own)
            opts = options(line)
            self._workload = opts.get("-w", opts.get("--io-pattern", self._workload))
            seconds = number(opts.get("-t", opts.get("--time")))
            self._seconds = seconds if seconds is not None else self._seconds
            return None
        self.unknown()
        return None

    def flush(self) -> list[Sample] | None:
        return self._end_latency(None) if self._latency is not None else None

    def _elapsed(self) -> float | None:
        if self._seconds is not None:
            return self._seconds
        return float(self._ticks) if self._ticks else None

    def _labels(self, name: str, core: str) -> dict[str, str]:
        """The row's labels; a -L/-LL title prints the name cut to 43 characters."""
        name = name.strip()
        full = self._rows.get((name[:43].rstrip(), core), name)
        return {"job": full, "core": core, "op": op_of(self._workload), "measure": "lat"}

    def _row(self, m: re.Match[str], t: float | None) -> list[Sample]:
        name = m.group("name").strip()
        self._rows[(name[:43].rstrip(), m.group("core"))] = name
        labels = {"job": name, "core": m.group("core"), "op": op_of(self._workload)}
        return self._result(labels, m, 3, t)

    def _result(self, labels: dict[str, str], m: re.Match[str], first: int,
                t: float | None) -> list[Sample]:
        iops, mibps, average, low, high = (float(m.group(first + i)) for i in range(5))
        elapsed = self._elapsed()
        out = [self.sample("iops", iops, labels, t, kind=SUMMARY, elapsed=elapsed),
               self.sample("bandwidth_bytes", mibps * MIB, labels, t, kind=SUMMARY,
                           elapsed=elapsed)]
        lat = {**labels, "measure": "lat"}
        for metric, value in (("latency_mean_seconds", average), ("latency_min_seconds", low),
                              ("latency_max_seconds", high)):
            out.append(self.sample(metric, value * US, lat, t, kind=SUMMARY, elapsed=elapsed))
        return out

    def _per_second(self, m: re.Match[str], t: float | None) -> list[Sample] | None:
        if m.group("warmup"):
            return None
        self._ticks += 1
        labels = {"job": "all", "op": op_of(self._workload)}
        elapsed = float(self._ticks)
        return [self.sample("iops", float(m.group("iops")), labels, t, elapsed=elapsed),
                self.sample("bandwidth_bytes", float(m.group("mib")) * MIB, labels, t,
                            elapsed=elapsed)]

    def _end_latency(self, t: float | None) -> list[Sample]:
        table, self._latency = self._latency, None
        return table.samples(self, t) if table is not None else []
