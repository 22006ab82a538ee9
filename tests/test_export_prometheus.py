"""A real Prometheus server scrapes a real session (real fio on two local hosts) every second;
PromQL over its HTTP API returns, for each host, exactly the values benchtui holds."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchtui.cli.extras import attach_state
from benchtui.export.http_server import MetricsServer
from benchtui.export.prometheus import FleetCollector
from benchtui.model.sample import HISTOGRAM_METRIC, Sample
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.engine import Session
from tests.export_support import repo_root
from tests.helpers import require_tool
from tests.test_export_serve import PLAN

HOSTS = ("alpha", "beta")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def http_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=5) as response:
        data: dict[str, object] = json.loads(response.read())
        return data


def documented_scrape_config(target: str) -> str:
    """The scrape config of docs/prometheus.md, pointed at ``target``."""
    doc = (repo_root() / "docs" / "prometheus.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(scrape_configs:.*?)```", doc, re.S)
    assert block, "docs/prometheus.md has no scrape config"
    assert "127.0.0.1:9464" in block.group(1) and "scrape_interval: 1s" in block.group(1)
    return block.group(1).replace("127.0.0.1:9464", target)


class Prometheus:
    """A prometheus server with a fresh storage directory and the documented scrape config."""

    def __init__(self, tmp_path: Path, target: str) -> None:
        binary = require_tool("prometheus")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = tmp_path / "prometheus.yml"
        config.write_text(documented_scrape_config(target), encoding="utf-8")
        self.log = (tmp_path / "prometheus.log").open("w")
        self.proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise AssertionError("prometheus did not start") from None
                time.sleep(0.1)

    def query(self, promql: str) -> list[dict[str, object]]:
        url = f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        answer = http_json(url)
        assert answer["status"] == "success", answer
        data = answer["data"]
        assert isinstance(data, dict)
        result: list[dict[str, object]] = data["result"]
        return result

    def wait_for(self, promql: str, results: int = 1, timeout: float = 20
                 ) -> list[dict[str, object]]:
        """The query's answer once it has ``results`` results."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.query(promql)
            if len(answer) >= results:
                return answer
            if time.monotonic() > deadline:
                raise AssertionError(f"prometheus: {promql} has {len(answer)} results")
            time.sleep(0.25)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture
def plan_path(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.toml"
    text = PLAN.format(file=tmp_path / "fio.dat").replace("--runtime=2", "--runtime=4")
    plan.write_text(text, encoding="utf-8")
    return plan


def _series(results: list[dict[str, object]]) -> Iterator[tuple[dict[str, str], list[float]]]:
    for r in results:
        metric, values = r["metric"], r["values"]
        assert isinstance(metric, dict) and isinstance(values, list)
        yield metric, [float(v[1]) for v in values]


@pytest.mark.slow
def test_prometheus_scrapes_what_benchtui_holds(tmp_path: Path, plan_path: Path) -> None:
    require_tool("fio")
    session = Session(load_plan(str(plan_path), parser_names=all_parsers()))
    state = attach_state(session)
    seen: list[Sample] = []
    session.add_sample_sink(seen.extend)
    collector = FleetCollector(state)
    collector.attach()
    with MetricsServer(collector, "127.0.0.1", 0) as server:
        prometheus = Prometheus(tmp_path, f"127.0.0.1:{server.port}")
        try:
            # Prometheus starts scraping a new target after ~5 s: run once it has.
            prometheus.wait_for('up{job="benchtui"} == 1')
            result = asyncio.run(session.run())
            assert result.ok, result.failures
            iops = prometheus.wait_for('benchtui_iops{tool="fio"}[5m]', len(HOSTS) * 2)
            counts = prometheus.query("benchtui_op_latency_seconds_count[5m]")
            up = prometheus.query("benchtui_host_up[5m]")
        finally:
            prometheus.stop()
    # Every value Prometheus stored is a value benchtui held for that very series; or, for a
    # point over part of a second (fio's last), the rate over the last whole second: that
    # point for its duration, the one before for the rest (docs/prometheus.md).
    held: dict[tuple[str, str, str], list[float]] = {}
    for s in seen:
        if s.metric != "iops" or s.tool != "fio":
            continue
        mine = held.setdefault((s.host, s.labels["job"], s.labels["op"]), [])
        if s.duration is not None and s.duration < 1.0 and mine:
            mine.append(s.value * s.duration + mine[-1] * (1.0 - s.duration))
        mine.append(s.value)
    assert {m["host"] for m, _ in _series(iops)} == set(HOSTS)
    for metric, values in _series(iops):
        mine = held[(metric["host"], metric["fio_job"], metric["op"])]
        assert len(values) >= 2, metric
        assert all(any(abs(v - m) <= 1e-9 * abs(m) for m in mine) for v in values), \
            (metric, values, mine)
    # Histogram counters: each scraped _count is the sum of that host's interval histograms
    # up to some interval, never anything else.
    assert {m["host"] for m, _ in _series(counts)} == set(HOSTS)
    for metric, values in _series(counts):
        sums, total = set(), 0.0
        for s in seen:
            if s.metric == HISTOGRAM_METRIC and s.host == metric["host"] and \
                    s.labels["op"] == metric["op"] and s.labels["job"] == metric["fio_job"]:
                total += s.value
                sums.add(total)
        assert values and all(v in sums for v in values), (metric, values, sorted(sums))
        assert values == sorted(values)  # a counter
    assert {m["host"]: v[-1] for m, v in _series(up)} == dict.fromkeys(HOSTS, 1.0)
