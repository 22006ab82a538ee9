"""How a step, run or session ended, as data: the events' ``outcome`` (and what recordings
made before it are read as), the store's step state, the timeline, each host's run in a
session's layout, and the plan's ``silence``."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest

from benchtui.errors import PlanError
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.plan.loader import load_plan
from benchtui.session.compare import SessionLayout
from benchtui.session.endings import Ending, process_ending, step_ending
from benchtui.session.silence import Quiet, watch
from benchtui.session.timeline import steps_from_events
from benchtui.store.fleet import FleetState
from benchtui.transport import WatchdogStop


def _end(level: str = ev.INFO, **data: object) -> Event:
    return Event(10.0, ev.STEP_END, "step x ...", level, None, "x", dict(data))


@pytest.mark.parametrize(("event", "outcome"), [
    (_end(), ev.COMPLETED),                                  # before outcomes: as they were
    (_end(ev.ERROR), ev.FAILED),
    (_end(ev.WARNING, interrupted=True), ev.INTERRUPTED),    # the old Ctrl-C: not "ok"
    (_end(ev.WARNING, interrupted=True, outcome="interrupted"), ev.INTERRUPTED),
    (_end(ev.ERROR, outcome="watchdog"), ev.WATCHDOG),
    (_end(ev.ERROR, outcome="deadline"), ev.DEADLINE),
    (_end(ev.INFO, outcome="nonsense"), ev.COMPLETED),
])
def test_outcome_of_an_end_event(event: Event, outcome: str) -> None:
    assert ev.outcome_of(event) == outcome


def test_the_worst_outcome_names_the_whole() -> None:
    assert ev.worst([]) == ev.COMPLETED
    assert ev.worst([ev.COMPLETED, ev.FAILED, ev.DEADLINE]) == ev.DEADLINE
    assert ev.worst([ev.FAILED, ev.WATCHDOG]) == ev.WATCHDOG
    assert ev.worst([ev.WATCHDOG, ev.INTERRUPTED]) == ev.INTERRUPTED


def _session(step_end: Event, *run_ends: Event) -> list[Event]:
    start = Event(0.0, ev.STEP_START, "step x on a, b", ev.INFO, None, "x",
                  {"hosts": ["a", "b"], "repeat": 1, "repeats": 1})
    runs = [Event(0.5, ev.RUN_START, f"{h}: fio started", ev.INFO, h, "x") for h in "ab"]
    return [start, *runs, *run_ends, step_end]


def _run_end(host: str, level: str = ev.INFO, **data: object) -> Event:
    return Event(9.0, ev.RUN_END, f"{host}: fio ...", level, host, "x", dict(data))


def test_store_timeline_and_layout_agree_on_an_interrupted_step() -> None:
    """A step stopped by Ctrl-C: never ok, anywhere (info read 'ok' from the timeline)."""
    events = _session(_end(ev.WARNING, interrupted=True, outcome="interrupted",
                           reason="Ctrl-C (SIGINT)", silences=[
                               {"host": "b", "tool": "fio", "seconds": 12.5}]))
    state = FleetState("p")
    for e in events:
        state.on_event(e)
    step = state.steps[-1]
    assert (step.ok, step.outcome, step.reason) == (False, "interrupted", "Ctrl-C (SIGINT)")
    assert step.silences == [("b", "fio", 12.5)]
    [timeline] = steps_from_events(events)
    assert (timeline.ok, timeline.outcome, timeline.reason) == (
        False, "interrupted", "Ctrl-C (SIGINT)")
    runs = SessionLayout.from_events(events).runs
    assert [(r.host, r.ok, r.outcome, r.silent_seconds) for r in runs] == [
        ("a", False, "interrupted", 0.0), ("b", False, "interrupted", 12.5)]


def test_each_host_run_ends_as_its_own_process_did() -> None:
    events = _session(
        _end(ev.ERROR, outcome="watchdog", reason="a: fio was stopped by the host's watchdog"),
        _run_end("a", ev.ERROR, outcome="watchdog", reason="was stopped by the host's watchdog",
                 silent_seconds=0.0),
        _run_end("b", outcome="completed", reason="exited with status 0", silent_seconds=3.0))
    runs = {r.host: r for r in SessionLayout.from_events(events).runs}
    assert (runs["a"].outcome, runs["a"].ok) == ("watchdog", False)
    assert (runs["b"].outcome, runs["b"].ok, runs["b"].silent_seconds) == (
        "completed", True, 3.0)


def test_a_recording_from_before_outcomes_reads_as_it_did() -> None:
    """No ``outcome`` anywhere: a failed step fails every host's run, a completed step
    leaves each host's run as its own end said."""
    failed = SessionLayout.from_events(_session(_end(ev.ERROR), _run_end("a"), _run_end("b")))
    assert [r.ok for r in failed.runs] == [False, False]
    done = SessionLayout.from_events(_session(_end(), _run_end("a", ev.ERROR), _run_end("b")))
    assert [(r.host, r.ok, r.outcome) for r in done.runs] == [
        ("a", False, "failed"), ("b", True, "completed")]
    running = SessionLayout.from_events(_session(_end())[:-1])
    assert [(r.ok, r.outcome) for r in running.runs] == [(None, None), (None, None)]


def _plan(tmp_path: Path, step_extra: str = "", monitor_extra: str = "") -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text('[session]\nname = "s"\n\n[hosts.h]\nlocal = true\n\n'
                    f'[[monitor]]\ntool = "iostat"\ninterval = 5\n{monitor_extra}\n'
                    f'[[step]]\ntool = "fio"\nargs = "--rw=read --size=1m"\n{step_extra}')
    return plan


@pytest.mark.parametrize(("given", "seconds"), [
    ("", 60.0), ("silence = 90\n", 90.0), ('silence = "5m"\n', 300.0),
    ('silence = "off"\n', math.inf), ("silence = 2\n", 2.0)])
def test_silence_of_a_step(tmp_path: Path, given: str, seconds: float) -> None:
    step = load_plan(_plan(tmp_path, given)).steps[0]
    assert step.silence == seconds and step.silence_limit == seconds


def test_silence_of_a_monitor_is_never_less_than_two_intervals(tmp_path: Path) -> None:
    monitor = load_plan(_plan(tmp_path, monitor_extra="silence = 10\n")).monitors[0]
    assert monitor.silence_limit == 10.0
    with pytest.raises(PlanError) as caught:
        load_plan(_plan(tmp_path, monitor_extra="silence = 9\n"))
    assert "silence of monitor 1 (9 s) is less than twice the tool's interval (5 s)" \
        in str(caught.value) and "silence = 10 or more" in str(caught.value)


@pytest.mark.parametrize("bad", ["silence = 0\n", "silence = -3\n", 'silence = "soon"\n',
                                 "silence = true\n", "silence = 1\n"])
def test_a_bad_silence_is_a_plan_error_with_its_line(tmp_path: Path, bad: str) -> None:
    with pytest.raises(PlanError) as caught:
        load_plan(_plan(tmp_path, bad))
    assert caught.value.line == 14 and "silence of step 1" in str(caught.value)


@pytest.mark.parametrize(("status", "kwargs", "outcome", "words"), [
    (0, {}, "completed", "exited with status 0"),
    (143, {"stopped": True}, "completed", "was stopped at the end of its step"),
    (1, {}, "failed", "exited with status 1"),
    (-1, {}, "failed", "vanished"),
    (143, {"interrupt": "SIGTERM"}, "interrupted", "was stopped: SIGTERM"),
    (124, {"ran": 30.2}, "deadline", "ended by its deadline on the host after 30 s"),
    (137, {"ran": 40.0}, "deadline", "exit status 137"),
    (124, {"ran": 3.0}, "failed", "exited with status 124"),  # the tool's own 124, early
    (143, {"watchdog": WatchdogStop(12.0, 10.0)}, "watchdog",
     "had not heard from this controller for 12 s (controller_grace 10 s)"),
])
def test_how_a_process_ended(status: int, kwargs: dict[str, object], outcome: str,
                             words: str) -> None:
    given: dict[str, object] = {"stopped": False, "watchdog": None, "interrupt": None,
                                "ran": 5.0, **kwargs}
    got, said = process_ending(status, deadline=30.0, **given)  # type: ignore[arg-type]
    assert got == outcome and words in said


def test_how_a_step_ended() -> None:
    done = Ending("a", "fio", "completed", "exited with status 0", 0)
    assert step_ending([done, done], []) == ("completed", "", 0)
    failed = Ending("b", "fio", "failed", "exited with status 1", 1)
    cut = Ending("c", "fio", "deadline", "was ended by its deadline", 124)
    assert step_ending([done, failed, cut], ["b: ..."]) == (
        "deadline", "c: fio was ended by its deadline", 124)
    assert step_ending([done], ["d: cannot start fio"]) == (
        "failed", "d: cannot start fio", None)
    assert step_ending([], []) == ("failed", "no host could run it", None)
    many = [Ending(h, "fio", "failed", "exited with status 2", 2) for h in "abcd"]
    assert step_ending(many, [])[1].endswith("; and 2 more")


async def test_a_silent_run_is_warned_about_once() -> None:
    loud, quiet = Quiet(limit=0.6, last=time.monotonic()), Quiet(limit=0.6,
                                                                 last=time.monotonic())
    warned: list[tuple[Quiet, float]] = []
    task = asyncio.create_task(watch(lambda: [loud, quiet], lambda q, s: warned.append((q, s))))
    for _ in range(8):
        await asyncio.sleep(0.25)
        loud.heard()
    task.cancel()
    assert [q for q, _ in warned] == [quiet] and 0.6 < warned[0][1] < 1.5
    quiet.heard()
    assert quiet.longest > 1.5 and loud.longest == 0.0
