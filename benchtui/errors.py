"""The error tree. Errors carry data (host, command, file, line, reason, hint); the edges
(CLI, UI) turn them into one sentence for the user with ``str(error)``."""

from __future__ import annotations

from dataclasses import dataclass


class BenchtuiError(Exception):
    """Base of every error benchtui raises on purpose. ``str()`` is the user-facing sentence."""

    exit_code = 1


@dataclass
class UsageError(BenchtuiError):
    """The command line itself is wrong."""

    reason: str
    exit_code = 2

    def __str__(self) -> str:
        return self.reason


@dataclass
class InputError(BenchtuiError):
    """A file or stream the user gave cannot be read or holds nothing usable."""

    source: str
    reason: str
    hint: str = ""
    exit_code = 2

    def __str__(self) -> str:
        text = f"{self.source}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


@dataclass
class PlanError(BenchtuiError):
    """A plan file is invalid: which file, which line, what is wrong, what to write instead."""

    file: str
    reason: str
    line: int | None = None
    hint: str = ""
    exit_code = 2

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


@dataclass
class HostError(BenchtuiError):
    """Something about one host: unreachable, refused, missing a tool, unsafe step."""

    host: str
    reason: str
    hint: str = ""
    command: str = ""

    def __str__(self) -> str:
        text = f"{self.host}: {self.reason}"
        return f"{text} ({self.hint})" if self.hint else text


@dataclass
class ToolMissingError(HostError):
    """A tool the plan needs is not installed on a host."""

    tool: str = ""


@dataclass
class RecordingError(BenchtuiError):
    """A session file cannot be read or written. ``exit_code`` 2 when it could not even be
    created (a path of the user's that cannot be written: a usage error, README)."""

    path: str
    reason: str
    offset: int | None = None
    exit_code: int = 1

    def __str__(self) -> str:
        where = f"{self.path} at byte {self.offset}" if self.offset is not None else self.path
        return f"{where}: {self.reason}"


@dataclass
class OutputError(BenchtuiError):
    """An output benchtui was writing failed while it wrote (a full disk, an I/O error): a
    failure at run time. A path that cannot be written at all is a ``UsageError`` before
    anything runs."""

    path: str
    what: str
    reason: str

    def __str__(self) -> str:
        return f"cannot write {self.what} to {self.path}: {self.reason}"


@dataclass
class CompareError(BenchtuiError):
    """Two sessions (or a session and a baseline inside it) cannot be compared: an unknown
    baseline host or step, no step in common, hosts that do not match. ``known`` lists what
    exists, so the sentence can offer it."""

    reason: str
    known: tuple[str, ...] = ()
    hint: str = ""
    exit_code = 2

    def __str__(self) -> str:
        text = self.reason
        if self.known:
            shown = ", ".join(self.known[:12]) + (", ..." if len(self.known) > 12 else "")
            text = f"{text} (there are: {shown})"
        return f"{text}; {self.hint}" if self.hint else text


@dataclass
class ExportError(BenchtuiError):
    """The metrics endpoint cannot be served: the port is taken, the address is not on this
    machine, or binding it is not allowed. Nothing was run."""

    address: str
    reason: str
    hint: str = ""
    exit_code = 2

    def __str__(self) -> str:
        text = f"cannot serve metrics on {self.address}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text
