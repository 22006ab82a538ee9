"""What a session file describes, as plain data: its metadata, the gaps in a host's data, and
the records it holds (the very objects the live session handed to its sinks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from benchtui.model.events import Event, OutputLines
from benchtui.model.sample import Sample

#: One thing the live session handed to a sink: a batch of samples (as one ``on_samples``
#: call received it), an event, or raw output lines. Replay hands them to ``FleetState`` again.
Record = list[Sample] | Event | OutputLines

#: ``SessionMeta.source``: a live session's recording, or a session made from saved output.
RECORDED: Final = "recorded"
IMPORTED: Final = "imported"


@dataclass(slots=True)
class SessionMeta:
    """What a session file says about itself (written at the start, completed at the end)."""

    schema_version: int
    name: str
    session_id: str
    #: The plan TOML exactly as it was read when the session started ("" when unknown).
    plan_text: str
    plan_path: str | None
    #: Epoch seconds when the recording started.
    started: float
    #: Epoch seconds when the recording was closed; None when the recorder died (kill -9).
    ended: float | None
    hosts: list[str] = field(default_factory=list)
    #: host -> the facts gathered on it (benchtui.session.facts.HostFacts as a dict).
    facts: dict[str, dict[str, object]] = field(default_factory=dict)
    #: The benchtui version that wrote the file.
    writer: str = ""
    #: The resolution the session kept its latency histograms at: sub-bucket bits per power
    #: of two of fio's bucket scheme (6: fio's own). None: not said (then fio's own).
    histogram_bits: int | None = None
    #: How the session was made: RECORDED (a live session's recording) or IMPORTED
    #: (``benchtui import``: saved tool output, with synthetic times). Files that do not say
    #: are recorded ones.
    source: str = RECORDED
    #: An imported session's files, in the order given: {"path", "bytes", "sha256"} each.
    imported_from: list[dict[str, object]] = field(default_factory=list)
    #: The map file an import cut its reports with (docs/import.md): {"path", "bytes",
    #: "sha256", "text"}; None for plain outputs and for recorded sessions.
    import_map: dict[str, object] | None = None
    #: The clock period (seconds) at which the writer cut stats blocks (``blocks.py``): a
    #: window split at a multiple of it is read from the blocks. None: the file has none.
    stats_seconds: float | None = None
    #: The figure track's digest (``benchtui.session.figure_track``): the name of the
    #: figures its FIGS frames hold, computed as the recording was made. None: no track.
    figures: str | None = None

    @property
    def imported(self) -> bool:
        return self.source == IMPORTED


@dataclass(frozen=True, slots=True)
class Gap:
    """A host sent no sample from ``t0`` to ``t1`` (epoch seconds), for longer than the
    gap threshold (2 s), while the session was recording."""

    host: str
    t0: float
    t1: float

    @property
    def seconds(self) -> float:
        return self.t1 - self.t0
