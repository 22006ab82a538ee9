"""The session's time left, measured start/stop costs, what a late step waits for, and the
chart window that fits the step: pure, on states fed the engine's events."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.estimate import (
    DEFAULT_OVERHEAD,
    PlannedRun,
    estimate,
    measured_overhead,
    planned_runs,
    runs_from_events,
    waiting_for,
)
from benchtui.store.fleet import FleetState
from benchtui.ui.chart_window import DEFAULT_WINDOW, ChartWindow, fitted_seconds

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_800_000_000.0


def event(t: float, kind: str, *, step: str | None = None, host: str | None = None,
          level: str = ev.INFO, **data: object) -> Event:
    return Event(t, kind, kind, level, host, step, dict(data))


def run(state: FleetState, label: str, start: float, planned: float | None,
        took: float | None, *, outcome: str = ev.COMPLETED) -> None:
    """A run of a step on one host: started at ``start``, ended ``took`` seconds later."""
    state.on_event(event(start, ev.STEP_START, step=label, hosts=["h1"], tool="fio",
                         expected_seconds=planned))
    state.on_event(event(start + 0.5, ev.RUN_START, step=label, host="h1"))
    if took is not None:
        state.on_event(event(start + took - 0.2, ev.RUN_END, step=label, host="h1"))
        state.on_event(event(start + took, ev.STEP_END, step=label, outcome=outcome))


def test_a_plans_runs_are_labelled_as_the_engine_runs_them() -> None:
    plan = load_plan(str(ROOT / "examples" / "sweep.toml"), parser_names=all_parsers())
    runs = planned_runs(plan)
    assert runs[0] == PlannedRun("layout", None)  # a size, no runtime: length unknown
    assert len(runs) == 1 + 4 * 3
    assert runs[1] == PlannedRun("randread ioengine=psync bs=4k#1", 3.0)
    assert runs[3].label == "randread ioengine=psync bs=4k#3"
    started = [event(T0, ev.STEP_START, step=r.label, expected_seconds=r.seconds)
               for r in runs]
    assert runs_from_events(started) == runs


def test_the_start_and_stop_cost_is_measured_as_the_session_goes() -> None:
    state = FleetState("s", ["h1"])
    runs = [PlannedRun(f"r#{i + 1}", 15.0) for i in range(8)]
    state.on_event(event(T0, ev.SESSION_START))
    assert measured_overhead(state.steps) is None
    run(state, "r#1", T0, 15.0, None)
    # before any run has ended: the default cost, for this run and the 7 after it
    left = estimate(state, runs, T0 + 5)
    assert left.step_left == pytest.approx(10 + DEFAULT_OVERHEAD)
    assert left.session_left == pytest.approx(10 + DEFAULT_OVERHEAD
                                              + 7 * (15 + DEFAULT_OVERHEAD))
    state.on_event(event(T0 + 18, ev.RUN_END, step="r#1", host="h1"))
    state.on_event(event(T0 + 18, ev.STEP_END, step="r#1", outcome=ev.COMPLETED))
    run(state, "r#2", T0 + 18, 15.0, 20.0)
    run(state, "r#3", T0 + 38, 15.0, 2.0, outcome=ev.FAILED)  # not a measure of the cost
    assert measured_overhead(state.steps) == pytest.approx(4.0)  # 3 s and 5 s
    # 8 runs of 15 s taking 18-20 s each: at the start of the 4th, what is left of them is
    # 5 runs of 19 s, not of 15 s
    run(state, "r#4", T0 + 40, 15.0, None)
    left = estimate(state, runs, T0 + 40)
    assert left.step_left == pytest.approx(19.0)
    assert left.session_left == pytest.approx(19.0 * 5)
    assert left.unknown == 0
    state.on_event(event(T0 + 200, ev.SESSION_END))
    assert estimate(state, runs, T0 + 200) == estimate(state, [], T0 + 200)
    assert estimate(state, runs, T0 + 200).session_left == 0.0


def test_runs_of_unknown_length_are_counted_apart() -> None:
    state = FleetState("s", ["h1"])
    runs = [PlannedRun("a", 10.0), PlannedRun("layout", None), PlannedRun("b", 10.0)]
    run(state, "a", T0, 10.0, None)
    left = estimate(state, runs, T0)
    assert left.unknown == 1
    assert left.session_left == pytest.approx(2 * (10 + DEFAULT_OVERHEAD))
    assert estimate(state, [], T0).session_left is None  # no plan known: no session figure
    run(state, "layout2", T0 + 20, None, None)
    assert estimate(state, runs, T0 + 21).step_left is None


def test_a_step_past_its_length_says_what_it_waits_for() -> None:
    state = FleetState("s", [f"h{i}" for i in range(1, 6)])
    state.on_event(event(T0, ev.STEP_START, step="rand", hosts=["h1", "h2", "h3"],
                         tool="fio", expected_seconds=15.0))
    for h in ("h1", "h2", "h3"):
        state.on_event(event(T0 + 0.5, ev.RUN_START, step="rand", host=h))
    assert waiting_for(state, T0 + 14.9) is None  # within its planned length
    assert waiting_for(state, T0 + 15.5) == "waiting for fio on h1, h2, h3"
    state.on_event(event(T0 + 15.6, ev.RUN_END, step="rand", host="h1"))
    assert waiting_for(state, T0 + 16) == "waiting for fio on h2, h3"
    for h in ("h2", "h3"):
        state.on_event(event(T0 + 16.5, ev.RUN_END, step="rand", host=h))
    assert waiting_for(state, T0 + 17) == "stopping"
    state.on_event(event(T0 + 17.2, ev.STEP_END, step="rand", outcome=ev.COMPLETED))
    assert waiting_for(state, T0 + 17.5) is None
    state.on_event(event(T0 + 20, ev.STEP_START, step="big", hosts=[], tool="fio",
                         expected_seconds=5.0))
    for i in range(1, 6):
        state.on_event(event(T0 + 20.5, ev.RUN_START, step="big", host=f"h{i}"))
    assert waiting_for(state, T0 + 26) == "waiting for fio on 5 hosts"


def test_a_network_step_waits_for_its_clients_not_for_its_server() -> None:
    """The engine's run events name the tool and role: an iperf3 server is stopped once its
    clients end, so a late network step waits for its clients only, then is "stopping"."""
    state = FleetState("s", ["srv", "c1", "c2"])
    state.on_event(event(T0, ev.STEP_START, step="net", hosts=["srv", "c1", "c2"],
                         tool="iperf3", expected_seconds=10.0))
    state.on_event(event(T0 + 0.2, ev.RUN_START, step="net", host="srv", tool="iperf3",
                         role="server"))
    for h in ("c1", "c2"):
        state.on_event(event(T0 + 0.5, ev.RUN_START, step="net", host=h, tool="iperf3",
                             role="client"))
    assert waiting_for(state, T0 + 11) == "waiting for iperf3 on c1, c2"
    for h in ("c1", "c2"):
        state.on_event(event(T0 + 11.5, ev.RUN_END, step="net", host=h, tool="iperf3",
                             role="client"))
    assert waiting_for(state, T0 + 12) == "stopping"  # the server is left: being stopped


def test_the_chart_window_fits_the_step() -> None:
    state = FleetState("s", ["h1"])
    window = ChartWindow()
    assert window.fitted and window.seconds == DEFAULT_WINDOW
    assert not window.follow(state)  # no step yet
    run(state, "demo", T0, 60.0, None)
    assert fitted_seconds(state) == 65.0  # 60 s and the start/stop cost, to 5 s
    assert window.follow(state) and window.seconds == 65.0
    assert window.badge() == "window 1m05s = step"
    state.on_event(event(T0 + 63, ev.RUN_END, step="demo", host="h1"))
    state.on_event(event(T0 + 63, ev.STEP_END, step="demo", outcome=ev.COMPLETED))
    assert not window.follow(state)  # between steps: the last step's
    run(state, "short", T0 + 70, 3.0, None)
    assert window.follow(state) and window.seconds == 10.0  # at least MIN_FITTED
    run(state, "unknown", T0 + 80, None, None)
    assert not window.follow(state) and window.seconds == 10.0
    window.step(1)
    assert window.seconds == 30.0 and not window.fitted
    run(state, "long", T0 + 90, 7200.0, None)
    assert not window.follow(state) and window.seconds == 30.0  # the user's now
    window.fit(state)
    assert window.fitted and window.seconds == state.store.window  # at most the history
    fitted = ChartWindow()
    fitted.seconds = 65.0
    fitted.step(1)
    assert fitted.seconds == 120.0
    fitted.seconds = 65.0
    fitted.step(-1)
    assert fitted.seconds == 60.0
