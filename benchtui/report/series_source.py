"""One session file, open, to read the per-second series of its rows' runs (and the
fleet's latency of the same runs, computed on the same pass: ``fleet_series``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from benchtui.report.fleet_series import FleetLatency, fleet_latency
from benchtui.report.model import Row
from benchtui.report.series import Points, RunSeries, run_series
from benchtui.session.compare import RunWindow, SessionLayout
from benchtui.store.recording import SessionReader


class SeriesSource:
    """One session file, open, to read the series of its rows' runs."""

    def __init__(self, path: str) -> None:
        self.reader = SessionReader.open(path)
        self.layout = SessionLayout.from_events(self.reader.events())
        #: The runs of the last ``series`` read, and their fleet's latency.
        self._fleet: tuple[frozenset[tuple[str, str]], FleetLatency] | None = None

    def close(self) -> None:
        self.reader.close()

    def __enter__(self) -> SeriesSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_of(self, row: Row) -> RunWindow | None:
        return next((r for r in self.layout.runs if r.label == row.label
                     and r.host == row.host), None)

    def series(self, rows: Iterable[Row]) -> list[RunSeries]:
        """The series of each row's run (rows with no run in the file are left out). The
        fleet's latency of those runs is computed on the way (``fleet``)."""
        pairs = [(row, run) for row in rows for run in (self.run_of(row),) if run is not None]
        fleet = FleetLatency(run.t0 for _row, run in pairs)
        found = run_series(self.reader, pairs, also=fleet.feed)
        self._fleet = (_runs(pairs), fleet)
        return found

    def fleet(self, pairs: Sequence[tuple[Row, RunWindow]]) -> dict[str, dict[str, Points]]:
        """``fleet_latency`` of these runs: from the last ``series`` read when it read
        the same runs (the same samples: no second decoding), else read."""
        kept = self._fleet
        if len(pairs) >= 2 and kept is not None and kept[0] == _runs(pairs) \
                and not kept[1].late:
            return kept[1].lines()
        return fleet_latency(self.reader, pairs)


def _runs(pairs: Sequence[tuple[Row, RunWindow]]) -> frozenset[tuple[str, str]]:
    return frozenset((run.host, run.label) for _row, run in pairs)
