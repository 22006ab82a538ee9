"""How every plot looks and how it is written: fonts (CJK host names included), colours,
axis labels in the console's units, and a figure as SVG or PNG bytes.

Figures are ``matplotlib.figure.Figure`` objects drawn on the Agg canvas (no pyplot, no
global figure state, no display). SVG is written with ``svg.fonttype = "none"``: text stays
text (searchable, selectable, small), and the browser draws it with its own fonts, falling
back per glyph to a CJK font where the host names need one. PNG is drawn by Agg with
matplotlib's fonts: DejaVu Sans, then the Noto CJK fonts where installed (Debian
``fonts-noto-cjk``, which ``scripts/setup`` installs).
"""

from __future__ import annotations

import io
import logging
import math
import re
import textwrap
import warnings
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import matplotlib
from matplotlib import font_manager
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator

from benchtui.model.format import format_byte_rate, format_count, format_latency, format_metric

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

FORMATS = ("svg", "png")
K = TypeVar("K", bound=Hashable)
#: What the plot modules return (for modules that must not import matplotlib themselves).
PlotFigure: TypeAlias = Figure
#: Font families in the order tried; the CJK ones only where installed (glyph fallback,
#: matplotlib 3.6+). The SVG's CSS ends with the generic family.
_FAMILIES = ("DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC",
             "WenQuanYi Zen Hei", "Droid Sans Fallback")
#: Colours by host, in the report's host order (matplotlib's tab10, then tab20's light ones).
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
            "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5")
_PATH_DATA = re.compile(r' d="[^"]*"')
_LONG_DECIMALS = re.compile(r"(\d\.\d)\d+")
_ID_OR_REFERENCE = re.compile(r'( id="|url\(#|href="#)')
#: Pixels per inch of PNG output.
PNG_DPI = 110
#: The width of a time plot (inches). A page shows a figure at its own size (an SVG inch
#: is 96 CSS pixels: 614 px) in a cell at least that wide (html.py's CSS), never shrunk,
#: so that every text of it keeps its size on screen: ``MIN_FONT`` points are 10 px.
PLOT_WIDTH = 6.4
#: The widest figure (a bar chart of many steps): a page 1000 px wide still shows it whole.
WIDE_WIDTH = 9.6
#: The smallest text of any plot, in points (10 CSS pixels at the figure's own size).
MIN_FONT = 7.5
#: The legend's text, in points.
LEGEND_FONT = 8.0
#: Points of an average character of DejaVu Sans, per point of font size (a wide guess:
#: titles and legends are fitted with it).
CHAR_WIDTH = 0.62


@cache
def _families() -> tuple[str, ...]:
    installed = {f.name for f in font_manager.fontManager.ttflist}
    return (*(f for f in _FAMILIES if f in installed), "sans-serif")


@contextmanager
def plotting() -> Iterator[None]:
    """Draw and write figures inside this: the style, and no warning about a glyph missing
    from one font (the next font of the list draws it)."""
    style: dict[RcKeyType, Any] = {
        "svg.fonttype": "none",
        "font.family": list(_families()),
        "font.size": 9.0,
        "axes.titlesize": 10.0,
        "axes.grid": True,
        "grid.color": "#dddddd",
        "grid.linewidth": 0.6,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "legend.fontsize": LEGEND_FONT,
        "legend.frameon": False,
        "lines.linewidth": 1.3,
    }
    with matplotlib.rc_context(style), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
        yield


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches on the Agg canvas."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def fitted_title(fig: Figure, text: str) -> None:
    """``text`` as the figure's title, on as many lines as it needs to fit the figure's
    width (a long step name and what is plotted: "rand bs=4k rw=randread: each host's
    median run of 2: latency percentiles per second")."""
    size = 1.2 * float(matplotlib.rcParams["font.size"])  # the title's "large"
    chars = max(int(fig.get_figwidth() * 72 / (size * CHAR_WIDTH)), 20)
    fig.suptitle("\n".join(textwrap.wrap(text, chars)) or text)


def legend_columns(fig: Figure, labels: Sequence[str]) -> int:
    """How many columns of ``labels`` a legend under the figure has room for: its columns
    as wide as its widest entry (and the line drawn before it) across the figure's width."""
    if not labels:
        return 1
    entry = (max(map(len, labels)) * CHAR_WIDTH + 3.5) * LEGEND_FONT
    return max(1, min(len(labels), int(fig.get_figwidth() * 72 * 0.96 // entry)))


def palette(keys: Sequence[K]) -> dict[K, str]:
    """A colour per key (a host), in order (the same host keeps its colour in every plot)."""
    return {key: _COLOURS[i % len(_COLOURS)] for i, key in enumerate(keys)}


def shade(colour: str, step: int) -> str:
    """``colour`` lightened ``step`` times (a host's later runs of a repeated step)."""
    if step <= 0:
        return colour
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    keep = 0.62 ** min(step, 4)
    return "#" + "".join(f"{round(255 - (255 - c) * keep):02x}" for c in (r, g, b))


def render(fig: Figure, fmt: str, *, size: tuple[int, int] | None = None,
           dpi: float | None = None) -> bytes:
    """The figure as SVG (text kept as text, no date: the same figure gives the same bytes
    but for its clip-path ids) or PNG; ``size``: width x height in pixels at ``dpi``
    (PNG_DPI by default; an SVG gets the same size in inches)."""
    out = io.BytesIO()
    dpi = dpi or PNG_DPI
    if size is not None:
        fig.set_size_inches(size[0] / dpi, size[1] / dpi)
    if fmt == "svg":
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
        # path coordinates to 0.1 pt (1/720 inch), not matplotlib's 6 decimals: a third
        # smaller, the same to the eye
        return _PATH_DATA.sub(lambda m: _LONG_DECIMALS.sub(r"\1", m.group()),
                              out.getvalue().decode()).encode()
    if fmt != "png":
        raise ValueError(f"no plot format {fmt!r}")
    fig.savefig(out, format="png", dpi=dpi, metadata={"Software": None})
    return out.getvalue()


def inline_svg(svg: bytes, prefix: str) -> str:
    """An SVG document as an element to put in an HTML page: no XML declaration, DOCTYPE
    or metadata, and every id (and every reference to one) prefixed with ``prefix``, so
    that the figures of one page do not share ids (matplotlib names each figure's groups
    ``figure_1``, ``axes_1``, ...)."""
    text = svg.decode()
    text = text[text.index("<svg"):]
    start, end = text.find("<metadata>"), text.find("</metadata>")
    if 0 <= start < end:
        text = text[:start] + text[end + len("</metadata>"):]
    return _ID_OR_REFERENCE.sub(lambda m: m.group(1) + prefix, text)


def inline_figure(fig: Figure, prefix: str) -> str:
    """``fig`` as an SVG element for an HTML page (``inline_svg``)."""
    return inline_svg(render(fig, "svg"), prefix)


def _formatter(fmt: Callable[[float], str]) -> FuncFormatter:
    return FuncFormatter(lambda v, _pos: fmt(v))


class _BinaryLocator(MaxNLocator):
    """Linear ticks at round numbers of the binary unit the values are shown in (0, 20, 40
    MiB/s rather than 0, 23.8, 47.7 MiB/s)."""

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        top = max(abs(vmin), abs(vmax))
        unit = 1024.0 ** max(0, math.floor(math.log(top, 1024))) if top >= 1 else 1.0
        return [v * unit for v in super().tick_values(vmin / unit, vmax / unit)]


def value_axis(axis: Axis, kind: str) -> None:
    """Tick labels in the console's units: "iops" (12.3k), "bandwidth" (412 MiB/s),
    "latency" (412 µs)."""
    if kind == "bandwidth":
        if axis.get_scale() == "linear":
            axis.set_major_locator(_BinaryLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        else:
            axis.set_major_locator(LogLocator(base=2, numticks=8))
            axis.set_minor_formatter(_formatter(lambda _v: ""))
        axis.set_major_formatter(_formatter(format_byte_rate))
    elif kind == "net":  # bits per second, as iperf3 and the tables say it
        axis.set_major_formatter(_formatter(
            lambda v: format_metric("net_bandwidth_bytes", v)))
    elif kind == "latency":
        axis.set_major_formatter(_formatter(format_latency))
        axis.set_minor_formatter(_formatter(lambda _v: ""))
    else:
        axis.set_major_formatter(_formatter(format_count))
