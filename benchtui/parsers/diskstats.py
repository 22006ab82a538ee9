"""``/proc/diskstats`` snapshots, the fallback disk monitor where sysstat is missing.

The capture is what a sampler writes once a second: a marker line ``--- <unix epoch seconds>``
then the raw ``/proc/diskstats`` lines::

    --- 1795318131.250
     254       0 vda 150618 9391 3642002 8415 12625 14326 1752664 5216 0 6904 14876 4237 58 ...

Snapshots without markers are accepted too: a new snapshot starts when a device repeats;
its time is then the ``t`` its first line came with (Δt from those times; from the snapshot
count x ``interval`` when they are missing or do not advance). ``elapsed`` is the time since
the first marker, or for unmarked snapshots (snapshot index - 1) x ``interval`` (1 s by
default): the first snapshot is the baseline at 0.

A line is ``major minor name`` and 11 counters (kernels before 4.18), 15 (4.18+: discards) or
17 (5.5+: flushes): reads completed, reads merged, sectors read, ms reading, writes completed,
writes merged, sectors written, ms writing, I/Os in flight, ms doing I/O, weighted ms doing
I/O, then discards completed, merged, sectors, ms, then flushes completed, ms. From the
deltas between two snapshots of a device come the numbers ``iostat -x`` prints:

* ``disk_iops{op=read|write|discard|flush}`` = Δcompleted / Δt
* ``disk_bandwidth_bytes{op=read|write|discard}`` = Δsectors x 512 / Δt
* ``disk_merged_iops{op=read|write|discard}`` = Δmerged / Δt
* ``disk_await_seconds{op}`` = Δms / Δcompleted (0 when nothing completed, as iostat prints)
* ``disk_request_size_bytes{op=read|write|discard}`` = Δsectors x 512 / Δcompleted (or 0)
* ``disk_queue_depth`` = Δweighted ms / Δt in ms
* ``disk_util_ratio`` = Δms doing I/O / Δt in ms, capped at 1

Samples are emitted per device line, as soon as it arrives, with ``t`` = the snapshot's time.
The first snapshot of a device is its baseline (no samples). Devices whose counters are all
zero (loop, ram and zram devices never used; iostat hides them too) give no samples. A
counter that goes backwards (wrap, device re-created) makes that snapshot a new baseline.
Partitions are devices like any other here.
"""

from __future__ import annotations

import math
import re
from typing import ClassVar

from benchtui.model.sample import INTERVAL, Sample
from benchtui.parsers._disk_common import (
    AWAIT,
    BANDWIDTH,
    IOPS,
    MERGED,
    QUEUE,
    REQ_SIZE,
    SECTOR,
    UTIL,
)
from benchtui.parsers.base import Parser

#: (op, completed, merged, sectors, ms) indexes into the counters; -1 = not in /proc/diskstats.
_OPS = (
    ("read", 0, 1, 2, 3),
    ("write", 4, 5, 6, 7),
    ("discard", 11, 12, 13, 14),
    ("flush", 15, -1, -1, 16),
)
_IO_MS = 9
_WEIGHTED_MS = 10
_MIN_COUNTERS = 11
_MAX_COUNTERS = 17


class _Device:
    """The last counters of one device and the label dicts its samples use."""

    __slots__ = ("counters", "labels", "snapshot", "when")

    def __init__(self, name: str) -> None:
        self.counters: list[int] = []
        self.when: float | None = None
        self.snapshot = 0
        self.labels = {op: {"device": name, "op": op} for op, *_ in _OPS}
        self.labels[""] = {"device": name}


class DiskstatsParser(Parser):
    """/proc/diskstats snapshots (with or without ``--- <epoch>`` markers) -> iostat -x figures."""

    name: ClassVar[str] = "diskstats"
    tool: ClassVar[str] = "diskstats"
    description: ClassVar[str] = (
        "/proc/diskstats snapshots ('--- <epoch>' markers) turned into iostat -x figures"
    )

    def __init__(self, host: str = "-", source: str = "-", *, interval: float = 1.0) -> None:
        super().__init__(host, source)
        self.interval = interval if interval > 0 else 1.0
        self._devices: dict[str, _Device] = {}
        self._snapshot = 0
        self._snapshot_t: float | None = None
        self._first_t: float | None = None
        self._in_snapshot: set[str] = set()
        self._marked = False  # the current snapshot began with a marker

    def _new_snapshot(self, when: float | None, marked: bool) -> None:
        self._snapshot += 1
        self._snapshot_t = when
        if marked and self._first_t is None:
            self._first_t = when
        self._in_snapshot.clear()
        self._marked = marked

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if line.startswith("---"):
            text = line[3:].strip()
            try:
                when = float(text)
            except ValueError:
                self.unknown()
                return None
            if not math.isfinite(when):
                self.warn("bad snapshot marker", line)
                return None
            self._new_snapshot(when, True)
            return None
        parts = line.split()
        if len(parts) < 3 + _MIN_COUNTERS or not parts[0].isdigit() or not parts[1].isdigit():
            if parts:
                self.unknown()
            return None
        try:
            counters = [int(p) for p in parts[3:3 + _MAX_COUNTERS]]
        except ValueError:
            self.unknown()
            return None
        name = parts[2]
        if self._snapshot == 0 or name in self._in_snapshot:
            if self._marked and name in self._in_snapshot:
                self.warn(f"device {name} twice in one snapshot", line)
                return None
            self._new_snapshot(t, False)
        self._in_snapshot.add(name)
        return self._device_line(name, counters, line)

    def _device_line(self, name: str, counters: list[int], line: str) -> list[Sample] | None:
        dev = self._devices.get(name)
        if dev is None:
            dev = self._devices[name] = _Device(name)
        prev, prev_when, prev_snapshot = dev.counters, dev.when, dev.snapshot
        when = self._snapshot_t
        dev.counters, dev.when, dev.snapshot = counters, when, self._snapshot
        if not prev or not any(counters):
            return None
        if when is not None and prev_when is not None:
            dt = when - prev_when
            if dt <= 0 and not self._marked:  # lines received together: count snapshots
                dt = (self._snapshot - prev_snapshot) * self.interval
        else:
            dt = (self._snapshot - prev_snapshot) * self.interval
        if dt <= 0:
            self.warn(f"snapshot time did not advance for {name}: new baseline", line)
            return None
        n = min(len(counters), len(prev))
        delta = [counters[i] - prev[i] for i in range(n)]
        if any(d < 0 for i, d in enumerate(delta) if i != 8):  # in-flight may go down
            self.warn(f"counters of {name} went backwards (wrap or reset): new baseline", line)
            return None
        if self._marked and when is not None and self._first_t is not None:
            elapsed = when - self._first_t
        else:
            elapsed = (self._snapshot - 1) * self.interval
        return self._samples(dev, delta, dt, when, elapsed)

    def _samples(self, dev: _Device, delta: list[int], dt: float, when: float | None,
                 elapsed: float) -> list[Sample]:
        out: list[Sample] = []
        tool, host, labels = self.tool, self.host, dev.labels

        def add(metric: str, value: float, key: str) -> None:
            out.append(Sample(when, tool, INTERVAL, metric, value, dict(labels[key]), host,
                              elapsed))

        n = len(delta)
        for op, done_i, merged_i, sectors_i, ms_i in _OPS:
            if ms_i >= n:
                continue
            done = delta[done_i]
            add(IOPS, done / dt, op)
            if sectors_i >= 0:
                add(BANDWIDTH, delta[sectors_i] * SECTOR / dt, op)
                add(MERGED, delta[merged_i] / dt, op)
            add(AWAIT, delta[ms_i] / done / 1000.0 if done else 0.0, op)
            if sectors_i >= 0:
                add(REQ_SIZE, delta[sectors_i] * SECTOR / done if done else 0.0, op)
        dt_ms = dt * 1000.0
        add(QUEUE, delta[_WEIGHTED_MS] / dt_ms, "")
        add(UTIL, min(1.0, delta[_IO_MS] / dt_ms), "")
        return out

    _DETECT_LINE = re.compile(
        r"^[ \t]*\d+[ \t]+\d+[ \t]+[A-Za-z][\w.:-]*(?:[ \t]+\d+){11,17}[ \t]*$", re.MULTILINE
    )
    _DETECT_MARK = re.compile(r"^---[ \t]+\d{9,}(?:\.\d*)?[ \t]*$", re.MULTILINE)

    @classmethod
    def detect(cls, head: str) -> int:
        found = 0
        for _ in cls._DETECT_LINE.finditer(head):
            found += 1
            if found == 2:
                break
        if not found:
            return 0
        if cls._DETECT_MARK.search(head):
            return 90
        return 75 if found >= 2 else 40
