"""Every run's output taken in, in the order it arrived, in bounded slices of the event
loop's time.

A run's follower (``runs.Runner``) puts each chunk its transport reads into the run's lane
(``Intake.put``) and reads on; one task takes the chunks of every lane in the order they
arrived and gives each to its lane's ``feed`` (the run's ``RunIngest`` and the session's
sinks), for at most ``SLICE`` seconds; then it lets the event loop turn (the console's keys
and drawing, the transports' reads, the timers, the heartbeat process's ticks) before the
next slice.

So however much output waits, the event loop is never held longer than a slice and one
chunk. A controller with more output than CPU falls behind: its lanes fill up to
``LANE_BYTES`` each (``TOTAL_BYTES`` in all), then their followers stop reading and the
hosts keep the rest (SSH's flow control: the output stays in its file on the host, nothing
is lost); a run that prints much more than the others cannot hold more than its lane ahead
of them. ``oldest`` says how long the oldest chunk waiting has waited (``lag.LagWatch``
says it).
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

    __slots__ = ("error", "feed", "size", "waiting")

    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        #: Chunks waiting, and their bytes.
        self.waiting = 0
        self.size = 0
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
        #: (lane, chunk, when it arrived (epoch), when it arrived (monotonic)), oldest first.
        self._queue: deque[tuple[Lane, Chunk, float, float]] = deque()
        self._work: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        #: Set (and replaced) whenever chunks were taken while someone waits on it (room,
        #: or a lane drained); how many wait.
        self._taken = asyncio.Event()
        self._takers = 0

    async def put(self, lane: Lane, chunk: Chunk, t: float) -> None:
        """Queue ``chunk`` (arrived at ``t``, epoch seconds), once its lane has room; what
        the lane's ``feed`` raised meanwhile is raised here."""
        while lane.error is None and lane.size and (
                lane.size >= self.lane_bytes or self.size >= self.total_bytes):
            await self._wait_taken()
        if lane.error is not None:
            raise lane.error
        self._queue.append((lane, chunk, t, time.monotonic()))
        lane.waiting += 1
        lane.size += len(chunk.data)
        self.size += len(chunk.data)
        self._wake.set()
        if self._work is None or self._work.done():
            self._work = asyncio.get_running_loop().create_task(self._take(),
                                                                name="benchtui-intake")

    async def drained(self, lane: Lane) -> None:
        """Until every chunk of ``lane`` was fed; what its ``feed`` raised is raised here."""
        while lane.waiting and lane.error is None:
            await self._wait_taken()
        if lane.error is not None:
            raise lane.error

    async def _wait_taken(self) -> None:
        self._takers += 1
        try:
            await self._taken.wait()
        finally:
            self._takers -= 1

    def oldest(self, now: float) -> float:
        """How long (seconds) the oldest chunk waiting has waited (0 when none waits);
        ``now``: ``time.monotonic()``."""
        return now - self._queue[0][3] if self._queue else 0.0

    def drop(self, lane: Lane) -> None:
        """Forget what ``lane`` still holds (its follower ended, or was cancelled)."""
        if lane.waiting:
            self._queue = deque(item for item in self._queue if item[0] is not lane)
            self.size -= lane.size
            lane.size = lane.waiting = 0

    async def close(self) -> None:
        work, self._work = self._work, None
        if work is not None:
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work

    async def _take(self) -> None:
        """The chunks in the order they arrived, a slice at a time."""
        clock = time.perf_counter
        while True:
            queue = self._queue
            if not queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            until = clock() + self.slice_seconds
            while queue:  # (a chunk at least per slice)
                lane, chunk, t, _ = queue.popleft()
                lane.waiting -= 1
                lane.size -= len(chunk.data)
                self.size -= len(chunk.data)
                if lane.error is None:
                    try:
                        lane.feed(chunk, t)
                    except Exception as exc:  # noqa: BLE001 (raised in the run's follower)
                        lane.error = exc
                        self.drop(lane)
                        queue = self._queue
                if clock() >= until:
                    break
            if self._takers:
                taken, self._taken = self._taken, asyncio.Event()
                taken.set()
            if self._queue:  # (else straight to waiting for more: no turn of the loop for nothing)
                await asyncio.sleep(0)
