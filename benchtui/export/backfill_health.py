"""The session and health series of a recorded session, second by second, for a backfill.

The live exporter's session metrics (``benchtui_step_info``, step progress and time left,
``benchtui_host_up``, host states, samples and parse warnings counted, the age of each host's
last sample, ...) are made by ``health.health_families`` from a ``FleetState``. For
``dump --format openmetrics`` the same function runs on a ``FleetState`` fed with the
recording's events in time order, once per whole second from the session's start to its end,
so a backfilled session has the same series a live scrape every second would have had, and a
dashboard's session panels work on it. Between steps there is no ``benchtui_step_info``
point, as live; a step's series gets a last point 0 when it ends (a backfill cannot say
"gone", and Prometheus would otherwise show the step for 5 more minutes): select
``benchtui_step_info == 1``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping

from benchtui.export.exposition import Family
from benchtui.export.health import health_families
from benchtui.model.events import Event
from benchtui.store.fleet import FleetState

#: Families a backfill leaves out: they describe the exporter process, not the session.
_LEFT_OUT = frozenset({"benchtui_exporter_skipped_samples"})


def health_points(name: str, events: Iterable[Event], sample_times: Mapping[str, list[float]],
                  step_labels: Callable[[str], Mapping[str, str]] | None = None
                  ) -> Iterator[tuple[float, Family]]:
    """(time, family) for each whole second of the session. ``sample_times``: host -> the
    (sorted) times of its samples."""
    ordered = sorted(events, key=lambda e: e.t)
    if not ordered:
        return
    hosts = list(dict.fromkeys([*sample_times, *(e.host for e in ordered if e.host)]))
    state = FleetState(name, hosts)
    start = math.ceil(ordered[0].t)
    end = ordered[-1].t
    i = 0
    now = float(start)
    ended_steps: list[Family] = []
    while now <= end + 1:
        before = state.current_step
        while i < len(ordered) and ordered[i].t <= now:
            state.on_event(ordered[i])
            i += 1
        if before is not None and state.current_step is not before:
            ended_steps.append(_step_ended(before.name, before.tool, step_labels))
        ages: dict[str, float] = {}
        for host in hosts:
            times = sample_times.get(host, [])
            n = bisect_right(times, now)
            view = state.host(host)
            view.samples = n
            if n:
                ages[host] = now - times[n - 1]
        for family in ended_steps:
            yield now, family
        ended_steps = []
        for family in health_families(state, list(state.hosts.values()), ages, {}, now,
                                      step_labels=step_labels):
            if family.name not in _LEFT_OUT:
                yield now, family
        now += 1.0


def _step_ended(step: str, tool: str, step_labels: Callable[[str], Mapping[str, str]] | None
                ) -> Family:
    family = Family("benchtui_step_info", "gauge", "", "")
    extra = step_labels(step) if step_labels is not None else {}
    family.add("benchtui_step_info", {**extra, "step": step, "tool": tool}, 0)
    return family
