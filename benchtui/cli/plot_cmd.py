"""``benchtui plot SESSION --step S [--metric iops|bandwidth|latency|net] [--host H]
[--size WxH] [--dpi N] -o FILE``:
one plot of one step's per-second figures, as PNG or SVG (from the file's extension),
written whole or not at all (docs/report-html.md).

Exit status: 0; 2 for a mistake of the user's (an extension that is not .png or .svg, a step
or host that is not in the session, a metric that is not one of the three: one sentence,
nothing written).
"""

from __future__ import annotations

import argparse
import sys

from benchtui.cli.report_cmd import write_whole
from benchtui.report.build import DEFAULT_SKIP
from benchtui.report.step_plot import (
    PlotRequest,
    check_dpi,
    check_metric,
    output_format,
    parse_size,
    plot_step,
)


def run_plot(args: argparse.Namespace) -> int:
    output_format(args.output)  # the cheap mistakes first, before the session is read
    check_metric(args.metric)
    size, dpi = parse_size(args.size), check_dpi(args.dpi)
    plotted = plot_step(PlotRequest(
        session=args.session, step=args.step, output=args.output, metric=args.metric,
        host=args.host, select=args.select,
        skip=DEFAULT_SKIP if args.skip is None else args.skip, size=size, dpi=dpi))
    write_whole(args.output, plotted.data)
    print(f"benchtui: plotted {plotted.metric} of {plotted.title} on "
          f"{', '.join(plotted.hosts)} to {args.output}", file=sys.stderr)
    return 0
