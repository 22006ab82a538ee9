"""The recording ``ingest_cost.py --workload fleet --sinks record`` makes, written with the
clock made deterministic, so that two codes' files can be compared byte for byte (a change
to the recorder's live path must leave them the same):

    .venv/bin/python benchmarks/record_same_bytes.py . /tmp/new.btr
    .venv/bin/python benchmarks/record_same_bytes.py /tmp/old-checkout /tmp/old.btr
    cmp /tmp/new.btr /tmp/old.btr

The samples, events, raw lines (the recorder's filter) and the figure track of 64 hosts x 30
s; every record is dated by its sample's arrival time in the workload, and a frame is sealed
at every second.
"""

from __future__ import annotations

import os
import sys
import time
import types
from pathlib import Path
from typing import Any

CODE, OUT = sys.argv[1], sys.argv[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.argv[1:] = ["--code", CODE]  # (ingest_cost then imports benchtui from CODE)
T0 = 1_790_000_000.0

import ingest_cost  # noqa: E402

from benchtui.model import events as ev  # noqa: E402
from benchtui.model.fio_buckets import DEFAULT_BITS  # noqa: E402
from benchtui.session import figure_track, sinks  # noqa: E402
from benchtui.session.figure_track import FigureRecorder  # noqa: E402
from benchtui.session.ghost_digest import GhostDigest  # noqa: E402
from benchtui.store.recording import SCHEMA_VERSION, Recorder, SessionMeta, writer  # noqa: E402


def main() -> int:
    now = {"t": T0}
    clock = types.SimpleNamespace(time=lambda: now["t"], monotonic=time.monotonic,
                                  thread_time=time.thread_time)
    writer.time = sinks.time = figure_track.time = clock  # type: ignore[assignment]
    ingest_cost.T0 = T0
    if os.path.exists(OUT):
        os.remove(OUT)
    hosts = [f"h{i:04d}" for i in range(64)]
    meta = SessionMeta(SCHEMA_VERSION, "bench", "bench", "", "", T0, None, hosts=hosts,
                       writer="bench", histogram_bits=DEFAULT_BITS, figures=GhostDigest.name)
    recorder = Recorder(OUT, meta, flush_seconds=1e9)  # (sealed below, each second)
    figures = FigureRecorder(GhostDigest(), recorder.on_figures)
    deliver = sinks.Sinks.deliver
    state: dict[str, Any] = {"started": False, "second": None}

    def delivered(self: sinks.Sinks, got: Any, t: float, **where: Any) -> None:
        if not state["started"]:  # these sinks only (not the workload's own recorder)
            state["started"] = True
            self.samples[:] = [recorder.on_samples, figures.on_samples]
            self.events[:] = [recorder.on_event, figures.on_event]
            self.output[:] = [recorder.on_output]
            self.emit(ev.STEP_START, "step", step="s", hosts=hosts, tool="fio")
        now["t"] = t
        if state["second"] is not None and int(t) != state["second"]:
            recorder.flush()
        state["second"] = int(t)
        deliver(self, got, t, **where)

    sinks.Sinks.deliver = delivered  # type: ignore[method-assign]
    ingest_cost.measure(types.SimpleNamespace(
        workload="fleet", hosts=64, seconds=30, sinks=["record"], chunk=32 << 10,
        parse_workers=0, profile=None, wall=False, gc="code", parts=False))
    recorder.close()
    print(OUT, os.path.getsize(OUT), "bytes, benchtui from", Path(ev.__file__).parents[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
