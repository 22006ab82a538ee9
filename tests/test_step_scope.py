"""A figure shown belongs to the step it is shown under (issue 18): in the 5 s after a step
change no figure of the previous step is drawn in the header, the panes or the detail view's
legends, live (Pilot, on real fio json+ output laid on a fixed clock) and in replay (Pilot,
on a session recorded from real fio). Issue 30: from the first frame of a step, captured
every 100 ms across ten step changes, in full panes and compact rows, and the fleet line is
the panes' figures summed at every frame."""

from __future__ import annotations

import copy
import re

import pytest

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.format import format_byte_rate, format_count, format_latency, format_ratio
from benchtui.model.sample import Sample
from benchtui.session.replay import ReplayPlayer
from benchtui.store import figures as fig
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SessionReader
from benchtui.ui.app import ConsoleApp
from benchtui.ui.detail import HostDetailScreen
from benchtui.ui.pane import HostPane
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


# --- ten step changes, captured every 100 ms (issue 30) -----------------------------------

T0 = 1_800_100_000.0
#: Seconds between step starts; each step's fio reports from 1.3 s after its start for 7
#: intervals, the step ends at 7.5 s, and iostat reports every second (at half past) all
#: along, labelled with the step that runs (``-`` between steps) as the engine labels a
#: monitor's samples.
PERIOD = 10.0
CHANGES = 10


def _step(k: int) -> str:
    return f"s{k}"


def _fio(k: int, host: int, t: float) -> list[Sample]:
    """Step ``k``'s interval on host ``host`` at ``t``: reads in even steps, writes in odd
    ones, at figures no other step or host has (their drawn forms are unique)."""
    op = "read" if k % 2 == 0 else "write"
    iops = 1000.0 * (k + 1) + 123.0 + 10.0 * host
    labels = {"job": "j", "op": op, "step": _step(k)}
    out = [Sample(t, "fio", "interval", "iops", iops, dict(labels), f"h{host}"),
           Sample(t, "fio", "interval", "bandwidth_bytes", iops * 4096, dict(labels),
                  f"h{host}")]
    for q, base in (("0.5", 10e-6), ("0.99", 1e-3), ("0.999", 100e-3)):
        out.append(Sample(t, "fio", "interval", "latency_seconds",
                          base * (k + 1) * (1 + host / 100) + base / 10,
                          {**labels, "measure": "clat", "quantile": q}, f"h{host}"))
    return out


def _util(j: int) -> float:
    """iostat's utilisation at whole second ``j``: one value a second, never the same."""
    return 0.1 + 0.0031 * j


def _timeline(hosts: int) -> list[tuple[float, object]]:
    """(time, event or batch) of ``CHANGES + 1`` steps on ``hosts`` hosts, in time order.
    The hosts say they run once, at the first step (a border that says ``running``
    throughout, as the issue saw it): nothing but the steps' own events tells a pane that
    its step changed."""
    names = [f"h{h}" for h in range(hosts)]
    out: list[tuple[float, object]] = []
    for h in names:
        out.append((T0, Event(T0, ev.HOST_STATE, f"{h}: running", ev.INFO, h, None,
                              {"state": "running"})))
    for k in range(CHANGES + 1):
        t = T0 + PERIOD * k
        out.append((t, Event(t, ev.STEP_START, f"step {_step(k)}", ev.INFO, None, _step(k),
                             {"hosts": names, "tool": "fio", "expected_seconds": 7.5})))
        for i in range(7):
            for host in range(hosts):
                out.append((t + 1.3 + i, _fio(k, host, t + 1.3 + i)))
        out.append((t + 7.5, Event(t + 7.5, ev.STEP_END, f"step {_step(k)} done", ev.INFO,
                                   None, _step(k), {"ok": True})))
    for j in range(int(PERIOD * (CHANGES + 1))):
        t = T0 + j + 0.5
        k, into = divmod(j, int(PERIOD))
        step = _step(k) if into < 7 else "-"
        out.append((t, [Sample(t, "iostat", "interval", "disk_util_ratio", _util(j),
                               {"device": "sda", "step": step}, h) for h in names]))
    out.sort(key=lambda x: (x[0], not isinstance(x[1], Event)))
    return out


def _drawn(k: int, hosts: int, until: float) -> list[str]:
    """How step ``k``'s figures are drawn (IOPS, bandwidth, percentiles of every host), and
    iostat's utilisation of every second up to ``until``."""
    out = []
    for host in range(hosts):
        for s in _fio(k, host, 0.0):
            value = s.value
            out.append(format_count(value) if s.metric == "iops" else
                       format_byte_rate(value) if s.metric == "bandwidth_bytes" else
                       format_latency(value))
    out += [format_ratio(_util(j)) for j in range(int(until - T0))]
    return out


def _shown(text: str, drawn: list[str]) -> list[str]:
    """Those of ``drawn`` that ``text`` shows as a figure of its own (not inside another:
    "5.30%" is not in "15.30%")."""
    return [d for d in drawn
            if re.search(r"(?<![\d.])" + re.escape(d) + r"(?![\d])", text) is not None]


@pytest.mark.parametrize("hosts, compact", [(1, False), (3, True)])
async def test_no_pane_or_compact_row_shows_a_previous_steps_figure(hosts: int,
                                                                    compact: bool) -> None:
    """Every 100 ms from half a second before each of ten step changes to two seconds after
    it: from the change on, no pane or compact row shows a figure of the step before (its
    IOPS, bandwidth, percentiles, nor a utilisation older than the step: numbers, scales and
    legends alike); and at every frame the fleet line is the panes' figures summed (with
    one host, the pane's own)."""
    state = FleetState("scope", [f"h{h}" for h in range(hosts)])
    timeline = _timeline(hosts)
    source = StaticSource(state, T0 - 1)
    app = ConsoleApp(source)

    def feed(until: float) -> None:
        while timeline and timeline[0][0] <= until:
            _t, record = timeline.pop(0)
            if isinstance(record, Event):
                state.on_event(record)
            else:
                assert isinstance(record, list)
                state.on_samples(record)

    frames = 0
    async with app.run_test(size=(160, 50)) as pilot:
        if compact:
            await pilot.press("c")
        for k in range(1, CHANGES + 1):
            change = T0 + PERIOD * k
            for tick in range(-5, 21):
                now = change + 0.1 * tick
                feed(now)
                source.set_now(now)
                await settle(pilot, app)
                frames += 1
                panes = list(app.query(HostPane))
                assert len(panes) == hosts and all(p.has_class("-compact") == compact
                                                   for p in panes)
                text = "\n".join(line for p in panes for line in p.content_text())
                if now >= change:  # the previous step's figures, and iostat's before now
                    old = _shown(text, _drawn(k - 1, hosts, change))
                    assert not old, (k, round(now - change, 1), old, text)
                header = app.header.figures
                assert header is not None
                for figures in ("iops", "bandwidth"):
                    summed: dict[str, float] = {}
                    for p in panes:
                        assert p.figures is not None
                        for op, v in getattr(p.figures, figures).items():
                            summed[op] = summed.get(op, 0.0) + v
                    assert getattr(header, figures) == pytest.approx(summed), \
                        (k, round(now - change, 1), figures)
                if hosts == 1:
                    pane = panes[0].figures
                    assert pane is not None and header.latency == pane.latency
    assert frames == CHANGES * 26
