"""A real Prometheus scrapes ``benchtui serve`` (real fio and iostat on two local hosts, a
sweep then a steady rate-limited run): the labels fit a fleet. ``job`` is the scrape's only;
a device series keeps one identity across steps; each matrix key is a label of its step's
series; ``rate(benchtui_ops_total[30s])`` agrees with the per-interval gauges within 2% and
one second's worth (a sample that arrives just after a scrape, on a loaded machine, moves
its count into the next scrape: 1/30 of the rate at one edge of the window)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require_tool
from tests.test_export_prometheus import Prometheus, free_port, http_json

PLAN = """
[session]
name = "prom-labels"

[hosts.alpha]
local = true

[hosts.beta]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "sweep"
tool = "fio"
hosts = "all"
args = "--filename={dir}/sweep-{{host}}.dat --size=8m --rw=randread --runtime=3 --time_based"
matrix = {{ bs = ["4k", "8k"] }}

[[step]]
name = "steady"
tool = "fio"
hosts = "all"
args = ["--filename={dir}/steady-{{host}}.dat", "--size=8m", "--rw=randread", "--bs=4k",
        "--rate_iops=200", "--runtime=36", "--time_based"]
"""


def query_at(prometheus: Prometheus, promql: str, t: float) -> dict[tuple[str, ...], float]:
    url = (f"{prometheus.url}/api/v1/query?"
           f"{urllib.parse.urlencode({'query': promql, 'time': f'{t:.3f}'})}")
    answer = http_json(url)
    assert answer["status"] == "success", answer
    data = answer["data"]
    assert isinstance(data, dict)
    out: dict[tuple[str, ...], float] = {}
    for r in data["result"]:
        metric = r["metric"]
        out[(metric.get("host", ""), metric.get("op", ""))] = float(r["value"][1])
    return out


@pytest.mark.slow
def test_prometheus_labels_fit_a_fleet(tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(dir=tmp_path), encoding="utf-8")
    port = free_port()
    prometheus = Prometheus(tmp_path, f"127.0.0.1:{port}")
    try:
        _check_labels(prometheus, plan, port)
    finally:
        prometheus.stop()


def _check_labels(prometheus: Prometheus, plan: Path, port: int) -> None:
    serve: subprocess.Popen[str] | None = None
    try:
        # Prometheus tries a new target ~5 s after it starts: start serve once it has.
        prometheus.wait_for('up{job="benchtui"}')
        serve = subprocess.Popen(
            [sys.executable, "-m", "benchtui", "serve", str(plan), "--listen",
             f"127.0.0.1:{port}", "--linger", "3"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, err = serve.communicate(timeout=180)
        assert serve.returncode == 0, err
        time.sleep(1.5)
        every = prometheus.query('last_over_time({__name__=~"benchtui_.+"}[10m])')
        iops = prometheus.query('benchtui_iops{tool="fio"}[10m]')
        disks = prometheus.query('benchtui_disk_util_ratio[10m]')
    finally:
        if serve is not None and serve.poll() is None:
            serve.kill()
    _check(prometheus, every, iops, disks)


def _check(prometheus: Prometheus, every: list[dict[str, Any]], iops: list[dict[str, Any]],
           disks: list[dict[str, Any]]) -> None:
    # `job` means one thing: the scrape's job, on every series.
    assert every and {r["metric"].get("job") for r in every} == {"benchtui"}
    assert all("fio_job" in r["metric"] for r in iops)
    # Each matrix key is a label of its step's series, and only of them.
    by_step = {r["metric"]["step"]: r["metric"].get("bs") for r in iops}
    assert by_step == {"sweep bs=4k": "4k", "sweep bs=8k": "8k", "steady": None}
    # A device series keeps one identity across steps: one series per host and device,
    # with points during the sweep and the steady run alike.
    identities: dict[tuple[str, str], int] = {}
    for r in disks:
        metric = r["metric"]
        assert isinstance(metric, dict) and "step" not in metric
        ident = (metric["host"], metric["device"])
        identities[ident] = identities.get(ident, 0) + 1
        assert len(r["values"]) >= 20
    assert identities and set(identities.values()) == {1}
    # The counters agree with the gauges over the steady run (30 s inside it).
    steady = [r for r in iops if r["metric"]["step"] == "steady"]
    end = min(float(r["values"][-1][0]) for r in steady)
    at = end - 2
    rate = query_at(prometheus, 'sum by (host, op) (rate(benchtui_ops_total{tool="fio"}'
                    "[30s]))", at)
    gauges = query_at(prometheus, 'sum by (host, op) (avg_over_time(benchtui_iops{tool='
                      '"fio",step="steady"}[30s]))', at)
    assert set(rate) == set(gauges) == {("alpha", "read"), ("beta", "read")}
    share = 0.02 + 1 / 30
    for key, value in gauges.items():
        assert value > 100, (key, value)
        assert abs(rate[key] - value) <= share * value, (key, rate[key], value)
    bytes_rate = query_at(prometheus, 'sum by (host, op) (rate(benchtui_bytes_total{tool='
                          '"fio"}[30s]))', at)
    for key, value in gauges.items():
        assert abs(bytes_rate[key] - 4096 * value) <= share * 4096 * value
