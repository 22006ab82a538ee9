"""Parser worker processes: the runs' parsing spread over the machine's other cores.

The documents of a fleet's hosts arrive in lockstep (fio's clocks are in step): 32 hosts x
32 fio jobs are ~0.3 s of one core to parse every second, and the last host waits for the
others. With ``W`` workers (``parse_worker``), the main process keeps SSH, the intake and
the sinks; each run's parser lives in one worker for the run's life, runs dealt over the
workers in the order they start. A chunk taken in by the intake is sent to its run's
worker at once (the writes never wait: asyncio's pipe buffers them, and a run has at most
``RUN_BYTES`` in flight before its follower waits); the answers, read by the event loop,
are delivered in bounded slices (``SLICE`` s of unpickling and sinks at most in a row).

When it is used: ``workers_for`` (``--parse-workers N``; 0: parse in process). Without it,
a session of ``AUTO_HOSTS`` hosts or more on a machine of ``AUTO_CORES`` cores or more gets
one worker per core but two (at most ``AUTO_MAX``): a worker does ~1.3x the parsing's CPU
(the encoding, the histograms' coarsening moved there) and is one process for its runs'
burst, so on 2 cores, beside sshd and the main process, one worker made the lag worse where
cores were short (docs/benchmarks/fleet_scale.md, "Parser workers"); there it is asked for.

When a worker dies (killed, crashed) its runs are resumed in a new one: each run's new
parser is fed again the bytes since the last chunk that completed samples (their answers
dropped: delivered before), then every chunk not yet answered (``parse_slot``). A fio json+
run's first document in the new parser has no counters to compare with: its samples are
dropped, at most one interval lost per run; a warning names the runs. A worker that answers
nothing for ``HANG_TIMEOUT`` s while it has work (SIGSTOP, hung) is killed and its runs
resumed the same way. Past ``MAX_RESTARTS`` deaths in a session, the runs of the worker that
died fail their hosts (``ParseWorkerError``, a ``HostError``: the run is lost, said as
such). ``close`` ends every worker within ``CLOSE_TIMEOUT`` s (their input closed, then
SIGKILL).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path

import benchtui
from benchtui.cpus import usable_cpus
from benchtui.errors import HostError
from benchtui.session.parse_slot import OnAnswer, Slot
from benchtui.session.parse_worker import (
    CLOSE,
    FEED,
    FINISH,
    LENGTH,
    OPEN,
    REPLAY,
    Answer,
    order,
    read_answer,
)

#: Seconds of answers (unpickling and delivering) in a row at most before the loop turns.
SLICE = 0.01
#: Bytes of one run sent and not yet answered at most; its follower then waits.
RUN_BYTES = 1 << 20
#: Seconds a worker with work may go without answering before it is killed as hung.
HANG_TIMEOUT = 10.0
#: Workers that may die in a session before their runs fail.
MAX_RESTARTS = 3
#: Seconds ending the workers may take (their input closed) before they are killed.
CLOSE_TIMEOUT = 2.0
#: Sessions of this many hosts get workers automatically, on machines of this many cores.
AUTO_HOSTS = 16
AUTO_CORES = 4
#: Workers at most when chosen automatically.
AUTO_MAX = 4


def workers_for(asked: int | None, hosts: int, cores: int | None = None) -> int:
    """The workers a session uses: ``asked`` (0: none), or when None, one per core but two
    (at most ``AUTO_MAX``) for a session of ``AUTO_HOSTS`` hosts or more on a machine of
    ``AUTO_CORES`` cores or more, else none. ``cores``: the CPUs this process may run on
    (``cpus.usable_cpus``: its affinity) unless given."""
    if asked is not None:
        return max(asked, 0)
    cores = cores or usable_cpus()
    return min(cores - 2, AUTO_MAX) if cores >= AUTO_CORES and hosts >= AUTO_HOSTS else 0


#: The worker's program (not ``-m``: its answers' classes must be pickled by their module).
_WORKER_MAIN = "from benchtui.session.parse_worker import main; main()"


def _worker_env() -> dict[str, str]:
    """The environment of a worker: this one's, with the directory this ``benchtui`` was
    imported from first on the path (the worker runs the same code, installed or not)."""
    env = dict(os.environ)
    home = str(Path(benchtui.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    return env


class ParseWorkerError(HostError):
    """A run's parser worker could not be kept alive."""


class _Worker:
    """One worker process; orders wait in ``backlog`` until it runs."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.process: asyncio.subprocess.Process | None = None
        self.backlog: list[bytes] = []
        self.slots: dict[int, Slot] = {}
        self.reader: asyncio.Task[None] | None = None
        #: Killed by this pool for not answering (said as hung, not died).
        self.hung = False
        #: When its process started, and when it last answered (``time.monotonic``).
        self.started = self.answered = 0.0
        #: Why it was given up (its runs fail).
        self.failed: str | None = None
        self._flushing = False

    def send(self, frame: bytes) -> None:
        """Queue ``frame``; the frames queued in one turn of the event loop are written
        together once it ends (one write, not one per chunk)."""
        self.backlog.append(frame)
        if self.process is not None and not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Write the frames queued (asyncio's pipe buffers what the pipe cannot take)."""
        self._flushing = False
        process = self.process
        if process is None or process.stdin is None or not self.backlog:
            return  # (not started: written once it is)
        frames, self.backlog = self.backlog, []
        if process.stdin.is_closing():
            return  # (dead, its reader about to say so: what is not answered is sent again)
        with contextlib.suppress(ConnectionError, RuntimeError):
            process.stdin.write(b"".join(frames))


class ParsePool:
    """``workers`` parser processes for a session's runs; ``warn``: said to the user (a
    worker replaced, and what it cost); ``histogram_bits``: the session's resolution."""

    def __init__(self, workers: int, warn: Callable[[str], None], histogram_bits: int
                 ) -> None:
        self._warn = warn
        #: The session's histogram resolution: the workers send histograms at it (``Sinks``
        #: then finds nothing to coarsen).
        self.histogram_bits = histogram_bits
        self._workers = [_Worker(i) for i in range(workers)]
        self._next = 0
        self._numbers = 0
        self._deaths = 0
        self._closed = False
        self._watch: asyncio.Task[None] | None = None

    def closed(self) -> bool:
        """``close`` was called: the workers end, none is started again."""
        return self._closed

    @property
    def pids(self) -> list[int]:
        """The workers' process ids (those running)."""
        return [w.process.pid for w in self._workers if w.process is not None]

    # --- the runs ------------------------------------------------------------------------

    def open(self, parser: str, host: str, source: str, label: str,
             on_answer: OnAnswer) -> Slot:
        """A new run, parsed by ``parser`` (a registry name) in the next worker."""
        worker = self._workers[self._next % len(self._workers)]
        self._next += 1
        self._numbers += 1
        slot = Slot(self._numbers, label, (parser, host, source), on_answer, worker.index)
        if worker.failed is not None:
            slot.error = ParseWorkerError(host, f"its output's parser process {worker.failed}")
            return slot
        worker.slots[slot.number] = slot
        if worker.process is None and worker.reader is None:
            worker.reader = asyncio.get_running_loop().create_task(
                self._serve(worker), name=f"benchtui-parse-worker-{worker.index}")
        if self._watch is None:
            self._watch = asyncio.get_running_loop().create_task(self._watch_hung(),
                                                                 name="benchtui-parse-watch")
        worker.send(order(OPEN, slot.number, pickle.dumps((*slot.spec, self.histogram_bits, 0))))
        return slot

    def feed(self, slot: Slot, data: bytes, offset: int, t: float, lines: list[str]) -> None:
        """A chunk of ``slot``'s run (ending at byte ``offset``, arrived at ``t``) to parse;
        ``lines``: its raw lines, delivered with its samples."""
        slot.inflight.append((FEED, offset, t, data, lines, time.monotonic()))
        slot.inflight_bytes += len(data)
        slot.offset = offset
        self._workers[slot.worker].send(order(FEED, slot.number, data, offset=offset, t=t))

    async def room(self, slot: Slot) -> None:
        """Until ``slot`` has fewer than ``RUN_BYTES`` in flight."""
        while slot.inflight_bytes >= RUN_BYTES and slot.error is None:
            await self._changed(slot)
        self._raise(slot)

    async def settled(self, slot: Slot) -> None:
        """Until every chunk of ``slot`` sent was answered."""
        while slot.inflight and slot.error is None:
            await self._changed(slot)
        self._raise(slot)

    async def finish(self, slot: Slot, t: float, lines: list[str]) -> None:
        """The end of ``slot``'s output (at ``t``): what its parser still held is answered
        (with ``lines``, the output's last); until it is."""
        slot.inflight.append((FINISH, slot.offset, t, b"", lines, time.monotonic()))
        self._workers[slot.worker].send(order(FINISH, slot.number, t=t))
        await self.settled(slot)

    def close_run(self, slot: Slot) -> None:
        """``slot``'s run is done with (or its follower cancelled)."""
        if self._workers[slot.worker].slots.pop(slot.number, None) is not None:
            self._workers[slot.worker].send(order(CLOSE, slot.number))
        slot.inflight.clear()
        slot.inflight_bytes = 0
        slot.replay.clear()

    def oldest(self, now: float) -> float:
        """How long (s) the oldest chunk sent and not answered has waited; ``now``:
        ``time.monotonic()``."""
        sent = [s.inflight[0][5] for w in self._workers for s in w.slots.values()
                if s.inflight]
        return now - min(sent) if sent else 0.0

    async def _changed(self, slot: Slot) -> None:
        slot.changed.clear()
        await slot.changed.wait()

    @staticmethod
    def _raise(slot: Slot) -> None:
        if slot.error is not None:
            raise slot.error

    # --- the answers ---------------------------------------------------------------------

    def _answered(self, worker: _Worker, answer: Answer) -> None:
        worker.answered = time.monotonic()
        slot = worker.slots.get(answer.run)
        if slot is None or not slot.inflight:
            return  # (a run closed meanwhile)
        lines, t = slot.answered(answer)
        if answer.error is None:
            slot.on_answer(answer, lines, t)

    async def _serve(self, worker: _Worker) -> None:
        """Start ``worker``'s process, read its answers until it ends, then resume its runs
        in a new one (or fail them)."""
        while not self.closed():
            try:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-c", _WORKER_MAIN,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL, env=_worker_env())
            except OSError as exc:
                self._give_up(worker, f"could not be started ({exc.strerror or exc})")
                return
            worker.process, worker.hung = process, False
            worker.started = time.monotonic()
            worker.flush()
            assert process.stdout is not None
            await self._read(worker, process.stdout)
            if self.closed():
                return
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            status = await process.wait()
            worker.process = None
            worker.backlog.clear()  # (sent again, in order, by the resume)
            self._deaths += 1
            self._resume(worker, status)

    async def _read(self, worker: _Worker, stdout: asyncio.StreamReader) -> None:
        clock = time.perf_counter
        until = clock() + SLICE
        while True:
            try:
                header = await stdout.readexactly(LENGTH.size)
                (size,) = LENGTH.unpack(header)
                answer = read_answer(await stdout.readexactly(size))
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            except Exception:  # noqa: BLE001 (not an answer: the worker is killed, replaced)
                return
            self._answered(worker, answer)
            if clock() >= until:  # (the loop turns between slices)
                await asyncio.sleep(0)
                until = clock() + SLICE

    def _resume(self, worker: _Worker, status: int) -> None:
        """``worker`` died: its runs go on in a new process from their last samples, or fail
        once too many died."""
        slots = list(worker.slots.values())
        how = f"did not answer for {HANG_TIMEOUT:.0f} s" if worker.hung else \
            f"was killed by signal {-status}" if status < 0 else f"ended with status {status}"
        runs = ", ".join(s.label for s in slots) or "no run"
        if self._deaths > MAX_RESTARTS:
            self._give_up(worker, f"{how}, and {self._deaths - 1} before it")
            return
        self._warn(f"a parser process {how}: a new one took over {runs} at the last "
                   "output that gave samples; each of them lost at most one interval of "
                   "samples (a fio json+ run's first document in a new parser has no counters "
                   "to compare with)")
        for slot in slots:
            slot.resumed = True
            worker.send(order(OPEN, slot.number,
                              pickle.dumps((*slot.spec, self.histogram_bits,
                                            slot.replay_start))))
            offset = slot.replay_start  # (0: fed again from its start, nothing lost)
            for data, t in slot.replay:
                offset += len(data)
                worker.send(order(REPLAY, slot.number, data, offset=offset, t=t))
            for kind, end, t, data, _, _ in slot.inflight:
                worker.send(order(kind, slot.number, data, offset=end, t=t))

    def _give_up(self, worker: _Worker, how: str) -> None:
        """``worker``'s runs fail, and those dealt to it later: their parser process ``how``."""
        worker.failed = how
        slots = list(worker.slots.values())
        self._warn(f"a parser process ({', '.join(s.label for s in slots) or 'no run'}) "
                   f"{how}: its runs are given up")
        for slot in slots:
            slot.error = ParseWorkerError(slot.spec[1], f"its output's parser process {how}")
            slot.changed.set()
        worker.slots.clear()

    async def _watch_hung(self) -> None:
        """Kill a worker that has work and has answered nothing for ``HANG_TIMEOUT`` s (a
        slow one that answers is not hung: the lag watch says the controller is behind)."""
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for worker in self._workers:
                sent = [s.inflight[0][5] for s in worker.slots.values() if s.inflight]
                if worker.process is not None and sent and now - max(
                        min(sent), worker.started, worker.answered) > HANG_TIMEOUT:
                    worker.hung = True
                    with contextlib.suppress(ProcessLookupError):
                        worker.process.kill()

    # --- the end -------------------------------------------------------------------------

    async def close(self) -> None:
        """End every worker: its input closed, killed past ``CLOSE_TIMEOUT`` s."""
        self._closed = True
        if self._watch is not None:
            self._watch.cancel()
        processes = [w.process for w in self._workers if w.process is not None]
        for process in processes:
            if process.stdin is not None:
                process.stdin.close()
        if processes:
            waits = [asyncio.create_task(p.wait()) for p in processes]
            _, late = await asyncio.wait(waits, timeout=CLOSE_TIMEOUT)
            for process in processes:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
            if late:
                await asyncio.wait(late, timeout=1.0)
        for worker in self._workers:
            if worker.reader is not None:
                worker.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await worker.reader

