"""The detail view's latency chart: p50, p99 and p99.9 as the panes' nested bands on a log
scale, with axes, value labels, time ticks and a legend (``axed_chart.axed_band_rows``).

An ``AxedChart`` in all else (the same ``set_data``, cached rows, redraw only when the data
moved), so it costs what the other detail charts cost: three series' columns instead of two,
and the band levels (a bisection per value, ``band_chart.band_levels``).

Colours are the panes' band colours. The chart's component classes ``chart--p50``,
``chart--p99``, ``chart--p999`` take a theme's rule when it has one
(``AxedChart > .chart--p50 { color: $bt-p50; }``: the built-in themes have them); without
(a theme of a user's made before the detail view's bands), the theme's ``$bt-p50``,
``$bt-p99``, ``$bt-p999`` variables, as those rules use them; a theme without these gets
the panes' plain colours (``PaneStyles.plain``: green, yellow, magenta).

Public API::

    BandAxedChart(formatter=format_latency, *, id=None, classes=None)
        .set_data(lines, *, end, seconds_per_column=1.0)   # lines lowest first: p50, p99, p99.9
    band_colours(theme_css) -> dict[str, Style]           # "p50" -> its $bt-p50 colour
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.color import Color, ColorParseError

from benchtui.model.format import format_latency
from benchtui.ui.axed_chart import axed_band_rows
from benchtui.ui.band_chart import BandStyles
from benchtui.ui.chart_widgets import AxedChart
from benchtui.ui.charts import ChartStyles
from benchtui.ui.pane_rows import PaneStyles
from benchtui.ui.themes import ConsoleTheme, theme_variables

#: The bands' names: component classes ``chart--NAME``, theme variables ``$bt-NAME``.
BANDS = ("p50", "p99", "p999")


def band_colours(theme_css: str) -> dict[str, Style]:
    """The bands' colours a theme file defines (``$bt-p50: #5cbf9a;``, or another of its
    ``$bt-*`` variables), by band name; bands it leaves out or gives no colour are absent."""
    variables = theme_variables(theme_css)
    found: dict[str, Style] = {}
    for name in BANDS:
        value = variables.get(name)
        for _ in range(8):  # $bt-p50: $bt-success; and so on, a few steps at most
            if value is None or not value.startswith("$bt-"):
                break
            value = variables.get(value.removeprefix("$bt-"))
        if value is None:
            continue
        try:
            found[name] = Style(color=Color.parse(value).rich_color)
        except ColorParseError:
            continue
    return found


class BandAxedChart(AxedChart):
    """Latency percentiles of the focused host as nested bands, with axes (log scale)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*AxedChart.COMPONENT_CLASSES,
                                             *(f"chart--{name}" for name in BANDS)}
    GHOST_CLASSES: ClassVar[tuple[str, ...]] = ("chart--ghost-lat",)
    GHOST_FALLBACK: ClassVar[tuple[str, ...]] = ("plum3",)

    def __init__(self, formatter: Callable[[float | None], str] = format_latency, *,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(formatter, include_zero=False, id=id, classes=classes)
        self._bands: BandStyles | None = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._bands = None

    def band_styles(self) -> BandStyles:
        """The bands' styles (see the module's docstring), read once per theme."""
        if self._bands is None:
            theme = getattr(self.app, "console_theme", None)
            variables = band_colours(theme.css) if isinstance(theme, ConsoleTheme) else {}
            plain = PaneStyles.plain()
            styles = []
            for name in BANDS:
                rule = self.get_component_rich_style(f"chart--{name}", partial=True,
                                                     default=Style())
                styles.append(Style(color=rule.color) if rule.color is not None
                              else variables.get(name) or getattr(plain, name))
            self._bands = BandStyles(*styles)
        return self._bands

    def _compute(self, width: int, height: int, styles: ChartStyles) -> list[list[Segment]]:
        return axed_band_rows(self._lines, end=self._end, width=width, height=height,
                              formatter=self.formatter,
                              seconds_per_column=self._seconds_per_column,
                              styles=self.band_styles(), ghosts=self._ghost_pairs())
