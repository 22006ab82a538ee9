"""Make tests/fixtures/history/otava_changes.json: Apache Otava's own change points on a set
of series, which tests/test_history_method.py holds benchtui's method to.

Run it with a Python that has Otava installed, outside the repository (Otava pins numpy and
pulls cloud clients, so it is no dependency of benchtui):

    python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
    /tmp/otava/bin/python benchmarks/history_otava_fixture.py \
        --real tests/fixtures/history/real_series.json

The series: synthetic steps up and down (small and large against the noise), noise alone,
single outliers and short bursts, slow drifts, series longer than a window (several
changes), constant runs, and the per-run figures of real recordings (``--real``: a JSON
list of {"name", "values"}). Every series is analysed at the defaults (window 50,
p 0.001) and, for some, at window 30 / p 0.01 and with a minimum magnitude.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "history" / "otava_changes.json"


def synthetic(rng: random.Random) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []

    def add(name: str, values: list[float]) -> None:
        out.append({"name": name, "values": [round(v, 6) for v in values]})

    def noise(n: int, level: float, sd: float) -> list[float]:
        return [rng.gauss(level, sd) for _ in range(n)]

    for i, (n1, n2, shift, sd) in enumerate([(20, 20, 0.15, 0.01), (30, 10, -0.15, 0.02),
                                              (8, 6, -0.15, 0.005), (40, 40, 0.03, 0.01),
                                              (25, 25, 0.02, 0.02), (60, 60, -0.05, 0.01),
                                              (10, 5, 0.5, 0.05), (100, 3, -0.3, 0.01)]):
        add(f"step-{i}", noise(n1, 1000, 1000 * sd) + noise(n2, 1000 * (1 + shift), 1000 * sd))
    for i, sd in enumerate((0.01, 0.05, 0.2)):
        add(f"noise-{i}", noise(80, 500, 500 * sd))
    for i, (n, at, factor) in enumerate([(40, 20, 0.5), (40, 39, 0.3), (60, 10, 3.0),
                                         (30, 15, 0.8)]):
        values = noise(n, 200, 2)
        values[at] *= factor
        add(f"outlier-{i}", values)
    values = noise(50, 100, 1)
    for k in range(20, 23):
        values[k] *= 0.7
    add("burst-0", values)
    add("drift-0", [100 * (1 - 0.002 * k) + rng.gauss(0, 0.5) for k in range(120)])
    add("multi-0", noise(40, 10, 0.1) + noise(40, 12, 0.1) + noise(40, 9, 0.1)
        + noise(40, 9.5, 0.1))
    add("multi-1", noise(70, 5, 0.2) + noise(70, 4, 0.2) + noise(70, 4.4, 0.2))
    add("latency-log-0", [rng.lognormvariate(-7, 0.1) for _ in range(40)]
        + [rng.lognormvariate(-6.8, 0.1) for _ in range(20)])
    add("constant-0", [5.0] * 30)
    add("constant-step-0", [5.0] * 15 + [6.0] * 15)
    return out


def analyse(compute, values: list[float], window: int, p: float, magnitude: float
            ) -> list[dict[str, float]]:
    cps, _weak = compute(list(values), window_len=window, max_pvalue=p,
                         min_magnitude=magnitude)
    return [{"index": int(c.index), "pvalue": float(c.stats.pvalue),
             "mean_before": float(c.stats.mean_1), "mean_after": float(c.stats.mean_2)}
            for c in cps]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", type=Path, help="a JSON list of real series {name, values}")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args()
    try:
        from importlib.metadata import version

        from otava.analysis import compute_change_points
    except ImportError:
        print("history_otava_fixture: Otava is not installed in this Python "
              "(pip install apache-otava)", file=sys.stderr)
        return 1
    series = synthetic(random.Random(23))
    if args.real is not None:
        series += json.loads(args.real.read_text())
    cases = []
    for s in series:
        values = s["values"]
        settings = [(50, 0.001, 0.0)]
        if str(s["name"]).startswith(("step", "multi", "real")):
            settings += [(30, 0.01, 0.0), (50, 0.001, 0.05)]
        for window, p, magnitude in settings:
            cases.append({"name": s["name"], "values": values, "window": window, "p": p,
                          "min_magnitude": magnitude,
                          "changes": analyse(compute_change_points, values, window, p,
                                             magnitude)})
    doc = {"otava": version("apache-otava"), "generator": "benchmarks/history_otava_fixture.py",
           "cases": cases}
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{args.output}: {len(cases)} cases from Otava {doc['otava']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
