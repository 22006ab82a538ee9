"""``benchtui serve PLAN``: run a plan headless and serve its live values to Prometheus (the
``/metrics`` endpoint, which ``--export ADDR`` adds to run, record and demo:
``cli/extras.py``).

serve prints progress on stderr as ``run --jsonl`` does and exits as ``run`` does (0 all steps
succeeded, 1 a step or host failed, 2 a usage or set-up error such as a port in use, 130 on
Ctrl-C/SIGTERM during the run). After the last step it keeps serving for ``--linger`` seconds
so that Prometheus scrapes the last values; Ctrl-C then ends the wait early and keeps the exit
status of the run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from benchtui.cli.extras import attach_state, exporting, session_extras
from benchtui.cli.fleet_cmd import (
    EXIT_INTERRUPTED,
    ProgressPrinter,
    run_until_signal,
    session_options,
)
from benchtui.errors import UsageError
from benchtui.export.http import parse_listen
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from benchtui.store.fleet import FleetState

__all__ = ["exporting", "run_serve"]


def run_serve(args: argparse.Namespace) -> int:
    if args.linger < 0:
        raise UsageError(f"--linger {args.linger:g}: give a number of seconds, 0 or more")
    if args.facts == "-":
        raise UsageError("--facts - is not available with serve; give a file name")
    parse_listen(args.listen)  # a malformed address is a usage error before the plan is read
    plan = load_plan(args.plan, parser_names=all_parsers())
    session = Session(plan, options=session_options(args),
                      on_event=ProgressPrinter(sys.stderr, verbose=args.verbose))
    state = attach_state(session)
    with session_extras(session, state, record=args.record, export=args.listen):
        return asyncio.run(_serve(session, state, args.linger, args.facts))


async def _serve(session: Session, state: FleetState, linger: float,
                 facts_path: str | None) -> int:
    code = await run_until_signal(session, facts_path)
    if code == EXIT_INTERRUPTED:
        return code
    cut = False
    if linger > 0 and state.started is not None:
        print(f"benchtui: the plan is done; serving its last values for {linger:g} s more "
              "(Ctrl-C to stop now)", file=sys.stderr)
        try:
            await asyncio.sleep(linger)
        except asyncio.CancelledError:
            # Ctrl-C or SIGTERM while lingering: the run's outcome stands.
            cut = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
    print(end_line(session.plan.name, code, cut_short=cut), file=sys.stderr)
    return code


def end_line(name: str, code: int, *, cut_short: bool = False) -> str:
    """The last line serve prints, as run's: how the plan ended, and that serving stopped."""
    outcome = "every step succeeded" if code == 0 else \
        "a step or host failed (see above)"
    stopped = "stopped serving metrics" + (" (linger cut short)" if cut_short else "")
    return f"benchtui: {name}: {outcome}; {stopped}"
