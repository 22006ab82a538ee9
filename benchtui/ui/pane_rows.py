"""The rows of a full host pane: which numbers a host's figures give and what each row
charts, as data (``Row``, ``ChartSpec``); ``pane_content`` lays them out and draws them.

Rows, most important first: IOPS r/w, bandwidth r/w, latency p50/p99/p99.9 per direction
(chart: the three as nested bands, ``band_chart``; the numbers in the bands' colours, and
their names as a legend), then per device its utilisation (chart) and its await r/w (a row of
its own with a chart of both, folded into the device's row when the pane is short of lines),
network send/receive and retransmits, memory copy rates, benchmark scores, CPU.

Against a baseline (``--baseline``, ``HostFigures.versus``), each IOPS, bandwidth and latency
number is followed by its share of the baseline's ("r 44.2k 97%"; latency: p99's), muted
within the tolerance, in the better or the warning colour outside it (for latency, higher
is worse); a bandwidth row that no longer fits its column gives its rates shorter
(``Row.short``: "412M/s").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.segment import Segment
from rich.style import Style

from benchtui.model.format import (
    format_bit_rate,
    format_byte_rate,
    format_count,
    format_latency,
    format_ratio,
    format_share,
)
from benchtui.ui import figures as fig
from benchtui.ui.band_chart import BandStyles
from benchtui.ui.charts import ChartStyles

Cells = list[Segment]

#: The quantiles of a latency chart (labels of ``latency_seconds``), lowest first, and
#: their names in the legend.
LATENCY_QUANTILES = ("0.5", "0.99", "0.999")
LATENCY_NAMES = ("p50", "p99", "p99.9")


@dataclass(slots=True)
class PaneStyles:
    """Rich styles of a pane's parts, read from the theme's CSS (component classes)."""

    label: Style
    read: Style
    write: Style
    both: Style
    muted: Style
    warn: Style
    #: Latency percentiles' bands and numbers: p50, p99, p99.9.
    p50: Style
    p99: Style
    p999: Style
    #: A share of the baseline's that is better than it (worse ones take ``warn``).
    better: Style = field(default_factory=lambda: Style(color="green"))
    #: The baseline's ghost lines: over reads (and the first series), writes, latency.
    ghost_read: Style = field(default_factory=lambda: Style(color="grey58"))
    ghost_write: Style = field(default_factory=lambda: Style(color="light_salmon3"))
    ghost_lat: Style = field(default_factory=lambda: Style(color="plum3"))

    @property
    def chart(self) -> ChartStyles:
        return ChartStyles(self.read, self.write, self.both)

    @property
    def bands(self) -> BandStyles:
        return BandStyles(self.p50, self.p99, self.p999)

    @classmethod
    def plain(cls) -> PaneStyles:
        return cls(Style(bold=True), Style(color="cyan"), Style(color="yellow"),
                   Style(color="magenta"), Style(dim=True), Style(color="red"),
                   Style(color="green"), Style(color="bright_yellow"),
                   Style(color="bright_magenta"))


@dataclass(slots=True)
class ChartSpec:
    """What a row's chart draws: one or two series of a host, from the store, or with
    ``quantiles`` the series of ``labels`` with each of these ``quantile`` labels, drawn as
    nested bands (``band_chart``: latency percentiles, lowest first)."""

    metric: str
    labels: dict[str, str]
    secondary: dict[str, str] | None = None
    worst: bool = False
    quantiles: tuple[str, ...] = ()


@dataclass(slots=True)
class Row:
    label: str
    numbers: Cells
    chart: ChartSpec | None = None
    #: Shown under the numbers when the chart has a second line (what the colours mean).
    legend: Cells | None = None
    #: A row that is left out when the pane is short of lines (every row would not get a
    #: line of chart): these cells are added to the previous row's numbers instead.
    fold: Cells | None = None
    #: The numbers written shorter, for when ``numbers`` do not fit their column.
    short: Cells | None = None
    #: Shown only when every row fits (a device that is idle now).
    optional: bool = False



def _rw(read: str, write: str, styles: PaneStyles, shares: tuple[Cells, Cells] = ([], [])
        ) -> Cells:
    return [Segment("r ", styles.muted), Segment(read, styles.read), *shares[0],
            Segment("  w ", styles.muted), Segment(write, styles.write), *shares[1]]


def share_cells(versus: fig.Versus | None, figures: dict[str, float], op: str,
                styles: PaneStyles, *, lower_is_better: bool = False) -> Cells:
    """" 97%": the op's share of the baseline's, styled by how it compares (nothing without
    a baseline figure)."""
    if versus is None:
        return []
    share = figures.get(op)
    if share is None:
        return []
    verdict = versus.judge(share, lower_is_better=lower_is_better)
    style = styles.muted if verdict == 0 else styles.better if verdict > 0 else styles.warn
    return [Segment(" "), Segment(format_share(share), style)]


def _short_rate(value: float | None) -> str:
    """A byte rate in fewer cells: "412M/s" for "412 MiB/s"."""
    return format_byte_rate(value).replace(" ", "").replace("iB/s", "/s")


def _lat(lat: fig.Latency, styles: PaneStyles, style: Style, share: Cells | None = None
         ) -> tuple[Cells, Cells | None]:
    """The numbers of a latency row and their legend: p50/p99/p99.9 each in its band's
    colour, and the names under them ("p50    p99     p99.9"); a mean in the row's colour;
    then the share of the baseline's, when there is one."""
    if lat.source == "mean":
        return [Segment("mean ", styles.muted), Segment(format_latency(lat.p50), style),
                *(share or [])], None
    out: Cells = []
    legend: Cells = []
    band_styles = (styles.p50, styles.p99, styles.p999)
    for i, value in enumerate((lat.p50, lat.p99, lat.p999)):
        name = LATENCY_NAMES[i]
        # each number as wide as its name at least, so that the names keep a space between
        # them under numbers shorter than they are ("–")
        text = format_latency(value).ljust(len(name) if i < 2 else 0)
        if i:
            out.append(Segment("/", styles.muted))
        out.append(Segment(text, band_styles[i]))
        legend.append(Segment(name.ljust(len(text) + (i < 2)), band_styles[i]))
    return [*out, *(share or [])], legend


def producing(f: fig.HostFigures) -> bool:
    """The host has current figures (its step is producing them): rows of figures it does not
    produce now are then left out rather than drawn empty."""
    return bool(f.iops or f.bandwidth or f.latency or f.memory
                or any(v is not None for v in (f.net_send, f.net_receive, f.cpu_busy))
                or any(d.util is not None for d in f.devices))


def host_rows(f: fig.HostFigures, styles: PaneStyles) -> list[Row]:
    """The rows of a full pane, most important first. While the host produces figures,
    only the rows of figures it produces now (``producing``: no `lat w –/–/–` in a
    read-only step, no IOPS in a network step); when it produces none (it stopped
    reporting), every row it has reported, its values "–". Devices that are idle now are
    optional rows (shown when the pane has room)."""
    rows: list[Row] = []
    vs = f.versus
    now = producing(f)
    io = not now or bool(f.iops or f.bandwidth)
    if io and f.io_ops == ("total",):
        rows.append(Row("IOPS", [Segment(format_count(f.iops.get("total")), styles.read),
                                 *share_cells(vs, vs.iops if vs else {}, "total", styles)],
                        ChartSpec("iops", {"op": "total"})))
        rows.append(Row("BW", [Segment(format_byte_rate(f.bandwidth.get("total")),
                                       styles.read),
                               *share_cells(vs, vs.bandwidth if vs else {}, "total", styles)],
                        ChartSpec("bandwidth_bytes", {"op": "total"})))
    elif io and f.io_ops:
        iops_shares = (share_cells(vs, vs.iops, "read", styles),
                       share_cells(vs, vs.iops, "write", styles)) if vs else ([], [])
        rows.append(Row("IOPS", _rw(format_count(f.iops.get("read")),
                                    format_count(f.iops.get("write")), styles, iops_shares),
                        ChartSpec("iops", {"op": "read"}, {"op": "write"})))
        bw_shares = (share_cells(vs, vs.bandwidth, "read", styles),
                     share_cells(vs, vs.bandwidth, "write", styles)) if vs else ([], [])
        bw_read, bw_write = f.bandwidth.get("read"), f.bandwidth.get("write")
        rows.append(Row("BW", _rw(format_byte_rate(bw_read), format_byte_rate(bw_write),
                                  styles, bw_shares),
                        ChartSpec("bandwidth_bytes", {"op": "read"}, {"op": "write"}),
                        short=_rw(_short_rate(bw_read), _short_rate(bw_write), styles,
                                  bw_shares) if vs else None))
    percentiles = "latency_seconds" in f.metrics
    for op in f.latency_ops:
        if now and op not in f.latency:
            continue
        style = styles.write if op == "write" else styles.read
        lat = f.latency.get(op) or fig.Latency(source="" if percentiles else "mean")
        label = "lat" if op == "total" else f"lat {op[0]}"
        chart = (ChartSpec("latency_seconds", {"op": op}, worst=True,
                           quantiles=LATENCY_QUANTILES)
                 if percentiles else ChartSpec("latency_mean_seconds", {"op": op}, worst=True))
        share = share_cells(vs, vs.latency, op, styles, lower_is_better=True) if vs else []
        numbers, legend = _lat(lat, styles, style, share)
        rows.append(Row(label, numbers, chart, legend if percentiles else None))
    awaits = "disk_await_seconds" in f.metrics
    busy = [d for d in f.devices if d.busy] or f.devices[:1]
    for d in busy + [d for d in f.devices if d not in busy]:
        optional = d not in busy
        rows.append(Row(d.name, [Segment(format_ratio(d.util).rjust(6), styles.label)],
                        ChartSpec("disk_util_ratio", {"device": d.name}), optional=optional))
        if awaits:
            read, write = format_latency(d.await_read), format_latency(d.await_write)
            rows.append(Row("  await", _rw(read, write, styles),
                            ChartSpec("disk_await_seconds", {"device": d.name, "op": "read"},
                                      {"device": d.name, "op": "write"}, worst=True),
                            fold=[Segment(" aw ", styles.muted), Segment(read, styles.read),
                                  Segment("/", styles.muted), Segment(write, styles.write)],
                            optional=optional))
    stream = {"stream": "sum"} if f.net_has_sum else {}
    if "net_bandwidth_bytes" in f.metrics \
            and not (now and f.net_send is None and f.net_receive is None):
        net = f.versus.net if f.versus is not None else {}
        rows.append(Row("net", [
            Segment("↑ ", styles.muted), Segment(format_bit_rate(f.net_send), styles.write),
            *share_cells(f.versus, net, "send", styles),
            Segment(" ↓ ", styles.muted), Segment(format_bit_rate(f.net_receive), styles.read),
            *share_cells(f.versus, net, "receive", styles)],
            ChartSpec("net_bandwidth_bytes", {"direction": "send", **stream},
                      {"direction": "receive", **stream})))
    if "net_retransmits" in f.metrics and not (now and f.retransmits is None):
        rows.append(Row("retr", [Segment(format_count(f.retransmits),
                                         styles.warn if f.retransmits else styles.muted)],
                        ChartSpec("net_retransmits", stream)))
    for method, rate in sorted(f.memory.items()):
        rows.append(Row(method.lower(), [Segment(format_byte_rate(rate), styles.read)],
                        ChartSpec("mem_bandwidth_bytes", {"method": method})))
    for test, unit, score in f.scores[-3:]:
        rows.append(Row("score", [Segment(f"{format_count(score)} {unit} {test}",
                                          styles.read)]))
    if "cpu_ratio" in f.metrics and not (now and f.cpu_busy is None):
        rows.append(Row("cpu", [Segment(format_ratio(f.cpu_busy), styles.label)],
                        ChartSpec("cpu_ratio", {"mode": "idle"})))
    return rows
