"""A session's timeline: its steps, notable events and places, as replay and ``dump`` name them.

``Timeline`` is what replay's timeline bar shows (the span, each step's run, the events worth a
mark, the gaps); ``parse_position`` turns a place as a user types it (``90``, ``5m``,
``1h30m``, ``50%``, ``14:05``, an ISO 8601 time) into epoch seconds (replay's ``g``, ``dump
--from/--to``); ``steps_from_events`` finds each run of a step in the events; ``real_gaps``
the gaps in a host's data that are gaps (not the session's end).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.store.recording import Gap
from benchtui.store.recording.stats import GAP_SECONDS

#: Event kinds that ``next_event``/``prev_event`` stop at and the timeline marks, besides any
#: warning or error.
NOTABLE_KINDS = frozenset({ev.SESSION_START, ev.SESSION_END, ev.STEP_START, ev.STEP_END,
                           ev.MARK})
_DURATION = re.compile(r"(?:(\d+(?:\.\d*)?)h)?(?:(\d+(?:\.\d*)?)m)?(?:(\d+(?:\.\d*)?)s?)?")
_TIME_OF_DAY = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


@dataclass(frozen=True, slots=True)
class TimelineStep:
    """One run of a step on the timeline; ``t1`` is None when the recording has no end."""

    name: str
    t0: float
    t1: float | None
    #: ``outcome == "completed"``; None while it runs (no end recorded).
    ok: bool | None
    #: How it ended (``events.OUTCOMES``) and why; None without an end.
    outcome: str | None = None
    reason: str = ""
    #: Its tools that fell silent past their ``silence``: (host, tool, longest seconds).
    silences: tuple[tuple[str, str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Timeline:
    """What the timeline bar shows: the session's span, its steps, notable events and gaps."""

    start: float
    end: float
    steps: tuple[TimelineStep, ...] = ()
    events: tuple[Event, ...] = ()
    gaps: tuple[Gap, ...] = ()

    def fraction(self, t: float) -> float:
        """Where ``t`` lies between start (0) and end (1)."""
        span = self.end - self.start
        return 0.0 if span <= 0 else min(max((t - self.start) / span, 0.0), 1.0)


def is_notable(event: Event) -> bool:
    """Events worth a mark on the timeline and a stop for ``n``/``N``."""
    return event.kind in NOTABLE_KINDS or event.level in (ev.WARNING, ev.ERROR)


def parse_position(text: str, start: float, end: float | None = None) -> float:
    """A place in a session, as a user types it, to epoch seconds.

    ``90``, ``90s``, ``5m``, ``1h30m``: that long into the session (from ``start``); ``50%``:
    that fraction of it (needs ``end``); ``2025-11-22T14:05:00`` (ISO 8601, local time unless
    it has an offset or ``Z``): that moment; ``14:05`` or ``14:05:30``: that time of day, on the
    session's first day (or the next day when that is before the start). Raises ValueError
    with a sentence that says what is accepted."""
    raw = text.strip()
    spec = raw.lower()
    try:
        if spec.endswith("%"):
            if end is None:
                raise ValueError("a percentage needs the session's end")
            return start + float(spec[:-1]) / 100 * (end - start)
        match = _DURATION.fullmatch(spec)
        if match and any(match.groups()):
            h, m, s = (float(g) if g else 0.0 for g in match.groups())
            return start + h * 3600 + m * 60 + s
        if _TIME_OF_DAY.fullmatch(spec):
            day = datetime.fromtimestamp(start).astimezone()
            at = datetime.combine(day.date(), time.fromisoformat(raw), day.tzinfo)
            if at.timestamp() < start:
                at += timedelta(days=1)
            return at.timestamp()
        when = datetime.fromisoformat(raw.replace("z", "Z"))
        return when.timestamp() if when.tzinfo else when.astimezone().timestamp()
    except (ValueError, OverflowError) as exc:
        if "percentage" in str(exc):
            raise
        raise ValueError(
            f"{text!r} is not a time: give seconds into the session (90, 5m, 1h30m), a "
            "percentage (50%), a time of day (14:05) or an ISO 8601 time "
            "(2025-11-22T14:05:00)") from None


def steps_from_events(events: list[Event]) -> list[TimelineStep]:
    """Each run of a step, from its ``step_start`` and ``step_end`` events (in time order)."""
    open_steps: dict[str, int] = {}
    found: list[TimelineStep] = []
    for e in events:
        name = e.step or "?"
        if e.kind == ev.STEP_START:
            open_steps[name] = len(found)
            found.append(TimelineStep(name, e.t, None, None))
        elif e.kind == ev.STEP_END and name in open_steps:
            i = open_steps.pop(name)
            outcome = ev.outcome_of(e)
            found[i] = TimelineStep(name, found[i].t0, e.t, outcome == ev.COMPLETED, outcome,
                                    ev.reason_of(e), tuple(ev.silences_of(e)))
    return found


def monitored_hosts(plan_text: str, hosts: list[str]) -> set[str]:
    """The hosts a ``[[monitor]]`` of the plan as recorded runs on (its ``hosts``, "all" by
    default); every host when the plan cannot be read (their gaps are then all kept)."""
    try:
        monitors = tomllib.loads(plan_text).get("monitor", []) if plan_text else []
    except tomllib.TOMLDecodeError:
        return set(hosts)
    out: set[str] = set()
    for m in monitors if isinstance(monitors, list) else []:
        named = m.get("hosts", "all") if isinstance(m, dict) else "all"
        if named == "all":
            out.update(hosts)
        elif isinstance(named, str):
            out.add(named)
        elif isinstance(named, list):
            out.update(str(h) for h in named)
    return out


def _runs(events: list[Event], end: float) -> dict[str, list[tuple[float, float]]]:
    """host -> the times it ran a step's process (``run_start`` to ``run_end``; to ``end``
    for one that never ended)."""
    started: dict[tuple[str, str], float] = {}
    out: dict[str, list[tuple[float, float]]] = {}
    for e in events:
        if e.host is None or e.step is None:
            continue
        if e.kind == ev.RUN_START:
            started.setdefault((e.host, e.step), e.t)
        elif e.kind == ev.RUN_END and (e.host, e.step) in started:
            out.setdefault(e.host, []).append((started.pop((e.host, e.step)), e.t))
    for (host, _step), t0 in started.items():
        out.setdefault(host, []).append((t0, end))
    return out


def real_gaps(gaps: list[Gap], events: list[Event], *, end: float,
              monitored: set[str]) -> list[Gap]:
    """The recording's gaps (``SessionReader.gaps``: a host sent nothing for more than
    2 s) where the host had something to send: a monitored host (``monitored_hosts``)
    until the last step ended (all of the recording when a step never ended: a host lost,
    the recording cut short), a host without a monitor while it ran a step's process. The
    time the session takes to stop its monitors and close after its last step is not a
    gap, nor is a host's quiet while it runs nothing."""
    steps = steps_from_events(events)
    done = bool(steps) and all(s.t1 is not None for s in steps)
    until = max((s.t1 for s in steps if s.t1 is not None), default=end) if done else end
    runs = _runs(events, end)
    out = []
    for gap in gaps:
        spans = [(gap.t0, until)] if gap.host in monitored else runs.get(gap.host, [])
        for t0, t1 in spans:
            a, b = max(gap.t0, t0), min(gap.t1, t1)
            if b - a > GAP_SECONDS:
                out.append(Gap(gap.host, a, b))
    return out
