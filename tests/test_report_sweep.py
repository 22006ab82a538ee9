"""Issue 11's sweep, for real: fio on a file with ``matrix`` over ioengine x bs and
``repeat = 3`` is recorded by ``benchtui record`` and reported to Markdown and CSV (and HTML,
tests/test_report_html.py, which opens it in a real browser)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
BENCHTUI = [sys.executable, "-m", "benchtui"]
STEPS = ["rr ioengine=psync bs=4k", "rr ioengine=psync bs=64k", "rr ioengine=libaio bs=4k",
         "rr ioengine=libaio bs=64k"]


def sweep_plan(directory: Path, *, seconds: int = 2) -> Path:
    plan = directory / "sweep.toml"
    plan.write_text(
        '[session]\nname = "sweep-report"\n\n[hosts.here]\nlocal = true\n\n'
        '[[monitor]]\ntool = "iostat"\n\n'
        '[[step]]\nname = "rr"\ntool = "fio"\nhosts = "all"\n'
        f'args = "--filename={directory}/fio.dat --size=16m --rw=randread --iodepth=4 '
        f'--runtime={seconds} --time_based"\n'
        'matrix = { ioengine = ["psync", "libaio"], bs = ["4k", "64k"] }\n'
        'repeat = 3\nselect = "median"\n')
    return plan


@pytest.fixture(scope="module")
def sweep_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tool("fio")
    d = tmp_path_factory.mktemp("sweep")
    out = d / "sweep.btr"
    done = subprocess.run([*BENCHTUI, "record", str(sweep_plan(d)), "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    return out


def _report(session: Path, *args: str) -> str:
    done = subprocess.run([*BENCHTUI, "report", str(session), "--skip", "0", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_sweep_to_csv(sweep_session: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(sweep_session, "--format", "csv"))))
    iops = {r["step"]: r for r in rows if r["metric"] == "iops" and r["op"] == "read"
            and r["host"] == "here"}
    assert list(iops) == STEPS  # in the order they ran, one row each: the median run
    assert all(r["runs"] == "3" for r in iops.values())
    bw = {r["step"]: float(r["value"]) for r in rows if r["metric"] == "bandwidth_bytes"
          and r["op"] == "read" and r["host"] == "here"}
    for step in STEPS:
        # the sweep's bs reached fio: bandwidth over IOPS is the block size
        size = 4096 if step.endswith("bs=4k") else 65536
        assert bw[step] / float(iops[step]["value"]) == pytest.approx(size, rel=0.02)
    # every row has its latency from the merged histograms
    assert {r["step"] for r in rows if r["metric"] == "latency_p99_seconds"
            and r["source"] == "histogram"} == set(STEPS)


def test_sweep_to_markdown_with_a_baseline_step(sweep_session: Path) -> None:
    text = _report(sweep_session, "--baseline", f"step={STEPS[0]}")
    header = next(line for line in text.splitlines() if line.startswith("| step |"))
    assert header.startswith("| step | ioengine | bs | host | IOPS r | BW r |")
    lines = [line for line in text.splitlines() if line.startswith("| rr ")]
    assert len(lines) == 4 and "median of 3 runs" in lines[0]
    assert "(100%)" in lines[0] and "| libaio | 64k |" in lines[3]


def test_sweep_to_html_drawn_by_chromium(sweep_session: Path, tmp_path: Path) -> None:
    from tests.test_report_html import CHROMIUM, assert_self_contained, inline_svgs, png_pixels

    page = tmp_path / "sweep.html"
    _report(sweep_session, "--format", "html", "-o", str(page))
    text = page.read_text(encoding="utf-8")
    assert_self_contained(text)
    for step in STEPS:
        assert step in text
    # bars across the four scenarios, and per-second plots of each selected run
    assert len(inline_svgs(text)) >= 1 + len(STEPS)
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (scripts/setup test installs it as root)")
    shot = tmp_path / "sweep.png"
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--screenshot={shot}", "--window-size=1400,3000", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (1400, 3000)
    bpp = len(rows[0]) // width
    colours = {row[x:x + 3] for row in rows[::8] for x in range(0, len(row), bpp * 8)}
    assert len(colours) > 100  # text, tables and plots in colour: not a blank page
