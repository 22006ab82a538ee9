"""fio's terse output (``--output-format=terse`` / ``--minimal``): one ``;``-separated line a job.

Layout (fio's HOWTO "Terse output", stat.c ``show_thread_status_terse_all``)::

    3;fio-3.33;jobname;groupid;error;<read>;<write>;<cpu, depths, latency buckets>;<disks>...

``<read>``/``<write>`` (and ``<trim>`` in versions 2, 4 and 5) are one block per direction:
total I/O (KiB), bandwidth (KiB/s), IOPS, run time (ms); slat, clat min/max/mean/stdev (usec);
20 ``percentile%=usec`` fields (``0%=0`` when unused); lat min/max/mean/stdev (usec); bw
min/max/agg%/mean/stdev (KiB/s); version 5 adds the bw sample count and IOPS min/max/mean/
stdev/samples. Version 2 has no fio version field. With ``unified_rw_reporting=mixed`` there is
a single block (labelled ``op="total"``); with ``=both`` a mixed block follows the others.
The blocks are located by their runs of 20 percentile fields, so every variant reads alike.
After the blocks: cpu usr%, sys%, ctx, majf, minf, 7 I/O depths, 10 usec and 12 msec latency
buckets, then per disk ``name;r_ios;w_ios;r_merge;w_merge;r_ticks;w_ticks;in_queue;util%``
(a ``slaves;...`` group of the same size follows a device that has slaves: skipped).

Assumptions: the percentiles are labelled ``measure="clat"``, fio's default; with
``--lat_percentiles=1`` fio puts total-latency percentiles in the same fields and the line
does not say so. A job name seen again (``numjobs`` clones, or another run pasted after) is
labelled ``name#1``, ``name#2``... (the first keeps its bare name), as nothing on the line tells
them apart. The line carries
no clock: ``t`` is the ``t`` passed in, ``elapsed`` the direction's run time.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import SUMMARY, Sample, quantile_label
from benchtui.model.units import parse_float, percent_to_ratio
from benchtui.parsers.base import Parser

_PCT_FIELDS: Final = 20
_BLOCK_V4: Final = 41  # 4 totals + 4 slat + 4 clat + 20 percentiles + 4 lat + 5 bw
_BLOCK_V5: Final = 47  # + bw samples + iops min/max/mean/stdev/samples
_TAIL: Final = 34  # cpu 5 + depths 7 + usec buckets 10 + msec buckets 12
_DISK: Final = 9
_STATS: Final = ("min", "max", "mean", "stddev")
_RE_V3 = re.compile(r"^[345];fio-\d+\.\d+[^;\n]*;[^;\n]*;\d+;-?\d+;", re.MULTILINE)
_RE_V2 = re.compile(r"^2;[^;\n]*;\d+;-?\d+;\d+;\d+;\d+;\d+;[^\n]{200,}$", re.MULTILINE)


def _num(text: str) -> float:
    """A finite number, or ValueError (the line is then skipped with a warning)."""
    value = parse_float(text)
    if value is None:
        raise ValueError(text)
    return value


class FioTerseParser(Parser):
    """fio ``--output-format=terse``, terse versions 2 to 5."""

    name: ClassVar[str] = "fio-terse"
    tool: ClassVar[str] = "fio"
    aliases: ClassVar[tuple[str, ...]] = ("fio-minimal",)
    description: ClassVar[str] = "fio --output-format=terse (--minimal) lines, terse versions 2-5"

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._names: dict[str, int] = {}
        # the line being parsed: its time, job label and the samples it produced so far
        self._t: float | None = None
        self._job = ""
        self._out: list[Sample] = []

    @classmethod
    def detect(cls, head: str) -> int:
        if _RE_V3.search(head):
            return 85
        if _RE_V2.search(head):
            return 75
        return 0

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if not line.strip():
            return None
        if len(line) < 2 or line[1] != ";" or line[0] not in "2345":
            self.unknown()
            return None
        fields = line.rstrip().split(";")
        version = int(fields[0])
        base = 4 if version == 2 else 5
        if len(fields) < base + _BLOCK_V4 + _TAIL or (version > 2 and not fields[1].startswith(
                "fio-")):
            self.unknown()
            return None
        starts = self._block_starts(fields)
        size = _BLOCK_V5 if version == 5 else _BLOCK_V4
        if not starts or any(s != base + i * size for i, s in enumerate(starts)):
            self.warn("terse line with an unexpected layout", line)
            return None
        ops = self._ops(version, len(starts))
        tail = base + len(starts) * size
        if ops is None or len(fields) < tail + _TAIL:
            self.warn("terse line with an unexpected number of directions", line)
            return None
        name = fields[base - 3]
        index = self._names.get(name, 0)
        self._names[name] = index + 1
        self._job = f"{name}#{index}" if index else name
        self._t, self._out = t, []
        longest = 0.0
        try:
            for op, start in zip(ops, starts, strict=True):
                longest = max(longest, self._block(fields, start, version, op))
            self._tail(fields, tail, longest)
        except ValueError:
            self.warn("terse line with a field that is not a number", line)
            return None
        return self._out

    @staticmethod
    def _block_starts(fields: list[str]) -> list[int]:
        """Where each direction block starts: 12 fields before its run of percentiles."""
        starts = []
        i, n = 0, len(fields)
        while i < n:
            if "%=" in fields[i]:
                j = i
                while j < n and "%=" in fields[j]:
                    j += 1
                if j - i != _PCT_FIELDS:
                    return []
                starts.append(i - 12)
                i = j
            else:
                i += 1
        return starts

    @staticmethod
    def _ops(version: int, blocks: int) -> tuple[str, ...] | None:
        if blocks == 1:
            return ("total",)  # unified_rw_reporting=mixed
        if version == 3 or blocks == 2:
            layout: tuple[str, ...] = ("read", "write")
        else:
            layout = ("read", "write", "trim")
        if blocks == len(layout):
            return layout
        if blocks == len(layout) + 1:
            return (*layout, "total")  # unified_rw_reporting=both
        return None

    def _emit(self, metric: str, value: float, labels: dict[str, str], elapsed: float) -> None:
        self._out.append(self.sample(metric, value, labels, self._t, kind=SUMMARY,
                                     elapsed=elapsed))

    def _block(self, f: list[str], o: int, version: int, op: str) -> float:
        """Samples of one direction block; returns its run time in seconds (0: unused)."""
        runtime = _num(f[o + 3])
        if runtime <= 0:
            return 0.0
        el = runtime / 1000.0
        labels = {"job": self._job, "op": op}
        self._emit("iops", _num(f[o + 2]), dict(labels), el)
        self._emit("bandwidth_bytes", _num(f[o + 1]) * 1024.0, dict(labels), el)
        for measure, at in (("slat", o + 4), ("clat", o + 8), ("lat", o + 32)):
            values = [_num(f[at + k]) for k in range(4)]
            if any(values):
                for stat, value in zip(_STATS, values, strict=True):
                    self._emit(f"latency_{stat}_seconds", value * 1e-6,
                               {**labels, "measure": measure}, el)
        for field in f[o + 12:o + 12 + _PCT_FIELDS]:
            pct, _, usec = field.partition("%=")
            if pct == "0":
                continue  # unused slot
            number = parse_float(pct)
            if number is None or not 0 < number <= 100:
                raise ValueError(pct)
            self._emit("latency_seconds", _num(usec) * 1e-6,
                       {**labels, "measure": "clat", "quantile": quantile_label(pct)}, el)
        bw = [_num(f[o + k]) * 1024.0 for k in (36, 37, 39, 40)]
        if any(bw):
            for stat, value in zip(_STATS, bw, strict=True):
                self._emit(f"bandwidth_{stat}_bytes", value, dict(labels), el)
        if version == 5:
            iops = [_num(f[o + k]) for k in (42, 43, 44, 45)]
            if any(iops):
                for stat, value in zip(_STATS, iops, strict=True):
                    self._emit(f"iops_{stat}", value, dict(labels), el)
        return el

    def _tail(self, f: list[str], o: int, el: float) -> None:
        for mode, text in (("user", f[o]), ("system", f[o + 1])):
            # fio prints both with their sign (``3.260870%``): a field without one is
            # another field moved here by a line cut short
            value = percent_to_ratio(text) if text.endswith("%") else None
            if value is None:
                raise ValueError(text)
            self._emit("cpu_ratio", value, {"job": self._job, "mode": mode}, el)
        i = o + _TAIL
        while i + _DISK <= len(f) and f[i + _DISK - 1].endswith("%"):
            device = f[i]
            if device != "slaves" and parse_float(f[i + 1]) is not None:
                util = percent_to_ratio(f[i + _DISK - 1])
                if util is None:
                    raise ValueError(f[i + _DISK - 1])
                self._emit("disk_util_ratio", util, {"device": device}, el)
            i += _DISK
