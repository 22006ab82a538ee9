"""The collector over a FleetState fed with real tool outputs through the real parsers: what a
scrape shows, promtool's verdict on it, the staleness rules, histograms and health."""

from __future__ import annotations

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families

from benchtui.export.latency_buckets import BucketCounts
from benchtui.export.metric_names import (
    FLEET_LATENCY_NAME,
    FLEET_QUANTILES,
    HISTOGRAM_NAME,
    METRICS,
    labels_of,
)
from benchtui.export.prometheus import FleetCollector
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import HISTOGRAM_METRIC, INTERVAL, Sample
from benchtui.store.fleet import FleetState
from tests.export_support import (
    TOOL_FIXTURES,
    Clock,
    fixture_samples,
    promtool_check,
    session_events,
)

HOSTS = ["db1", "db2"]
Scrape = dict[str, dict[tuple[tuple[str, str], ...], float]]


def parsed(families: object) -> Scrape:
    out: Scrape = {}
    for family in families:  # type: ignore[attr-defined]
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def scrape(collector: FleetCollector) -> Scrape:
    """name -> {sorted labels -> value}: what /metrics serves, read by prometheus_client's
    parser of the Prometheus text format."""
    return parsed(text_string_to_metric_families(collector.render().decode()))


def key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def fleet(clock: Clock, fixtures: tuple[str, ...] = TOOL_FIXTURES
          ) -> tuple[FleetState, FleetCollector]:
    state = FleetState("demo", HOSTS)
    collector = FleetCollector(state, clock=clock, wall=lambda: 1.8e9 + 30)
    collector.attach()
    session_events(state, HOSTS)
    for host in HOSTS:
        for path in fixtures:
            state.on_samples(fixture_samples(path, host))
    return state, collector


def test_a_scrape_of_every_tool_passes_promtool() -> None:
    clock = Clock()
    _state, collector = fleet(clock)
    result = promtool_check(collector.render())
    assert result.returncode == 0, result.stdout + result.stderr
    names = set(scrape(collector))
    for expected in ("benchtui_iops", "benchtui_bandwidth_bytes", "benchtui_latency_seconds",
                     "benchtui_disk_util_ratio", "benchtui_disk_iops",
                     "benchtui_disk_await_seconds", "benchtui_cpu_ratio",
                     "benchtui_net_bandwidth_bytes", "benchtui_net_jitter_seconds",
                     "benchtui_mem_bandwidth_bytes", "benchtui_ops_in_flight",
                     "benchtui_result_benchmark_score", "benchtui_result_latency_seconds",
                     HISTOGRAM_NAME + "_bucket", HISTOGRAM_NAME + "_count",
                     FLEET_LATENCY_NAME, "benchtui_host_up",
                     "benchtui_host_last_sample_age_seconds", "benchtui_samples_total",
                     "benchtui_parse_warnings_total", "benchtui_session_info",
                     "benchtui_step_info", "benchtui_step_progress_ratio"):
        assert expected in names, expected


def test_both_renderings_say_what_prometheus_client_says() -> None:
    """benchtui renders the scrape itself (fast); prometheus_client renders the same families
    from ``collect()``: the parsed samples, types and help must be the same."""
    _state, collector = fleet(Clock())
    ours = list(text_string_to_metric_families(collector.render().decode()))
    theirs = list(text_string_to_metric_families(generate_latest(collector).decode()))
    assert parsed(ours) == parsed(theirs)
    assert [(f.name, f.type, f.documentation) for f in ours] == \
        [(f.name, f.type, f.documentation) for f in theirs]
    # OpenMetrics (what Prometheus asks for): strict parser, units, # EOF, same values.
    text = collector.render(openmetrics=True).decode()
    assert text.endswith("# EOF\n")
    om = list(parse_openmetrics(text))
    assert parsed(om) == parsed(theirs)
    units = {f.name: f.unit for f in om}
    assert units["benchtui_latency_seconds"] == "seconds"
    assert units["benchtui_disk_util_ratio"] == "ratio"
    assert units["benchtui_iops"] == ""
    assert {f.name: f.type for f in om}["benchtui_samples"] == "counter"


def test_each_series_shows_the_latest_value_the_state_holds() -> None:
    """The newest point of each series; a newest point that covers part of an interval
    (fio's last, ``Sample.duration``) is shown as the rate over the last whole interval: its
    own rate for its seconds, the point before's for the rest (docs/prometheus.md)."""
    state, collector = fleet(Clock())
    scraped = scrape(collector)
    partial = {(s.host, s.metric, s.t, s.value): s.duration
               for host in HOSTS for path in TOOL_FIXTURES
               for s in fixture_samples(path, host) if s.duration is not None}
    checked = blended = 0
    for series in state.store.series.values():
        spec = METRICS.get(series.metric)
        if spec is None:
            continue
        labels = collector.labeler.of(series.host, series.tool, series.labels,
                                      metric=series.metric, kind=series.kind)
        expected = series.values[-1]
        seconds = partial.get((series.host, series.metric, series.times[-1], expected))
        if seconds is not None and len(series.values) > 1 and "quantile" not in series.labels:
            # the interval: the gap to the point before, never under a second
            interval = max(series.times[-1] - series.times[-2], 1.0)
            expected = (expected * seconds + series.values[-2] * (interval - seconds)) / interval
            blended += 1
        assert scraped[spec.name][key(labels)] == pytest.approx(expected), labels
        checked += 1
    assert checked > 200 and blended > 0
    results = {s.series_key(): s for s in state.store.summaries}
    for s in results.values():
        spec = METRICS[s.metric]
        labels = collector.labeler.of(s.host, s.tool, s.labels, metric=s.metric, kind=s.kind)
        assert scraped[spec.result_name][key(labels)] == s.value


def test_a_series_drops_three_of_its_intervals_after_its_last_point() -> None:
    clock = Clock()
    state, collector = fleet(clock, ("disk/real_sysstat12_x_t_iso_y.txt",
                                     "fio_json/randread_randwrite.jsonplus.txt"))
    assert "benchtui_disk_util_ratio" in scrape(collector)
    clock.advance(2.9)
    assert "benchtui_disk_util_ratio" in scrape(collector)
    # db2 keeps reporting, db1 stopped.
    state.on_samples(fixture_samples("disk/real_sysstat12_x_t_iso_y.txt", "db2", t0=1.9e9))
    clock.advance(0.2)
    scraped = scrape(collector)
    assert {dict(k)["host"] for k in scraped["benchtui_disk_util_ratio"]} == {"db2"}
    assert "benchtui_iops" not in scraped and HISTOGRAM_NAME + "_count" not in scraped
    assert FLEET_LATENCY_NAME not in scraped
    # What is not a per-interval value stays: health, and the runs' end-of-run figures.
    assert len(scraped["benchtui_host_up"]) == 2
    assert len(scraped["benchtui_result_iops"]) == 4
    ages = {dict(k)["host"]: v for k, v in scraped["benchtui_host_last_sample_age_seconds"].items()}
    assert abs(ages["db1"] - 3.1) < 1e-9 and abs(ages["db2"] - 0.2) < 1e-9


def test_a_slow_series_gets_three_of_its_own_intervals() -> None:
    clock = Clock()
    state = FleetState("demo")
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    for t in (100.0, 110.0):
        state.on_samples([Sample(t, "iostat", INTERVAL, "disk_util_ratio", 0.5,
                                 {"device": "sda"}, host="h")])
    clock.advance(29)
    assert "benchtui_disk_util_ratio" in scrape(collector)
    clock.advance(2)
    assert "benchtui_disk_util_ratio" not in scrape(collector)


def test_a_failed_host_drops_all_its_series() -> None:
    state, collector = fleet(Clock())
    state.on_event(Event(1.8e9 + 1, ev.HOST_STATE, "db1: failed (connection lost)",
                         level=ev.ERROR, host="db1", data={"state": "failed"}))
    scraped = scrape(collector)
    for name, series in scraped.items():
        if name.startswith("benchtui_host_") or name in ("benchtui_samples_total",
                                                          "benchtui_parse_warnings_total"):
            continue
        assert all(dict(k).get("host") != "db1" for k in series), name
    assert scraped["benchtui_host_up"][key({"host": "db1"})] == 0
    assert scraped["benchtui_host_state"][key({"host": "db1", "state": "failed"})] == 1
    assert scraped["benchtui_host_up"][key({"host": "db2"})] == 1


def test_a_monitor_series_under_a_new_step_replaces_the_old_one_at_once() -> None:
    clock = Clock()
    state = FleetState("demo")
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    state.on_samples(fixture_samples("disk/real_sysstat12_x_t_iso_y.txt", "h", step="s1"))
    clock.advance(1)
    later = fixture_samples("disk/real_sysstat12_x_t_iso_y.txt", "h", step="-")
    for s in later:  # iostat stamps its reports: the next reports come 60 s later
        assert s.t is not None
        s.t += 60
    state.on_samples(later)
    scraped = scrape(collector)["benchtui_disk_util_ratio"]
    assert all("step" not in dict(k) for k in scraped)  # one identity across steps
    newest = {s.labels["device"]: s.value for s in later if s.metric == "disk_util_ratio"}
    assert {dict(k)["device"]: v for k, v in scraped.items()} == newest


def _fio(host: str) -> list[Sample]:
    return fixture_samples("fio_json/randread_randwrite.jsonplus.txt", host)


def test_histograms_count_every_interval_and_the_fleet_merges_the_latest() -> None:
    clock = Clock()
    state = FleetState("demo")
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    per_host = {h: [s for s in _fio(h) if s.metric == HISTOGRAM_METRIC] for h in HOSTS}
    for hists in per_host.values():
        for s in hists:  # one batch per interval, as the engine delivers them
            state.on_samples([s])
    scraped = scrape(collector)
    latest: dict[tuple[str, str], LatencyHistogram] = {}
    for h, hists in per_host.items():
        for job_op in {(s.labels["job"], s.labels["op"]) for s in hists}:
            mine = [s for s in hists if (s.labels["job"], s.labels["op"]) == job_op]
            counts = BucketCounts()
            for s in mine:
                assert s.histogram is not None
                counts.add(s.histogram)
            labels = labels_of(h, "fio", mine[0].labels)
            assert scraped[HISTOGRAM_NAME + "_count"][key(labels)] == \
                sum(s.value for s in mine) == counts.count
            buckets = {dict(k)["le"]: v for k, v in scraped[HISTOGRAM_NAME + "_bucket"].items()
                       if all(dict(k).get(n) == v for n, v in labels.items())}
            assert list(buckets.values()) == counts.cumulative()
            assert buckets["+Inf"] == counts.count
            assert mine[-1].histogram is not None
            latest.setdefault(job_op, LatencyHistogram()).merge(mine[-1].histogram)
    for (job, op), merged in latest.items():
        for q, value in merged.quantiles(FLEET_QUANTILES).items():
            labels = {"tool": "fio", "fio_job": job, "op": op, "measure": "clat", "step": "s1",
                      "quantile": str(q)}
            assert scraped[FLEET_LATENCY_NAME][key(labels)] == value


def test_health_counts_samples_warnings_events_and_skipped_metrics() -> None:
    clock = Clock()
    state, collector = fleet(clock, ("fio_json/randread_randwrite.jsonplus.txt",))
    state.on_event(Event(1.8e9 + 2, ev.PARSE_WARNING, "db2:fio: line 3: bad", level=ev.WARNING,
                         host="db2"))
    state.on_samples([Sample(1.8e9 + 3, "newtool", INTERVAL, "frobs_per_second", 1.0,
                             host="db2")])
    scraped = scrape(collector)
    for h in HOSTS:
        assert scraped["benchtui_samples_total"][key({"host": h})] == state.hosts[h].samples
    assert scraped["benchtui_parse_warnings_total"][key({"host": "db2"})] == 1
    assert scraped["benchtui_events_total"][key({"level": "warning"})] == 1
    assert scraped["benchtui_exporter_skipped_samples_total"][
        key({"metric": "frobs_per_second", "reason": "no exported name"})] == 1
    assert scraped["benchtui_step_progress_ratio"][key({"step": "s1"})] == 0.5  # 30 s of 60
    assert scraped["benchtui_step_eta_seconds"][key({"step": "s1"})] == 30
    assert scraped["benchtui_session_start_time_seconds"][()] == 1.8e9
    collector.detach()
    state.on_samples(_fio("db1"))
    assert scrape(collector)[HISTOGRAM_NAME + "_count"] == scraped[HISTOGRAM_NAME + "_count"]


def test_memory_of_arrivals_stays_bounded_in_a_long_session() -> None:
    clock = Clock()
    state = FleetState("demo", window=10)
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    for i in range(10_000):  # almost 3 hours at 1 Hz
        clock.advance(1)
        state.on_samples([Sample(1.8e9 + i, "iostat", INTERVAL, "disk_util_ratio", i / 1e4,
                                 {"device": "sda"}, host="h")])
    assert len(collector._arrived) <= 4096 + 200
    assert scrape(collector)["benchtui_disk_util_ratio"] == {
        key({"host": "h", "tool": "iostat", "device": "sda"}): 0.9999}


def test_counters_add_rate_times_seconds_and_a_partial_interval_is_no_spike() -> None:
    clock = Clock()
    state = FleetState("demo", ["h"])
    collector = FleetCollector(state, clock=clock)
    collector.attach()
    labels = {"job": "j", "op": "read", "step": "s"}
    for i, (iops, duration) in enumerate([(1000.0, None), (1000.0, None), (1000.0, None),
                                          (4000.0, 0.25)]):
        # the last interval covers 0.25 s: 1000 operations in it, at 4000/s
        t = 1.8e9 + i if duration is None else 1.8e9 + 2.25
        state.on_samples([Sample(t, "fio", INTERVAL, "iops", iops, dict(labels), "h",
                                 duration=duration)])
        clock.advance(0.25)
    scraped = scrape(collector)
    total = scraped["benchtui_ops_total"][key({"host": "h", "tool": "fio", "op": "read"})]
    assert total == 1000 + 1000 + 1000 + 4000 * 0.25
    # the gauge is the rate over the last whole second, not 4000/s
    gauge = scraped["benchtui_iops"][key({"host": "h", "tool": "fio", "fio_job": "j",
                                          "op": "read", "step": "s"})]
    assert gauge == 4000 * 0.25 + 1000 * 0.75
