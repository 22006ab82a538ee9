"""fio's normal (human) output: the end-of-run report and the ``--eta`` status line.

Parsed: fio 3.x (3.1, 3.7, 3.27 windowsaio and 3.33 are in the test fixtures), Linux and
Windows builds, and fio 2.x's older forms (``read : io=..., bw=..., iops=..., runt=...``,
``READ: io=..., aggrb=...``, ``[1796K/520K/0K /s] [419/109/0 iops]``) as a best effort.
Leading whitespace is not significant, so reports whose indentation was lost still parse.

What becomes samples (all ``kind="summary"`` except the status line):

* ``NAME: (groupid=0, jobs=1): err= 0: pid=...`` starts a job section; the end clock printed
  there has no time zone and is not used: ``t`` is the ``t`` passed with the line.
* ``read: IOPS=195, BW=782KiB/s (801kB/s)(45.9MiB/60039msec)`` -> ``iops``, ``bandwidth_bytes``;
  the run time (60.039 s) is the ``elapsed`` of everything the direction reports.
* ``slat/clat/lat (unit): min=, max=, avg=, stdev=`` -> ``latency_{min,max,mean,stddev}_seconds``;
  ``clat/lat/slat percentiles (unit):`` tables -> ``latency_seconds{quantile}``.
* ``bw (  KiB/s): min=..`` and ``iops : min=..`` (fio's own samples, every 500 ms by default)
  -> ``bandwidth_{min,max,mean,stddev}_bytes`` and ``iops_{min,max,mean,stddev}``.
* ``cpu : usr=, sys=`` -> ``cpu_ratio{job, mode=user|system}``.
* ``Run status group N`` ``READ: bw=...`` lines -> ``bandwidth_bytes{job="group N"}``.
* ``Disk stats`` ``sda: ios=..., util=99.61%`` -> ``disk_util_ratio{device}``.
* ``Jobs: 1 (f=1): [r(1)][50.0%][r=102MiB/s][r=26.2k IOPS][eta 00m:30s]`` (rewritten in place
  with ``\\r``) -> ``kind="interval"`` ``iops``/``bandwidth_bytes`` with ``job="all"``: the line is
  fio-wide. fio prints it every ``--eta-interval`` (1 s by default), so ``elapsed`` is the
  number of status lines seen in the run. Since fio 3.10 a direction with no I/O in the last
  second is left out of the line: directions seen earlier in the run then get a 0.

Runs: several reports pasted one after the other each give their own samples. From the second
run of a stream on, samples carry a ``run`` label ("2", "3", ...); the first run has none, so a
single run looks the same as ever. A new run starts at a job header (``(g=0): rw=``), version
line or status line that follows a completed report; a job section whose pid was already
reported (``--status-interval`` dumps) stays in the same run. Jobs sharing a name (``numjobs``
without ``group_reporting``) are labelled ``name#0``, ``name#1``... as fio-json does, when the
preamble's ``...`` line announced the clones; in a report pasted without its preamble the first
keeps its bare name and the others are ``name#1``, ``name#2``...
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import INTERVAL, SUMMARY, Sample, quantile_label
from benchtui.model.units import parse_bytes, parse_count, percent_to_ratio, time_unit
from benchtui.parsers.base import Parser

_OPS: Final = {"read": "read", "write": "write", "trim": "trim", "mixed": "total"}
_GROUP_OPS: Final = {"READ": "read", "WRITE": "write", "TRIM": "trim", "MIXED": "total"}
_ETA_OPS: Final = {"r": "read", "w": "write", "t": "trim"}
_ETA2_OPS: Final = ("read", "write", "trim")

_RE_HEADER = re.compile(r"^(.*?): \(g=\d+\): rw=")
_RE_JOB = re.compile(r"^(.*?): \(groupid=(\d+), jobs=(\d+)\): err=\s*-?\d+(?:: pid=(\d+))?")
_RE_OP3 = re.compile(
    r"^(read|write|trim|mixed)\s*: IOPS=\s*([\d.]+[kKMG]?), BW=\s*([^\s(]+)\s*"
    r"(?:\([^)]*\))?\s*\([^/)]+/(\d+)msec\)")
_RE_OP2 = re.compile(
    r"^(read|write|trim|mixed)\s*: io=[^,]*, bw=\s*([^,]+?)\s*, iops=\s*([\d.]+[kKMG]?)\s*,"
    r" runt=\s*(\d+)\s*msec")
_RE_LAT = re.compile(
    r"^(slat|clat|lat) \((nsec|usec|msec)\)\s*:\s*min=\s*([^,\s]+)\s*,\s*max=\s*([^,\s]+)\s*,"
    r"\s*avg=\s*([^,\s]+)\s*,\s*stdev=\s*([^,\s]+)")
_RE_PCT_HEAD = re.compile(r"^(slat|clat|lat) percentiles \((nsec|usec|msec)\):")
_RE_PCT = re.compile(r"(\d+(?:\.\d+)?)th=\[\s*(\d+)\s*\]")
_RE_BW = re.compile(
    r"^bw \(\s*([A-Za-z]+)\s*/s\)\s*:\s*min=\s*([\d.]+),\s*max=\s*([\d.]+),\s*per=\s*[\d.]+%,"
    r"\s*avg=\s*([\d.]+),\s*stdev=\s*([\d.]+)")
_RE_IOPS = re.compile(
    r"^iops\s*:\s*min=\s*([\d.]+),\s*max=\s*([\d.]+),\s*avg=\s*([\d.]+),\s*stdev=\s*([\d.]+)")
_RE_CPU = re.compile(r"^cpu\s*:\s*usr=\s*([\d.]+)%,\s*sys=\s*([\d.]+)%")
_RE_GROUP_HEAD = re.compile(r"^Run status group (\d+) \(all jobs\):")
_RE_GROUP3 = re.compile(r"^(READ|WRITE|TRIM|MIXED): bw=\s*([^\s(,]+).*?run=\s*\d+-(\d+)msec")
_RE_GROUP2 = re.compile(r"^(READ|WRITE|TRIM|MIXED): io=[^,]*, aggrb=\s*([^,]+?),.*?maxt=\s*(\d+)")
_RE_DISK = re.compile(r"^(\S+): ios=\d+/\d+.*?, util=\s*([\d.]+)%")
_RE_STATUS = re.compile(r"\d+ \(f=\d+\)")
_RE_STATUS_SPLIT = re.compile(r"(?=Jobs: \d+ \(f=\d+\))")
_RE_ETA3 = re.compile(r"\]\[([rwt]=[^\]]*)\]\[([rwt]=[^\]]*?) IOPS\]")
_RE_ETA2 = re.compile(r"\[([^\[\]]*?) ?/s\] \[([^\[\]]*?) *iops\]")

#: Bytes per unit of the ``bw (  KiB/s):`` sample-statistics line (fio 2's "KB" is 1024).
_BW_UNITS: Final = {
    "KiB": 1024.0, "MiB": 1024.0**2, "kB": 1000.0, "KB": 1024.0, "MB": 1024.0**2,
    "Kibit": 128.0, "kbit": 125.0, "Mibit": 1024.0**2 / 8, "Mbit": 1e6 / 8,
}
_IGNORED: Final = (
    "IO depths", "submit", "complete", "issued", "latency", "fsync/", "sync ", "Description",
    "...", "lat (", "steadystate",
)
_SAMPLE_STATS: Final = ("min", "max", "mean", "stddev")


def _rate(text: str) -> float | None:
    """fio 3's "782KiB/s", "801kB/s", "6400Kibit/s" -> bytes per second."""
    text = text.removesuffix("/s")
    if text.endswith("bit"):
        value = parse_bytes(text[:-3] + "B")
        return None if value is None else value / 8.0
    return parse_bytes(text)


def _rate2(text: str) -> float | None:
    """fio 2's "1023.3KB/s", "269100 B/s", "1796K" -> bytes per second (K, KB = 1024)."""
    text = text.strip().removesuffix("/s").strip()
    return parse_bytes(text, si_as_binary=True)


class FioTextParser(Parser):
    """fio ``--output-format=normal`` (the default) and its ``--eta`` status line."""

    name: ClassVar[str] = "fio-text"
    tool: ClassVar[str] = "fio"
    aliases: ClassVar[tuple[str, ...]] = ("fio-normal",)
    description: ClassVar[str] = (
        "fio normal output: end-of-run report (fio 2.x/3.x) and --eta status lines")

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._run = 1
        self._reset_run()

    def _reset_run(self) -> None:
        self._phase = 0  # 0: before the report, 1: job sections, 2: group and disk stats
        self._pids: dict[str, str] = {}
        self._names: dict[str, int] = {}
        self._cloned: set[str] = set()
        self._header = ""
        self._ticks = 0
        self._eta_ops: list[str] = []
        self._job = "-"
        self._job_elapsed = 0.0
        self._op: str | None = None
        self._op_elapsed = 0.0
        self._pct: tuple[str, float] | None = None
        self._group = "0"
        self._run_elapsed = 0.0

    def _new_run(self) -> None:
        self._run += 1
        self._reset_run()

    def _labels(self, labels: dict[str, str]) -> dict[str, str]:
        if self._run > 1:
            labels["run"] = str(self._run)
        return labels

    # --- detection ------------------------------------------------------------------------

    @classmethod
    def detect(cls, head: str) -> int:
        if re.search(r"\(groupid=\d+, jobs=\d+\): err=", head):
            return 90
        if '"fio version"' in head:
            return 0  # fio's json output (its own parser), without a normal report
        if re.search(r"^Run status group \d+ \(all jobs\):", head, re.MULTILINE):
            return 85
        if re.search(r"^fio-[23]\.\d+", head, re.MULTILINE):
            return 70
        if re.search(r"Jobs: \d+ \(f=\d+\)", head):
            return 60
        return 0

    # --- lines ----------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        s = line.strip()
        if not s:
            return None
        if s[0] == "|":
            return self._percentiles(s, t) if self._pct is not None else None
        self._pct = None
        if s.startswith(("slat ", "clat ", "lat ")):
            return self._latency(s, t)
        if "(groupid=" in s:
            self._job_header(s)
            return None
        if s.startswith(("read", "write", "trim", "mixed")) and (
                ": IOPS=" in s or " io=" in s):
            return self._op_line(s, t)
        if s.startswith("bw (") and "min=" in s:
            return self._bw_stats(s, t)
        if s.startswith("iops") and "min=" in s:
            return self._iops_stats(s, t)
        if s.startswith("cpu") and "usr=" in s:
            return self._cpu(s, t)
        if s.startswith(("READ:", "WRITE:", "TRIM:", "MIXED:")) and ("bw=" in s or "aggrb=" in s):
            return self._group_line(s, t)
        if s.startswith("Run status group"):
            m = _RE_GROUP_HEAD.match(s)
            if m is None:
                self.warn("unreadable run status header", line)
                return None
            self._phase, self._group = 2, m.group(1)
            return None
        if s.startswith("Disk stats"):
            self._phase = 2
            return None
        if ": ios=" in s and "util=" in s:
            return self._disk(s, t)
        if "(f=" in s and _RE_STATUS.search(s):
            return self._status(s, t)
        if ("(g=" in s and "rw=" in s) or s.startswith(("Starting ", "fio-2.", "fio-3.")):
            if self._phase:
                self._new_run()
            m = _RE_HEADER.match(s)
            if m is not None:
                self._header = m.group(1)
            return None
        if s == "...":  # the job just announced has clones (numjobs > 1)
            if self._header:
                self._cloned.add(self._header)
            return None
        if s.startswith(_IGNORED):
            return None
        self.unknown()
        return None

    def _job_header(self, s: str) -> None:
        m = _RE_JOB.match(s)
        if m is None:
            self.warn("unreadable job header", s)
            return
        name, pid = m.group(1), m.group(4)
        # jobs=N > 1: group_reporting's one section for all the clones, named as fio-json does
        grouped = m.group(3) != "1"
        if self._phase == 2 and (pid is None or pid not in self._pids):
            self._new_run()
        job = self._pids.get(pid) if pid is not None else None
        if job is None:
            index = self._names.get(name, 0)
            self._names[name] = index + 1
            job = f"{name}#{index}" if index or (name in self._cloned and not grouped) else name
            if pid is not None:
                self._pids[pid] = job
        self._job, self._job_elapsed, self._op, self._phase = job, 0.0, None, 1

    def _op_line(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_OP3.match(s)
        if m is not None:
            op, iops, bw, runt = m.group(1), parse_count(m.group(2)), _rate(m.group(3)), m.group(4)
        else:
            m = _RE_OP2.match(s)
            if m is None:
                self.warn("unreadable direction line", s)
                return None
            op, bw, iops, runt = m.group(1), _rate2(m.group(2)), parse_count(m.group(3)), m.group(4)
        if iops is None or bw is None:
            self.warn("unreadable IOPS or bandwidth", s)
            return None
        elapsed = int(runt) / 1000.0
        self._op, self._op_elapsed = _OPS[op], elapsed
        self._job_elapsed = max(self._job_elapsed, elapsed)
        self._run_elapsed = max(self._run_elapsed, elapsed)
        if self._phase != 1:
            self._phase = 1
        return [
            self._summary("iops", iops, self._op_labels(), t, elapsed),
            self._summary("bandwidth_bytes", bw, self._op_labels(), t, elapsed),
        ]

    def _op_labels(self, **extra: str) -> dict[str, str]:
        labels = {"job": self._job, "op": self._op or "total"}
        labels.update(extra)
        return self._labels(labels)

    def _summary(self, metric: str, value: float, labels: dict[str, str], t: float | None,
                 elapsed: float) -> Sample:
        return self.sample(metric, value, labels, t, kind=SUMMARY, elapsed=elapsed)

    def _latency(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_LAT.match(s)
        if m is None:
            head = _RE_PCT_HEAD.match(s)
            if head is not None:
                unit = time_unit(head.group(2))
                if self._op is not None and unit is not None:
                    self._pct = (head.group(1), unit)
                    if "th=[" in s:  # the table's first row on the header's line
                        return self._percentiles(s[head.end():], t)
            # "lat (usec)   : 250=0.01%, ..." distributions, "clat prio ..." lines
            return None
        if self._op is None:
            self.warn("latency line outside a job's direction", s)
            return None
        unit = time_unit(m.group(2))
        values = [parse_count(m.group(i)) for i in (3, 4, 5, 6)]
        if unit is None or any(v is None for v in values):
            self.warn("unreadable latency line", s)
            return None
        labels = self._op_labels(measure=m.group(1))
        out = []
        for stat, value in zip(_SAMPLE_STATS, values, strict=True):
            assert value is not None
            out.append(self._summary(f"latency_{stat}_seconds", value * unit, dict(labels), t,
                                     self._op_elapsed))
        return out

    def _percentiles(self, s: str, t: float | None) -> list[Sample] | None:
        assert self._pct is not None
        measure, unit = self._pct
        out = []
        for pct, value in _RE_PCT.findall(s):
            if float(pct) > 100:
                continue
            labels = self._op_labels(measure=measure, quantile=quantile_label(pct))
            out.append(self._summary("latency_seconds", int(value) * unit, labels, t,
                                     self._op_elapsed))
        if not out:
            self.warn("unreadable percentile row", s)
        return out

    def _stats(self, prefix: str, suffix: str, values: list[float], t: float | None
               ) -> list[Sample]:
        return [self._summary(f"{prefix}_{stat}{suffix}", value, self._op_labels(), t,
                              self._op_elapsed)
                for stat, value in zip(_SAMPLE_STATS, values, strict=True)]

    def _bw_stats(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_BW.match(s)
        mult = _BW_UNITS.get(m.group(1)) if m is not None else None
        if m is None or mult is None or self._op is None:
            self.warn("unreadable bandwidth statistics", s)
            return None
        values = [float(m.group(i)) * mult for i in (2, 3, 4, 5)]
        return self._stats("bandwidth", "_bytes", values, t)

    def _iops_stats(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_IOPS.match(s)
        if m is None or self._op is None:
            self.warn("unreadable IOPS statistics", s)
            return None
        return self._stats("iops", "", [float(m.group(i)) for i in (1, 2, 3, 4)], t)

    def _cpu(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_CPU.match(s)
        if m is None:
            self.warn("unreadable cpu line", s)
            return None
        out = []
        for mode, text in (("user", m.group(1)), ("system", m.group(2))):
            value = percent_to_ratio(text)
            if value is not None:
                labels = self._labels({"job": self._job, "mode": mode})
                out.append(self._summary("cpu_ratio", value, labels, t, self._job_elapsed))
        return out

    def _group_line(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_GROUP3.match(s)
        bw = _rate(m.group(2)) if m is not None else None
        if m is None:
            m = _RE_GROUP2.match(s)
            bw = _rate2(m.group(2)) if m is not None else None
        if m is None or bw is None:
            self.warn("unreadable run status line", s)
            return None
        self._phase = 2
        elapsed = int(m.group(3)) / 1000.0
        self._run_elapsed = max(self._run_elapsed, elapsed)
        labels = self._labels({"job": f"group {self._group}", "op": _GROUP_OPS[m.group(1)]})
        return [self._summary("bandwidth_bytes", bw, labels, t, elapsed)]

    def _disk(self, s: str, t: float | None) -> list[Sample] | None:
        m = _RE_DISK.match(s)
        util = percent_to_ratio(m.group(2)) if m is not None else None
        if m is None or util is None:
            self.warn("unreadable disk stats line", s)
            return None
        self._phase = 2
        labels = self._labels({"device": m.group(1)})
        return [self._summary("disk_util_ratio", util, labels, t, self._run_elapsed)]

    # --- the --eta status line ------------------------------------------------------------

    def _status(self, s: str, t: float | None) -> list[Sample] | None:
        if s.count("(f=") > 1:  # rewrites glued together when the \r was lost
            out: list[Sample] = []
            for part in _RE_STATUS_SPLIT.split(s):
                if part and _RE_STATUS.search(part):
                    out.extend(self._status_one(part, t))
            return out
        return self._status_one(s, t)

    def _status_one(self, s: str, t: float | None) -> list[Sample]:
        if self._phase == 2:
            self._new_run()
        self._ticks += 1
        values: dict[str, tuple[float, float]] = {}
        m = _RE_ETA3.search(s)
        if m is not None:
            rates = dict(item.split("=", 1) for item in m.group(1).split(",") if "=" in item)
            iops = dict(item.split("=", 1) for item in m.group(2).split(",") if "=" in item)
            for key, op in _ETA_OPS.items():
                if key in rates and key in iops:
                    bw, io = _rate(rates[key]), parse_count(iops[key])
                    if bw is None or io is None:
                        self.warn("unreadable status line rates", s)
                        return []
                    values[op] = (bw, io)
        else:
            m = _RE_ETA2.search(s)
            if m is not None:
                for op, rate, io_text in zip(_ETA2_OPS, m.group(1).split("/"),
                                             m.group(2).split("/"), strict=False):
                    bw, io = _rate2(rate), parse_count(io_text.strip())
                    if bw is None or io is None:
                        self.warn("unreadable status line rates", s)
                        return []
                    values[op] = (bw, io)
            elif "[eta" not in s or "%]" not in s:
                return []  # "Jobs: 1 (f=1)", "[f(1)]": no rates to report
        for op in self._eta_ops:
            values.setdefault(op, (0.0, 0.0))
        out = []
        elapsed = float(self._ticks)
        for op, (bw, io) in values.items():
            if op not in self._eta_ops:
                self._eta_ops.append(op)
            labels = self._labels({"job": "all", "op": op})
            out.append(self.sample("iops", io, labels, t, kind=INTERVAL, elapsed=elapsed))
            out.append(self.sample("bandwidth_bytes", bw, dict(labels), t, kind=INTERVAL,
                                   elapsed=elapsed))
        return out

