"""Placeholders: ``{host}``, ``{index}``, ``{step}``, ``{run}``, ``{session}`` in a plan's words.

A step's or monitor's ``args``, ``server_args``, ``command``, ``executable``, ``env`` values and
jobfile text may name per-host values, so that four clients of one shared file system each
write their own file (``--filename=/mnt/cephfs/bench-{host}.dat``). The loader checks every
placeholder (``check_text``: an unknown one is a ``PlanError`` at its key's line, or the
jobfile's line); ``substitute`` fills them in when the command lines are built, per host and
per run.

The escape: ``{{`` is a literal ``{`` (``{{host}`` gives the text ``{host}``). A brace that does
not start ``{NAME}`` is kept as written (awk's ``{print $1}``, ``a{1,2}``), and so is ``${NAME}``
(a shell or fio environment variable), so most existing text needs no change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

#: Every placeholder, and what it is (docs/plans.md has the same table).
PLACEHOLDERS = {
    "host": "the host's name in the plan",
    "index": "the host's position in the step's host list, from 0 (iperf: the server is 0)",
    "step": "the step's name (a sweep's step: with its values, e.g. 'randread bs=4k')",
    "run": "the run's number among the step's repeats, from 1",
    "session": "the session's name",
}
#: Placeholders that have no meaning in a monitor, which runs across every step.
STEP_ONLY = frozenset({"step", "run"})

# ``{{`` (the escape), ``${`` (a variable, kept), or ``{NAME}``; anything else is literal.
_TOKEN = re.compile(r"\{\{|\$\{|\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Unknown:
    """A placeholder that cannot be filled: its name, where it is, and why."""

    name: str
    offset: int
    reason: str


def names_in(text: str) -> list[tuple[str, int]]:
    """Every ``{NAME}`` of ``text`` (escapes and ``${...}`` left out), with its offset."""
    return [(m.group(1), m.start()) for m in _TOKEN.finditer(text) if m.group(1)]


def has_placeholders(text: str) -> bool:
    return bool(names_in(text))


def check_text(text: str, *, monitor: bool = False) -> Unknown | None:
    """The first placeholder of ``text`` that is unknown (or a step's in a monitor)."""
    for name, offset in names_in(text):
        if name not in PLACEHOLDERS:
            return Unknown(name, offset, f"{{{name}}} is not a placeholder")
        if monitor and name in STEP_ONLY:
            return Unknown(name, offset, f"{{{name}}} has no meaning in a monitor, which runs "
                                         "for the whole session")
    return None


def hint(unknown: Unknown) -> str:
    """What to write instead, for a message."""
    if unknown.name in PLACEHOLDERS:
        return "monitors take {host}, {index} and {session}"
    return (f"placeholders are {', '.join('{' + p + '}' for p in PLACEHOLDERS)}; write "
            f"{{{{{unknown.name}}} for the literal text {{{unknown.name}}}")


def substitute(text: str, values: Mapping[str, str]) -> str:
    """``text`` with its placeholders filled from ``values`` and ``{{`` made ``{``."""
    def one(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "{{":
            return "{"
        name = match.group(1)
        if name is None:
            return whole
        return values.get(name, whole)
    return _TOKEN.sub(one, text)


def values_for(*, host: str, index: int, session: str, step: str | None = None,
               run: int | None = None) -> dict[str, str]:
    """The placeholder values of one host (and one run of a step)."""
    out = {"host": host, "index": str(index), "session": session}
    if step is not None:
        out["step"] = step
    if run is not None:
        out["run"] = str(run)
    return out
