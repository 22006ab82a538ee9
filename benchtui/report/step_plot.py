"""One plot of one step, as a file's bytes: what ``benchtui plot`` writes.

The step's runs are the ones its report table shows (``series.plot_groups``): a step run
once, one run of a repeated step named by its label (``randrw#2``), or, with ``select``
median or best, each host's selected run. A repeated step named without its run under
``select = all`` is a question only the user can answer: the error lists its runs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from benchtui.errors import CompareError, UsageError
from benchtui.report.build import DEFAULT_SKIP, ReportOptions, build_report
from benchtui.report.plot.style import FORMATS, palette, plotting, render
from benchtui.report.plot.timeseries import METRICS, TITLES, time_figure
from benchtui.report.series import PlotGroup, plot_groups
from benchtui.report.series_source import SeriesSource


@dataclass(frozen=True)
class PlotRequest:
    session: str
    step: str
    output: str
    #: None: the step's own figure (IOPS, else network)
    metric: str | None = None
    host: str | None = None
    select: str | None = None
    skip: float = DEFAULT_SKIP
    #: (width, height) in pixels at ``dpi`` (None: about 700 px wide, 110 dpi)
    size: tuple[int, int] | None = None
    dpi: float | None = None


@dataclass(frozen=True)
class Plotted:
    data: bytes
    title: str
    hosts: tuple[str, ...]
    metric: str


def output_format(path: str) -> str:
    """"png" or "svg", from the file's extension (UsageError for anything else)."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise UsageError(f"cannot tell the plot's format from {path!r}: name the file "
                         "*.png or *.svg")
    return fmt


_SIZE = re.compile(r"^\s*(\d{2,5})\s*[xX×]\s*(\d{2,5})\s*$")


def parse_size(text: str | None) -> tuple[int, int] | None:
    """``--size 1200x600`` -> (1200, 600) pixels (UsageError for anything else)."""
    if text is None:
        return None
    m = _SIZE.match(text)
    if m is None or not (100 <= int(m.group(1)) <= 20000 and 100 <= int(m.group(2)) <= 20000):
        raise UsageError(f"--size {text!r} is not a size: give WIDTHxHEIGHT in pixels, each "
                         "100 to 20000 (e.g. --size 1200x600)")
    return int(m.group(1)), int(m.group(2))


def check_dpi(dpi: float | None) -> float | None:
    if dpi is not None and not 20 <= dpi <= 1200:
        raise UsageError(f"--dpi {dpi:g} is out of range: give 20 to 1200 (e.g. --dpi 150)")
    return dpi


def check_metric(metric: str | None) -> str | None:
    if metric is None:
        return None
    if metric not in METRICS:
        raise UsageError(f"there is no metric {metric!r} to plot: give "
                         + ", ".join(METRICS[:-1]) + f" or {METRICS[-1]}")
    return metric


def _step_name(source: SeriesSource, request: PlotRequest) -> tuple[str, str | None]:
    """(the step's name, the run's label when the user named one)."""
    layout = source.layout
    if source.reader.meta.imported:
        raise UsageError(f"{request.session} was imported: it has no per-second series to "
                         "plot (its timing is made up); benchtui report gives its tables")
    if request.step in layout.steps:
        return request.step, None
    run = next((r for r in layout.runs if r.label == request.step), None)
    if run is None:
        raise CompareError(f"there is no step {request.step!r} in {request.session}",
                           known=layout.steps)
    return run.step, run.label


def _group(groups: list[PlotGroup], step: str, label: str | None) -> PlotGroup:
    if label is not None:
        rows = tuple(r for g in groups for r in g.rows if r.label == label)
        if not rows:
            raise UsageError(f"run {label!r} has no host's run to plot")
        return PlotGroup(groups[0].session, step, f"{step}, run {rows[0].repeat}", rows)
    if len(groups) > 1:
        labels = [shlex.quote(g.rows[0].label) for g in groups]
        raise UsageError(f"step {step!r} ran {len(groups)} times: name one run (--step "
                         + ", --step ".join(labels) + ") or give --select median or "
                         "--select best")
    return groups[0]


def plot_step(request: PlotRequest) -> Plotted:
    """The plot's bytes (UsageError/CompareError for a request that cannot be drawn)."""
    fmt = output_format(request.output)
    metric = check_metric(request.metric)
    with SeriesSource(request.session) as source:
        step, label = _step_name(source, request)
        select = "all" if label is not None else request.select
        report = build_report([request.session], ReportOptions(
            skip=request.skip, select=select, steps=(step,)))
        groups = [g for g in plot_groups(report) if g.step == step]
        if not groups:
            raise UsageError(f"step {step!r} of {request.session} has no host's run to plot")
        group = _group(groups, step, label)
        rows = group.rows
        if request.host is not None:
            rows = tuple(r for r in rows if r.host == request.host)
            if not rows:
                raise CompareError(f"host {request.host!r} did not run step {step!r}",
                                   known=tuple(r.host for r in group.rows))
        series = [s for s in source.series(rows) if not s.empty]
    hosts = tuple(dict.fromkeys(r.host for r in report.rows if r.host in
                                {s.host for s in series}))
    with plotting():
        colours = palette(list(dict.fromkeys(r.host for r in group.rows)))
        # the step's own figure when none is asked for: IOPS, else what the tool measured
        for name in ((metric,) if metric is not None else METRICS):
            fig = time_figure(series, name, title=f"{group.title}: {TITLES[name]}",
                              colours=colours)
            if fig is not None:
                return Plotted(render(fig, fmt, size=request.size, dpi=request.dpi),
                               group.title, hosts, name)
        raise UsageError(f"step {step!r} has no per-second {metric or 'figure'} to plot"
                         + (f" on {request.host}" if request.host else ""))
