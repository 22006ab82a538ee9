"""The intake (session/intake.py): every run's output taken in the order it arrived, the
event loop turning between slices; a run's lane full holds its follower back; what a lane's
feed raised reaches its follower. And how the lag is said (session/lag.py)."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from benchtui.model import events as ev
from benchtui.session.intake import Intake, Lane
from benchtui.session.lag import BEHIND, SAY_EVERY, LagWatch
from benchtui.transport import Chunk


def chunks(n: int, size: int = 10) -> list[Chunk]:
    return [Chunk((i + 1) * size, bytes([65 + i % 26]) * size) for i in range(n)]


async def test_chunks_are_taken_as_they_came_and_the_loop_turns_between_slices() -> None:
    intake = Intake(slice_seconds=0.0)  # a chunk per slice
    order: list[str] = []
    lanes = {name: Lane(lambda c, t, name=name: order.append(name)) for name in "ab"}

    async def ticker() -> None:
        while True:
            order.append("loop")
            await asyncio.sleep(0)

    for chunk in chunks(3):
        for lane in lanes.values():
            await intake.put(lane, chunk, 0.0)
    tick = asyncio.create_task(ticker())
    await asyncio.gather(*(intake.drained(lane) for lane in lanes.values()))
    tick.cancel()
    await intake.close()
    fed = [x for x in order if x != "loop"]
    assert fed == ["a", "b", "a", "b", "a", "b"]  # as they came
    fed_at = [i for i, x in enumerate(order) if x != "loop"]
    assert all(b - a > 1 for a, b in itertools.pairwise(fed_at)), order


async def test_a_full_lane_holds_its_follower_back_until_taken() -> None:
    intake = Intake(lane_bytes=25)
    fed: list[int] = []
    lane, other = Lane(lambda c, t: fed.append(c.offset)), Lane(lambda c, t: None)
    first = chunks(4)
    for chunk in first[:3]:  # 10, 20, then 30 >= 25: room for no more (nothing taken yet)
        await intake.put(lane, chunk, 0.0)
    assert (lane.size, fed) == (30, [])
    await intake.put(other, Chunk(10, b"x" * 10), 0.0)  # another lane is not held back
    assert fed == []
    await intake.put(lane, first[3], 0.0)  # waits for the intake to take some
    assert fed
    await intake.drained(lane)
    assert fed == [10, 20, 30, 40]
    await intake.drained(other)
    assert intake.size == 0
    await intake.close()


async def test_all_lanes_together_are_bounded_but_an_empty_lane_takes_a_chunk() -> None:
    intake = Intake(lane_bytes=1000, total_bytes=25)
    fed: list[str] = []
    a, b = Lane(lambda c, t: fed.append("a")), Lane(lambda c, t: fed.append("b"))
    for chunk in chunks(3):  # 30 >= 25 in all: nothing taken yet
        await intake.put(a, chunk, 0.0)
    assert (intake.size, fed) == (30, [])
    await intake.put(b, Chunk(10, b"x" * 10), 0.0)  # b holds nothing: it is not starved
    assert intake.size == 40 and fed == []
    await intake.put(b, Chunk(20, b"y" * 10), 0.0)  # now b waits for room too
    assert fed[:3] == ["a", "a", "a"]  # taken as they came
    await intake.drained(b)
    assert fed == ["a", "a", "a", "b", "b"] and intake.size == 0
    await intake.close()


async def test_what_a_feed_raises_reaches_the_follower() -> None:
    intake = Intake()

    def feed(chunk: Chunk, t: float) -> None:
        raise ValueError(f"chunk ends at {chunk.offset}")

    lane = Lane(feed)
    await intake.put(lane, Chunk(3, b"abc"), 0.0)
    with pytest.raises(ValueError, match="chunk ends at 3"):
        await intake.drained(lane)
    with pytest.raises(ValueError):
        await intake.put(lane, Chunk(6, b"def"), 0.0)
    assert intake.size == 0
    await intake.close()


async def test_the_oldest_output_waiting_is_measured() -> None:
    intake = Intake()
    lane = Lane(lambda c, t: None)
    assert intake.oldest(time.monotonic()) == 0.0
    await intake.put(lane, Chunk(1, b"x"), 0.0)  # (not taken yet: nothing yielded)
    assert intake.oldest(time.monotonic() + 3.5) >= 3.5
    await intake.drained(lane)
    assert intake.oldest(time.monotonic() + 3.5) == 0.0
    await intake.close()


def test_the_lag_is_said_when_behind_while_behind_and_once_caught_up() -> None:
    said: list[tuple[str, str, dict[str, object]]] = []

    def emit(kind: str, message: str, *, level: str, **data: object) -> None:
        said.append((kind, message, {"level": level, **data}))

    watch = LagWatch(lambda now: 0.0, emit)
    watch.look(0.0, 0.2)
    assert said == []  # not behind
    watch.look(1.0, BEHIND + 1.5)
    kind, message, data = said[-1]
    assert kind == ev.CONTROLLER_LAG and "the controller is behind by 2.5 s" in message
    assert data["level"] == ev.WARNING and data["said"] is True and data["behind"] is True
    watch.look(2.0, 4.0)  # a figure for the header only
    assert said[-1][2]["said"] is False and said[-1][2]["seconds"] == 4.0
    watch.look(1.0 + SAY_EVERY, 3.0)
    assert "still behind by 3.0 s (by 4.0 s at worst so far)" in said[-1][1]
    watch.look(20.0, 0.1)
    kind, message, data = said[-1]
    assert "caught up: it was behind for 19 s, by 4.0 s at worst" in message
    assert data["behind"] is False and data["said"] is True
    count = len(said)
    watch.look(21.0, 0.3)
    watch.end(22.0)  # (not behind: nothing to say)
    assert len(said) == count
    watch.look(30.0, 2.0)
    watch.end(31.0)  # the session's steps are done: every output was taken in
    assert "caught up: it was behind for 1 s, by 2.0 s at worst" in said[-1][1]
    assert len(said) == count + 2
