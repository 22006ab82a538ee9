"""Issue 20, for real: two recordings of one sweep plan (a layout step, fio over bs x rw run
twice on two hosts, iperf3 between them), the baseline with psync and the other with
libaio (tests/report_recording.py's ``compare_sessions``), reported against each other as a
user does: what changed, the network step like a storage step, the gate's summary first, the
sweep's options as CSV columns, and the HTML page as Chromium draws it at 1400 px."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.page_layout import CHROMIUM, measure
from tests.report_recording import SKIP, benchtui, compare_sessions
from tests.test_report_html import md_tables

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sessions() -> tuple[Path, Path]:
    return compare_sessions()


def _report(sessions: tuple[Path, Path], *args: str, code: int = 0
            ) -> subprocess.CompletedProcess[str]:
    before, after = sessions
    done = benchtui("report", str(after), "--baseline", f"session={before}", "--skip", SKIP,
                    *args)
    assert done.returncode == code, done.stderr
    return done


@pytest.fixture(scope="module")
def markdown(sessions: tuple[Path, Path]) -> str:
    return _report(sessions).stdout


@pytest.fixture(scope="module")
def page(sessions: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compare") / "compare.html"
    _report(sessions, "--format", "html", "-o", str(out))
    return out


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_report_opens_with_what_changed(markdown: str, page: Path) -> None:
    head = markdown.split("## Overview", 1)[0]
    # the sessions by file and description: both are "nc-fleet", their files tell them apart
    assert "session **after**: `" in head and "after.btr` (libaio run)" in head
    assert "baseline: session **before**: `" in head and "(psync run)" in head
    changed = _section(markdown, "What changed against the baseline")
    assert "step rand: args `--ioengine=psync` → `--ioengine=libaio`" in changed
    assert "description `psync run` → `libaio run`" in changed
    # a fact of both hosts: the fio file the baseline's layout step created
    fact = next(line for line in changed.splitlines() if "hosts alpha, beta: files" in line)
    assert "`exists = false` → `exists = true, size_bytes = 16777216" in fact
    html = page.read_text(encoding="utf-8")
    assert "What changed against the baseline" in html
    assert "<code>--ioengine=psync</code> → <code>--ioengine=libaio</code>" in html
    assert "exists = false" in html


def test_the_network_step_is_reported_from_each_end(markdown: str) -> None:
    overview = md_tables(_section(markdown, "Overview by step"))[0]
    header = overview[0]
    assert "net BW" in header and "net retr" in header and "net IOPS" not in header
    rows = {r[0]: r for r in overview[1:]}
    net = header.index("net BW")
    assert re.match(r"[\d.]+ [GM]bit/s \(\d+%\) \(server recv\)$", rows["alpha"][net])
    assert re.match(r"[\d.]+ [GM]bit/s \(\d+%\) \(client send\)$", rows["beta"][net])
    table = md_tables(_section(markdown, "net"))[0]
    by_host = {r[0]: dict(zip(table[0], r, strict=True)) for r in table[1:]}
    # the client's own send, the server's own receive: never the other end's figure
    assert by_host["beta (client)"]["net receive"] == "–"
    assert by_host["alpha (server)"]["net send"] == "–"
    assert by_host["beta (client)"]["net send"] != "–"


def test_the_network_step_has_its_plots(sessions: tuple[Path, Path], page: Path,
                                        tmp_path: Path) -> None:
    html = page.read_text(encoding="utf-8")
    net = html.split('<h2>net</h2>', 1)[1].split("<h2>", 1)[0]
    assert "net: network bandwidth per second" in net
    assert "baseline: before" in net  # the baseline's run drawn under the hosts' lines
    out = tmp_path / "net.svg"
    done = benchtui("plot", str(sessions[1]), "--step", "net", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "plotted net of net on alpha, beta" in done.stderr
    assert "network bandwidth per second" in out.read_text()


def test_the_layout_step_is_too_short_to_plot(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    layout = html.split('<h2>layout</h2>', 1)[1].split("<h2>", 1)[0]
    assert "Too short to plot: alpha (" in layout and "<svg" not in layout


def test_repeats_are_one_row_per_host_with_their_range(markdown: str,
                                                       sessions: tuple[Path, Path]) -> None:
    overview = md_tables(_section(markdown, "Overview by step"))[0]
    assert [r[0] for r in overview[1:]] == ["alpha", "beta", "fleet"]
    iops = overview[0].index("rand bs=4k rw=randread IOPS")
    # (a loaded machine's psync 4k reads may be under 1k IOPS: "[510–4.21k]")
    assert re.search(r"\[[\d.]+k?–[\d.]+k?\]$", overview[1][iops])
    assert "each host's row is the **median of its runs**" in markdown
    every = _report(sessions, "--select", "all").stdout
    names = [r[0] for r in md_tables(_section(every, "Overview by step"))[0][1:]]
    assert "alpha (run 1)" in names and "alpha (run 2)" in names


def test_the_gate_prints_its_summary_first(sessions: tuple[Path, Path]) -> None:
    done = _report(sessions, "--fail-below", "1000%", "-o", "/dev/null", code=3)
    lines = done.stderr.splitlines()
    assert re.match(r"benchtui: \d+ values regressed in \d+ steps on 2 hosts; worst: \d+% of "
                    r"baseline, [\w .]+, .+ on \w+", lines[0]), lines[0]
    table = [line.split() for line in lines[2:]]
    # at a fixed block size bandwidth mirrors IOPS: not a line of its own
    assert any("IOPS" in t for t in table) and not any("BW" in t for t in table)
    assert any("net" in t for t in table)
    # --exclude-step leaves the layout step and the network out of the gate
    done = _report(sessions, "--fail-below", "1000%", "--exclude-step", "layout",
                   "--exclude-step", "ne?", "-o", "/dev/null", code=3)
    assert "layout" not in done.stderr and " net " not in done.stderr
    assert "in 4 steps" in done.stderr.splitlines()[0]


def test_steps_choose_what_a_report_covers(sessions: tuple[Path, Path]) -> None:
    text = _report(sessions, "--steps", "rand bs=4k *").stdout
    assert "## rand bs=4k rw=randread" in text and "## rand bs=64k" not in text
    assert "## net" not in text
    wrong = _report(sessions, "--steps", "nope*", code=2)
    assert "--steps 'nope*' matches no step" in wrong.stderr and "layout" in wrong.stderr


def test_the_csv_and_json_have_the_sweep_columns(sessions: tuple[Path, Path]) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(sessions, "--format", "csv").stdout)))
    assert {"bs", "rw"} <= set(rows[0])
    iops = {(r["bs"], r["rw"]): r for r in rows if r["metric"] == "iops" and r["host"] == "alpha"}
    assert set(iops) == {("4k", "randread"), ("4k", "randwrite"), ("64k", "randread"),
                         ("64k", "randwrite"), ("", "")}  # layout: no sweep
    assert all(r["bs"] == "" for r in rows if r["step"] == "net")
    data = json.loads(_report(sessions, "--format", "json").stdout)
    first = next(r for r in data["rows"] if r["step"] == "rand bs=64k rw=randwrite")
    assert first["bs"] == "64k" and first["rw"] == "randwrite"
    assert data["changes"]["after"][0]["where"] in ("step rand", "[session]")


def test_the_page_reads_at_1000_to_1600_px(page: Path) -> None:
    """Chromium lays the page out 1000, 1400 and 1600 px wide (tests/page_layout.py): no
    heading breaks inside a word, no text is under 10 px (SVG text at its size on
    screen), every plot's titles and legends are inside it and its points inside their
    axes; the page never scrolls sideways, and from 1400 px on no table does either."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (scripts/setup test installs it as root)")
    for width, found in measure(page, (1000, 1400, 1600)).items():
        assert found["broken"] == [], (width, found["broken"])
        assert found["small"] == [] and found["smallest"] >= 10, (width, found["small"])
        assert found["cut"] == [], (width, found["cut"])
        assert found["off"] == [], (width, found["off"])
        assert found["client"] > width - 30 and found["scroll"] <= found["client"], found
        if width >= 1400:
            assert found["over"] == 0, (width, found)


def test_latency_per_host_and_the_fleets_percentiles(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    rand = html.split("<h2>rand bs=4k rw=randread</h2>", 1)[1].split("<h2>", 1)[0]
    # one small panel per host, and the fleet's merged-histogram percentiles in one plot
    for host in ("alpha", "beta"):  # each host's median of its runs: "alpha read"
        assert f"{host} read" in rand, host
    # (a title is on as many lines as its plot's width needs: one text each)
    words = " ".join(re.sub(r"<[^>]*>", " ", rand).split())
    assert "the fleet's latency percentiles per second" in words and "fleet read" in rand
    assert "baseline: before" in rand
