"""Session files: a whole session (plan, facts, events, samples with their latency histograms,
raw text output) in one append-only, crash-safe, seekable file. docs/session-format.md
describes the layout byte by byte.

Writing: ``Recorder`` subscribes to a live session's three sinks and makes what it received
durable every second (a kill -9 loses at most ~1 s); ``SessionWriter`` is the file-level writer
under it. Reading: ``SessionReader.open(path)`` (also a context manager) gives the metadata,
the events, the records in a time range in the order the live sinks received them (what replay
feeds to ``FleetState``), the samples (what ``dump`` prints) and the gaps. A damaged or
truncated file opens with its valid part and a sentence in ``warnings``; a file that is not a
session, or was written by a newer benchtui, raises ``RecordingError``.
"""

from benchtui.errors import RecordingError
from benchtui.store.recording.format import SCHEMA_VERSION
from benchtui.store.recording.model import IMPORTED, RECORDED, Gap, Record, SessionMeta
from benchtui.store.recording.reader import SessionReader
from benchtui.store.recording.statsread import Query as StatsQuery
from benchtui.store.recording.writer import Recorder, SessionWriter

__all__ = [
    "IMPORTED",
    "RECORDED",
    "SCHEMA_VERSION",
    "Gap",
    "Record",
    "Recorder",
    "RecordingError",
    "SessionMeta",
    "SessionReader",
    "SessionWriter",
    "StatsQuery",
]
