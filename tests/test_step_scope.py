"""A figure shown belongs to the step it is shown under (issue 18): in the 5 s after a step
change no figure of the previous step is drawn in the header, the panes or the detail view's
legends, live (Pilot, on real fio json+ output laid on a fixed clock) and in replay (Pilot,
on a session recorded from real fio)."""

from __future__ import annotations

import copy

import pytest

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.format import format_byte_rate, format_count
from benchtui.model.sample import Sample
from benchtui.session.replay import ReplayPlayer
from benchtui.store import figures as fig
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SessionReader
from benchtui.ui.app import ConsoleApp
from benchtui.ui.detail import HostDetailScreen
from benchtui.ui.replay import ReplayApp, ReplaySource
from benchtui.ui.source import StaticSource
from tests.replay_recording import STEPS
from tests.test_ui_app import screen_text, settle
from tests.ui_data import START, STEP, fleet_state, timeline

pytestmark = pytest.mark.usefixtures("utc_clock")

RUN = 30
#: The second step starts here; its first interval arrives a second later.
CHANGE = START + RUN + 1.0
NEXT = "seqread-1m"


def _reads_only(batch: list[Sample], t: float, scale: float) -> list[Sample]:
    """The next step's interval: the fixture's reads only, faster, under its own step."""
    out = []
    for s in batch:
        if s.labels.get("op") == "write" or s.tool != "fio":
            continue
        c = copy.copy(s)
        c.t = t
        c.labels = {**s.labels, "step": NEXT}
        if s.metric in ("iops", "bandwidth_bytes"):
            c.value = s.value * scale
        out.append(c)
    return out


def _two_steps() -> tuple[FleetState, fig.FleetFigures]:
    """``RUN`` seconds of a randrw step, its end, and the start of a read-only step; the
    fleet's figures as the first step's last second showed them."""
    state = fleet_state(1, seconds=RUN)
    before = fig.fleet_figures(state, START + RUN + 0.5)
    assert before.iops.get("write") and before.iops.get("read")
    state.on_event(Event(START + RUN + 0.5, ev.STEP_END, f"step {STEP} done", ev.INFO, None,
                         STEP, {"ok": True}))
    state.on_event(Event(CHANGE, ev.STEP_START, f"step {NEXT}", ev.INFO, None, NEXT,
                         {"hosts": ["host01"], "tool": "fio", "expected_seconds": 60.0}))
    return state, before


def _previous(before: fig.FleetFigures) -> list[str]:
    """How the previous step's figures are drawn (IOPS, bandwidth)."""
    out = [format_count(v) for v in before.iops.values()]
    out += [format_byte_rate(v) for v in before.bandwidth.values()]
    return out


async def test_live_the_previous_steps_figures_leave_at_the_step_change() -> None:
    state, before = _two_steps()
    old = _previous(before)
    source = StaticSource(state, CHANGE)
    app = ConsoleApp(source)
    fio = timeline("fio", "host01", CHANGE, 5)
    async with app.run_test(size=(160, 50)) as pilot:
        for step in range(11):  # every half second of the 5 s after the change
            now = CHANGE + 0.5 * step
            while fio and (fio[0][0].t or 0) <= now:
                batch = fio.pop(0)
                state.on_samples(_reads_only(batch, batch[0].t or now, 3.0))
            source.set_now(now)
            await settle(pilot, app)
            text = screen_text(app)
            header = app.header.render().plain
            assert f"step {NEXT}" in header
            assert " w –" in header, (now, header)  # the new step writes nothing
            if now < CHANGE + 1.0:  # its first interval has not arrived
                assert "fleet IOPS r – w –" in header and "fleet lat p50/p99/p99.9 –" in header
            else:
                f = fig.fleet_figures(state, now)
                assert f"r {format_count(f.iops['read'])}" in header
            for drawn in old:
                assert drawn not in text, (now, drawn)
            pane = fig.host_figures(state, "host01", now)
            assert "write" not in pane.iops and "write" not in pane.latency
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, HostDetailScreen)
        legends = screen_text(app)
        for drawn in old:
            assert drawn not in legends, drawn


def test_a_figure_is_never_older_than_its_step() -> None:
    state, _before = _two_steps()
    for now in (CHANGE, CHANGE + 0.9):
        f = fig.fleet_figures(state, now)
        assert not f.iops and not f.bandwidth and not f.latency
        h = fig.host_figures(state, "host01", now)
        assert not h.iops and not h.latency
    # between the steps (the first ended, the next not started): its end-of-run figures,
    # not its last interval as if current
    state2 = fleet_state(1, seconds=RUN)
    state2.on_event(Event(START + RUN + 0.5, ev.STEP_END, f"step {STEP} done", ev.INFO, None,
                          STEP, {"ok": True}))
    assert not fig.fleet_figures(state2, START + RUN + 0.7).iops


@pytest.fixture
async def replay_app(reader: SessionReader) -> ReplayApp:
    return ReplayApp(ReplaySource(ReplayPlayer(reader)))


async def test_replay_after_n_or_a_seek_shows_only_the_new_steps_figures(
        replay_app: ReplayApp, reader: SessionReader) -> None:
    app = replay_app
    player = app.player
    starts = {e.step: e.t for e in reader.events() if e.kind == "step_start"}
    ends = {e.step: e.t for e in reader.events() if e.kind == "step_end"}
    change = starts[STEPS[1]]
    # the 5 s after the change, or the whole step where it is shorter (the recording's are)
    times = [change + 0.25 * k for k in range(21) if change + 0.25 * k < ends[STEPS[1]]]
    assert len(times) > 4
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(30):
            await pilot.press("n")
            if player.position >= change:
                break
        assert player.position == change
        for t in times:
            if t > change:
                player.seek(t)
            await settle(pilot, app)  # type: ignore[arg-type]
            now = player.position
            header = app.header.render().plain
            assert f"step {STEPS[1]}" in header, header
            assert " w –" in header, (now - change, header)  # seqread writes nothing
            f = fig.fleet_figures(player.state, now)
            assert "write" not in f.iops and "write" not in f.latency
            h = fig.host_figures(player.state, "here", now)
            assert "write" not in h.iops and "write" not in h.latency
            for s in player.state.store.series.values():
                if s.labels.get("step") == STEPS[0] and s.metric == "iops":
                    assert s not in list(fig.fresh(player.state.store, "iops", None, now))
        await pilot.press("enter")
        await settle(pilot, app)  # type: ignore[arg-type]
        text = screen_text(app)
        # the IOPS and bandwidth legends: seqread's reads, no randrw write left
        legend = next(line for line in text.splitlines() if "█ read" in line)
        assert legend.count("█ write –") == 2, legend
