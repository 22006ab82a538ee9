"""``benchtui run PLAN`` (the live console) and ``benchtui demo``.

The session runs inside the console (``benchtui.ui.app.ConsoleApp``) as a task; the console
shows the ``FleetState`` the session's sinks feed. Quitting while steps run (q, then y), Ctrl-C
or SIGTERM cancel the session, which stops every process it started on every host before the
console closes. Exit status, as ``run --jsonl``: 0 when every step succeeded, 1 when a host or
step failed, 130 when interrupted. After the console closes, one line on stderr says how the
session ended, so the terminal keeps a trace of it. A ``--record`` file that can no longer be
written (a full disk) is a warning in the console at once; the session goes on (the console
is still its output), and the exit status is 1 with one sentence once it ends.
"""

from __future__ import annotations

import argparse
import sys

from benchtui.cli.baseline_opts import console_ghost
from benchtui.cli.demo_plan import demo_plan, require_fio
from benchtui.cli.extras import attach_state, session_extras
from benchtui.cli.fleet_cmd import session_options, write_facts
from benchtui.errors import UsageError
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session, SessionOptions
from benchtui.store.fleet import FleetState
from benchtui.ui.app import ConsoleApp
from benchtui.ui.source import EXIT_FAILED, EXIT_INTERRUPTED, LiveSource
from benchtui.ui.themes import load_theme


def run_console(args: argparse.Namespace) -> int:
    if args.facts == "-":
        raise UsageError("--facts - would be hidden by the console; give a file name")
    plan = load_plan(args.plan, parser_names=all_parsers())
    session = Session(plan, options=session_options(args))
    return run_in_console(session, args, facts_path=args.facts)


def run_demo(args: argparse.Namespace) -> int:
    require_fio()
    plan = demo_plan(args.seconds, parser_names=list(all_parsers()))
    session = Session(plan, options=SessionOptions(
        histogram_bits=args.histogram_bits, controller_grace=args.controller_grace,
        reconnect_window=args.reconnect_window,
        stop_leftovers=args.stop_leftovers, parse_workers=args.parse_workers))
    return run_in_console(session, args)


def run_in_console(session: Session, args: argparse.Namespace, *,
                   facts_path: str | None = None) -> int:
    """Show ``session`` in the console until the user quits; the exit status."""
    if args.history < 1:
        raise UsageError("--history must be at least 1 point")
    load_theme(args.theme)  # a wrong name is one sentence here, before the screen changes
    state = FleetState(session.plan.name, session.transports, window=args.history)
    attach_state(session, state)
    source = LiveSource(session, state)
    planned = [(step.name, list(step.hosts)) for step in session.plan.steps]
    try:
        with console_ghost(args, lambda b: b.check_plan(planned)) as (ghost, notices), \
                session_extras(session, state, record=args.record, export=args.export):
            app = ConsoleApp(source, theme=args.theme, ghost=ghost, notices=notices,
                             screenshot_dir=args.screenshot_dir)
            code = app.run()
    finally:
        if facts_path:
            write_facts(facts_path, session.facts)
    if code is None:  # the console itself failed; Textual printed why
        return app.return_code or EXIT_FAILED
    _say_how_it_ended(source, code)
    if args.record and args.history_catalog is not None:  # run --record S --history-catalog
        from benchtui.cli.history_add import add_recorded

        code = code if add_recorded(args.record, args.history_catalog, args.attr) else code or 1
    return code


def _say_how_it_ended(source: LiveSource, code: int) -> None:
    name = source.name
    if code == EXIT_INTERRUPTED:
        print(f"benchtui: {name}: interrupted; every process benchtui started was stopped",
              file=sys.stderr)
        return
    result = source.result
    if result is None:
        return
    if result.ok:
        print(f"benchtui: {name}: every step succeeded", file=sys.stderr)
    for failure in result.failures:
        print(f"benchtui: {failure}", file=sys.stderr)
