"""What happens during a session, as data: the engine emits events, the edges word them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

INFO: Final = "info"
WARNING: Final = "warning"
ERROR: Final = "error"

# Event kinds.
HOST_STATE: Final = "host_state"      # connecting, up, reconnecting, down, failed
FACTS: Final = "facts"
PREFLIGHT: Final = "preflight"
SESSION_START: Final = "session_start"
SESSION_END: Final = "session_end"
STEP_START: Final = "step_start"
STEP_END: Final = "step_end"
RUN_START: Final = "run_start"        # one process on one host started
RUN_END: Final = "run_end"
PARSE_WARNING: Final = "parse_warning"
MARK: Final = "mark"                  # a user's mark
SESSION_WARNING: Final = "session_warning"  # the controller's own (a recording not written)
#: The controller is behind (its figures late), still is, or caught up (``session.lag``):
#: ``seconds`` behind now, ``worst``, ``behind``; ``said`` False: a figure only, not for logs.
CONTROLLER_LAG: Final = "controller_lag"


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened. ``t`` is Unix epoch seconds on the controller."""

    t: float
    kind: str
    message: str
    level: str = INFO
    host: str | None = None
    step: str | None = None
    data: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"t": self.t, "kind": self.kind, "level": self.level,
                                  "message": self.message}
        if self.host is not None:
            out["host"] = self.host
        if self.step is not None:
            out["step"] = self.step
        if self.data:
            out["data"] = self.data
        return out


def is_said(event: Event) -> bool:
    """Whether ``event`` is for people (a log, stderr), not only a figure for a display."""
    return event.data.get("said", True) is not False


@dataclass(frozen=True, slots=True)
class OutputLines:
    """Raw lines a tool printed on a host, as they arrived (for logs and recordings).
    ``t`` is Unix epoch seconds on the controller when they arrived. ``lines``: a tuple, or
    live a ``text_lines.TextLines`` (the chunk's text, split when read); not changed after."""

    t: float
    host: str
    step: str
    tool: str
    role: str
    lines: Sequence[str]


# --- how a step, a run or a session ended (``step_end``/``run_end``/``session_end`` data) ----
SILENCE: Final = "silence"            # a tool printed nothing for longer than its ``silence``

#: It ran to its end (exit status 0, or stopped by benchtui at its ``duration``).
COMPLETED: Final = "completed"
#: It ended by itself with an exit status other than 0, or its host failed under it.
FAILED: Final = "failed"
#: The user (Ctrl-C, a quit), a signal (SIGTERM, SIGHUP) or an output that broke ended it.
INTERRUPTED: Final = "interrupted"
#: The host's watchdog stopped it: the controller was gone for longer than its grace.
WATCHDOG: Final = "watchdog"
#: The host's ``timeout`` ended it at its deadline (the plan's ``timeout``, or derived).
DEADLINE: Final = "deadline"
OUTCOMES: Final = (COMPLETED, FAILED, INTERRUPTED, WATCHDOG, DEADLINE)
#: Which outcome names a step whose runs ended differently: the first of these found.
_WORST_FIRST: Final = (INTERRUPTED, WATCHDOG, DEADLINE, FAILED, COMPLETED)


def outcome_of(event: Event) -> str:
    """How the step, run or session an end event closes ended: its ``outcome``, or, for a
    recording made before outcomes were written, what its level and ``interrupted`` said
    (an error: failed; interrupted: interrupted; else completed)."""
    given = event.data.get("outcome")
    if isinstance(given, str) and given in OUTCOMES:
        return given
    if event.data.get("interrupted"):
        return INTERRUPTED
    return FAILED if event.level == ERROR else COMPLETED


def reason_of(event: Event) -> str:
    """The sentence an end event gives for its outcome ("" when it has none)."""
    reason = event.data.get("reason")
    return reason if isinstance(reason, str) else ""


def silences_of(event: Event) -> list[tuple[str, str, float]]:
    """A step end's tools that fell silent past their ``silence``: (host, tool, longest
    seconds without output)."""
    found = event.data.get("silences")
    out: list[tuple[str, str, float]] = []
    if isinstance(found, list):
        for each in found:
            if isinstance(each, dict) and isinstance(each.get("seconds"), int | float):
                out.append((str(each.get("host", "?")), str(each.get("tool", "?")),
                            float(each["seconds"])))
    return out


def worst(outcomes: list[str]) -> str:
    """The outcome of a whole made of parts that ended as ``outcomes`` (completed when
    empty): a step is only completed when every run of it is."""
    for outcome in _WORST_FIRST:
        if outcome in outcomes:
            return outcome
    return COMPLETED

