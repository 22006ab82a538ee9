"""Saved tool output read within bounds (``import``, ``parse FILE``).

What either command takes is bounded: a regular file of at most ``MAX_INPUT_BYTES`` (512
MiB: a day of ``iostat -x 1`` on a hundred devices is about half that). ``parse`` reads a
file whole (``read_input``); ``import`` reads it a block at a time (``import_text``) but
takes no bigger file. A device (``/dev/zero``, ``/dev/urandom``), a socket or anything
else that is not a file is refused before a byte is read, and so is a bigger file: one
sentence each (``InputError``, exit 2), never a ``MemoryError`` after minutes of reading. A
pipe (``<(fio ...)``) is for ``parse``, which reads it as the live stream it is
(``is_stream``); ``import`` refuses it. A file that grows while it is read is cut at the
limit and refused too.
"""

from __future__ import annotations

import os
import stat

from benchtui.errors import InputError

#: The largest saved output read whole (bytes). docs/import.md, README (parse).
MAX_INPUT_BYTES = 512 * 2**20


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def input_error(path: str, exc: OSError) -> InputError:
    """The sentence for an input that cannot be opened or read."""
    if isinstance(exc, FileNotFoundError):
        return InputError(path, "no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(path, "is a directory, not a file of tool output")
    if isinstance(exc, PermissionError):
        return InputError(path, "permission denied")
    return InputError(path, exc.strerror or "cannot be read")


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as exc:
        raise input_error(path, exc) from None


def is_stream(path: str) -> bool:
    """True for a pipe (a FIFO, ``<(command)``): read as it comes, not whole."""
    return path == "-" or stat.S_ISFIFO(_stat(path).st_mode)


def check_input(path: str, *, hint: str, limit: int = MAX_INPUT_BYTES) -> int:
    """The size of the regular file ``path``; ``InputError`` for anything else or anything
    bigger than ``limit``. ``hint`` says what to do with a bigger file (it differs per
    command)."""
    st = _stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(path, "is a directory, not a file of tool output")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a pipe" if stat.S_ISFIFO(st.st_mode) else "a socket"
                if stat.S_ISSOCK(st.st_mode) else "a device")
        raise InputError(path, f"is {kind}, not a file of saved output", "save it to a file "
                         "first")
    if st.st_size > limit:
        raise InputError(path, f"is {_size(st.st_size)}, more than the {_size(limit)} "
                         "benchtui reads whole", hint)
    return st.st_size


def grew(path: str, *, hint: str, limit: int = MAX_INPUT_BYTES) -> InputError:
    """The sentence for a file that grew past ``limit`` while it was read."""
    return InputError(path, f"grew past {_size(limit)} while it was read", hint)


def read_input(path: str, *, hint: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``; ``InputError`` for anything else or anything
    bigger than ``limit`` (``check_input``)."""
    check_input(path, hint=hint, limit=limit)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise input_error(path, exc) from None
    if len(data) > limit:
        raise grew(path, hint=hint, limit=limit)
    return data
