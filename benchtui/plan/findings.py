"""What preflight finds: a problem before anything runs, on a host (or the plan), about a step
or monitor. Errors stop a host; warnings are said."""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Finding:
    """One problem found before running: on a host (or the plan), about a step or monitor."""

    host: str | None
    step: str | None
    severity: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message
