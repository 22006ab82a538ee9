"""sysstat ``iostat -o JSON`` (sysstat 11+), parsed line by line so that samples flow live.

The whole output is one JSON document, complete only when iostat exits, but sysstat prints
each element of its ``statistics`` array on its own lines as the interval ends::

    {"sysstat": {
        "hosts": [
            {
                "nodename": "vm", ..., "date": "11/22/26",
                "statistics": [
                    {
                        "timestamp": "2026-11-22T03:55:24+0000",
                        "avg-cpu":  {"user": 1.94, "nice": 0.00, "system": 1.24, ...},
                        "disk": [
                            {"disk_device": "vda", "r/s": 259.95, "w/s": 127.95, ...},
                            {"disk_device": "vdb", ...}
                        ]
                    },
    ...

So each ``"avg-cpu"`` line and each ``{"disk_device": ...}`` line is a complete JSON object
and is decoded on its own, as soon as it arrives. A ``{`` line alone inside ``statistics``
starts a report (``-t`` adds its ``"timestamp"``; ``-y`` drops the since-boot report); disk
lines grepped out of the document start a report when a device repeats.

Keys are mapped like the text columns (``_disk_common.COLUMNS``): ``r/s``, ``rkB/s`` or
``rMB/s``, ``rrqm/s``, ``r_await``, ``rareq-sz``, ``aqu-sz``, ``util`` (a percentage), ``tps``,
``kB_read/s`` ... The percentages of merged requests (``rrqm``, ``wrqm`` ... in sysstat 12) are
skipped. The older extended JSON of sysstat 11.0-11.4 used ``r``, ``w``, ``rkB``, ``wkB``,
``rrqm``, ``wrqm`` (per second), ``avgrq-sz`` (sectors), ``avgqu-sz``, ``await``, ``svctm``:
an object with an ``r`` key and no ``r/s`` key is read that way (assuming kB, iostat's default).

Another program's layout of the same document is read too. ``jq .`` and ``python -m
json.tool`` spread every object over lines (a first line ``{`` alone says so; sysstat's own is
``{"sysstat": {``): each element of ``statistics`` is then found as a JSON document of its own
and read as it ends, so such output streams as sysstat's does. ``jq -c`` puts the whole
document on one line: it is read whole. Tabs or spaces, LF or CRLF: the line-by-line path
strips them.

Time: the entry's ``timestamp`` (``ReportClock``: ISO with ``S_TIME_FORMAT=ISO``, else the
locale's date; no zone = UTC), else the ``t`` the line came with. ``elapsed`` = report number x
``interval`` as for the text parser (``skip_first_report`` likewise).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

import orjson

from benchtui.model.sample import INTERVAL, Sample
from benchtui.parsers._disk_common import (
    AWAIT,
    BANDWIDTH,
    COLUMNS,
    CPU,
    CPU_MODES,
    IOPS,
    KIB,
    MERGED,
    QUEUE,
    REQ_SIZE,
    SECTOR,
    SVCTM,
    UTIL,
    Column,
    ReportClock,
)
from benchtui.parsers._json_documents import BROKEN, JsonDocuments
from benchtui.parsers.base import Parser

#: sysstat 12 JSON keys that differ from the text headers.
_NEW_KEYS: dict[str, Column] = {**COLUMNS, "util": (UTIL, None, 0.01, False)}
_NEW_KEYS.pop("%util")
#: sysstat 11.0-11.4 extended JSON keys.
_OLD_KEYS: dict[str, Column] = {
    "r": (IOPS, "read", 1.0, False),
    "w": (IOPS, "write", 1.0, False),
    "rkB": (BANDWIDTH, "read", KIB, True),
    "wkB": (BANDWIDTH, "write", KIB, True),
    "rrqm": (MERGED, "read", 1.0, False),
    "wrqm": (MERGED, "write", 1.0, False),
    "avgrq-sz": (REQ_SIZE, "total", SECTOR, True),
    "avgqu-sz": (QUEUE, None, 1.0, False),
    "await": (AWAIT, "total", 1e-3, False),
    "r_await": (AWAIT, "read", 1e-3, False),
    "w_await": (AWAIT, "write", 1e-3, False),
    "svctm": (SVCTM, None, 1e-3, False),
    "util": (UTIL, None, 0.01, False),
}

_TIMESTAMP = re.compile(r'^\s*"timestamp":\s*"([^"]*)"')
_DATE = re.compile(r'^"date":\s*"([^"]*)"')


class IostatJsonParser(Parser):
    """sysstat iostat -o JSON, one statistics entry at a time."""

    name: ClassVar[str] = "iostat-json"
    tool: ClassVar[str] = "iostat"
    description: ClassVar[str] = "sysstat iostat -o JSON (-x, -d, -t), decoded entry by entry"

    def __init__(self, host: str = "-", source: str = "-", *,
                 skip_first_report: bool = False, interval: float = 1.0) -> None:
        super().__init__(host, source)
        self.skip_first_report = skip_first_report
        self.interval = interval if interval > 0 else 1.0
        self._clock = ReportClock()
        self._in_stats = False
        self._in_disk = False
        self._report = 0
        self._report_t: float | None = None
        self._elapsed = 0.0
        self._skip = False
        self._devices: set[str] = set()
        #: sysstat's own layout was seen (its first line, ``{"sysstat": {``)
        self._own_layout = False
        #: another program's layout (a first line ``{`` alone)
        self._relaid = False
        #: ... and its ``statistics`` array: its entries, found as documents
        self._entries: JsonDocuments | None = None

    def _new_report(self) -> None:
        self._report += 1
        k = self._report - 1 if self.skip_first_report else self._report
        self._elapsed = k * self.interval
        self._skip = self.skip_first_report and self._report == 1
        self._report_t = None
        self._devices.clear()

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if self._entries is not None:
            return self._from_entries(line, t)
        text = line.strip()
        if not text:
            return None
        if text.startswith('{"disk_device"'):
            return self._disk(text, line, t)
        if text.startswith('{"sysstat"'):
            if text.endswith("}"):  # the whole document on one line
                return self._whole(text, line, t)
            self._own_layout = True
            return None
        if text.startswith('"avg-cpu"'):
            if self._report == 0:
                self._new_report()
            return self._cpu(text, line, t)
        if text == "{":
            if self._in_stats and not self._in_disk:
                self._new_report()
            elif not self._own_layout:  # a document laid out by another program
                self._relaid = True
            return None
        if text.startswith('"timestamp"'):
            m = _TIMESTAMP.match(text)
            stamp = self._clock.parse(m.group(1)) if m is not None else None
            if stamp is None:
                self.warn("unreadable report timestamp", line)
            self._report_t = stamp
            return None
        if text.startswith('"statistics"'):
            self._in_stats = True
            if self._relaid:  # each statistics entry: a JSON document of its own
                self._entries = JsonDocuments()
            return None
        if text.startswith('"disk"'):
            self._in_disk = True
            return None
        if text[0] == "]":
            if self._in_disk:
                self._in_disk = False
            else:
                self._in_stats = False
            return None
        if text.startswith('"date"'):
            m = _DATE.match(text)
            if m is not None:
                self._clock.learn_date(m.group(1))
            return None
        if text[0] in '{}"':
            return None  # the rest of the document's frame (sysstat, hosts, nodename ...)
        self.unknown()
        return None

    def _decode(self, text: str, line: str) -> dict[str, object] | None:
        body = text.rstrip(",")
        if body.startswith('"avg-cpu"'):
            body = body.split(":", 1)[1].strip().rstrip(",")
        try:
            obj = json.loads(body)
        except ValueError:
            self.warn("truncated or invalid JSON object", line)
            return None
        if not isinstance(obj, dict):
            self.warn("not a JSON object", line)
            return None
        return obj

    # --- another program's layout -----------------------------------------------------------

    def _from_entries(self, line: str, t: float | None) -> list[Sample] | None:
        """A line of the ``statistics`` array laid out by another program: its entries are
        found as JSON documents (each ``{`` ... ``}``), read as each ends."""
        entries = self._entries
        assert entries is not None
        out: list[Sample] = []
        for found in entries.feed(line.encode("utf-8", errors="replace") + b"\n"):
            if isinstance(found.value, dict):
                out.extend(self._entry(found.value, line, t))
            elif found.value is BROKEN:
                self.warn("truncated or invalid JSON object", line)
        return out

    def _whole(self, text: str, line: str, t: float | None) -> list[Sample] | None:
        """The whole document on one line (``jq -c``)."""
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            self.warn("truncated or invalid JSON document", line[:80])
            return None
        sysstat = doc.get("sysstat") if isinstance(doc, dict) else None
        hosts = sysstat.get("hosts") if isinstance(sysstat, dict) else None
        out: list[Sample] = []
        for host in hosts if isinstance(hosts, list) else ():
            if not isinstance(host, dict):
                continue
            date = host.get("date")
            if isinstance(date, str):
                self._clock.learn_date(date)
            stats = host.get("statistics")
            for entry in stats if isinstance(stats, list) else ():
                if isinstance(entry, dict):
                    out.extend(self._entry(entry, line, t))
        return out

    def _entry(self, entry: dict[str, Any], line: str, t: float | None) -> list[Sample]:
        """One element of ``statistics``: a report."""
        self._new_report()
        stamp = entry.get("timestamp")
        if isinstance(stamp, str):
            self._report_t = self._clock.parse(stamp)
            if self._report_t is None:
                self.warn("unreadable report timestamp", stamp)
        out: list[Sample] = []
        cpu = entry.get("avg-cpu")
        if isinstance(cpu, dict):
            out.extend(self._cpu_obj(cpu, t))
        disks = entry.get("disk")
        for disk in disks if isinstance(disks, list) else ():
            if isinstance(disk, dict):
                out.extend(self._disk_obj(disk, line, t) or ())
        return out

    # --- sysstat's layout, line by line ----------------------------------------------------------

    def _disk(self, text: str, line: str, t: float | None) -> list[Sample] | None:
        obj = self._decode(text, line)
        if obj is None:
            return None
        return self._disk_obj(obj, line, t)

    def _disk_obj(self, obj: dict[str, Any], line: str, t: float | None) -> list[Sample] | None:
        device = obj.get("disk_device")
        if not isinstance(device, str):
            self.warn("disk object without a device name", line)
            return None
        # Bare disk objects (grepped from the document) start a report when a device repeats.
        if self._report == 0 or device in self._devices:
            self._new_report()
        self._devices.add(device)
        if self._skip:
            return None
        keys = _OLD_KEYS if "r" in obj and "r/s" not in obj else _NEW_KEYS
        when = self._report_t if self._report_t is not None else t
        out: list[Sample] = []
        for key, value in obj.items():
            column = keys.get(key)
            if column is None:
                continue
            if not isinstance(value, int | float) or isinstance(value, bool):
                self.warn(f"non-numeric {key!r} for {device}", line)
                continue
            metric, op, scale, _is_size = column
            labels = {"device": device} if op is None else {"device": device, "op": op}
            out.append(Sample(when, self.tool, INTERVAL, metric, float(value) * scale, labels,
                              self.host, self._elapsed))
        return out

    def _cpu(self, text: str, line: str, t: float | None) -> list[Sample] | None:
        obj = self._decode(text, line)
        if obj is None:
            return None
        return self._cpu_obj(obj, t)

    def _cpu_obj(self, obj: dict[str, Any], t: float | None) -> list[Sample]:
        if self._skip:
            return []
        when = self._report_t if self._report_t is not None else t
        out: list[Sample] = []
        for key, value in obj.items():
            mode = CPU_MODES.get(key)
            if mode is None or not isinstance(value, int | float) or isinstance(value, bool):
                continue
            out.append(self.sample(CPU, float(value) / 100.0, {"mode": mode}, when,
                                   elapsed=self._elapsed))
        return out

    _DETECT = re.compile(r'"disk_device"\s*:\s*"')

    @classmethod
    def detect(cls, head: str) -> int:
        if '"sysstat"' in head and cls._DETECT.search(head):
            return 95
        if '"sysstat"' in head and '"statistics"' in head and '"avg-cpu"' in head:
            return 85
        if cls._DETECT.search(head):
            return 60
        return 0
