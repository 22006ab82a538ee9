"""The shipped Grafana dashboard against a real Prometheus: a real session (fio sweep with
json+ histograms, iperf3, iostat, on two local hosts) recorded by ``benchtui record``, dumped
with ``dump --format openmetrics --histograms``, backfilled with ``promtool tsdb
create-blocks-from openmetrics``; then every panel's query, with the dashboard's variables
set to "All", returns data over the session's time range, and the step variable lists every
step (iperf3's too)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.export_support import repo_root
from tests.helpers import require_tool
from tests.test_export_prometheus import Prometheus, http_json

PLAN = """
[session]
name = "dash"

[hosts.alpha]
local = true

[hosts.beta]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "rand"
tool = "fio"
hosts = "all"
args = "--filename={dir}/f-{{host}}.dat --size=8m --rw=randread --runtime=3 --time_based"
matrix = {{ bs = ["4k", "8k"] }}

[[step]]
name = "net"
tool = "iperf3"
server = "alpha"
clients = ["beta"]
args = "-t 3 -p {port}"
"""


def _api(prometheus: Prometheus, path: str, **params: str) -> Any:
    answer = http_json(f"{prometheus.url}/api/v1/{path}?{urllib.parse.urlencode(params)}")
    assert answer["status"] == "success", answer
    return answer["data"]


def _dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (repo_root() / "dashboards" / "benchtui.json").read_text(encoding="utf-8"))
    return data


def _expand(expr: str, range_seconds: int) -> str:
    for name, value in (("$__rate_interval", "4s"), ("$__interval", "2s"),
                        ("$__range", f"{range_seconds}s"), ("$host", ".*"), ("$step", ".*"),
                        ("$device", ".*")):
        expr = expr.replace(name, value)
    return expr


@pytest.mark.slow
def test_every_panel_has_data_over_a_backfilled_session(tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iperf3")
    require_tool("iostat")
    promtool = require_tool("promtool")
    from tests.test_export_prometheus import free_port

    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(dir=tmp_path, port=free_port()), encoding="utf-8")
    session = tmp_path / "s.session"
    done = subprocess.run([sys.executable, "-m", "benchtui", "record", str(plan), "-o",
                           str(session)], capture_output=True, text=True, timeout=180,
                          check=False)
    assert done.returncode == 0, done.stderr
    om = tmp_path / "s.om"
    with om.open("w") as out:
        dumped = subprocess.run([sys.executable, "-m", "benchtui", "dump", str(session),
                                 "--format", "openmetrics", "--histograms"], stdout=out,
                                stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert dumped.returncode == 0, dumped.stderr
    blocks = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(om),
                             str(tmp_path / "tsdb")], capture_output=True, text=True,
                            timeout=120, check=False)
    assert blocks.returncode == 0, blocks.stdout + blocks.stderr
    times = [float(line.rsplit(" ", 1)[1]) for line in om.read_text().splitlines()
             if line and not line.startswith("#")]
    start, end = min(times), max(times)
    prometheus = Prometheus(tmp_path, "127.0.0.1:1")  # scrapes nothing: the data is backfilled
    try:
        span = int(end - start) + 2
        empty: list[str] = []
        for panel in _dashboard()["panels"]:
            for target in panel.get("targets", []):
                expr = _expand(target["expr"], span)
                if target.get("instant"):
                    data = _api(prometheus, "query", query=expr, time=f"{end:.3f}")
                else:
                    data = _api(prometheus, "query_range", query=expr, start=f"{start:.3f}",
                                end=f"{end:.3f}", step="1")
                if not data["result"]:
                    empty.append(f"{panel['title']}: {expr}")
        assert not empty, "panels without data:\n" + "\n".join(empty)
        # the exact fleet percentiles are in the backfill (not only the panel's fallback)
        exact = _api(prometheus, "query_range", query="benchtui_fleet_latency_seconds",
                     start=f"{start:.3f}", end=f"{end:.3f}", step="1")
        assert {r["metric"]["quantile"] for r in exact["result"]} >= {"0.5", "0.99"}
        variables = {v["name"]: v for v in _dashboard()["templating"]["list"]}
        query = variables["step"]["query"]["query"]
        selector, label = query.removeprefix("label_values(").removesuffix(")").rsplit(", ", 1)
        series = _api(prometheus, "series", **{"match[]": selector, "start": f"{start:.3f}",
                                                "end": f"{end:.3f}"})
        steps = {s[label] for s in series if label in s}
        assert steps == {"rand bs=4k", "rand bs=8k", "net"}
        heatmap = next(p for p in _dashboard()["panels"] if p["type"] == "heatmap")
        assert heatmap["targets"][0]["format"] == "heatmap"
        # a heatmap cell is a count of operations, not a rate
        assert "increase(" in heatmap["targets"][0]["expr"]
    finally:
        prometheus.stop()
