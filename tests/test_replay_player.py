"""The replay player, without any UI, on a session recorded from a real fio + iostat run.

What replay must show is what was seen live: the player's ``FleetState`` is compared with the
one the live session's sinks fed while the file was being recorded.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime
from pathlib import Path

import pytest

from benchtui.model import events as ev
from benchtui.session.replay import (
    DEFAULT_QUICK_WINDOW,
    FEED_ON,
    MAX_SPEED,
    MIN_SPEED,
    SPEEDS,
    ReplayPlayer,
    is_notable,
    parse_position,
)
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SessionReader
from benchtui.ui import figures as fig
from tests.replay_recording import STEPS, RecordedRun


def series_points(state: FleetState) -> dict[object, list[tuple[float, float]]]:
    return {key: list(zip(s.times, s.values, strict=True))
            for key, s in state.store.series.items()}


def test_played_to_the_end_the_state_is_the_live_one(recorded: RecordedRun,
                                                     reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    player.play()
    steps = 0
    while player.playing:
        player.advance(0.5)
        steps += 1
        assert steps < 10_000
    live, replayed = recorded.live, player.state
    assert player.position == player.end
    assert replayed.store.samples_total == live.store.samples_total > 0
    assert series_points(replayed) == series_points(live)
    assert [(s.metric, s.value, s.labels) for s in replayed.store.summaries] == \
        [(s.metric, s.value, s.labels) for s in live.store.summaries]
    assert [(s.name, s.ok, s.started, s.ended) for s in replayed.steps] == \
        [(s.name, s.ok, s.started, s.ended) for s in live.steps]
    assert {h: (v.state, v.reason, v.samples, v.warnings, v.facts, v.tools)
            for h, v in replayed.hosts.items()} == \
        {h: (v.state, v.reason, v.samples, v.warnings, v.facts, v.tools)
         for h, v in live.hosts.items()}
    # Raw output: the recording keeps text tools' lines (fio's JSON documents are samples).
    live_text = [line for o in recorded.outputs if o.tool == "iostat" for line in o.lines]
    replayed_text = [o.text for o in replayed.hosts["here"].output if o.tool == "iostat"]
    assert replayed_text and replayed_text == live_text[-len(replayed_text):]
    assert list(replayed.events) == list(live.events)
    assert (replayed.started, replayed.ended, replayed.ok) == (live.started, live.ended, live.ok)
    assert replayed.store.fleet_latency(op="read") == live.store.fleet_latency(op="read")


def test_advance_moves_by_wall_time_times_speed_only_when_playing(
        reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    assert player.position == player.start and not player.playing
    assert not player.advance(1.0)
    assert player.position == player.start
    player.play()
    player.set_speed(4)
    assert player.advance(0.5)
    assert player.position == pytest.approx(player.start + 2.0)
    fed = player.state.store.samples_total
    player.advance(0.5)
    assert player.position == pytest.approx(player.start + 4.0)
    assert player.state.store.samples_total > fed
    player.pause()
    assert not player.advance(10)
    assert player.position == pytest.approx(player.start + 4.0)


def test_fed_exactly_the_records_up_to_the_position(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    player.play()
    player.advance(5.0)
    records = list(reader.timed_records(reader.start, math.inf))
    expected = sum(len(r) for t, r in records if isinstance(r, list) and t <= player.position)
    assert 0 < player.state.store.samples_total == expected
    later = sum(len(r) for t, r in records if isinstance(r, list) and t > player.position)
    assert later > 0


def test_speed_is_clamped_and_steps_through_the_ladder(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    assert player.set_speed(1000) == MAX_SPEED == 32
    assert player.set_speed(0.01) == MIN_SPEED == 0.25
    assert player.set_speed(float("nan")) == MIN_SPEED
    seen = [player.speed]
    while player.speed < MAX_SPEED:
        seen.append(player.faster())
    assert tuple(seen) == SPEEDS
    assert player.faster() == MAX_SPEED
    player.set_speed(3)
    assert player.slower() == 2
    assert ReplayPlayer(reader, speed=99).speed == MAX_SPEED


def test_step_pauses_and_moves_one_interval(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    player.play()
    player.step()
    assert not player.playing
    assert player.position == pytest.approx(player.start + 1.0)
    player.step()
    assert player.position == pytest.approx(player.start + 2.0)


def played_to(reader: SessionReader, t: float) -> ReplayPlayer:
    """A player that played from the start to ``t``: every record up to it, in order."""
    player = ReplayPlayer(reader)
    player.play()
    player.advance(t - player.start)
    assert player.generation == 0 and player.position == pytest.approx(t)
    return player


def test_a_seek_a_few_seconds_on_feeds_on(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    player.seek(player.start + 2.0)
    assert player.generation == 0 and not player.building  # fed on, not rebuilt
    player.seek(player.start + 2.0 + FEED_ON + 0.5)
    assert player.generation == 1 and player.building
    player.seek(player.start + 1.0)  # back, near the start: every record, nothing to build
    assert player.generation == 2 and not player.building
    assert player.state.store.samples_total == played_to(
        reader, player.start + 1.0).state.store.samples_total


def test_seek_back_rebuilds_the_state_as_it_was(reader: SessionReader) -> None:
    target = reader.start + 0.6 * (reader.end - reader.start)
    forward = played_to(reader, target)
    seeker = ReplayPlayer(reader, quick=1.0)
    seeker.seek(seeker.end)
    seeker.finish_work()
    state_at_end, generation = seeker.state, seeker.generation
    seeker.seek(target)
    assert seeker.generation == generation + 1 and seeker.state is not state_at_end
    assert seeker.position == target and seeker.building
    # At once: only the last ``quick`` seconds; then the build catches up, a slice at a time.
    quick_state = seeker.state
    oldest = min(s.times[0] for s in quick_state.store.series.values() if s.times)
    assert oldest >= target - seeker.quick - 1.5  # sample times lag their arrival a little
    assert quick_state.store.samples_total < forward.state.store.samples_total
    slices = 0
    while seeker.work(budget=50):
        slices += 1
        assert seeker.state is quick_state
    assert slices > 1 and seeker.generation == generation + 2 and not seeker.building
    assert series_points(seeker.state) == series_points(forward.state)
    assert [(s.name, s.ended) for s in seeker.state.steps] == \
        [(s.name, s.ended) for s in forward.state.steps]


def test_playing_while_the_history_is_built(reader: SessionReader) -> None:
    player = ReplayPlayer(reader, quick=1.0)
    player.seek(player.start + FEED_ON + 3)
    player.seek(player.start + FEED_ON + 2)
    assert player.building
    player.play()
    while player.building:
        player.advance(0.1)
        player.work(budget=20)
    reference = ReplayPlayer(reader)
    reference.seek(player.position)
    reference.finish_work()
    assert series_points(player.state) == series_points(reference.state)


def test_a_far_seek_feeds_only_the_window_but_keeps_steps_and_hosts(
        reader: SessionReader) -> None:
    player = ReplayPlayer(reader, window=2.0, quick=2.0)
    player.seek(player.end)
    assert player.generation == 1 and not player.building
    state = player.state
    oldest = min(s.times[0] for s in state.store.series.values() if s.times)
    assert oldest >= player.end - 2.0 - 1.5  # sample times lag their arrival a little
    assert [s.name for s in state.steps] == list(STEPS)
    assert all(s.ended is not None for s in state.steps)
    assert state.hosts["here"].state == "done"
    assert state.hosts["here"].facts
    assert state.ended is not None


def test_seek_is_clamped_to_the_session(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    player.seek(player.end + 3600)
    assert player.position == player.end
    player.seek(player.start - 3600)
    assert player.position == player.start
    player.seek_fraction(0.5)
    assert player.position == pytest.approx(player.start + player.duration / 2)
    assert player.fraction == pytest.approx(0.5)
    player.seek_fraction(7)
    assert player.position == player.end


def test_playing_stops_at_the_end_and_play_starts_over(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    player.play()
    player.set_speed(32)
    player.advance(3600)
    assert player.at_end and not player.playing
    player.play()
    assert player.playing and player.position == player.start


def test_next_and_previous_event_walk_the_notable_events(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    notable = sorted((e for e in reader.events() if is_notable(e)), key=lambda e: e.t)
    starts = [e for e in notable if e.kind == ev.STEP_START]
    assert [e.step for e in starts] == list(STEPS)
    visited = []
    while (event := player.next_event()) is not None:
        assert player.position == event.t
        visited.append(event)
    assert [e.t for e in visited] == sorted({e.t for e in notable if e.t > player.start})
    assert player.next_event() is None
    back = player.prev_event()
    assert back is not None and back.t < visited[-1].t
    assert player.position == back.t


def test_timeline_has_the_steps_and_events(reader: SessionReader) -> None:
    player = ReplayPlayer(reader)
    timeline = player.timeline()
    assert [s.name for s in timeline.steps] == list(STEPS)
    assert all(s.ok for s in timeline.steps)
    assert timeline.steps[0].t0 < timeline.steps[0].t1 <= timeline.steps[1].t0  # type: ignore[operator]
    assert {e.kind for e in timeline.events} >= {ev.STEP_START, ev.STEP_END}
    assert timeline.fraction(timeline.start) == 0 and timeline.fraction(timeline.end) == 1


def test_parse_position_accepts_offsets_fractions_and_clock_times() -> None:
    start = datetime(2025, 11, 22, 14, 0, 0).astimezone().timestamp()
    end = start + 7200
    assert parse_position("90", start, end) == start + 90
    assert parse_position("5m", start, end) == start + 300
    assert parse_position("1h30m", start, end) == start + 5400
    assert parse_position("25%", start, end) == start + 1800
    assert parse_position("14:30", start, end) == start + 1800
    assert parse_position("13:00", start, end) == start + 23 * 3600  # the next day
    assert parse_position(
        datetime.fromtimestamp(start + 60).astimezone().isoformat(), start, end) == start + 60
    assert parse_position("2025-11-22T14:00:00Z", start) == \
        datetime.fromisoformat("2025-11-22T14:00:00+00:00").timestamp()
    for bad in ("", "soon", "-5", "1x"):
        with pytest.raises(ValueError, match="is not a time"):
            parse_position(bad, start, end)


def test_the_window_bounds_the_history_and_a_longer_one_is_built(
        reader: SessionReader) -> None:
    player = ReplayPlayer(reader, window=2.0, quick=1.0, history=100)
    assert player.history == math.ceil(2.0 * 1.1) + 10
    player.seek(player.end)
    player.finish_work()
    short = player.state
    assert {s.times.maxlen for s in short.store.series.values()} == {player.history}
    oldest_short = min(s.times[0] for s in short.store.series.values() if s.times)
    player.set_window(1000.0)
    assert player.history == 100  # capped by max_history (--history)
    assert player.building and player.state is short  # shown until the build is done
    player.finish_work()
    assert player.state is not short
    assert {s.times.maxlen for s in player.state.store.series.values()} == {100}
    assert min(s.times[0] for s in player.state.store.series.values() if s.times) < oldest_short
    player.set_window(1.0)
    assert not player.building and player.state.store.series


def numbers(obj: object) -> object:
    """Figures as plain data, floats to 12 significant digits (a sum over series may add them
    in another order)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: numbers(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: numbers(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [numbers(v) for v in obj]
    if isinstance(obj, float):
        return float(f"{obj:.12g}")
    return obj


#: What a host reported at any time (the rows a pane keeps, the tools it names): a state
#: rebuilt by a seek knows what its window holds.
EVER_REPORTED = ("tools", "io_ops", "latency_ops", "metrics", "net_has_sum")


def frame_numbers(state: FleetState, now: float) -> list[object]:
    """What the console's header and host panes show (``figures``), as plain data."""
    hosts = []
    for host in sorted(state.hosts):
        f = numbers(fig.host_figures(state, host, now))
        assert isinstance(f, dict)
        hosts.append({k: v for k, v in f.items() if k not in EVER_REPORTED})
    return [numbers(fig.fleet_figures(state, now)), *hosts]


@pytest.mark.parametrize("part", [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
def test_the_first_frame_after_a_seek_shows_what_a_play_to_there_shows(
        reader: SessionReader, part: float) -> None:
    # The state a seek shows at once (each series' newest point of the last seconds) gives
    # the console the numbers that playing from the start up to there gives it.
    first = reader.start + DEFAULT_QUICK_WINDOW + 0.5
    target = first + part * (reader.end - first)
    seeker = ReplayPlayer(reader, window=DEFAULT_QUICK_WINDOW + 4)
    seeker.seek(seeker.end if part < 1 else seeker.start)  # back, or forward, to the target
    seeker.finish_work()
    seeker.seek(target)
    assert seeker.building  # what is shown is the quick state, not yet the fuller one
    quick, played = seeker.state, played_to(reader, target).state
    # (each of its series holds its newest point alone: how many points the full play holds
    # depends on how many seconds fio ran before the target, fewer under load)
    assert quick.store.series and all(len(s.values) == 1 for s in quick.store.series.values())
    assert frame_numbers(quick, target) == frame_numbers(played, target)
    # and so does the fuller state that replaces it
    seeker.finish_work()
    assert frame_numbers(seeker.state, target) == frame_numbers(played, target)


def test_the_seeks_targets_mostly_show_figures(reader: SessionReader) -> None:
    # The seeks above compare frames with figures in them, not only frames of dashes: most
    # of their targets fall where a fio run is reporting. (Not each one: where a step's
    # change falls depends on how the suite's load delayed the recorded fio; at 0.0 the
    # target is in the second step's first second, before its first interval, at 1.0 the
    # session is over.)
    first = reader.start + DEFAULT_QUICK_WINDOW + 0.5
    shown = 0
    for part in (0.2, 0.4, 0.6, 0.8):
        target = first + part * (reader.end - first)
        frame = frame_numbers(played_to(reader, target).state, target)
        shown += any(isinstance(h, dict) and h["iops"] for h in frame[1:])
    assert shown >= 3, shown


def test_the_quick_state_covers_what_the_console_counts_as_current() -> None:
    assert DEFAULT_QUICK_WINDOW >= fig.STALE_AFTER + 1


# --- a host between runs: its last run's end-of-run figures, however long ago -------------

PAUSE_START = 1_790_000_000.0


def _pause_session(path: str) -> None:
    """Two hosts: a fio run on both from +1 to +12 s, then h2 alone from +60 to +100 s;
    iostat on both all along until +120 s. h1 is idle from +12 s, h2 from +100 s."""
    from benchtui.model.sample import INTERVAL, SUMMARY, Sample
    from benchtui.store.recording import SCHEMA_VERSION, SessionMeta, SessionWriter

    t0 = PAUSE_START
    records: list[tuple[float, object]] = []

    def event(t: float, kind: str, host: str | None = None, **data: object) -> None:
        records.append((t, ev.Event(t, kind, f"{kind} {host}", host=host, step="s",
                                    data=dict(data))))

    def run(host: str, start: float, end: float, iops: float) -> None:
        event(start, ev.RUN_START, host)
        for sec in range(int(start) + 1, int(end)):
            t = t0 + sec + 0.5
            records.append((t, [Sample(t, "fio", INTERVAL, "iops", iops + sec,
                                       {"job": "j", "op": "read"}, host, sec - start)]))
        t = t0 + end
        records.append((t, [
            Sample(t, "fio", SUMMARY, "iops", iops, {"job": "j", "op": "read"}, host, end),
            Sample(t, "fio", SUMMARY, "bandwidth_bytes", iops * 4096, {"job": "j", "op": "read"},
                   host, end),
            Sample(t, "fio", SUMMARY, "latency_seconds", 0.002,
                   {"job": "j", "op": "read", "measure": "clat", "quantile": "0.99"}, host, end)]))
        event(t + 0.05, ev.RUN_END, host, status=0)

    for host in ("h1", "h2"):
        event(t0, ev.HOST_STATE, host, state="up")
    event(t0 + 0.9, ev.STEP_START, hosts=["h1", "h2"], tool="fio")
    run("h1", 1, 12, 1000.0)
    run("h2", 1, 12, 2000.0)
    run("h2", 60, 100, 3000.0)
    for sec in range(120):
        t = t0 + sec + 0.2
        records.append((t, [Sample(t, "iostat", INTERVAL, "disk_util_ratio", 0.5,
                                   {"device": "sda"}, h, float(sec)) for h in ("h1", "h2")]))
    # the step events of the session's plan, spread as the engine would put them
    for t_, kind in ((12.2, ev.STEP_END), (59.9, ev.STEP_START), (100.2, ev.STEP_END)):
        records.append((t0 + t_, ev.Event(t0 + t_, kind, kind, step="s", data={})))
    meta = SessionMeta(SCHEMA_VERSION, "pause", "pause-1", "", None, t0, None,
                       hosts=["h1", "h2"], writer="test")
    writer = SessionWriter(path, meta)
    for t, record in sorted(records, key=lambda r: r[0]):
        writer.add_record(t, record)  # type: ignore[arg-type]
    writer.close(t0 + 120)


@pytest.mark.parametrize("offset", [30.0, 90.0, 119.0])
def test_a_seek_shows_an_idle_hosts_last_run_figures(tmp_path: Path, offset: float) -> None:
    # At +30 both hosts are idle (runs ended at +12); at +90 h1 is idle, h2 runs; at +119
    # both are idle, h2's run ended 19 s ago: further back than the quick window and the
    # charts' window, so only the summaries read for the idle hosts bring those figures.
    path = f"{tmp_path}/pause.btr"
    _pause_session(path)
    with SessionReader.open(path) as reader:
        target = PAUSE_START + offset
        played = played_to(reader, target).state
        shown = frame_numbers(played, target)
        finals = [h["final"] for h in shown[1:] if isinstance(h, dict)]
        assert finals == [True, offset != 90.0]
        seeker = ReplayPlayer(reader, window=10.0)
        seeker.seek(target)
        assert seeker.building
        assert frame_numbers(seeker.state, target) == shown  # the quick state
        seeker.finish_work()
        assert frame_numbers(seeker.state, target) == shown  # and the fuller one
