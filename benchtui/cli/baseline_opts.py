"""``--baseline OLD.btr``, ``--baseline-host NAME``, ``--tolerance PCT`` of the commands that
run or show a session (run, demo, replay, record): the baseline opened and checked before
anything starts, and a session that goes on without it when it cannot be used (one sentence:
in the console, and on stderr when it closes).

``record`` has no screen: ``StepShares`` says, as each step ends, the fleet's IOPS and p99
as shares of the baseline fleet's, on average over the step (the console's header figures,
taken once a second)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from benchtui.errors import UsageError
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.format import format_share
from benchtui.model.sample import Sample
from benchtui.session.baseline import BaselineSeries
from benchtui.store import figures as fig
from benchtui.store.fleet import FleetState
from benchtui.store.live import DEFAULT_WINDOW
from benchtui.ui.ghost import Ghost, open_ghost


@contextmanager
def console_ghost(args: argparse.Namespace, check: Callable[[BaselineSeries], object], *,
                  echo: bool = True) -> Iterator[tuple[Ghost | None, list[str]]]:
    """The ghost of ``args.baseline`` checked by ``check`` (the plan's or the replayed
    session's steps and hosts), and the sentences to say; closed (its worker stopped, its
    file closed) on the way out, where the sentences are repeated on stderr (``echo``)."""
    if args.baseline is None:
        if args.baseline_host is not None:
            raise UsageError("--baseline-host goes with --baseline OLD.btr")
        yield None, []
        return
    ghost, notes = open_ghost(args.baseline, baseline_host=args.baseline_host,
                              tolerance=args.tolerance,
                              history=getattr(args, "history", DEFAULT_WINDOW), check=check)
    try:
        yield ghost, notes
    finally:
        if ghost is not None:
            ghost.close()
        if echo:
            for note in notes:
                print(f"benchtui: {note}", file=sys.stderr)


class StepShares:
    """A headless run against a baseline: the fleet's IOPS and p99 against the baseline
    fleet's once a second (fed by the session's sinks, after the state's), and one line
    per step at its end with their means over the step."""

    def __init__(self, ghost: Ghost, state: FleetState, out: TextIO | None = None) -> None:
        self.ghost = ghost
        self.state = state
        self.out = out if out is not None else sys.stderr
        self._second = 0
        self._shares: dict[tuple[str, str], list[float]] = {}

    def on_samples(self, samples: list[Sample]) -> None:
        now = time.time()
        if int(now) != self._second:
            self._second = int(now)
            self.take(now)

    def take(self, now: float) -> None:
        """The fleet's shares of the baseline's at ``now``."""
        for severity, text in self.ghost.update(self.state, now, 60.0):
            if severity != "information":
                print(f"benchtui: {text}", file=self.out)
        f = fig.fleet_figures(self.state, now)
        versus = self.ghost.fleet_versus(f, now) if f.step is not None else None
        if versus is None:
            return
        for what, shares in (("IOPS", versus.iops), ("p99", versus.latency)):
            for op, share in shares.items():
                self._shares.setdefault((what, op), []).append(share)

    def on_event(self, event: Event) -> None:
        if event.kind == ev.STEP_START:
            self._shares = {}
        elif event.kind == ev.STEP_END and event.step is not None:
            self.out.write(self.line(event) + "\n")
            self.out.flush()
            self._shares = {}

    def line(self, event: Event) -> str:
        clock = time.strftime("%H:%M:%S", time.localtime(event.t))
        head = f"[{clock}] step {event.step} against {self.ghost.name}:"
        if not self._shares:
            return f"{head} no figure to compare"
        parts = []
        for what in ("IOPS", "p99"):
            ops = [(op, values) for (w, op), values in self._shares.items() if w == what]
            if ops:
                parts.append(f"fleet {what} " + " ".join(
                    f"{op if op == 'total' else op[0]} {format_share(sum(v) / len(v))}"
                    for op, v in ops))
        seconds = max(len(v) for v in self._shares.values())
        return f"{head} {', '.join(parts)} of the baseline's (mean over {seconds} s)"
