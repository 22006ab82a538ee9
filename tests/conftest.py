"""Plugins and fixtures shared by the test modules."""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Under pytest-xdist (scripts/test runs 3 workers), each worker has a home of its own: local
#: runs keep their files in ``~/.cache/benchtui/runs``, and a worker must not find the runs of
#: another worker's test there as leftovers of an earlier session (nor its history catalog,
#: demo files, themes). The SSH hosts' user is per worker too (tests/sshd.py).
#: A checkout whose suite runs beside another's on one machine sets ``BENCHTUI_TEST_TAG``: its
#: runs in one process get a home of their own too.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
TAG = os.environ.get("BENCHTUI_TEST_TAG", "")
if WORKER or TAG:
    _HOME = tempfile.mkdtemp(prefix=f"benchtui-home-{TAG}{WORKER}-")
    atexit.register(shutil.rmtree, _HOME, ignore_errors=True)
    os.environ["HOME"] = _HOME

#: Test files that share one resource only one worker may hold at a time: the network
#: namespaces of tests/sshd.py's ``NetnsLab`` (fixed names and addresses, a lock file), and
#: the iperf3/iperf servers on their default ports (5201, 5001) of the real network steps.
SHARED_GROUPS = {
    "netns": ("test_session_engine.py", "test_session_watchdog.py", "test_transport_ssh.py"),
    "iperf-ports": ("test_report_compare.py", "test_export_dashboard_backfill.py",
                    "test_net_figures.py", "test_parse_iperf2_csv.py", "test_plan_commands.py",
                    "test_real_net.py", "test_tool_words.py"),
}

IPERF_LOCK = Path(tempfile.gettempdir()) / "benchtui-iperf-ports.lock"

pytest_plugins = ["tests.conftest_ssh", "tests.conftest_ceph", "tests.replay_recording",
                  "tests.baseline_recording"]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, each test file runs whole on one worker (its module and
    session fixtures, such as recorded sessions, are made once), and the files of a
    ``SHARED_GROUPS`` entry on the same worker."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        name = item.path.name
        group = next((g for g, files in SHARED_GROUPS.items() if name in files), name)
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="module", autouse=True)
def _iperf_ports(request: pytest.FixtureRequest) -> Iterator[None]:
    """The files of the ``iperf-ports`` group hold a machine-wide lock while they run: two
    checkouts' suites at once (or a suite beside a developer's iperf3) must take turns on the
    default ports, as the workers of one suite do through their group."""
    if request.path.name not in SHARED_GROUPS["iperf-ports"]:
        yield
        return
    with IPERF_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone is UTC for the test (the console shows local clock times:
    snapshots and screen texts must not depend on the machine's zone)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(params=["compiled", "pure-python"])
def bins_pass(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test runs on both paths of fio json+'s percentiles (``_fio_json_walked``): the
    compiled pass (skipped where it is not built: tests/test_fio_json_walked.py says whether
    it should be) and pure Python; subprocesses started by the test take the same path."""
    from benchtui.parsers import _fio_json_walked

    if request.param == "compiled":
        monkeypatch.delenv("BENCHTUI_PURE_PYTHON", raising=False)
        built = _fio_json_walked.load_pass()
        if built is None:
            pytest.skip("the compiled pass is not built here")
        monkeypatch.setattr(_fio_json_walked, "PASS", built)
    else:
        monkeypatch.setenv("BENCHTUI_PURE_PYTHON", "1")
        monkeypatch.setattr(_fio_json_walked, "PASS", None)
    return str(request.param)
