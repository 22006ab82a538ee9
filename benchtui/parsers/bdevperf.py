"""SPDK ``bdevperf`` output (examples/bdev/bdevperf/bdevperf.c; test/bdev/bdevperf before v22.09),
every layout it has printed (docs/tools/spdk-bdevperf.md shows each):

- v23.01 and later: a table, ``Device Information : runtime(s) IOPS MiB/s Fail/s TO/s Average
  min max`` (latencies in microseconds), each job's row after its ``Job: NAME (Core Mask 0x1,
  workload: randread, depth: 128, IO size: 4096)`` line (v24.01+; ``Job: NAME (Core Mask
  0x1)`` before), then ``Total`` (no runtime);
- v21.01 to v22.05: ``NAME : 123456.78 IOPS 482.25 MiB/s`` rows under ``Job: NAME (Core Mask
  0x1)`` (v22) or ``Thread name:``/``Core Mask:`` lines (v21), then ``Total``;
- v19 and v20: the same rows under ``Logical core: N`` (v19: ``IO/s`` and ``MB/s``);
- ``-S SECONDS``: such a block every period while the run goes on; v24.09 and later without
  ``-S``: a progress line every second, ``123456.78 IOPS, 482.25 MiB/s`` (all jobs together),
  rewritten in place with ``\\r``;
- ``-l`` / ``-ll`` (v23.01+): each job's latency percentiles and histogram (``_spdk_perf``);
- ``bdevperf.py perform_tests`` (v24.09+): the results as JSON (``{"results": [{"job": ...,
  "iops": ..., "mibps": ..., "avg_latency_us": ...}], "core_count": N}``).

Samples: ``job`` = the job's name (its bdev), ``core_mask`` = its core mask as printed
(``0x1``; with ``-C`` one bdev has a job on every core), ``op`` from the workload (``read``,
``write``, ``trim``, or ``total`` for mixed ones and when the workload is not in the stream:
pass the command line's ``-w`` as ``workload``), ``measure="lat"`` (submission to completion);
``Total`` and the progress lines are ``job="all"``.

- The last block of a run (at the end of the stream, or before the next ``Running I/O``) is the
  run's result: ``summary`` ``iops``, ``bandwidth_bytes``, and from v23.01 on
  ``latency_mean_seconds``, ``latency_min_seconds``, ``latency_max_seconds``; ``elapsed`` = the
  row's runtime (else the shutdown's "test time", else the ``Running I/O for N seconds``).
- Blocks before it (``-S``) and progress lines are ``interval`` samples. bdevperf prints the
  mean since the start (``io_completed / time``, bdevperf.c ``get_cma_io_per_second``), not the
  period's: the period's ``iops`` and ``bandwidth_bytes`` are the differences of those means
  times their times (``Δ(value x t) / Δt``), its ``latency_mean_seconds`` the difference of the
  latency sums over the difference of the I/Os. With ``-P N`` on the command line the printed
  value is an exponential moving average (``EMA += (x - EMA) x 2 / (N + 1)``): the period's
  rate is recovered from two EMAs, and no interval latency is given. ``elapsed`` = the runtime
  column, else the period count x the period (``-S``, 1 s by default).

Time: bdevperf prints no clock; ``t`` is the time the line was received (``null`` in a file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import orjson

from benchtui.model.sample import INTERVAL, SUMMARY, Sample
from benchtui.parsers._spdk_perf import US, LatencyTable, number, op_of, options
from benchtui.parsers.base import NominalInterval, Parser

MIB: Final = 1024.0 * 1024.0
_F: Final = r"(-?\d+(?:\.\d+)?)"
_HEADER: Final = re.compile(r"^\s*Device Information\s*:\s*runtime\(s\)\s+IOPS")
_ROW: Final = re.compile(rf"^\s*(?P<name>\S.*?)\s*:\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}"
                         rf"\s+{_F}\s+{_F}\s*$")
_TOTAL: Final = re.compile(rf"^\s*Total\s*:\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s+{_F}\s*$")
_OLD_ROW: Final = re.compile(
    rf"^\s*(?P<name>\S.*?)\s*:\s+{_F} (?:IOPS|IO/s)\s+{_F} (?:MiB/s|MB/s)\s*$")
_PROGRESS: Final = re.compile(rf"^\s*{_F} IOPS,\s+{_F} MiB/s\s*$")
_JOB: Final = re.compile(
    r"^\s*Job: (?P<name>\S+) \(Core Mask 0x(?P<mask>[0-9a-fA-F]+)"
    r"(?:, workload: (?P<workload>\w+))?[^)]*\)\s*$")
_THREAD: Final = re.compile(r"^\s*Thread name: (?P<name>\S+)\s*$")
_MASK: Final = re.compile(r"^\s*Core Mask: 0x(?P<mask>[0-9a-fA-F]+)\s*$")
_CORE: Final = re.compile(r"^\s*Logical core: (?P<core>\d+)\s*$")
_RUNNING: Final = re.compile(r"^Running I/O for (\d+) seconds")
_SHUTDOWN: Final = re.compile(r"test time (?:was|is) about (\d+(?:\.\d+)?) seconds")
_COMMAND: Final = re.compile(r"(?:^|[\s/])bdevperf\s+-")


@dataclass(slots=True)
class _Row:
    labels: dict[str, str]  # job, core_mask (when printed), op
    runtime: float | None
    iops: float
    mibps: float
    latency: tuple[float, float, float] | None  # average, min, max (us)


class BdevperfParser(Parser):
    """SPDK bdevperf: result tables of every version, -S periods, progress lines, -l/-ll, JSON."""

    name: ClassVar[str] = "bdevperf"
    tool: ClassVar[str] = "bdevperf"
    description: ClassVar[str] = (
        "SPDK bdevperf: result tables (v19-v26), -S periods, progress lines, -l/-ll, JSON")
    conflicts: ClassVar[tuple[str, ...]] = ("spdk-nvme-perf",)

    def __init__(self, host: str = "-", source: str = "-", *, workload: str | None = None,
                 period: float = 1.0) -> None:
        super().__init__(host, source)
        self._workload = workload
        self._period = period if period > 0 else 1.0
        self._ema: int | None = None
        self._run = 0  # runs of the stream that gave samples ("Running I/O" starts one)
        self._json: list[str] | None = None
        self._new_run()

    def _new_run(self) -> None:
        self._measured = False
        self._seconds: float | None = None  # Running I/O for N seconds
        self._shutdown: float | None = None
        #: what the last Job / Thread name / Core Mask / Logical core line said, for the rows
        self._job: dict[str, str] = {}
        self._keep_job = False  # Logical core: N holds for every row under it
        self._ops: dict[tuple[str, str], str] = {}  # (job, mask) -> op, from Job lines
        self._rows: list[_Row] = []  # the block being read
        self._held: tuple[list[_Row], _Row | None] | None = None  # the last whole block
        self._header = False  # a table header since the last block
        self._blocks = 0  # blocks emitted as periods
        self._progress = 0
        self._cum: dict[tuple[tuple[str, str], ...], tuple[float, float, float, float]] = {}
        self._nominal = NominalInterval()
        self._latency_section = False
        self._latency: LatencyTable | None = None
        self._result: list[_Row] = []  # the rows of the run's result, once read

    def sample(self, metric: str, value: float, labels: dict[str, str], t: float | None,
               *, kind: str = INTERVAL, elapsed: float | None = None,
               duration: float | None = None) -> Sample:
        if not self._measured:
            self._measured = True
            self._run += 1
        if self._run > 1:
            labels = {**labels, "run": str(self._run)}
        return super().sample(metric, value, labels, t, kind=kind, elapsed=elapsed,
                              duration=duration)

    @classmethod
    def detect(cls, head: str) -> int:
        if _HEADER.search(head) is not None or re.search(
                r"^\s*Job: \S+ \(Core Mask 0x[0-9a-fA-F]+", head, re.MULTILINE):
            return 95
        if re.search(r"^Running I/O for \d+ seconds\.\.\.", head, re.MULTILINE) and re.search(
                r"^\s*\S.*?:\s+\d+\.\d\d (?:IOPS|IO/s)\s+\d+\.\d\d Mi?B/s", head, re.MULTILINE):
            return 90
        if re.search(r'"results"\s*:', head) and '"mibps"' in head and '"avg_latency_us"' in head:
            return 90
        if re.search(r"^\s*\d+\.\d\d IOPS,\s+\d+\.\d\d MiB/s\s*$", head, re.MULTILINE):
            return 60
        return 0

    # --- lines -----------------------------------------------------------------------------

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if self._json is not None:
            return self._json_line(line, t)
        if self._latency is not None:
            if self._latency.line(line):
                return None
            out = self._end_latency(t)
            return out + (self.parse_line(line, t) or [])
        s = line.strip()
        if not s:
            return None
        if s == "{" and line.startswith("{"):
            self._json = [line]
            return None
        m = _ROW.match(line)
        if m is not None:
            return self._row(m, t, table=True)
        m = _TOTAL.match(line)
        if m is not None:
            return self._total(m, table=True)
        m = _OLD_ROW.match(line)
        if m is not None:
            if m.group("name") == "Total":
                return self._total(m, table=False)
            return self._row(m, t, table=False)
        return self._other(s, line, t)

    def _other(self, s: str, line: str, t: float | None) -> list[Sample] | None:
        m = _JOB.match(s)
        if m is not None:
            self._job_line(m.group("name"), f"0x{m.group('mask')}", m.group("workload"))
            return None
        m = _PROGRESS.match(s)
        if m is not None:
            return self._progress_line(float(m.group(1)), float(m.group(2)), t)
        if _HEADER.match(s) is not None:
            out = self._release(t, as_period=True)
            self._header = True
            return out or None
        if s in ("Latency summary", "Latency histogram"):
            self._latency_section = True
            return self._release(t, as_period=False) or None
        m = _RUNNING.match(s)
        if m is not None:
            out = self._release(t, as_period=False)
            self._new_run()
            self._seconds = float(m.group(1))
            return out or None
        m = _SHUTDOWN.search(s)
        if m is not None:
            self._shutdown = float(m.group(1))
            return None
        m = _CORE.match(s)
        if m is not None:
            self._job, self._keep_job = {"core_mask": hex(1 << int(m.group("core")))}, True
            return None
        m = _THREAD.match(s)
        if m is not None:
            self._job, self._keep_job = {}, False
            return None
        m = _MASK.match(s)
        if m is not None:
            self._job = {"core_mask": f"0x{m.group('mask')}"}
            return None
        if _COMMAND.search(line) is not None:
            self._command(line)
            return None
        self.unknown()
        return None

    def flush(self) -> list[Sample] | None:
        out = self._end_latency(None) if self._latency is not None else []
        return out + self._release(None, as_period=False)

    # --- the command line and the job lines ------------------------------------------------

    def _command(self, line: str) -> None:
        opts = options(line[line.find("bdevperf"):])
        self._workload = opts.get("-w", self._workload)
        period = number(opts.get("-S"))
        if period is not None and period > 0:
            self._period = period
        ema = number(opts.get("-P"))
        if ema is not None and ema > 0:
            self._ema = int(ema)

    def _job_line(self, name: str, mask: str, workload: str | None) -> None:
        op = self._ops.get((name, mask), op_of(self._workload)) if workload is None \
            else op_of(workload)
        self._ops[(name, mask)] = op
        if self._latency_section:  # -l/-ll: this job's percentiles or histogram follow
            self._latency = LatencyTable({"job": name, "core_mask": mask, "op": op,
                                          "measure": "lat"}, self._elapsed_of(name, mask))
            return
        self._job, self._keep_job = {"job": name, "core_mask": mask, "op": op}, False

    # --- blocks ----------------------------------------------------------------------------

    def _row(self, m: re.Match[str], t: float | None, *, table: bool) -> list[Sample] | None:
        out: list[Sample] = []
        if not self._rows and self._held is not None and not self._header:
            out = self._release(t, as_period=True)  # a new block: the held one was a period
        name = m.group("name")
        job = self._job
        labels = {"job": name}
        if "core_mask" in job:
            labels["core_mask"] = job["core_mask"]
        labels["op"] = job["op"] if job.get("job") == name else op_of(self._workload)
        if table:
            runtime, iops, mibps = float(m.group(2)), float(m.group(3)), float(m.group(4))
            latency: tuple[float, float, float] | None = (
                float(m.group(7)), float(m.group(8)), float(m.group(9)))
        else:
            runtime, latency = None, None
            iops, mibps = float(m.group(2)), float(m.group(3))
        self._rows.append(_Row(labels, runtime, iops, mibps, latency))
        if not self._keep_job:
            self._job = {}
        return out or None

    def _total(self, m: re.Match[str], *, table: bool) -> list[Sample] | None:
        if not self._rows:
            return None
        if table:
            iops, mibps = float(m.group(1)), float(m.group(2))
            latency: tuple[float, float, float] | None = (
                float(m.group(5)), float(m.group(6)), float(m.group(7)))
        else:
            iops, mibps, latency = float(m.group(2)), float(m.group(3)), None
        ops = {row.labels["op"] for row in self._rows}
        op = ops.pop() if len(ops) == 1 else "total"
        self._held = (self._rows, _Row({"job": "all", "op": op}, None, iops, mibps, latency))
        self._rows = []
        self._header = False
        self._job, self._keep_job = {}, False
        return None

    def _release(self, t: float | None, *, as_period: bool) -> list[Sample]:
        """The held block's samples: a period's, or the run's result."""
        if self._rows:  # a block cut before its Total
            self._held = (self._rows, None)
            self._rows = []
        held, self._held = self._held, None
        if held is None:
            return []
        rows, total = held
        if as_period:
            self._blocks += 1
            return self._period_samples(rows, total, t)
        self._result = rows
        return self._summary_samples(rows, total, t)

    def _elapsed_of(self, name: str, mask: str) -> float | None:
        """The run time of a job of the run's result (for its -l/-ll samples)."""
        for row in self._result:
            if row.labels["job"] == name and row.labels.get("core_mask") == mask:
                return row.runtime if row.runtime is not None else self._fallback()
        return self._fallback()

    def _fallback(self) -> float | None:
        return self._shutdown if self._shutdown is not None else self._seconds

    def _summary_samples(self, rows: list[_Row], total: _Row | None,
                         t: float | None) -> list[Sample]:
        runtimes = [row.runtime for row in rows if row.runtime is not None]
        out: list[Sample] = []
        for row in [*rows, *([total] if total is not None else [])]:
            elapsed = row.runtime if row.runtime is not None else (
                max(runtimes) if runtimes else self._fallback())
            labels = row.labels
            out.append(self.sample("iops", row.iops, labels, t, kind=SUMMARY, elapsed=elapsed))
            out.append(self.sample("bandwidth_bytes", row.mibps * MIB, labels, t, kind=SUMMARY,
                                   elapsed=elapsed))
            if row.latency is not None and row.iops > 0:
                lat = {**labels, "measure": "lat"}
                for metric, value in zip(("latency_mean_seconds", "latency_min_seconds",
                                          "latency_max_seconds"), row.latency, strict=True):
                    out.append(self.sample(metric, value * US, lat, t, kind=SUMMARY,
                                           elapsed=elapsed))
        return out

    def _period_samples(self, rows: list[_Row], total: _Row | None,
                        t: float | None) -> list[Sample]:
        runtimes = [row.runtime for row in rows if row.runtime is not None]
        when = max(runtimes) if runtimes else self._blocks * self._period
        out: list[Sample] = []
        for row in [*rows, *([total] if total is not None else [])]:
            out.extend(self._rates(row, row.runtime or when, t))
        return out

    def _progress_line(self, iops: float, mibps: float, t: float | None) -> list[Sample]:
        self._progress += 1
        row = _Row({"job": "all", "op": op_of(self._workload)}, None, iops, mibps, None)
        return self._rates(row, float(self._progress), t)

    def _rates(self, row: _Row, when: float, t: float | None) -> list[Sample]:
        """The period's samples from bdevperf's since-start means (or EMAs) at ``when``."""
        labels, iops, mibps = row.labels, row.iops, row.mibps
        average_us = row.latency[0] if row.latency is not None else None
        key = tuple(sorted(labels.items()))
        t0, ios0, bytes0, lat0 = self._cum.get(key, (0.0, 0.0, 0.0, 0.0))
        span = when - t0
        if span <= 0:
            return []
        if self._ema is not None:  # x = EMA0 + (EMA - EMA0) x (N + 1) / 2
            rate = ios0 + (iops - ios0) * (self._ema + 1) / 2
            bw = bytes0 + (mibps * MIB - bytes0) * (self._ema + 1) / 2
            self._cum[key] = (when, iops, mibps * MIB, 0.0)
            mean = None
        else:
            ios, nbytes = iops * when, mibps * MIB * when
            lat = (average_us or 0.0) * ios
            rate, bw = (ios - ios0) / span, (nbytes - bytes0) / span
            self._cum[key] = (when, ios, nbytes, lat)
            mean = (lat - lat0) / (ios - ios0) if average_us is not None and ios > ios0 \
                else None
        duration = self._nominal.duration(round(span, 9))
        out = [self.sample("iops", max(rate, 0.0), labels, t, elapsed=when, duration=duration),
               self.sample("bandwidth_bytes", max(bw, 0.0), labels, t, elapsed=when,
                           duration=duration)]
        if mean is not None and mean > 0:
            out.append(self.sample("latency_mean_seconds", mean * US,
                                   {**labels, "measure": "lat"}, t, elapsed=when,
                                   duration=duration))
        return out

    # --- -l / -ll, JSON --------------------------------------------------------------------

    def _end_latency(self, t: float | None) -> list[Sample]:
        table, self._latency = self._latency, None
        return table.samples(self, t) if table is not None else []

    def _json_line(self, line: str, t: float | None) -> list[Sample] | None:
        assert self._json is not None
        self._json.append(line)
        if line.rstrip() != "}":
            if len(self._json) > 100_000:
                self._json = None
            return None
        text, self._json = "\n".join(self._json), None
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            self.warn("unreadable bdevperf JSON result")
            return None
        results = doc.get("results") if isinstance(doc, dict) else None
        if not isinstance(results, list):
            self.unknown()
            return None
        return self._json_results(results, t)

    def _json_results(self, results: list[Any], t: float | None) -> list[Sample]:
        out: list[Sample] = []
        for r in results:
            if not isinstance(r, dict) or not isinstance(r.get("job"), str):
                continue
            labels = {"job": r["job"]}
            if isinstance(r.get("core_mask"), str):
                labels["core_mask"] = r["core_mask"]
            labels["op"] = op_of(r.get("workload") if isinstance(r.get("workload"), str)
                                 else self._workload)
            elapsed = _num(r.get("runtime"))
            for metric, key, scale in (("iops", "iops", 1.0), ("bandwidth_bytes", "mibps", MIB)):
                value = _num(r.get(key))
                if value is not None:
                    out.append(self.sample(metric, value * scale, labels, t, kind=SUMMARY,
                                           elapsed=elapsed))
            lat = {**labels, "measure": "lat"}
            for metric, key in (("latency_mean_seconds", "avg_latency_us"),
                                ("latency_min_seconds", "min_latency_us"),
                                ("latency_max_seconds", "max_latency_us")):
                value = _num(r.get(key))
                if value is not None:
                    out.append(self.sample(metric, value * US, lat, t, kind=SUMMARY,
                                           elapsed=elapsed))
        return out


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None
