"""A network step's figures (issue 21, in the figures): when iperf3 ends, the net row keeps
iperf3's end-of-run figures (as fio rows keep fio's), and against a baseline the net figures
get shares. Real iperf3 over loopback, recorded by benchtui twice (a rate-limited run as the
baseline, then one at half its rate), replayed as a live console sees it."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchtui.cli.extras import recording
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import load_plan
from benchtui.session.compare import SessionLayout
from benchtui.session.engine import Session
from benchtui.session.replay import ReplayPlayer
from benchtui.store import figures as fig
from benchtui.store.recording import SessionReader
from benchtui.ui.ghost import open_ghost
from tests.helpers import require_tool

STEP = "loopback"


def _record(path: Path, rate: str) -> None:
    plan = path.with_suffix(".toml")
    plan.write_text(f"""\
[session]
name = "net-{uuid.uuid4().hex[:6]}"
[hosts.here]
local = true
[[step]]
name = "{STEP}"
tool = "iperf3"
server = "here"
clients = ["here"]
args = "-t 4 -b {rate}"
""")
    session = Session(load_plan(plan, parser_names=all_parsers()))
    with recording(session, str(path)), ThreadPoolExecutor(1) as pool:
        result = pool.submit(asyncio.run, session.run()).result(timeout=120)
    assert result.ok, result.failures


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    require_tool("iperf3")
    d = tmp_path_factory.mktemp("net")
    old, new = d / "old.btr", d / "new.btr"
    _record(old, "400M")
    _record(new, "200M")
    return old, new


def _played(path: Path, seconds: float) -> tuple[ReplayPlayer, SessionReader, float]:
    reader = SessionReader.open(str(path))
    player = ReplayPlayer(reader)
    started = SessionLayout.from_events(reader.events()).step_started[STEP]
    while player.position < started + seconds:
        if not player.step():
            break
    return player, reader, started


def test_net_figures_get_shares_of_the_baseline(pair: tuple[Path, Path]) -> None:
    old, new = pair
    player, reader, _started = _played(new, 3.0)
    layout = SessionLayout.from_events(reader.events())
    ghost, notes = open_ghost(str(old), check=lambda b: b.check_session(layout),
                              threaded=False)
    assert ghost is not None and notes == []
    now = player.position
    ghost.update(player.state, now, 60.0)
    f = fig.host_figures(player.state, "here", now)
    assert f.net_send is not None and not f.net_final
    versus = ghost.host_versus(f, now)
    assert versus is not None
    # half the baseline's rate (iperf3's -b: 200M against 400M)
    assert versus.net["send"] == pytest.approx(0.5, abs=0.1), versus
    assert versus.net["receive"] == pytest.approx(0.5, abs=0.1), versus
    ghost.close()
    reader.close()


def test_the_net_row_keeps_iperf3s_end_of_run_figures(pair: tuple[Path, Path]) -> None:
    _old, new = pair
    player, reader, started = _played(new, 60.0)  # to the end of the session
    now = player.position + 10.0
    f = fig.host_figures(player.state, "here", now)
    assert f.net_final and f.net_send == pytest.approx(200e6 / 8, rel=0.1), f
    assert f.net_receive == pytest.approx(200e6 / 8, rel=0.1)
    summary = [s for s in player.state.store.summaries
               if s.metric == "net_bandwidth_bytes" and s.labels.get("direction") == "send"]
    assert summary and started
    reader.close()
