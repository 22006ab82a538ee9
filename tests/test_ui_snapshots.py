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

from benchtui.ui.app import ConsoleApp
from benchtui.ui.source import StaticSource
from tests.ui_data import NOW, fleet_state

SnapCompare = Callable[..., bool]


pytestmark = pytest.mark.usefixtures("utc_clock")


def app_for(hosts: int, *, theme: str = "dark", **kwargs: int) -> ConsoleApp:
    return ConsoleApp(StaticSource(fleet_state(hosts, **kwargs), NOW), theme=theme)


def test_one_host_80x24(snap_compare: SnapCompare) -> None:
    assert snap_compare(app_for(1), terminal_size=(80, 24))


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
