"""Standard output and error at the CLI edge: one place that notices when they cannot be written.

Every command writes its results through ``sys.stdout`` (``print``, the sample writers, the
report renderers) and its words to people through ``sys.stderr``. ``guard_stdout`` puts a thin
proxy in front of standard output for the duration of a command: each write and flush that
fails with an ``OSError`` (``/dev/full``: ENOSPC; a reader gone: EPIPE; a closed descriptor:
EBADF) is remembered before the error goes on up, unchanged, so code that handles its own output
failures (``run --jsonl``) still sees an ``OSError``. ``main`` then asks ``failure_sentence``
whether the error that reached it was standard output's, and says so in one sentence with exit
status 1 (a failure at run time, README), never a traceback. ``silence_stdout`` points
descriptor 1 at /dev/null afterwards, so the interpreter's last flush at exit does not fail a
second time.

``guard_stderr`` does the same for standard error, except that a failure there goes no further:
there is nowhere left to say it, and a run is not stopped because its progress lines cannot be
shown (the recording is still made); the command's exit status says it instead (1, when it
would have been 0).

A standard stream closed before benchtui started (``>&-``, ``2>&-``) is handled like one that
cannot be written, and its descriptor is given /dev/null at once (``reserve_closed_descriptors``):
otherwise the next file benchtui opens (a recording, a pipe to fio) would get its number, and
whatever is written to the stream would go into that file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any

_DESCRIPTORS = ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))


class _ClosedStream:
    """Stands for a standard stream that was closed before benchtui started (``>&-``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def write(self, _text: str) -> int:
        raise OSError(errno.EBADF, f"{self.name} is closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise ValueError(f"{self.name} is closed")


def reserve_closed_descriptors() -> None:
    """Give /dev/null to each of descriptors 0, 1 and 2 that was closed when benchtui started
    (Python then set ``sys.stdin``/``stdout``/``stderr`` to None), so that no file opened
    later takes its number. The streams stay None: they are still closed to benchtui."""
    for (fd, mode), stream in zip(_DESCRIPTORS, (sys.stdin, sys.stdout, sys.stderr),
                                  strict=True):
        if stream is not None:
            continue
        try:
            os.fstat(fd)
            continue  # (already taken by something else: nothing to reserve)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, mode)
            if null != fd:
                os.dup2(null, fd, inheritable=True)
                os.close(null)
            else:
                os.set_inheritable(fd, True)


class StdoutGuard:
    """A proxy for ``sys.stdout`` that remembers the ``OSError`` its writes and flushes
    raised. Anything else (``fileno``, ``isatty``, ``buffer``, ``encoding``) is the real
    stream's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        try:
            written: int = self._inner.write(text)
            return written
        except OSError as exc:
            self.error = exc
            raise

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._inner.flush()
        except OSError as exc:
            self.error = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class StderrGuard(StdoutGuard):
    """A proxy for ``sys.stderr`` that remembers the ``OSError`` its writes and flushes
    raised, and swallows it: words to people never stop a command."""

    def write(self, text: str) -> int:
        with contextlib.suppress(OSError):
            return super().write(text)
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError):
            super().flush()


@contextmanager
def guard_stdout() -> Iterator[StdoutGuard]:
    """``sys.stdout`` behind a ``StdoutGuard`` until the block ends."""
    real = sys.stdout
    guard = StdoutGuard(real if real is not None else _ClosedStream("standard output"))
    sys.stdout = guard
    try:
        yield guard
    finally:
        sys.stdout = real


@contextmanager
def guard_stderr() -> Iterator[StderrGuard]:
    """``sys.stderr`` behind a ``StderrGuard`` until the block ends; then, if it failed,
    descriptor 2 is pointed at /dev/null (the interpreter's flush at exit would fail again
    and turn the exit status into 120)."""
    real = sys.stderr
    guard = StderrGuard(real if real is not None else _ClosedStream("standard error"))
    sys.stderr = guard
    try:
        yield guard
    finally:
        sys.stderr = real
        if guard.error is not None and real is not None:
            _silence(real)


def _said(exc: BaseException, guard: StdoutGuard) -> bool:
    return guard.error is not None and (exc is guard.error or exc.__context__ is guard.error)


def failure_sentence(exc: BaseException, guard: StdoutGuard) -> str | None:
    """The sentence for ``exc`` when it is standard output's failure, else None."""
    if not isinstance(exc, OSError) or not _said(exc, guard):
        return None
    if exc.errno == errno.EPIPE:
        return ("standard output was closed by the program reading it (broken pipe): the "
                "output is cut short")
    if exc.errno == errno.EBADF:
        return "standard output is closed: nothing could be written"
    reason = exc.strerror or str(exc)
    return f"cannot write to standard output: {reason}: the output is incomplete"


def silence_stdout() -> None:
    """Point descriptor 1 at /dev/null and drop what is still buffered for it, so that the
    interpreter's flush at exit does not raise again (Python's advice for EPIPE)."""
    _silence(sys.stdout)


def _silence(stream: Any) -> None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
    with contextlib.suppress(OSError, ValueError):
        stream.flush()  # what was buffered goes to /dev/null now


def check_writable(path: str, what: str) -> None:
    """A ``UsageError`` (exit 2) now, before anything runs, when ``path`` cannot be written:
    its directory missing or not writable, or the path a directory. Nothing is created."""
    from benchtui.errors import UsageError

    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise UsageError(f"cannot write {what} to {path}: it is a directory")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {what} to {path}: no directory {directory}")
    if not os.access(directory, os.W_OK) and not os.access(target, os.W_OK):
        raise UsageError(f"cannot write {what} to {path}: permission denied")
