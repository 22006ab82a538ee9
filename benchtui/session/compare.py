"""How the steps and hosts of two sessions are matched: the one place that decides it.

Every command that compares goes through here: ``benchtui report --baseline`` (a table's
percentages), the regression gate (``--fail-below``/``--fail-above``) and the console's
baseline ghost (``--baseline OLD.btr``). A session's *layout* (its steps, the hosts each ran
on, and when) is read from its events; a *baseline spec* says what a row is compared with:

- ``host=NAME``: the same step on host NAME of the same session (the seeds' "physical machine
  = 100%");
- ``step=NAME``: step NAME on the same host of the same session (e.g. psync as the baseline of
  the other engines);
- ``session=FILE``: the same step (by name) on the same host (by name) of another session
  (before/after a kernel change); with ``baseline_host`` every host is compared with that one
  host of the other session, with ``fleet`` with the other session's fleet.

A session that is still running (the console's ghost of a live run) is matched a step at a
time as each starts (``match_step``), and checked up front against its plan's steps and
hosts (``match_steps``), by the same rules.

Steps are matched by name with the repeat stripped (``randread#2`` is a run of ``randread``);
``counterpart_run`` picks the baseline's run of the same repeat, else its last one. A row that
stands for a step's runs (their median, or the best of them: ``report/repeats.py``) is
compared with the baseline's runs of the step combined by the same rule
(``counterpart_labels``): the median with the median, never one run with another.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from benchtui.errors import CompareError
from benchtui.model import events as ev
from benchtui.model.events import Event

#: The host name of a step's fleet row (every host of the step together).
FLEET = "(fleet)"

HOST, STEP, SESSION = "host", "step", "session"
_KINDS = (HOST, STEP, SESSION)


@dataclass(frozen=True, slots=True)
class RunWindow:
    """One run of a step on one host, in the controller's epoch seconds (``t1`` None when the
    recording ends before the run did)."""

    label: str      #: the step's label as recorded: ``randread#2`` for the second repeat
    step: str       #: the step's name, repeat stripped: ``randread``
    repeat: int     #: 1-based
    host: str
    t0: float
    t1: float | None
    #: ``outcome == "completed"``; None when the recording ends before the run did.
    ok: bool | None
    #: How the run ended on this host (``events.OUTCOMES``; the step's, when the step was
    #: interrupted or the host has no ``run_end``) and why; None without an end.
    outcome: str | None = None
    reason: str = ""
    #: Seconds its tool printed nothing, past its ``silence`` (0: it never fell silent).
    silent_seconds: float = 0.0
    #: The host's part in a client-server step (iperf3, iperf): "client" or "server"
    #: (from the command line of its ``run_start`` event); "" otherwise.
    role: str = ""


def _iperf_words(command: object) -> list[str] | None:
    """The words after the program of a client-server tool's command line (None: not
    one)."""
    if not isinstance(command, str):
        return None
    words = command.split()
    tool = next((i for i, w in enumerate(words) if "iperf" in w.rsplit("/", 1)[-1]), None)
    return None if tool is None else words[tool + 1:]


def _role(command: object) -> str:
    """ "server" or "client" for a command line of a client-server tool (``-s``/``-c``)."""
    rest = _iperf_words(command)
    if rest is None:
        return ""
    return "server" if "-s" in rest else "client" if "-c" in rest else ""


def _port(command: object) -> str | None:
    """The port of a client-server tool's command line (``-p 5201``, ``--port=5201``)."""
    rest = _iperf_words(command) or []
    for i, w in enumerate(rest):
        if w in ("-p", "--port") and i + 1 < len(rest):
            return rest[i + 1]
        if w.startswith("--port="):
            return w.partition("=")[2]
    return None


def split_label(label: str, data: Mapping[str, object]) -> tuple[str, int]:
    """A step label as the engine writes it (``name`` or ``name#N`` for ``repeat > 1``) ->
    (name, repeat), using the ``step_start`` event's data (``repeat``, and ``repeats`` where
    the session records it)."""
    repeat = data.get("repeat")
    repeats = data.get("repeats")
    if isinstance(repeat, int) and repeat >= 1 and label.endswith(f"#{repeat}") \
            and not (isinstance(repeats, int) and repeats <= 1):
        return label[: -len(f"#{repeat}")], repeat
    return label, repeat if isinstance(repeat, int) and repeat >= 1 else 1


def _run_window(run: RunWindow, step_end: Event | None, host_end: Event | None
                ) -> RunWindow:
    """``run`` (its window) ended as its host's own ``run_end`` says (its worst process),
    or as its step's end says when the host has none (the step was interrupted, the host
    lost); no outcome while the step has no end. A recording made before outcomes were
    written: as its step, unless the step completed and the host's process did not."""
    if step_end is None:
        return run
    host = run.host
    outcome, reason = ev.outcome_of(step_end), ev.reason_of(step_end)
    silent = 0.0
    if host_end is not None:
        seconds = host_end.data.get("silent_seconds")
        silent = float(seconds) if isinstance(seconds, int | float) else 0.0
        if "outcome" in host_end.data or outcome == ev.COMPLETED:
            outcome, reason = ev.outcome_of(host_end), ev.reason_of(host_end) or reason
    for h, _tool, seconds in ev.silences_of(step_end):
        if h == host:
            silent = max(silent, seconds)
    return replace(run, ok=outcome == ev.COMPLETED, outcome=outcome, reason=reason,
                   silent_seconds=silent)


@dataclass(frozen=True)
class SessionLayout:
    """A session's steps (names in the order they first ran), the hosts each ran on, and
    every run of a step on a host."""

    steps: tuple[str, ...]
    runs: tuple[RunWindow, ...]
    #: step name -> the first ``step_start`` event's data (tool, matrix, select, ...).
    step_data: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    #: step label (``randread#2``) -> when the step started: what step-elapsed time counts
    #: from (the console's baseline ghost lines up two runs of a step on it).
    step_started: Mapping[str, float] = field(default_factory=dict)
    #: (step label, host) -> the ports of its client-server processes (iperf3: a server
    #: per client, each on its own port), from their command lines.
    ports: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> SessionLayout:
        """From a session's events (time order): each step's runs from ``step_start`` /
        ``step_end``, each host's window from its ``run_start`` / ``run_end`` (the step's own
        window, on the hosts the step started on, when a host has no run events)."""
        steps: list[str] = []
        step_data: dict[str, Mapping[str, object]] = {}
        labels: dict[str, tuple[str, int, Mapping[str, object]]] = {}
        step_window: dict[str, list[float | None]] = {}
        step_end: dict[str, Event] = {}
        host_window: dict[tuple[str, str], list[float | None]] = {}
        host_end: dict[tuple[str, str], Event] = {}
        roles: dict[tuple[str, str], str] = {}
        ports: dict[tuple[str, str], list[str]] = {}
        for e in events:
            label = e.step
            if label is None:
                continue
            if e.kind == ev.STEP_START:
                name, repeat = split_label(label, e.data)
                labels[label] = (name, repeat, e.data)
                if name not in step_data:
                    steps.append(name)
                    step_data[name] = e.data
                step_window[label] = [e.t, None]
                step_end.pop(label, None)
            elif e.kind == ev.STEP_END and label in step_window:
                step_window[label][1] = e.t
                step_end[label] = e
            elif e.kind == ev.RUN_START and e.host is not None:
                w = host_window.setdefault((label, e.host), [e.t, None])
                w[0] = min(w[0] or e.t, e.t)
                role = _role(e.data.get("command"))
                if role:
                    roles[(label, e.host)] = role
                port = _port(e.data.get("command"))
                if port is not None:
                    ports.setdefault((label, e.host), []).append(port)
            elif e.kind == ev.RUN_END and e.host is not None and (label, e.host) in host_window:
                host_window[(label, e.host)][1] = e.t
                before = host_end.get((label, e.host))
                if before is None or ev.worst([ev.outcome_of(before), ev.outcome_of(e)]) \
                        != ev.outcome_of(before):
                    host_end[(label, e.host)] = e  # (a host's worst process names its run)
        runs: list[RunWindow] = []
        hosts_of: dict[str, list[str]] = {}
        for lb, h in host_window:
            hosts_of.setdefault(lb, []).append(h)
        for label, (name, repeat, data) in labels.items():
            s0, s1 = step_window[label]
            assert s0 is not None
            hosts = hosts_of.get(label, [])
            if not hosts:
                listed = data.get("hosts")
                hosts = [str(h) for h in listed] if isinstance(listed, list) else []
            for host in hosts:
                h0, h1 = host_window.get((label, host), [s0, s1])
                t0 = s0 if h0 is None else h0
                t1 = h1 if h1 is not None else s1
                runs.append(_run_window(
                    RunWindow(label, name, repeat, host, t0, t1, None,
                              role=roles.get((label, host), "")),
                    step_end.get(label), host_end.get((label, host))))
        runs.sort(key=lambda r: (r.t0, r.host))
        started = {label: w[0] for label, w in step_window.items() if w[0] is not None}
        return cls(tuple(steps), tuple(runs), step_data, started,
                   {k: tuple(v) for k, v in ports.items()})

    def _index(self) -> dict[str | None, tuple[list[RunWindow], tuple[str, ...]]]:
        """step -> (its runs, its hosts), None -> every run and host; built once (a layout
        of 10^5 steps is asked about each of them)."""
        found: dict[str | None, tuple[list[RunWindow], tuple[str, ...]]] | None = \
            self.__dict__.get("_by_step")
        if found is None:
            runs: dict[str | None, list[RunWindow]] = {None: list(self.runs)}
            for r in self.runs:
                runs.setdefault(r.step, []).append(r)
            found = {step: (rs, tuple(dict.fromkeys(r.host for r in rs)))
                     for step, rs in runs.items()}
            object.__setattr__(self, "_by_step", found)
        return found

    def clients_of(self, label: str, host: str) -> dict[str, str]:
        """A server's clients in run ``label`` of a step: its port -> the client that
        connected to it (a step with several clients runs a server per client, each on a
        port of its own); {} for a host that is no server there."""
        found = {r.host: self.ports.get((label, r.host), ())
                 for r in self.runs if r.label == label and r.role == "client"}
        return {port: client for port in self.ports.get((label, host), ())
                for client, theirs in found.items() if port in theirs}

    def hosts(self, step: str | None = None) -> tuple[str, ...]:
        """The hosts that ran ``step`` (any step when None), in order of first run."""
        found = self._index().get(step)
        return found[1] if found is not None else ()

    def runs_of(self, step: str, host: str | None = None) -> list[RunWindow]:
        """Every run of ``step`` (on ``host`` only, when given), in time order."""
        found = self._index().get(step)
        runs = found[0] if found is not None else []
        return [r for r in runs if host is None or r.host == host]


@dataclass(frozen=True, slots=True)
class BaselineSpec:
    """What a row is compared with (module doc)."""

    kind: str
    value: str
    #: session baselines: compare every host with this host of the baseline session.
    host: str | None = None
    #: session baselines: compare every host with the baseline session's fleet.
    fleet: bool = False

    def describe(self) -> str:
        if self.kind != SESSION:
            return f"{self.kind} {self.value}"
        against = f", host {self.host}" if self.host else (", its fleet" if self.fleet else "")
        return f"session {self.value}{against}"


def parse_baseline(text: str, *, baseline_host: str | None = None) -> BaselineSpec:
    """``host=NAME``, ``step=NAME`` or ``session=FILE`` (a bare file name ending in ``.btr``
    is a session too). ``baseline_host`` (``--baseline-host``) goes with session baselines:
    a host name of the baseline session, or ``fleet``. Raises CompareError (one sentence)."""
    kind, sep, value = text.partition("=")
    if not sep and text.endswith(".btr"):
        kind, value = SESSION, text
    kind = kind.strip().lower()
    value = value.strip()
    if kind not in _KINDS or not value:
        raise CompareError(f"{text!r} is not a baseline", hint="give host=NAME, step=NAME or "
                           "session=FILE (e.g. --baseline host=物理机)")
    if baseline_host is not None and kind != SESSION:
        raise CompareError("--baseline-host goes with a baseline session (session=FILE), "
                           f"not with {kind}={value}")
    if baseline_host is not None and baseline_host.strip().lower() == "fleet":
        return BaselineSpec(kind, value, fleet=True)
    return BaselineSpec(kind, value, host=baseline_host)


RowKey = tuple[str, str]  # (step name, host name or FLEET)


@dataclass(frozen=True)
class Matching:
    """Where each (step, host) row of a session finds its baseline row."""

    spec: BaselineSpec
    #: (step, host) -> (baseline step, baseline host); rows without a baseline are absent.
    pairs: Mapping[RowKey, RowKey]
    #: steps of the session with no counterpart in the baseline (said once, quietly).
    unmatched_steps: tuple[str, ...] = ()

    def baseline_of(self, step: str, host: str) -> RowKey | None:
        return self.pairs.get((step, host))


def match(layout: SessionLayout, spec: BaselineSpec,
          baseline: SessionLayout | None = None) -> Matching:
    """Pair every (step, host) of ``layout`` (and each step's fleet row) with its baseline
    row under ``spec``; ``baseline`` is the other session's layout for ``session=`` specs.
    Raises CompareError naming what does not exist (with what does) or what has nothing in
    common."""
    pairs: dict[RowKey, RowKey] = {}
    if spec.kind == HOST:
        if spec.value not in layout.hosts():
            raise CompareError(f"the baseline host {spec.value!r} ran no step in this session",
                               known=layout.hosts())
        for step in layout.steps:
            if spec.value in layout.hosts(step):
                for host in layout.hosts(step):
                    pairs[(step, host)] = (step, spec.value)
        unmatched = tuple(s for s in layout.steps if spec.value not in layout.hosts(s))
        return Matching(spec, pairs, unmatched)
    if spec.kind == STEP:
        if spec.value not in layout.steps:
            raise CompareError(f"the baseline step {spec.value!r} is not in this session",
                               known=layout.steps)
        base_hosts = layout.hosts(spec.value)
        for step in layout.steps:
            for host in layout.hosts(step):
                if host in base_hosts:
                    pairs[(step, host)] = (spec.value, host)
            pairs[(step, FLEET)] = (spec.value, FLEET)
        return Matching(spec, pairs)
    if baseline is None:
        raise CompareError(f"the baseline session {spec.value} was not read")
    pairs = match_steps(spec, baseline, [(s, layout.hosts(s)) for s in layout.steps])
    unmatched = tuple(s for s in layout.steps if s not in baseline.steps)
    return Matching(spec, pairs, unmatched)


def match_steps(spec: BaselineSpec, baseline: SessionLayout,
                steps: Sequence[tuple[str, Sequence[str]]]) -> dict[RowKey, RowKey]:
    """The pairs of a session baseline (``session=``) for these steps, each with the hosts it
    runs on: ``match``'s rules, for a session whose layout is not complete yet (a live run
    knows its plan's steps and hosts before they run). Raises CompareError, as ``match``,
    when the steps have none in common with the baseline, the baseline host is not in it, or
    no host matches by name."""
    common = [(s, hosts) for s, hosts in steps if s in baseline.steps]
    if not common:
        raise CompareError(f"the baseline session {spec.value} has no step in common with "
                           "this one (steps are matched by name)", known=baseline.steps,
                           hint="this session's steps are: "
                           f"{', '.join(s for s, _h in steps[:12])}")
    if spec.host is not None and spec.host not in baseline.hosts():
        raise CompareError(f"the baseline host {spec.host!r} is not in {spec.value}",
                           known=baseline.hosts())
    pairs: dict[RowKey, RowKey] = {}
    for step, hosts in common:
        pairs.update(match_step(spec, baseline, step, hosts))
    if spec.host is None and not spec.fleet and not any(h != FLEET for _s, h in pairs):
        raise CompareError(f"no host of this session is in the baseline session {spec.value} "
                           "(hosts are matched by name)", known=baseline.hosts(),
                           hint="compare every host with one of them (--baseline-host NAME) "
                           "or with its fleet (--baseline-host fleet)")
    return pairs


def match_step(spec: BaselineSpec, baseline: SessionLayout, step: str,
               hosts: Iterable[str]) -> dict[RowKey, RowKey]:
    """One step of a session baseline (``session=``) as it starts: each of ``hosts`` (the
    hosts the step starts on) with its baseline row, and the step's fleet row with the
    baseline's fleet; {} when the baseline has no step of that name. Hosts without a
    counterpart are absent. The rules of ``match``, which calls it for every step."""
    if step not in baseline.steps:
        return {}
    base_hosts = baseline.hosts(step)
    pairs: dict[RowKey, RowKey] = {}
    for host in hosts:
        if spec.fleet:
            pairs[(step, host)] = (step, FLEET)
        elif spec.host is not None:
            if spec.host in base_hosts:
                pairs[(step, host)] = (step, spec.host)
        elif host in base_hosts:
            pairs[(step, host)] = (step, host)
    pairs[(step, FLEET)] = (step, FLEET)
    return pairs


def host_pairs(spec: BaselineSpec, hosts: Iterable[str], baseline_hosts: Iterable[str]
               ) -> list[tuple[str, str]]:
    """(host, baseline host) for each of ``hosts`` that has one under a session spec: the
    host of the same name, or every host with ``spec.host`` (a baseline fleet pairs no
    host). What ``match_step`` does for a step's hosts, for the sessions' hosts as a whole
    (their facts, ``session/changes.py``)."""
    base = set(baseline_hosts)
    if spec.fleet:
        return []
    if spec.host is not None:
        return [(h, spec.host) for h in hosts] if spec.host in base else []
    return [(h, h) for h in hosts if h in base]


def counterpart_run(baseline: SessionLayout, step: str, host: str,
                    repeat: int = 1) -> RunWindow | None:
    """The baseline's run to show beside run ``repeat`` of ``step`` on a host: the same
    repeat when the baseline has it, else its last run; None when it has none. ``host`` is
    the baseline host (``Matching.baseline_of``); for FLEET, the step's first host's run
    gives the window (every host of a step starts together)."""
    runs = baseline.runs_of(step, None if host == FLEET else host)
    if not runs:
        return None
    same = [r for r in runs if r.repeat == repeat]
    return same[0] if same else runs[-1]


def counterpart_labels(baseline: SessionLayout, step: str, host: str,
                       repeat: int | None = None) -> list[str]:
    """The labels of the baseline's runs of ``step`` on ``host`` (FLEET: on any host) that a
    row is compared with: with ``repeat``, the row is one run of a repeated step shown run
    by run, and its counterpart is the baseline's run of that repeat, else its last
    (``counterpart_run``); without, the row stands for the step's runs (their median, the
    best of them, or the one run of a step run once) and is compared with every run of the
    baseline's step, which the caller combines by the row's own rule."""
    if repeat is not None:
        run = counterpart_run(baseline, step, host, repeat)
        return [] if run is None else [run.label]
    runs = baseline.runs_of(step, None if host == FLEET else host)
    return list(dict.fromkeys(r.label for r in runs))
