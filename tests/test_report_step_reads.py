"""A report's steps read in two processes (``report/step_reads.py``): the same reads as one
process makes, and the same report; a helper process that dies (SIGKILL) or fails leaves
its steps to the parent, which says so and still reports the same."""

from __future__ import annotations

import gc
import os
import signal
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from benchtui.report import step_reads
from benchtui.report.build import ReportOptions, build_report
from benchtui.report.run_reads import RunRead, RunReader
from benchtui.session.compare import RunWindow, SessionLayout
from benchtui.store.recording import SessionReader
from tests import stats_session


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("steps") / "steps.btr"
    stats_session.write(path, stats_session.records())
    return path


def _digest(reads: list[list[RunRead]]) -> list[object]:
    """Every figure of the reads, exactly (floats compared as they are)."""
    def stats(s: dict[object, object]) -> list[object]:
        return sorted((repr(d), st.count, st.total, st.total_sq, st.minimum, st.maximum,  # type: ignore[attr-defined]
                       st.first_t, st.last_t,  # type: ignore[attr-defined]
                       None if st.histogram is None  # type: ignore[attr-defined]
                       else sorted(st.histogram.counts.items()))  # type: ignore[attr-defined]
                      for d, st in s.items())
    return [[(stats(r.whole), stats(r.window), r.steady, r.started, r.shown, r.short)  # type: ignore[arg-type]
             for r in step] for step in reads]


def _read(path: Path, processes: int, warnings: list[str]) -> list[list[RunRead]]:
    with SessionReader.open(str(path)) as r:
        layout = SessionLayout.from_events(r.events())
        steps = [layout.runs_of(s) for s in layout.steps]
        assert len(steps) >= 2 and sum(map(len, steps)) >= 8
        return step_reads.read_steps(r, steps, 5.0, imported=False, warnings=warnings,
                                     processes=processes)


def test_two_processes_read_and_report_what_one_does(synthetic: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    warnings: list[str] = []
    one, two = _read(synthetic, 1, warnings), _read(synthetic, 2, warnings)
    assert warnings == []
    assert _digest(two) == _digest(one) and any(r.steady for step in one for r in step)
    options = ReportOptions(skip=5.0)
    alone = build_report([str(synthetic)], options)
    monkeypatch.setattr(step_reads, "PARALLEL_RUNS", 1)
    monkeypatch.setattr(step_reads, "usable_cpus", lambda: 2)
    together = build_report([str(synthetic)], options)
    assert repr(together.rows) == repr(alone.rows) and together.warnings == alone.warnings


@pytest.mark.parametrize("how", ["killed", "raises"])
def test_a_failed_helper_leaves_its_steps_to_the_parent(synthetic: Path, how: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper process really dies (SIGKILL to itself) or fails with an error while
    reading its first step: the parent reads its steps, the same reads, and says why."""
    parent = os.getpid()
    read = RunReader.read

    def failing(self: RunReader, runs: Sequence[RunWindow]) -> list[RunRead]:
        if os.getpid() != parent:
            if how == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("a helper's failure")
        return read(self, runs)

    warnings: list[str] = []
    want = _read(synthetic, 1, warnings)
    monkeypatch.setattr(RunReader, "read", failing)
    got = _read(synthetic, 2, warnings)
    assert _digest(got) == _digest(want)
    assert len(warnings) == 1 and "read in one process after all" in warnings[0]
    assert ("killed by signal 9" if how == "killed" else "exited with status 1") in warnings[0]


def test_reading_leaves_the_collector_as_it_was(synthetic: Path) -> None:
    """The collector's thresholds are changed while runs are read, and objects frozen
    across the fork: both are as they were after, in the parent."""
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    for processes in (1, 2):
        _read(synthetic, processes, [])
        assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_no_fork_beside_another_thread(synthetic: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With another thread in the process (the console's, say), a big report is read in
    this process alone: the same reads, and no fork."""
    want = _read(synthetic, 1, [])
    monkeypatch.setattr(step_reads, "PARALLEL_RUNS", 1)
    monkeypatch.setattr(step_reads, "usable_cpus", lambda: 2)
    forks: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, args=(30,))
    other.start()
    try:
        with SessionReader.open(str(synthetic)) as r:
            layout = SessionLayout.from_events(r.events())
            got = step_reads.read_steps(r, [layout.runs_of(s) for s in layout.steps], 5.0,
                                        imported=False, warnings=[])
    finally:
        stop.set()
        other.join()
    assert forks == [] and _digest(got) == _digest(want)
    with SessionReader.open(str(synthetic)) as r:  # and alone, it forks
        layout = SessionLayout.from_events(r.events())
        step_reads.read_steps(r, [layout.runs_of(s) for s in layout.steps], 5.0,
                              imported=False, warnings=[])
    assert forks == [1]
