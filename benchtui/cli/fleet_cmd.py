"""``benchtui check PLAN`` and ``benchtui run PLAN --jsonl``: the engine, headless.

Samples go to stdout as JSON Lines; progress (one line per step and host) goes to stderr.
Exit status: 0 when every step succeeded, 1 when a host or step failed (or standard output
could no longer be written: the session stops at once), 130 on Ctrl-C/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import re
import signal
import sys
import time
from typing import TextIO

import orjson

from benchtui.cli.extras import session_extras
from benchtui.cli.output import check_writable
from benchtui.errors import OutputError, UsageError
from benchtui.export.formats import JsonlWriter
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.format import format_duration, plural
from benchtui.model.sample import Sample
from benchtui.parsers.registry import all_parsers
from benchtui.plan.commands import estimated_seconds, expected_step_seconds
from benchtui.plan.dryrun import command_lines, plan_commands
from benchtui.plan.loader import load_plan
from benchtui.plan.model import Plan
from benchtui.plan.preflight import Finding, fallback_hosts
from benchtui.session.engine import Session, SessionOptions, SessionResult
from benchtui.session.estimate import DEFAULT_OVERHEAD, planned_runs
from benchtui.session.facts import HostFacts
from benchtui.session.hosts import SshOptions
from benchtui.session.stop_signals import detach_from_terminal, is_hangup, stop_signals

EXIT_INTERRUPTED = 130
#: Event kinds worth a progress line on stderr.
_PROGRESS = {ev.HOST_STATE, ev.PREFLIGHT, ev.SESSION_START, ev.SESSION_END, ev.STEP_START,
             ev.STEP_END, ev.RUN_START, ev.RUN_END, ev.PARSE_WARNING, ev.SILENCE,
             ev.SESSION_WARNING, ev.CONTROLLER_LAG}
#: What an interrupting signal is called in the record.
_SIGNAL_WORDS = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}


def session_options(args: argparse.Namespace) -> SessionOptions:
    facts = getattr(args, "facts", None)
    if facts and facts != "-":
        check_writable(facts, "the hosts' facts")
    return SessionOptions(keep_going=args.keep_going, ssh=SshOptions(
        accept_new_host_keys=args.accept_new_host_keys, known_hosts=args.known_hosts,
        config=args.ssh_config), histogram_bits=getattr(args, "histogram_bits", None),
        controller_grace=getattr(args, "controller_grace", None),
        reconnect_window=getattr(args, "reconnect_window", None),
        stop_leftovers=getattr(args, "stop_leftovers", False),
        parse_workers=getattr(args, "parse_workers", None))


class ProgressPrinter:
    """One human line per event worth telling, on stderr."""

    def __init__(self, out: TextIO, *, verbose: bool = False,
                 leave_out: tuple[str, ...] = ()) -> None:
        self.out = out
        self.verbose = verbose
        self.leave_out = leave_out

    def __call__(self, event: Event) -> None:
        if (event.kind not in _PROGRESS and not self.verbose) or event.kind in self.leave_out \
                or not ev.is_said(event):
            return
        if event.kind == ev.PARSE_WARNING and not self.verbose:
            return
        clock = time.strftime("%H:%M:%S", time.localtime(event.t))
        tag = {ev.ERROR: "error: ", ev.WARNING: "warning: "}.get(event.level, "")
        with contextlib.suppress(OSError):  # (progress is for people: it never stops a run)
            self.out.write(f"[{clock}] {tag}{event.message}\n")
            self.out.flush()


def signal_words(sig: int) -> str:
    """``Ctrl-C (SIGINT)``, ``SIGTERM``, ``the terminal closed (SIGHUP)``."""
    if is_hangup(sig):
        return "the terminal closed (SIGHUP)"
    for known, words in _SIGNAL_WORDS.items():
        if sig == known:
            return words
    return signal.Signals(sig).name


def discard_stdout() -> None:
    """Point standard output at ``/dev/null`` once writing it failed: what is still in its
    buffer goes nowhere instead of failing again as the process exits."""
    with contextlib.suppress(OSError, ValueError):  # (closed from the start: nothing to do)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


class StdoutSamples:
    """The samples to standard output as JSON Lines, flushed at once. When standard output
    can no longer be written (a full disk, a reader gone: ``| head``), the session stops at
    once: it was the run's only output. ``failed`` then says why, in one sentence."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.writer = JsonlWriter(sys.stdout)
        self.failed: str | None = None

    def __call__(self, samples: list[Sample]) -> None:
        if self.failed is not None:
            return
        try:
            self.writer.write(samples)
            sys.stdout.flush()
        except OSError as exc:
            if exc.errno == errno.EBADF:
                self.failed = "standard output is closed: no sample can be written"
            else:
                reason = "its reader went away" if isinstance(exc, BrokenPipeError) \
                    else exc.strerror or str(exc)
                self.failed = f"standard output can no longer be written: {reason}"
            discard_stdout()
            self.session.abort(self.failed)


def write_facts(path: str, facts: dict[str, HostFacts]) -> None:
    data = orjson.dumps(facts, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    if path == "-":
        sys.stdout.write(data + "\n")
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(data + "\n")
    except OSError as exc:
        raise OutputError(path, "the hosts' facts", exc.strerror or str(exc)) from None


def run_check(args: argparse.Namespace) -> int:
    plan = load_plan(args.plan, parser_names=all_parsers())
    # The report lists every finding: the progress lines leave them out (each said once),
    # unless the report is not printed (--facts -).
    progress = ProgressPrinter(sys.stderr, leave_out=() if args.facts == "-" else
                               (ev.PREFLIGHT,))
    session = Session(plan, options=session_options(args), on_event=progress)
    result = asyncio.run(session.check())
    if args.facts:
        write_facts(args.facts, result.facts)
    if args.facts != "-":
        _print_check_report(session, result)
        if getattr(args, "commands", False):
            _print_commands(plan, result, sys.stdout)
    return 0 if result.ok else 1


def _print_commands(plan: Plan, result: SessionResult, out: TextIO) -> None:
    """``check --commands``: every command line, per host, as it will run."""
    fallback = {m.name: fallback_hosts(plan, m, result.facts) for m in plan.monitors}
    out.write("\ncommands, as each host will run them:\n")
    for entry in plan_commands(plan, fallback):
        out.write(f"  {entry.title}\n")
        for line in command_lines(entry):
            out.write(f"    {line}\n")


def _print_check_report(session: Session, result: SessionResult) -> None:
    out = sys.stdout
    plan = session.plan
    out.write(f"plan {plan.name}: {plural(len(plan.steps), 'step')}, "
              f"{plural(len(plan.monitors), 'monitor')}, "
              f"{plural(len(session.transports), 'host')}\n")
    _print_steps(session.plan, out)
    for host in session.transports:
        state = session.host_state.get(host, "?")
        facts = result.facts.get(host)
        out.write(f"\n{host}: {state}\n")
        if facts is None:
            continue
        out.write(f"  {facts['os']}, kernel {facts['kernel']}, {facts['cpu_count']} x "
                  f"{facts['cpu_model'] or 'CPU'}, {facts['mem_bytes'] / 2**30:.1f} GiB RAM\n")
        for name, version in sorted(facts["tools"].items()):
            out.write(f"  tool {name}: {version}\n")
        for dev in facts["block_devices"].values():
            kind = "HDD" if dev["rotational"] else "SSD"
            out.write(f"  device {dev['name']}: {dev['size_bytes'] / 2**30:.1f} GiB {kind}"
                      f" {dev['model']} scheduler={dev['scheduler']} "
                      f"read_ahead_kb={dev['read_ahead_kb']}\n")
    problems = list(result.findings)
    out.write("\n")
    if not problems and result.ok:
        out.write("no problems found\n")
    for f in problems:
        out.write(f"{f.severity}: {finding_line(f)}\n")
    for failure in result.failures:
        if not any(failure == f.message for f in problems):
            out.write(f"error: {failure}\n")


def finding_line(f: Finding) -> str:
    """A finding as the check report says it: its host and step first, unless its message
    already names them (``step "randread" on db1 ...``), then the message and the hint."""
    where = []
    if f.host and not re.search(rf"(?<![\w.-]){re.escape(f.host)}(?![\w-])", f.message):
        where.append(f.host)
    if f.step and f'"{f.step}"' not in f.message:
        where.append(f'step "{f.step}"')
    hint = f" ({f.hint})" if f.hint else ""
    return f"{' '.join(where) + ': ' if where else ''}{f.message}{hint}"


def _print_steps(plan: Plan, out: TextIO) -> None:
    """The steps in the order they run (a sweep's expanded), and how long they take."""
    if not plan.steps:
        return
    out.write("\nsteps, in order:\n")
    width = max(len(s.name) for s in plan.steps)
    for step in plan.steps:
        seconds = expected_step_seconds(step)
        each = format_duration(seconds) if seconds is not None else "length unknown"
        runs = f"{step.repeat} x {each}" if step.repeat > 1 else each
        select = f", select {step.select}" if step.repeat > 1 else ""
        out.write(f"  {step.name:<{width}}  on {', '.join(step.hosts)}: {runs}{select}\n")
    total, unknown = estimated_seconds(plan)
    known = sum(1 for r in planned_runs(plan) if r.seconds is not None)
    line = (f"estimated time: {format_duration(total + known * DEFAULT_OVERHEAD)} "
            f"({format_duration(total)} of steps, about {format_duration(DEFAULT_OVERHEAD)}"
            " a run to start and stop)")
    if unknown:
        line += f" and {len(unknown)} step(s) of unknown length ({', '.join(unknown)})"
    out.write(line + "\n")


def run_headless(args: argparse.Namespace) -> int:
    """``benchtui run PLAN --jsonl [--record SESSION] [--export ADDR]``."""
    if args.facts == "-":
        raise UsageError("--facts - would mix with the samples on stdout; give a file name")
    plan = load_plan(args.plan, parser_names=all_parsers())
    session = Session(plan, options=session_options(args),
                      on_event=ProgressPrinter(sys.stderr, verbose=args.verbose))
    samples = StdoutSamples(session)
    session.add_sample_sink(samples)
    with session_extras(session, None, record=args.record, export=args.export):
        code = asyncio.run(run_until_signal(session, args.facts))
    if args.record and args.history_catalog is not None:  # run --record S --history-catalog
        from benchtui.cli.history_add import add_recorded

        code = code if add_recorded(args.record, args.history_catalog, args.attr) else code or 1
    return code


async def run_until_signal(session: Session, facts_path: str | None) -> int:
    """Run ``session`` until it ends, or a stop signal (Ctrl-C, SIGTERM, SIGHUP) interrupts
    it: it then stops its processes within seconds; a second signal ends it at once (the
    hosts' watchdogs stop what is left). The exit status."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    signals = 0

    def interrupt(sig: int) -> None:
        nonlocal signals
        if is_hangup(sig):
            detach_from_terminal()
        signals += 1
        if signals == 2:
            with contextlib.suppress(OSError, ValueError):
                print(f"benchtui: {signal_words(sig)} again: ending now, without waiting for "
                      "the hosts", file=sys.stderr)
        session.note_interrupt(signal_words(sig))
        if task is not None:
            task.cancel()

    for sig in stop_signals():  # Ctrl-C, kill, the terminal closed (unless nohup)
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, interrupt, sig)
    # `kill -USR1 PID` puts a user's mark, as the console's `m` does (headless runs).
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGUSR1, session.mark, "SIGUSR1")
    try:
        result = await session.run()
    except asyncio.CancelledError:
        if not signals:
            raise
        left = session.unstopped_hosts
        with contextlib.suppress(OSError, ValueError):
            print("benchtui: interrupted; " + (
                "what was still running is left to the hosts' watchdogs" if signals > 1 else
                f"what could not be stopped on {', '.join(left)} (said above) is left to "
                "the hosts' watchdogs" if left else
                "every process benchtui started was stopped"), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGUSR1)
        if facts_path:
            write_facts(facts_path, session.facts)
    if result.outcome == ev.INTERRUPTED:  # (the session stopped itself: an output failed)
        print(f"benchtui: {result.reason}; the session was stopped, and every process "
              "benchtui started with it", file=sys.stderr)
        return 1
    for failure in result.failures:
        print(f"benchtui: {failure}", file=sys.stderr)
    return 0 if result.ok else 1
