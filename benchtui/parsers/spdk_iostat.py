"""SPDK's ``scripts/iostat.py``: bdev I/O rates and host CPU shares of an SPDK application.

Each iteration prints a ``cpu_stat:`` block (a header and one line of percentages, "2.20%"),
then a bdev table, each followed by a blank line::

    cpu_stat:  user_stat  nice_stat  system_stat  iowait_stat  steal_stat  idle_stat
               2.20%      0.00%      0.46%        0.00%        0.00%       97.34%

    Device   tps       KB_read/s  KB_wrtn/s  KB_dscd/s  KB_read  KB_wrtn    KB_dscd
    test1n1  52700.10  4878.18    638182.60  0.00       4904.00  641560.00  0.00

``-m`` prints ``MB_*`` columns instead. The script's KB is 1024 bytes (sectors / 2) and its MB
1024² bytes. ``tps`` counts reads, writes and unmaps: it becomes ``disk_iops{op=total}``;
``KB_read/s``, ``KB_wrtn/s``, ``KB_dscd/s`` become ``disk_bandwidth_bytes`` with
``op=read|write|discard``; the interval totals (``KB_read`` ...) are not emitted. ``cpu_stat``
becomes ``cpu_ratio{mode}`` (the script's ``system_stat`` includes irq and softirq time).

The output has no clock: samples carry the ``t`` the line came with and ``elapsed`` = the
iteration number x ``interval`` (the script's ``-i``, 1 s by default here). An iteration
starts at ``cpu_stat:`` (printed first), or at a bdev table when the current iteration
already has one. The script's first iteration covers the time since the application started
(like iostat's since-boot report): ``skip_first_report=True`` drops it; ``parse`` of a file
keeps everything.

Told apart from sysstat's iostat by ``cpu_stat:`` and the capital ``KB_`` columns; a table
printed with ``-m`` looks like ``iostat -d -m`` and is only claimed on detection when a
``cpu_stat:`` block is present.
"""

from __future__ import annotations

import re
from typing import ClassVar

from benchtui.model.sample import Sample
from benchtui.parsers._disk_common import BANDWIDTH, CPU, IOPS, KIB, MIB, to_number
from benchtui.parsers.base import Parser

#: Table column -> (metric, op, scale).
_COLUMNS: dict[str, tuple[str, str, float]] = {
    "tps": (IOPS, "total", 1.0),
    "KB_read/s": (BANDWIDTH, "read", KIB),
    "KB_wrtn/s": (BANDWIDTH, "write", KIB),
    "KB_dscd/s": (BANDWIDTH, "discard", KIB),
    "MB_read/s": (BANDWIDTH, "read", MIB),
    "MB_wrtn/s": (BANDWIDTH, "write", MIB),
    "MB_dscd/s": (BANDWIDTH, "discard", MIB),
}

_CPU_MODES = {
    "user_stat": "user", "nice_stat": "nice", "system_stat": "system",
    "iowait_stat": "iowait", "steal_stat": "steal", "idle_stat": "idle",
}


class SpdkIostatParser(Parser):
    """SPDK scripts/iostat.py bdev tables and cpu_stat blocks."""

    name: ClassVar[str] = "spdk-iostat"
    tool: ClassVar[str] = "spdk_iostat"
    description: ClassVar[str] = "SPDK scripts/iostat.py: bdev tps and KB/s tables, cpu_stat"

    def __init__(self, host: str = "-", source: str = "-", *,
                 skip_first_report: bool = False, interval: float = 1.0) -> None:
        super().__init__(host, source)
        self.skip_first_report = skip_first_report
        self.interval = interval if interval > 0 else 1.0
        # (field index, metric, op, scale) of the current table, None outside a table.
        self._table: list[tuple[int, str, str, float]] | None = None
        self._ncols = 0
        self._cpu_modes: list[str] | None = None
        self._report = 0
        self._has_table = False
        self._has_cpu = False
        self._devices: set[str] = set()

    def _new_report(self) -> None:
        self._report += 1
        self._has_table = self._has_cpu = False
        self._devices.clear()

    @property
    def _elapsed(self) -> float:
        k = self._report - 1 if self.skip_first_report else self._report
        return k * self.interval

    @property
    def _skip(self) -> bool:
        return self.skip_first_report and self._report == 1

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        parts = line.split()
        if not parts:
            self._table = None
            self._cpu_modes = None
            return None
        first = parts[0]
        if first == "cpu_stat:":
            self._table = None
            self._new_report()
            self._has_cpu = True
            self._cpu_modes = [_CPU_MODES.get(word, "") for word in parts[1:]]
            return None
        if first == "Device" and len(parts) > 2 and parts[1] == "tps":
            self._header(parts)
            return None
        if self._cpu_modes is not None:
            modes = self._cpu_modes
            self._cpu_modes = None
            if len(parts) == len(modes) and parts[0].endswith("%"):
                return self._cpu_line(parts, modes, line, t)
        if self._table is not None and len(parts) == self._ncols:
            return self._row(parts, line, t)
        self._table = None
        self.unknown()
        return None

    def _header(self, parts: list[str]) -> None:
        columns = parts[1:]
        if not any(c in _COLUMNS for c in columns[1:]):
            self.unknown()
            return
        if self._report == 0 or self._has_table:
            self._new_report()
        self._has_table = True
        self._devices.clear()
        self._ncols = len(parts)
        self._table = [(i + 1, *_COLUMNS[c]) for i, c in enumerate(columns) if c in _COLUMNS]

    def _row(self, parts: list[str], line: str, t: float | None) -> list[Sample] | None:
        assert self._table is not None
        device = parts[0]
        if device in self._devices:  # a second table with no header in between
            self._new_report()
            self._has_table = True
        self._devices.add(device)
        out: list[Sample] = []
        elapsed = self._elapsed
        for field, metric, op, scale in self._table:
            value = to_number(parts[field])
            if value is None:
                self.warn(f"bad value {parts[field]!r} in SPDK iostat row", line)
                return None
            out.append(self.sample(metric, value * scale, {"device": device, "op": op}, t,
                                   elapsed=elapsed))
        return None if self._skip else out

    def _cpu_line(self, parts: list[str], modes: list[str], line: str,
                  t: float | None) -> list[Sample] | None:
        out: list[Sample] = []
        elapsed = self._elapsed
        for mode, text in zip(modes, parts, strict=True):
            if not mode:
                continue
            value = to_number(text)
            if value is None:
                self.warn("bad cpu_stat value", line)
                return None
            out.append(self.sample(CPU, value / 100.0, {"mode": mode}, t, elapsed=elapsed))
        return None if self._skip else out

    _DETECT_CPU = re.compile(r"^cpu_stat:\s+user_stat\s+nice_stat\s+system_stat", re.MULTILINE)
    _DETECT_KB = re.compile(r"^Device\s+tps\s+KB_read/s\s+KB_wrtn/s", re.MULTILINE)
    _DETECT_MB = re.compile(r"^Device\s+tps\s+MB_read/s\s+MB_wrtn/s", re.MULTILINE)

    @classmethod
    def detect(cls, head: str) -> int:
        has_cpu = "cpu_stat:" in head and cls._DETECT_CPU.search(head) is not None
        if "KB_read/s" in head and cls._DETECT_KB.search(head):
            return 95 if has_cpu else 85
        if has_cpu:
            return 90 if "MB_read/s" in head and cls._DETECT_MB.search(head) else 70
        return 0
