"""The one place that matches steps and hosts of two sessions (benchtui/session/compare.py)."""

from __future__ import annotations

import pytest

from benchtui.errors import CompareError
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.session.compare import (
    FLEET,
    SessionLayout,
    counterpart_run,
    match,
    match_step,
    match_steps,
    parse_baseline,
    split_label,
)


def _session(steps: list[tuple[str, int, int, list[str]]], t: float = 1000.0,
             failed: tuple[str, str] | None = None) -> list[Event]:
    """Events of a session: (name, repeats, unused, hosts) per step, 10 s a run."""
    out: list[Event] = []
    for name, repeats, _x, hosts in steps:
        for r in range(1, repeats + 1):
            label = name if repeats == 1 else f"{name}#{r}"
            out.append(Event(t, ev.STEP_START, "", step=label,
                             data={"hosts": hosts, "repeat": r, "repeats": repeats}))
            for h in hosts:
                out.append(Event(t + 0.5, ev.RUN_START, "", host=h, step=label))
                level = ev.ERROR if failed == (label, h) else ev.INFO
                out.append(Event(t + 9.5, ev.RUN_END, "", level=level, host=h, step=label))
            out.append(Event(t + 10, ev.STEP_END, "", step=label))
            t += 10
    return out


def test_split_label_strips_the_repeat_only_where_the_engine_added_it() -> None:
    assert split_label("randread#2", {"repeat": 2, "repeats": 3}) == ("randread", 2)
    assert split_label("randread#2", {"repeat": 2}) == ("randread", 2)  # older sessions
    assert split_label("job#1", {"repeat": 1, "repeats": 1}) == ("job#1", 1)
    assert split_label("plain", {}) == ("plain", 1)


def test_layout_reads_steps_hosts_and_run_windows() -> None:
    layout = SessionLayout.from_events(_session([("a", 3, 0, ["h1", "h2"]), ("b", 1, 0, ["h2"])],
                                                failed=("a#2", "h2")))
    assert layout.steps == ("a", "b")
    assert layout.hosts() == ("h1", "h2")
    assert layout.hosts("b") == ("h2",)
    runs = layout.runs_of("a", "h2")
    assert [(r.label, r.repeat, r.t0, r.t1) for r in runs] == [
        ("a#1", 1, 1000.5, 1009.5), ("a#2", 2, 1010.5, 1019.5), ("a#3", 3, 1020.5, 1029.5)]
    assert [r.ok for r in runs] == [True, False, True]


def test_layout_without_run_events_uses_the_step_window_and_its_hosts() -> None:
    events = [e for e in _session([("a", 1, 0, ["h1"])]) if e.kind in (ev.STEP_START,
                                                                         ev.STEP_END)]
    (run,) = SessionLayout.from_events(events).runs
    assert (run.host, run.t0, run.t1) == ("h1", 1000.0, 1010.0)


def test_host_baseline_pairs_every_host_of_a_step_with_that_host() -> None:
    layout = SessionLayout.from_events(_session([("a", 1, 0, ["pm", "vm1", "vm2"]),
                                                 ("b", 1, 0, ["vm1"])]))
    m = match(layout, parse_baseline("host=pm"))
    assert m.baseline_of("a", "vm2") == ("a", "pm")
    assert m.baseline_of("a", "pm") == ("a", "pm")
    assert m.baseline_of("a", FLEET) is None  # a fleet is not compared with one host
    assert m.unmatched_steps == ("b",)


def test_unknown_baseline_host_or_step_names_what_exists() -> None:
    layout = SessionLayout.from_events(_session([("a", 1, 0, ["pm", "vm1"])]))
    with pytest.raises(CompareError) as err:
        match(layout, parse_baseline("host=nope"))
    assert "'nope'" in str(err.value) and "pm, vm1" in str(err.value)
    with pytest.raises(CompareError, match=r"step 'x'.*there are: a"):
        match(layout, parse_baseline("step=x"))


def test_step_baseline_pairs_the_same_host_and_the_fleet() -> None:
    layout = SessionLayout.from_events(_session([("psync", 1, 0, ["h1", "h2"]),
                                                 ("libaio", 1, 0, ["h1", "h2"])]))
    m = match(layout, parse_baseline("step=psync"))
    assert m.baseline_of("libaio", "h2") == ("psync", "h2")
    assert m.baseline_of("libaio", FLEET) == ("psync", FLEET)


def test_session_baseline_matches_steps_and_hosts_by_name() -> None:
    new = SessionLayout.from_events(_session([("a", 1, 0, ["h1", "h2"]), ("new", 1, 0, ["h1"])]))
    old = SessionLayout.from_events(_session([("a", 1, 0, ["h1", "h3"])]))
    m = match(new, parse_baseline("session=old.btr"), old)
    assert m.baseline_of("a", "h1") == ("a", "h1")
    assert m.baseline_of("a", "h2") is None
    assert m.baseline_of("a", FLEET) == ("a", FLEET)
    assert m.unmatched_steps == ("new",)
    assert match(new, parse_baseline("old.btr", baseline_host="h3"), old) \
        .baseline_of("a", "h2") == ("a", "h3")
    assert match(new, parse_baseline("old.btr", baseline_host="fleet"), old) \
        .baseline_of("a", "h2") == ("a", FLEET)


def test_session_baseline_errors_are_one_sentence() -> None:
    new = SessionLayout.from_events(_session([("a", 1, 0, ["h1"])]))
    other_plan = SessionLayout.from_events(_session([("b", 1, 0, ["h1"])]))
    with pytest.raises(CompareError, match="no step in common"):
        match(new, parse_baseline("session=old.btr"), other_plan)
    other_hosts = SessionLayout.from_events(_session([("a", 1, 0, ["x1"])]))
    with pytest.raises(CompareError, match="--baseline-host"):
        match(new, parse_baseline("session=old.btr"), other_hosts)
    with pytest.raises(CompareError, match=r"not in old\.btr"):
        match(new, parse_baseline("old.btr", baseline_host="zz"), other_hosts)
    with pytest.raises(CompareError, match="not a baseline"):
        parse_baseline("machine=pm")
    with pytest.raises(CompareError, match="goes with a baseline session"):
        parse_baseline("host=pm", baseline_host="h1")


def test_counterpart_run_prefers_the_same_repeat_else_the_last() -> None:
    old = SessionLayout.from_events(_session([("a", 2, 0, ["h1", "h2"])]))
    assert counterpart_run(old, "a", "h1", 2).label == "a#2"  # type: ignore[union-attr]
    assert counterpart_run(old, "a", "h1", 5).label == "a#2"  # type: ignore[union-attr]
    assert counterpart_run(old, "a", FLEET, 1).host == "h1"  # type: ignore[union-attr]
    assert counterpart_run(old, "zz", "h1") is None


def test_a_running_session_is_matched_a_step_at_a_time_by_the_same_rules() -> None:
    old = SessionLayout.from_events(_session([("a", 1, 0, ["h1", "h3"]), ("b", 2, 0, ["h1"])]))
    assert old.step_started == {"a": 1000.0, "b#1": 1010.0, "b#2": 1020.0}
    by_name = parse_baseline("old.btr")
    assert match_step(by_name, old, "a", ["h1", "h2"]) == {("a", "h1"): ("a", "h1"),
                                                          ("a", FLEET): ("a", FLEET)}
    assert match_step(by_name, old, "new", ["h1"]) == {}
    # h3 did not run b: h2 has no baseline there, the fleet still has the baseline's fleet
    assert match_step(parse_baseline("old.btr", baseline_host="h3"), old, "b", ["h2"]) \
        == {("b", FLEET): ("b", FLEET)}
    assert match_step(parse_baseline("old.btr", baseline_host="fleet"), old, "b",
                      ["h2"])[("b", "h2")] == ("b", FLEET)
    # the plan's steps and hosts, checked before anything runs, as a finished session is
    planned = [("a", ["h1", "h2"]), ("new", ["h1"])]
    pairs = match_steps(by_name, old, planned)
    new = SessionLayout.from_events(_session([("a", 1, 0, ["h1", "h2"]), ("new", 1, 0, ["h1"])]))
    assert pairs == dict(match(new, by_name, old).pairs)
    with pytest.raises(CompareError, match="no step in common"):
        match_steps(by_name, old, [("x", ["h1"])])
    with pytest.raises(CompareError, match="no host of this session"):
        match_steps(by_name, old, [("a", ["x1", "x2"])])
    with pytest.raises(CompareError, match=r"'zz' is not in old\.btr"):
        match_steps(parse_baseline("old.btr", baseline_host="zz"), old, planned)
