"""One session file, open, to read the per-second series of its rows' runs (and the
fleet's latency of the same runs, computed on the same pass: ``fleet_series``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from benchtui.report.fleet_series import FleetLatency, fleet_latency, starts_of
from benchtui.report.model import Row
from benchtui.report.series import Points, RunSeries, run_series
from benchtui.session.compare import SessionLayout
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

    def series(self, rows: Iterable[Row]) -> list[RunSeries]:
        """The series of each row's runs (rows with no run are left out). The fleet's
        latency of those runs is computed on the way (``fleet``)."""
        rows = [r for r in rows if r.runs]
        fleet = FleetLatency(starts_of(rows))
        found = run_series(self.reader, rows, also=fleet.feed)
        self._fleet = (_runs(rows), fleet)
        return found

    def fleet(self, rows: Sequence[Row]) -> dict[str, dict[str, Points]]:
        """``fleet_latency`` of these rows: from the last ``series`` read when it read the
        same runs (the same samples: no second decoding), else read."""
        rows = [r for r in rows if r.runs]
        kept = self._fleet
        if len(rows) >= 2 and kept is not None and kept[0] == _runs(rows) \
                and not kept[1].late:
            return kept[1].lines()
        return fleet_latency(self.reader, rows)


def _runs(rows: Sequence[Row]) -> frozenset[tuple[str, str]]:
    return frozenset(starts_of(rows))
