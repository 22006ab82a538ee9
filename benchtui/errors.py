"""The error tree. Errors carry data (host, command, file, line, reason, hint); the edges
(CLI, UI) turn them into one sentence for the user with ``str(error)``.

Plain classes that compare and print by their fields (``_FIELDS``) as dataclasses would:
creating a dataclass costs ~1.8 M instructions (it compiles its generated methods), and every
command, ``benchtui parse`` of a short capture included, imports this module (round 8 of
docs/benchmarks/parse_speed.md)."""

from __future__ import annotations

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import ClassVar


class BenchtuiError(Exception):
    """Base of every error benchtui raises on purpose. ``str()`` is the user-facing sentence."""

    exit_code = 1
    #: The fields set by ``__init__``, in its order: what ``==`` and ``repr`` compare and show.
    _FIELDS: ClassVar[tuple[str, ...]] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # (as a dataclass's: equal by value, mutable)

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"{type(self).__qualname__}({shown})"


class UsageError(BenchtuiError):
    """The command line itself is wrong."""

    exit_code = 2
    _FIELDS = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class InputError(BenchtuiError):
    """A file or stream the user gave cannot be read or holds nothing usable."""

    exit_code = 2
    _FIELDS = ("source", "reason", "hint")

    def __init__(self, source: str, reason: str, hint: str = "") -> None:
        self.source = source
        self.reason = reason
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.source}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


class PlanError(BenchtuiError):
    """A plan file is invalid: which file, which line, what is wrong, what to write instead."""

    exit_code = 2
    _FIELDS = ("file", "reason", "line", "hint")

    def __init__(self, file: str, reason: str, line: int | None = None,
                 hint: str = "") -> None:
        self.file = file
        self.reason = reason
        self.line = line
        self.hint = hint

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


class HostError(BenchtuiError):
    """Something about one host: unreachable, refused, missing a tool, unsafe step."""

    _FIELDS: ClassVar[tuple[str, ...]] = ("host", "reason", "hint", "command")

    def __init__(self, host: str, reason: str, hint: str = "", command: str = "") -> None:
        self.host = host
        self.reason = reason
        self.hint = hint
        self.command = command

    def __str__(self) -> str:
        text = f"{self.host}: {self.reason}"
        return f"{text} ({self.hint})" if self.hint else text


class ToolMissingError(HostError):
    """A tool the plan needs is not installed on a host."""

    _FIELDS: ClassVar[tuple[str, ...]] = (*HostError._FIELDS, "tool")

    def __init__(self, host: str, reason: str, hint: str = "", command: str = "",
                 tool: str = "") -> None:
        super().__init__(host, reason, hint, command)
        self.tool = tool


class RecordingError(BenchtuiError):
    """A session file cannot be read or written. ``exit_code`` 2 when it could not even be
    created (a path of the user's that cannot be written: a usage error, README)."""

    _FIELDS = ("path", "reason", "offset", "exit_code")

    def __init__(self, path: str, reason: str, offset: int | None = None,
                 exit_code: int = 1) -> None:
        self.path = path
        self.reason = reason
        self.offset = offset
        self.exit_code = exit_code

    def __str__(self) -> str:
        where = f"{self.path} at byte {self.offset}" if self.offset is not None else self.path
        return f"{where}: {self.reason}"


class OutputError(BenchtuiError):
    """An output benchtui was writing failed while it wrote (a full disk, an I/O error): a
    failure at run time. A path that cannot be written at all is a ``UsageError`` before
    anything runs."""

    _FIELDS = ("path", "what", "reason")

    def __init__(self, path: str, what: str, reason: str) -> None:
        self.path = path
        self.what = what
        self.reason = reason

    def __str__(self) -> str:
        return f"cannot write {self.what} to {self.path}: {self.reason}"


class CompareError(BenchtuiError):
    """Two sessions (or a session and a baseline inside it) cannot be compared: an unknown
    baseline host or step, no step in common, hosts that do not match. ``known`` lists what
    exists, so the sentence can offer it."""

    exit_code = 2
    _FIELDS = ("reason", "known", "hint")

    def __init__(self, reason: str, known: tuple[str, ...] = (), hint: str = "") -> None:
        self.reason = reason
        self.known = known
        self.hint = hint

    def __str__(self) -> str:
        text = self.reason
        if self.known:
            shown = ", ".join(self.known[:12]) + (", ..." if len(self.known) > 12 else "")
            text = f"{text} (there are: {shown})"
        return f"{text}; {self.hint}" if self.hint else text


class ExportError(BenchtuiError):
    """The metrics endpoint cannot be served: the port is taken, the address is not on this
    machine, or binding it is not allowed. Nothing was run."""

    exit_code = 2
    _FIELDS = ("address", "reason", "hint")

    def __init__(self, address: str, reason: str, hint: str = "") -> None:
        self.address = address
        self.reason = reason
        self.hint = hint

    def __str__(self) -> str:
        text = f"cannot serve metrics on {self.address}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text
