"""``benchtui record PLAN -o SESSION``: run a plan headless and record it (the recording
itself, which every command that runs a plan uses for ``--record``: ``cli/extras.py``).

No Textual here: progress goes to stderr (one line per step and host, as ``run --jsonl``)
and a summary of the file at the end. Exit status as ``run``: 0 when every step succeeded, 1
when a host or step failed, 130 on Ctrl-C/SIGTERM; in every case the file is closed with its
index, and holds everything up to the end. A recording that can no longer be written (a full
disk) is said at once; ``record`` then stops the session (the file was its only output) and
exits 1, while ``run --record`` goes on with a warning (the console or ``--jsonl`` still has
a reader) and exits 1 at its end.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from benchtui.cli.extras import attach_state, recording, session_extras
from benchtui.cli.fleet_cmd import ProgressPrinter, run_until_signal, session_options
from benchtui.errors import RecordingError, UsageError
from benchtui.model.format import plural
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SessionReader

__all__ = ["recording", "run_record"]


def run_record(args: argparse.Namespace) -> int:
    """``benchtui record PLAN -o SESSION [--export ADDR]``."""
    if args.facts == "-":
        raise UsageError("--facts - is not supported with record; give a file name")
    plan = load_plan(args.plan, parser_names=all_parsers())
    session = Session(plan, options=session_options(args),
                      on_event=ProgressPrinter(sys.stderr, verbose=args.verbose))
    from benchtui.cli.baseline_opts import StepShares, console_ghost

    planned = [(step.name, list(step.hosts)) for step in plan.steps]
    with console_ghost(args, lambda b: b.check_plan(planned), echo=False) as (ghost, notes):
        for note in notes:
            print(f"benchtui: {note}", file=sys.stderr)
        state = attach_state(session, FleetState(plan.name, session.transports)) \
            if ghost is not None or args.export else None
        if ghost is not None and state is not None:
            shares = StepShares(ghost, state)
            session.add_sample_sink(shares.on_samples)
            session.add_event_sink(shares.on_event)
        with recording(session, args.output, only_output=True), \
                session_extras(session, state, record=None, export=args.export):
            code = asyncio.run(run_until_signal(session, args.facts))
    _print_summary(args.output)
    if args.history_catalog is not None:  # record --history [URL]
        from benchtui.cli.history_add import add_recorded

        code = code if add_recorded(args.output, args.history_catalog, args.attr) else code or 1
    return code


def _print_summary(path: str) -> None:
    """One paragraph on stderr: what the file holds."""
    try:
        reader = SessionReader.open(path)
    except RecordingError as exc:
        print(f"benchtui: {exc}", file=sys.stderr)
        return
    with reader:
        seconds = max(reader.end - reader.start, 0.0)
        hosts = reader.host_count
        per_hour = reader.size_bytes / max(hosts, 1) / max(seconds, 1.0) * 3600
        print(f"benchtui: recorded {path}: {plural(hosts, 'host')}, {seconds:.0f} s, "
              f"{plural(reader.sample_count, 'sample')}, {plural(reader.event_count, 'event')}, "
              f"{plural(reader.output_line_count, 'output line')}; "
              f"{reader.size_bytes / 1e6:.2f} MB "
              f"({per_hour / 1e6:.1f} MB per host-hour)", file=sys.stderr)
        for warning in reader.warnings:
            print(f"benchtui: warning: {warning}", file=sys.stderr)
