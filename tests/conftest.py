"""Plugins and fixtures shared by the test modules."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

pytest_plugins = ["tests.conftest_ssh", "tests.conftest_ceph", "tests.replay_recording",
                  "tests.baseline_recording"]


@pytest.fixture
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone is UTC for the test (the console shows local clock times:
    snapshots and screen texts must not depend on the machine's zone)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
