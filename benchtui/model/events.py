"""What happens during a session, as data: the engine emits events, the edges word them."""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class OutputLines:
    """Raw lines a tool printed on a host, as they arrived (for logs and recordings).
    ``t`` is Unix epoch seconds on the controller when they arrived."""

    t: float
    host: str
    step: str
    tool: str
    role: str
    lines: tuple[str, ...]
