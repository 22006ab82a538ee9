"""fio's JSON output: ``--output-format=json`` or ``json+``, one final report or a stream of
status dumps (``--status-interval=N``).

The stream is a sequence of JSON documents (pretty-printed by fio, or re-indented, compacted
by other programs: ``JsonStreamParser`` finds them on the bytes). Lines outside documents
(fio's ``fio: ...`` notes on a merged stderr, other tools' output) are skipped.

Every dump is cumulative since the job started (or since its counters were reset at the end of
``ramp_time``). Per job and direction (read/write/trim), an interval between two dumps gives:
IOPS = Δ``clat_ns.N`` / Δt (``total_ios`` also counts I/O in flight), bandwidth =
Δ``io_bytes`` / Δt, interval mean latencies from N and mean, and with json+ the interval latency
percentiles from the Δ of the sparse ``bins`` (the Δ histogram is also emitted, so that hosts'
histograms can be merged for exact fleet-wide percentiles).
Δt comes from the documents' ``timestamp_ms``. The first dump of a job (and the first dump after a
counter reset) covers the time the job has run, its largest per-direction ``runtime`` (ms).
The summary (fio's own whole-run figures) is read from the last document at the end of the stream.
See docs/tools/fio-json.md for the metrics, labels and rules.
"""

from __future__ import annotations

import re
from collections import Counter

from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, Sample, quantile_label
from benchtui.parsers._fio_json_bins import Running, load_arrays
from benchtui.parsers._fio_json_jobs import OPS, RESET_SLACK_MS, ZERO, JobState, Step
from benchtui.parsers._fio_json_live import Summed
from benchtui.parsers._fio_json_summary import summary_samples
from benchtui.parsers._json_stream import JsonStreamParser

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeGuard

#: The measure whose interval histogram is emitted (one per job and direction), first found.
HISTOGRAM_MEASURES = ("clat", "lat", "slat")
#: Interval percentiles always emitted (json+); a job's ``percentile_list`` adds to them.
DEFAULT_PERCENTILES = ("50", "90", "99", "99.9", "99.99")
_NS = 1e9
#: An interval whose work lasted within this share of the status interval is a whole one
#: (``duration`` None); otherwise (fio's final report, a job that ended) it says its duration.
_NOMINAL_TOLERANCE = 0.05
#: fio's ``elapsed`` is whole seconds rounded up: between two dumps of one run it may advance a
#: second more or less than the clock did.
_RUN_GAP_SLACK_MS = 2500

#: The intervals that carry their histogram (the others: percentiles only, no histograms wanted).
_HISTOGRAMS = (Running, Summed)

_DETECT_VERSION = re.compile(r'"fio version"\s*:\s*"[^"\n]*",')
_DETECT_JOBS = re.compile(r'[\n{,]\s*"jobs"\s*:\s*\[')


def _num(x: object) -> TypeGuard[int | float]:
    return type(x) is int or type(x) is float


class FioJsonParser(JsonStreamParser):
    """fio ``--output-format=json`` / ``json+``, with or without ``--status-interval``."""

    name: ClassVar[str] = "fio-json"
    tool: ClassVar[str] = "fio"
    aliases: ClassVar[tuple[str, ...]] = ("fio-json+",)
    description: ClassVar[str] = ("fio --output-format=json/json+ (status dumps: per-interval "
                                  "iops, bandwidth, latency percentiles; final summary)")

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._deferred: list[Sample] | None = None
        self._jobs: dict[str, JobState] = {}
        #: job label -> op -> the labels of its series (emptied with the jobs: a new run)
        self._series: dict[str, dict[str, SeriesLabels]] = {}
        self._last: dict[str, Any] | None = None
        self._last_t: float | None = None
        self._anchor_ms: float | None = None
        self._nominal_ms = 0.0  # the longest time between two documents: the status interval
        self._no_clock_warned = False
        self._run = 1  # runs in this stream: the 2nd and later are labelled run="2"...
        self._errors_warned: set[tuple[str, str]] = set()
        self._qs_cache: dict[object, list[tuple[float, str]]] = {}
        self._labels_cache: tuple[tuple[object, ...], list[str]] = ((), [])

    def ready(self) -> None:
        if self.histograms:  # its interval histograms are made in numpy (_fio_json_counts)
            load_arrays()

    @classmethod
    def detect(cls, head: str) -> int:
        i = head.find('"fio version"')
        if i < 0:
            return 0
        # "jobs" follows the header, after "global options" of any length
        if _DETECT_VERSION.match(head, i) and _DETECT_JOBS.search(head, i):
            return 95
        return 0

    def flush(self) -> list[Sample] | None:
        out = self.flush_pending()
        out += self._run_summary()
        return out or None

    def _run_summary(self) -> list[Sample]:
        """fio's own whole-run figures: the last document of the run."""
        if self._last is None:
            return []
        doc = self._last
        jobs = doc.get("jobs")
        assert isinstance(jobs, list)
        ts = doc.get("timestamp_ms")
        t = ts / 1000 if _num(ts) else self._last_t
        elapsed = self._elapsed(ts) if _num(ts) else None
        return _tag(summary_samples(self, doc, self._job_labels(jobs), t, elapsed), self._run)

    def wanted(self, doc: object) -> bool:
        return isinstance(doc, dict) and isinstance(doc.get("jobs"), list)

    def document(self, doc: Any, t: float | None) -> list[Sample] | None:
        try:
            return self._dump(doc, t)
        except (LookupError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            self.warn(f"malformed fio JSON document ({type(exc).__name__}: {exc})")
        except Exception as exc:  # noqa: BLE001 - as Parser.feed: never kill a live session
            self.warn(f"internal parser error ({type(exc).__name__}: {exc})")
        return None

    # --- one dump ----------------------------------------------------------------------------

    def _elapsed(self, ts_ms: int | float) -> float:
        anchor = self._anchor_ms
        return 0.0 if anchor is None else max(0.0, (ts_ms - anchor) / 1000)

    def _job_labels(self, jobs: list[Any]) -> list[str]:
        """Job names as labels; jobs that share a name (numjobs without group_reporting) get
        ``#0``, ``#1``... in the order fio lists them."""
        names = tuple(j.get("jobname") if isinstance(j, dict) else None for j in jobs)
        cached_names, labels = self._labels_cache
        if names == cached_names:
            return labels
        base = [str(n) if n is not None else f"job{i}" for i, n in enumerate(names)]
        if len(set(base)) != len(base):
            counts = Counter(base)
            seen: Counter[str] = Counter()
            for i, b in enumerate(base):
                if counts[b] > 1:
                    base[i] = f"{b}#{seen[b]}"
                    seen[b] += 1
        self._labels_cache = (names, base)
        return base

    def _quantile_list(self, job: dict[str, Any], doc: dict[str, Any]) -> list[tuple[float, str]]:
        opts = job.get("job options")
        plist = opts.get("percentile_list") if isinstance(opts, dict) else None
        if plist is None:
            glob = doc.get("global options")
            plist = glob.get("percentile_list") if isinstance(glob, dict) else None
        qs = self._qs_cache.get(plist)
        if qs is None:
            qs = _percentile_list(plist)
            self._qs_cache[plist] = qs
        return qs

    def _dump(self, doc: dict[str, Any], t: float | None) -> list[Sample] | None:
        jobs: list[Any] = doc["jobs"]
        ts = doc.get("timestamp_ms")
        if not _num(ts):
            ts = None
        # The first dump's interval (from the job's start) waits for a second dump: a lone
        # document is a final report, whose whole-run figures are the summary, not an interval.
        # A caller that knows it reads a status stream (self.stream) gets it at once.
        out: list[Sample] = []
        if self._last is not None and _another_run(self._last, doc):
            # several runs in one file (reports appended one after another): the previous
            # run's final report is its summary; this one starts afresh, labelled run="2"...
            out = self._run_summary()
            self._deferred = None  # a lone report: its whole-run figures are the summary
            self._last = None
            self._jobs.clear()
            self._series.clear()
            self._anchor_ms = None
            self._nominal_ms = 0.0
            self._run += 1
        first_doc = self._last is None and not self.stream
        if self._deferred is not None:
            out, self._deferred = self._deferred, None
        self._last = doc
        self._last_t = t if ts is None else ts / 1000
        if ts is not None and self._anchor_ms is None:
            longest = max((j.get("elapsed", 0) for j in jobs if isinstance(j, dict)
                           and _num(j.get("elapsed", 0))), default=0)
            self._anchor_ms = ts - max(longest, 0) * 1000
        labels = self._job_labels(jobs)
        if first_doc:
            self._deferred = []
        into = self._deferred if self._deferred is not None else out
        mine = len(into)  # (what is before: the previous run's summary, already labelled)
        for label, job in zip(labels, jobs, strict=True):
            if not isinstance(job, dict):
                continue
            err = job.get("error", 0)
            if err and (label, str(err)) not in self._errors_warned:
                self._errors_warned.add((label, str(err)))
                self.warn(f"fio job {label!r} reports error {err}")
            self._job(label, job, doc, ts, into)
        if self._run > 1:
            into[mine:] = _tag(into[mine:], self._run)
        return out

    def _job(self, label: str, job: dict[str, Any], doc: dict[str, Any],
             ts: int | float | None, out: list[Sample]) -> None:
        st = self._jobs.get(label)
        if st is None:
            st = self._jobs[label] = JobState(ts)
        step = st.step(job, ts, histogram=self.histograms)
        if not st.active:
            return
        if ts is None:
            # fio 2.1 prints no timestamp_ms: a lone final report is fine (its summary says
            # it all); a stream of them has no clock for its intervals: said once
            if not step.first and not self._no_clock_warned:
                self._no_clock_warned = True
                self.warn(f"job {label!r}: dumps without timestamp_ms (fio 2.1), intervals "
                          "skipped; the summary is read")
            return
        dts, span = step.dts, step.span_ms
        if step.reset:
            if span <= 0 or (not step.first and (dts is None or span > dts + RESET_SLACK_MS)):
                self.warn(f"job {label!r}: counters restarted, interval skipped")
                return
            step.duration = span / 1000  # from the job's start: never a whole interval
        else:
            if dts is None or dts <= 0:
                self.warn(f"job {label!r}: time did not advance between dumps, interval skipped")
                return
            self._nominal_ms = max(self._nominal_ms, dts)
            if step.finished:
                return  # no completion, and the job was not running: it finished
            nominal = self._nominal_ms
            if abs(span - nominal) > nominal * _NOMINAL_TOLERANCE:
                step.duration = span / 1000
        self._emit(label, step, job, doc, out)

    def _emit(self, label: str, step: Step, job: dict[str, Any], doc: dict[str, Any],
              out: list[Sample]) -> None:
        cur, prev, deltas, span = step.cur, step.prev, step.deltas, step.span_ms / 1000
        active, dur, ts = step.active, step.duration, step.ts
        assert ts is not None
        t, elapsed = ts / 1000, self._elapsed(ts)
        host, tool = self.host, self.tool
        add = out.append
        qs: list[tuple[float, str]] | None = None
        series = self._series.get(label)
        if series is None:
            series = self._series[label] = {}
        for op in OPS:
            c = cur.get(op)
            if c is None or op not in active:
                continue
            names = series.get(op)
            if names is None:
                names = series[op] = SeriesLabels(label, op)
            p = prev.get(op, ZERO)
            add(Sample(t, tool, INTERVAL, "iops", (c.n - p.n) / span, names.direction, host,
                       elapsed, None, dur))
            add(Sample(t, tool, INTERVAL, "bandwidth_bytes", (c.io - p.io) / span,
                       names.direction, host, elapsed, None, dur))
            before = p.stats
            for measure, (n2, mean2) in c.stats.items():
                n1, mean1 = before.get(measure, (0, 0.0))
                if n2 > n1 and (mean := (mean2 * n2 - mean1 * n1) / (n2 - n1) / _NS) >= 0:
                    add(Sample(t, tool, INTERVAL, "latency_mean_seconds", mean,
                               names.measure(measure), host, elapsed, None, dur))
            if not c.bins:
                continue
            if qs is None:
                qs = self._quantile_list(job, doc)
            histogram = self.histograms
            for measure in HISTOGRAM_MEASURES:
                delta = deltas.get((op, measure))
                if delta is None or delta.total <= 0:
                    continue
                of = names.quantiles(measure)
                for q, v in delta.quantiles(qs):
                    add(Sample(t, tool, INTERVAL, "latency_seconds", v,
                               of.get(q) or names.quantile(measure, q), host,
                               elapsed, None, dur))
                if histogram and isinstance(delta, _HISTOGRAMS):  # one per job and
                    histogram = False  # direction: the first measure of the list
                    add(Sample(t, tool, INTERVAL, HISTOGRAM_METRIC, float(delta.total),
                               names.measure(measure), host, elapsed,
                               delta.histogram(self.histogram_bits), dur))


class SeriesLabels:
    """The labels of one job's direction's series, made once and shared by their samples
    (a sample's labels are never changed in place: whoever adds one makes a new dict, as
    session/sinks.py does), so that a dump's samples cost no dict each."""

    __slots__ = ("_measures", "_quantiles", "direction")

    def __init__(self, job: str, op: str) -> None:
        self.direction = {"job": job, "op": op}
        self._measures: dict[str, dict[str, str]] = {}
        self._quantiles: dict[str, dict[str, dict[str, str]]] = {}

    def measure(self, measure: str) -> dict[str, str]:
        found = self._measures.get(measure)
        if found is None:
            found = self._measures[measure] = {**self.direction, "measure": measure}
        return found

    def quantiles(self, measure: str) -> dict[str, dict[str, str]]:
        """quantile label -> labels, of the quantiles made so far (``quantile`` adds)."""
        found = self._quantiles.get(measure)
        if found is None:
            found = self._quantiles[measure] = {}
        return found

    def quantile(self, measure: str, q: str) -> dict[str, str]:
        made = self.quantiles(measure)[q] = {**self.direction, "measure": measure, "quantile": q}
        return made


def _longest_elapsed(doc: dict[str, Any]) -> float | None:
    found = [e for j in doc["jobs"] if isinstance(j, dict) and _num(e := j.get("elapsed"))]
    return max(found) if found else None


def _another_run(prev: dict[str, Any], doc: dict[str, Any]) -> bool:
    """Whether ``doc`` is the report of another fio run than ``prev`` (reports appended to one
    file), not a status dump of the same run: other jobs; fio's ``elapsed`` (seconds since it
    started, which never goes down within a run) went down; or far more time passed between
    the two documents than fio's ``elapsed`` advanced (a later run, started afresh)."""
    names = [j.get("jobname") for j in prev["jobs"] if isinstance(j, dict)]
    if names != [j.get("jobname") for j in doc["jobs"] if isinstance(j, dict)]:
        return True
    e1, e2 = _longest_elapsed(prev), _longest_elapsed(doc)
    if e1 is None or e2 is None:
        return False
    if e2 < e1:
        return True
    t1, t2 = prev.get("timestamp_ms"), doc.get("timestamp_ms")
    return _num(t1) and _num(t2) and t2 - t1 > (e2 - e1) * 1000 + _RUN_GAP_SLACK_MS


def _tag(samples: list[Sample], run: int) -> list[Sample]:
    if run > 1:
        for sample in samples:
            sample.labels = {**sample.labels, "run": str(run)}
    return samples


def _percentile_list(plist: object) -> list[tuple[float, str]]:
    """Default percentiles plus a job's ``percentile_list`` ("99.5:99.99"), as (q, label)."""
    wanted = list(DEFAULT_PERCENTILES)
    if isinstance(plist, str):
        for part in re.split(r"[:,]", plist):
            try:
                p = float(part)
            except ValueError:
                continue
            if 0 < p <= 100:
                wanted.append(part.strip())
    found: dict[str, float] = {}
    for text in wanted:
        found.setdefault(quantile_label(text), float(text) / 100)
    return sorted(((q, label) for label, q in found.items()), key=lambda x: x[0])
