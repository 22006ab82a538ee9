"""Replay in the console: every control, through Textual's Pilot, on a session recorded from
a real fio + iostat run; and the timeline bar drawn with a plain rich Console."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from rich.console import Console

from benchtui.session.replay import ReplayPlayer, Timeline, TimelineStep
from benchtui.store.recording import SessionReader
from benchtui.ui.replay import SEEK_FRACTION, SEEK_STEP, GotoScreen, ReplayApp, ReplaySource
from benchtui.ui.replay_timeline import (
    POSITION,
    STEP_START,
    TimelineBar,
    bar_width,
    step_label,
    timeline_lines,
)
from tests.helpers import require_tool
from tests.replay_recording import STEPS, RecordedRun
from tests.test_ui_tmux import ROOT, Tmux

SIZE = (120, 40)


@pytest.fixture
async def app(reader: SessionReader) -> AsyncIterator[ReplayApp]:
    yield ReplayApp(ReplaySource(ReplayPlayer(reader)))


def header_text(app: ReplayApp) -> str:
    return app.header.render().plain


async def test_space_plays_and_pauses(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not player.playing
        assert "REPLAY ⏸ x1" in header_text(app)
        await pilot.press("space")
        assert player.playing
        assert "REPLAY ▶ x1" in header_text(app)
        # (playing: the position may already be past 0 s on a busy machine)
        assert re.search(r"▶ x1  \d+(\.\d)?s / ", app.timeline_bar.render().plain)
        for _ in range(3):
            await pilot.press("right_square_bracket")
        await pilot.press("home")  # (a slow machine may have played to the end by now)
        assert player.playing
        start = player.position
        await pilot.pause(0.6)
        assert player.position > start + 2.0  # x8 for at least half a second
        await pilot.press("space")
        assert not player.playing
        stopped = player.position
        await pilot.pause(0.3)
        assert player.position == stopped


async def test_speed_keys(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right_square_bracket")
        assert player.speed == 2
        await pilot.press("greater_than_sign")
        assert player.speed == 4
        assert "x4" in header_text(app)
        await pilot.press("left_square_bracket", "less_than_sign", "less_than_sign")
        assert player.speed == 0.5
        for _ in range(12):
            await pilot.press("greater_than_sign")
        assert player.speed == 32
        for _ in range(12):
            await pilot.press("less_than_sign")
        assert player.speed == 0.25


async def test_full_stop_steps_one_interval(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        await pilot.press("full_stop")
        assert not player.playing
        at = player.position
        await pilot.press("full_stop")
        assert player.position == pytest.approx(at + 1.0)


async def test_arrow_keys_home_and_end_seek(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right")
        assert player.position == pytest.approx(player.start + SEEK_STEP)
        await pilot.press("left")
        assert player.position == pytest.approx(player.start)
        await pilot.press("shift+right")
        assert player.fraction == pytest.approx(SEEK_FRACTION)
        await pilot.press("end")
        assert player.position == player.end
        await pilot.press("shift+left")
        assert player.fraction == pytest.approx(1 - SEEK_FRACTION)
        await pilot.press("home")
        assert player.position == player.start
        # With a host pane focused, the arrows still seek.
        pane = next(iter(app.grid.panes.values()))
        pane.focus()
        await pilot.pause()
        await pilot.press("right")
        assert player.position == pytest.approx(player.start + SEEK_STEP)


async def test_g_goes_to_a_time_or_a_fraction(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        assert isinstance(app.screen, GotoScreen)
        # its examples of a clock time and an ISO 8601 time are a moment of this session
        example = app.screen.question.rsplit(" · ", 1)[1]
        assert player.start <= datetime.fromisoformat(example).timestamp() <= player.end
        await pilot.press(*"50%", "enter")
        assert not isinstance(app.screen, GotoScreen)
        # times into the session count from its start, as the header's elapsed does
        origin = app.origin
        assert player.start < origin < player.end
        assert player.position == pytest.approx((origin + player.end) / 2)
        await pilot.press("g", *"3s", "enter")
        assert player.position == pytest.approx(origin + 3)
        await pilot.pause()
        app.refresh_display()
        assert "elapsed 3s" in header_text(app)
        assert "⏸ x1  3s / " in app.timeline_bar.render().plain
        await pilot.press("g", *"later", "enter")
        await pilot.pause()
        assert player.position == pytest.approx(origin + 3)
        assert any("is not a time" in n.message for n in app.notices.notices)
        await pilot.press("g", "escape")
        assert not isinstance(app.screen, GotoScreen)
        assert player.position == pytest.approx(origin + 3)


async def test_n_and_shift_n_jump_between_events(app: ReplayApp, reader: SessionReader
                                                 ) -> None:
    player = app.player
    starts = {e.step: e.t for e in reader.events() if e.kind == "step_start"}
    async with app.run_test(size=SIZE) as pilot:
        seen = []
        for _ in range(20):
            await pilot.press("n")
            seen.append(player.position)
            if player.position == starts[STEPS[1]]:
                break
        assert starts[STEPS[0]] in seen and starts[STEPS[1]] in seen
        assert seen == sorted(seen)
        await pilot.press("N")
        assert player.position == seen[-2]
        assert [s.name for s in player.state.steps][:1] == [STEPS[0]]


async def test_seeking_back_swaps_the_state_and_the_panes_follow(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause(0.2)
        first = player.state
        assert "here" in app.grid.panes
        await pilot.press("home")
        await pilot.pause(0.2)
        assert player.state is not first and player.generation >= 1
        assert list(app.grid.panes) == ["here"]


async def test_a_seek_is_drawn_with_the_collector_held_off_then_back_on(
        app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert gc.isenabled()
        generation = player.generation
        app.go_to(player.start + 0.7 * player.duration)
        assert not gc.isenabled()  # the seek and its frame: no collection in between
        assert player.generation == generation + 1
        assert app.header.figures is not None  # drawn from the new state at once
        await pilot.pause()
        assert gc.isenabled()  # once the frame is out
        app.go_to(player.start)
        await pilot.press("q")
    assert gc.isenabled()


async def test_click_on_the_timeline_seeks_there(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.query_one(TimelineBar)
        width = bar_width(bar.content_region.width, app.status())  # the status after it
        await pilot.click(TimelineBar, offset=(1 + width // 2, 0))
        assert player.fraction == pytest.approx(0.5, abs=1.5 / width)
        text = bar.render().plain
        assert POSITION in text and STEPS[0] in text
        position = player.position
        await pilot.click(TimelineBar, offset=(1 + width + 5, 0))  # on the status: nothing
        assert player.position == position


async def test_q_quits_without_asking(app: ReplayApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_help_lists_the_replay_keys(app: ReplayApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        keys = [k for k, _ in app.help_rows()]
        assert {"space", "g", "n / N", ".", "] or >, [ or <"} <= set(keys)
        assert keys.index("space") < keys.index("q")


def test_timeline_lines_show_steps_events_and_position(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    timeline = player.timeline()
    bar, names = timeline_lines(timeline, (timeline.start + timeline.end) / 2, 80)
    assert len(bar.plain) == len(names.plain) == 80
    assert bar.plain.count(POSITION) == 1
    assert bar.plain.index(POSITION) in (39, 40)
    # every step's start is marked: by its own glyph, or by the position or an event (a
    # warning or a mark drawn over it: which depends on the run's timing)
    span = timeline.end - timeline.start
    for step in timeline.steps:
        cell = min(max(int((step.t0 - timeline.start) / span * 80), 0), 79)
        assert bar.plain[cell] in (STEP_START, POSITION, "!", "◆", "✖"), (step, bar.plain)
    for step in STEPS:
        assert step in names.plain
    console = Console(width=80, record=True, color_system=None)
    console.print(bar)
    console.print(names)
    assert STEPS[0] in console.export_text()


def sweep_timeline() -> Timeline:
    """A layout step of 0.4 s, a sweep of 4 steps run 3 times each (about 4 s a run), then
    a network step: what examples/sweep.toml and a network test give."""
    steps = [TimelineStep("layout", 0.0, 0.4, True)]
    t = 0.5
    for engine, bs in (("psync", "4k"), ("psync", "1m"), ("libaio", "4k"), ("libaio", "1m")):
        for run in (1, 2, 3):
            steps.append(TimelineStep(f"randread ioengine={engine} bs={bs}#{run}", t,
                                      t + 3.8, True))
            t += 4.0
    steps.append(TimelineStep("net", t, t + 10.0, True))
    return Timeline(0.0, t + 10.0, tuple(steps))


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_timeline_names_every_step(width: int) -> None:
    """Every step has a name under the bar, shortened where the runs crowd: a repeat run
    after the first as its run ("#2"), a sweep's step by its values, cut with "…" last."""
    timeline = sweep_timeline()
    bar, names = timeline_lines(timeline, 20.0, width, status="⏸ x1  20s / 1m00s  08:00:20")
    assert len(bar.plain) == len(names.plain) == width
    assert bar.plain.endswith(" ⏸ x1  20s / 1m00s  08:00:20")
    words = [w for w in names.plain.split() if w != "00:00:58"]  # the clock at the end
    assert words[0].startswith("lay") and words[-1] == "net", names.plain
    assert words.count("#2") == words.count("#3") == 4, names.plain
    if width >= 200:
        assert "psync 1m#1" in names.plain and "libaio 1m#1" in names.plain


def test_step_labels_shorten_as_the_room_does() -> None:
    name = "randread ioengine=psync bs=4k#1"
    assert step_label(name, 40) == name
    assert step_label(name, 20) == "randread psync 4k#1"
    assert step_label(name, 12) == "psync 4k#1"
    assert step_label(name, 6) == "psync…"
    assert step_label(name, 7) == "psync…"  # not "psync …"
    assert step_label(name, 8) == "psync 4…"
    assert step_label(name, 1) == ""
    assert step_label("randread ioengine=psync bs=4k#2", 40, previous=name) == "#2"
    assert step_label("net", 2) == "n…"


async def test_the_chart_window_keys_set_what_replay_keeps(app: ReplayApp) -> None:
    player = app.player
    async with app.run_test(size=SIZE) as pilot:
        assert player.window == app.window
        await pilot.press("end")
        await pilot.pause()
        fitted = app.window  # the last step's planned length and its start/stop, 5 s steps
        assert app.chart_window.fitted and fitted < 30 and player.window == fitted
        await pilot.press(*["plus"] * 4)  # 30 s, 1 m, 2 m, 5 m
        assert app.window > 120 and player.window == app.window
        assert not app.chart_window.fitted and "= step" not in header_text(app)
        assert player.history >= app.window
        await pilot.press("minus", "minus")
        assert player.window == app.window < 120


def test_replay_command_refuses_a_bad_speed_before_opening_the_screen(
        recorded: RecordedRun) -> None:
    result = subprocess.run([sys.executable, "-m", "benchtui", "replay", str(recorded.path),
                             "--speed", "100"], capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == "benchtui: --speed must be between 0.25 and 32 (got 100)"


@pytest.mark.slow
def test_replay_in_a_real_terminal_plays_to_the_end_and_quits(recorded: RecordedRun,
                                                               tmp_path: Path) -> None:
    require_tool("tmux")
    exit_file = tmp_path / "exit-code"
    tmux = Tmux(tmp_path / "tmux.sock")
    command = (f"cd {ROOT} && unset COLUMNS LINES && {sys.executable} -m benchtui replay "
               f"{recorded.path} --speed 4; echo $? > {exit_file}; sleep 60")
    tmux.run("new-session", "-d", "-s", "demo", "-x", "140", "-y", "40", command)
    try:
        screen = tmux.wait_for("the replay playing", lambda s: "REPLAY ▶ x4" in s, 20)
        assert "replay-test" in screen and STEPS[0] in screen, screen
        screen = tmux.wait_for("the end of the session",
                               lambda s: "finished ✔" in s and "REPLAY ⏸ x4" in s, 20)
        assert "here · done" in screen and "IOPS" in screen, screen
        tmux.run("send-keys", "-t", "demo", "q")
        deadline = time.monotonic() + 10
        # (the shell creates the file before it writes the status: wait for both)
        while not (exit_file.exists() and exit_file.read_text().strip()) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert exit_file.read_text().strip() == "0", tmux.screen()
    finally:
        tmux.run("kill-server", check=False)
