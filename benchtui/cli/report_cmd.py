"""``benchtui report SESSION... [--baseline SELECTOR] [--format md|csv|json|html] [-o FILE]``
and its regression gate (``--fail-below``, ``--fail-above``): docs/report.md.

Exit status: 0; 1 for a file that cannot be read as a session (as ``dump`` and ``replay``);
2 for a mistake on the command line (an unknown baseline, sessions with no step in common, a
bad threshold, a path that cannot be written): one sentence each, and nothing written; 1 too
when writing the report fails on the way (a full disk); 3 when the gate finds a regression
or had to leave out a run that did not complete (the report is still written, the
regressions and the runs left out go to stderr).
"""

from __future__ import annotations

import argparse
import io
import os
import stat
import sys
import tempfile
from pathlib import Path

from benchtui.errors import OutputError, UsageError
from benchtui.model.format import format_duration
from benchtui.report.build import DEFAULT_SKIP, ReportOptions, build_report
from benchtui.report.figures import coarse_threshold_warnings
from benchtui.report.gate import (
    ABOVE,
    BELOW,
    describe,
    left_out,
    parse_threshold,
    regressions,
    silent,
    summary,
    why_left_out,
    without_mirrors,
)
from benchtui.report.markdown import write_markdown
from benchtui.report.model import Report
from benchtui.report.tidy import write_csv, write_json

EXIT_REGRESSED = 3


def _render(report: Report, fmt: str) -> str:
    out = io.StringIO()
    if fmt == "csv":
        write_csv(report, out)
    elif fmt == "json":
        write_json(report, out)
    elif fmt == "html":
        from benchtui.report.html import render_html  # matplotlib: only when asked for

        out.write(render_html(report))
    else:
        write_markdown(report, out)
    return out.getvalue()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_whole(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` under a temporary name in the same directory, then rename
    it: a reader never sees half a report, and a failure leaves no file behind. The file gets
    the mode a plain ``open`` would give it (or the mode of the file it replaces). A path
    that is not a regular file (``/dev/stdout``, ``/dev/null``, a FIFO) is written directly:
    renaming over it would replace the device."""
    target = Path(path)
    try:
        st = target.stat()
    except OSError:
        st = None
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            _write_device(target, data)
            return
        directory = target.parent if str(target.parent) else Path(".")
        fd, part = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode) if st is not None
                      else 0o666 & ~_umask())
        os.replace(part, target)
    except OSError as exc:  # the path was fine; writing it failed (a full disk): run time
        Path(part).unlink(missing_ok=True)
        raise OutputError(path, "the output", exc.strerror or str(exc)) from None
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise


def _write_device(target: Path, data: bytes) -> None:
    f = target.open("wb")  # opening failed: a usage error (the caller's except)
    try:
        with f:
            f.write(data)
    except OSError as exc:  # /dev/full, a FIFO whose reader left: run time
        raise OutputError(str(target), "the output", exc.strerror or str(exc)) from None


def run_report(args: argparse.Namespace) -> int:
    thresholds = [parse_threshold(t, BELOW) for t in args.fail_below] \
        + [parse_threshold(t, ABOVE) for t in args.fail_above]
    if thresholds and args.baseline is None:
        raise UsageError("--fail-below/--fail-above compare with a baseline: give --baseline "
                         "(e.g. --baseline session=last-week.btr)")
    options = ReportOptions(baseline=args.baseline, baseline_host=args.baseline_host,
                            skip=DEFAULT_SKIP if args.skip is None else args.skip,
                            select=args.select, figures=args.figures,
                            include=tuple(args.steps), exclude=tuple(args.exclude_step))
    report = build_report(args.sessions, options)
    for th in thresholds:
        if th.direction == ABOVE:  # a threshold finer than the histograms can tell
            report.warnings += coarse_threshold_warnings(th.percent, th.metrics,
                                                         report.histogram_bits)
    if not thresholds:  # a gate's summary line comes first: its warnings after its lines
        _warn(report)
    text = _render(report, args.format)
    if args.output:
        write_whole(args.output, text.encode())
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if not thresholds:
        return 0
    found = without_mirrors(regressions(report, thresholds))
    skipped = left_out(report)
    if found:  # the gate's one-line verdict first, then its lines
        print(f"benchtui: {summary(found, len(report.sessions))}", file=sys.stderr)
        for line in describe(found, len(report.sessions)):
            print("  " + line, file=sys.stderr)
    else:
        against = report.baseline.describe() if report.baseline else "the baseline"
        limits = ", ".join(f"{t.direction} {t.text}" for t in thresholds)
        among = " among the runs that completed" if skipped else ""
        print(f"benchtui: no regression{among} against {against} ({limits})",
              file=sys.stderr)
    if skipped:
        print(f"benchtui: the gate left out {len(skipped)} run(s) that did not complete, "
              "and cannot pass without them:", file=sys.stderr)
        for row in skipped:
            print("  " + why_left_out(row), file=sys.stderr)
    for row in silent(report):
        print(f"benchtui: note: compared although its tool fell silent: {row.label} / "
              f"{row.host} printed nothing for {format_duration(row.silent_seconds)}",
              file=sys.stderr)
    _warn(report)
    return EXIT_REGRESSED if found or skipped else 0


def _warn(report: Report) -> None:
    for w in report.warnings:
        print(f"benchtui: warning: {w}", file=sys.stderr)
