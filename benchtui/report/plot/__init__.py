"""Plots of a report, drawn with matplotlib (Agg, no display; docs/architecture.md says why).

The only place benchtui imports matplotlib (an import-linter contract): ``style.py`` (fonts,
colours, a figure to SVG or PNG bytes), ``timeseries.py`` (a step's per-second IOPS,
bandwidth or latency of every host), ``bars.py`` (grouped bars across steps, the baseline
marked). Nothing here reads a session: the data comes in as ``report.series`` and
``report.model`` objects.
"""
