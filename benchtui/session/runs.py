"""The processes of a session on their hosts: started, followed to their end, stopped.

A ``Run`` is one process of a step or monitor on one host. ``Runner.start`` copies its
uploads and starts it detached (``Transport.start``) under a run id of its own, then
follows its output (``Transport.follow``) until it ends: the chunks go through the
session's ``intake.Intake`` (every run's output taken in turn, in bounded slices of the
event loop) into the run's ``RunIngest``; the samples and lines go to the session through
``deliver``. How it ended (``endings.process_ending``),
with the tool's own last words when it failed or printed nothing usable, is its
``run_end`` event.

``Runner.stop`` ends runs with the transport's escalating stop (SIGTERM to every process of
the run, SIGKILL after ``STOP_GRACE``, a check), then lets their followers read what is
left. Every wait there is bounded: a stop within ``STOP_TIMEOUT``, a follower's last read
within ``FOLLOW_END_TIMEOUT``, both within the time ``until`` leaves (an interrupted session
ends within seconds); a host given up is not tried (``HostStates.attempt``); what could not
be done is said, with what becomes of the processes left.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.errors import HostError
from benchtui.model import events as ev
from benchtui.parsers import registry
from benchtui.plan.commands import MONITOR, SERVER, RemoteCommand, Upload
from benchtui.plan.grace import grace_text
from benchtui.session.endings import process_ending
from benchtui.session.host_states import HostStates, left_to_watchdog, without_host
from benchtui.session.ingest import Ingested, RunIngest, words_text
from benchtui.session.intake import Intake, Lane
from benchtui.session.parse_pool import ParsePool
from benchtui.session.parse_slot import Slot
from benchtui.session.parse_worker import Answer
from benchtui.session.silence import Quiet
from benchtui.transport import Chunk, RemoteRun, RunHandle, Transport, WatchdogStop
from benchtui.transport.lines import MAX_LINE_BYTES

#: Seconds between a process's TERM and KILL when benchtui stops it (the host's watchdog
#: and a run's sweep give the same: ``watchdog.STOP_TICKS``).
STOP_GRACE = 2.0
#: Seconds a stop may take before it is given up: the grace, the KILL and the check (5 s
#: at most, for a process blocked in the kernel), and the way there and back.
STOP_TIMEOUT = STOP_GRACE + 8.0
#: Seconds a follower gets, once its process was stopped, to read what is left.
FOLLOW_END_TIMEOUT = 5.0
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")

#: The session's side of a run's output: (run, what a chunk completed, when it arrived).
Deliver = Callable[["Run", Ingested, float], None]


@dataclass(eq=False)
class Run:
    """One process of a step or monitor on one host, while benchtui follows it. Compared by
    identity: the runner looks a step's runs up in its active list at the step's end, and
    compared field by field (the command's too) that held the event loop ~1 s at 1,000
    hosts (``benchmarks/settle_cost.py``)."""

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
    #: When it started (``time.monotonic``); 0 until it did.
    started: float = 0.0
    #: How long its tool printed nothing (its limit: ``StepSpec.silence_limit``).
    quiet: Quiet = field(default_factory=Quiet)
    #: Its output on its way to samples (once it started).
    ingest: RunIngest | None = None
    #: Its parser's place in the session's parser workers (None: it is parsed in process).
    slot: Slot | None = None
    #: Its end could not be read: its host was lost, or did not answer in time.
    lost: bool = False
    #: How it ended (``events.OUTCOMES``), why, and its exit status; None while it runs.
    outcome: str | None = None
    reason: str = ""
    status: int | None = None

    @property
    def host(self) -> str:
        return self.command.host

    @property
    def tool(self) -> str:
        return self.command.tool

    @property
    def running(self) -> bool:
        """Started, and its follower not done."""
        return self.task is not None and not self.task.done()


def run_id(number: int, *parts: str) -> str:
    """A run's id on its host: its number in the session first (unique however long the
    rest, which is cut to fit 100 characters), then its step, role, name and host."""
    return _UNSAFE_ID.sub("_", "-".join((str(number), *parts)))[:100].strip("._-")


class Runner:
    """Starts, follows and stops the runs of one session on its hosts."""

    def __init__(self, transports: dict[str, Transport], hosts: HostStates,
                 emit: Callable[..., None], deliver: Deliver, *, controller_grace: float,
                 interrupt: Callable[[], str | None],
                 lines_wanted: Callable[[], bool], intake: Intake | None = None,
                 parse_pool: ParsePool | None = None, histogram_bits: int | None = None
                 ) -> None:
        self.transports = transports
        #: The session's histogram resolution, told to the parsers (None: the tools' own).
        self.histogram_bits = histogram_bits
        #: Where the runs' output waits to be taken in.
        self.intake = intake or Intake()
        #: The parser worker processes (None: the runs are parsed in this process).
        self.pool = parse_pool
        self.hosts = hosts
        self._emit = emit
        self._deliver = deliver
        self.controller_grace = controller_grace
        self._interrupt = interrupt
        self._lines_wanted = lines_wanted
        #: The runs started and not yet stopped, in the order they started.
        self.active: list[Run] = []
        #: Hosts where a stop could not be done (said as it happened).
        self.unstopped: set[str] = set()
        self._numbers = itertools.count(1)

    # --- starting and following --------------------------------------------------------

    async def start(self, run: Run) -> None:
        """Copy ``run``'s uploads, start it, and follow it in a task of its own; a host
        that cannot do either fails."""
        cmd = run.command
        transport = self.transports[cmd.host]
        number = next(self._numbers)  # taken before any wait: no two runs share it
        try:
            for upload in cmd.uploads:
                await _put(transport, upload)
            handle = await transport.start(RemoteRun(
                run_id(number, run.step, cmd.role, cmd.name, cmd.host), cmd.exec_argv,
                cmd.deadline))
        except HostError as exc:
            self.hosts.fail(cmd.host, f"cannot start {cmd.tool}: {without_host(exc)}")
            return
        run.handle = handle
        run.started = run.quiet.last = time.monotonic()
        self.active.append(run)
        parser = registry.all_parsers()[cmd.parser](host=cmd.host, source=f"{cmd.host}:{cmd.tool}")
        parser.stream = True  # live output (fio runs with --status-interval=1)
        parser.histogram_bits = self.histogram_bits  # (made that coarse: not coarsened again)
        run.ingest = RunIngest(parser, lines_wanted=self._lines_wanted(),
                               parsed_here=self.pool is None)
        if self.pool is not None:
            run.slot = self.pool.open(
                cmd.parser, cmd.host, f"{cmd.host}:{cmd.tool}", f"{cmd.host} {cmd.tool}",
                lambda answer, lines, t: self._answered(run, answer, lines, t))
        run.task = asyncio.create_task(self._follow(transport, run, run.ingest))
        if cmd.role != MONITOR:
            self._emit(ev.RUN_START, f"{cmd.host}: {cmd.tool} started", host=cmd.host,
                       step=run.step, command=cmd.shell_line(), tool=cmd.tool, role=cmd.role)

    async def _follow(self, transport: Transport, run: Run, ingest: RunIngest) -> int:
        """Output -> the intake -> ingestion -> the session, until the process ends; its
        exit status."""
        assert run.handle is not None
        lane = Lane(lambda chunk, t: self._ingest(run, ingest, chunk, t))
        pool, slot = self.pool, run.slot
        try:
            async for chunk in transport.follow(run.handle):
                run.quiet.heard()
                if pool is not None and slot is not None:
                    await pool.room(slot)
                await self.intake.put(lane, chunk, time.time())
            await self._drained(lane, run)
            if pool is not None and slot is not None:
                await pool.finish(slot, time.time(), ingest.finish_lines())
            else:
                self._take(run, ingest, ingest.finish(time.time()), time.time())
            outcome = await transport.outcome(run.handle)
        except HostError as exc:
            with contextlib.suppress(HostError):  # (what was read before the loss)
                await self._drained(lane, run)
            self._lost(run, exc)
            return -1
        finally:
            self.intake.drop(lane)
            if pool is not None and slot is not None:
                pool.close_run(slot)
        run.quiet.heard()  # (the silence up to its end counts)
        if outcome.watchdog is not None:
            run.watchdog = outcome.watchdog
            self._watchdog_stopped(run, outcome.watchdog)
        status = -1 if outcome.status is None else outcome.status
        run.status = status
        run.outcome, run.reason = process_ending(
            status, stopped=run.stopped, watchdog=run.watchdog, interrupt=self._interrupt(),
            ran=time.monotonic() - run.started, deadline=run.command.deadline)
        self._ended(run)
        return status

    async def _drained(self, lane: Lane, run: Run) -> None:
        """Until every chunk of ``run`` read was taken in, and parsed by its worker."""
        await self.intake.drained(lane)
        if self.pool is not None and run.slot is not None:
            await self.pool.settled(run.slot)

    def _ingest(self, run: Run, ingest: RunIngest, chunk: Chunk, t: float) -> None:
        """One chunk of ``run``'s output (arrived at ``t``), taken in by the intake: parsed
        here, or sent to its parser worker."""
        if self.pool is not None and run.slot is not None:
            self.pool.feed(run.slot, chunk.data, chunk.offset, t, ingest.keep(chunk))
            return
        cut_before = ingest.cut_lines
        got = ingest.feed(chunk, t)
        self._parsed(run, ingest, got, t, cut_before)

    def _answered(self, run: Run, answer: Answer, lines: list[str], t: float) -> None:
        """What ``run``'s parser worker made of a chunk (arrived at ``t``, its raw lines
        ``lines``)."""
        ingest = run.ingest
        assert ingest is not None
        cut_before = ingest.cut_lines
        ingest.parsed_elsewhere(answer.warnings, answer.cut_lines, answer.dropped_bytes)
        self._parsed(run, ingest, Ingested(lines, answer.samples, answer.text), t, cut_before)

    def _parsed(self, run: Run, ingest: RunIngest, got: Ingested, t: float,
                cut_before: int) -> None:
        if got.text:
            run.ready.set()
        self._take(run, ingest, got, t)
        if ingest.cut_lines and not cut_before:
            self._emit(ev.PARSE_WARNING, f"{run.host}: {run.tool} printed a line longer "
                       f"than {MAX_LINE_BYTES >> 20} MiB: cut there, the rest of it dropped "
                       "(its end counts every line cut)", level=ev.WARNING, host=run.host,
                       step=run.step)

    def _take(self, run: Run, ingest: RunIngest, got: Ingested, now: float) -> None:
        if got.lines or got.samples:
            run.samples += len(got.samples)
            self._deliver(run, got, now)
        for warning in ingest.new_warnings():
            self._emit(ev.PARSE_WARNING, str(warning), level=ev.WARNING, host=run.host,
                       step=run.step)

    def _lost(self, run: Run, error: HostError) -> None:
        """The run's host could not be reached to follow it to its end."""
        why = without_host(error)
        run.lost = True
        run.outcome, run.reason = ev.FAILED, f"was lost: {why}"
        self.hosts.fail(run.host, f"lost {run.tool}: {why}")
        self._ended(run)

    def _ended(self, run: Run) -> None:
        """The run's end event (not a monitor's), with the tool's last words when it
        failed, was cut by its deadline, or printed nothing the parser could use."""
        cmd = run.command
        ingest = run.ingest
        if cmd.role == MONITOR or ingest is None:
            return
        silent = run.samples == 0 and not run.stopped and not run.lost \
            and run.outcome in (ev.COMPLETED, ev.FAILED, ev.DEADLINE)
        words = ingest.last_words() \
            if silent or run.outcome in (ev.FAILED, ev.DEADLINE) else []
        if words:
            said = f"; it said: {words_text(words)}"
        elif silent:
            said = "; it printed nothing" if ingest.bytes == 0 else \
                "; nothing it printed reads as words"
        else:
            said = ""
        how = "was stopped" if run.stopped else run.reason
        fine = run.outcome == ev.COMPLETED or cmd.role == SERVER
        cut = f", {ingest.cut_lines} line(s) cut ({ingest.dropped_bytes} bytes dropped)" \
            if ingest.cut_lines else ""
        message = f"{cmd.host}: {cmd.tool} {how}, {run.samples} samples{cut}{said}"
        if run.outcome in (ev.FAILED, ev.DEADLINE):
            run.reason += said  # (what info, the report and the failures say of it)
        extra: dict[str, object] = {}
        if words:
            extra["output_tail"] = words
        if ingest.cut_lines:
            extra.update(cut_lines=ingest.cut_lines, dropped_bytes=ingest.dropped_bytes)
        if ingest.warnings_hidden:
            extra["parse_warnings_hidden"] = ingest.warnings_hidden
        self._emit(ev.RUN_END, message,
                   level=ev.ERROR if not fine else ev.WARNING if silent else ev.INFO,
                   host=cmd.host, step=run.step, tool=cmd.tool, role=cmd.role,
                   status=run.status, exit_status=run.status,
                   outcome=run.outcome, reason=run.reason,
                   seconds=time.monotonic() - run.started,
                   silent_seconds=round(run.quiet.longest, 1), **extra)

    def _watchdog_stopped(self, run: Run, stop: WatchdogStop) -> None:
        """The host stopped ``run`` itself: this controller was gone (its link down) for
        longer than the grace. The host fails (once: its other runs say the same)."""
        self.hosts.fail(run.host, f"the host's watchdog stopped {run.tool} and every other "
                        "process of this session there: it had not heard from this "
                        f"controller for {stop.gone_for:.0f} s (controller_grace "
                        f"{grace_text(stop.grace)})")

    # --- stopping ----------------------------------------------------------------------

    async def stop(self, runs: list[Run], *, expected: bool = True,
                   until: float | None = None) -> None:
        """Stop ``runs`` (``expected``: at their step's end, a success), all at once, then
        let their followers read what is left; within ``until`` (``time.monotonic``) when
        given. What could not be stopped is said, host by host."""
        cannot: dict[str, dict[str, list[str]]] = {}  # host -> why -> tools

        def left() -> float:
            return STOP_TIMEOUT if until is None else min(STOP_TIMEOUT,
                                                          until - time.monotonic())

        async def stop(r: Run) -> None:
            if r.handle is None:
                return
            handle = r.handle
            r.stopped = expected
            _, why = await self.hosts.attempt(
                r.host, lambda: self.transports[r.host].stop(handle, grace=STOP_GRACE), left())
            if why:
                cannot.setdefault(r.host, {}).setdefault(why, []).append(r.tool)
            await self._end_follower(r, min(FOLLOW_END_TIMEOUT, left()))

        await asyncio.gather(*(stop(r) for r in runs))
        for r in runs:
            if r in self.active:
                self.active.remove(r)
        self.unstopped.update(cannot)
        for host, whys in cannot.items():
            said = "; ".join(f"{', '.join(dict.fromkeys(tools))}: {why}"
                             for why, tools in whys.items())
            self._emit(ev.RUN_END, f"{host}: could not stop {said}"
                       f"{left_to_watchdog(self.controller_grace)}", level=ev.ERROR,
                       host=host)

    async def settle(self, runs: list[Run]) -> None:
        """``runs`` (a step's) are over: those that ended on their own are done with (their
        host swept what they left, ``hostscripts.WRAPPER``); those whose end could not be
        heard (their host was lost) are stopped, or said to be left to the watchdog."""
        unheard = [r for r in runs if r in self.active and r.lost]
        for r in runs:
            if r in self.active and not r.lost and not r.running:
                self.active.remove(r)
        if unheard:
            await self.stop(unheard, expected=False)

    async def _end_follower(self, run: Run, timeout: float) -> None:
        """Wait for ``run``'s follower to read the end of its output; past ``timeout``,
        cancel it, and its run ends as not heard to end."""
        task = run.task
        if task is None or task.done():
            return
        done, _ = await asyncio.wait([task], timeout=max(timeout, 0.0))
        if done:
            return
        task.cancel()
        await asyncio.wait([task], timeout=1.0)
        if run.outcome is None:
            interrupt = self._interrupt()
            run.outcome = ev.INTERRUPTED if interrupt else ev.FAILED
            run.reason = (f"was stopped: {interrupt}" if interrupt else "was stopped") + \
                " (its end could not be read from the host)"
            run.lost = True
            self._ended(run)


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
