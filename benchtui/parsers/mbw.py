"""mbw (memory bandwidth benchmark) output, mbw 1.2.x.

One line per run of each method, then an ``AVG`` line per method (unless ``-a``)::

    Long uses 8 bytes. Allocating 2*67108864 elements = 1073741824 bytes of memory.
    0	Method: MEMCPY	Elapsed: 0.07964	MiB: 512.00000	Copy: 6429.172 MiB/s
    AVG	Method: MEMCPY	Elapsed: 0.06756	MiB: 512.00000	Copy: 7578.348 MiB/s

(the columns are tab-separated; reports that expanded the tabs to spaces parse the same).

Samples: ``mem_bandwidth_bytes{method}`` (MEMCPY, DUMB, MCBLOCK), the ``Copy`` rate in bytes
per second (MiB = 2**20). Numbered runs are kind ``interval``, ``AVG`` lines kind ``summary``.
mbw has no clock: ``t`` is the time the line was received; ``elapsed`` is the sum of the
``Elapsed`` column of the runs so far in this mbw invocation (the copy time only, without
allocation and set-up), so the ``AVG`` line of a method gets the time its runs ended. The
``Long uses 8 bytes`` header starts a new invocation (the count restarts).
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.model.units import parse_bytes, parse_float
from benchtui.parsers.base import Parser

_LINE: Final = re.compile(
    r"^\s*(?P<run>\d+|AVG)\s+Method:\s+(?P<method>\w+)\s+Elapsed:\s+(?P<elapsed>[\d.]+)"
    r"\s+MiB:\s+[\d.]+\s+Copy:\s+(?P<rate>[\d.]+\s*[KMGT]?i?B)/s\s*$")
_DETECT: Final = re.compile(
    r"^\s*(?:\d+|AVG)\s+Method:\s+(?:MEMCPY|DUMB|MCBLOCK)\s+Elapsed:\s+[\d.]+\s+MiB:",
    re.MULTILINE)


class MbwParser(Parser):
    """mbw's per-run and average lines."""

    name: ClassVar[str] = "mbw"
    tool: ClassVar[str] = "mbw"
    description: ClassVar[str] = "mbw memory bandwidth (per-run and AVG lines)"

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._elapsed = 0.0

    @classmethod
    def detect(cls, head: str) -> int:
        return 90 if _DETECT.search(head) is not None else 0

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if "Method:" not in line:
            if line.startswith("Long uses"):
                self._elapsed = 0.0
            else:
                self.unknown()
            return None
        m = _LINE.match(line)
        if m is None:
            self.warn("malformed mbw line", line)
            return None
        rate = parse_bytes(m.group("rate"))
        took = parse_float(m.group("elapsed"))
        if rate is None or took is None or took < 0:
            self.warn("unreadable numbers in mbw line", line)
            return None
        average = m.group("run") == "AVG"
        if not average:
            self._elapsed += took
        return [self.sample("mem_bandwidth_bytes", rate, {"method": m.group("method")}, t,
                            kind=SUMMARY if average else INTERVAL, elapsed=self._elapsed)]
