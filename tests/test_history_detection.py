"""The key rows of docs/history.md's table (benchmarks/history_detection.py, the same
functions on fewer series, seeded): the real gate, night after night, on synthetic series
with 2% noise and one night in 20 10-40% off.

- a 10% drop is caught by its 5th run at the new level in at least 95% of series;
- a flat series gates falsely at most once per 100 nights.
"""

from __future__ import annotations

from benchmarks.history_detection import detection_row, flat_row
from benchtui.history.analysis import Options


def test_a_ten_percent_drop_is_caught_by_its_fifth_run_in_95_percent_of_series() -> None:
    # the nights before the drop are gated once (as a catalog filled by history import),
    # the 5 after it one by one
    rows = detection_row(-0.10, 300, 2810, Options(), after=5, gate_before=False)
    caught = [c for c in rows if c.delay is not None]
    assert len(caught) >= 0.95 * len(rows), f"{len(caught)} of {len(rows)}"
    # the size the gate reports is the drop's (5 runs of 2% noise: within a point or two)
    errors = sorted(abs(c.reported + 10.0) for c in caught if c.reported is not None)
    assert errors[len(errors) // 2] < 1.0, errors


def test_a_flat_series_gates_falsely_at_most_once_per_100_nights() -> None:
    false = flat_row(12, 2811, Options(), nights=100)
    assert sum(false) <= len(false), false
