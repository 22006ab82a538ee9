"""Golden tests of the fio JSON parser (``fio-json``) over real fio 3.33 captures.

The seeds hold no fio JSON (only fio's text reports), so the fixtures are real captures made on
the development machine (tests/fixtures/fio_json/README.md gives each command). Expected
values are worked out here from the documents themselves, read with the standard library's
``json`` (not the parser's code): per interval Δ``clat_ns.N`` / Δ``timestamp_ms`` and so on,
plus a few numbers copied from the files by hand.
"""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, SUMMARY, Sample
from benchtui.parsers import registry
from benchtui.parsers._fio_json_bins import DeltaHistogram, counts_of
from benchtui.parsers.fio_json import FioJsonParser
from tests.helpers import FIXTURES, SEEDS, check_invariants, fixture_text, one, parse_with, pick

FIX = FIXTURES / "fio_json"
ALL = sorted(p.name for p in FIX.glob("*.txt"))
QS = (0.5, 0.9, 0.99, 0.999, 0.9999)


def docs(text: str) -> list[dict[str, Any]]:
    """The JSON documents of a capture, split independently of the parser."""
    out, pos = [], text.find("{\n")
    while pos >= 0:
        end = text.find("\n}\n", pos)
        out.append(json.loads(text[pos:end + 2]))
        pos = text.find("{\n", end + 3)
    return out


def parse(name: str) -> tuple[list[Sample], FioJsonParser]:
    samples, parser = parse_with(FioJsonParser, fixture_text(f"fio_json/{name}"))
    assert isinstance(parser, FioJsonParser)
    return samples, parser


def intervals(samples: list[Sample], metric: str, **labels: str) -> list[Sample]:
    return pick(samples, metric, INTERVAL, **labels)


def at(samples: list[Sample], t: float, metric: str, **labels: str) -> float:
    found = [s for s in intervals(samples, metric, **labels) if s.t == t]
    assert len(found) == 1, (metric, labels, t, found)
    return found[0].value


# --- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_detected_on_every_capture(name: str) -> None:
    text = fixture_text(f"fio_json/{name}")
    assert FioJsonParser.detect(text) == 95
    assert FioJsonParser in registry.detect(text)


@pytest.mark.parametrize("seed", sorted(p.name for p in SEEDS.glob("*.txt")))
def test_not_detected_on_the_seeds(seed: str) -> None:
    """The seeds are full of fio's text reports and other tools' output, and no fio JSON."""
    assert FioJsonParser.detect((SEEDS / seed).read_text(encoding="utf-8")) == 0


def test_not_detected_on_other_tools_fixtures() -> None:
    for path in FIXTURES.rglob("*.txt"):
        if path.parent.name != "fio_json":
            assert FioJsonParser.detect(path.read_text(errors="replace")) == 0, path


def test_registry_names() -> None:
    assert registry.candidates("fio-json") == [FioJsonParser]
    assert registry.candidates("fio-json+") == [FioJsonParser]
    assert FioJsonParser in registry.candidates("fio")


# --- intervals: values worked out from two consecutive documents ------------------------------


def test_interval_values_from_two_consecutive_dumps() -> None:
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    d = docs(text)
    samples, parser = parse("randread_randwrite.jsonplus.txt")
    assert not parser.warnings
    # By hand, from the file: read of job rread, dumps 1 and 2 (lines 1-954 and 955-1926):
    # timestamp_ms 1795319860042 -> 1795319861042, clat_ns.N 20087 -> 47851,
    # io_bytes 82227200 -> 195989504.
    t2 = 1795319861.042
    assert at(samples, t2, "iops", job="rread", op="read") == pytest.approx(47851 - 20087)
    assert at(samples, t2, "bandwidth_bytes", job="rread", op="read") == pytest.approx(
        195989504 - 82227200)
    # clat mean 40451.367601 ns over 20087, then 37594.829575 ns over 47851
    assert at(samples, t2, "latency_mean_seconds", job="rread", op="read",
              measure="clat") == pytest.approx(
        (37594.829575 * 47851 - 40451.367601 * 20087) / (47851 - 20087) / 1e9)
    # Every interval of every job, from the documents: a rate over the change of the job's own
    # runtime (job_runtime), the last (partial) interval included.
    for a, b in pairwise(d):
        t = b["timestamp_ms"] / 1000
        for ja, jb, op in zip(a["jobs"], b["jobs"], ("read", "write"), strict=True):
            dt = (jb["job_runtime"] - ja["job_runtime"]) / 1000
            xa, xb = ja[op], jb[op]
            label = jb["jobname"]
            n = xb["clat_ns"]["N"] - xa["clat_ns"]["N"]
            assert at(samples, t, "iops", job=label, op=op) == pytest.approx(n / dt)
            assert at(samples, t, "bandwidth_bytes", job=label, op=op) == pytest.approx(
                (xb["io_bytes"] - xa["io_bytes"]) / dt)
            for measure in ("clat", "lat"):
                ma, mb = xa[f"{measure}_ns"], xb[f"{measure}_ns"]
                want = (mb["mean"] * mb["N"] - ma["mean"] * ma["N"]) / (mb["N"] - ma["N"]) / 1e9
                assert at(samples, t, "latency_mean_seconds", job=label, op=op,
                          measure=measure) == pytest.approx(want)
            hist = LatencyHistogram.from_fio_bins(xb["clat_ns"]["bins"]).delta(
                LatencyHistogram.from_fio_bins(xa["clat_ns"]["bins"]))
            for q, v in hist.quantiles(QS).items():
                got = at(samples, t, "latency_seconds", job=label, op=op, measure="clat",
                         quantile=f"{q:g}")
                assert got == v
            (hs,) = [s for s in intervals(samples, HISTOGRAM_METRIC, job=label, op=op)
                     if s.t == t]
            assert hs.histogram == hist and hs.value == hist.total()
            assert hs.labels == {"job": label, "op": op, "measure": "clat"}


def test_last_interval_is_a_rate_over_the_job_runtime_and_says_its_duration() -> None:
    """fio's final report comes 187 ms after its last status dump (timestamp_ms 1795319862042
    -> 1795319862229) but the jobs ran 176 ms more (job_runtime 2824 -> 3000): the rate is over
    the 176 ms, and the samples say they cover 0.176 s (the full intervals say nothing)."""
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    last = intervals(samples, "iops", job="rread", op="read")
    assert [s.duration for s in last[1:-1]] == [None] * (len(last) - 2)
    assert last[-1].t == 1795319862.229
    assert last[-1].duration == pytest.approx(0.176)
    assert last[0].duration == pytest.approx(0.824)  # the first: from the job's start
    assert all(s.duration == pytest.approx(0.176) for s in samples
               if s.kind == INTERVAL and s.t == 1795319862.229 and s.labels["job"] == "rread")


def test_first_interval_runs_from_the_job_start() -> None:
    """The first dump covers the job's runtime so far (read.runtime 824 ms for 20087 reads)."""
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    t1 = 1795319860.042
    assert at(samples, t1, "iops", job="rread", op="read") == pytest.approx(20087 / 0.824)
    assert at(samples, t1, "bandwidth_bytes", job="rread", op="read") == pytest.approx(
        82227200 / 0.824)
    assert at(samples, t1, "iops", job="rwrite", op="write") == pytest.approx(19083 / 0.823)
    first = [s for s in intervals(samples, "iops") if s.t == t1]
    assert all(s.elapsed == pytest.approx(1.0) for s in first)


def test_a_live_stream_gets_its_first_interval_with_the_first_dump() -> None:
    """The engine sets ``stream``: the first dump's interval comes out as soon as the dump
    ends, not a second later with the next one (benchtui demo's first numbers), and the
    samples of the whole stream are the same as when read from a file."""
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    first_end = text.splitlines().index("}")
    lines = text.splitlines()
    live = FioJsonParser()
    live.stream = True
    early = [s for line in lines[: first_end + 1] for s in live.feed(line) or []]
    assert {s.t for s in early if s.metric == "iops"} == {1795319860.042}
    rest = [s for line in lines[first_end + 1:] for s in live.feed(line) or []]
    rest += live.flush() or []
    from_file, _ = parse("randread_randwrite.jsonplus.txt")
    assert [(s.metric, s.t, s.value, s.labels) for s in early + rest] == [
        (s.metric, s.t, s.value, s.labels) for s in from_file]
    quiet = FioJsonParser()
    assert not [s for line in lines[: first_end + 1] for s in quiet.feed(line) or []]


def test_last_partial_interval_and_elapsed() -> None:
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    # final report 187 ms after the last status dump: 81847 - 76370 reads, in the 176 ms the
    # job still ran (job_runtime 2824 -> 3000; the rest was fio's shutdown)
    assert at(samples, 1795319862.229, "iops", job="rread", op="read") == pytest.approx(
        (81847 - 76370) / 0.176)
    ts = sorted({s.t or 0.0 for s in intervals(samples, "iops", job="rread")})
    assert ts == [1795319860.042, 1795319861.042, 1795319862.042, 1795319862.229]
    el = sorted({s.elapsed or 0.0 for s in intervals(samples, "iops", job="rread")})
    assert el == pytest.approx([1.0, 2.0, 3.0, 3.187])


def test_only_directions_with_io_and_no_total() -> None:
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    ops = {(s.labels["job"], s.labels["op"]) for s in samples if "op" in s.labels}
    assert ops == {("rread", "read"), ("rwrite", "write")}


def test_histograms_add_up_to_the_final_count() -> None:
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    final = docs(text)[-1]
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    for job, op in (("rread", "read"), ("rwrite", "write")):
        hs = intervals(samples, HISTOGRAM_METRIC, job=job, op=op)
        assert len(hs) == 4
        want = next(j for j in final["jobs"] if j["jobname"] == job)[op]["clat_ns"]["N"]
        assert sum(s.value for s in hs) == want
        merged = LatencyHistogram.merged(s.histogram for s in hs if s.histogram is not None)
        assert merged == LatencyHistogram.from_fio_bins(
            next(j for j in final["jobs"] if j["jobname"] == job)[op]["clat_ns"]["bins"])


def test_quantile_labels_and_monotonic() -> None:
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    for t in {s.t or 0.0 for s in intervals(samples, "latency_seconds")}:
        vals = [at(samples, t, "latency_seconds", job="rread", op="read", measure="clat",
                   quantile=q) for q in ("0.5", "0.9", "0.99", "0.999", "0.9999")]
        assert vals == sorted(vals) and vals[0] > 0


# --- summary -------------------------------------------------------------------------------------


def test_summary_from_the_final_report() -> None:
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    # The final document, job rread: "iops" : 27273.242253, "bw_bytes" : 111711200,
    # clat percentile "99.900000" : 113152, min 17463, max 22217622; usr_cpu 3.1, sys_cpu 27.7;
    # disk_util vda util 81.749829.
    kw = {"job": "rread", "op": "read"}
    assert one(samples, "iops", SUMMARY, **kw) == 27273.242253
    assert one(samples, "bandwidth_bytes", SUMMARY, **kw) == 111711200
    assert one(samples, "latency_seconds", SUMMARY, measure="clat", quantile="0.999",
               **kw) == pytest.approx(113152e-9)
    assert one(samples, "latency_min_seconds", SUMMARY, measure="clat", **kw) == 17463e-9
    assert one(samples, "latency_max_seconds", SUMMARY, measure="clat", **kw) == 22217622e-9
    assert one(samples, "cpu_ratio", SUMMARY, job="rread", mode="user") == pytest.approx(0.031)
    assert one(samples, "cpu_ratio", SUMMARY, job="rread", mode="system") == pytest.approx(
        0.277)
    assert one(samples, "disk_util_ratio", SUMMARY, device="vda") == pytest.approx(0.81749829)
    summ = pick(samples, "latency_seconds", SUMMARY, **kw)
    assert len(summ) == 17  # fio's default percentile list; slat has N=0 with psync
    assert {s.labels["quantile"] for s in summ} >= {"0.01", "0.5", "0.9", "0.999", "0.9999"}
    assert not pick(samples, "latency_mean_seconds", SUMMARY, measure="slat")
    assert all(s.t == 1795319862.229 and s.elapsed == pytest.approx(3.187)
               for s in samples if s.kind == SUMMARY)


def test_summary_iops_close_to_the_intervals() -> None:
    samples, _ = parse("randread_randwrite.jsonplus.txt")
    iv = [s.value for s in intervals(samples, "iops", job="rread", op="read")]
    assert sum(iv) / len(iv) == pytest.approx(one(samples, "iops", SUMMARY, job="rread"),
                                              rel=0.1)


def test_final_report_alone_gives_a_summary_only() -> None:
    samples, parser = parse("final_only.jsonplus.txt")
    assert samples and all(s.kind == SUMMARY for s in samples)
    assert not parser.warnings
    assert one(samples, "iops", SUMMARY, job="once", op="read") == 27881.118881
    assert all(s.t == 1795319875.956 for s in samples)


# --- resets, group reporting, several jobs, errors ----------------------------------------------


def test_ramp_time_reset() -> None:
    """Dump 1 is inside ramp_time (io_bytes counted, N 0): nothing. Dump 2 comes after the
    reset: its 37310 reads took its read.runtime, 999 ms. Dump 4, 13 ms after dump 3 with no
    completion (the job had ended), is not an interval."""
    samples, parser = parse("ramp.jsonplus.txt")
    assert not parser.warnings
    iops = intervals(samples, "iops", job="ramped", op="read")
    assert [s.t for s in iops] == [1795319864.498, 1795319865.498]
    assert iops[0].value == pytest.approx(37310 / 0.999)
    assert iops[1].value == pytest.approx(76546 - 37310)
    assert at(samples, 1795319864.498, "bandwidth_bytes", job="ramped", op="read") == (
        pytest.approx(152809472 / 0.999))
    assert at(samples, 1795319864.498, "latency_mean_seconds", job="ramped", op="read",
              measure="clat") == pytest.approx(26384.054757e-9)
    hs = intervals(samples, HISTOGRAM_METRIC, job="ramped", op="read")
    assert sum(s.value for s in hs) == 76546  # the final clat_ns.N: nothing before the reset


def test_two_runs_in_one_file_are_told_apart() -> None:
    """Two runs' outputs appended to one file, same job names: the second's first document has
    an earlier fio clock (``elapsed`` 1 after 4). It is another run: each run keeps its own
    intervals (the first from its job start) and its own summary; the second is labelled
    ``run="2"``, as fio-text labels a second pasted run."""
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    twice, parser = parse_with(FioJsonParser, text + text)
    once, _ = parse("randread_randwrite.jsonplus.txt")
    assert not parser.warnings
    n_once = len(intervals(once, "iops"))
    assert len(intervals(twice, "iops")) == 2 * n_once
    assert len(intervals(twice, "iops", run="2")) == n_once
    assert [s.labels.get("run") for s in pick(twice, "iops", SUMMARY, job="rread")] == [
        None, "2"]
    assert sum(s.value for s in intervals(twice, HISTOGRAM_METRIC, job="rread")) == 2 * 81847
    first = [s.to_dict() for s in once]
    assert [s.to_dict() for s in twice if "run" not in s.labels] == first
    # the same, live (a known status stream, line by line): run 1's summary stays run 1's
    live = FioJsonParser()
    live.stream = True
    got = [s for line in (text + text).split("\n") for s in live.feed(line)] + live.finish()
    assert [s.labels.get("run") for s in pick(got, "iops", SUMMARY, job="rread")] == [None, "2"]
    assert len(intervals(got, "iops", run="2")) == n_once


def test_group_reporting_plain_json() -> None:
    text = fixture_text("fio_json/group_reporting.json.txt")
    d = docs(text)
    samples, parser = parse("group_reporting.json.txt")
    assert not parser.warnings
    assert {s.labels.get("job") for s in samples} - {None} == {"grouped"}
    a, b = d[0]["jobs"][0]["read"], d[1]["jobs"][0]["read"]
    dt = (d[1]["timestamp_ms"] - d[0]["timestamp_ms"]) / 1000
    assert at(samples, d[1]["timestamp_ms"] / 1000, "iops", job="grouped", op="read") == (
        pytest.approx((b["clat_ns"]["N"] - a["clat_ns"]["N"]) / dt))
    # the first dump: read.runtime (893 ms), not job_runtime (1785, the sum over 2 jobs)
    assert at(samples, d[0]["timestamp_ms"] / 1000, "iops", job="grouped", op="read") == (
        pytest.approx(47934 / 0.893))
    # plain json: no bins, so no interval percentiles nor histograms
    assert not intervals(samples, "latency_seconds")
    assert not intervals(samples, HISTOGRAM_METRIC)
    assert len(pick(samples, "latency_seconds", SUMMARY)) == 17
    assert one(samples, "iops", SUMMARY, job="grouped", op="read") == 48561.507937


def test_jobs_sharing_a_name() -> None:
    samples, _ = parse("numjobs.json.txt")
    jobs = {s.labels["job"] for s in samples if "job" in s.labels}
    assert jobs == {"twins#0", "twins#1"}
    for job in jobs:
        for op in ("read", "write"):
            assert len(intervals(samples, "iops", job=job, op=op)) == 3
    # job 2 (the second "twins"), write, dumps 1->2: N 9400 -> 19197 while its job_runtime went
    # 892 -> 1892 ms (the documents are 1001 ms apart)
    assert at(samples, 1795319869.963, "iops", job="twins#1", op="write") == pytest.approx(
        (19197 - 9400) / 1.000)


def test_job_error_is_a_warning_and_the_rest_goes_on() -> None:
    samples, parser = parse("error_merged.jsonplus.txt")
    errors = [w for w in parser.warnings if "error" in w.reason]
    assert len(errors) == 1 and "'bad'" in errors[0].reason and "28" in errors[0].reason
    assert not [s for s in samples if s.labels.get("job") == "bad"]
    assert len(intervals(samples, "iops", job="good", op="read")) == 3
    assert parser.unknown_lines >= 2  # the two "fio: ..." lines


def test_lat_percentiles_and_percentile_list() -> None:
    samples, _ = parse("latpct.jsonplus.txt")
    t = 1795319874.546
    for measure in ("clat", "lat"):
        qs = {s.labels["quantile"] for s in intervals(samples, "latency_seconds", op="read",
                                                       measure=measure) if s.t == t}
        assert qs == {"0.5", "0.9", "0.99", "0.995", "0.999", "0.9999"}
    d = docs(fixture_text("fio_json/latpct.jsonplus.txt"))
    a, b = d[0]["jobs"][0]["write"]["lat_ns"], d[1]["jobs"][0]["write"]["lat_ns"]
    hist = LatencyHistogram.from_fio_bins(b["bins"]).delta(
        LatencyHistogram.from_fio_bins(a["bins"]))
    assert at(samples, t, "latency_seconds", job="latp", op="write", measure="lat",
              quantile="0.995") == hist.quantile(0.995)
    # one histogram per job, direction and interval: clat's
    hs = intervals(samples, HISTOGRAM_METRIC, op="write")
    assert len(hs) == 3 and {s.labels["measure"] for s in hs} == {"clat"}
    assert {s.labels["quantile"] for s in pick(samples, "latency_seconds", SUMMARY,
                                               measure="lat", op="read")} == {
        "0.5", "0.99", "0.995"}


# --- stream handling ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_block_and_chunks_equal_lines(name: str) -> None:
    """feed_text (the file path), in one block or in chunks, equals feed (the live path)."""
    text = fixture_text(f"fio_json/{name}")
    by_line, _ = parse(name)
    whole = FioJsonParser()
    a = whole.feed_text(text) + whole.finish()
    chunked = FioJsonParser()
    lines = text.split("\n")
    b: list[Sample] = []
    for i in range(0, len(lines), 97):
        part = lines[i:i + 97]
        b += chunked.feed_text("\n".join(part) + ("\n" if i + 97 < len(lines) else ""))
    b += chunked.finish()
    want = [s.to_dict() for s in by_line]
    assert [s.to_dict() for s in a] == want
    assert [s.to_dict() for s in b] == want


@pytest.mark.parametrize("name", ALL)
def test_bytes_equal_text(name: str) -> None:
    """feed_bytes (a file as read, for the CLI) gives feed_text's samples and warnings, also
    with CRLF line ends, a UTF-8 BOM, UTF-16 (PowerShell) and bytes that are not UTF-8."""
    text = fixture_text(f"fio_json/{name}")
    want, parser = parse(name)
    for data in (text.encode(), b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(),
                 text.encode("utf-16"), b"\xff junk \xfe\n" + text.encode()):
        p = FioJsonParser()
        got = p.feed_bytes(data) + p.finish()
        assert [s.to_dict() for s in got] == [s.to_dict() for s in want]
        assert [(w.line, w.reason) for w in p.warnings] == [
            (w.line + (data.startswith(b"\xff junk")), w.reason) for w in parser.warnings]


def test_junk_crlf_and_foreign_lines_do_not_matter() -> None:
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    clean, _ = parse("randread_randwrite.jsonplus.txt")
    lines = text.split("\n")
    lines.insert(500, "fio: a note printed on stderr, merged into the stream")
    noisy = "Jobs: 2 (f=2): [r(1),w(1)]\n  {\n}\n" + "\r\n".join(lines)
    for samples, parser in (parse_with(FioJsonParser, noisy),):
        assert [s.to_dict() for s in samples] == [s.to_dict() for s in clean]
        assert not [w for w in parser.warnings if "internal" in w.reason]
    block = FioJsonParser()
    assert [s.to_dict() for s in block.feed_text(noisy) + block.finish()] == [
        s.to_dict() for s in clean]


def test_truncated_documents() -> None:
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    d_lines = text.split("\n")
    # the first dump cut short (fio killed, restarted), then the whole stream
    cut = "\n".join(d_lines[:300]) + "\n" + text
    samples, parser = parse_with(FioJsonParser, cut)
    clean, _ = parse("randread_randwrite.jsonplus.txt")
    assert any("incomplete" in w.reason for w in parser.warnings)
    assert [s.to_dict() for s in samples] == [s.to_dict() for s in clean]
    # the stream ends inside a dump: summary from the last whole one
    end = "\n".join(d_lines[:2500])
    samples, parser = parse_with(FioJsonParser, end)
    assert any("end of the stream" in w.reason for w in parser.warnings)
    assert len(intervals(samples, "iops", job="rread")) == 2
    assert one(samples, "iops", SUMMARY, job="rread", op="read") == pytest.approx(
        docs(text)[1]["jobs"][0]["read"]["iops"])


def test_time_not_advancing_is_skipped_with_a_warning() -> None:
    text = fixture_text("fio_json/randread_randwrite.jsonplus.txt")
    first = text[: text.find("\n}\n") + 3]
    samples, parser = parse_with(FioJsonParser, first + text)
    assert any("did not advance" in w.reason for w in parser.warnings)
    clean, _ = parse("randread_randwrite.jsonplus.txt")
    assert [s.to_dict() for s in samples] == [s.to_dict() for s in clean]


def test_garbage_never_raises() -> None:
    for text in ("{\n}\n", "{\n\"jobs\": 3\n}\n", '{\n "jobs" : [1, {"read": 5}]\n}\n',
                 '{\n "jobs" : [{"jobname": "x", "read": {"io_bytes": "a"}}]\n}\n', "}\n{\n",
                 '{\n "timestamp_ms" : 5, "jobs" : [{"jobname": "x", "read": {"io_bytes": 4,'
                 ' "runtime": 9, "clat_ns": {"N": 1, "mean": 3, "bins": {"x": 1}}}}]\n}\n'):
        samples, parser = parse_with(FioJsonParser, text * 2)
        check_invariants(samples)
        assert not [w for w in parser.warnings if "internal" in w.reason], parser.warnings


# --- the histogram helpers --------------------------------------------------------------------


def test_delta_histogram_is_a_latency_histogram() -> None:
    h = DeltaHistogram([1000, 2000, 3000], (2, 2, 7))
    assert isinstance(h, LatencyHistogram)
    assert h == LatencyHistogram({1000: 2, 3000: 5})
    assert LatencyHistogram({1000: 2, 3000: 5}) == h
    assert h.total() == 7 and h.quantile(0.5) == 3e-6
    assert h.to_json_buckets() == {"1e-06": 2, "3e-06": 5}
    merged = LatencyHistogram()
    merged.merge(h)
    merged.merge(DeltaHistogram([1000], (1,)))
    assert merged.counts == {1000: 3, 3000: 5}
    assert counts_of([5, 6, 7], [0, 4, 4]) == {6: 4}
    h.counts = {1: 1}
    assert h.total() == 1


def test_fast_quantiles_agree_with_latency_histogram() -> None:
    """Over every interval of every json+ capture."""
    for name in ALL:
        samples, _ = parse(name)
        for s in intervals(samples, HISTOGRAM_METRIC):
            assert s.histogram is not None and s.t is not None
            qs = {x.labels["quantile"]: x.value for x in intervals(
                samples, "latency_seconds", job=s.labels["job"], op=s.labels["op"],
                measure=s.labels["measure"]) if x.t == s.t}
            for label, v in qs.items():
                assert s.histogram.quantile(float(label)) == v
        assert all(math.isfinite(s.value) for s in samples)


def test_fixture_files_are_real_captures() -> None:
    for name in ALL:
        text = (FIX / name).read_text()
        assert '"fio version" : "fio-3.33"' in text
    assert Path(FIX / "README.md").exists()


# --- fio before 3.17: no N; fio 2.x: us blocks, io_bytes in KiB, bw in KiB/s -----------------


def _old_doc(ts: int | None, runtime: int, ios: int, clat_mean_us: float,
             bins: dict[str, int] | None = None, *, elapsed: bool = True) -> str:
    """A fio 2.x document (as fio 2.18 writes it; fio 2.1: no timestamp_ms, no elapsed)."""
    clat: dict[str, Any] = {"min": 90, "max": 900, "mean": clat_mean_us, "stddev": 10.5,
                            "percentile": {"50.000000": 100, "99.000000": 800, "0.00": 0}}
    if bins is not None:
        clat["bins"] = {"FIO_IO_U_PLAT_BITS": 6, "FIO_IO_U_PLAT_VAL": 64,
                        "FIO_IO_U_PLAT_NR": 1216, **bins}
    read = {"io_bytes": ios * 4, "bw": ios * 4 * 1000 // max(runtime, 1), "iops": 1.0,
            "runtime": runtime, "total_ios": ios, "short_ios": 0, "drop_ios": 0,
            "slat": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}, "clat": clat,
            "lat": {"min": 95, "max": 905, "mean": clat_mean_us + 5, "stddev": 10.5}}
    job: dict[str, Any] = {"jobname": "old", "groupid": 0, "error": 0, "read": read,
                           "usr_cpu": 1.5, "sys_cpu": 2.5}
    if elapsed:
        job["elapsed"] = 2
    doc: dict[str, Any] = {"fio version": "fio-2.18", "jobs": [job]}
    if ts is not None:
        doc = {"fio version": "fio-2.18", "timestamp_ms": ts, "jobs": [job]}
    return json.dumps(doc, indent=2) + "\n"


def test_fio_2x_stream_units_and_no_n() -> None:
    """fio 2.x: latencies in us, no N (the count is total_ios), io_bytes in KiB, and json+
    bins keyed by bucket index (FIO_IO_U_PLAT_BITS 6), read with fio's plat_idx_to_val."""
    text = (_old_doc(1_000_000, 1000, 1000, 100.0, {"100": 600, "200": 400})
            + _old_doc(1_001_000, 2000, 3000, 150.0, {"100": 1600, "200": 1400}))
    samples, parser = parse_with(FioJsonParser, text)
    assert not parser.warnings
    iops = intervals(samples, "iops", job="old", op="read")
    assert [s.value for s in iops] == [1000.0, 2000.0]  # Δtotal_ios / Δruntime
    bw = intervals(samples, "bandwidth_bytes", job="old", op="read")
    assert [s.value for s in bw] == [1000 * 4 * 1024.0, 2000 * 4 * 1024.0]  # KiB -> bytes
    means = intervals(samples, "latency_mean_seconds", job="old", op="read", measure="clat")
    # (150 us x 3000 - 100 us x 1000) / 2000 = 175 us
    assert [s.value for s in means] == pytest.approx([100e-6, 175e-6])
    assert not intervals(samples, "latency_mean_seconds", measure="slat")  # not measured
    # index 100 < 2 x 64: the value itself, 100 us; index 200: error_bits (200 >> 6) - 1 = 2,
    # base 1 << 8 = 256, k = 200 % 64 = 8: 256 + 8.5 x 4 = 290 us.
    # Interval 2: 1000 at 100 us, 1000 at 290 us.
    p50 = intervals(samples, "latency_seconds", job="old", op="read", measure="clat",
                    quantile="0.5")
    p99 = intervals(samples, "latency_seconds", job="old", op="read", measure="clat",
                    quantile="0.99")
    assert [s.value for s in p50] == pytest.approx([100e-6, 100e-6])
    assert p99[-1].value == pytest.approx(290e-6)
    summary = pick(samples, "latency_seconds", SUMMARY, measure="clat")
    assert {s.labels["quantile"]: s.value for s in summary} == {"0.5": 100e-6, "0.99": 800e-6}
    assert one(samples, "bandwidth_bytes", SUMMARY) == (3000 * 4 * 1000 // 2000) * 1024.0


def test_fio_21_document_without_timestamp_or_elapsed() -> None:
    """fio 2.1 prints neither timestamp_ms nor elapsed: the run's length is the job's runtime
    (ms), not 0."""
    samples, parser = parse_with(FioJsonParser, _old_doc(None, 2500, 3000, 150.0,
                                                         elapsed=False))
    assert not parser.warnings
    assert {s.elapsed for s in samples} == {2.5}
    assert one(samples, "latency_mean_seconds", SUMMARY, measure="clat") == 150e-6


def test_detected_past_long_global_options() -> None:
    """PerfKitBenchmarker's documents hold a long ``global options`` block before ``jobs``."""
    doc = json.loads(_old_doc(1_000_000, 1000, 1000, 100.0))
    long = {"fio version": "fio-2.17", "timestamp_ms": 1,
            "global options": {f"option{i}": "x" * 40 for i in range(40)}, "jobs": doc["jobs"]}
    head = json.dumps(long, indent=2)
    assert head.index('"jobs"') > 2000
    assert [c.name for c in registry.detect(head)] == ["fio-json"]
