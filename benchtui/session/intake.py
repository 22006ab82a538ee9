"""Every run's output taken in turn, in bounded slices of the event loop's time.

A run's follower (``runs.Runner``) puts each chunk its transport reads into the run's lane
(``Intake.put``) and reads on; one task takes the lanes in turn, a chunk of each lane with
output waiting at a time, and gives it to the lane's ``feed`` (the run's ``RunIngest`` and
the session's sinks), for at most ``SLICE`` seconds; then it lets the event loop turn (the
console's keys and drawing, the transports' reads, the timers) before the next slice.

So however much output waits, the event loop is never held longer than a slice and one
chunk, and no host's output waits behind another's: a burst of 32 hosts' documents printed
in the same second is parsed one chunk of each at a time. A controller with more output than
CPU falls behind: its lanes fill up to ``LANE_BYTES`` each (``TOTAL_BYTES`` in all), then
their followers stop reading and the hosts keep the rest (SSH's flow control: the output
stays in its file on the host, nothing is lost). ``oldest`` says how long the oldest chunk
waiting has waited (``lag.LagWatch`` says it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable

from benchtui.transport import Chunk

#: Seconds of output parsing in a row at most, before the event loop turns.
SLICE = 0.01
#: Bytes waiting in one run's lane at most; its follower then waits before reading on.
LANE_BYTES = 1 << 20
#: Bytes waiting in all lanes together at most (a lane with nothing waiting takes a chunk).
TOTAL_BYTES = 64 << 20

#: What a lane does with each chunk (arrived at the given epoch time).
Feed = Callable[[Chunk, float], None]


class Lane:
    """One run's output waiting to be taken in."""

    __slots__ = ("chunks", "error", "feed", "queued", "size")

    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        #: (chunk, when it arrived (epoch), when it arrived (monotonic)), oldest first.
        self.chunks: deque[tuple[Chunk, float, float]] = deque()
        self.size = 0
        #: In the intake's turn order.
        self.queued = False
        #: What ``feed`` raised (the run's follower raises it).
        self.error: BaseException | None = None


class Intake:
    """The lanes of a session's runs and the task that takes them in."""

    def __init__(self, *, slice_seconds: float = SLICE, lane_bytes: int = LANE_BYTES,
                 total_bytes: int = TOTAL_BYTES) -> None:
        self.slice_seconds = slice_seconds
        self.lane_bytes = lane_bytes
        self.total_bytes = total_bytes
        #: Bytes waiting in every lane.
        self.size = 0
        self._turns: deque[Lane] = deque()
        self._work: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        #: Set (and replaced) whenever chunks were taken: room, or a lane drained.
        self._taken = asyncio.Event()

    async def put(self, lane: Lane, chunk: Chunk, t: float) -> None:
        """Queue ``chunk`` (arrived at ``t``, epoch seconds), once its lane has room; what
        the lane's ``feed`` raised meanwhile is raised here."""
        while lane.error is None and lane.size and (
                lane.size >= self.lane_bytes or self.size >= self.total_bytes):
            await self._taken.wait()
        if lane.error is not None:
            raise lane.error
        lane.chunks.append((chunk, t, time.monotonic()))
        lane.size += len(chunk.data)
        self.size += len(chunk.data)
        if not lane.queued:
            lane.queued = True
            self._turns.append(lane)
        self._wake.set()
        if self._work is None or self._work.done():
            self._work = asyncio.get_running_loop().create_task(self._take(),
                                                                name="benchtui-intake")

    async def drained(self, lane: Lane) -> None:
        """Until every chunk of ``lane`` was fed; what its ``feed`` raised is raised here."""
        while lane.chunks and lane.error is None:
            await self._taken.wait()
        if lane.error is not None:
            raise lane.error

    def oldest(self, now: float) -> float:
        """How long (seconds) the oldest chunk waiting has waited (0 when none waits);
        ``now``: ``time.monotonic()``."""
        return max((now - lane.chunks[0][2] for lane in self._turns if lane.chunks),
                   default=0.0)

    def drop(self, lane: Lane) -> None:
        """Forget what ``lane`` still holds (its follower was cancelled)."""
        self.size -= lane.size
        lane.size = 0
        lane.chunks.clear()

    async def close(self) -> None:
        work, self._work = self._work, None
        if work is not None:
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work

    async def _take(self) -> None:
        """The lanes in turn, a chunk each, a slice at a time."""
        turns = self._turns
        clock = time.perf_counter
        while True:
            if not turns:
                self._wake.clear()
                await self._wake.wait()
                continue
            until = clock() + self.slice_seconds
            while turns:  # (a chunk at least per slice)
                lane = turns.popleft()
                if not lane.chunks:
                    lane.queued = False
                    continue
                chunk, t, _ = lane.chunks.popleft()
                lane.size -= len(chunk.data)
                self.size -= len(chunk.data)
                try:
                    lane.feed(chunk, t)
                except Exception as exc:  # noqa: BLE001 (raised in the run's follower)
                    lane.error = exc
                    self.drop(lane)
                if lane.chunks:
                    turns.append(lane)
                else:
                    lane.queued = False
                if clock() >= until:
                    break
            taken, self._taken = self._taken, asyncio.Event()
            taken.set()
            await asyncio.sleep(0)
