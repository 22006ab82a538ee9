"""The controller's heartbeats come from a process of their own, whatever its event loop does.

Over SSH, each host's watchdog counts this controller gone once its keeper has had no beat for
``watchdog.BEAT_SILENCE`` seconds, and stops the runs ``controller_grace`` later (``watchdog``).
Beats written by the controller's event loop wait behind whatever the loop is doing: a
controller busy parsing a fleet's output (issue 32: 32 hosts x 32 fio jobs) let them wait
more than 5 s, and three hosts' watchdogs stopped their workload as if it were dead.

So the beats come from a small process of the controller's own (``beat_process``): it keeps
one SSH connection to each watched host (``ssh_link.SshLink``, reconnected within the same
reconnect window) and feeds the host's keeper there one line a second (``ssh.feed_keeper``),
while its controller lives: its standard input is a pipe from the controller, which ends
when the controller's process does (killed, crashed, exited), and then it closes every
connection (the keepers write "closed", as before). It is busy with nothing else, so the
operating system runs it as soon as it wakes, however busy the controller is.

The controller's event loop sends it a tick every ``TICK_INTERVAL`` seconds. A controller that
falls behind still ticks (its loop turns, late); one whose loop has not turned for
``STALL_LIMIT`` seconds is hung, not busy, and its beats stop: the hosts' watchdogs then count
it gone as they would a dead one. Suspended (Ctrl-Z), the process group stops, the heartbeat
process with it: gone after ``BEAT_SILENCE`` s, as before.

The process answers each tick (a byte on its standard output). One that, once started, has
not answered for ``ANSWER_LIMIT`` seconds of ticks (stopped with SIGSTOP, hung) beats no
more either: its hosts would count the controller gone ``BEAT_SILENCE`` s after its last
beat.

``Heartbeats`` is the controller's side: it starts the process (``prepare``: as the first SSH
host that will be watched connects, so that it is ready by the first run), tells it which
hosts to watch, and, if the process cannot start (or does not answer within
``START_LIMIT``), dies or stops answering, ends it, says so (``on_trouble``) and gives every
host back to its transport's own heartbeat on the event loop (``fallback``): within
``ANSWER_LIMIT`` + a tick of a stop, well within the default ``controller_grace``. A host
the process cannot connect to is handed back to its transport alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from benchtui.transport.sshtarget import SshTarget

#: Seconds between two ticks of the controller's event loop to the heartbeat process.
TICK_INTERVAL = 0.5
#: Seconds the controller's event loop may go without a tick before the heartbeat process
#: takes it for hung and stops beating (its hosts' watchdogs then count it gone).
STALL_LIMIT = 30.0
#: Seconds of ticks the heartbeat process may leave unanswered before it is taken for
#: stuck. A process merely starved by a loaded machine is not stuck (the event loop would
#: beat no better), so this is not tight: ``watchdog.BEAT_SILENCE`` s, and the transports'
#: own beats take over a stuck process's hosts well within the default ``controller_grace``.
ANSWER_LIMIT = 3.0
#: Seconds the heartbeat process may take to start answering (Python and asyncssh imported).
START_LIMIT = 20.0
#: Seconds the heartbeat process gets to end once told to (then it is killed).
CLOSE_TIMEOUT = 0.5
#: Bytes of the heartbeat process's error output said when it ends unexpectedly.
ERRORS_SAID = 300


@dataclass(frozen=True, slots=True)
class Watched:
    """What the heartbeat process needs to feed one host's keeper."""

    name: str
    target: SshTarget
    runs_dir: str
    session_id: str
    #: Seconds the host may stay unreachable before its link is given up.
    window: float

    def message(self) -> dict[str, object]:
        return {"op": "watch", "name": self.name, "target": dataclasses.asdict(self.target),
                "runs_dir": self.runs_dir, "session_id": self.session_id,
                "window": self.window}


class Heartbeats:
    """The controller's heartbeat process (started at the first ``watch``). ``on_trouble``
    hears, in one sentence, why the process could not be used; the hosts' beats then come
    from their transports' own heartbeats (each ``watch``'s ``fallback``)."""

    def __init__(self, *, stall_limit: float = STALL_LIMIT,
                 on_trouble: Callable[[str], None] | None = None) -> None:
        self.stall_limit = stall_limit
        self.on_trouble = on_trouble
        #: Why the process is not used (None while it is, or before it is needed).
        self.failed: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None
        self._fallbacks: dict[str, Callable[[], None]] = {}
        self._ticking: asyncio.Task[None] | None = None
        #: Since when (monotonic) the ticks sent have had no answer (None: all answered).
        self._unanswered: float | None = None
        #: The process answered once (it started: Python and asyncssh imported).
        self._ready = False
        #: The end of its answers not yet read whole.
        self._partial = b""
        #: Hosts it could not reach: their transports beat them.
        self._handed_back: set[str] = set()

    @property
    def pid(self) -> int | None:
        """The heartbeat process's PID (None while there is none)."""
        return None if self._process is None else self._process.pid

    @property
    def ready(self) -> bool:
        """Whether the process has started (it answered a tick)."""
        return self._ready

    def prepare(self) -> None:
        """Start the process now (on the first host's connection), so that it is ready to
        beat by the first run."""
        if self.failed is None:
            self._started()

    def watch(self, watched: Watched, fallback: Callable[[], None]) -> None:
        """Keep ``watched``'s keeper fed from now on (again after ``unwatch``); ``fallback``
        starts the transport's own heartbeat, if the process cannot do it."""
        if watched.name in self._handed_back:
            fallback()
            return
        if watched.name in self._fallbacks:
            return
        self._fallbacks[watched.name] = fallback
        if self.failed is None and self._started():
            self._send(watched.message())
        if self.failed is not None:
            fallback()

    def unwatch(self, name: str) -> None:
        """Stop feeding host ``name``'s keeper: its connection closes (the keeper writes
        "closed": the controller is done with the host)."""
        if self._fallbacks.pop(name, None) is not None and self._process is not None \
                and self.failed is None:
            self._send({"op": "unwatch", "name": name})

    async def close(self) -> None:
        """End the heartbeat process (its connections close), within ``CLOSE_TIMEOUT``."""
        ticking, self._ticking = self._ticking, None
        if ticking is not None:
            ticking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticking
        self._fallbacks.clear()
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        give_up = time.monotonic() + CLOSE_TIMEOUT
        while process.poll() is None and time.monotonic() < give_up:
            await asyncio.sleep(0.02)
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        if self._errors is not None:
            self._errors.close()
            self._errors = None

    # --- the process -----------------------------------------------------------------------

    def _started(self) -> bool:
        """Start the process if it is not running yet; False (and ``failed`` says why) when
        it cannot be."""
        if self._process is not None:
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.failed = "no event loop runs to tick it"
            return False
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "benchtui.transport.beat_process",
                 repr(self.stall_limit)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._errors, env=env, close_fds=True)
        except OSError as exc:
            self._trouble(f"the heartbeat process could not start ({exc.strerror or exc})")
            return False
        assert self._process.stdin is not None and self._process.stdout is not None
        os.set_blocking(self._process.stdin.fileno(), False)
        os.set_blocking(self._process.stdout.fileno(), False)
        self._ticking = loop.create_task(self._tick(), name="benchtui-heartbeat-ticks")
        return True

    async def _tick(self) -> None:
        """Tell the process, every ``TICK_INTERVAL`` s, that the event loop turns; notice
        when it has ended, or stopped answering."""
        while self._process is not None and self.failed is None:
            status = self._process.poll()
            if status is not None:
                self._trouble(f"the heartbeat process ended (exit status {status}"
                              f"{self._last_errors()})")
                return
            now = time.monotonic()
            if self._answered():
                self._unanswered = None
            elif self._unanswered is None:
                self._unanswered = now
            elif self._ready and now - self._unanswered >= ANSWER_LIMIT:
                self._trouble(f"the heartbeat process (PID {self._process.pid}) has not "
                              f"answered for {now - self._unanswered:.1f} s (stopped or hung)")
                return
            elif not self._ready and now - self._unanswered >= START_LIMIT:
                self._trouble(f"the heartbeat process (PID {self._process.pid}) did not "
                              f"start answering within {START_LIMIT:g} s")
                return
            self._send({"op": "tick"})
            await asyncio.sleep(TICK_INTERVAL)

    def _answered(self) -> bool:
        """Whether the process answered a tick since the last look (its answers read: a
        ``.`` a tick, and a line ``lost NAME REASON`` for a host it cannot reach, whose
        beats go back to its transport)."""
        process = self._process
        if process is None or process.stdout is None:
            return False
        try:
            data = os.read(process.stdout.fileno(), 1 << 16)
        except OSError:  # (BlockingIOError: nothing to read)
            return False
        self._ready = self._ready or bool(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            if line.startswith(b"lost "):
                name, _, reason = line[5:].decode("utf-8", "replace").partition(" ")
                self._lost(name, reason)
        return bool(data)

    def _lost(self, name: str, reason: str) -> None:
        """The process cannot reach host ``name``: its beats come from its transport from
        now on (two keepers fed at once would end each other's)."""
        fallback = self._fallbacks.pop(name, None)
        if fallback is None:
            return
        self._handed_back.add(name)
        if self.on_trouble is not None:
            self.on_trouble(f"{name}: the heartbeat process cannot reach the host ({reason}); "
                            "its heartbeats come from this controller's event loop from now "
                            "on")
        fallback()

    def _send(self, message: dict[str, object]) -> None:
        process = self._process
        if process is None or process.stdin is None or self.failed is not None:
            return
        data = json.dumps(message).encode() + b"\n"
        try:
            written = os.write(process.stdin.fileno(), data)
        except BlockingIOError:
            written = 0
        except OSError as exc:
            self._trouble(f"the heartbeat process cannot be told what to do "
                          f"({exc.strerror or exc})")
            return
        if written < len(data):  # its pipe is full: it has not read for minutes
            self._trouble("the heartbeat process stopped reading its controller's ticks")

    def _trouble(self, reason: str) -> None:
        """The process cannot be used: it is ended, and every host's beats come from its
        transport again."""
        if self.failed is not None:
            return
        self.failed = reason
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()  # (a stopped process too: SIGKILL ends it at once)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(CLOSE_TIMEOUT)
        if self.on_trouble is not None:
            self.on_trouble(f"{reason}; the hosts' heartbeats come from this controller's "
                            "event loop from now on (a controller too busy to beat for "
                            "3 s + controller_grace is taken for gone)")
        for fallback in list(self._fallbacks.values()):
            fallback()

    def _last_errors(self) -> str:
        errors = self._errors
        if errors is None:
            return ""
        with contextlib.suppress(OSError):
            errors.seek(0, os.SEEK_END)
            size = errors.tell()
            errors.seek(max(size - ERRORS_SAID, 0))
            text = errors.read().decode("utf-8", "replace").strip().splitlines()
            if text:
                return f": {text[-1]}"
        return ""
