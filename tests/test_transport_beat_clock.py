"""BeatClock: every keeper's beat in one turn of the event loop, once an interval.

(The keepers it feeds over real sshd, through the heartbeat process, are in
test_transport_heartbeats.py and the watchdog tests; here, the clock's own promises.)
"""

from __future__ import annotations

import asyncio

import pytest

from benchtui.transport.beat_clock import BeatClock


async def test_every_beat_in_one_turn_each_interval_from_its_first_at_once() -> None:
    clock = BeatClock(interval=0.05)
    turns: dict[str, list[int]] = {"a": [], "b": [], "c": []}
    order: list[str] = []
    wakes = [0]

    async def count_wakes() -> None:  # the loop's turns, as seen from another task
        while True:
            wakes[0] += 1
            await asyncio.sleep(0)

    def beat(name: str) -> None:
        order.append(name)
        turns[name].append(wakes[0])

    counting = asyncio.get_running_loop().create_task(count_wakes())

    beats = {name: (lambda name=name: beat(name)) for name in turns}
    clock.add(beats["a"])
    assert len(turns["a"]) == 1  # at once, as a keeper's first line
    clock.add(beats["b"])
    clock.add(beats["c"])
    await asyncio.sleep(0.13)
    clock.discard(beats["c"])
    clock.discard(beats["c"])  # (twice: nothing)
    await asyncio.sleep(0.1)
    assert len(clock) == 2
    counting.cancel()
    ticks_a, ticks_b = turns["a"][1:], turns["b"][1:]
    assert len(ticks_a) >= 3
    assert ticks_a == ticks_b  # the same turn of the loop: one wake-up for both
    assert "".join(order).startswith("abcabc")  # in the order they came
    assert len(turns["c"]) < len(turns["b"]) + 1  # discarded: beaten no more
    stopped_at = len(turns["c"])
    await asyncio.sleep(0.06)
    assert len(turns["c"]) == stopped_at
    await clock.close()
    before = len(turns["a"])
    await asyncio.sleep(0.12)
    assert len(turns["a"]) == before  # closed: nothing beats


async def test_the_clock_stops_when_its_last_beat_leaves_and_starts_again() -> None:
    clock = BeatClock(interval=0.02)
    count = [0]

    def beat() -> None:
        count[0] += 1

    clock.add(beat)
    await asyncio.sleep(0.05)
    clock.discard(beat)
    await asyncio.sleep(0.05)  # its task ends at the next tick (no timer left behind)
    assert clock._task is not None and clock._task.done()
    seen = count[0]
    clock.add(beat)
    assert count[0] == seen + 1
    await asyncio.sleep(0.05)
    assert count[0] >= seen + 2
    await clock.close()


async def test_a_beat_that_raises_is_dropped_and_the_others_go_on_beating(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = BeatClock(interval=0.02)
    good = [0]
    bad_calls = [0]

    def fine() -> None:
        good[0] += 1

    def broken() -> None:
        bad_calls[0] += 1
        if bad_calls[0] > 1:  # (its first, at once, goes well; the clock's own tick breaks)
            raise RuntimeError("channel gone")

    clock.add(fine)
    clock.add(broken)
    await asyncio.sleep(0.15)
    await clock.close()
    assert bad_calls[0] == 2  # dropped at its first failure
    assert good[0] >= 5  # and the other keeper beaten all along
    assert "beaten no more" in caplog.text
