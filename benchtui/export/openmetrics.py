"""Recorded samples as an OpenMetrics text file, for ``benchtui dump --format openmetrics`` and
``promtool tsdb create-blocks-from openmetrics FILE DIR`` (backfilling a session into
Prometheus).

Names and labels are those of the live exporter (export/metric_names.py), so dashboards work on
backfilled sessions too. Each sample becomes a point with its own timestamp (milliseconds, as
Prometheus keeps them). Interval latency histograms become ``benchtui_op_latency_seconds``
counters in the fixed bucket layout, summed over time per series as the live exporter does.

OpenMetrics wants each metric family written in one piece and, inside it, each series' points
together in time order, while a recording is read in time order across every series: the
writer transposes. To keep memory flat on long sessions it spools the points to a temporary
SQLite file (series id, time, value) and writes everything on ``close()``. Points without a
time (``t`` null) cannot be placed and are counted in ``skipped``; a second point of a series in
the same millisecond is dropped (Prometheus would reject it), counted likewise.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import TextIO

from benchtui.export.backfill_fleet import FleetQuantiles
from benchtui.export.backfill_health import health_points
from benchtui.export.counters import (
    COUNTED,
    OpsCounters,
    counter_labels,
    whole_interval_rate,
)
from benchtui.export.labels import SeriesLabels
from benchtui.export.latency_buckets import LATENCY_BUCKETS, SLOTS, BucketCounts
from benchtui.export.metric_names import (
    FLEET_LATENCY_HELP,
    FLEET_LATENCY_NAME,
    HISTOGRAM_NAME,
    METRICS,
    family_help,
    family_name,
    family_spec,
    format_value,
)
from benchtui.model.events import Event
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import INTERVAL, Sample

_LE = (*(format_value(b) for b in LATENCY_BUCKETS), "+Inf")
_BATCH = 20_000


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _label_text(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape_label(v)}"' for k, v in labels.items()) + "}"


def _timestamp(t_ms: int) -> str:
    return f"{t_ms // 1000}.{t_ms % 1000:03d}"


class OpenMetricsWriter:
    """``write()`` samples (any number of batches, any order), then ``close()`` writes the
    file and ``# EOF``. Usable as a context manager (it closes on success only: a dump that
    failed half-way must not look complete)."""

    def __init__(self, out: TextIO, *, spool_dir: str | None = None,
                 matrix: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self._out = out
        self._labeler = SeriesLabels(matrix)
        self._counters = OpsCounters()
        self._counter_help = dict(COUNTED.values())
        #: host -> the times of its samples (for the health series, ``add_health``).
        self._sample_times: dict[str, array[float]] = {}
        #: Families of ``add_health``: name -> (type, unit, help); series id -> sample name.
        self._health_meta: dict[str, tuple[str, str, str]] = {}
        self._sample_names: dict[int, str] = {}
        #: series id -> (time, value) of its last per-interval point (partial intervals).
        self._last_points: dict[int, tuple[float, float]] = {}
        self._fleet = FleetQuantiles()
        fd, self._spool_path = tempfile.mkstemp(prefix="benchtui-om-", suffix=".sqlite",
                                                dir=spool_dir)
        os.close(fd)
        self._db = sqlite3.connect(self._spool_path)
        self._db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                               "CREATE TABLE p (s INTEGER, t INTEGER, q TEXT, v REAL, h BLOB);")
        #: (family, sorted labels) -> series id; id -> (family, labels).
        self._ids: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
        self._series: list[tuple[str, dict[str, str]]] = []
        #: (metric, kind, host, tool, labels as given) -> (series id, quantile): the samples of
        #: a series repeat, so their names and labels are worked out once.
        self._known: dict[tuple[object, ...], tuple[int, str | None]] = {}
        self._rows: list[tuple[int, int, str | None, float, bytes | None]] = []
        self._summaries = {name for spec in METRICS.values() if spec.type == "summary"
                           for name in (spec.name, spec.result_name)}
        self.written = 0
        self.skipped: Counter[str] = Counter()
        self._closed = False

    def write(self, samples: Iterable[Sample]) -> int:
        """Take samples in; returns how many will be written."""
        n = 0
        rows = self._rows
        known = self._known
        for s in samples:
            if s.t is None:
                self.skipped["no time"] += 1
                continue
            seen = (s.metric, s.kind, s.host, s.tool, tuple(s.labels.items()))
            where = known.get(seen)
            if where is None:
                where = known[seen] = self._series_of(s)
            sid, quantile = where
            if sid < 0:
                self.skipped[f"no exported name for {s.metric}"] += 1
                continue
            blob = None
            if self._series[sid][0] == HISTOGRAM_NAME:
                if s.histogram is None:
                    continue
                blob = _pack(s.histogram)
                for point in self._fleet.add(s):
                    self._add_fleet_point(*point)
            value = float(s.value)
            if s.kind == INTERVAL and quantile is None and blob is None:
                value = self._whole_interval(sid, s.t, value, s.duration)
            rows.append((sid, round(s.t * 1000), quantile, value, blob))
            times = self._sample_times.get(s.host)
            if times is None:
                times = self._sample_times[s.host] = array("d")
            times.append(s.t)
            n += 1
            counted = self._counters.add(s)
            if counted is not None:
                rows.append((self._counter_series(counted[0]), round(s.t * 1000), None,
                             counted[1], None))
            if len(rows) >= _BATCH:
                self._flush()
        return n

    def _series_of(self, s: Sample) -> tuple[int, str | None]:
        """(series id, quantile) of a sample's series; (-1, None) when it is not exported."""
        family = family_name(s)
        if family is None:
            return -1, None
        labels = self._labeler.of(s.host, s.tool, s.labels, metric=s.metric, kind=s.kind)
        # A summary's quantiles are one point of one series (OpenMetrics groups them).
        quantile = labels.pop("quantile", None) if family in self._summaries else None
        key = (family, tuple(sorted(labels.items())))
        sid = self._ids.get(key)
        if sid is None:
            sid = self._ids[key] = len(self._series)
            self._series.append((family, labels))
        return sid, quantile

    def _add_fleet_point(self, t: float, tool: str, labels: dict[str, str], q: float,
                         value: float) -> None:
        base = self._labeler.of("", tool, labels)
        del base["host"]
        key = (FLEET_LATENCY_NAME, tuple(sorted(base.items())))
        sid = self._ids.get(key)
        if sid is None:
            sid = self._ids[key] = len(self._series)
            self._series.append((FLEET_LATENCY_NAME, base))
        self._rows.append((sid, round(t * 1000), format_value(q), value, None))

    def _whole_interval(self, sid: int, t: float, value: float, duration: float | None
                        ) -> float:
        """A gauge's point as the live exporter shows it: a partial interval's rate is
        blended with the point before over the last whole interval (``Sample.duration``)."""
        previous = self._last_points.get(sid)
        self._last_points[sid] = (t, value)
        if duration is None or previous is None:
            return value
        interval = min(max(t - previous[0], 1.0), 60.0)
        return whole_interval_rate(value, duration, previous[1], interval)

    def add_health(self, name: str, events: Iterable[Event], *, t0: float | None = None,
                   t1: float | None = None) -> None:
        """Also write the session and health series (``backfill_health``) of the session
        named ``name`` whose events are ``events`` (points from ``t0`` to ``t1`` when given);
        call after the samples are written."""
        times = {host: sorted(t) for host, t in self._sample_times.items()}
        for t, family in health_points(name, events, times, self._labeler.step_labels):
            if (t0 is not None and t < t0) or (t1 is not None and t > t1):
                continue
            self._health_meta.setdefault(family.name, (family.type, family.unit, family.help))
            for sample_name, labels, _text, value in family.samples:
                key = (family.name, tuple(sorted({**labels, "__sample": sample_name}.items())))
                sid = self._ids.get(key)
                if sid is None:
                    sid = self._ids[key] = len(self._series)
                    self._series.append((family.name, dict(labels)))
                    self._sample_names[sid] = sample_name
                self._rows.append((sid, round(t * 1000), None, float(value), None))
            if len(self._rows) >= _BATCH:
                self._flush()

    def _counter_series(self, counter: tuple[str, str, str, str]) -> int:
        labels = counter_labels(counter)
        key = (counter[0], tuple(sorted(labels.items())))
        sid = self._ids.get(key)
        if sid is None:
            sid = self._ids[key] = len(self._series)
            self._series.append((counter[0], labels))
        return sid

    def _flush(self) -> None:
        if self._rows:
            self._db.executemany("INSERT INTO p VALUES (?, ?, ?, ?, ?)", self._rows)
            self._rows = []

    def close(self) -> None:
        """Write every family, then ``# EOF``; remove the spool file."""
        if self._closed:
            return
        self._closed = True
        try:
            for point in self._fleet.finish():
                self._add_fleet_point(*point)
            self._flush()
            self._db.execute("CREATE INDEX p_st ON p (s, t)")
            by_family: dict[str, list[int]] = {}
            for sid, (family, _labels) in enumerate(self._series):
                by_family.setdefault(family, []).append(sid)
            for family in sorted(by_family):
                self._write_family(family, sorted(
                    by_family[family], key=lambda i: sorted(self._series[i][1].items())))
            self._out.write("# EOF\n")
        finally:
            self.discard()

    def discard(self) -> None:
        """Drop the spool without writing (also done by ``close``)."""
        self._closed = True
        self._db.close()
        if os.path.exists(self._spool_path):
            os.unlink(self._spool_path)

    def __enter__(self) -> OpenMetricsWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.discard()

    # --- output ---------------------------------------------------------------------------------

    def _write_family(self, family: str, ids: list[int]) -> None:
        if family in self._health_meta:
            self._write_health(family, ids)
            return
        spec = family_spec(family)
        counter = family in self._counter_help
        fleet = family == FLEET_LATENCY_NAME
        typ = "histogram" if family == HISTOGRAM_NAME else "counter" if counter else \
            "summary" if fleet else (spec.type if spec else "gauge")
        unit = "seconds" if family in (HISTOGRAM_NAME, FLEET_LATENCY_NAME) else \
            (spec.unit if spec else "")
        out = self._out
        out.write(f"# TYPE {family} {typ}\n")
        if unit:
            out.write(f"# UNIT {family} {unit}\n")
        doc = self._counter_help[family] if counter else FLEET_LATENCY_HELP if fleet else \
            family_help(family)
        out.write(f"# HELP {family} {_escape_help(doc)}\n")
        for sid in ids:
            labels = self._series[sid][1]
            if typ == "histogram":
                self._write_histogram(family, labels, self._points(sid))
                continue
            if counter:
                self._write_counter(family, labels, sid)
                continue
            plain = f"{family}{_label_text(labels)} "
            lines = []
            for t, q, v, _h in self._points(sid):
                text = plain if q is None else \
                    f"{family}{_label_text({**labels, 'quantile': q})} "
                lines.append(f"{text}{format_value(v)} {_timestamp(t)}\n")
            self.written += len(lines)
            out.writelines(lines)

    def _write_health(self, family: str, ids: list[int]) -> None:
        typ, unit, doc = self._health_meta[family]
        out = self._out
        out.write(f"# TYPE {family} {typ}\n")
        if unit:
            out.write(f"# UNIT {family} {unit}\n")
        out.write(f"# HELP {family} {_escape_help(doc)}\n")
        for sid in ids:
            prefix = f"{self._sample_names[sid]}{_label_text(self._series[sid][1])} "
            lines = [f"{prefix}{format_value(v)} {_timestamp(t)}\n"
                     for t, _q, v, _h in self._points(sid)]
            self.written += len(lines)
            out.writelines(lines)

    def _write_counter(self, family: str, labels: dict[str, str], sid: int) -> None:
        """A counter's running total at each point (its rows hold what each point added;
        points of one millisecond add up, as they are one moment)."""
        prefix = f"{family}_total{_label_text(labels)} "
        total = 0.0
        lines: list[str] = []
        cursor = self._db.execute("SELECT t, SUM(v) FROM p WHERE s = ? GROUP BY t ORDER BY t",
                                  (sid,))
        for t, added in cursor:
            total += added
            lines.append(f"{prefix}{format_value(total)} {_timestamp(t)}\n")
        self.written += len(lines)
        self._out.writelines(lines)

    def _points(self, sid: int) -> Iterator[tuple[int, str | None, float, bytes | None]]:
        """A series' points in time order (a summary's quantiles in order), one per
        millisecond (and quantile)."""
        last = None
        cursor = self._db.execute(
            "SELECT t, q, v, h FROM p WHERE s = ? ORDER BY t, CAST(q AS REAL), rowid", (sid,))
        for t, q, v, h in cursor:
            if (t, q) == last:
                self.skipped["two points in one millisecond"] += 1
                continue
            last = (t, q)
            yield t, q, v, h

    def _write_histogram(self, family: str, labels: dict[str, str],
                         points: Iterable[tuple[int, str | None, float, bytes | None]]
                         ) -> None:
        counters = BucketCounts()
        bucket_prefixes = [f"{family}_bucket{_label_text({**labels, 'le': le})} " for le in _LE]
        tail = _label_text(labels)
        out = self._out
        for t, _q, _v, blob in points:
            if blob is None:
                continue
            _unpack_into(blob, counters)
            ts = _timestamp(t)
            lines = [f"{prefix}{n} {ts}\n"
                     for prefix, n in zip(bucket_prefixes, counters.cumulative(), strict=True)]
            lines.append(f"{family}_count{tail} {counters.count} {ts}\n")
            lines.append(f"{family}_sum{tail} {format_value(counters.sum_seconds)} {ts}\n")
            out.writelines(lines)
            self.written += 1


def _pack(histogram: LatencyHistogram) -> bytes:
    """One interval's histogram in the fixed buckets: SLOTS counts, the count, then the sum
    in nanoseconds (integers, so that summing them later is exact)."""
    one = BucketCounts()
    one.add(histogram)
    return array("q", [*one.counts, one.count, one.sum_ns]).tobytes()


def _unpack_into(blob: bytes, counters: BucketCounts) -> None:
    values = array("q")
    values.frombytes(blob)
    for i in range(SLOTS):
        counters.counts[i] += values[i]
    counters.count += values[SLOTS]
    counters.sum_ns += values[SLOTS + 1]


def write_openmetrics(samples: Iterable[Sample], out: TextIO, *, spool_dir: str | None = None,
                      matrix: Mapping[str, Mapping[str, str]] | None = None
                      ) -> OpenMetricsWriter:
    """Write ``samples`` as a whole OpenMetrics file; returns the closed writer (counts)."""
    with OpenMetricsWriter(out, spool_dir=spool_dir, matrix=matrix) as writer:
        writer.write(samples)
    return writer
