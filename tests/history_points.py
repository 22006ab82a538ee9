"""Catalogs filled with known points, for the analysis and gate tests: runs, series and
points written with the catalog's own tables (the figures of real sessions are
tests/test_history_fio.py's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchtui.history.catalog import Catalog, open_catalog

PLAN = "nightly"
T0 = 1_790_000_000.0
Key = tuple[str, str, str, str]


def series(cat: Catalog, keys: Sequence[Key]) -> dict[Key, int]:
    """Make the series (step, metric, op, scope) of ``PLAN``; their ids."""
    ids = {}
    for sid, (step, metric, op, scope) in enumerate(keys, 1):
        cat.execute("INSERT INTO series (id, plan, step, args_key, args, metric, op, scope, "
                    "env_key) VALUES (?, ?, ?, 'a', '{}', ?, ?, ?, 'e')",
                    (sid, PLAN, step, metric, op, scope))
        ids[(step, metric, op, scope)] = sid
    return ids


def night(cat: Catalog, i: int, values: Mapping[int, float], *, outcome: str = "completed",
          attributes: Mapping[str, str] | None = None) -> None:
    """Run ``i`` (started at T0 + i days; commit c<i> unless ``attributes`` say otherwise)
    with its points (series id -> value), its steps ended with ``outcome``."""
    cat.execute("INSERT INTO runs (id, session_key, plan, session_name, path, started, "
                "ended, outcome, source, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (i, f"s{i}", PLAN, PLAN, f"/var/tmp/night-{i:03d}.btr", T0 + i * 86400,
                 T0 + i * 86400 + 600, outcome, "recorded", T0))
    cat.executemany("INSERT INTO run_attributes (run_id, name, value) VALUES (?, ?, ?)",
                    [(i, k, v) for k, v in (attributes or {"commit": f"c{i}"}).items()])
    cat.executemany("INSERT INTO points (series_id, run_id, value, repeats, outcome) "
                    "VALUES (?, ?, ?, 1, ?)", [(sid, i, v, outcome) for sid, v in values.items()])
    cat.commit()


def fill(url: str, values: Mapping[Key, Sequence[float]], *,
         outcomes: Mapping[int, str] | None = None) -> Catalog:
    """A catalog with one run per night (run i started at T0 + i days, commit c<i>) and,
    for each (step, metric, op, scope), its values night by night. ``outcomes``: run
    number (1-based) -> how its steps ended (default completed)."""
    cat = open_catalog(url)
    ids = series(cat, list(values))
    nights = max(len(v) for v in values.values())
    for i in range(1, nights + 1):
        night(cat, i, {ids[k]: v[i - 1] for k, v in values.items() if len(v) >= i},
              outcome=(outcomes or {}).get(i, "completed"))
    return cat
