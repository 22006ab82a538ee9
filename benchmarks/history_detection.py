"""What the nightly gate catches, how fast, and what it misses (issue 28): the real
``history gate`` run night after night on synthetic series with noise and outliers.

Each series is one fleet IOPS series of a plan in a real SQLite catalog (a file in memory),
written through the catalog's own tables; every night adds a run and its point, then runs
``benchtui.history.gate.gate`` as ``benchtui history gate`` does (the same function, without
the process start-up), which keeps what it gated in the catalog as a nightly job's does.

- A night's value: the level x (1 + Gaussian noise of ``--noise``, 2%); with probability
  ``1 / --outlier-every`` (20) the night is a bad (or lucky) one instead: 10% to 40% off
  the level, either way.
- *Detection*: ``--before`` nights (40) at 1000, then the level drops by 5%, 10% or 15%
  for up to 20 nights. The change is caught on the first night the gate exits 3 with a
  regression within 2 runs of the first night at the new level; its delay is the number of
  runs at the new level by then (the documented confirmation is 5). A gate that exits 3
  before the change is a false gate. The size reported is the fleet change on the gate's
  line, to compare with the truth.
- *False alarms*: flat series of ``--nights`` nights (100) with the same noise and
  outliers; every night the gate exits 3 is a false gate.

    .venv/bin/python benchmarks/history_detection.py [--series 200] [--seed 28]
        [--min-change PCT]

It prints a Markdown table (docs/history.md holds one); tests/test_history_detection.py
holds its key rows on fewer series, with the same functions.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.history.analysis import Options  # noqa: E402
from benchtui.history.catalog import open_catalog  # noqa: E402
from benchtui.history.gate import EXIT_REGRESSED, GateResult, gate  # noqa: E402

LEVEL = 1000.0
PLAN = "nightly"
#: A change is the one injected when the gate places it within this many runs of it.
NEAR = 2


def series(rng: random.Random, nights: int, *, change_at: int | None = None,
           shift: float = 0.0, noise: float = 0.02, outlier_every: int = 20) -> list[float]:
    """``nights`` values: LEVEL (x (1 + shift) from index ``change_at`` on) with relative
    Gaussian noise, and one night in ``outlier_every`` 10-40% off, either way."""
    out = []
    for i in range(nights):
        level = LEVEL * (1 + shift) if change_at is not None and i >= change_at else LEVEL
        if outlier_every and rng.random() < 1 / outlier_every:
            out.append(level * (1 + rng.choice((-1, 1)) * rng.uniform(0.10, 0.40)))
        else:
            out.append(level * (1 + rng.gauss(0.0, noise)))
    return out


class Nightly:
    """A catalog (a SQLite file of its own, in memory where there is a /dev/shm) with one
    fleet IOPS series, one run a night, gated every night."""

    def __init__(self, options: Options) -> None:
        self.options = options
        shm = Path("/dev/shm")
        self._dir = tempfile.TemporaryDirectory(prefix="benchtui-detection-",
                                                dir=shm if shm.is_dir() else None)
        self.catalog = open_catalog(str(Path(self._dir.name) / "history.sqlite"))
        self.catalog.execute(
            "INSERT INTO series (id, plan, step, args_key, args, metric, op, scope, env_key) "
            "VALUES (1, ?, 'randread', 'a', '{}', 'iops', 'read', '(fleet)', 'e')", (PLAN,))
        self.nights = 0

    def add(self, values: Sequence[float]) -> None:
        for v in values:
            self.nights += 1
            n = self.nights
            self.catalog.execute(
                "INSERT INTO runs (id, session_key, plan, session_name, path, started, ended, "
                "outcome, source, added) VALUES (?, ?, ?, ?, ?, ?, ?, 'completed', "
                "'recorded', 0)", (n, f"s{n}", PLAN, PLAN, f"night-{n:03d}.btr",
                                   n * 86400.0, n * 86400.0 + 600))
            self.catalog.execute("INSERT INTO points (series_id, run_id, value, repeats, "
                                 "outcome) VALUES (1, ?, ?, 1, 'completed')", (n, v))
        self.catalog.commit()

    def gate(self) -> GateResult:
        return gate(self.catalog, PLAN, self.options)

    def close(self) -> None:
        self.catalog.close()
        self._dir.cleanup()


@dataclass(slots=True)
class Caught:
    #: Runs at the new level when the gate caught the change (None: not within ``after``).
    delay: int | None
    #: The fleet change the gate reported (percent), when caught.
    reported: float | None
    #: Nights the gate exited 3 before the change (false gates).
    false_before: int


def detect(values: Sequence[float], change_at: int, options: Options, *,
           gate_before: bool = True) -> Caught:
    """Gate ``values`` night by night (``gate_before`` False: the nights before the change
    are added at once and gated once, as a catalog filled by ``history import`` is)."""
    nightly = Nightly(options)
    false = 0
    try:
        if gate_before:
            for v in values[:change_at]:
                nightly.add([v])
                false += nightly.gate().exit_code == EXIT_REGRESSED
        else:
            nightly.add(values[:change_at])
            false += nightly.gate().exit_code == EXIT_REGRESSED
        first = change_at + 1  # the run id of the first night at the new level
        for k, v in enumerate(values[change_at:], 1):
            nightly.add([v])
            result = nightly.gate()
            for g in result.regressions:
                if abs(g.first.run_id - first) <= NEAR:
                    return Caught(k, g.first.percent, false)
        return Caught(None, None, false)
    finally:
        nightly.close()


def false_gates(values: Sequence[float], options: Options) -> int:
    """Nights a flat series' gate exited 3."""
    nightly = Nightly(options)
    try:
        count = 0
        for v in values:
            nightly.add([v])
            count += nightly.gate().exit_code == EXIT_REGRESSED
        return count
    finally:
        nightly.close()


def detection_row(shift: float, n: int, seed: int, options: Options, *, before: int = 40,
                  after: int = 20, noise: float = 0.02, outlier_every: int = 20,
                  gate_before: bool = True) -> list[Caught]:
    rng = random.Random(seed)
    return [detect(series(rng, before + after, change_at=before, shift=shift, noise=noise,
                          outlier_every=outlier_every), before, options,
                   gate_before=gate_before) for _ in range(n)]


def flat_row(n: int, seed: int, options: Options, *, nights: int = 100, noise: float = 0.02,
             outlier_every: int = 20) -> list[int]:
    rng = random.Random(seed)
    return [false_gates(series(rng, nights, noise=noise, outlier_every=outlier_every),
                        options) for _ in range(n)]


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200, help="series per row (default 200)")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--outlier-every", type=int, default=20)
    ap.add_argument("--before", type=int, default=40)
    ap.add_argument("--nights", type=int, default=100, help="nights of each flat series")
    ap.add_argument("--min-change", type=float, default=0.0, metavar="PCT")
    args = ap.parse_args()
    options = Options(min_change=args.min_change / 100)
    t0 = time.perf_counter()
    print(f"{args.series} series a row; noise {100 * args.noise:g}%, one night in "
          f"{args.outlier_every} 10-40% off; {args.before} nights before the change; "
          f"--min-change {args.min_change:g}%; seed {args.seed}\n")
    print("| change | caught by the 5th run at the new level | by the 10th | within 20 "
          "| median delay (runs) | reported size: median error (points) | within 1 point "
          "| false gates before it, per 100 nights |")
    print("|---|---|---|---|---|---|---|---|")
    for k, shift in enumerate((-0.05, -0.10, -0.15)):
        rows = detection_row(shift, args.series, args.seed + k, options, before=args.before,
                             noise=args.noise, outlier_every=args.outlier_every)
        delays = [c.delay for c in rows if c.delay is not None]
        errors = [abs(c.reported - 100 * shift) for c in rows if c.reported is not None]
        false = sum(c.false_before for c in rows)
        print(f"| {100 * shift:+.0f}% | {_pct(sum(d <= 5 for d in delays), len(rows))} | "
              f"{_pct(sum(d <= 10 for d in delays), len(rows))} | "
              f"{_pct(len(delays), len(rows))} | "
              f"{statistics.median(delays) if delays else '-'} | "
              f"{statistics.median(errors):.2f} | {_pct(sum(e <= 1 for e in errors), len(errors))}"
              f" | {100 * false / (len(rows) * args.before):.2f} |")
    flat = flat_row(args.series, args.seed + 10, options, nights=args.nights, noise=args.noise,
                    outlier_every=args.outlier_every)
    print(f"\nFlat series, {args.series} x {args.nights} nights: {sum(flat)} false gates, "
          f"{100 * sum(flat) / (len(flat) * args.nights):.2f} per 100 nights; "
          f"{sum(1 for f in flat if f)} series with at least one")
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
