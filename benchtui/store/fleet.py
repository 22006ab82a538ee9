"""What a front end shows about a session: the live store plus hosts, steps, events and raw
output, fed through three methods by the live engine or by replay alike.

``FleetState`` is the one model that the console, the exporter and replay share. The live
session calls ``on_samples``/``on_event``/``on_output`` as its sinks; replay reads a recording
and calls the very same methods with the recorded records, so what replay shows is what was
seen live. Readers poll ``version`` (it grows on every change) and read the fields; nothing here
calls back into a front end, so a slow screen can never slow the engine.

Everything is bounded: series by the store's window, events and raw output lines by
``max_events`` and ``max_output_lines`` (per host).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample
from benchtui.store.live import DEFAULT_WINDOW, LiveStore
from benchtui.store.output_ring import OutputLine, OutputRing

__all__ = ["CONNECTING", "DEFAULT_MAX_EVENTS", "DEFAULT_MAX_OUTPUT_LINES", "DONE", "FAILED",
           "HOST_STATES", "RECONNECTING", "RUNNING", "UP", "FleetState", "HostView", "OutputLine",
           "StepView"]

#: Host states, as the engine reports them (``HOST_STATE`` events).
CONNECTING = "connecting"
UP = "up"
RUNNING = "running"
RECONNECTING = "reconnecting"
FAILED = "failed"
DONE = "done"
HOST_STATES = (CONNECTING, UP, RUNNING, RECONNECTING, FAILED, DONE)

DEFAULT_MAX_EVENTS = 5000
DEFAULT_MAX_OUTPUT_LINES = 2000


@dataclass(slots=True)
class HostView:
    """One host as the front ends show it."""

    name: str
    state: str = CONNECTING
    #: Why the host failed (or is reconnecting), in words; "" when all is well.
    reason: str = ""
    facts: dict[str, object] = field(default_factory=dict)
    samples: int = 0
    warnings: int = 0
    #: Data time of the newest sample from this host (controller's epoch seconds).
    last_sample_t: float | None = None
    #: Tools seen running on the host (step tools and monitors), in first-seen order.
    tools: list[str] = field(default_factory=list)
    #: Its newest raw output lines (``OutputRing``: a deque, made when read).
    output: OutputRing = field(default_factory=OutputRing)


@dataclass(slots=True)
class StepView:
    """One run of a step (``name#2`` for the second of ``repeat = 3``)."""

    name: str
    started: float
    hosts: tuple[str, ...] = ()
    tool: str = ""
    #: How long the step should take by its own options (fio runtime, iperf -t, duration).
    expected_seconds: float | None = None
    ended: float | None = None
    #: ``outcome == "completed"`` once ended (None while it runs).
    ok: bool | None = None
    message: str = ""
    #: How it ended (``events.OUTCOMES``: completed, failed, interrupted, watchdog,
    #: deadline) and why; None while it runs.
    outcome: str | None = None
    reason: str = ""
    #: Its tools that fell silent past their ``silence``: (host, tool, longest seconds).
    silences: list[tuple[str, str, float]] = field(default_factory=list)

    def progress(self, now: float) -> float | None:
        """Fraction done (0..1) by the clock, when the step's length is known."""
        if self.ended is not None:
            return 1.0
        if not self.expected_seconds:
            return None
        return min(max((now - self.started) / self.expected_seconds, 0.0), 1.0)

    def eta(self, now: float) -> float | None:
        """Seconds left by the clock, when the step's length is known."""
        if self.ended is not None:
            return 0.0
        if not self.expected_seconds:
            return None
        return max(self.started + self.expected_seconds - now, 0.0)


class FleetState:
    """A session as seen by a front end; fed by the engine's sinks or by replay."""

    def __init__(self, name: str = "", hosts: Iterable[str] = (), *,
                 window: int = DEFAULT_WINDOW, max_events: int = DEFAULT_MAX_EVENTS,
                 max_output_lines: int = DEFAULT_MAX_OUTPUT_LINES) -> None:
        self.name = name
        self.store = LiveStore(window)
        self.max_output_lines = max_output_lines
        self.hosts: dict[str, HostView] = {}
        self.steps: list[StepView] = []
        self.events: deque[Event] = deque(maxlen=max_events)
        self.events_total = 0
        self.warnings_total = 0
        self.errors_total = 0
        self.started: float | None = None
        self.ended: float | None = None
        self.ok: bool | None = None
        #: How the session ended (``events.OUTCOMES``) and why; None while it runs.
        self.outcome: str | None = None
        self.reason = ""
        #: The newest time seen in any record (epoch seconds): replay's clock, and a lower
        #: bound of the live one.
        self.latest_t: float | None = None
        #: Seconds the controller is behind (its figures that late); None while it is not
        #: (``controller_lag`` events).
        self.controller_lag: float | None = None
        self.version = 0
        #: Called with every batch of samples once the state has taken it in, on the feeding
        #: thread: for consumers that must see every interval, not just the latest (the
        #: Prometheus exporter's histogram counters). Keep them cheap.
        self.sample_listeners: list[Callable[[list[Sample]], None]] = []
        for h in hosts:
            self.host(h)

    # --- reading -----------------------------------------------------------------------------

    def host(self, name: str) -> HostView:
        """The host's view, made on first mention."""
        view = self.hosts.get(name)
        if view is None:
            view = self.hosts[name] = HostView(
                name, output=OutputRing(maxlen=self.max_output_lines))
        return view

    @property
    def current_step(self) -> StepView | None:
        if self.steps and self.steps[-1].ended is None:
            return self.steps[-1]
        return None

    def hosts_up(self) -> int:
        """Hosts that are reachable and not failed (up, running, done)."""
        return sum(1 for h in self.hosts.values() if h.state in (UP, RUNNING, DONE))

    def elapsed(self, now: float) -> float:
        return 0.0 if self.started is None else max((self.ended or now) - self.started, 0.0)

    # --- feeding -----------------------------------------------------------------------------

    def on_samples(self, samples: list[Sample]) -> None:
        if not samples:
            return
        self.store.add(samples)
        newest = self.latest_t
        for s in samples:
            if s.t is None:
                continue
            view = self.hosts.get(s.host) or self.host(s.host)
            view.samples += 1
            if view.last_sample_t is None or s.t > view.last_sample_t:
                view.last_sample_t = s.t
            if newest is None or s.t > newest:
                newest = s.t
        self.latest_t = newest
        self.version += 1
        for listener in self.sample_listeners:
            listener(samples)

    def on_output(self, out: OutputLines) -> None:
        view = self.host(out.host)
        if out.tool not in view.tools:
            view.tools.append(out.tool)
        view.output.add(out.t, out.step, out.tool, out.lines)
        self._saw(out.t)
        self.version += 1

    def on_event(self, event: Event) -> None:
        if event.kind == ev.CONTROLLER_LAG:
            seconds = event.data.get("seconds")
            self.controller_lag = float(seconds) if event.data.get("behind") and \
                isinstance(seconds, int | float) else None
            if not ev.is_said(event):  # a figure for the header, not for the log
                self._saw(event.t)
                self.version += 1
                return
        self.events.append(event)
        self.events_total += 1
        if event.level == ev.WARNING:
            self.warnings_total += 1
        elif event.level == ev.ERROR:
            self.errors_total += 1
        self._saw(event.t)
        kind, data = event.kind, event.data
        if event.host is not None and event.host not in self.hosts:
            self.host(event.host)
        if kind == ev.HOST_STATE and event.host is not None:
            self._host_state(event)
        elif kind == ev.FACTS and event.host is not None:
            facts = data.get("facts")
            if isinstance(facts, dict):
                self.host(event.host).facts = facts
        elif kind == ev.PARSE_WARNING and event.host is not None:
            self.host(event.host).warnings += 1
        elif kind == ev.SESSION_START:
            self.started = event.t
        elif kind == ev.SESSION_END:
            self.ended = event.t
            self.outcome, self.reason = ev.outcome_of(event), ev.reason_of(event)
            self.ok = self.outcome == ev.COMPLETED
            if self.started is None:
                self.started = event.t
        elif kind == ev.STEP_START:
            self._step_start(event)
        elif kind == ev.STEP_END:
            self._step_end(event)
        elif kind == ev.SILENCE and event.step is not None:
            self._silence(event)
        self.version += 1

    def _saw(self, t: float) -> None:
        if self.latest_t is None or t > self.latest_t:
            self.latest_t = t

    def _host_state(self, event: Event) -> None:
        assert event.host is not None
        view = self.host(event.host)
        state = event.data.get("state")
        if isinstance(state, str):
            view.state = state
        prefix = f"{event.host}: {view.state}"
        text = event.message.removeprefix(prefix).strip()
        view.reason = text[1:-1] if text.startswith("(") and text.endswith(")") else text

    def _step_start(self, event: Event) -> None:
        data = event.data
        hosts = data.get("hosts")
        expected = data.get("expected_seconds")
        tool = data.get("tool")
        self.steps.append(StepView(
            event.step or "?", event.t,
            tuple(str(h) for h in hosts) if isinstance(hosts, list | tuple) else (),
            tool if isinstance(tool, str) else "",
            float(expected) if isinstance(expected, int | float) and expected > 0 else None))
        self.store.scope = event.t  # the previous step's figures are no longer current
        if self.started is None:
            self.started = event.t

    def _step_end(self, event: Event) -> None:
        for step in reversed(self.steps):
            if step.name == event.step and step.ended is None:
                step.ended = event.t
                step.outcome, step.reason = ev.outcome_of(event), ev.reason_of(event)
                step.ok = step.outcome == ev.COMPLETED
                step.message = event.message
                found = ev.silences_of(event)
                if found:
                    step.silences = found
                if step is self.steps[-1]:
                    self.store.scope = event.t  # its figures end with it
                return

    def _silence(self, event: Event) -> None:
        """A tool of a running step fell silent: the step keeps it (its end event says for
        how long in all)."""
        step = self.current_step
        tool, seconds = event.data.get("tool"), event.data.get("seconds")
        if step is not None and step.name == event.step and event.host is not None:
            step.silences.append((event.host, str(tool or "?"),
                                  float(seconds) if isinstance(seconds, int | float) else 0.0))
