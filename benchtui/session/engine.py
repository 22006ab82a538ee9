"""The session engine: the one place that connects line sources to parsers and sinks.

``Session.run`` connects to every host at once, gathers facts, runs the preflight checks,
starts the monitors, runs the steps one after another (``steps.StepRunner``: each on all its
hosts at once; iperf servers before their clients), follows every process's output into its
parser (``runs.Runner``; the ingestion path: ``intake.Intake`` -> ``ingest.RunIngest`` ->
``sinks.Sinks``, its lag watched by ``lag.LagWatch``), labels the samples with the plan's
host and step names and hands them to the sinks. A host that cannot be used any more fails
(``host_states``: a lost link is given up after the reconnect window) and the steps go on
without it. However the session ends (done, a failed step, Ctrl-C, SIGTERM), every process
it started on every host is stopped before ``run`` returns, each stop bounded; an
interrupted session is given ``INTERRUPT_END`` seconds for that, and a second interrupt
ends it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from benchtui import gc_policy
from benchtui.model import events as ev
from benchtui.model.fio_buckets import check_bits
from benchtui.plan.commands import MONITOR
from benchtui.plan.model import Plan
from benchtui.plan.preflight import ERROR as FINDING_ERROR
from benchtui.plan.preflight import Finding, preflight
from benchtui.session import silence
from benchtui.session.facts import HostFacts, gather_facts
from benchtui.session.host_states import UP, HostStates, without_host
from benchtui.session.hosts import (
    SshOptions,
    close_all,
    connect_all,
    make_transport,
    reconnect_window,
)
from benchtui.session.ingest import Ingested
from benchtui.session.intake import Intake
from benchtui.session.lag import LagWatch
from benchtui.session.leftovers import check_leftovers
from benchtui.session.parse_pool import ParsePool, workers_for
from benchtui.session.runs import Run, Runner
from benchtui.session.sinks import EventSink, OutputSink, SampleSink, Sinks
from benchtui.session.steps import StepRunner
from benchtui.transport import LinkState, Transport, new_session_id
from benchtui.transport.heartbeats import Heartbeats

#: Seconds an interrupted session (Ctrl-C, SIGTERM, SIGHUP, a quit) gives the hosts to stop
#: its processes and its followers to read their end, whatever state the hosts are in;
#: what is not done by then is said and left to the hosts' watchdogs.
INTERRUPT_END = 3.0
#: Seconds closing every link may take at the very end.
CLOSE_TIMEOUT = 1.0
#: The default reason of an interrupt that said none.
_INTERRUPTED = "the session was interrupted"


@dataclass(frozen=True)
class SessionOptions:
    keep_going: bool = False
    ssh: SshOptions = field(default_factory=SshOptions)
    session_id: str | None = None
    #: The resolution of the latency histograms (1..6); None: the plan's ``histogram_bits``.
    histogram_bits: int | None = None
    #: Seconds the hosts let the processes go on once this controller is gone (``math.inf``:
    #: off); None: the plan's ``controller_grace``.
    controller_grace: float | None = None
    #: Seconds a host may stay unreachable before it is given up; None: the plan's
    #: ``reconnect_window``, else the default (``hosts.reconnect_window``).
    reconnect_window: float | None = None
    #: Stop what an earlier run of the same plan left running, instead of refusing to start.
    stop_leftovers: bool = False
    #: Parser worker processes (0: parse in process); None: ``parse_pool.workers_for``.
    parse_workers: int | None = None


@dataclass
class SessionResult:
    ok: bool
    failures: list[str] = field(default_factory=list)
    facts: dict[str, HostFacts] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    #: How the session ended (``events.OUTCOMES``) and why ("" when it completed).
    outcome: str = ev.COMPLETED
    reason: str = ""


class Session:
    """Runs one plan. Sinks are called in the event loop, synchronously, as data arrives."""

    def __init__(self, plan: Plan, *, options: SessionOptions | None = None,
                 on_samples: SampleSink | None = None, on_event: EventSink | None = None,
                 transports: Mapping[str, Transport] | None = None) -> None:
        self.plan = plan
        self.options = options or SessionOptions()
        self.session_id = self.options.session_id or new_session_id()
        #: Latency histograms reach the sinks at this resolution (``fio_buckets``; 6: exact).
        self.histogram_bits = check_bits(self.options.histogram_bits
                                         or plan.settings.histogram_bits)
        #: Seconds each host lets this session's processes go on once the controller is gone.
        self.controller_grace = plan.settings.controller_grace \
            if self.options.controller_grace is None else self.options.controller_grace
        #: Seconds a lost host is tried again before it is given up.
        self.reconnect_window = reconnect_window(
            self.options.reconnect_window if self.options.reconnect_window is not None
            else plan.settings.reconnect_window, self.controller_grace)
        #: Where the samples, events and raw output go.
        self.sinks = Sinks(self.histogram_bits)
        if on_samples is not None:
            self.sinks.samples.append(on_samples)
        if on_event is not None:
            self.sinks.events.append(on_event)
        #: The process the SSH hosts' heartbeats come from (started as the first connects).
        self.heartbeats = Heartbeats(on_trouble=self.warn)
        self.transports: dict[str, Transport] = dict(transports) if transports else {
            name: make_transport(spec, self.session_id, self.options.ssh,
                                 self._on_link,
                                 controller_grace=self.controller_grace,
                                 reconnect_window=self.reconnect_window, label=plan.name,
                                 heartbeats=self.heartbeats)
            for name, spec in plan.hosts.items() if name in plan.hosts_in_use()}
        self.facts: dict[str, HostFacts] = {}
        self.hosts = HostStates(self.transports, self.emit, lambda: self.current_step)
        #: Every run's output, taken in turn in bounded slices of the event loop.
        self.intake = Intake()
        workers = workers_for(self.options.parse_workers, len(self.transports))
        #: The processes that parse the runs' output (None: this one does).
        self.parse_pool = ParsePool(workers, self.warn, self.histogram_bits) \
            if workers else None
        #: How far behind the controller is (said when it falls behind).
        self.lag = LagWatch(self._behind, self.emit)
        self.runner = Runner(self.transports, self.hosts, self.emit, self._deliver,
                             controller_grace=self.controller_grace,
                             interrupt=lambda: self._interrupt_reason,
                             lines_wanted=lambda: bool(self.sinks.output),
                             intake=self.intake, parse_pool=self.parse_pool,
                             histogram_bits=self.histogram_bits)
        #: The monitors and the steps, run in turn; the step running now.
        self.steps = StepRunner(plan, self.hosts, self.runner, self.emit, self.facts)
        #: Why the session is being interrupted (set before its task is cancelled).
        self._interrupt_reason: str | None = None
        #: The session stopped itself (``abort``): its cancellation is its own.
        self._aborted = False
        self._task: asyncio.Task[object] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def current_step(self) -> str | None:
        """The step running now (its label: ``name``, ``name#2`` for a repeat), or None."""
        return self.steps.current

    def _behind(self, now: float) -> float:
        """How long the oldest output not yet parsed has waited (the intake, the workers)."""
        pool = self.parse_pool
        return max(self.intake.oldest(now), pool.oldest(now) if pool else 0.0)

    def _on_link(self, host: str, state: LinkState) -> None:
        self.hosts.on_link(host, state)

    @property
    def unstopped_hosts(self) -> list[str]:
        """The hosts where a process could not be stopped (each said as it happened): their
        watchdogs stop them."""
        return sorted(self.runner.unstopped)

    @property
    def host_state(self) -> dict[str, str]:
        """Each host's state: connecting, up, running, reconnecting, done or failed."""
        return self.hosts.state

    # --- sinks -----------------------------------------------------------------------------

    def add_sample_sink(self, sink: SampleSink) -> None:
        self.sinks.samples.append(sink)

    def add_event_sink(self, sink: EventSink) -> None:
        self.sinks.events.append(sink)

    def add_output_sink(self, sink: OutputSink) -> None:
        """Raw tool output, line by line as it arrives (the console's log, recordings)."""
        self.sinks.output.append(sink)

    def emit(self, kind: str, message: str, *, level: str = ev.INFO, host: str | None = None,
             step: str | None = None, **data: object) -> None:
        self.sinks.emit(kind, message, level=level, host=host, step=step, **data)

    def note_interrupt(self, reason: str) -> None:
        """Say why the session is about to be cancelled ("SIGTERM", "Ctrl-C"): the step and
        the session end with it in the record. The first reason given stays."""
        if self._interrupt_reason is None:
            self._interrupt_reason = reason

    def abort(self, reason: str) -> None:
        """Stop the session from within, at once, as an interrupt: ``reason`` says why (its
        only output failed). Every process is stopped; ``run`` then returns a failed
        result instead of raising. Safe to call from a sink, and more than once."""
        self.note_interrupt(reason)
        task = self._task
        if task is not None and not task.done() and not self._aborted:
            self._aborted = True
            task.cancel()

    def call_soon_threadsafe(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` in the session's event loop, from any thread (a recorder's
        writing thread that met a full disk); dropped when the session is not running."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # (closed meanwhile)
                loop.call_soon_threadsafe(callback)

    def warn(self, message: str) -> None:
        """A warning of the controller's own (a recording that can no longer be written):
        an event like any other, so that the console, the progress lines and the record
        say it."""
        self.emit(ev.SESSION_WARNING, message, level=ev.WARNING, step=self.current_step)

    def mark(self, note: str = "") -> None:
        """A user's mark at this moment (the console's ``m``): an event like any other, so it
        reaches the log, the recording (replay's timeline shows it) and the exporter."""
        note = " ".join(note.split())
        self.emit(ev.MARK, f"mark: {note}" if note else "mark", step=self.current_step,
                  note=note)

    # --- the phases ------------------------------------------------------------------------

    async def prepare(self) -> list[Finding]:
        """Connect every host, gather facts, run the preflight checks. Hosts that cannot be
        reached are marked failed. Returns the findings (errors and warnings)."""
        failed = await connect_all(self.transports)
        for host, error in failed.items():
            self.hosts.fail(host, without_host(error))
        up = [h for h in self.transports if h not in failed]
        for host in up:
            self.hosts.set(host, UP)
        for host, found in (await gather_facts(self.plan, self.transports, up)).items():
            if isinstance(found, str):
                self.hosts.fail(host, f"cannot read host facts: {found}")
                continue
            self.facts[host] = found
            self.emit(ev.FACTS, f"{host}: {found['os']}, kernel {found['kernel']}, "
                      f"{found['cpu_count']} CPUs", host=host, facts=dict(found))
        findings = await check_leftovers(self.plan.name, self.transports, list(self.facts),
                                         stop=self.options.stop_leftovers, emit=self.emit)
        findings += preflight(self.plan, self.facts)
        findings.sort(key=lambda f: f.severity != FINDING_ERROR)  # errors first (stable)
        for f in findings:
            level = ev.ERROR if f.severity == FINDING_ERROR else ev.WARNING
            text = f.message + (f" ({f.hint})" if f.hint else "")
            self.emit(ev.PREFLIGHT, text, level=level, host=f.host, step=f.step)
        return findings

    async def check(self) -> SessionResult:
        """``benchtui check``: connect, gather facts, preflight; run nothing."""
        try:
            findings = await self.prepare()
        finally:
            await close_all(self.transports)
            await self.heartbeats.close()  # (started as the first SSH host connected)
        errors = [f for f in findings if f.severity == FINDING_ERROR]
        failures = self.hosts.failures
        return SessionResult(not failures and not errors,
                             failures + [f.message for f in errors], self.facts, findings)

    async def run(self) -> SessionResult:
        """Run the whole plan. Cancelling the task (Ctrl-C) stops everything, then re-raises;
        ``abort`` stops everything too, and returns a failed result. Cancelling it again
        while it stops (a second Ctrl-C) ends it at once. The garbage collector runs under
        the controller's policy meanwhile (``gc_policy``; what was before is put back)."""
        with gc_policy.controller():
            return await self._run()

    async def _run(self) -> SessionResult:
        findings: list[Finding] = []
        failures = self.hosts.failures
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        watchers: list[asyncio.Task[None]] = []
        try:
            findings = await self.prepare()
            errors = [f for f in findings if f.severity == FINDING_ERROR]
            if (errors or failures) and not self.options.keep_going:
                reason = "preflight found problems" if errors else "some hosts cannot be used"
                self.emit(ev.SESSION_END, f"nothing was started: {reason} "
                          "(fix them, or run with --keep-going)", level=ev.ERROR)
                return SessionResult(False, failures + [f.message for f in errors],
                                     self.facts, findings)
            for host in {f.host for f in errors if f.host}:
                self.hosts.fail(host, "preflight refused it")
            gc_policy.freeze()  # (the start-up heap: imports, links, plan, facts)
            self.emit(ev.SESSION_START, f"session {self.plan.name} ({self.session_id})",
                      reconnect_window=self.reconnect_window)
            steps = self.steps
            watchers = [asyncio.create_task(silence.watch(steps.audible, steps.warn_silent),
                                            name="benchtui-silence"),
                        asyncio.create_task(self.lag.watch(), name="benchtui-lag")]
            monitors = await steps.start_monitors()
            for step in self.plan.steps:
                for repeat in range(step.repeat):
                    await steps.run_step(step, repeat)
            await self.runner.stop(monitors)
            return self._ended(findings)
        except asyncio.CancelledError:
            self._emit_interrupted()
            if not self._aborted:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            reason = self._interrupt_reason or _INTERRUPTED
            return SessionResult(False, [*failures, reason], self.facts, findings,
                                 ev.INTERRUPTED, reason)
        finally:
            for watcher in watchers:
                watcher.cancel()
            try:
                await self._stop_everything()
            finally:
                await self.intake.close()
                if self.parse_pool is not None:
                    await self.parse_pool.close()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(close_all(self.transports), CLOSE_TIMEOUT)
                await self.heartbeats.close()

    def _ended(self, findings: list[Finding]) -> SessionResult:
        """Every step ran: the session's end, as good as its worst step or host."""
        failures = self.hosts.failures
        ok = not failures
        outcome = ev.worst(self.steps.outcomes)
        if not ok and outcome == ev.COMPLETED:
            outcome = ev.FAILED
        reason = "" if ok else f"{len(failures)} failure(s): {failures[0]}"
        self.lag.end(time.monotonic())  # (every run's output was taken in)
        self.emit(ev.SESSION_END, "done" if ok else f"done with {len(failures)} failure(s)",
                  level=ev.INFO if ok else ev.ERROR, outcome=outcome, reason=reason)
        return SessionResult(ok, list(failures), self.facts, findings, outcome, reason)

    def _emit_interrupted(self) -> None:
        """Ctrl-C, SIGTERM, a quit or a broken output: the running step and the session end
        here, so that a recording or a log says how it ended rather than stopping mid-step."""
        reason = self._interrupt_reason or _INTERRUPTED
        self.note_interrupt(reason)  # (a quit from the console gives none)
        self.steps.interrupted(reason)
        self.emit(ev.SESSION_END, f"stopped: interrupted ({reason})", level=ev.WARNING,
                  interrupted=True, outcome=ev.INTERRUPTED, reason=reason)

    async def _stop_everything(self) -> None:
        """Stop every process still running on every host: within ``INTERRUPT_END`` s
        when the session was interrupted, each stop bounded otherwise."""
        if self.runner.active:
            until = None if self._interrupt_reason is None else \
                time.monotonic() + INTERRUPT_END
            await self.runner.stop(list(self.runner.active), expected=False, until=until)

    # --- output to the sinks -----------------------------------------------------------------

    def _deliver(self, run: Run, got: Ingested, t: float) -> None:
        """What a chunk of ``run``'s output completed, to the sinks, under its step (a
        monitor's: the step running now)."""
        cmd = run.command
        step = run.step if cmd.role != MONITOR else (self.current_step or "-")
        self.sinks.deliver(got, t, host=cmd.host, tool=cmd.tool, role=cmd.role, step=step)
