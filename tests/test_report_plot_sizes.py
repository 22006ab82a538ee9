"""Every plot of a report page keeps its text readable whatever the number of hosts or
steps: figures no wider than the page shows them at their own size (``PLOT_WIDTH``, or
``WIDE_WIDTH`` for bars of many steps), and no text under ``MIN_FONT`` points (10 CSS px at
that size); titles wrapped to the figure; bar percentages written across or left out. The
page itself is measured in Chromium by tests/test_report_compare.py; this checks the
figures of more hosts and steps than that recording has, from their SVG."""

from __future__ import annotations

import re

from benchtui.report.model import Row
from benchtui.report.plot.bars import Bar, Panel, bars_figure
from benchtui.report.plot.style import MIN_FONT, PLOT_WIDTH, WIDE_WIDTH, plotting, render
from benchtui.report.plot.timeseries import latency_figure, time_figure
from benchtui.report.series import Points, RunSeries

FONT = re.compile(r"font-size: ([\d.]+)px")
PERCENT = re.compile(r">\d+%</text>")
PERCENT_ANGLE = re.compile(r'rotate\((-?[\d.]+) [^)]*\)">\d+%</text>')
WIDTH = re.compile(r'<svg[^>]* width="([\d.]+)pt"')


def run(host: str) -> RunSeries:
    times = tuple(float(t) for t in range(1, 31))
    lat = {q: Points(times, tuple(v * (1 + (t % 3) / 10) for t in range(30)))
           for q, v in (("p50", 1e-4), ("p99", 1e-3), ("p999", 3e-3))}
    return RunSeries(Row("s", "rand bs=4k rw=randread", host, "rand bs=4k rw=randread", 1,
                         1.0, 31.0),
                     0.0,
                     iops={"read": Points(times, tuple(1e4 + t for t in range(30)))},
                     latency={"read": lat})


def svg_of(fig: object) -> str:
    return render(fig, "svg").decode()  # type: ignore[arg-type]


def check(svg: str, widest: float) -> None:
    width = float(WIDTH.search(svg)[1])  # type: ignore[index]
    assert width <= widest * 72 + 0.5, width
    sizes = [float(s) for s in FONT.findall(svg)]
    assert sizes and min(sizes) >= MIN_FONT, sorted(sizes)[:5]


def test_latency_small_multiples_of_many_hosts_keep_their_labels() -> None:
    hosts = [f"db{i:02d}" for i in range(1, 10)]
    colours = dict.fromkeys(hosts, "#1f77b4")
    with plotting():
        for n in (2, 4, 9):
            title = "rand bs=4k rw=randread: each host's median run of 3: latency " \
                    "percentiles per second"
            fig = latency_figure([run(h) for h in hosts[:n]], title=title, colours=colours)
            assert fig is not None
            svg = svg_of(fig)
            check(svg, PLOT_WIDTH)
            # the title wrapped to the figure: no line longer than its width allows
            assert fig.get_suptitle().count("\n") >= 1, fig.get_suptitle()
        fig = time_figure([run(h) for h in hosts[:1]], "iops", title="x", colours=colours)
        assert fig is not None
        check(svg_of(fig), PLOT_WIDTH)


def test_bars_of_many_steps_and_hosts_are_readable() -> None:
    steps = [f"randread ioengine=libaio bs={bs}" for bs in ("4k", "16k", "64k", "1m")] * 3
    steps = [f"{s}#{i}" for i, s in enumerate(steps)]
    hosts = [f"h{i}" for i in range(8)]
    bars = {(s, h): Bar(1000.0 + i, 900.0) for i, s in enumerate(steps) for h in hosts}
    with plotting():
        fig = bars_figure(steps, hosts, [Panel("IOPS", "iops", bars)],
                          colours=dict.fromkeys(hosts, "#1f77b4"), title="IOPS by step")
        svg = svg_of(fig)
    check(svg, WIDE_WIDTH)
    # 96 bars in 9.6 inches: too narrow to write a percentage across each: the tables have
    # them, and the legend says so; none written smaller or turned
    assert not PERCENT.findall(svg)
    assert "in the tables" in svg
    with plotting():
        few = bars_figure(steps[:2], hosts[:2], [Panel("IOPS", "iops", {
            k: v for k, v in bars.items() if k[0] in steps[:2] and k[1] in hosts[:2]})],
            colours=dict.fromkeys(hosts, "#1f77b4"), title="IOPS by step")
        svg = svg_of(few)
    check(svg, PLOT_WIDTH)
    assert len(PERCENT.findall(svg)) == 4
    assert all(angle in ("0", "-0") for angle in PERCENT_ANGLE.findall(svg))  # across
