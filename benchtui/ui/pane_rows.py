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



def _rw(read: str | None, write: str | None, styles: PaneStyles,
        shares: tuple[Cells, Cells] = ([], [])) -> Cells:
    """"r 44.2k  w 12.1k": the directions given (None: the step does not measure it, left
    out), each with its share of the baseline's."""
    out: Cells = []
    if read is not None:
        out += [Segment("r ", styles.muted), Segment(read, styles.read), *shares[0]]
    if write is not None:
        out += [Segment("  w " if out else "w ", styles.muted), Segment(write, styles.write),
                *shares[1]]
    return out


def _shown(value: float | None, every: bool, text: str) -> str | None:
    """``text`` (``value`` formatted) when the row shows this value: it has one, or every
    value is shown ("–" where it has none: a host that stopped reporting)."""
    return text if value is not None or every else None


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


def host_rows(f: fig.HostFigures, styles: PaneStyles) -> list[Row]:
    """The rows of a full pane, most important first: the figures the host has now (its
    step's, its monitors', or once its run is over the tool's end-of-run figures), each row
    with only what it measures (a read-only step: no `lat w` row, IOPS "r 5.09k" without a
    "w –"); none at all for a host that has no figures (the pane then says so in a word).
    A host that stopped reporting while running (``stale``) keeps every row it has
    reported, its values "–", so that its charts show where it stopped. Devices that are
    idle now are optional rows (shown when the pane has room)."""
    rows: list[Row] = []
    vs = f.versus
    every = f.stale
    if f.io_ops == ("total",) and (every or "total" in f.iops or "total" in f.bandwidth):
        rows.append(Row("IOPS", [Segment(format_count(f.iops.get("total")), styles.read),
                                 *share_cells(vs, vs.iops if vs else {}, "total", styles)],
                        ChartSpec("iops", {"op": "total"})))
        rows.append(Row("BW", [Segment(format_byte_rate(f.bandwidth.get("total")),
                                       styles.read),
                               *share_cells(vs, vs.bandwidth if vs else {}, "total", styles)],
                        ChartSpec("bandwidth_bytes", {"op": "total"})))
    elif f.io_ops and (every or f.iops or f.bandwidth):
        read, write = f.iops.get("read"), f.iops.get("write")
        iops_shares = (share_cells(vs, vs.iops, "read", styles),
                       share_cells(vs, vs.iops, "write", styles)) if vs else ([], [])
        rows.append(Row("IOPS", _rw(_shown(read, every, format_count(read)),
                                    _shown(write, every, format_count(write)), styles,
                                    iops_shares),
                        ChartSpec("iops", {"op": "read"}, {"op": "write"})))
        bw_shares = (share_cells(vs, vs.bandwidth, "read", styles),
                     share_cells(vs, vs.bandwidth, "write", styles)) if vs else ([], [])
        bw_read, bw_write = f.bandwidth.get("read"), f.bandwidth.get("write")
        rows.append(Row("BW", _rw(_shown(bw_read, every, format_byte_rate(bw_read)),
                                  _shown(bw_write, every, format_byte_rate(bw_write)),
                                  styles, bw_shares),
                        ChartSpec("bandwidth_bytes", {"op": "read"}, {"op": "write"}),
                        short=_rw(_shown(bw_read, every, _short_rate(bw_read)),
                                  _shown(bw_write, every, _short_rate(bw_write)), styles,
                                  bw_shares) if vs else None))
    percentiles = "latency_seconds" in f.metrics
    for op in f.latency_ops:
        if not every and op not in f.latency:
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
    devices = [d for d in f.devices if every or d.util is not None]
    busy = [d for d in devices if d.busy] or devices[:1]
    for d in busy + [d for d in devices if d not in busy]:
        optional = d not in busy
        rows.append(Row(d.name, [Segment(format_ratio(d.util).rjust(6), styles.label)],
                        ChartSpec("disk_util_ratio", {"device": d.name}), optional=optional))
        if awaits and (every or d.await_read is not None or d.await_write is not None):
            aw_read = _shown(d.await_read, every, format_latency(d.await_read))
            aw_write = _shown(d.await_write, every, format_latency(d.await_write))
            fold = [Segment(" aw ", styles.muted)]
            if aw_read is not None:
                fold.append(Segment(aw_read, styles.read))
            if aw_write is not None:
                fold += [Segment("/", styles.muted)] if aw_read is not None else []
                fold.append(Segment(aw_write, styles.write))
            rows.append(Row("  await", _rw(aw_read, aw_write, styles),
                            ChartSpec("disk_await_seconds", {"device": d.name, "op": "read"},
                                      {"device": d.name, "op": "write"}, worst=True),
                            fold=fold, optional=optional))
    stream = {"stream": "sum"} if f.net_has_sum else {}
    if "net_bandwidth_bytes" in f.metrics \
            and (every or f.net_send is not None or f.net_receive is not None):
        net = f.versus.net if f.versus is not None else {}
        cells: Cells = []
        for sign, value, style, direction in (("↑ ", f.net_send, styles.write, "send"),
                                              ("↓ ", f.net_receive, styles.read, "receive")):
            if value is not None or every:
                cells += [Segment((" " if cells else "") + sign, styles.muted),
                          Segment(format_bit_rate(value), style),
                          *share_cells(f.versus, net, direction, styles)]
        rows.append(Row("net", cells,
                        ChartSpec("net_bandwidth_bytes", {"direction": "send", **stream},
                                  {"direction": "receive", **stream})))
    if "net_retransmits" in f.metrics and (every or f.retransmits is not None):
        rows.append(Row("retr", [Segment(format_count(f.retransmits),
                                         styles.warn if f.retransmits else styles.muted)],
                        ChartSpec("net_retransmits", stream)))
    for method, rate in sorted(f.memory.items()):
        rows.append(Row(method.lower(), [Segment(format_byte_rate(rate), styles.read)],
                        ChartSpec("mem_bandwidth_bytes", {"method": method})))
    for test, unit, score in f.scores[-3:]:
        rows.append(Row("score", [Segment(f"{format_count(score)} {unit} {test}",
                                          styles.read)]))
    if "cpu_ratio" in f.metrics and (every or f.cpu_busy is not None):
        rows.append(Row("cpu", [Segment(format_ratio(f.cpu_busy), styles.label)],
                        ChartSpec("cpu_ratio", {"mode": "idle"})))
    return rows
