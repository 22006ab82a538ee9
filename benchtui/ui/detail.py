"""One host in detail: axed charts, every device, every job and the raw output of its tools.

Opened with Enter or a click on a pane; Esc goes back. Tabs (keys 1-4): charts, devices, jobs,
output. The app calls ``update_from`` on its refresh tick; charts redraw only when their data
moved, tables when the host has new samples, and the output log appends only the new lines.
With a baseline (``--baseline``), the IOPS, bandwidth and latency charts plot its lines too
(dotted, "base read", "base p99" in the legend), on the same axes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from benchtui.model.format import (
    format_byte_rate,
    format_bytes,
    format_count,
    format_latency,
    format_ratio,
)
from benchtui.store.fleet import FleetState
from benchtui.ui import figures as fig
from benchtui.ui.axed_chart import ChartLine
from benchtui.ui.chart_widgets import AxedChart
from benchtui.ui.detail_tables import DEVICES, JOBS, FittedTable
from benchtui.ui.footer import ConsoleFooter
from benchtui.ui.latency_chart import BandAxedChart
from benchtui.ui.notices import NoticeBar
from benchtui.ui.output_view import OutputView
from benchtui.ui.pane_rows import LATENCY_NAMES, LATENCY_QUANTILES

if TYPE_CHECKING:
    from benchtui.ui.ghost import Ghost


def fit_parts(parts: list[str], width: int) -> str:
    """``parts`` joined by " · ", as many as fit ``width`` cells whole (a part is never cut
    in its middle); " …" when some were left out."""
    out = ""
    for i, part in enumerate(parts):
        joined = f"{out} · {part}" if out else part
        more = i < len(parts) - 1
        if len(joined) + (2 if more else 0) > width:
            return f"{out} …" if out else part[:max(width - 1, 0)] + "…"
        out = joined
    return out


def _facts_parts(facts: dict[str, object]) -> list[str]:
    parts = []
    for key, fmt in (("os", "{}"), ("kernel", "kernel {}"), ("cpu_count", "{} CPUs"),
                     ("cpu_model", "{}")):
        value = facts.get(key)
        if value:
            parts.append(fmt.format(value))
    mem = facts.get("mem_bytes")
    if isinstance(mem, int | float) and mem:
        parts.append(f"{format_bytes(mem)} RAM")
    return parts


class ChartSlot:
    """One axed chart: what it plots, read from the store on each update. With ``bands``,
    the lines are percentiles, lowest first, drawn as the panes' nested bands on a log scale
    (``BandAxedChart``); else the first two are drawn overlaid, the rest in the legend only."""

    def __init__(self, title: str, formatter: Callable[[float | None], str],
                 lines: list[tuple[str, str, dict[str, str], bool]], *,
                 bands: bool = False,
                 ghosts: list[tuple[str, str, dict[str, str]]] | None = None) -> None:
        #: (legend label, metric, labels, worst-not-sum)
        self.title = title
        self.lines = lines
        self.formatter = formatter
        self.bands = bands
        #: A baseline's lines drawn as ghosts: (legend label, metric, labels).
        self.ghosts = ghosts or []

    @cached_property
    def widget(self) -> AxedChart:
        """The chart, made when first shown (the slots are listed again at every update)."""
        widget = (BandAxedChart(self.formatter, classes="detail-chart") if self.bands
                  else AxedChart(self.formatter, classes="detail-chart"))
        widget.border_title = self.title
        return widget

    def update(self, state: FleetState, host: str, end: float, window: float,
               ghost: Ghost | None = None) -> None:
        plot_width = max(self.widget.size.width - 10, 10)
        spc = window / plot_width  # under 1 s a column: seconds spread (charts.stretch)
        # the last step's lines only: the previous step's leave the legend and the scale
        # at the step change (``figures.oldest``)
        start = max(end - plot_width * spc, state.steps[-1].started if state.steps
                    else -math.inf)
        index = fig.index_of(state.store)
        lines = [ChartLine(label, fig.combined(index.find(metric, host, **labels), start,
                                               worst=worst))
                 for label, metric, labels, worst in self.lines]
        ghosts: list[ChartLine] = []
        if ghost is not None:
            for label, metric, labels in self.ghosts:
                series = ghost.series(host, metric, labels)
                if series is not None:
                    ghosts.append(ChartLine(label, series))
        self.widget.set_data(lines, end=end, seconds_per_column=spc, ghosts=ghosts)


def chart_slots(f: fig.HostFigures) -> list[ChartSlot]:
    """The charts worth drawing for what this host reports."""
    slots: list[ChartSlot] = []
    ops = ["total"] if "total" in f.iops and "read" not in f.iops else ["read", "write"]
    if f.iops:
        slots.append(ChartSlot("IOPS", format_count,
                               [(op, "iops", {"op": op}, False) for op in ops],
                               ghosts=[(f"base {op}", "iops", {"op": op}) for op in ops]))
    if f.bandwidth:
        slots.append(ChartSlot("bandwidth", format_byte_rate,
                               [(op, "bandwidth_bytes", {"op": op}, False) for op in ops],
                               ghosts=[(f"base {op}", "bandwidth_bytes", {"op": op})
                                       for op in ops]))
    for op in ops:
        if op in f.latency and f.latency[op].source != "mean":
            slots.append(ChartSlot(f"latency {op} (worst job, log scale)", format_latency, [
                (name, "latency_seconds", {"op": op, "quantile": q}, True)
                for name, q in zip(LATENCY_NAMES, LATENCY_QUANTILES, strict=True)],
                bands=True, ghosts=[("base p99", "latency_seconds",
                                     {"op": op, "quantile": "0.99"})]))
        elif op in f.latency:
            slots.append(ChartSlot(f"mean latency {op}", format_latency, [
                ("mean", "latency_mean_seconds", {"op": op}, True)],
                ghosts=[("base mean", "latency_mean_seconds", {"op": op})]))
    for d in f.devices:
        slots.append(ChartSlot(f"{d.name} utilisation", format_ratio,
                               [("util", "disk_util_ratio", {"device": d.name}, True)]))
        slots.append(ChartSlot(f"{d.name} await", format_latency, [
            (op, "disk_await_seconds", {"device": d.name, "op": op}, True)
            for op in ("read", "write")]))
    if f.net_send is not None or f.net_receive is not None:
        slots.append(ChartSlot("network (bytes/s)", format_byte_rate, [
            (d, "net_bandwidth_bytes", {"direction": d, "stream": "sum"}, False)
            for d in ("send", "receive")]))
    if f.retransmits is not None:
        slots.append(ChartSlot("retransmits", format_count,
                               [("retr", "net_retransmits", {}, False)]))
    for method in sorted(f.memory):
        slots.append(ChartSlot(f"memory {method}", format_byte_rate,
                               [(method, "mem_bandwidth_bytes", {"method": method}, False)]))
    if f.cpu_busy is not None:
        slots.append(ChartSlot("cpu iowait", format_ratio,
                               [("iowait", "cpu_ratio", {"mode": "iowait"}, True),
                                ("user", "cpu_ratio", {"mode": "user"}, True)]))
    return slots


def job_rows(state: FleetState, host: str) -> list[tuple[str, ...]]:
    """Every (step, job, op) of the host: its IOPS, bandwidth and percentiles: the tool's
    own end-of-run figures once the run is over, its newest interval's before
    (``figures.job_figures``), and which ("from")."""
    return [(step, job, op, format_count(v.get("iops")), format_byte_rate(v.get("bw")),
             format_latency(v.get("mean")), format_latency(v.get("0.5")),
             format_latency(v.get("0.99")), format_latency(v.get("0.999")),
             "end of run" if final else "interval")
            for (step, job, op), (v, final) in sorted(fig.job_figures(state, host).items())]


def device_rows(f: fig.HostFigures) -> list[tuple[str, ...]]:
    return [(d.name, format_ratio(d.util), format_count(d.iops_read), format_count(d.iops_write),
             format_byte_rate(d.bw_read), format_byte_rate(d.bw_write),
             format_latency(d.await_read), format_latency(d.await_write),
             format_count(d.queue)) for d in f.devices]


#: Keys that scroll the tab shown (its charts, table or output), and how.
SCROLL_KEYS = (("up", "up"), ("down", "down"), ("pageup", "page_up"),
               ("pagedown", "page_down"), ("home", "home"), ("end", "end"))
#: A table's actions for them (it moves its cursor, and scrolls to keep it in sight).
_TABLE_ACTIONS = {"up": "cursor_up", "down": "cursor_down", "page_up": "page_up",
                  "page_down": "page_down", "home": "scroll_top", "end": "scroll_bottom"}
#: The widget each tab scrolls.
_SCROLLED = {"charts-tab": "#charts", "devices-tab": "#devices", "jobs-tab": "#jobs",
             "output-tab": "#output"}


class HostDetailScreen(Screen[None]):
    """The focused host. Esc returns to the grid."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back"),
                Binding("1", "tab('charts')", "Charts", show=False),
                Binding("2", "tab('devices')", "Devices", show=False),
                Binding("3", "tab('jobs')", "Jobs", show=False),
                Binding("4", "tab('output')", "Output", show=False),
                Binding("o", "output_tool", "Output: next tool", show=False),
                Binding("f", "output_fold", "Output: fold JSON", show=False),
                *(Binding(key, f"scroll('{how}')", how, show=False)
                  for key, how in SCROLL_KEYS)]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]  # noqa: RUF012 - Textual's API
    DEFAULT_CSS = """
    HostDetailScreen { layout: vertical; overflow: hidden; }
    HostDetailScreen #detail-title { height: 2; padding: 0 1; background: $panel; }
    HostDetailScreen TabbedContent { height: 1fr; }
    HostDetailScreen ContentSwitcher { height: 1fr; }
    HostDetailScreen TabPane { height: 1fr; padding: 0; }
    HostDetailScreen #charts { grid-size: 1; grid-rows: 12; grid-gutter: 0 1;
                               overflow-y: auto; height: 1fr; }
    HostDetailScreen.-wide #charts { grid-size: 2; }
    HostDetailScreen .detail-chart { height: 12; border: round $panel-lighten-2;
                                     border-title-align: left; }
    HostDetailScreen #charts { scrollbar-size-vertical: 1; }
    HostDetailScreen DataTable { height: auto; max-height: 1fr; scrollbar-size: 1 1; }
    HostDetailScreen .table-more { height: auto; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host
        self._slots: list[ChartSlot] = []
        self._slot_key: tuple[str, ...] = ()
        self._table_key: object = None

    def compose(self) -> ComposeResult:
        yield Static(self.host, id="detail-title")
        with TabbedContent(initial="charts-tab"):
            with TabPane("Charts", id="charts-tab"):
                yield Grid(id="charts")
            with TabPane("Devices", id="devices-tab"):
                yield FittedTable(DEVICES, id="devices")
                yield Static("", id="devices-more", classes="table-more")
            with TabPane("Jobs", id="jobs-tab"):
                yield FittedTable(JOBS, id="jobs")
                yield Static("", id="jobs-more", classes="table-more")
            with TabPane("Output", id="output-tab"):
                yield OutputView()
        yield NoticeBar()
        yield ConsoleFooter()

    def on_mount(self) -> None:
        redraw = getattr(self.app, "refresh_display", None)  # the console's: draw it now
        if callable(redraw):
            self.call_after_refresh(redraw)

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"{name}-tab"

    def action_scroll(self, how: str) -> None:
        """Scroll the tab shown: arrows, PgUp/PgDn, Home/End (a table moves its cursor)."""
        active = self.query_one(TabbedContent).active
        target = self.query_one(_SCROLLED.get(active, "#charts"))
        if isinstance(target, DataTable):
            getattr(target, f"action_{_TABLE_ACTIONS[how]}")()
        else:
            getattr(target, f"scroll_{how}")()

    def action_output_tool(self) -> None:
        """The Output tab shows the next tool (all, then each in turn)."""
        self.action_tab("output")
        self.query_one(OutputView).next_tool()

    def action_output_fold(self) -> None:
        """fio's JSON documents folded to one line each, or as printed."""
        self.action_tab("output")
        self.query_one(OutputView).toggle_fold()

    def update_from(self, state: FleetState, now: float, end: float, window: float,
                    ghost: Ghost | None = None) -> None:
        view = state.hosts.get(self.host)
        if view is None or not self.is_mounted or not self.query("#jobs"):
            return  # pushed, not composed yet (children mount after the screen): next tick
        f = fig.host_figures(state, self.host, now)
        title = f"{self.host} · {f.state}" + (f" · {f.reason}" if f.reason else "")
        tools = ", ".join(view.tools)
        parts = [*_facts_parts(view.facts), *([f"tools: {tools}"] if tools else [])]
        heading = self.query_one("#detail-title", Static)
        heading.update(title + "\n" + fit_parts(parts, max(heading.content_size.width, 20)))
        self._update_charts(state, f, end, window, ghost)
        key = (view.samples, view.state)
        if key != self._table_key:
            self._table_key = key
            self.query_one("#devices", FittedTable).show(device_rows(f))
            self.query_one("#jobs", FittedTable).show(job_rows(state, self.host))
        for name in ("devices", "jobs"):  # after a resize or a scroll too
            self._say_more(name)
        self.query_one(OutputView).show(view.output, view.tools)

    def _update_charts(self, state: FleetState, f: fig.HostFigures, end: float,
                       window: float, ghost: Ghost | None) -> None:
        slots = chart_slots(f)
        key = tuple(s.title for s in slots)
        grid = self.query_one("#charts", Grid)
        if key and not set(key) <= set(self._slot_key):
            # New kinds of data appeared: add their charts (keep the ones already shown).
            known = {s.title for s in self._slots}
            added = [s for s in slots if s.title not in known]
            self._slots.extend(added)
            self._slot_key = tuple(s.title for s in self._slots)
            grid.mount_all([s.widget for s in added])
        for slot in self._slots:
            slot.update(state, self.host, end, window, ghost)

    def _say_more(self, name: str) -> None:
        """Under a table wider than the screen, the columns left out at this width and those
        out of sight (a scroll bar alone is easy to miss)."""
        table = self.query_one(f"#{name}", FittedTable)
        left_out, cut = table.left_out, table.cut
        parts = []
        if left_out:
            parts.append(f"not shown at this width: {', '.join(left_out)}")
        if cut:
            parts.append(f"→ more columns: {', '.join(cut)} (scroll: → or shift+wheel)")
        hint = self.query_one(f"#{name}-more", Static)
        hint.display = bool(parts)
        hint.update(" · ".join(parts))
