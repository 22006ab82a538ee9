"""dashboards/benchtui.json: valid Grafana JSON whose every PromQL expression uses only metric
names the exporter really exports (collected from a scrape of a state fed with real outputs of
every tool) and labels those metrics carry."""

from __future__ import annotations

import json
import re

from prometheus_client.parser import text_string_to_metric_families

from benchtui.export.prometheus import FleetCollector
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.store.fleet import FleetState
from tests.export_support import TOOL_FIXTURES, Clock, fixture_samples, repo_root, session_events

_METRIC = re.compile(r"\bbenchtui_[a-z0-9_]+")
_MATCHER = re.compile(r"(benchtui_[a-z0-9_]+)\{([^}]*)\}")
_BY = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
_PROMQL_LABELS = {"le", "__name__", "instance"}


def dashboard() -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (repo_root() / "dashboards" / "benchtui.json").read_text(encoding="utf-8"))
    return data


def exported() -> dict[str, set[str]]:
    """Every sample name a scrape shows -> the label names it carries."""
    state = FleetState("demo", ["db1", "db2"])
    collector = FleetCollector(state, clock=Clock())
    collector.attach()
    session_events(state, ["db1", "db2"])
    for host in ("db1", "db2"):
        for path in TOOL_FIXTURES:
            state.on_samples(fixture_samples(path, host))
    state.on_event(Event(1.8e9 + 1, ev.PARSE_WARNING, "x", level=ev.WARNING, host="db1"))
    names: dict[str, set[str]] = {}
    text = collector.render().decode()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            names.setdefault(s.name, set()).update(s.labels)
    return names


def expressions() -> list[str]:
    out = []
    panels = dashboard()["panels"]
    assert isinstance(panels, list)
    for panel in panels:
        for target in panel.get("targets", []):
            out.append(target["expr"])
    templating = dashboard()["templating"]
    assert isinstance(templating, dict)
    for var in templating["list"]:
        if var["type"] == "query":
            out.append(var["query"]["query"])
    return out


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    data = dashboard()
    assert data["title"] == "benchtui" and data["uid"]
    panels = data["panels"]
    assert isinstance(panels, list) and len(panels) >= 20
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    for p in panels:
        assert set(p["gridPos"]) == {"h", "w", "x", "y"}
        assert p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
        if p["type"] != "row":
            assert p["targets"] and p["datasource"] == {"type": "prometheus",
                                                        "uid": "${datasource}"}
    titles = " ".join(p["title"] for p in panels).lower()
    for word in ("fleet", "per host", "latency", "disk", "network", "hosts up"):
        assert word in titles, word


def test_every_expression_uses_metrics_the_exporter_exports() -> None:
    names = exported()
    used: set[str] = set()
    for expr in expressions():
        if '{__name__=~"benchtui_.+",step!=""}' in expr:  # every benchtui series with a step
            continue
        found = _METRIC.findall(expr)
        assert found, expr
        for name in found:
            assert name in names, f"{name} (in {expr}) is not exported"
            used.add(name)
        # Label names in matchers and in by (...) exist on the metrics used.
        carried = set().union(*(names[n] for n in found)) | _PROMQL_LABELS
        for metric, matchers in _MATCHER.findall(expr):
            for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers):
                assert label in names[metric] | _PROMQL_LABELS, (label, expr)
        for group in _BY.findall(expr):
            for label in (x.strip() for x in group.split(",")):
                assert label in carried, (label, expr)
    for name in ("benchtui_iops", "benchtui_fleet_latency_seconds",
                 "benchtui_op_latency_seconds_bucket", "benchtui_disk_util_ratio",
                 "benchtui_net_bandwidth_bytes", "benchtui_host_up",
                 "benchtui_host_last_sample_age_seconds"):
        assert name in used, name
