"""sysstat ``iostat`` text output: ``-x``, ``-d``, ``-t``, ``-k``/``-m``, ``-p``, ``-N``, ``-h``,
``-s``.

``-s`` (sysstat 12.1+'s short layout) is read like the others: ``-s -x`` gives tps, kB/s,
rqm/s, await, areq-sz, aqu-sz and %util (``op="total"`` where a column sums the directions);
``-s`` alone gives tps, kB_read/s and kB_w+d/s (writes and discards together, ``op="write"``);
with ``-h`` the device comes last.

Device columns are mapped by their header name (``Device:`` with a colon in sysstat 10.x and
older, ``Device`` since; ``-h`` puts ``Device`` last), so every sysstat version's layout works
as long as a header was seen. Lines whose header was grepped away (``iostat -x 1 | grep
nvme1n1``) are mapped by their field count (device name included):

==========  ====================================================================================
fields      layout assumed
==========  ====================================================================================
6           ``-d`` without discard (sysstat 10.x-12.0): tps kB_read/s kB_wrtn/s kB_read kB_wrtn
8           ``-d`` with discard (12.1+): tps kB_read/s kB_wrtn/s kB_dscd/s kB_read kB_wrtn kB_dscd;
            but ``-s -x`` (tps kB/s rqm/s await areq-sz aqu-sz %util) when the last field has a
            decimal point (``-d`` prints its totals as integers)
12          ``-x`` of sysstat 9.x and older: rrqm/s wrqm/s r/s w/s rsec/s wsec/s avgrq-sz avgqu-sz
            await svctm %util (sectors, that version's default; ``-k`` would print kB here)
14          ``-x`` of sysstat 10.x-11.4: rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await
            r_await w_await svctm %util (kB: ``-m`` would print MB here)
16          ``-x`` of sysstat 11.5-12.0: r/s w/s rkB/s wkB/s rrqm/s wrqm/s %rrqm %wrqm r_await
            w_await aqu-sz rareq-sz wareq-sz svctm %util
21          ``-x`` of sysstat 12.x with discard, without flush: r/s rkB/s rrqm/s %rrqm r_await
            rareq-sz w/s wkB/s wrqm/s %wrqm w_await wareq-sz d/s dkB/s drqm/s %drqm d_await
            dareq-sz aqu-sz %util
23          ``-x`` of recent sysstat 12.x (the 21 above plus f/s f_await before aqu-sz)
==========  ====================================================================================

Where a count is ambiguous, the most recent sysstat's layout and default unit (kB) is taken.
A header-less line is only taken when it is shaped like a device line of its layout (a device
name first, the values as iostat prints them: ``headerless_columns``), and a header's layout
only maps the rows of its table (up to iostat's blank line) without that check: another
program's table in the same stream (a devfreq ``trans_stat``) is never read as devices.

Reports: the ``avg-cpu:`` line and the line after it give ``cpu_ratio``; each device line
gives its samples as soon as it arrives. A report starts at a ``-t`` timestamp, at ``avg-cpu:``,
at a header already seen in the current report, at a device already seen in the current
report, or at a device line after a blank line. Without ``-y`` iostat's first report is the
average since boot: ``skip_first_report=True`` drops it (the live session knows whether it
passed ``-y``); ``parse`` of a file keeps every report.

Time: a report's ``-t`` timestamp when it has one (see ``ReportClock``: without a zone, UTC),
else the ``t`` the line came with. ``elapsed`` is always set, counted from the reports:
report k ends at k x ``interval`` (first report at ``interval``); with ``skip_first_report``
the first kept report is the one at ``interval``.

Tables of SPDK's ``scripts/iostat.py`` (header ``Device tps KB_read/s ...`` with a capital K)
are left to the ``spdk_iostat`` parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import repeat
from operator import itemgetter, mul
from typing import ClassVar

from benchtui.model.sample import INTERVAL, Sample
from benchtui.parsers._disk_common import (
    COLUMNS,
    CPU,
    CPU_MODES,
    ReportClock,
    human_value,
    looks_like_timestamp,
    to_number,
)
from benchtui.parsers.base import Parser

_X_OLD = ("rrqm/s", "wrqm/s", "r/s", "w/s")
_X12_R = ("r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz")
_X12_W = ("w/s", "wkB/s", "wrqm/s", "%wrqm", "w_await", "wareq-sz")
_X12_D = ("d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz")

#: Header-less lines: field count (device included) -> the columns after the device.
HEADERLESS: dict[int, tuple[str, ...]] = {
    6: ("tps", "kB_read/s", "kB_wrtn/s", "kB_read", "kB_wrtn"),
    8: ("tps", "kB_read/s", "kB_wrtn/s", "kB_dscd/s", "kB_read", "kB_wrtn", "kB_dscd"),
    12: (*_X_OLD, "rsec/s", "wsec/s", "avgrq-sz", "avgqu-sz", "await", "svctm", "%util"),
    14: (*_X_OLD, "rkB/s", "wkB/s", "avgrq-sz", "avgqu-sz", "await", "r_await", "w_await",
         "svctm", "%util"),
    16: ("r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "%rrqm", "%wrqm", "r_await",
         "w_await", "aqu-sz", "rareq-sz", "wareq-sz", "svctm", "%util"),
    21: (*_X12_R, *_X12_W, *_X12_D, "aqu-sz", "%util"),
    23: (*_X12_R, *_X12_W, *_X12_D, "f/s", "f_await", "aqu-sz", "%util"),
}
#: ``iostat -s -x``: same field count as ``-d`` with discard (8).
SHORT_X: tuple[str, ...] = ("tps", "kB/s", "rqm/s", "await", "areq-sz", "aqu-sz", "%util")

_BANNER = re.compile(r"^Linux\s+\S+\s+\([^)]*\)\s+(\S+)")

#: A device name as iostat prints one: a kernel name (sda, nvme0n1, dm-0, cciss/c0d0), a -N
#: device-mapper name (vg0-root) or an SPDK bdev (Nvme0n1). It starts with a letter and does
#: not end in ":" (a table's row label: devfreq's `` 528000000:``, ``free``'s ``Mem:``).
_DEVICE = re.compile(r"[A-Za-z][\w.:/+@-]*(?<!:)\Z").match
#: iostat's rates, times and sizes: ``%.2f`` (a decimal comma in some locales).
_DECIMAL = re.compile(r"\d+[.,]\d+\Z").match
#: iostat -d's totals (kB_read, kB_wrtn, kB_dscd): integers.
_INTEGER = re.compile(r"\d+\Z").match
#: A value of a headed table's row: a number, maybe with iostat -h's unit or a percent sign.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?[%BkMGTPs]?\Z").match
#: Header-less layouts: how many of the values are ``%.2f`` (the rest are integer totals).
_DECIMALS = {6: 3, 8: 4}
#: ``avg-cpu:`` headers whose plans are kept at most (a stream has one or two).
_CPU_PLANS_KEPT = 16


def _device_name(text: str) -> bool:
    return _DEVICE(text) is not None


def _numbers(parts: list[str], dev_index: int) -> bool:
    return all(_NUMBER(p) is not None for i, p in enumerate(parts) if i != dev_index)


def headerless_columns(parts: list[str]) -> tuple[str, ...] | None:
    """The columns of a device line whose header is not in the stream (``iostat -x 1 | grep
    sda``): by its field count (``HEADERLESS``), when it is shaped like one: a device name
    first, then values as iostat prints them in that layout (``-x``: every value ``%.2f``;
    ``-d``: the rates ``%.2f`` and the totals integers). Another program's table with as many
    columns (a devfreq ``trans_stat``: `` 528000000:  0  0  0  15  814526``) is not one."""
    columns = HEADERLESS.get(len(parts))
    if columns is None or _DEVICE(parts[0]) is None:
        return None
    decimals = _DECIMALS.get(len(parts))
    values = parts[1:]
    if decimals is None or (len(parts) == 8 and _DECIMAL(values[-1]) is not None):
        if all(_DECIMAL(v) is not None for v in values):
            return SHORT_X if len(parts) == 8 else columns
        return None
    if all(_DECIMAL(v) is not None for v in values[:decimals]) and \
            all(_INTEGER(v) is not None for v in values[decimals:]):
        return columns
    return None


class _Plan:
    """What one device line of one layout turns into, ready for C-speed mapping."""

    __slots__ = ("fields", "get", "labels", "metrics", "scales", "sizes")

    def __init__(self, used: list[tuple[int, str]], device: str) -> None:
        self.fields = tuple(field for field, _name in used)
        self.metrics = tuple(COLUMNS[name][0] for _field, name in used)
        self.scales = tuple(COLUMNS[name][2] for _field, name in used)
        self.sizes = tuple(COLUMNS[name][3] for _field, name in used)
        # Label dicts are shared by all the samples of a series: treat them as read-only.
        self.labels = tuple(
            {"device": device} if COLUMNS[name][1] is None
            else {"device": device, "op": str(COLUMNS[name][1])}
            for _field, name in used
        )
        fields = self.fields
        self.get: Callable[[list[str]], tuple[str, ...]] = (
            itemgetter(*fields) if len(fields) > 1 else lambda parts: (parts[fields[0]],)
        )


class _CpuPlan:
    """What the values line under one ``avg-cpu:`` header turns into: the fields of the
    modes kept and their labels (shared by all the samples of a mode: read-only)."""

    __slots__ = ("fields", "labels", "nfields")

    def __init__(self, words: tuple[str, ...]) -> None:
        modes = [CPU_MODES.get(w.lstrip("%"), "") for w in words]
        self.nfields = len(modes)
        self.fields = tuple(i for i, mode in enumerate(modes) if mode)
        self.labels = tuple({"mode": mode} for mode in modes if mode)


class _Layout:
    """The columns of one header (or one header-less field count) and the per-device plans."""

    __slots__ = ("columns", "dev_index", "nfields", "plans", "used")

    def __init__(self, columns: tuple[str, ...], dev_index: int) -> None:
        self.columns = columns
        self.dev_index = dev_index
        self.nfields = len(columns) + 1
        # (field index, column) for the columns that make samples.
        self.used: list[tuple[int, str]] = []
        for i, name in enumerate(columns):
            if name in COLUMNS:
                field = i + 1 if i >= dev_index else i
                self.used.append((field, name))
        self.plans: dict[str, _Plan] = {}


class IostatParser(Parser):
    """sysstat iostat text reports (any sysstat version, header or header-less lines)."""

    name: ClassVar[str] = "iostat"
    tool: ClassVar[str] = "iostat"
    description: ClassVar[str] = (
        "sysstat iostat text: -x/-d/-t/-m/-p/-h, sysstat 9.x-12.x, grepped header-less lines"
    )

    def __init__(self, host: str = "-", source: str = "-", *,
                 skip_first_report: bool = False, interval: float = 1.0) -> None:
        super().__init__(host, source)
        self.skip_first_report = skip_first_report
        self.interval = interval if interval > 0 else 1.0
        self._clock = ReportClock()
        self._layouts: dict[tuple[str, ...], _Layout] = {}
        self._headerless: dict[tuple[str, ...], _Layout] = {}
        self._layout: _Layout | None = None
        self._cpu_plan: _CpuPlan | None = None  # set while the avg-cpu values are due
        self._cpu_plans: dict[tuple[str, ...], _CpuPlan] = {}
        self._foreign = False  # inside an SPDK table
        # The current report.
        self._report = 0
        self._report_t: float | None = None
        self._elapsed = 0.0
        self._skip = False
        self._content = False
        self._has_cpu = False
        self._has_rows = False
        self._closed = False
        self._headers: set[tuple[str, ...]] = set()
        self._devices: set[str] = set()

    # --- reports -------------------------------------------------------------------------

    def _new_report(self) -> None:
        self._report += 1
        k = self._report - 1 if self.skip_first_report else self._report
        self._elapsed = k * self.interval
        self._skip = self.skip_first_report and self._report == 1
        self._report_t = None
        self._content = self._has_cpu = self._has_rows = self._closed = False
        self._headers.clear()
        self._devices.clear()

    # --- lines ---------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        parts = line.split()
        if not parts:
            if self._has_rows:
                self._closed = True
            self._foreign = False
            self._cpu_plan = None
            return None
        first = parts[0]
        if self._cpu_plan is not None:
            plan = self._cpu_plan
            self._cpu_plan = None
            if len(parts) == plan.nfields and to_number(first) is not None:
                return self._cpu_line(parts, plan, line, t)
        if first.startswith("Device") or parts[-1] == "Device":
            return self._header(parts)
        if first == "avg-cpu:" and len(parts) > 1:
            if self._report == 0 or self._has_cpu or self._has_rows:
                self._new_report()
            self._content = self._has_cpu = True
            words = tuple(parts[1:])
            cpu_plan = self._cpu_plans.get(words)
            if cpu_plan is None:
                if len(self._cpu_plans) >= _CPU_PLANS_KEPT:  # (garbage headers: bounded)
                    self._cpu_plans.clear()
                cpu_plan = self._cpu_plans[words] = _CpuPlan(words)
            self._cpu_plan = cpu_plan
            return None
        if looks_like_timestamp(line):
            stamp = self._clock.parse(line)
            if stamp is not None:
                if self._report == 0 or self._content:
                    self._new_report()
                self._content = True
                self._report_t = stamp
                return None
        if self._foreign:
            # Rows of an SPDK table: not ours. The table ends at the first other line.
            if len(parts) == 8 and to_number(parts[1]) is not None:
                return None
            self._foreign = False
        layout = self._layout
        if layout is not None and len(parts) == layout.nfields:
            if not self._closed:  # a row of the table under the header
                return self._device_line(parts, layout, True, line, t)
            # After the table's blank line: only a line shaped like a device line
            if _device_name(parts[layout.dev_index]) and _numbers(parts, layout.dev_index):
                return self._device_line(parts, layout, False, line, t)
        layout = self._headerless_layout(parts)
        if layout is not None:
            return self._device_line(parts, layout, False, line, t)
        if first == "Linux":
            m = _BANNER.match(line)
            if m is not None:
                self._clock.learn_date(m.group(1))
                return None
        self.unknown()
        return None

    def _header(self, parts: list[str]) -> list[Sample] | None:
        if parts[-1] == "Device" and not parts[0].startswith("Device"):
            dev_index = len(parts) - 1
            columns = tuple(parts[:-1])
        else:
            dev_index = 0
            columns = tuple(parts[1:])
        layout = self._layouts.get(columns)
        if layout is None:  # (a header seen before passed these checks: iostat repeats it)
            if any(c.startswith("KB_") for c in columns):
                self._foreign = True  # SPDK's iostat.py table
                return None
            if not any(c in COLUMNS for c in columns):
                self.unknown()
                return None
            layout = self._layouts[columns] = _Layout(columns, dev_index)
        self._foreign = False
        if self._report == 0 or columns in self._headers:
            self._new_report()
        self._headers.add(columns)
        self._devices.clear()
        self._content = True
        self._closed = False
        self._layout = layout
        return None

    def _headerless_layout(self, parts: list[str]) -> _Layout | None:
        """The layout of a line with no header over it, when it is shaped like an iostat
        device line of one (see ``headerless_columns``); None for any other line."""
        columns = headerless_columns(parts)
        if columns is None:
            return None
        layout = self._headerless.get(columns)
        if layout is None:
            layout = self._headerless[columns] = _Layout(columns, 0)
        return layout

    def _device_line(self, parts: list[str], layout: _Layout, trusted: bool, line: str,
                     t: float | None) -> list[Sample] | None:
        device = parts[layout.dev_index]
        plan = layout.plans.get(device)
        if plan is None:
            if to_number(device) is not None or not layout.used:
                self.unknown()  # a line of numbers: not a device line
                return None
            plan = layout.plans[device] = _Plan(layout.used, device)
        try:
            values = list(map(mul, map(float, plan.get(parts)), plan.scales))
        except ValueError:
            slow = self._slow_values(parts, plan, trusted, line)
            if slow is None:
                return None
            values = slow
        new_report = self._report == 0 or self._closed or device in self._devices
        if new_report:
            self._new_report()
        self._devices.add(device)
        self._content = self._has_rows = True
        if self._skip:
            return None
        n = len(values)
        when = self._report_t if self._report_t is not None else t
        return list(map(Sample, repeat(when, n), repeat(self.tool, n), repeat(INTERVAL, n),
                        plan.metrics, values, plan.labels, repeat(self.host, n),
                        repeat(self._elapsed, n)))

    def _slow_values(self, parts: list[str], plan: _Plan, trusted: bool,
                     line: str) -> list[float] | None:
        """Values with units (``iostat -h``), decimal commas, or a line that is not ours."""
        values: list[float] = []
        for field, scale, is_size in zip(plan.fields, plan.scales, plan.sizes, strict=True):
            text = parts[field]
            try:
                values.append(float(text) * scale)
                continue
            except ValueError:
                value = human_value(text, scale, is_size)
            if value is None:
                if trusted and values:
                    self.warn(f"bad value {text!r} in iostat device line", line)
                else:
                    self.unknown()
                return None
            values.append(value)
        return values

    def _cpu_line(self, parts: list[str], plan: _CpuPlan, line: str,
                  t: float | None) -> list[Sample] | None:
        try:
            values = [float(parts[i]) / 100.0 for i in plan.fields]
        except ValueError:  # a decimal comma, a percent sign, or garbage
            values = []
            for i in plan.fields:
                value = to_number(parts[i])
                if value is None:
                    self.warn("bad avg-cpu value", line)
                    return None
                values.append(value / 100.0)
        if self._skip:
            return None
        n = len(values)
        when = self._report_t if self._report_t is not None else t
        return list(map(Sample, repeat(when, n), repeat(self.tool, n), repeat(INTERVAL, n),
                        repeat(CPU, n), values, plan.labels, repeat(self.host, n),
                        repeat(self._elapsed, n)))

    # --- detection -----------------------------------------------------------------------

    _DETECT_HEADER = re.compile(
        r"^\s*Device:?\s+(?:r/s|rrqm/s|tps)\s.*(?:%util|kB_read/s|MB_read/s|Blk_read/s)"
        # -h (--human, and -x -d -h): the columns in groups, the device last
        r"|^\s*(?:r/s|tps)\s+(?:rkB/s|rMB/s|kB_read/s|MB_read/s|kB/s|MB/s)\s.*\sDevice[ \t]*$",
        re.MULTILINE,
    )
    _DETECT_CPU = re.compile(r"^avg-cpu:\s+%user\s+%nice\s+%system", re.MULTILINE)
    _DETECT_X = re.compile(
        r"^[A-Za-z][\w.:-]*(?:[ \t]+\d+[.,]\d\d){11,22}[ \t]*$", re.MULTILINE
    )
    _DETECT_CMD = re.compile(r"\biostat\s+-[a-zA-Z]*[xdtmkpNhyz]", re.MULTILINE)

    @classmethod
    def detect(cls, head: str) -> int:
        if "Device" in head and cls._DETECT_HEADER.search(head):
            return 95
        if "avg-cpu:" in head and cls._DETECT_CPU.search(head):
            return 90
        m = cls._DETECT_X.search(head)
        if m is not None and len(m.group(0).split()) in HEADERLESS:
            return 80 if cls._DETECT_CMD.search(head) else 60
        return 0
