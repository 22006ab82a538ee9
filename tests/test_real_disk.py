"""Real sysstat iostat and /proc/diskstats on this machine, parsed by the disk parsers.

Each test runs the real tool for 1-3 seconds, under a direct-I/O ``dd`` writer where the
numbers are compared, and checks that the parsed samples exist for a real device and have
sane values.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers.diskstats import DiskstatsParser
from benchtui.parsers.iostat import IostatParser
from benchtui.parsers.iostat_json import IostatJsonParser
from tests.helpers import check_invariants, pick, require_tool

KIB = 1024.0


def run_iostat(args: list[str], *, iso: bool = False, tz: str | None = None) -> str:
    env = dict(os.environ, LC_ALL="C")
    env.pop("S_TIME_FORMAT", None)
    if iso:
        env["S_TIME_FORMAT"] = "ISO"
    if tz is not None:
        env["TZ"] = tz
    done = subprocess.run([require_tool("iostat"), *args], env=env, capture_output=True,
                          text=True, timeout=30, check=True)
    return done.stdout


def parse(cls: type[IostatParser] | type[IostatJsonParser], text: str,
          **kwargs: object) -> list[Sample]:
    parser = cls(**kwargs)  # type: ignore[arg-type]
    samples = parser.feed_text(text) + parser.finish()
    check_invariants(samples)
    assert not parser.warnings, parser.warnings
    return samples


def busiest_device(samples: list[Sample]) -> str:
    """The device with the most I/O in the run (the root disk on a quiet machine)."""
    totals: dict[str, float] = {}
    for s in samples:
        if s.metric in ("disk_iops", "disk_util_ratio"):
            device = s.labels["device"]
            totals[device] = totals.get(device, 0.0) + s.value
    assert totals, "iostat reported no device"
    return max(totals, key=lambda d: totals[d])


def check_device_sane(samples: list[Sample], device: str) -> None:
    for metric in ("disk_iops", "disk_bandwidth_bytes", "disk_await_seconds",
                   "disk_queue_depth", "disk_util_ratio", "disk_request_size_bytes"):
        found = pick(samples, metric, device=device)
        assert found, f"no {metric} for {device}"
        assert all(s.value >= 0 for s in found), found
    assert all(s.value <= 1.05 for s in pick(samples, "disk_util_ratio"))
    assert all(s.value < 10.0 for s in pick(samples, "disk_await_seconds"))
    sizes = pick(samples, "disk_request_size_bytes", device=device)
    assert all(s.value == 0 or 512 <= s.value <= 64 * 1024 * 1024 for s in sizes), sizes


def check_cpu(samples: list[Sample], reports: int) -> None:
    cpu = pick(samples, "cpu_ratio")
    assert len(cpu) == 6 * reports
    for elapsed in {s.elapsed for s in cpu}:
        shares = [s.value for s in cpu if s.elapsed == elapsed]
        assert sum(shares) == pytest.approx(1.0, abs=0.01)


@pytest.fixture
def direct_writer(tmp_path: Path) -> Iterator[None]:
    """A dd writing 4 KiB blocks with O_DIRECT for the duration of the test."""
    dd = require_tool("dd")
    target = tmp_path / "load.bin"
    proc = subprocess.Popen([dd, "if=/dev/zero", f"of={target}", "bs=4k", "count=2000000",
                             "oflag=direct"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_iostat_x_y_three_reports() -> None:
    samples = parse(IostatParser, run_iostat(["-x", "-y", "1", "3"]))
    device = busiest_device(samples)
    check_device_sane(samples, device)
    check_cpu(samples, 3)
    assert sorted({s.elapsed or 0.0 for s in samples}) == [1.0, 2.0, 3.0]
    assert all(s.t is None for s in samples)
    ops = {s.labels["op"] for s in pick(samples, "disk_iops", device=device)}
    assert {"read", "write"} <= ops


@pytest.mark.parametrize("iso", [False, True])
def test_iostat_x_t_timestamps(iso: bool) -> None:
    before = time.time()
    # Without ISO the timestamp has no zone (read as UTC): run iostat in UTC. With ISO the
    # zone is printed: a +05:30 zone must still give the right epoch.
    samples = parse(IostatParser, run_iostat(["-x", "-t", "1", "2"], iso=iso,
                                             tz="Asia/Kolkata" if iso else "UTC"))
    after = time.time()
    stamps = sorted({s.t for s in samples if s.t is not None})
    assert all(s.t is not None for s in samples)
    assert len(stamps) == 2 and stamps[1] - stamps[0] == pytest.approx(1.0, abs=1.0)
    assert before - 2 <= stamps[0] and stamps[1] <= after + 1
    check_device_sane(samples, busiest_device(samples))
    check_cpu(samples, 2)


def test_iostat_d_m(direct_writer: None) -> None:
    # `-d -m` (MB/s) and `-d` (kB/s) started together measure the same seconds.
    env = dict(os.environ, LC_ALL="C")
    runs = {unit: subprocess.Popen([require_tool("iostat"), "-d", *flag, "1", "2"], env=env,
                                   stdout=subprocess.PIPE, text=True)
            for unit, flag in (("MB", ["-m"]), ("kB", []))}
    outputs = {unit: proc.communicate(timeout=30)[0] for unit, proc in runs.items()}
    in_mb = parse(IostatParser, outputs["MB"])
    in_kb = parse(IostatParser, outputs["kB"])
    assert "MB_wrtn/s" in outputs["MB"] and "kB_wrtn/s" in outputs["kB"]
    device = busiest_device(in_kb)
    assert not pick(in_mb, "cpu_ratio")

    def second(samples: list[Sample], metric: str, op: str) -> float:
        found = [s for s in pick(samples, metric, device=device, op=op) if s.elapsed == 2.0]
        assert len(found) == 1
        return found[0].value

    assert second(in_kb, "disk_iops", "total") > 100  # the dd writer
    kb_rate = second(in_kb, "disk_bandwidth_bytes", "write")
    # MB/s has 2 decimals (10 kB/s); the two runs' windows differ by a few milliseconds.
    assert second(in_mb, "disk_bandwidth_bytes", "write") == pytest.approx(
        kb_rate, rel=0.1, abs=20 * KIB)


def test_iostat_p_x() -> None:
    samples = parse(IostatParser, run_iostat(["-p", "-x", "1", "2"]))
    device = busiest_device(samples)
    check_device_sane(samples, device)
    assert sorted({s.elapsed or 0.0 for s in samples}) == [1.0, 2.0]
    proc = Path("/proc/diskstats").read_text().split()
    assert all(s.labels["device"] in proc for s in samples if "device" in s.labels)


@pytest.mark.parametrize("iso", [False, True])
def test_iostat_json(iso: bool) -> None:
    text = run_iostat(["-o", "JSON", "-x", "-t", "1", "2"], iso=iso, tz="UTC")
    samples = parse(IostatJsonParser, text)
    device = busiest_device(samples)
    check_device_sane(samples, device)
    check_cpu(samples, 2)
    stamps = sorted({s.t for s in samples if s.t is not None})
    assert len(stamps) == 2 and abs(stamps[1] - time.time()) < 5
    # The same run through the text parser's column table: the same metrics and labels.
    text_samples = parse(IostatParser, run_iostat(["-x", "1", "1"]))
    json_keys = {(s.metric, tuple(sorted(s.labels))) for s in samples}
    text_keys = {(s.metric, tuple(sorted(s.labels))) for s in text_samples}
    assert text_keys <= json_keys


def test_diskstats_agrees_with_iostat(direct_writer: None) -> None:
    """Two /proc/diskstats reads 2 s apart, taken while `iostat -x -y 2 1` measures the same
    two seconds: the diskstats parser's figures match iostat's (loosely: the windows differ by
    a few milliseconds and other processes use the disk too)."""
    iostat = subprocess.Popen([require_tool("iostat"), "-x", "-y", "2", "1"],
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, LC_ALL="C"))
    t0 = time.time()
    first = Path("/proc/diskstats").read_text()
    time.sleep(2.0)
    t1 = time.time()
    second = Path("/proc/diskstats").read_text()
    out, _ = iostat.communicate(timeout=10)
    capture = f"--- {t0:.3f}\n{first}--- {t1:.3f}\n{second}"
    parser = DiskstatsParser()
    from_proc = parser.feed_text(capture) + parser.finish()
    check_invariants(from_proc)
    assert not parser.warnings
    from_iostat = parse(IostatParser, out)
    device = busiest_device(from_iostat)

    def value(samples: list[Sample], metric: str, **labels: str) -> float:
        found = pick(samples, metric, device=device, **labels)
        assert len(found) == 1, (metric, labels, found)
        return found[0].value

    w_proc = value(from_proc, "disk_iops", op="write")
    w_iostat = value(from_iostat, "disk_iops", op="write")
    assert w_iostat > 200
    assert w_proc == pytest.approx(w_iostat, rel=0.25)
    assert value(from_proc, "disk_bandwidth_bytes", op="write") == pytest.approx(
        value(from_iostat, "disk_bandwidth_bytes", op="write"), rel=0.25)
    assert value(from_proc, "disk_util_ratio") == pytest.approx(
        value(from_iostat, "disk_util_ratio"), abs=0.25)
    assert value(from_proc, "disk_request_size_bytes", op="write") == pytest.approx(
        value(from_iostat, "disk_request_size_bytes", op="write"), rel=0.25)
    assert from_proc[0].t == pytest.approx(t1, abs=0.01)
    assert from_proc[0].elapsed == pytest.approx(t1 - t0, abs=0.01)


def test_iostat_s_short_layouts_read_like_x(direct_writer: None) -> None:
    """``iostat -s`` (sysstat's short layout), with and without -x, -h (the device last): the
    four started together under a direct-I/O writer, each detected as iostat and read whole;
    the -h forms (3 significant digits) agree with the plain ones."""
    env = dict(os.environ, LC_ALL="C")
    forms = {"s": ["-s", "-d"], "sh": ["-s", "-d", "-h"], "sx": ["-s", "-x", "-d"],
             "sxh": ["-s", "-x", "-d", "-h"]}
    runs = {k: subprocess.Popen([require_tool("iostat"), *flags, "-y", "1", "2"], env=env,
                                stdout=subprocess.PIPE, text=True) for k, flags in forms.items()}
    outputs = {k: proc.communicate(timeout=30)[0] for k, proc in runs.items()}
    assert outputs["sxh"].split("\n")[3].split()[-1] == "Device"  # the device last
    got: dict[str, list[Sample]] = {}
    for k, text in outputs.items():
        assert [c.name for c in registry.detect(text)] == ["iostat"], k
        got[k] = parse(IostatParser, text)
        assert sorted({s.elapsed or 0.0 for s in got[k]}) == [1.0, 2.0], k
    device = busiest_device(got["sx"])
    check_device_sane(got["sx"], device)
    check_device_sane(got["sxh"], device)

    def second(k: str, metric: str, **labels: str) -> float:
        (found,) = [s for s in pick(got[k], metric, device=device, **labels) if s.elapsed == 2.0]
        return found.value

    assert second("s", "disk_iops", op="total") > 100  # the dd writer
    assert second("s", "disk_bandwidth_bytes", op="write") > 100 * 4 * KIB  # kB_w+d/s
    for plain, human in (("s", "sh"), ("sx", "sxh")):
        for metric, labels in (("disk_iops", {"op": "total"}),
                               ("disk_bandwidth_bytes", {"op": "write" if plain == "s"
                                                         else "total"})):
            # the runs' windows differ by a few milliseconds
            assert second(human, metric, **labels) == pytest.approx(
                second(plain, metric, **labels), rel=0.15), (plain, metric)
