"""``benchtui record PLAN -o SESSION``: run a plan headless and record it, and ``recording``,
which every command that runs a plan uses for ``--record`` (through ``cli/extras.py``).

No Textual here: progress goes to stderr (one line per step and host, as ``run --jsonl``)
and a summary of the file at the end. Exit status as ``run``: 0 when every step succeeded, 1
when a host or step failed, 130 on Ctrl-C/SIGTERM; in every case the file is closed with its
index, and holds everything up to the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from benchtui import __version__
from benchtui.cli.extras import attach_state, session_extras
from benchtui.cli.fleet_cmd import ProgressPrinter, run_until_signal, session_options
from benchtui.errors import RecordingError, UsageError
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from benchtui.session.figure_track import FigureRecorder
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SCHEMA_VERSION, Recorder, SessionMeta, SessionReader


def _plan_text(session: Session) -> str:
    """The plan as written (re-read from its file; "" for a plan that has none)."""
    try:
        return session.plan.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


@contextlib.contextmanager
def recording(session: Session, path: str, *,
              on_close: Callable[[Recorder], None] | None = None) -> Iterator[None]:
    """Record ``session`` to ``path`` while inside: the recorder takes the session's three
    sinks, and the file is closed (segment, facts, end time, index) however the block ends.
    The console's figures go with the samples (the figure track: a baseline's ghost reads
    them instead of computing them again, ``session.figure_track``). ``on_close`` sees the
    recorder once it is closed (benchmarks read its numbers)."""
    from benchtui.ui.ghost import GhostDigest  # (no Textual: the console's figure functions)

    digest = GhostDigest()
    meta = SessionMeta(SCHEMA_VERSION, session.plan.name, session.session_id,
                       _plan_text(session), str(session.plan.path), time.time(), None,
                       hosts=list(session.transports), writer=__version__,
                       histogram_bits=session.histogram_bits, figures=digest.name)
    recorder = Recorder(path, meta)
    figures = FigureRecorder(digest, recorder.on_figures,
                             on_error=lambda: recorder.set_meta(figures=None))
    session.add_sample_sink(recorder.on_samples)
    session.add_event_sink(recorder.on_event)
    session.add_output_sink(recorder.on_output)
    session.add_sample_sink(figures.on_samples)
    session.add_event_sink(figures.on_event)
    try:
        yield
    finally:
        # Facts also arrive as ``facts`` events; this covers a sink added after they came.
        for host, facts in session.facts.items():
            recorder.meta.facts.setdefault(host, dict(facts))
        recorder.close()
        if on_close is not None:
            on_close(recorder)


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
        with session_extras(session, state, record=args.output, export=args.export):
            code = asyncio.run(run_until_signal(session, args.facts))
    _print_summary(args.output)
    if args.history_catalog is not None:  # record --history [URL]
        from benchtui.cli.history_cmd import add_recorded

        code = code if add_recorded(args.output, args.history_catalog) else code or 1
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
        print(f"benchtui: recorded {path}: {hosts} host(s), {seconds:.0f} s, "
              f"{reader.sample_count} samples, {reader.event_count} events, "
              f"{reader.output_line_count} output lines; {reader.size_bytes / 1e6:.2f} MB "
              f"({per_hour / 1e6:.1f} MB per host-hour)", file=sys.stderr)
        for warning in reader.warnings:
            print(f"benchtui: warning: {warning}", file=sys.stderr)
