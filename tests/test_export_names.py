"""The sample metric -> Prometheus name table: complete (every metric the docs list and the
parsers emit has a proper name), following Prometheus conventions, and the bucket layout."""

from __future__ import annotations

import itertools
import re

import pytest

from benchtui.export.labels import SeriesLabels
from benchtui.export.latency_buckets import (
    LATENCY_BUCKETS,
    LATENCY_BUCKETS_NS,
    SLOTS,
    BucketCounts,
    bucket_index,
)
from benchtui.export.metric_names import (
    HISTOGRAM_NAME,
    METRICS,
    family_help,
    family_name,
    series_labels,
)
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, SUMMARY, Sample
from tests.export_support import TOOL_FIXTURES, fixture_samples, repo_root
from tests.helpers import FIXTURES

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def _documented_metrics() -> set[str]:
    """Metric names in the first column of the metric tables of docs/SAMPLES.md and
    docs/tools/*.md (the docs of every parser)."""
    docs = repo_root() / "docs"
    names: set[str] = set()
    for path in [docs / "SAMPLES.md", *sorted((docs / "tools").glob("*.md"))]:
        in_table = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("|"):
                in_table = False
                continue
            first = line.strip("|").split("|")[0].strip()
            if first == "metric":
                in_table = True
            elif in_table and not set(first) <= set("-: "):
                names.update(re.findall(r"`([a-z_]+)`", first))
    return names


def test_every_documented_metric_has_a_name() -> None:
    documented = _documented_metrics()
    assert len(documented) >= 30, documented  # the docs were read
    missing = documented - set(METRICS) - {HISTOGRAM_METRIC}
    assert not missing, f"documented sample metrics with no Prometheus name: {missing}"


def test_every_metric_the_parsers_emit_on_real_outputs_has_a_name() -> None:
    seen: set[str] = set()
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".md", ".py") or not path.is_file():
            continue
        try:
            samples = fixture_samples(str(path.relative_to(FIXTURES)), "h", step=None)
        except AssertionError:  # a file no parser recognises (e.g. a capture script's input)
            continue
        seen.update(s.metric for s in samples)
    assert {"iops", "disk_util_ratio", "net_bandwidth_bytes", "benchmark_score",
            HISTOGRAM_METRIC} <= seen
    assert not seen - set(METRICS) - {HISTOGRAM_METRIC}


def test_names_follow_prometheus_conventions() -> None:
    for spec in METRICS.values():
        for name in (spec.name, spec.result_name):
            assert _NAME.match(name), name
            assert name.startswith("benchtui_")
            assert not name.endswith("_total"), f"{name}: _total is for counters"
            if spec.unit:
                assert name.endswith("_" + spec.unit), (name, spec.unit)
        # The base unit is in the name wherever the value has one.
        for unit in ("seconds", "bytes", "ratio"):
            if unit in spec.metric:
                assert spec.metric.endswith(unit), spec
        assert spec.type in ("gauge", "summary")
        assert family_help(spec.name) and family_help(spec.result_name)
    assert METRICS["latency_seconds"].type == "summary"  # the only one with a quantile label
    assert HISTOGRAM_NAME.endswith("_seconds") and "histogram" not in HISTOGRAM_NAME


def test_family_of_a_sample_depends_on_its_kind() -> None:
    iops = Sample(1.0, "fio", INTERVAL, "iops", 5.0, {"job": "j", "op": "read"}, host="db1")
    assert family_name(iops) == "benchtui_iops"
    iops.kind = SUMMARY
    assert family_name(iops) == "benchtui_result_iops"
    hist = Sample(1.0, "fio", INTERVAL, HISTOGRAM_METRIC, 3.0, histogram=LatencyHistogram())
    assert family_name(hist) == HISTOGRAM_NAME
    assert family_name(Sample(1.0, "x", INTERVAL, "made_up_metric", 1.0)) is None


def test_identity_goes_in_labels() -> None:
    s = Sample(1.0, "iostat", INTERVAL, "disk_util_ratio", 0.5,
               {"device": "nvme0n1", "step": "warm-up", "le": "x", "host": "evil",
                "9bad-key": "v"}, host="db1")
    # a device series has no step (one identity across steps)
    assert series_labels(s) == {"host": "db1", "tool": "iostat", "device": "nvme0n1",
                                "_9bad_key": "v"}


def test_job_is_fio_job_matrix_keys_are_labels_and_streams_are_indices() -> None:
    labeler = SeriesLabels({"rand bs=4k": {"bs": "4k", "op": "x"}})
    fio = labeler.of("db1", "fio", {"job": "rand", "op": "read", "step": "rand bs=4k#2"},
                     metric="iops", kind=INTERVAL)
    assert fio == {"host": "db1", "tool": "fio", "fio_job": "rand", "op": "read",
                   "step": "rand bs=4k#2", "bs": "4k", "matrix_op": "x"}
    streams = [labeler.of("db1", "iperf3", {"stream": n, "step": "net"})["stream"]
               for n in ("5", "7", "5", "sum")]
    assert streams == ["0", "1", "0", "sum"]


def test_bucket_layout() -> None:
    assert LATENCY_BUCKETS[0] == 1e-6 and LATENCY_BUCKETS[-1] == 10.0
    assert list(LATENCY_BUCKETS) == sorted(set(LATENCY_BUCKETS))
    ratios = [b / a for a, b in itertools.pairwise(LATENCY_BUCKETS)]
    assert max(ratios) <= 1.67 + 1e-9  # 3 -> 5 is the widest step
    assert SLOTS == len(LATENCY_BUCKETS) + 1 == 44
    assert LATENCY_BUCKETS_NS[:3] == (1000, 1500, 2000)


@pytest.mark.parametrize(("ns", "index"), [(1, 0), (1000, 0), (1001, 1), (1500, 1),
                                           (2_000_000, 20), (10**10, 42), (10**10 + 1, 43)])
def test_bucket_index(ns: int, index: int) -> None:
    assert bucket_index(ns) == index


def test_bucket_counts_keep_every_completion_of_real_fio_histograms() -> None:
    hists = [s.histogram for path in TOOL_FIXTURES[:2]
             for s in fixture_samples(path, "h") if s.histogram is not None]
    assert len(hists) >= 4
    counts = BucketCounts()
    for h in hists:
        counts.add(h)
    merged = LatencyHistogram.merged(hists)
    assert counts.count == merged.total() == counts.cumulative()[-1]
    assert counts.sum_ns == sum(k * v for k, v in merged.counts.items())
    # Every fio bucket at or under a bound is counted under it, and none above.
    for i, bound in enumerate(LATENCY_BUCKETS_NS):
        under = sum(v for k, v in merged.counts.items() if k <= bound)
        assert counts.cumulative()[i] == under
