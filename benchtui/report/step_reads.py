"""A report's steps' runs read in two processes, on a machine with more than one core.

Reading runs (``run_reads.py``) is most of a big report's time, all of it in Python: a 24-hour,
16-host session's 380 runs take ~6 s of one core. Steps are read independently of each other
(a step's runs' figures come from that step's stats pieces and edge seconds only; the
reader's caches change how fast, never what), so the steps are cut in two halves of about
as many runs each: a forked child reads the second half while this process reads the first,
and sends its ``RunRead`` lists back pickled through a pipe. The figures are the ones one
process would make: the same reads, of the same file, added in the same order.

Only worth it past a few dozen runs (``PARALLEL_RUNS``): the fork and the pickling cost
~0.3 s of CPU for 380 runs (3.4 MB pickled). Where the child fails (killed, out of memory,
an error), or has not answered within ``CHILD_PATIENCE`` times the parent's own reading time
(at least ``CHILD_PATIENCE_MIN`` seconds), it is stopped and its half is read here, with a warning
saying so: the report is the same, only slower.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable, Sequence

from benchtui import gc_policy
from benchtui.cpus import usable_cpus
from benchtui.report.run_reads import RunRead, RunReader
from benchtui.session.compare import RunWindow
from benchtui.store.recording import SessionReader

#: Fewer runs than this are read in this process alone.
PARALLEL_RUNS = 48
#: How long the child may take beyond the parent's own reading time: this many times it,
#: and at least this many seconds.
CHILD_PATIENCE = 4.0
CHILD_PATIENCE_MIN = 30.0
#: Allocations between two collections of the youngest generation while runs are read.
GC_THRESHOLD = 100_000

Steps = Sequence[Sequence[RunWindow]]
Reads = list[list[RunRead]]


def read_steps(reader: SessionReader, steps: Steps, skip: float, *, imported: bool,
               warnings: list[str], processes: int | None = None) -> Reads:
    """Each step's runs read (``RunReader.read``), in order. ``processes``: 1 or 2 (None:
    2 when there are ``PARALLEL_RUNS`` runs or more, more than one core, ``os.fork``, and no
    other thread in this process: a thread holding a lock when the process forks would leave
    it held in the child for good, as in the console, which reads reports beside its own
    threads)."""
    runs = RunReader(reader, skip, imported=imported)

    def read(part: Steps) -> Reads:
        # Reading runs makes millions of small objects (pieces' rows, figures), few of them in
        # reference cycles, and keeps many (a step's pieces' rows): at Python's default
        # threshold the collector walks them again and again, ~25% of a big report's time
        with gc_policy.fewer_collections(GC_THRESHOLD):
            return [runs.read(step) for step in part]

    if processes is None:
        processes = 2 if (sum(map(len, steps)) >= PARALLEL_RUNS and usable_cpus() > 1
                          and hasattr(os, "fork") and threading.active_count() == 1) else 1
    if processes < 2 or len(steps) < 2:
        return read(steps)
    cut = _halves(steps)
    import benchtui.store.recording.histmerge  # noqa: F401  (numpy: imported once, not twice)

    try:
        child = _Child(lambda: read(steps[cut:]))
    except OSError:  # (no fork: too many processes, no memory) one process reads them all
        return read(steps)
    t = time.monotonic()
    try:
        mine = read(steps[:cut])
    except BaseException:
        child.stop()
        raise
    theirs, why = child.result(max(CHILD_PATIENCE_MIN, CHILD_PATIENCE * (time.monotonic() - t)))
    if theirs is not None and len(theirs) != len(steps) - cut:
        why = f"sent {len(theirs)} steps' reads"
        theirs = None
    if theirs is None:
        warnings.append(f"{reader.path}: the runs of {len(steps) - cut} step(s) were read in "
                        f"one process after all: the helper process reading them {why}")
        theirs = read(steps[cut:])
    return mine + theirs


def _halves(steps: Steps) -> int:
    """Where to cut ``steps`` so that both sides have about as many runs (each side one
    step at least)."""
    total, before = sum(map(len, steps)), 0
    for i, step in enumerate(steps):
        if before + len(step) / 2 >= total / 2:
            return min(max(i, 1), len(steps) - 1)
        before += len(step)
    return len(steps) - 1


class _Child:
    """``work()`` in a forked child, its result pickled back through a pipe."""

    def __init__(self, work: Callable[[], Reads]) -> None:
        self._fd, w = os.pipe()
        gc.freeze()  # (the collector would touch, and so copy, every page the two share)
        try:
            self._pid = os.fork()
        except OSError:
            gc.unfreeze()
            os.close(self._fd)
            os.close(w)
            raise
        if self._pid == 0:  # the child: never returns into the caller's code
            status = 1
            try:
                os.close(self._fd)
                data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as out:
                    out.write(data)
                status = 0
            finally:
                os._exit(status)
        gc.unfreeze()
        os.close(w)

    def stop(self) -> None:
        """Kill the child and wait for it (this process gives up: an error, ^C)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        os.close(self._fd)
        os.waitpid(self._pid, 0)

    def result(self, patience: float) -> tuple[Reads | None, str]:
        """The child's result (None, and why, when it has none within ``patience``
        seconds: it is then killed)."""
        chunks: list[bytes] = []
        deadline = time.monotonic() + patience
        why = ""
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                    why = f"had not answered after {patience:.0f} s and was stopped"
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self._pid, signal.SIGKILL)
                    break
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            _pid, status = os.waitpid(self._pid, 0)
        if why:
            return None, why
        if status != 0:
            code = os.waitstatus_to_exitcode(status)
            return None, (f"was killed by signal {-code}" if code < 0
                          else f"exited with status {code}")
        try:
            found = pickle.loads(b"".join(chunks))
        except (pickle.UnpicklingError, EOFError, ValueError) as exc:
            return None, f"sent what could not be read ({exc})"
        return found, ""
