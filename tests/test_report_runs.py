"""Issue 30, for real: what a report's rows are made of, on sessions recorded by ``benchtui
record`` from real fio, iostat and iperf3 (the network session's three hosts real sshd
hosts, the iperf3 server one of them).

- A step run twice with fio's rate limit at 1000 and then 2000 IOPS (``--rate_iops={run}000``)
  is one row per host: the median of the two runs (their mean), with the runs' range beside
  it in Markdown, CSV, JSON and HTML, in the per-second plots, and against a baseline that
  is itself; ``--select all`` and ``best`` keep their choices.
- A step whose command is a shell running fio then sleeping: the disk's figures are taken
  over fio's run only (iostat's seconds of the sleep left out), the skip counted from fio's
  own start; the figure is held against fio's own disk utilisation.
- One iperf3 server and two clients: each client's send, the server's receive per client
  and in all, and the fleet's total, against iperf3's own end-of-run lines; the console's
  Jobs tab lists each of the server's tests.
- ``info``'s gaps: a host's quiet while it runs nothing, or after the last step, is no gap;
  a fio stopped by SIGSTOP mid-run is.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from benchtui.model.events import Event
from benchtui.model.format import format_bit_rate, format_count
from benchtui.model.sample import Sample
from benchtui.report.build import ReportOptions, build_report
from benchtui.report.repeats import typical
from benchtui.report.series import Points, plot_groups
from benchtui.report.series_source import SeriesSource
from benchtui.report.window import INTERVAL, JITTER
from benchtui.session.timeline import monitored_hosts, real_gaps
from benchtui.store.figures import job_figures
from benchtui.store.fleet import FleetState
from benchtui.store.recording import Gap, SessionReader
from tests.helpers import require_tool
from tests.report_recording import benchtui
from tests.sshd import SshdHost
from tests.test_report_html import md_tables

pytestmark = pytest.mark.slow

RUNS_PLAN = """
[session]
name = "runs"

[hosts.alpha]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "layout"
tool = "fio"
hosts = "all"
args = "--name=layout --filename={data} --size=64m --rw=write --bs=1m"

[[step]]
name = "held"
tool = "fio"
hosts = "all"
repeat = 2
args = '''--name=held --ioengine=null --size=1g --rw=randread --bs=4k --rate_iops={{run}}000
          --runtime=3 --time_based'''

[[step]]
name = "fio-then-sleep"
hosts = "all"
parser = "fio-json"
command = "sh -c 'fio --status-interval=1 --output-format=json+ --eta=never --name=r \
    --filename={data} --size=64m --rw=randread --bs=64k --direct=1 --runtime=6 --time_based \
    && sleep 3'"
"""

NET_PLAN = """
[session]
name = "net"

{hosts}
[[step]]
name = "net"
tool = "iperf3"
server = "alpha"
clients = ["beta", "gamma"]
server_address = "127.0.0.1"
args = "-t 3 -b 400M"

[[step]]
name = "stalled"
hosts = ["alpha"]
parser = "fio-json"
command = "sh -c 'fio --status-interval=1 --output-format=json+ --eta=never --name=s \
    --ioengine=null --size=1g --rw=randread --bs=4k --rate_iops=1000 --runtime=7 --time_based \
    & p=$!; sleep 2; kill -STOP $p; sleep 4; kill -CONT $p; wait $p'"
"""


def _record(tmp: Path, name: str, plan: str, *args: str, hosts: str = "") -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(plan.format(data=tmp / "fio.dat", hosts=hosts))
    out = tmp / f"{name}.btr"
    done = benchtui("record", str(path), "-o", str(out), *args, timeout=240)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def runs_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tool("fio")
    require_tool("iostat")
    return _record(tmp_path_factory.mktemp("runs"), "runs", RUNS_PLAN)


@pytest.fixture(scope="module")
def net_session(tmp_path_factory: pytest.TempPathFactory, sshd_hosts: list[SshdHost]) -> Path:
    """The network session on three real sshd hosts: the iperf3 server is an SSH host too."""
    require_tool("fio")
    require_tool("iperf3")
    hosts = "".join(
        f'[hosts.{name}]\naddress = "{h.address}"\nport = {h.port}\nuser = "{h.user}"\n'
        f'identity = "{h.identity}"\n' for name, h in zip(("alpha", "beta", "gamma"),
                                                            sshd_hosts, strict=False))
    return _record(tmp_path_factory.mktemp("net"), "net", NET_PLAN, "--known-hosts",
                   sshd_hosts[0].known_hosts, hosts=hosts)


def _samples(path: Path, metric: str, kind: str) -> list[Sample]:
    with SessionReader.open(str(path)) as reader:
        return [s for s in reader.samples(metrics=(metric,), t0=reader.start,
                                          t1=reader.end + 1) if s.kind == kind]


def _report(path: Path, *args: str) -> str:
    done = benchtui("report", str(path), *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


# --- repeats ------------------------------------------------------------------------------

def test_the_median_of_repeats_is_the_mean_of_two_and_only_completed_runs_count() -> None:
    assert typical([(1000.0, True), (2000.0, True)]) == 1500.0
    assert typical([(1000.0, True), (9.0, False), (3000.0, True)]) == 2000.0
    assert typical([(5.0, False), (7.0, False)]) == 6.0  # none completed: all of them


def test_two_runs_held_at_1000_and_2000_iops_are_a_row_of_1500(runs_session: Path) -> None:
    # fio's own figures (its ``read: IOPS=``), the runs' summaries
    own = {s.labels["step"]: s.value for s in _samples(runs_session, "iops", "summary")
           if s.labels["step"].startswith("held#")}
    low, high = own["held#1"], own["held#2"]
    assert low == pytest.approx(1000, rel=0.01) and high == pytest.approx(2000, rel=0.01)
    middle = (low + high) / 2
    assert middle == pytest.approx(1500, rel=0.01)
    cell = f"{format_count(middle)} [{format_count(low)}–{format_count(high)}]"

    md = _report(runs_session, "--steps", "held")  # a single-step report, one host
    table = md_tables(md)[0]
    rows = {r[table[0].index("host")]: dict(zip(table[0], r, strict=True)) for r in table[1:]}
    assert rows["alpha (median of 2 runs)"]["IOPS r"] == cell
    assert "**median of its runs**" in md and "the runs' range is beside every value" in md

    rows_csv = list(csv.DictReader(io.StringIO(
        _report(runs_session, "--steps", "held", "--format", "csv"))))
    iops = next(r for r in rows_csv if r["host"] == "alpha" and r["metric"] == "iops")
    assert float(iops["value"]) == pytest.approx(middle, rel=1e-9)
    assert (float(iops["range_min"]), float(iops["range_max"])) == pytest.approx((low, high))
    assert iops["runs"] == "2" and iops["repeat"] == "" and iops["source"] == "summary"

    data = json.loads(_report(runs_session, "--steps", "held", "--format", "json"))
    row = next(r for r in data["rows"] if r["host"] == "alpha")
    value = next(v for v in row["values"] if v["metric"] == "iops")
    assert value["value"] == pytest.approx(middle) and value["range"] == pytest.approx(
        [low, high])
    assert row["selected_by"] == "median" and row["run_labels"] == ["held#1", "held#2"]

    page = Path(runs_session).with_suffix(".html")
    _report(runs_session, "--steps", "held", "--format", "html", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert (f"<td>{format_count(middle)} <span class=\"range\">[{format_count(low)}–"
            f"{format_count(high)}]</span></td>") in html
    assert "held: each host&#x27;s median of 2 runs" in html

    every = md_tables(_report(runs_session, "--steps", "held", "--select", "all"))[0]
    assert [(r[1], r[2]) for r in every[1:]] == [
        ("alpha (run 1)", format_count(low)), ("alpha (run 2)", format_count(high))]
    best = md_tables(_report(runs_session, "--steps", "held", "--select", "best"))[0]
    assert best[1][1:3] == ["alpha (best of 2 runs: run 2)", f"{format_count(high)} "
                            f"[{format_count(low)}–{format_count(high)}]"]


def test_a_median_row_against_a_baseline_and_per_second(runs_session: Path) -> None:
    """A baseline's repeats follow the same rule: against itself a median row is at 100%
    (median with median); a step run once has the repeated step's median as its baseline
    (``--baseline step=held``), not one of its runs; the gate names the median row; the
    per-second plot of the row is the runs' median second by second."""
    data = json.loads(_report(runs_session, "--steps", "held", "--baseline",
                              f"session={runs_session}", "--format", "json"))
    row = next(r for r in data["rows"] if r["host"] == "alpha")
    for v in row["values"]:
        assert v["baseline_value"] == v["value"]
        if v["value"]:
            assert v["percent_of_baseline"] == pytest.approx(100.0)
    middle = next(v["value"] for v in row["values"] if v["metric"] == "iops")
    data = json.loads(_report(runs_session, "--baseline", "step=held", "--steps", "held",
                              "--steps", "fio-then-sleep", "--format", "json"))
    once = next(r for r in data["rows"] if r["host"] == "alpha"
                and r["step"] == "fio-then-sleep")
    assert next(v["baseline_value"] for v in once["values"]
                if v["metric"] == "iops") == pytest.approx(middle)
    gate = benchtui("report", str(runs_session), "--steps", "held", "--baseline", "step=held",
                    "--fail-below", "101%", "-o", "/dev/null")
    assert gate.returncode == 3, gate.stderr
    assert re.search(r"^  held \(median of 2\)\s+alpha\s+IOPS r", gate.stderr, re.M), \
        gate.stderr
    report = build_report([str(runs_session)], ReportOptions(skip=1.0, steps=("held",)))
    group = next(g for g in plot_groups(report) if g.step == "held")
    assert group.title == "held: each host's median of 2 runs"
    with SeriesSource(str(runs_session)) as source:
        (median,) = source.series(group.rows)
        runs = [source.series([r])[0] for r in build_report(
            [str(runs_session)], ReportOptions(skip=1.0, steps=("held",), select="all")).rows
                if r.host == "alpha"]
    def nominal(points: Points) -> dict[int, float]:
        """A line's points of whole intervals (not partial ones), by their second."""
        durations = points.durations or (None,) * len(points)
        return {round(t): v for t, v, d in zip(points.times, points.values, durations,
                                                strict=True) if d is None}

    ours = nominal(median.iops["read"])
    theirs = [nominal(r.iops["read"]) for r in runs]
    assert len(ours) >= 2
    for second, v in ours.items():  # each run counted from its own start
        found = [run[second] for run in theirs]
        assert v == pytest.approx(sum(found) / 2), (second, found)
        assert v == pytest.approx(1500, rel=0.05)


# --- the window: the time the tool ran -----------------------------------------------------

def test_disk_figures_are_taken_over_the_tools_run_only(runs_session: Path) -> None:
    step = "fio-then-sleep"
    fio = sorted(s.t or 0.0 for s in _samples(runs_session, "iops", "interval")
                 if s.labels["step"] == step)
    start, end = fio[0] - INTERVAL, fio[-1]  # fio's first interval's start, its last's end
    # iostat's seconds, at the time each reached benchtui (iostat -t prints whole seconds)
    with SessionReader.open(str(runs_session)) as reader:
        util = [(t, s) for t, batch in reader.timed_records(reader.start, reader.end + 1)
                if isinstance(batch, list) for s in batch
                if s.metric == "disk_util_ratio" and s.kind == "interval"
                and s.labels["step"] == step]
    assert sum(1 for t, _s in util if t > end + JITTER) >= 2  # the sleep's seconds
    skip = 1.0
    expected: dict[str, list[float]] = {}
    for t, s in util:
        if start + skip + INTERVAL - JITTER <= t < end + JITTER:
            expected.setdefault(s.labels["device"], []).append(s.value)
    assert expected and all(len(v) >= 3 for v in expected.values())

    rows = list(csv.DictReader(io.StringIO(_report(runs_session, "--skip", "1", "--steps",
                                                   step, "--format", "csv"))))
    found = {r["item"]: float(r["value"]) for r in rows
             if r["metric"] == "disk_util_ratio" and r["host"] == "alpha"}
    assert found == pytest.approx({d: sum(v) / len(v) for d, v in expected.items()},
                                  rel=1e-9)
    first = next(r for r in rows if r["host"] == "alpha")
    # the window as the CSV says it: from the skip after fio's own start to its last report
    assert float(first["window_start"]) == pytest.approx(start + skip, abs=2e-3)
    assert float(first["window_end"]) == pytest.approx(end, abs=2e-3)
    # and from fio's own start (--skip 0): its first second, not the seconds before it. Not
    # held against fio's own "Disk stats" utilisation: that is over another span (fio's run
    # from its first I/O to its last, against iostat's whole seconds on its own clock, a
    # second at either edge moving the mean of 6 by a sixth of its difference), and the
    # device is the machine's, busy with whatever else runs on it (the other worker's tests:
    # 0.78 against fio's 0.83 in a loaded run of the suite), which fio counts as busy too.
    whole = list(csv.DictReader(io.StringIO(_report(runs_session, "--skip", "0", "--steps",
                                                    step, "--format", "csv"))))
    from_start: dict[str, list[float]] = {}
    for t, s in util:
        if start + INTERVAL - JITTER <= t < end + JITTER:
            from_start.setdefault(s.labels["device"], []).append(s.value)
    found = {r["item"]: float(r["value"]) for r in whole
             if r["metric"] == "disk_util_ratio" and r["host"] == "alpha"}
    assert found == pytest.approx({d: sum(v) / len(v) for d, v in from_start.items()},
                                  rel=1e-9)
    (fio_util,) = [s for s in _samples(runs_session, "disk_util_ratio", "summary")
                   if s.labels["step"] == step]
    assert fio_util.labels["device"] in found  # the device fio used is among them


# --- one iperf3 server, two clients --------------------------------------------------------

def test_one_server_two_clients_each_client_and_the_fleet(net_session: Path) -> None:
    own = [s for s in _samples(net_session, "net_bandwidth_bytes", "summary")
           if s.labels["step"] == "net"]
    sent = {s.host: s.value for s in own if s.host != "alpha"
            and s.labels["direction"] == "send" and s.labels["stream"] == "5"}
    port_of = {s.host: s.labels["port"] for s in own if s.host != "alpha"}
    # the server's own "receiver" lines, one per test (per client's port)
    received = {s.labels["port"]: s.value for s in own if s.host == "alpha"}
    assert set(sent) == {"beta", "gamma"} and set(received) == set(port_of.values())
    assert len(set(port_of.values())) == 2

    data = json.loads(_report(net_session, "--steps", "net", "--format", "json"))
    rows = {r["host"]: {(v["metric"], v["op"], v.get("item", "")): v["value"]
                        for v in r["values"]} for r in data["rows"]}
    alpha = rows["alpha"]
    assert alpha[("net_bandwidth_bytes", "receive", "")] == pytest.approx(
        sum(received.values()))
    for client in ("beta", "gamma"):
        assert alpha[("net_bandwidth_bytes", "receive", client)] == pytest.approx(
            received[port_of[client]])
        assert rows[client][("net_bandwidth_bytes", "send", "")] == pytest.approx(
            sent[client])
    fleet = rows["(fleet)"]
    assert fleet[("net_bandwidth_bytes", "send", "")] == pytest.approx(sum(sent.values()))
    assert fleet[("net_bandwidth_bytes", "receive", "")] == pytest.approx(
        sum(received.values()))

    table = md_tables(_report(net_session, "--steps", "net"))[0]
    by_name = {r[0]: dict(zip(table[0], r, strict=True)) for r in table[1:]}
    for client in ("beta", "gamma"):
        assert by_name[f"alpha (server ← {client})"]["net receive"] == format_bit_rate(
            received[port_of[client]])
        assert by_name[f"{client} (client)"]["net send"] == format_bit_rate(sent[client])
    assert by_name["fleet"]["net send"] == format_bit_rate(sum(sent.values()))

    # the console: the Jobs tab lists each of the server's tests, at iperf3's own figures
    state = FleetState("net")
    with SessionReader.open(str(net_session)) as reader:
        for record in reader.records(reader.start, reader.end + 1):
            if isinstance(record, list):
                state.on_samples(record)
            elif isinstance(record, Event):
                state.on_event(record)
    jobs = job_figures(state, "alpha")
    for port, rate in received.items():
        figures, final = jobs[("net", f"port {port}", "receive")]
        assert final and figures["bw"] == pytest.approx(rate)


# --- info's gaps ---------------------------------------------------------------------------

def test_info_lists_real_gaps_only(net_session: Path) -> None:
    with SessionReader.open(str(net_session)) as reader:
        raw = reader.gaps()
        runs = {e.step: e.t for e in reader.events() if e.kind == "run_start"
                and e.host == "alpha"}
    # what the recording has: beta and gamma quiet from the end of the network step on
    assert {g.host for g in raw} >= {"beta", "gamma"}
    done = benchtui("info", str(net_session), "--json")
    assert done.returncode == 0, done.stderr
    gaps = json.loads(done.stdout)["gaps"]
    assert [g["host"] for g in gaps] == ["alpha"], gaps  # fio stopped for 4 s mid-run
    (gap,) = gaps
    assert gap["start"] > runs["stalled"] and 3.0 < gap["seconds"] < 6.0
    text = benchtui("info", str(net_session)).stdout
    assert re.search(r"gaps      1\n  alpha: no sample for \d\.\ds from \+", text), text


def test_which_silences_are_gaps() -> None:
    """``real_gaps`` on the reader's gaps: a monitored host is expected to send until the
    last step ended, a host without a monitor while it runs a step's process."""
    t = 1_800_000_000.0

    def e(at: float, kind: str, step: str | None, host: str | None = None) -> Event:
        return Event(t + at, kind, kind, "info", host, step, {})

    events = [e(0, "step_start", "a"), e(0.1, "run_start", "a", "m"),
              e(0.1, "run_start", "a", "idle"), e(10, "run_end", "a", "m"),
              e(5, "run_end", "a", "idle"), e(10, "step_end", "a"),
              e(10, "step_start", "b"), e(10.1, "run_start", "b", "m"),
              e(30, "run_end", "b", "m"), e(30, "step_end", "b")]
    end = t + 33
    raw = [Gap("m", t + 12, t + 20),      # monitored, mid-session: a gap
           Gap("m", t + 28, end),         # up to the end: a gap up to the last step's end
           Gap("idle", t + 5, end),       # in no step after its run: none
           Gap("idle", t + 1, t + 4.5),   # during its run: a gap
           Gap("m", t + 31, end)]         # after the last step (the session closing): none
    found = real_gaps(raw, events, end=end, monitored={"m"})
    assert [(g.host, g.t0 - t, g.t1 - t) for g in found] == [
        ("m", 12, 20), ("idle", 1, 4.5)]  # (28 to 30: two seconds, not more than 2 s)
    # a step that never ended (a host lost, the recording cut short): up to the end
    cut = real_gaps([Gap("m", t + 28, end)], events[:-1], end=end, monitored={"m"})
    assert [(g.t0 - t, g.t1 - t) for g in cut] == [(28, 33)]
    assert monitored_hosts('[[monitor]]\ntool = "iostat"\nhosts = ["m"]\n', ["m", "x"]) \
        == {"m"}
    assert monitored_hosts('[[monitor]]\ntool = "iostat"\n', ["m", "x"]) == {"m", "x"}
    assert monitored_hosts("", ["m"]) == set() and monitored_hosts("[oops", ["m"]) == {"m"}
