"""The OpenMetrics writer of ``benchtui dump --format openmetrics``: real tool outputs through
the real parsers, written, backfilled by the real ``promtool tsdb create-blocks-from
openmetrics``, and read back with ``promtool tsdb dump``: every value at its time."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest

from benchtui.export.labels import SeriesLabels
from benchtui.export.latency_buckets import BucketCounts
from benchtui.export.metric_names import HISTOGRAM_NAME, family_name
from benchtui.export.openmetrics import OpenMetricsWriter, write_openmetrics
from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, Sample
from tests.export_support import TOOL_FIXTURES, fixture_samples
from tests.helpers import require_tool

_DUMP_LINE = re.compile(r"^\{(.*)\} (\S+) (-?\d+)$")
#: The text format's ABNF (OpenMetrics 1.0, "Text format"): a sample line, and a metadata line.
_REAL = r"[+-]?(?:\d+(?:\.\d*)?|\d*\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER = rf"(?:{_REAL}|[+-]?(?i:inf|infinity)|(?i:nan))"
_ESCAPED = r'(?:[^"\\\n]|\\.)*'
_LABEL_ABNF = rf'[a-zA-Z_][a-zA-Z0-9_]*="{_ESCAPED}"'
_LABELS = rf"\{{(?:{_LABEL_ABNF}(?:,{_LABEL_ABNF})*)?\}}"
_ABNF_SAMPLE = re.compile(rf"^[a-zA-Z_:][a-zA-Z0-9_:]*(?:{_LABELS})? {_NUMBER}(?: {_REAL})?$")
_ABNF_META = re.compile(r"^# (?:TYPE \S+ (?:counter|gauge|histogram|gaugehistogram|stateset|"
                        r"info|summary|unknown)|UNIT \S+ [a-zA-Z0-9_:]*|HELP \S+ .*)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
Point = tuple[str, tuple[tuple[str, str], ...], int]


def real_samples() -> list[Sample]:
    samples: list[Sample] = []
    for i, host in enumerate(("db1", "db2")):
        for path in TOOL_FIXTURES:
            samples.extend(fixture_samples(path, host, t0=1.8e9 + i * 0.5))
    return samples


def backfill(text: str, tmp_path: Path) -> dict[Point, float]:
    """promtool's blocks of ``text``, dumped: (name, labels, t_ms) -> value."""
    promtool = require_tool("promtool")
    source = tmp_path / "dump.om"
    source.write_text(text, encoding="utf-8")
    blocks = tmp_path / "blocks"
    made = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source),
                           str(blocks)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert made.returncode == 0, made.stdout + made.stderr
    (blocks / "wal").mkdir()  # promtool tsdb dump opens the directory as a database
    dumped = subprocess.run([promtool, "tsdb", "dump", str(blocks)], capture_output=True,
                            text=True, timeout=120, check=True)
    points: dict[Point, float] = {}
    for line in dumped.stdout.splitlines():
        m = _DUMP_LINE.match(line)
        assert m, line
        labels = dict(_LABEL.findall(m.group(1)))
        name = labels.pop("__name__")
        points[(name, tuple(sorted(labels.items())), int(m.group(3)))] = float(m.group(2))
    return points


def test_real_outputs_backfill_with_promtool_value_for_value(tmp_path: Path) -> None:
    samples = real_samples()
    out = io.StringIO()
    writer = write_openmetrics(samples, out, spool_dir=str(tmp_path))
    assert not writer.skipped
    points = backfill(out.getvalue(), tmp_path)
    counters = {k: v for k, v in points.items() if k[0].endswith("_total")}
    fleet = {k: v for k, v in points.items() if k[0] == "benchtui_fleet_latency_seconds"}
    points = {k: v for k, v in points.items() if k not in counters and k not in fleet}
    assert fleet  # checked by test_exact_fleet_percentiles_are_written_once_a_second_as_live
    assert {k[0] for k in counters} == {"benchtui_ops_total", "benchtui_bytes_total"}
    expected = blended = 0
    previous: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, float]] = {}
    running: dict[tuple[tuple[str, str], ...], BucketCounts] = {}
    labeler = SeriesLabels()
    for s in samples:
        assert s.t is not None
        t_ms = round(s.t * 1000)
        labels = labeler.of(s.host, s.tool, s.labels, metric=s.metric, kind=s.kind)
        if s.metric == HISTOGRAM_METRIC:
            assert s.histogram is not None
            counts = running.setdefault(tuple(sorted(labels.items())), BucketCounts())
            counts.add(s.histogram)
            ident = tuple(sorted(labels.items()))
            assert points[(HISTOGRAM_NAME + "_count", ident, t_ms)] == counts.count
            inf = tuple(sorted({**labels, "le": "+Inf"}.items()))
            assert points[(HISTOGRAM_NAME + "_bucket", inf, t_ms)] == counts.count
            expected += 46  # 44 buckets, count and sum
            continue
        name = family_name(s)
        assert name is not None
        ident = tuple(sorted(labels.items()))
        value, before = s.value, previous.get((name, ident))
        previous[(name, ident)] = (s.t, s.value)
        if s.duration is not None and before is not None and "quantile" not in s.labels:
            # a partial interval, as the live gauge: blended with the point before over the
            # last whole interval (the gap to it, never under a second)
            interval = max(s.t - before[0], 1.0)
            value = (value * s.duration + before[1] * (interval - s.duration)) / interval
            blended += 1
        assert points[(name, ident, t_ms)] == pytest.approx(value), (name, labels)
        expected += 1
    assert len(points) == expected and blended > 0
    assert {p[0] for p in points} >= {"benchtui_iops", "benchtui_disk_util_ratio",
                                       "benchtui_net_jitter_seconds", "benchtui_latency_seconds",
                                       "benchtui_result_benchmark_score",
                                       "benchtui_mem_bandwidth_bytes"}


def _group(name: str, labels: dict[str, str], families: dict[str, str]) -> tuple[str, object]:
    family = next(f for f in families if name == f or (
        name.startswith(f + "_") and name[len(f):] in ("_bucket", "_count", "_sum", "_total")))
    rest = {k: v for k, v in labels.items() if k not in ("le", "quantile")}
    return family, tuple(sorted(rest.items()))


def test_the_file_is_strict_openmetrics() -> None:
    """What promtool does not check: each family in one piece, each series' points together
    and in time order, a summary's quantiles and a histogram's buckets as one point."""
    out = io.StringIO()
    write_openmetrics(real_samples(), out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "# EOF" and lines.count("# EOF") == 1
    # The grammar: timestamps are seconds, a real number (``1520879607.789``, as the spec's
    # own examples; ``promtool check metrics`` reads the Prometheus text format 0.0.4, whose
    # timestamps are integer milliseconds, and so rejects any OpenMetrics file that has them).
    for line in lines[:-1]:
        assert (_ABNF_META if line.startswith("#") else _ABNF_SAMPLE).match(line), line
    # Metadata in the spec's order (TYPE, UNIT, HELP); a unit is the name's suffix; a
    # histogram's buckets and count are integers.
    meta = [line.split(" ", 3) for line in lines[:-1] if line.startswith("#")]
    for name in {m[2] for m in meta}:
        kinds = [m[1] for m in meta if m[2] == name]
        assert kinds == sorted(kinds, key=("TYPE", "UNIT", "HELP").index), (name, kinds)
    for _, _, name, unit in (m for m in meta if m[1] == "UNIT"):
        assert name.endswith(f"_{unit}"), name
    for line in lines:
        if line.startswith((f"{HISTOGRAM_NAME}_bucket", f"{HISTOGRAM_NAME}_count")):
            assert re.fullmatch(r"\d+", line.split(" ")[-2]), line
    families: dict[str, str] = {}
    current: str | None = None
    seen_groups: set[object] = set()
    group: object = None
    last_t = -1.0
    for line in lines[:-1]:
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert name not in families, f"family {name} written twice"
            families[name] = typ
            current = name
            continue
        if line.startswith("#"):
            assert line.split(" ")[2] == current, line
            continue
        m = re.match(r"^(\w+)\{(.*)\} (\S+) (\d+\.\d{3})$", line)
        assert m, line
        labels = dict(_LABEL.findall(m.group(2)))
        fam, ident = _group(m.group(1), labels, families)
        assert fam == current, line
        t = float(m.group(4))
        if (fam, ident) != group:
            assert (fam, ident) not in seen_groups, f"series written in two pieces: {line}"
            seen_groups.add((fam, ident))
            group, last_t = (fam, ident), -1.0
        assert t >= last_t, f"time went back: {line}"
        last_t = t
    assert families[HISTOGRAM_NAME] == "histogram"
    assert families["benchtui_latency_seconds"] == "summary"
    assert families["benchtui_iops"] == "gauge"


def test_points_without_time_and_repeats_are_counted_not_written(tmp_path: Path) -> None:
    base = {"job": "j", "op": "read"}
    samples = [Sample(None, "fio", INTERVAL, "iops", 1.0, base, host="h", elapsed=1.0),
               Sample(1.8e9, "fio", INTERVAL, "iops", 2.0, base, host="h"),
               Sample(1.8e9 + 0.0001, "fio", INTERVAL, "iops", 3.0, base, host="h"),
               Sample(1.8e9 + 1, "fio", INTERVAL, "frobs", 4.0, base, host="h")]
    out = io.StringIO()
    writer = write_openmetrics(samples, out, spool_dir=str(tmp_path))
    assert dict(writer.skipped) == {"no time": 1, "two points in one millisecond": 1,
                                    "no exported name for frobs": 1}
    assert writer.written == 2  # the gauge's point and benchtui_ops_total's
    assert list(tmp_path.iterdir()) == []  # the spool is gone
    assert 'benchtui_iops{host="h",tool="fio",fio_job="j",op="read"} 2.0 1800000000.000' \
        in out.getvalue()
    # the counter keeps the ops of the point dropped from the gauge (3/s for 0.1 ms)
    assert 'benchtui_ops_total{host="h",tool="fio",op="read"} 2.00029' in out.getvalue()


def test_awkward_label_values_survive_the_round_trip(tmp_path: Path) -> None:
    odd = 'a "quoted" \\ back\nslash'
    sample = Sample(1.8e9, "fio", INTERVAL, "iops", 7.5, {"job": odd, "op": "read"}, host="h")
    out = io.StringIO()
    write_openmetrics([sample], out)
    points = backfill(out.getvalue(), tmp_path)
    (name, labels, _t), value = next(p for p in points.items() if p[0][0] == "benchtui_iops")
    assert name == "benchtui_iops" and value == 7.5
    # promtool dump prints label values Go-quoted: compare after unquoting.
    job = dict(labels)["fio_job"].encode().decode("unicode_escape")
    assert job == odd


def test_a_failed_dump_leaves_no_spool_and_no_eof(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(RuntimeError), OpenMetricsWriter(out, spool_dir=str(tmp_path)) as w:
        w.write(real_samples()[:10])
        raise RuntimeError("reader failed")
    assert list(tmp_path.iterdir()) == []
    assert "# EOF" not in out.getvalue()


def test_a_partial_interval_is_written_as_the_live_exporter_shows_it() -> None:
    base = {"job": "j", "op": "read"}
    samples = [Sample(1.8e9, "fio", INTERVAL, "iops", 1000.0, base, host="h"),
               Sample(1.8e9 + 1, "fio", INTERVAL, "iops", 1000.0, base, host="h"),
               Sample(1.8e9 + 1.25, "fio", INTERVAL, "iops", 4000.0, base, host="h",
                      duration=0.25)]
    out = io.StringIO()
    write_openmetrics(samples, out)
    text = out.getvalue()
    assert 'benchtui_iops{host="h",tool="fio",fio_job="j",op="read"} 1750.0 1800000001.250' \
        in text  # 0.25 s at 4000/s, then 0.75 s at 1000/s: not a 4000/s spike
    assert 'benchtui_ops_total{host="h",tool="fio",op="read"} 3000.0 1800000001.250' in text


def test_exact_fleet_percentiles_are_written_once_a_second_as_live() -> None:
    from benchtui.model.histogram import LatencyHistogram

    samples = [s for h in ("a", "b")
               for s in fixture_samples("fio_json/randread_randwrite.jsonplus.txt", h)
               if s.metric == HISTOGRAM_METRIC]
    samples.sort(key=lambda s: s.t or 0.0)
    out = io.StringIO()
    write_openmetrics(samples, out)
    lines = [x for x in out.getvalue().splitlines()
             if x.startswith("benchtui_fleet_latency_seconds{")]
    assert lines and all('host="' not in x for x in lines)
    # the last point: both hosts' latest histograms merged, quantile as fio takes it
    latest: dict[tuple[str, str], LatencyHistogram] = {}
    for s in samples:
        assert s.histogram is not None
        latest[(s.host, s.labels["job"] + s.labels["op"])] = s.histogram
    last = lines[-1]
    assert 'quantile="0.9999"' in last
    job_op = re.search(r'fio_job="([^"]+)".*op="([^"]+)"', last)
    assert job_op
    merged = LatencyHistogram.merged([h for (host, jo), h in latest.items()
                                      if jo == job_op.group(1) + job_op.group(2)])
    assert float(last.split(" ")[1]) == merged.quantiles([0.9999])[0.9999]
