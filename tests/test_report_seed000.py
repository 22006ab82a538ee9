"""Issue 11's acceptance: seed 000's storage conclusion table ("测试结论": physical machine as
the baseline; every VM's IOPS and throughput for 4KB/1MB random/sequential read/write and the
percentages), reproduced by exactly the two commands the issue gives, run as a user runs
them: ``benchtui import`` with the shipped map, then ``benchtui report --format csv``."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from tests.seed000_table import AUTHORS_SLIPS, HOSTS, SEED, cells

ROOT = Path(__file__).resolve().parents[1]


def _benchtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def report_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    session = tmp_path_factory.mktemp("seed000") / "seed000.btr"
    done = _benchtui("import", str(SEED.relative_to(ROOT)), "--map",
                     "examples/import/seed000.toml", "-o", str(session))
    assert done.returncode == 0, done.stderr
    done = _benchtui("report", str(session), "--baseline", "host=物理机", "--format", "csv")
    assert done.returncode == 0, done.stderr
    return list(csv.DictReader(io.StringIO(done.stdout)))


def test_every_cell_of_the_conclusion_table(report_rows: list[dict[str, str]]) -> None:
    found = {(r["host"], r["step"], r["metric"]): r for r in report_rows if r["op"] != "total"
             and r["metric"] in ("iops", "bandwidth_bytes") and float(r["value"]) > 0}
    table = cells()
    assert len(table) == 9 * 6 * 2
    for cell in table:
        row = found.get((cell.host, cell.step, cell.metric))
        assert row is not None, f"no {cell.metric} for {cell.host} / {cell.step}"
        value = float(row["value"])
        # the table prints three significant digits ("22.1k", "782KiB/s")
        assert value == pytest.approx(cell.value, rel=0.006), (cell, value)
        percent = float(row["percent_of_baseline"])
        expected = AUTHORS_SLIPS.get((cell.host, cell.step, cell.metric), (cell.percent, ""))[0]
        # the table's percentages are of its rounded values: within one point of ours
        assert abs(percent - expected) <= 1.0, (cell, percent, expected)
        assert row["baseline_value"] and row["unit"] in ("ops/s", "B/s")


def test_baseline_rows_are_100_percent_and_hosts_keep_the_reports_names(
        report_rows: list[dict[str, str]]) -> None:
    hosts = {r["host"] for r in report_rows}
    assert set(HOSTS) <= hosts
    for r in report_rows:
        if r["host"] == "物理机" and r["percent_of_baseline"]:
            assert float(r["percent_of_baseline"]) == pytest.approx(100.0)
    steps = {r["step"] for r in report_rows}
    assert steps == {"4KB随机读", "4KB随机写", "4KB顺序读", "4KB顺序写", "1MB顺序读", "1MB顺序写"}
    # the long format's columns, in the order the issue names them
    assert list(report_rows[0])[:9] == ["session", "step", "host", "metric", "op", "value",
                                        "unit", "baseline_value", "percent_of_baseline"]
