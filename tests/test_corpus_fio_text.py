"""Every fio text file of the shared corpus (normal output of fio 2.2 to 3.40, terse v3 of fio
2.1.2, ``--status-interval`` text dumps, Markdown around pasted runs, glued ``--eta`` status
lines, several runs in one file: see ../shared/corpus/fio/SOURCE), read as ``benchtui parse``.

(1) Hand-written key figures of each file (copied from it). (2) EVERY statistic of the job
reports, read here by a small reader of fio's printed lines written for this test (the op line,
slat/clat/lat, percentile tables, ``bw (...)``/``iops`` sample statistics, cpu, group lines,
disk util), comes out as a summary sample of the same metric within half a unit of its last
printed digit; and no warning at all (no statistic fio printed is taken for unreadable).
"""

from __future__ import annotations

import re

import pytest

from benchtui.model.sample import INTERVAL, SUMMARY
from tests.corpus import Printed, corpus_files, corpus_path, match_all, parse_file, printed

TEXT_FILES = [n for n in corpus_files("fio") if not n.endswith((".json", ".out"))]
KIB, MIB = 1024.0, 1024.0**2
_TIME = {"nsec": 1e-9, "usec": 1e-6, "msec": 1e-3}
_RATE = {"B": 1.0, "KiB": KIB, "MiB": MIB, "GiB": KIB**3, "KB": KIB, "MB": MIB, "GB": KIB**3,
         "kB": 1e3}

#: file -> [(metric, labels, printed text, scale)], by hand from the file's first report.
KEY: dict[str, list[tuple[str, dict[str, str], str, float]]] = {
    "vpscmp-2.2.10-do-randread.log": [  # "read : io=4096.0MB, bw=611058KB/s, iops=152764"
        ("iops", {"job": "randread", "op": "read"}, "152764", 1.0),
        ("bandwidth_bytes", {"job": "randread", "op": "read"}, "611058", KIB),
        ("latency_mean_seconds", {"job": "randread", "op": "read", "measure": "clat"},
         "825.75", 1e-6),
        ("bandwidth_mean_bytes", {"job": "randread", "op": "read"}, "76665.15", KIB)],
    "learnburning-2.14-rw-msec.log": [  # clat (msec) ... avg=223.98; 99.00th=[  529] msec
        ("iops", {"job": "name=1M_seqrw", "op": "write"}, "314", 1.0),
        ("bandwidth_bytes", {"job": "name=1M_seqrw", "op": "read"}, "321739", KIB),
        ("latency_mean_seconds", {"job": "name=1M_seqrw", "op": "read", "measure": "clat"},
         "223.98", 1e-3),
        ("latency_seconds", {"job": "name=1M_seqrw", "op": "read", "measure": "clat",
                             "quantile": "0.99"}, "529", 1e-3)],
    "rawstor-3.40-randrw-pair1.txt": [  # read: IOPS=245k, BW=955MiB/s; clat avg=1619.08 nsec
        ("iops", {"job": "rawstor", "op": "read"}, "245k", 1.0),
        ("bandwidth_bytes", {"job": "rawstor", "op": "read"}, "955", MIB),
        ("latency_mean_seconds", {"job": "rawstor", "op": "read", "measure": "clat"},
         "1619.08", 1e-9),
        ("latency_seconds", {"job": "rawstor", "op": "write", "measure": "clat",
                             "quantile": "0.99"}, "4192", 1e-9),
        ("iops_mean", {"job": "rawstor", "op": "read"}, "243480.84", 1.0),
        ("cpu_ratio", {"job": "rawstor", "mode": "system"}, "64.11", 0.01)],
    "m1mac-3.19-posixaio-8jobs.txt": [
        ("iops", {"job": "random-read-4KB-8Thread", "op": "read"}, "59.6k", 1.0)],
}


def test_the_corpus_is_there() -> None:
    assert len(TEXT_FILES) >= 12, TEXT_FILES


@pytest.mark.parametrize("name", sorted(KEY))
def test_key_figures_by_hand(name: str) -> None:
    parsed = parse_file("fio", name)
    assert parsed.names == ["fio-text"]
    for metric, labels, text, scale in KEY[name]:
        found = [s for s in parsed.samples if s.kind == SUMMARY and s.metric == metric
                 and s.labels == labels]
        assert len(found) == 1, (metric, labels, found)
        want = printed(text, scale)
        assert want.matches(found[0].value), (metric, labels, found[0].value, want)


def test_elapsed_is_the_run_time_fio_printed() -> None:
    """``runt=3600299msec`` (fio 2.14), ``(9552MiB/10001msec)`` (fio 3.40)."""
    for name, runtime in (("learnburning-2.14-rw-msec.log", 3600.299),
                          ("rawstor-3.40-randrw-pair1.txt", 10.001),
                          ("vpscmp-2.2.10-do-randread.log", 6.864)):
        parsed = parse_file("fio", name)
        first = [s for s in parsed.samples if s.kind == SUMMARY and "run" not in s.labels]
        assert {s.elapsed for s in first} == {runtime}, name


# --- an independent reader of the statistics fio prints --------------------------------------

_OP3 = re.compile(r"^\s*(?:read|write|trim|mixed)\s*: IOPS=\s*([\d.]+[kM]?), BW=\s*([\d.]+)"
                  r"(B|KiB|MiB|GiB)/s")
_OP2 = re.compile(r"^\s*(?:read|write|trim|mixed)\s*: io=[^,]*, bw=\s*([\d.]+)(B|KB|MB|GB)/s, "
                  r"iops=\s*(\d+)")
_LAT = re.compile(r"^\s*(?:slat|clat|lat) \((nsec|usec|msec)\)\s*: min=\s*([\d.]+[kKM]?), "
                  r"max=\s*([\d.]+[kKM]?), avg=\s*([\d.]+[kKM]?), stdev=\s*([\d.]+[kKM]?)")
_PCT_HEAD = re.compile(r"^\s*(?:slat|clat|lat) percentiles \((nsec|usec|msec)\):")
_PCT = re.compile(r"([\d.]+)th=\[\s*(\d+)\]")
_BW = re.compile(r"^\s*bw \(\s*(\w+)\s*/s\)\s*: min=\s*([\d.]+), max=\s*([\d.]+), "
                 r"per=[^,]*, avg=\s*([\d.]+), stdev=\s*([\d.]+)")
_IOPS = re.compile(r"^\s*iops\s*: min=\s*([\d.]+), max=\s*([\d.]+), avg=\s*([\d.]+), "
                   r"stdev=\s*([\d.]+)")
_CPU = re.compile(r"^\s*cpu\s*: usr=([\d.]+)%, sys=([\d.]+)%")
_GROUP3 = re.compile(r"^\s*(?:READ|WRITE|TRIM|MIXED): bw=([\d.]+)(B|KiB|MiB|GiB)/s")
_GROUP2 = re.compile(r"^\s*(?:READ|WRITE|TRIM|MIXED): io=[^,]*, aggrb=([\d.]+)(B|KB|MB|GB)/s")
_DISK = re.compile(r"^\s*\S+: ios=\d+/\d+.*, util=([\d.]+)%")


def statistics(text: str) -> dict[str, list[Printed]]:
    """Every statistic of fio's job reports in ``text``, in base units, per metric."""
    want: dict[str, list[Printed]] = {}

    def add(metric: str, figure: Printed) -> None:
        want.setdefault(metric, []).append(figure)

    pct_unit: float | None = None
    for n, line in enumerate(text.replace("\r", "\n").split("\n"), 1):
        where = f"line {n}"
        if pct_unit is not None:
            found = _PCT.findall(line) if line.lstrip().startswith("|") else []
            if found:
                for _p, v in found:
                    add("latency_seconds", printed(v, pct_unit, where))
                continue
            pct_unit = None
        if m := _OP3.match(line):
            add("iops", printed(m.group(1), 1.0, where))
            add("bandwidth_bytes", printed(m.group(2), _RATE[m.group(3)], where))
        elif m := _OP2.match(line):
            add("bandwidth_bytes", printed(m.group(1), _RATE[m.group(2)], where))
            add("iops", printed(m.group(3), 1.0, where))
        elif m := _LAT.match(line):
            unit = _TIME[m.group(1)]
            for stat, v in zip(("min", "max", "mean", "stddev"), m.groups()[1:], strict=True):
                add(f"latency_{stat}_seconds", printed(v, unit, where))
        elif m := _PCT_HEAD.match(line):
            pct_unit = _TIME[m.group(1)]
        elif m := _BW.match(line):
            for stat, v in zip(("min", "max", "mean", "stddev"), m.groups()[1:], strict=True):
                add(f"bandwidth_{stat}_bytes", printed(v, _RATE[m.group(1)], where))
        elif m := _IOPS.match(line):
            for stat, v in zip(("min", "max", "mean", "stddev"), m.groups(), strict=True):
                add(f"iops_{stat}", printed(v, 1.0, where))
        elif m := _CPU.match(line):
            add("cpu_ratio", printed(m.group(1), 0.01, where))
            add("cpu_ratio", printed(m.group(2), 0.01, where))
        elif (m := _GROUP3.match(line)) or (m := _GROUP2.match(line)):
            add("bandwidth_bytes", printed(m.group(1), _RATE[m.group(2)], where))
        elif m := _DISK.match(line):
            add("disk_util_ratio", printed(m.group(1), 0.01, where))
    return want


@pytest.mark.parametrize("name", TEXT_FILES)
def test_every_printed_statistic(name: str) -> None:
    parsed = parse_file("fio", name)
    assert parsed.names == ["fio-text"], parsed.names
    assert not parsed.warnings, parsed.warnings[:5]
    want = statistics(corpus_path("fio", name).read_text(encoding="utf-8"))
    summary = [s for s in parsed.samples if s.kind == SUMMARY]
    assert want and {s.metric for s in summary} == set(want), (
        {s.metric for s in summary} ^ set(want))
    match_all(want, summary, name)


@pytest.mark.parametrize("name", ["vpscmp-3.1-libaio-4K.md",
                                  "vpscmp-3.1-libaio-random-mixed-4K.md"])
def test_glued_status_lines_are_intervals_and_keep_line_numbers(name: str) -> None:
    """Hundreds of --eta status lines glued onto one line (their \\r lost): each is an interval
    of the run, and the lines after them keep their numbers (the job header fio printed on line
    N is the one a warning would name)."""
    parsed = parse_file("fio", name)
    text = corpus_path("fio", name).read_text(encoding="utf-8")
    glued = sum(line.count("Jobs: 1 (f=1): [") for line in text.split("\n")
                if line.count("Jobs: ") > 1)
    assert glued > 100
    iops = [s for s in parsed.samples if s.kind == INTERVAL and s.metric == "iops"]
    assert len(iops) >= glued
    parser = parsed.parsers[0]
    assert parser.lineno == text.count("\n") + 1  # not a line more than the file has


# --- terse (--minimal), version 3 of fio 2.1.2 ------------------------------------------------

TERSE = "jtulak-2.1.2-terse-v3.out"


def test_terse_v3_key_figures_by_hand() -> None:
    """Line 1: ``3;fio-2.1.2;test-multi-file-io-4;0;0;52392;5208;651;10058;...``: read
    651 IOPS at 5208 KiB/s over 10058 ms, clat mean 4610.434417 us, 99.000000%=74240 us;
    write 162 IOPS; cpu usr 0.397733%; vda util 99.12%."""
    parsed = parse_file("fio", TERSE)
    assert parsed.names == ["fio-terse"]
    assert not parsed.warnings

    def one(metric: str, **labels: str) -> float:
        found = [s for s in parsed.samples if s.metric == metric
                 and s.labels == {"job": "test-multi-file-io-4", **labels}]
        assert len(found) == 1, (metric, labels, found)
        return found[0].value

    assert one("iops", op="read") == 651
    assert one("bandwidth_bytes", op="read") == 5208 * KIB
    assert one("latency_mean_seconds", op="read", measure="clat") == pytest.approx(
        4610.434417e-6, rel=1e-9)
    assert one("latency_seconds", op="read", measure="clat", quantile="0.99") == pytest.approx(
        74240e-6, rel=1e-9)
    assert one("iops", op="write") == 162
    assert one("cpu_ratio", mode="user") == pytest.approx(0.00397733, rel=1e-9)
    first = [s for s in parsed.samples if s.labels.get("job") == "test-multi-file-io-4"]
    assert {s.elapsed for s in first} == {10.058}


def test_terse_v3_every_field() -> None:
    """Every figure of every terse v3 line (fio's HOWTO: read fields 6-46, write 47-87, cpu
    88-89, per disk name and util at the end), read by position here."""
    text = corpus_path("fio", TERSE).read_text(encoding="utf-8")
    want: dict[str, list[Printed]] = {}

    def add(metric: str, text: str, scale: float) -> None:
        want.setdefault(metric, []).append(printed(text, scale))

    for line in text.splitlines():
        f = line.split(";")
        if len(f) < 90 or f[0] != "3":
            continue
        for base in (5, 46):  # 0-based index of read_kb, write_kb
            if int(f[base]) == 0:
                continue
            add("bandwidth_bytes", f[base + 1], KIB)
            add("iops", f[base + 2], 1.0)
            for block in (base + 4, base + 8, base + 32):  # slat, clat, lat: min max mean dev
                for stat, v in zip(("min", "max", "mean", "stddev"), f[block:block + 4],
                                   strict=True):
                    add(f"latency_{stat}_seconds", v, 1e-6)
            for cell in f[base + 12:base + 32]:
                p, _, v = cell.partition("%=")
                if float(p):
                    add("latency_seconds", v, 1e-6)
            for stat, v in zip(("min", "max", "mean", "stddev"),
                               (f[base + 36], f[base + 37], f[base + 39], f[base + 40]),
                               strict=True):
                add(f"bandwidth_{stat}_bytes", v, KIB)
        add("cpu_ratio", f[87].rstrip("%"), 0.01)
        add("cpu_ratio", f[88].rstrip("%"), 0.01)
        for i in range(121, len(f) - 8, 9):  # disk: name;ios r;w;merges r;w;ticks r;w;in_q;util
            add("disk_util_ratio", f[i + 8].rstrip("%"), 0.01)
    parsed = parse_file("fio", TERSE)
    assert {s.metric for s in parsed.samples} == set(want)
    match_all(want, parsed.samples, TERSE)
