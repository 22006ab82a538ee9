"""The exporter's own metrics: the session, its current step, each host's state and freshness,
and the counts of samples, parse warnings and events.

They answer "is the benchmark (and benchtui) healthy?" beside the measurements: which hosts are
up, how long since each host last sent a sample, whether parsers are complaining, which step
runs and how far it is. Counts are ``_total`` counters that only grow during a session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from benchtui.export.exposition import Family
from benchtui.store.fleet import DONE, HOST_STATES, RUNNING, UP, FleetState, HostView

_UP_STATES = (UP, RUNNING, DONE)


def _gauge(name: str, documentation: str, unit: str = "") -> Family:
    return Family(name, "gauge", unit, documentation)


def _counter(name: str, documentation: str) -> Family:
    return Family(name, "counter", "", documentation)


def health_families(state: FleetState, hosts: list[HostView], ages: Mapping[str, float],
                    skipped: Mapping[tuple[str, str], int], now: float, *,
                    step_labels: Callable[[str], Mapping[str, str]] | None = None
                    ) -> Iterator[Family]:
    """``ages``: host -> seconds since its last sample arrived (controller clock);
    ``skipped``: (metric, reason) -> samples not exported; ``now``: epoch seconds, for step
    progress; ``step_labels``: a step's matrix labels (for ``benchtui_step_info``)."""
    yield from _session(state, now, step_labels)
    yield from _hosts(hosts, ages)
    events = _counter("benchtui_events", "Session events by level (info, warning, error).")
    info = max(state.events_total - state.warnings_total - state.errors_total, 0)
    for level, n in (("info", info), ("warning", state.warnings_total),
                     ("error", state.errors_total)):
        events.add("benchtui_events_total", {"level": level}, n)
    yield events
    if skipped:
        family = _counter("benchtui_exporter_skipped_samples",
                          "Samples the exporter could not export, by metric and reason.")
        for (metric, reason), n in sorted(skipped.items()):
            family.add("benchtui_exporter_skipped_samples_total",
                              {"metric": metric, "reason": reason}, n)
        yield family


def _session(state: FleetState, now: float,
             step_labels: Callable[[str], Mapping[str, str]] | None) -> Iterator[Family]:
    info = _gauge("benchtui_session_info", "The session being run (always 1).")
    info.add("benchtui_session_info", {"session": state.name}, 1)
    yield info
    if state.started is not None:
        started = _gauge("benchtui_session_start_time_seconds",
                         "When the session started, Unix time.", "seconds")
        started.add("benchtui_session_start_time_seconds", {}, state.started)
        yield started
    if state.ended is not None:
        ended = _gauge("benchtui_session_end_time_seconds",
                       "When the session ended (every step done), Unix time.", "seconds")
        ended.add("benchtui_session_end_time_seconds", {}, state.ended)
        yield ended
    finished = _counter("benchtui_steps_finished", "Steps (and repeats) finished, by result.")
    ok = sum(1 for s in state.steps if s.ended is not None and s.ok)
    failed = sum(1 for s in state.steps if s.ended is not None and not s.ok)
    finished.add("benchtui_steps_finished_total", {"result": "ok"}, ok)
    finished.add("benchtui_steps_finished_total", {"result": "failed"}, failed)
    yield finished
    step = state.current_step
    if step is None:
        return
    labels = {"step": step.name}
    info = _gauge("benchtui_step_info", "The step running now (1; none between steps).")
    extra = step_labels(step.name) if step_labels is not None else {}
    info.add("benchtui_step_info", {**extra, **labels, "tool": step.tool}, 1)
    yield info
    started = _gauge("benchtui_step_start_time_seconds", "When the running step started, "
                     "Unix time.", "seconds")
    started.add("benchtui_step_start_time_seconds", labels, step.started)
    yield started
    progress = step.progress(now)
    if progress is not None:
        family = _gauge("benchtui_step_progress_ratio", "How far the running step is by the "
                        "clock, 0..1 (steps whose length is known).", "ratio")
        family.add("benchtui_step_progress_ratio", labels, progress)
        yield family
    eta = step.eta(now)
    if eta is not None:
        family = _gauge("benchtui_step_eta_seconds", "Seconds left in the running step by "
                        "the clock (steps whose length is known).", "seconds")
        family.add("benchtui_step_eta_seconds", labels, eta)
        yield family


def _hosts(hosts: list[HostView], ages: Mapping[str, float]) -> Iterator[Family]:
    up = _gauge("benchtui_host_up", "1 when the host is reachable and not failed.")
    states = _gauge("benchtui_host_state", "1 for the host's current state (connecting, up, "
                    "running, reconnecting, failed, done), 0 for the others.")
    age = _gauge("benchtui_host_last_sample_age_seconds", "Seconds since the host's last "
                 "sample arrived, on benchtui's clock.", "seconds")
    samples = _counter("benchtui_samples", "Samples received from the host.")
    warnings = _counter("benchtui_parse_warnings", "Output lines of the host's tools that "
                        "were recognised but could not be read.")
    for h in hosts:
        labels = {"host": h.name}
        up.add("benchtui_host_up", labels, 1 if h.state in _UP_STATES else 0)
        for s in HOST_STATES:
            states.add("benchtui_host_state", {**labels, "state": s},
                              1 if h.state == s else 0)
        if h.name in ages:
            age.add("benchtui_host_last_sample_age_seconds", labels,
                           max(ages[h.name], 0.0))
        samples.add("benchtui_samples_total", labels, h.samples)
        warnings.add("benchtui_parse_warnings_total", labels, h.warnings)
    yield up
    yield states
    if age.samples:
        yield age
    yield samples
    yield warnings
