"""``benchtui import`` of many small steps (issue 20): the session file stays a few times the
size of its input (benchmarks/report_scale.py measures 10^5 steps), every event reads back as
written, by the index and by walking the frames, and the records made step by step come out
in time order, as the importer's whole-session sort gave them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.report_scale import make_import
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.session.import_map import load_map
from benchtui.session.importer import import_outputs
from benchtui.store.recording import SessionReader
from benchtui.store.recording import format as fmt

STEPS, HOSTS = 800, 2


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, float]:
    d = tmp_path_factory.mktemp("import-size")
    # the benchmark's own input: mbw runs under marker lines, and the map that cuts them
    report, imap = make_import(d, HOSTS, STEPS)
    out = d / "imported.btr"
    started = time.perf_counter()
    import_outputs([str(report)], str(out), import_map=load_map(str(imap)),
                   start=1_800_000_000.0)
    return report, out, time.perf_counter() - started


def test_the_file_is_a_few_times_its_input(imported: tuple[Path, Path, float]) -> None:
    report, out, _seconds = imported
    ratio = out.stat().st_size / report.stat().st_size
    assert ratio <= 3.0, f"{ratio:.2f}x the input"  # (7x before summaries were compressed; 1.5x)


def test_every_event_reads_back(imported: tuple[Path, Path, float], tmp_path: Path) -> None:
    """Six events a run (step start and end, run start and end, running and done), from the
    index, from the summaries alone (no index) and from the data: the same."""
    _report, out, _seconds = imported
    data = out.read_bytes()
    pos, index = fmt.FILE_HEADER_SIZE, None
    while (h := fmt.read_frame_header(data, pos, pos)) is not None:
        if h.type == fmt.INDEX:
            index = h.offset
        pos = h.end
    assert index is not None
    cut = tmp_path / "no-index.btr"
    cut.write_bytes(data[:index])
    with SessionReader.open(str(out)) as r, SessionReader.open(str(cut)) as walked:
        events = r.events()
        assert walked.events() == events
        in_data = [x for _t, x in r.timed_records(r.start, r.end + 1) if isinstance(x, Event)]
        assert in_data == events
    kinds = [e.kind for e in events]
    assert kinds.count(ev.STEP_START) == kinds.count(ev.STEP_END) == STEPS
    assert kinds.count(ev.RUN_START) == kinds.count(ev.RUN_END) == STEPS * HOSTS
    assert kinds.count(ev.HOST_STATE) == HOSTS + 2 * STEPS * HOSTS
    assert [e.step for e in events if e.kind == ev.STEP_START] \
        == [f"s{s:06d}" for s in range(STEPS)]


def test_records_are_in_time_order(imported: tuple[Path, Path, float]) -> None:
    """Made a step at a time, the records are written in the order of their times (a
    step's slot ends before the next one's starts): the order a sort of all of them gives."""
    _report, out, _seconds = imported
    with SessionReader.open(str(out)) as r:
        times = [t for t, _x in r.timed_records(r.start, r.end + 1)]
        assert times == sorted(times)
        assert r.sample_count == 2 * STEPS * HOSTS
        first = next(r.records(r.start, r.end + 1))
        assert isinstance(first, Event) and first.kind == ev.HOST_STATE
