"""FleetState: what the console, the exporter and replay read, fed by the engine's sinks.

The data is real: samples come from a real fio json+ capture through the real parser, events
have the shapes the engine emits (tests/test_session_engine.py runs the engine for real)."""

from __future__ import annotations

from pathlib import Path

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import HISTOGRAM_METRIC, Sample
from benchtui.parsers.fio_json import FioJsonParser
from benchtui.store.fleet import CONNECTING, DONE, FAILED, RECONNECTING, RUNNING, FleetState

FIO = Path(__file__).parent / "fixtures" / "fio_json" / "randread_randwrite.jsonplus.txt"


def fio_samples(host: str) -> list[Sample]:
    parser = FioJsonParser(host=host)
    out = parser.feed_text(FIO.read_text()) + parser.finish()
    assert out, "the fixture yields samples"
    return out


def state_event(t: float, host: str, state: str, reason: str = "") -> Event:
    # The engine's wording: "db1: failed (reason)" with data.state (session/engine.py).
    return Event(t, ev.HOST_STATE, f"{host}: {state}" + (f" ({reason})" if reason else ""),
                 ev.ERROR if state == FAILED else ev.INFO, host, None, {"state": state})


def test_hosts_follow_the_engine_states_with_their_reasons() -> None:
    fleet = FleetState("sweep", ["db1", "db2"])
    assert [h.state for h in fleet.hosts.values()] == [CONNECTING, CONNECTING]
    v0 = fleet.version
    fleet.on_event(state_event(10.0, "db1", RUNNING))
    fleet.on_event(state_event(11.0, "db2", FAILED, "fio is not installed on db2 "
                               "(apt-get install fio)"))
    assert fleet.version > v0
    assert fleet.hosts["db1"].state == RUNNING and fleet.hosts["db1"].reason == ""
    assert fleet.hosts["db2"].state == FAILED
    assert fleet.hosts["db2"].reason == "fio is not installed on db2 (apt-get install fio)"
    assert fleet.hosts_up() == 1
    assert fleet.errors_total == 1
    fleet.on_event(state_event(12.0, "db1", RECONNECTING))
    assert fleet.hosts_up() == 0
    fleet.on_event(state_event(13.0, "db1", DONE))
    assert fleet.hosts_up() == 1


def test_samples_reach_the_store_and_the_hosts_with_exact_fleet_percentiles() -> None:
    fleet = FleetState("sweep")
    a, b = fio_samples("db1"), fio_samples("db2")
    fleet.on_samples(a)
    fleet.on_samples(b)
    interval_a = [s for s in a if s.kind == "interval" and s.t is not None]
    assert fleet.hosts["db1"].samples == sum(1 for s in a if s.t is not None)
    assert fleet.hosts["db1"].last_sample_t == max(s.t for s in interval_a if s.t is not None)
    assert fleet.latest_t == max(s.t for s in a + b if s.t is not None)
    # Two identical hosts: the merged histogram has twice the counts, the same quantiles as
    # one host's last interval (exactly: merging, not averaging).
    hist_a = [s for s in a if s.metric == HISTOGRAM_METRIC and s.labels["op"] == "read"]
    assert hist_a
    last = hist_a[-1]
    one = last.histogram
    assert one is not None
    merged = fleet.store.fleet_histogram(op="read", job=last.labels["job"])
    assert merged.total() == 2 * one.total()
    assert merged.quantiles([0.5, 0.99]) == one.quantiles([0.5, 0.99])


def test_steps_progress_and_eta_follow_the_step_events() -> None:
    fleet = FleetState("sweep")
    fleet.on_event(Event(100.0, ev.SESSION_START, "session sweep (x)"))
    fleet.on_event(Event(101.0, ev.STEP_START, "step randrw on db1", step="randrw",
                         data={"hosts": ["db1"], "tool": "fio", "expected_seconds": 60.0}))
    step = fleet.current_step
    assert step is not None and step.name == "randrw" and step.tool == "fio"
    assert step.hosts == ("db1",)
    assert step.progress(131.0) == 0.5
    assert step.eta(131.0) == 30.0
    assert step.progress(500.0) == 1.0 and step.eta(500.0) == 0.0
    fleet.on_event(Event(161.5, ev.STEP_END, "step randrw done in 60.5 s", step="randrw"))
    assert fleet.current_step is None
    assert step.ok is True and step.ended == 161.5 and step.progress(1e9) == 1.0
    # A step whose length is unknown (a custom command) has no progress, not a made-up one.
    fleet.on_event(Event(170.0, ev.STEP_START, "step custom", step="custom",
                         data={"hosts": ["db1"], "tool": "command", "expected_seconds": None}))
    assert fleet.current_step is not None and fleet.current_step.progress(175.0) is None
    fleet.on_event(Event(180.0, ev.STEP_END, "step custom failed", ev.ERROR, step="custom"))
    assert fleet.steps[-1].ok is False
    fleet.on_event(Event(181.0, ev.SESSION_END, "done with 1 failure(s)", ev.ERROR))
    assert fleet.ok is False and fleet.elapsed(10_000.0) == 81.0


def test_raw_output_and_events_are_bounded() -> None:
    fleet = FleetState("sweep", max_events=10, max_output_lines=5)
    for i in range(20):
        fleet.on_event(Event(float(i), ev.PARSE_WARNING, f"line {i}: bad", ev.WARNING, "db1"))
        fleet.on_output(OutputLines(float(i), "db1", "randrw", "iostat", "monitor",
                                    (f"nvme0n1 {i}", f"nvme1n1 {i}")))
    host = fleet.hosts["db1"]
    assert len(fleet.events) == 10 and fleet.events_total == 20 and fleet.warnings_total == 20
    assert host.warnings == 20
    assert [o.text for o in host.output] == ["nvme1n1 17", "nvme0n1 18", "nvme1n1 18",
                                            "nvme0n1 19", "nvme1n1 19"]
    assert host.tools == ["iostat"]


def test_facts_events_fill_the_host_view() -> None:
    fleet = FleetState("sweep", ["db1"])
    facts = {"kernel": "6.1.0", "os": "Debian GNU/Linux 12", "cpu_count": 2}
    fleet.on_event(Event(1.0, ev.FACTS, "db1: Debian", host="db1", data={"facts": facts}))
    assert fleet.hosts["db1"].facts == facts


def test_an_interrupted_session_and_step_are_not_ok() -> None:
    fleet = FleetState("sweep", ["db1"])
    fleet.on_event(Event(100.0, ev.SESSION_START, "session sweep (x)"))
    fleet.on_event(Event(101.0, ev.STEP_START, "step randrw on db1", step="randrw",
                         data={"hosts": ["db1"], "expected_seconds": 60.0}))
    fleet.on_event(Event(110.0, ev.STEP_END, "step randrw stopped", ev.WARNING, step="randrw",
                         data={"interrupted": True}))
    fleet.on_event(Event(110.0, ev.SESSION_END, "stopped", ev.WARNING,
                         data={"interrupted": True}))
    assert [(s.name, s.ok) for s in fleet.steps] == [("randrw", False)]
    assert fleet.ended == 110.0 and fleet.ok is False
