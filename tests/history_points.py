"""Catalogs filled with known points, for the analysis and gate tests: runs, series and
points written with the catalog's own tables (the figures of real sessions are
tests/test_history_fio.py's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchtui.history.catalog import Catalog, open_catalog

PLAN = "nightly"
T0 = 1_790_000_000.0


def fill(url: str, series: Mapping[tuple[str, str, str, str], Sequence[float]], *,
         outcomes: Mapping[int, str] | None = None) -> Catalog:
    """A catalog with one run per night (run i started at T0 + i days, commit c<i>) and,
    for each (step, metric, op, scope), its values night by night. ``outcomes``: run
    number (1-based) -> how its steps ended (default completed)."""
    cat = open_catalog(url)
    nights = max(len(v) for v in series.values())
    for i in range(1, nights + 1):
        outcome = (outcomes or {}).get(i, "completed")
        cat.execute("INSERT INTO runs (id, session_key, plan, session_name, path, started, "
                    "ended, outcome, source, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (i, f"s{i}", PLAN, PLAN, f"/var/tmp/night-{i:03d}.btr", T0 + i * 86400,
                     T0 + i * 86400 + 600, outcome, "recorded", T0))
        cat.execute("INSERT INTO run_attributes (run_id, name, value) VALUES (?, ?, ?)",
                    (i, "commit", f"c{i}"))
    for sid, ((step, metric, op, scope), values) in enumerate(series.items(), 1):
        cat.execute("INSERT INTO series (id, plan, step, args_key, args, metric, op, scope, "
                    "env_key) VALUES (?, ?, ?, 'a', '{}', ?, ?, ?, 'e')",
                    (sid, PLAN, step, metric, op, scope))
        cat.executemany("INSERT INTO points (series_id, run_id, value, repeats, outcome) "
                        "VALUES (?, ?, ?, 1, ?)",
                        [(sid, i, v, (outcomes or {}).get(i, "completed"))
                         for i, v in enumerate(values, 1)])
    cat.commit()
    return cat
