"""What ``--record`` and ``--export`` add to any command that runs a plan (run, demo, record,
serve): one place, so that every front end records and exports the same way.

The recorder subscribes to the session's sinks itself (samples, events, raw output); the
exporter reads a ``FleetState`` that the session feeds. Both are context managers: whatever
way the session ends, the file is closed and the port released.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping

from benchtui import __version__
from benchtui.errors import RecordingError
from benchtui.export.labels import matrix_of_steps
from benchtui.session.engine import Session
from benchtui.session.figure_track import FigureRecorder
from benchtui.session.ghost_digest import GhostDigest
from benchtui.store.fleet import FleetState
from benchtui.store.recording import SCHEMA_VERSION, Recorder, SessionMeta


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
            stack.enter_context(recording(session, record))
        if export:
            matrix = matrix_of_steps((s.name, s.matrix) for s in session.plan.steps)
            stack.enter_context(exporting(state or attach_state(session), export,
                                          matrix=matrix))
        yield


def _plan_text(session: Session) -> str:
    """The plan as written (re-read from its file; "" for a plan that has none)."""
    try:
        return session.plan.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


@contextlib.contextmanager
def recording(session: Session, path: str, *,
              on_close: Callable[[Recorder], None] | None = None,
              only_output: bool = False) -> Iterator[None]:
    """Record ``session`` to ``path`` while inside: the recorder takes the session's three
    sinks, and the file is closed (segment, facts, end time, index) however the block ends.
    The console's figures go with the samples (the figure track: a baseline's ghost reads
    them instead of computing them again, ``session.figure_track``). ``on_close`` sees the
    recorder once it is closed (benchmarks read its numbers).

    A write that fails (a full disk) is said at once, as a warning event; with
    ``only_output`` (``record``) the session then stops (``Session.abort``) and the error
    is not raised again at the end (the session's result says it)."""

    if os.path.isdir(path):
        name = os.path.join(path, f"{session.plan.name}.btr")
        raise RecordingError(path, f"is a directory; give a file name for the recording, e.g. "
                             f"{name}", exit_code=2)
    digest = GhostDigest()
    meta = SessionMeta(SCHEMA_VERSION, session.plan.name, session.session_id,
                       _plan_text(session), str(session.plan.path), time.time(), None,
                       hosts=list(session.transports), writer=__version__,
                       histogram_bits=session.histogram_bits, figures=digest.name)
    stopped = False

    def failed(error: RecordingError) -> None:  # (the recorder's thread)
        session.call_soon_threadsafe(lambda: tell(error))

    def tell(error: RecordingError) -> None:
        nonlocal stopped
        cannot = (f"the recording {path} can no longer be written: "
                  f"{error.reason.removeprefix('cannot write: ')}")
        if only_output:
            stopped = True
            session.warn(f"{cannot}: the session stops, the recording was its only output")
            session.abort(cannot)
        else:
            session.warn(f"{cannot}: it ends here and the run goes on")

    recorder = Recorder(path, meta, on_error=failed)
    figures = FigureRecorder(digest, recorder.on_figures,
                             on_error=lambda: recorder.set_meta(figures=None))
    session.add_sample_sink(recorder.on_samples)
    session.add_event_sink(recorder.on_event)
    session.add_output_sink(recorder.on_output)
    session.add_sample_sink(figures.on_samples)
    session.add_event_sink(figures.on_event)
    try:
        yield
    finally:
        # Facts also arrive as ``facts`` events; this covers a sink added after they came.
        for host, facts in session.facts.items():
            recorder.meta.facts.setdefault(host, dict(facts))
        try:
            recorder.close()
        except RecordingError:
            if not stopped:
                raise
        if on_close is not None:
            on_close(recorder)


@contextlib.contextmanager
def exporting(state: FleetState, listen: str,
              matrix: Mapping[str, Mapping[str, str]] | None = None) -> Iterator[None]:
    """Serve ``state`` on ``http://LISTEN/metrics`` while inside; the port is released on the
    way out, however the block ends. Prints where (and a warning when other machines can
    reach it) on stderr. Raises ``UsageError`` for a malformed address and ``ExportError``
    when it cannot be bound, before anything runs."""
    # (imported here: prometheus_client only for the commands that export)
    from benchtui.export.http import exposure_warning, parse_listen
    from benchtui.export.http_server import MetricsServer
    from benchtui.export.prometheus import FleetCollector

    host, port = parse_listen(listen)
    collector = FleetCollector(state, matrix=matrix)
    server = MetricsServer(collector, host, port)
    collector.attach()
    try:
        print(f"benchtui: serving metrics on {server.url}", file=sys.stderr)
        warning = exposure_warning(server.address, server.host)
        if warning:
            print(f"benchtui: warning: {warning}", file=sys.stderr)
        sys.stderr.flush()
        yield
    finally:
        collector.detach()
        server.close()
