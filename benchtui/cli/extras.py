"""What ``--record`` and ``--export`` add to any command that runs a plan (run, demo, record,
serve): one place, so that every front end records and exports the same way.

The recorder subscribes to the session's sinks itself (samples, events, raw output); the
exporter reads a ``FleetState`` that the session feeds. Both are context managers: whatever
way the session ends, the file is closed and the port released.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from benchtui.export.labels import matrix_of_steps
from benchtui.session.engine import Session
from benchtui.store.fleet import FleetState


def attach_state(session: Session, state: FleetState | None = None) -> FleetState:
    """A ``FleetState`` fed by the session's three sinks (made if not given)."""
    if state is None:
        state = FleetState(session.plan.name, session.transports)
    session.add_sample_sink(state.on_samples)
    session.add_event_sink(state.on_event)
    session.add_output_sink(state.on_output)
    return state


@contextlib.contextmanager
def session_extras(session: Session, state: FleetState | None, *, record: str | None,
                   export: str | None) -> Iterator[None]:
    """Record the session to ``record`` and/or serve ``state`` on ``export`` while inside."""
    with contextlib.ExitStack() as stack:
        if record:
            from benchtui.cli.record_cmd import recording

            stack.enter_context(recording(session, record))
        if export:
            from benchtui.cli.serve_cmd import exporting

            matrix = matrix_of_steps((s.name, s.matrix) for s in session.plan.steps)
            stack.enter_context(exporting(state or attach_state(session), export,
                                          matrix=matrix))
        yield
