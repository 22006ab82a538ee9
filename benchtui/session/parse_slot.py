"""One run in the parser workers (``parse_pool``): what was sent to its worker and not yet
answered, and what a new worker would be fed again to resume it.

A run is resumed in a new worker from the last chunk whose answer carried samples (a
document ended in it): its new parser is fed that chunk and those answered after it again
(``replay``: their samples and warnings were delivered before), then every chunk not
answered. The new parser's first document has nothing before it: a fio json+ run's first
samples are averages since its jobs' start, not the interval's, and are dropped (the one
interval a resumed run loses); its ``elapsed`` counts from its own first document, so the
samples after it are moved back to the run's origin (``continued``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from benchtui.session.parse_worker import FEED, Answer

#: Bytes kept per run to resume it in a new worker (those since its last samples).
REPLAY_BYTES = 8 << 20

#: What a run's answers go to: (the answer, the raw lines sent with its chunk, its time).
OnAnswer = Callable[[Answer, list[str], float], None]


@dataclass(eq=False)
class Slot:
    """One run in the pool: its number there, its name in words (``h01 fio``), its parser
    (registry name, host, source), where its answers go, and its worker's index."""

    number: int
    label: str
    spec: tuple[str, str, str]
    on_answer: OnAnswer
    worker: int
    #: Sent and not yet answered: (kind, end offset, time, data, raw lines, when sent).
    inflight: deque[tuple[int, int, float, bytes, list[str], float]] = field(
        default_factory=deque)
    inflight_bytes: int = 0
    #: Answered chunks (bytes, time) since the last that completed samples (its own
    #: included), from byte ``replay_start``: what a new parser is fed again.
    replay: list[tuple[bytes, float]] = field(default_factory=list)
    replay_start: int = 0
    replay_bytes: int = 0
    #: The end offset of the last chunk sent.
    offset: int = 0
    #: What its parser raised, or why its worker was given up: raised in its follower.
    error: BaseException | None = None
    #: Set when an answer came (room, settled).
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    #: ``t - elapsed`` of its samples delivered (None: none with both yet), and what is
    #: added to the ``elapsed`` of a resumed run's samples for it to stay the same.
    origin: float | None = None
    shift: float = 0.0
    #: Resumed, and its new parser's first samples not answered yet.
    resumed: bool = False

    def answered(self, answer: Answer) -> tuple[list[str], float]:
        """Its oldest order was answered with ``answer`` (its samples made as the run's old
        parser would have made them): that order's raw lines and time."""
        kind, offset, t, data, lines, _ = self.inflight.popleft()
        self.inflight_bytes -= len(data)
        if kind == FEED:
            if answer.samples:
                self.replay_start = offset - len(data)
                self.replay, self.replay_bytes = [], 0
            self.replay.append((data, t))
            self.replay_bytes += len(data)
            while self.replay_bytes > REPLAY_BYTES and len(self.replay) > 1:
                first, _ = self.replay.pop(0)
                self.replay_bytes -= len(first)
                self.replay_start += len(first)
        self.changed.set()
        if answer.error is not None:
            self.error = answer.error
        elif answer.samples:
            self.continued(answer)
        return lines, t

    def continued(self, answer: Answer) -> None:
        """A resumed run's samples as its old parser would have given them: its new parser's
        first interval (``Answer.first``: counted from nothing) dropped; the ``elapsed`` of
        the others counted from the run's origin, not from the new parser's first
        document."""
        samples = answer.samples
        first = samples[0]
        if self.resumed:
            self.resumed = False
            if first.t is not None and first.elapsed is not None and self.origin is not None:
                self.shift = (first.t - first.elapsed) - self.origin
            if answer.first:
                samples = answer.samples = [s for s in samples if s.t != first.t]
        if self.shift:
            for s in samples:
                if s.elapsed is not None:
                    s.elapsed += self.shift
        for s in samples[:1]:
            if s.t is not None and s.elapsed is not None:
                self.origin = s.t - s.elapsed
