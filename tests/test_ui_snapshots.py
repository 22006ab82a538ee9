"""The console's main layouts, pixel for pixel, at fixed terminal sizes (pytest-textual-snapshot).

The data is real fio json+ and iostat output on a fixed timeline and a fixed clock
(tests/ui_data.py), so the screens are the same on every run. After a deliberate change of
layout, look at the report (pytest writes snapshot_report.html on failure), then accept the
new screens with ``.venv/bin/pytest tests/test_ui_snapshots.py --snapshot-update`` and
commit tests/__snapshots__/.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from benchtui.session.compare import SessionLayout
from benchtui.session.replay import ReplayPlayer
from benchtui.store.recording import SessionReader
from benchtui.ui.app import ConsoleApp
from benchtui.ui.ghost import open_ghost
from benchtui.ui.replay import ReplayApp, ReplaySource
from benchtui.ui.source import StaticSource
from tests.baseline_recording import STEP, fixture_pair
from tests.ui_data import NOW, fleet_state

SnapCompare = Callable[..., bool]


pytestmark = pytest.mark.usefixtures("utc_clock")


def app_for(hosts: int, *, theme: str = "dark", **kwargs: int) -> ConsoleApp:
    return ConsoleApp(StaticSource(fleet_state(hosts, **kwargs), NOW), theme=theme)


def test_one_host_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(1), terminal_size=(80, 24))


def test_one_host_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(1), terminal_size=(120, 40))


def test_one_host_200x60(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(1), terminal_size=(200, 60))


def test_four_hosts_200x60(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(4), terminal_size=(200, 60))


def test_detail_view_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(1), press=["enter"], terminal_size=(80, 24))


def test_detail_view_jobs_narrow_64x24(snap_compare: SnapCompare) -> None:
    """A table wider than the screen says which columns are out of sight."""
    assert snap_compare(app_for(1), press=["enter", "3"], terminal_size=(64, 24))


def test_four_hosts_with_a_failed_and_a_silent_one_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(5, failed=1, reconnecting=1), terminal_size=(120, 40))


def test_sixteen_hosts_200x60(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(16, failed=1), terminal_size=(200, 60))


def test_many_hosts_compact_and_paged_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(32, failed=2), terminal_size=(80, 24))


def test_many_hosts_compact_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(32, failed=2, reconnecting=1), terminal_size=(120, 40))


def test_detail_view_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(2), press=["enter"], terminal_size=(120, 40))


def test_detail_view_wide_200x60(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(2), press=["enter"], terminal_size=(200, 60))


def test_session_log_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(3, failed=1), press=["l"], terminal_size=(80, 24))


def test_help_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(1), press=["question_mark"], terminal_size=(80, 24))


@pytest.mark.parametrize("theme", ["light", "high-contrast"])
def test_themes_120x40(snap_compare: SnapCompare, theme: str) -> None:
    assert snap_compare(app_for(4, theme=theme, failed=1), terminal_size=(120, 40))


def ghost_app(*, replay: bool) -> ConsoleApp:
    """The new session of tests/fixtures/baseline 4 s into its step, against the baseline
    recorded with other fio settings (half the IOPS, the same bandwidth), its ghost computed
    in the console's thread (the same on every run): the live console on a state fed as the
    sinks feed it, or the replay console at that place."""
    pair = fixture_pair()
    reader = SessionReader.open(str(pair.new))
    layout = SessionLayout.from_events(reader.events())
    ghost, _notes = open_ghost(str(pair.old), check=lambda b: b.check_session(layout),
                               threaded=False)
    player = ReplayPlayer(reader)
    while player.position < layout.step_started[STEP] + 4.0:
        player.step()
    if replay:
        return ReplayApp(ReplaySource(player), ghost=ghost)
    return ConsoleApp(StaticSource(player.state, player.position), ghost=ghost)


def test_baseline_ghost_live_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(ghost_app(replay=False), terminal_size=(120, 40))


def test_baseline_ghost_replay_100x30(snap_compare: SnapCompare) -> None:
    assert snap_compare(ghost_app(replay=True), terminal_size=(100, 30))


def test_baseline_ghost_detail_view_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(ghost_app(replay=False), press=["enter"], terminal_size=(120, 40))


def test_baseline_ghost_compact_rows_120x40(snap_compare: SnapCompare) -> None:
    assert snap_compare(ghost_app(replay=False), press=["c"], terminal_size=(120, 40))
