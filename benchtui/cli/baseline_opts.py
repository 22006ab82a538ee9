"""``--baseline OLD.btr``, ``--baseline-host NAME``, ``--tolerance PCT`` of the commands that
show the console (run, demo, replay): the baseline opened and checked before the screen
starts, and a console that goes on without it when it cannot be used (one sentence, shown in
the console and, when it closes, on stderr)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from benchtui.errors import UsageError
from benchtui.session.baseline import BaselineSeries
from benchtui.ui.ghost import Ghost, open_ghost


@contextmanager
def console_ghost(args: argparse.Namespace, check: Callable[[BaselineSeries], object]
                  ) -> Iterator[tuple[Ghost | None, list[str]]]:
    """The ghost of ``args.baseline`` checked by ``check`` (the plan's or the replayed
    session's steps and hosts), and the sentences to say; closed (its worker stopped, its
    file closed) on the way out, where the sentences are repeated on stderr."""
    if args.baseline is None:
        if args.baseline_host is not None:
            raise UsageError("--baseline-host goes with --baseline OLD.btr")
        yield None, []
        return
    ghost, notes = open_ghost(args.baseline, baseline_host=args.baseline_host,
                              tolerance=args.tolerance, history=args.history, check=check)
    try:
        yield ghost, notes
    finally:
        if ghost is not None:
            ghost.close()
        for note in notes:
            print(f"benchtui: {note}", file=sys.stderr)
