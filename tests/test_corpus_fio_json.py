"""Every fio JSON file of the shared corpus (fio 2.17 to 3.40, written by other people: see
../shared/corpus/fio/SOURCE), read as ``benchtui parse`` reads it.

Two checks per file. (1) Hand-written key figures, copied from the files: IOPS, bandwidth, a clat
mean and percentile in the unit fio printed them (fio 2.x: microseconds, ``bw`` in KiB/s; fio
3.x: nanoseconds, ``bw_bytes`` from 3.2), and the run's length. (2) EVERY figure of the
document, read here with the standard library's ``json`` in fio's documented units, comes out
of the parser, in base units: ``iops``, bandwidth, min/max/mean/stddev and every percentile of
every latency block, fio's bw/iops sample statistics, CPU and disk utilisation.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from tests.corpus import Printed, corpus_files, corpus_path, exact, match_all, parse_file

FILES = corpus_files("fio", ".json")
US, NS, KIB = 1e-6, 1e-9, 1024

#: (file, job, op) -> {metric or "clat p99" / "clat mean": value in base units}, by hand.
KEY: dict[tuple[str, str, str], dict[str, float]] = {
    ("fioplot-2.18-randread-01.json", "random-io", "read"): {
        "iops": 73.184143, "bw": 292 * KIB, "clat mean": 13636.394809 * US,
        "clat p99": 22912 * US, "elapsed": 61},
    ("fioplot-2.18-randwrite-32.json", "random-io", "write"): {
        "iops": 288.256878, "bw": 1153 * KIB, "clat mean": 110923.036632 * US,
        "clat p99": 1028096 * US, "elapsed": 61},
    ("pkb-2.17-group-reporting.json", "rand_16k_read_100%-io-depth-1-num-jobs-2", "read"): {
        "iops": 8086.673998, "bw": 129386 * KIB, "clat mean": 238.357679 * US,
        "clat p99": 1352 * US, "elapsed": 21},
    ("fioplot-3.1-randrw-1-16.json", "iotest", "read"): {
        "iops": 40770.524316, "bw": 163082 * KIB, "clat mean": 193421.909314 * NS,
        "clat p99": 552960 * NS, "elapsed": 61},
    ("fioplot-3.1-floppy-read-1-1.json", "iotest", "read"): {
        "iops": 3.153662, "bw": 12 * KIB, "clat mean": 316888457.25 * NS,
        "clat p99": 513802240 * NS, "elapsed": 115},
    ("fioplot-3.14-randread-1-16.json", "random-read", "read"): {
        "iops": 52773.403777, "bw": 216159861, "clat mean": 293189.631911 * NS,
        "clat p99": 387072 * NS, "elapsed": 61},
    ("fioplot-3.16-randrw-8-16.json", "iotest", "read"): {
        "iops": 333.355481, "bw": 1365424, "clat mean": 106180725.646569 * NS,
        "clat p99": 392167424 * NS, "elapsed": 61},
    ("fioplot-3.6-ceph-randread-1-1.json", "random-read", "read"): {
        "iops": 1095.615073, "bw": 4487639, "clat mean": 860669.744547 * NS,
        "clat p99": 1318912 * NS, "elapsed": 61},
    ("fioplot-3.34-sigint-randread.json", "FIOJOB", "read"): {
        "iops": 10102.601156, "bw": 41380254, "clat mean": 95948.612502 * NS,
        "clat p99": 175104 * NS, "elapsed": 3},
    ("rawstor-3.40-randrw-pair1.json", "rawstor", "read"): {
        "iops": 244511.548845, "bw": 1001519304, "clat mean": 1619.079951 * NS,
        "clat p99": 4448 * NS, "elapsed": 11},
    ("samyaple-3.33-8jobs-same-name.json", "FIOJOB#0", "write"): {
        "iops": 38483.991933, "bw": 157630430, "clat mean": 204269.840584 * NS,
        "clat p99": 514048 * NS, "elapsed": 61},
    ("vc-3.26-Results_FIO.json", "fio_randrw_1GB_4k_d1_th1_direct", "read"): {
        "iops": 2160.561601, "bw": 7876980, "clat mean": 418273.267365 * NS,
        "clat p99": 263192 * NS, "elapsed": 122},
}


def test_the_corpus_is_there() -> None:
    assert len(FILES) >= 15, FILES


@pytest.mark.parametrize("key", sorted(KEY), ids=lambda k: k[0])
def test_key_figures_by_hand(key: tuple[str, str, str]) -> None:
    name, job, op = key
    parsed = parse_file("fio", name)
    assert parsed.names == ["fio-json"]
    want = KEY[key]

    def one(metric: str, **labels: str) -> float:
        found = [s for s in parsed.samples if s.kind == SUMMARY and s.metric == metric
                 and s.labels == {"job": job, "op": op, **labels}]
        assert len(found) == 1, (metric, labels, found)
        return found[0].value

    assert one("iops") == pytest.approx(want["iops"], rel=1e-9)
    assert one("bandwidth_bytes") == pytest.approx(want["bw"], rel=1e-9)
    assert one("latency_mean_seconds", measure="clat") == pytest.approx(want["clat mean"],
                                                                         rel=1e-9)
    assert one("latency_seconds", measure="clat", quantile="0.99") == pytest.approx(
        want["clat p99"], rel=1e-9)
    assert {s.elapsed for s in parsed.samples if s.kind == SUMMARY} == {want["elapsed"]}


def _document(text: str) -> dict[str, Any]:
    start = 0 if text.startswith("{\n") else text.index("\n{\n") + 1
    doc = json.loads(text[start:])
    assert isinstance(doc, dict)
    return doc


def _expected(doc: dict[str, Any]) -> dict[str, list[Printed]]:
    """Every figure of a fio JSON document, in base units, read from fio's documented keys."""
    want: dict[str, list[Printed]] = {}

    def add(metric: str, value: float, where: str) -> None:
        want.setdefault(metric, []).append(exact(value, where))

    for job in doc["jobs"]:
        ran = False
        for op in ("read", "write", "trim"):
            d = job.get(op)
            if not isinstance(d, dict) or not (d.get("io_bytes") or d.get("total_ios")):
                continue
            ran = True
            where = f"{job['jobname']} {op}"
            add("iops", d["iops"], where)
            if "bw_bytes" in d:
                add("bandwidth_bytes", d["bw_bytes"], where)
            else:  # fio before 3.2: KiB/s, printed as an integer
                want.setdefault("bandwidth_bytes", []).append(Printed(d["bw"] * KIB, KIB / 2))
            for measure in ("slat", "clat", "lat"):
                block, unit = d.get(f"{measure}_ns"), NS
                if block is None:
                    block, unit = d.get(measure), US
                if not isinstance(block, dict) or not (block.get("N") or (
                        "N" not in block and block.get("max"))):
                    continue
                for key, metric in (("min", "min"), ("max", "max"), ("mean", "mean"),
                                    ("stddev", "stddev")):
                    add(f"latency_{metric}_seconds", block[key] * unit, where)
                for p, v in block.get("percentile", {}).items():
                    if float(p) or v:  # fio 2.x pads its list with "0.00" : 0
                        add("latency_seconds", v * unit, where)
            for family, keys in (("bw", ("bw_min", "bw_max", "bw_mean", "bw_dev")),
                                 ("iops", ("iops_min", "iops_max", "iops_mean", "iops_stddev"))):
                if d.get(f"{family}_samples", 1) and d.get(keys[1]):
                    scale = KIB if family == "bw" else 1
                    for key, stat in zip(keys, ("min", "max", "mean", "stddev"), strict=True):
                        metric = (f"bandwidth_{stat}_bytes" if family == "bw"
                                  else f"iops_{stat}")
                        add(metric, d[key] * scale, where)
        if ran:
            add("cpu_ratio", job["usr_cpu"] / 100, job["jobname"])
            add("cpu_ratio", job["sys_cpu"] / 100, job["jobname"])
    for disk in doc.get("disk_util", []):
        add("disk_util_ratio", disk["util"] / 100, disk["name"])
    return want


@pytest.mark.parametrize("name", FILES)
def test_every_printed_figure(name: str) -> None:
    parsed = parse_file("fio", name)
    parsed_text = corpus_path("fio", name).read_text(encoding="utf-8")
    doc = _document(parsed_text)
    want = _expected(doc)
    if name == "fioplot-3.33-errors-write-64-1.json":
        # fio could not lay out the file ("size=100%%"): error 22, no I/O, nothing to show
        assert not want.get("iops") and parsed.names == ["fio-json"]
        assert [w.reason for w in parsed.warnings] == ["fio job '1m' reports error 22"]
        assert parsed_text.count("\n", 0, parsed_text.index('"error" : 22')) + 1 <= (
            parsed.warnings[0].line)
        return
    assert parsed.names == ["fio-json"]
    assert not parsed.warnings, parsed.warnings
    summary = [s for s in parsed.samples if s.kind == SUMMARY]
    assert not [s for s in parsed.samples if s.kind == INTERVAL]  # one final report each
    assert {s.metric for s in summary} == set(want), name
    match_all(want, summary, name)
    # the run's length: fio's "elapsed" (whole seconds since it started) of the longest job
    longest = max(j.get("elapsed", 0) for j in doc["jobs"])
    assert {s.elapsed for s in summary} == {float(longest)}
