"""Deterministic console data: real tool output parsed by the real parsers, on a fixed clock.

The fio json+ fixture (two jobs, randread and randwrite, with per-interval histograms) and the
sysstat 12 ``iostat -x -t`` fixture are parsed once; their interval samples are then laid on a
fixed timeline (one interval per second, the fixture's intervals in turn) for each host, with
the events the engine would emit. No randomness, no wall clock: ``NOW`` is the console's clock.
"""

from __future__ import annotations

import copy
from functools import cache

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import INTERVAL, Sample
from benchtui.parsers.fio_json import FioJsonParser
from benchtui.parsers.iostat import IostatParser
from benchtui.store.fleet import FleetState
from tests.helpers import fixture_text, parse_with

START = 1_800_000_000.0
SECONDS = 60
NOW = START + SECONDS + 0.5
STEP = "randrw-4k"


@cache
def _intervals(kind: str) -> tuple[tuple[Sample, ...], ...]:
    """The fixture's interval samples, grouped by interval, in order."""
    if kind == "fio":
        samples, _ = parse_with(FioJsonParser,
                                fixture_text("fio_json/randread_randwrite.jsonplus.txt"))
    else:
        samples, _ = parse_with(IostatParser, fixture_text("disk/real_sysstat12_x_t.txt"))
    groups: dict[float, list[Sample]] = {}
    for s in samples:
        if s.kind == INTERVAL and s.elapsed is not None and s.elapsed == int(s.elapsed):
            groups.setdefault(s.elapsed, []).append(s)
    return tuple(tuple(groups[k]) for k in sorted(groups))


def timeline(kind: str, host: str, start: float, seconds: int, phase: int = 0
             ) -> list[list[Sample]]:
    """One batch of samples per second for ``seconds`` seconds from ``start``."""
    intervals = _intervals(kind)
    batches = []
    for i in range(seconds):
        batch = []
        for s in intervals[(i + phase) % len(intervals)]:
            c = copy.copy(s)
            c.host = host
            c.t = start + i + 1
            c.elapsed = float(i + 1)
            c.labels = {**s.labels, "step": STEP}
            batch.append(c)
        batches.append(batch)
    return batches


def _event(t: float, kind: str, message: str, *, level: str = ev.INFO, host: str | None = None,
           step: str | None = None, **data: object) -> Event:
    return Event(t, kind, message, level, host, step, dict(data))


def fleet_state(hosts: int = 1, *, failed: int = 0, reconnecting: int = 0,
                seconds: int = SECONDS, name: str = "demo") -> FleetState:
    """A session ``seconds`` into a fio step on ``hosts`` hosts with iostat beside it. The last
    ``failed`` hosts failed (no data after connecting); the ``reconnecting`` ones before them
    stopped reporting half-way."""
    names = [f"host{i + 1:02d}" for i in range(hosts)]
    state = FleetState(name, names)
    ok_hosts = names[:hosts - failed]
    for h in names:
        state.on_event(_event(START - 2, ev.HOST_STATE, f"{h}: up", host=h, state="up"))
        state.on_event(_event(START - 2, ev.FACTS, f"{h}: Debian GNU/Linux 12", host=h, facts={
            "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-18-amd64",
            "cpu_count": 2, "cpu_model": "AMD EPYC", "mem_bytes": 8 * 2**30}))
    state.on_event(_event(START - 1, ev.SESSION_START, "session demo (test)"))
    state.on_event(_event(START, ev.STEP_START, f"step {STEP} on {', '.join(ok_hosts)}",
                          step=STEP, hosts=ok_hosts, tool="fio", expected_seconds=120.0,
                          index=0, repeat=1))
    for h in names[hosts - failed:]:
        state.on_event(_event(START, ev.HOST_STATE, f"{h}: failed (cannot start fio: "
                              "No space left on device)", level=ev.ERROR, host=h,
                              state="failed"))
    state.on_event(_event(START + 1, ev.PREFLIGHT, "randrw-4k runs 120 s: on an SSD this "
                          "measures its caches (run longer)", level=ev.WARNING, step=STEP))
    silent = set(names[hosts - failed - reconnecting:hosts - failed])
    for n, h in enumerate(ok_hosts):
        state.on_event(_event(START, ev.HOST_STATE, f"{h}: running", host=h, state="running"))
        state.on_event(_event(START + 0.2, ev.RUN_START, f"{h}: fio started", host=h,
                              step=STEP))
        fio = timeline("fio", h, START, seconds, phase=n)
        io = timeline("iostat", h, START, seconds, phase=n)
        for i, (a, b) in enumerate(zip(fio, io, strict=True)):
            if h in silent and i >= seconds // 2:
                break
            state.on_samples(a + b)
            state.on_output(OutputLines(START + i + 1, h, STEP, "iostat", "monitor",
                                        (f"vda {1000 + i}.00 {4000 + 4 * i}.00 0.00",)))
        if h in silent:
            state.on_event(_event(START + seconds // 2 + 3, ev.HOST_STATE,
                                  f"{h}: reconnecting", level=ev.WARNING, host=h,
                                  state="reconnecting"))
    return state
