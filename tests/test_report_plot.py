"""``benchtui plot`` on a session recorded with real fio (tests/report_recording.py): real
PNG and SVG images of a sensible size with a line per host (and per percentile), the
per-second series following the tables' rules, and the mistakes a user makes as one
sentence, exit 2 and no file."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchtui.report.build import ReportOptions, build_report
from benchtui.report.series import MAX_POINTS, downsample, plot_groups
from benchtui.report.series_source import SeriesSource
from benchtui.report.window import INTERVAL, JITTER
from tests.report_recording import HOSTS, SKIP, benchtui, report_session

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def session() -> Path:
    return report_session()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def svg_lines(root: ET.Element) -> list[str]:
    """The ids of the plotted lines (timeseries.py gives each line the id line-N)."""
    return [e.get("id", "") for e in root.iter(f"{SVG}g") if e.get("id", "").startswith("line-")]


def svg_texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()).strip() for e in root.iter(f"{SVG}text")]


def plot(session: Path, out: Path, *args: str) -> str:
    done = benchtui("plot", str(session), "--skip", SKIP, "-o", str(out), *args)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_png_is_a_real_image_of_a_sensible_size(session: Path, tmp_path: Path) -> None:
    out = tmp_path / "randread.png"
    said = plot(session, out, "--step", "randread")
    width, height = png_size(out.read_bytes())
    assert width > 300 and height > 200, (width, height)
    assert "alpha, beta" in said and str(out) in said
    assert [p.name for p in tmp_path.iterdir()] == ["randread.png"]  # no temporary left


def test_svg_has_a_line_per_host_and_keeps_text_as_text(session: Path, tmp_path: Path) -> None:
    out = tmp_path / "randread.svg"
    plot(session, out, "--step", "randread", "--metric", "iops")
    root = ET.fromstring(out.read_bytes())
    texts = svg_texts(root)
    for host in HOSTS:
        assert host in texts, texts  # the legend, as text (svg.fonttype none)
    assert len(svg_lines(root)) == 2  # randread has one op (read): one line per host
    assert "seconds since the tool started" in texts
    assert any("ramp-up" in t for t in texts)  # --skip 1: the first second is shaded


def test_latency_of_one_host_has_its_three_percentiles_per_op(session: Path,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "lat.svg"
    plot(session, out, "--step", "randrw#2", "--metric", "latency", "--host", "beta")
    root = ET.fromstring(out.read_bytes())
    texts = svg_texts(root)
    assert "beta" in texts and "alpha" not in texts
    assert {"p50", "p99", "p99.9", "read", "write"} <= set(texts)
    assert len(svg_lines(root)) == 3 * 2  # p50/p99/p99.9 of read and of write


def test_a_repeated_step_is_one_run_or_each_hosts_selected_one(session: Path,
                                                               tmp_path: Path) -> None:
    done = benchtui("plot", str(session), "--step", "randrw", "--select", "all", "-o",
                    str(tmp_path / "x.png"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    # the runs to choose from, as a shell takes them
    assert "(--step 'randrw#1', --step 'randrw#2')" in done.stderr
    assert not list(tmp_path.iterdir())
    out = tmp_path / "best.svg"
    plot(session, out, "--step", "randrw", "--select", "best", "--metric", "bandwidth")
    texts = svg_texts(ET.fromstring(out.read_bytes()))
    # each host's best run: the legend says which run it is
    assert any(t.startswith("alpha (run ") for t in texts), texts
    assert any(t.startswith("beta (run ") for t in texts), texts


@pytest.mark.parametrize(("args", "says"), [
    (("--step", "randread", "-o", "{dir}/plot.jpg"), "name the file *.png or *.svg"),
    (("--step", "nope", "-o", "{dir}/plot.png"), "(there are: randread, randrw)"),
    (("--step", "randread", "--metric", "cpu", "-o", "{dir}/plot.png"),
     "give iops, bandwidth, latency or net"),
    (("--step", "randread", "--host", "gamma", "-o", "{dir}/plot.svg"),
     "(there are: alpha, beta)"),
])
def test_mistakes_are_one_sentence_exit_2_and_nothing_written(
        session: Path, tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    done = benchtui("plot", str(session), *(a.format(dir=tmp_path) for a in args))
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_per_second_iops_average_to_the_tables_figure(session: Path) -> None:
    """The plotted IOPS are the jobs' sum per second: over the table's window they average
    to the table's IOPS over the window (``--figures window``: the jobs' window means),
    a partial interval weighted by the seconds it covered."""
    report = build_report([str(session)], ReportOptions(skip=float(SKIP), figures="window"))
    group = next(g for g in plot_groups(report) if g.step == "randread")
    with SeriesSource(str(session)) as source:
        series = source.series(group.rows)
    assert [s.host for s in series] == list(HOSTS)
    for s in series:
        table = s.row.get("iops", "read")
        assert table is not None
        points = s.iops["read"]
        # each point weighted by the time it covered: a partial interval's own seconds
        durations = points.durations or (None,) * len(points)
        inside = [(v, 1.0 if d is None else d)
                  for t, v, d in zip(points.times, points.values, durations, strict=True)
                  if s.row.t0 + INTERVAL - JITTER <= s.origin + t < s.row.t1 + JITTER]
        assert len(inside) >= 6
        mean = sum(v * d for v, d in inside) / sum(d for _v, d in inside)
        assert mean == pytest.approx(table.value, rel=0.02)
        assert set(s.latency["read"]) == {"p50", "p99", "p999"}
        assert s.latency_source["read"] == "histogram"
        p50, p999 = s.latency["read"]["p50"].values, s.latency["read"]["p999"].values
        assert all(a <= b for a, b in zip(p50, p999, strict=True))


def test_long_lines_are_averaged_down_in_buckets() -> None:
    times = [float(t) for t in range(3300)]
    values = [100.0 + (t % 2) for t in range(3300)]
    short = downsample(times, values)
    assert len(short) <= MAX_POINTS and len(short) >= MAX_POINTS // 2
    assert short.values[0] == pytest.approx(100.5) and short.times[0] == pytest.approx(0.5)
    assert downsample(times[:50], values[:50]).values == tuple(values[:50])


def test_a_repeated_step_is_each_hosts_median_of_its_runs_by_default(session: Path,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "median.svg"
    plot(session, out, "--step", "randrw")
    title = [t for t in svg_texts(ET.fromstring(out.read_bytes())) if t.startswith("randrw")]
    assert title == ["randrw: each host's median of 2 runs: IOPS per second"], title


def test_size_and_dpi(session: Path, tmp_path: Path) -> None:
    out = tmp_path / "big.png"
    plot(session, out, "--step", "randread", "--size", "1200x500", "--dpi", "150")
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert (width, height) == (1200, 500)
    done = benchtui("plot", str(session), "--step", "randread", "--size", "12",
                    "-o", str(tmp_path / "x.png"))
    assert done.returncode == 2 and "--size '12' is not a size" in done.stderr
    assert not (tmp_path / "x.png").exists()
