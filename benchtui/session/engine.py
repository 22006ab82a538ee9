"""The session engine: the one place that connects line sources to parsers and sinks.

``Session.run`` connects to every host at once, gathers facts, runs the preflight checks,
starts the monitors, runs the steps one after another (each on all its hosts at once; iperf
servers before their clients), follows every process's output through a ``LineSplitter`` into
its parser, labels the samples with the plan's host and step names and hands them to the
sinks. However it ends (done, a failed step, Ctrl-C, SIGTERM), every process it started on
every host is stopped before ``run`` returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.errors import HostError
from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.fio_buckets import check_bits
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers.base import Parser
from benchtui.plan.commands import (
    MONITOR,
    SERVER,
    RemoteCommand,
    Upload,
    expected_step_seconds,
    monitor_commands,
    step_commands,
)
from benchtui.plan.grace import grace_text
from benchtui.plan.model import Plan, StepSpec
from benchtui.plan.preflight import ERROR as FINDING_ERROR
from benchtui.plan.preflight import Finding, fallback_hosts, paths_to_inspect, preflight
from benchtui.plan.tools import TOOLS, executables_needed
from benchtui.session import silence
from benchtui.session.endings import Ending, process_ending, step_ending
from benchtui.session.facts import HostFacts, facts_script, parse_facts
from benchtui.session.hosts import SshOptions, close_all, connect_all, make_transport
from benchtui.session.leftovers import (
    find_leftovers,
    leftover_findings,
    same_plan,
    stop_leftovers,
    stopped_message,
)
from benchtui.session.silence import Quiet
from benchtui.transport import (
    LineSplitter,
    LinkState,
    RemoteRun,
    RunHandle,
    Transport,
    WatchdogStop,
    new_session_id,
)

SampleSink = Callable[[list[Sample]], None]
EventSink = Callable[[Event], None]
OutputSink = Callable[[OutputLines], None]

#: How long an iperf server gets to start listening before its clients start (seconds).
SERVER_READY_TIMEOUT = 5.0
#: Seconds between a process's TERM and KILL when benchtui stops it.
STOP_GRACE = 2.0
#: The default reason of an interrupt that said none.
_INTERRUPTED = "the session was interrupted"
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")


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
    #: Stop what an earlier run of the same plan left running, instead of refusing to start.
    stop_leftovers: bool = False


@dataclass
class _Run:
    """One process of a step or monitor on one host, while benchtui follows it."""

    command: RemoteCommand
    step: str
    handle: RunHandle | None = None
    task: asyncio.Task[int] | None = None
    samples: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    #: benchtui stopped it on purpose (end of a step's duration, a server after its clients).
    stopped: bool = False
    #: The host's watchdog stopped it (this controller was gone for longer than the grace).
    watchdog: WatchdogStop | None = None
    #: When it started (``time.monotonic``).
    started: float = 0.0
    #: How long its tool printed nothing (its limit: ``StepSpec.silence_limit``).
    quiet: Quiet = field(default_factory=Quiet)
    #: How it ended (``events.OUTCOMES``), why, and its exit status; None while it runs.
    outcome: str | None = None
    reason: str = ""
    status: int | None = None


@dataclass
class SessionResult:
    ok: bool
    failures: list[str] = field(default_factory=list)
    facts: dict[str, HostFacts] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    #: How the session ended (``events.OUTCOMES``) and why ("" when it completed).
    outcome: str = ev.COMPLETED
    reason: str = ""


def _without_host(error: HostError) -> str:
    """The error's sentence without its leading host name (the caller names the host)."""
    return str(error).removeprefix(f"{error.host}: ")


async def _put(transport: Transport, upload: Upload) -> None:
    """Copy an upload to its host: its text when it has one (a jobfile as the plan loader
    checked it, a sweep's values set in it), else the local file."""
    if upload.text is None:
        await transport.put_file(str(upload.local), upload.remote)
        return
    with tempfile.TemporaryDirectory(prefix="benchtui-") as directory:
        path = Path(directory) / upload.local.name
        path.write_bytes(upload.text.encode("utf-8"))
        await transport.put_file(str(path), upload.remote)


def _run_id(*parts: str) -> str:
    return _UNSAFE_ID.sub("_", "-".join(parts))[:100].strip("._-") or "run"


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
        self._sample_sinks: list[SampleSink] = [on_samples] if on_samples else []
        self._event_sinks: list[EventSink] = [on_event] if on_event else []
        self._output_sinks: list[OutputSink] = []
        self.transports: dict[str, Transport] = dict(transports) if transports else {
            name: make_transport(spec, self.session_id, self.options.ssh, self._on_link_state,
                                 controller_grace=self.controller_grace, label=plan.name)
            for name, spec in plan.hosts.items() if name in plan.hosts_in_use()}
        self.facts: dict[str, HostFacts] = {}
        self.host_state: dict[str, str] = dict.fromkeys(self.transports, "connecting")
        self.current_step: str | None = None
        self._active: list[_Run] = []
        self._failures: list[str] = []
        self._watchdog_hosts: set[str] = set()
        #: Why the session is being interrupted (set before its task is cancelled).
        self._interrupt_reason: str | None = None
        #: The session stopped itself (``abort``): its cancellation is its own.
        self._aborted = False
        self._task: asyncio.Task[object] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: How each step ended, in order (the session's outcome is the worst).
        self._step_outcomes: list[str] = []
        #: The running step's start (``time.monotonic``) and processes.
        self._step_started = 0.0
        self._step_runs: list[_Run] = []

    # --- sinks -----------------------------------------------------------------------------

    def add_sample_sink(self, sink: SampleSink) -> None:
        self._sample_sinks.append(sink)

    def add_event_sink(self, sink: EventSink) -> None:
        self._event_sinks.append(sink)

    def add_output_sink(self, sink: OutputSink) -> None:
        """Raw tool output, line by line as it arrives (the console's log, recordings)."""
        self._output_sinks.append(sink)

    def emit(self, kind: str, message: str, *, level: str = ev.INFO, host: str | None = None,
             step: str | None = None, **data: object) -> None:
        event = Event(time.time(), kind, message, level, host, step, dict(data))
        for sink in self._event_sinks:
            sink(event)

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

    def _set_host_state(self, host: str, state: str, reason: str = "") -> None:
        if self.host_state.get(host) == state:
            return
        self.host_state[host] = state
        level = ev.ERROR if state == "failed" else \
            ev.WARNING if state == "reconnecting" else ev.INFO
        self.emit(ev.HOST_STATE, f"{host}: {state}" + (f" ({reason})" if reason else ""),
                  level=level, host=host, state=state)

    def _on_link_state(self, host: str, state: LinkState) -> None:
        if self.host_state.get(host) in ("failed", "done"):
            return
        if state is LinkState.RECONNECTING:
            self._set_host_state(host, "reconnecting")
        elif state is LinkState.UP and self.host_state.get(host) == "reconnecting":
            self._set_host_state(host, "running" if self.current_step else "up")

    # --- the phases ------------------------------------------------------------------------

    async def prepare(self) -> list[Finding]:
        """Connect every host, gather facts, run the preflight checks. Hosts that cannot be
        reached are marked failed. Returns the findings (errors and warnings)."""
        failed = await connect_all(self.transports)
        for host, error in failed.items():
            self._fail_host(host, _without_host(error))
        up = [h for h in self.transports if h not in failed]
        for host in up:
            self._set_host_state(host, "up")
        needed = executables_needed(self.plan)
        paths = paths_to_inspect(self.plan)
        results = await asyncio.gather(
            *(self._gather_facts(h, needed.get(h, {}), paths.get(h, [])) for h in up),
            return_exceptions=True)
        for host, result in zip(up, results, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                self._fail_host(host, f"cannot read host facts: {result}")
            else:
                self.facts[host] = result
                self.emit(ev.FACTS, f"{host}: {result['os']}, kernel {result['kernel']}, "
                          f"{result['cpu_count']} CPUs", host=host, facts=dict(result))
        findings = await self._leftovers(list(self.facts)) + preflight(self.plan, self.facts)
        findings.sort(key=lambda f: f.severity != FINDING_ERROR)  # errors first (stable)
        for f in findings:
            level = ev.ERROR if f.severity == FINDING_ERROR else ev.WARNING
            text = f.message + (f" ({f.hint})" if f.hint else "")
            self.emit(ev.PREFLIGHT, text, level=level, host=f.host, step=f.step)
        return findings

    async def _leftovers(self, hosts: list[str]) -> list[Finding]:
        """What earlier sessions left running on ``hosts``: findings, or (for the same
        plan, with ``stop_leftovers``) stopped here, with an event saying so."""
        found, findings = await find_leftovers(self.transports, hosts)
        if self.options.stop_leftovers:
            for host, leftovers in list(found.items()):
                ours = same_plan(leftovers, self.plan.name)
                if not ours:
                    continue
                problems = await stop_leftovers(self.transports[host], ours, STOP_GRACE)
                for problem in problems:
                    findings.append(Finding(host, None, FINDING_ERROR, problem))
                if not problems:
                    self.emit(ev.PREFLIGHT, f"{host}: {stopped_message(ours)}", host=host)
                found[host] = [each for each in leftovers if each not in ours]
        return findings + leftover_findings(found, self.plan.name)

    async def _gather_facts(self, host: str, programs: Mapping[str, str],
                            paths: list[str]) -> HostFacts:
        """``programs``: program -> the tool it is for (its catalogue says how to ask the
        program its version)."""
        versions = {}
        for program, tool in programs.items():
            spec = TOOLS.get(tool)
            versions[program] = spec.version if spec and spec.executable == program else None
        transport = self.transports[host]
        result = await transport.run(facts_script(versions, paths), timeout=30.0)
        facts = parse_facts(result.stdout)
        host_key = getattr(transport, "host_key", None)  # SSH only: preflight's same-machine check
        if isinstance(host_key, str):
            facts["host_key"] = host_key
        return facts

    def _fail_host(self, host: str, reason: str) -> None:
        self._failures.append(f"{host}: {reason}")
        self._set_host_state(host, "failed", reason)

    async def check(self) -> SessionResult:
        """``benchtui check``: connect, gather facts, preflight; run nothing."""
        try:
            findings = await self.prepare()
        finally:
            await close_all(self.transports)
        errors = [f for f in findings if f.severity == FINDING_ERROR]
        return SessionResult(not self._failures and not errors,
                             self._failures + [f.message for f in errors], self.facts, findings)

    async def run(self) -> SessionResult:
        """Run the whole plan. Cancelling the task (Ctrl-C) stops everything, then re-raises;
        ``abort`` stops everything too, and returns a failed result."""
        findings: list[Finding] = []
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        watcher: asyncio.Task[None] | None = None
        try:
            findings = await self.prepare()
            errors = [f for f in findings if f.severity == FINDING_ERROR]
            if (errors or self._failures) and not self.options.keep_going:
                reason = "preflight found problems" if errors else "some hosts cannot be used"
                self.emit(ev.SESSION_END, f"nothing was started: {reason} "
                          "(fix them, or run with --keep-going)", level=ev.ERROR)
                return SessionResult(False, self._failures + [f.message for f in errors],
                                     self.facts, findings)
            blocked = {f.host for f in errors if f.host}
            for host in blocked:
                self._fail_host(host, "preflight refused it")
            self.emit(ev.SESSION_START, f"session {self.plan.name} ({self.session_id})")
            watcher = asyncio.create_task(silence.watch(self._audible, self._warn_silent),
                                          name="benchtui-silence")
            monitors = await self._start_monitors()
            for step in self.plan.steps:
                for repeat in range(step.repeat):
                    await self._run_step(step, repeat)
            await self._stop_runs(monitors)
            ok = not self._failures
            outcome = ev.worst(self._step_outcomes)
            if not ok and outcome == ev.COMPLETED:
                outcome = ev.FAILED
            reason = "" if ok else f"{len(self._failures)} failure(s): {self._failures[0]}"
            self.emit(ev.SESSION_END, "done" if ok else f"done with {len(self._failures)} "
                      "failure(s)", level=ev.INFO if ok else ev.ERROR, outcome=outcome,
                      reason=reason)
            return SessionResult(ok, self._failures, self.facts, findings, outcome, reason)
        except asyncio.CancelledError:
            self._emit_interrupted()
            if not self._aborted:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            reason = self._interrupt_reason or _INTERRUPTED
            return SessionResult(False, [*self._failures, reason], self.facts, findings,
                                 ev.INTERRUPTED, reason)
        finally:
            if watcher is not None:
                watcher.cancel()
            await asyncio.shield(self._stop_everything())

    def _emit_interrupted(self) -> None:
        """Ctrl-C, SIGTERM, a quit or a broken output: the running step and the session end
        here, so that a recording or a log says how it ended rather than stopping mid-step."""
        reason = self._interrupt_reason or _INTERRUPTED
        step = self.current_step
        if step is not None:
            self.emit(ev.STEP_END, f"step {step} stopped: interrupted ({reason})",
                      level=ev.WARNING, step=step, interrupted=True, outcome=ev.INTERRUPTED,
                      reason=reason, seconds=time.monotonic() - self._step_started,
                      silences=self._silences(self._step_runs))
            self.current_step = None
        self.emit(ev.SESSION_END, f"stopped: interrupted ({reason})", level=ev.WARNING,
                  interrupted=True, outcome=ev.INTERRUPTED, reason=reason)

    # --- tools that fall silent ------------------------------------------------------------

    def _audible(self) -> list[Quiet]:
        """The silence of each run that could be heard now (not while its host's link is
        down: nothing can arrive then)."""
        return [r.quiet for r in self._active if r.task is not None and not r.task.done()
                and self.host_state.get(r.command.host) not in ("reconnecting", "failed")]

    def _warn_silent(self, quiet: Quiet, seconds: float) -> None:
        """A run's tool fell silent (``silence.watch``): a warning, once per run."""
        run = next((r for r in self._active if r.quiet is quiet), None)
        if run is None:  # (it ended meanwhile)
            return
        cmd = run.command
        what = "a monitor" if cmd.role == MONITOR else f"step {run.step}"
        self.emit(ev.SILENCE, f"{cmd.host}: {cmd.tool} ({what}) has printed nothing for "
                  f"{seconds:.0f} s (silence {quiet.limit:g} s): it may be stuck, or at work "
                  "without a word (fio laying out a file); it goes on until it ends or is "
                  "stopped", level=ev.WARNING, host=cmd.host,
                  step=run.step if cmd.role != MONITOR else self.current_step, tool=cmd.tool,
                  seconds=seconds, silence=quiet.limit, role=cmd.role)

    @staticmethod
    def _silences(runs: list[_Run]) -> list[dict[str, object]]:
        """The runs whose tool fell silent past its ``silence``: host, tool, longest seconds."""
        now = time.monotonic()
        out: list[dict[str, object]] = []
        for r in runs:
            longest = r.quiet.longest_so_far(now, running=r.outcome is None)
            if longest > 0:
                out.append({"host": r.command.host, "tool": r.command.tool,
                            "seconds": round(longest, 1)})
        return out

    # --- running processes -----------------------------------------------------------------

    def _usable(self, host: str) -> bool:
        return host in self.transports and self.host_state.get(host) != "failed"

    async def _start_monitors(self) -> list[_Run]:
        runs: list[_Run] = []
        for monitor in self.plan.monitors:
            fallback = fallback_hosts(self.plan, monitor, self.facts)
            for cmd in monitor_commands(self.plan, monitor, fallback_hosts=fallback):
                if self._usable(cmd.host):
                    if cmd.tool != monitor.tool:
                        self.emit(ev.RUN_START, f"{cmd.host}: {monitor.tool} is missing, "
                                  f"using {cmd.tool} instead", level=ev.WARNING, host=cmd.host)
                    runs.append(_Run(cmd, monitor.name, quiet=Quiet(monitor.silence_limit)))
        await asyncio.gather(*(self._start(r) for r in runs))
        return [r for r in runs if r.task is not None]

    async def _run_step(self, step: StepSpec, repeat: int) -> None:
        label = step.name if step.repeat == 1 else f"{step.name}#{repeat + 1}"
        self.current_step = label
        hosts = [h for h in step.hosts if self._usable(h)]
        self.emit(ev.STEP_START, f"step {label} on {', '.join(hosts) or 'no host'}",
                  step=label, hosts=hosts, tool=step.tool,
                  expected_seconds=expected_step_seconds(step), index=step.index,
                  repeat=repeat + 1, repeats=step.repeat, select=step.select,
                  sweep=step.sweep, matrix=dict(step.matrix))
        started = self._step_started = time.monotonic()
        self._step_runs = []
        try:
            commands = self._step_commands(step, repeat + 1)
        except ValueError as exc:
            self._failures.append(f"step {label}: {exc}")
            self._step_outcomes.append(ev.FAILED)
            self.emit(ev.STEP_END, f"step {label} failed: {exc}", level=ev.ERROR, step=label,
                      outcome=ev.FAILED, reason=str(exc))
            self.current_step = None
            return
        runs = [_Run(c, label, quiet=Quiet(step.silence_limit)) for c in commands
                if self._usable(c.host)]
        self._step_runs = runs
        for host in {r.command.host for r in runs}:
            self._set_host_state(host, "running")
        await self._upload(runs)
        servers = [r for r in runs if r.command.role == SERVER]
        others = [r for r in runs if r.command.role != SERVER]
        if servers:
            await asyncio.gather(*(self._start(r) for r in servers))
            await self._wait_ready(servers)
        await asyncio.gather(*(self._start(r) for r in others))
        tasks = [r.task for r in others if r.task is not None]
        if step.duration is not None and tasks:
            # A tool that runs until stopped (iostat as a step): stop it, as a success.
            await asyncio.wait(tasks, timeout=step.duration)
            await self._stop_runs([r for r in others if r.task is not None and not r.task.done()],
                                  expected=True)
        await asyncio.gather(*tasks, return_exceptions=True)
        if servers:
            await self._stop_runs(servers)
        failed_before = len(self._failures)
        for r in runs:
            if r.outcome in (ev.FAILED, ev.DEADLINE) and r.command.role != SERVER:
                self._failures.append(f"{r.command.host}: step {label} {r.reason}")
        for host in {r.command.host for r in runs}:
            if self.host_state.get(host) == "running":
                self._set_host_state(host, "done")
        seconds = time.monotonic() - started
        ok = len(self._failures) == failed_before
        outcome, reason, status = step_ending(
            [Ending(r.command.host, r.command.tool, r.outcome, r.reason, r.status) for r in runs
             if r.command.role != SERVER and r.outcome is not None],
            self._failures[failed_before:])
        self._step_outcomes.append(outcome)
        said = {ev.COMPLETED: "done", ev.FAILED: "failed", ev.WATCHDOG: "stopped by the "
                "host's watchdog", ev.DEADLINE: "cut by its deadline"}.get(outcome, outcome)
        self.emit(ev.STEP_END, f"step {label} {said} in {seconds:.1f} s"
                  + (f" ({reason})" if reason else ""),
                  level=ev.INFO if ok and outcome == ev.COMPLETED else ev.ERROR, step=label,
                  seconds=seconds, outcome=outcome, reason=reason, exit_status=status,
                  silences=self._silences(runs))
        self.current_step = None

    def _step_commands(self, step: StepSpec, run: int = 1) -> list[RemoteCommand]:
        address = step.server_address
        if step.server is not None and not address:
            spec = self.plan.hosts[step.server]
            address = "127.0.0.1" if spec.local else (spec.address or spec.ssh_alias)
        return step_commands(self.plan, step, server_address=address, run=run)

    async def _upload(self, runs: list[_Run]) -> None:
        for r in runs:
            for up in r.command.uploads:
                await _put(self.transports[r.command.host], up)

    async def _wait_ready(self, servers: list[_Run]) -> None:
        """Until every server printed its first line (it is listening), or a timeout."""
        waits = [asyncio.wait_for(r.ready.wait(), SERVER_READY_TIMEOUT) for r in servers]
        await asyncio.gather(*waits, return_exceptions=True)

    async def _start(self, run: _Run) -> None:
        cmd = run.command
        transport = self.transports[cmd.host]
        run_id = _run_id(run.step, cmd.role, cmd.name, cmd.host, str(len(self._active)))
        try:
            handle = await transport.start(RemoteRun(run_id, cmd.exec_argv, cmd.deadline))
        except HostError as exc:
            self._fail_host(cmd.host, f"cannot start {cmd.tool}: {_without_host(exc)}")
            return
        run.handle = handle
        run.started = run.quiet.last = time.monotonic()
        self._active.append(run)
        parser = registry.all_parsers()[cmd.parser](host=cmd.host, source=f"{cmd.host}:{cmd.tool}")
        parser.stream = True  # live output (fio runs with --status-interval=1)
        run.task = asyncio.create_task(self._follow(transport, run, parser))
        if cmd.role != MONITOR:
            self.emit(ev.RUN_START, f"{cmd.host}: {cmd.tool} started", host=cmd.host,
                      step=run.step, command=cmd.shell_line())

    async def _follow(self, transport: Transport, run: _Run, parser: Parser) -> int:
        """Output -> lines -> samples -> sinks, until the process ends; its exit status."""
        assert run.handle is not None
        cmd = run.command
        splitter = LineSplitter()
        warned = 0
        try:
            async for chunk in transport.follow(run.handle):
                run.quiet.heard()
                if self._output_sinks:
                    lines = splitter.feed(chunk)
                    text = "\n".join(lines) if lines else None
                else:  # nobody wants the lines: the parser takes them as one text
                    lines, text = [], splitter.feed_text(chunk)
                if text is not None:
                    run.ready.set()
                    now = time.time()
                    if lines:
                        self._output(run, lines, now)
                    self._deliver(run, parser.feed_text(text, now))
                    warned = self._report_parse_warnings(parser, run, warned)
        except HostError as exc:
            run.outcome, run.reason = ev.FAILED, f"was lost: {_without_host(exc)}"
            self._fail_host(cmd.host, f"lost {cmd.tool}: {_without_host(exc)}")
            return -1
        rest = splitter.finish()
        if rest:
            now = time.time()
            self._output(run, rest, now)
            self._deliver(run, parser.feed_text("\n".join(rest), now))
        self._deliver(run, parser.finish())
        self._report_parse_warnings(parser, run, warned)
        outcome = await transport.outcome(run.handle)
        status = -1 if outcome.status is None else outcome.status
        if outcome.watchdog is not None:
            run.watchdog = outcome.watchdog
            self._watchdog_stopped(run, outcome.watchdog)
        run.quiet.heard()  # (the silence up to its end counts)
        run.status = status
        run.outcome, run.reason = process_ending(
            status, stopped=run.stopped, watchdog=run.watchdog,
            interrupt=self._interrupt_reason, ran=time.monotonic() - run.started,
            deadline=cmd.deadline)
        if cmd.role != MONITOR:
            how = "was stopped" if run.stopped else run.reason
            fine = run.outcome == ev.COMPLETED or cmd.role == SERVER
            self.emit(ev.RUN_END, f"{cmd.host}: {cmd.tool} {how}, {run.samples} samples",
                      level=ev.INFO if fine else ev.ERROR, host=cmd.host, step=run.step,
                      status=status, exit_status=status, outcome=run.outcome,
                      reason=run.reason, seconds=time.monotonic() - run.started,
                      silent_seconds=round(run.quiet.longest, 1))
        return status

    def _watchdog_stopped(self, run: _Run, stop: WatchdogStop) -> None:
        """The host stopped ``run`` itself: this controller was gone (its link down) for
        longer than the grace. The host is failed, once."""
        host = run.command.host
        if host in self._watchdog_hosts:
            return
        self._watchdog_hosts.add(host)
        self._fail_host(host, f"the host's watchdog stopped {run.command.tool} and every "
                        f"other process of this session there: it had not heard from this "
                        f"controller for {stop.gone_for:.0f} s (controller_grace "
                        f"{grace_text(stop.grace)})")

    def _output(self, run: _Run, lines: list[str], t: float) -> None:
        if self._output_sinks:
            cmd = run.command
            step = run.step if cmd.role != MONITOR else (self.current_step or "-")
            out = OutputLines(t, cmd.host, step, cmd.tool, cmd.role, tuple(lines))
            for sink in self._output_sinks:
                sink(out)

    def _deliver(self, run: _Run, samples: list[Sample]) -> None:
        if not samples:
            return
        step = run.step if run.command.role != MONITOR else (self.current_step or "-")
        bits = self.histogram_bits
        for s in samples:
            s.labels = {**s.labels, "step": step}
            if s.histogram is not None:  # once, here: every sink sees the same histograms
                s.histogram = s.histogram.coarsened(bits)
        run.samples += len(samples)
        for sink in self._sample_sinks:
            sink(samples)

    def _report_parse_warnings(self, parser: Parser, run: _Run, already: int) -> int:
        for w in parser.warnings[already:]:
            self.emit(ev.PARSE_WARNING, str(w), level=ev.WARNING, host=run.command.host,
                      step=run.step)
        return len(parser.warnings)

    async def _stop_runs(self, runs: list[_Run], *, expected: bool = True) -> None:
        async def stop(r: _Run) -> None:
            if r.handle is None:
                return
            r.stopped = expected
            try:
                await self.transports[r.command.host].stop(r.handle, grace=STOP_GRACE)
            except HostError as exc:
                after = "" if math.isinf(self.controller_grace) else (
                    " (the host's watchdog stops it once this controller has been gone for "
                    f"{grace_text(self.controller_grace)})")
                self.emit(ev.RUN_END, f"{r.command.host}: could not stop {r.command.tool}: "
                          f"{_without_host(exc)}{after}", level=ev.ERROR, host=r.command.host)
            if r.task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(r.task), 10.0)
                except (TimeoutError, asyncio.CancelledError):
                    r.task.cancel()
                except Exception:  # noqa: BLE001 - already reported by the follower
                    pass
        await asyncio.gather(*(stop(r) for r in runs))
        for r in runs:
            if r in self._active:
                self._active.remove(r)

    async def _stop_everything(self) -> None:
        """Stop every process still running on every host, then close the links."""
        if self._active:
            await self._stop_runs(list(self._active), expected=False)
        await close_all(self.transports)
