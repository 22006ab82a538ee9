"""A recording whose data cannot be read, or is cut short, says so where the user looks: the
replay console shows the reader's warnings when it meets them (a notification and a line of
the log, not only stderr after quitting), ``info`` says it read only the index, ``info
--verify`` reads every frame and names the damage, and ``dump`` says why it gave nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import RichLog

from benchtui.cli.main import main
from benchtui.session.replay import ReplayPlayer
from benchtui.store.recording import SessionReader
from benchtui.store.recording import format as fmt
from benchtui.ui.notices import NoticeBar
from benchtui.ui.replay import READER_WARNING, ReplayApp, ReplaySource
from tests.replay_recording import RecordedRun

SIZE = (120, 40)


async def notified(app: ReplayApp, pilot: Pilot[int], text: str) -> list[str]:
    """The notifications' messages once one holds ``text`` (a few ticks; a loaded machine
    may take seconds)."""
    for _ in range(100):
        # the console's notices (``NoticeBar``, above the footer), Textual's toasts before
        messages = [n.message for bar in app.screen.query(NoticeBar) for n in bar.notices] \
            + [n.message for n in app._notifications]
        if any(text in m for m in messages):
            return messages
        await pilot.pause(0.1)
    raise AssertionError(f"no notification with {text!r}: {messages}")


def data_damaged(src: Path, dst: Path) -> None:
    """``src`` with a few bytes of every DATA frame's payload inverted: the index, the
    headers and the summaries intact, no sample readable."""
    data = bytearray(src.read_bytes())
    pos = fmt.FILE_HEADER_SIZE
    while (h := fmt.read_frame_header(bytes(data), pos, pos)) is not None:
        if h.type == fmt.DATA and h.payload_len > 12:
            for i in range(h.payload_offset + 2, h.payload_offset + 12):
                data[i] ^= 0xFF
        pos = h.end
    dst.write_bytes(bytes(data))


@pytest.fixture
def damaged(recorded: RecordedRun, tmp_path: Path) -> Path:
    path = tmp_path / "damaged.btr"
    data_damaged(recorded.path, path)
    return path


async def test_replay_of_unreadable_data_says_why_in_the_console(damaged: Path) -> None:
    with SessionReader.open(str(damaged)) as reader:
        assert reader.warnings == []  # opened from the index: nothing seen yet
        app = ReplayApp(ReplaySource(ReplayPlayer(reader)))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            messages = await notified(app, pilot, "cannot be read in full")
            assert any(m.startswith("the recording cannot be read in full: the file is "
                                    "damaged at byte ") for m in messages), messages
            state = app.player.state
            assert any(e.kind == READER_WARNING for e in state.events)
            assert state.warnings_total >= 1  # the header's warning count shows it
            await pilot.press("l")  # and the log keeps it
            for _ in range(50):
                await pilot.pause(0.1)
                log = "\n".join(str(line.text)
                                for line in app.screen.query_one("#events", RichLog).lines)
                if "cannot be read in full" in log:
                    break
            assert "cannot be read in full" in log


async def test_replay_of_a_cut_file_says_so_at_once(recorded: RecordedRun,
                                                    tmp_path: Path) -> None:
    cut = tmp_path / "cut.btr"
    cut.write_bytes(recorded.path.read_bytes()[:recorded.path.stat().st_size // 2])
    with SessionReader.open(str(cut)) as reader:
        app = ReplayApp(ReplaySource(ReplayPlayer(reader)))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await notified(app, pilot, "the recording was not closed")


def test_info_says_it_read_the_index_and_verify_reads_every_frame(
        damaged: Path, recorded: RecordedRun, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(damaged)]) == 0
    out = capsys.readouterr().out
    assert "checked   the index only: the frames' data were not read (benchtui info " \
           "--verify reads every frame)" in out
    assert main(["info", str(damaged), "--verify"]) == 1
    captured = capsys.readouterr()
    assert "checked   every frame read: DAMAGED, 0 of " in captured.out
    assert "warning   the file is damaged at byte " in captured.out
    assert "benchtui: warning: the file is damaged at byte " in captured.err
    assert main(["info", str(damaged), "--verify", "--json"]) == 1
    doc = capsys.readouterr().out
    assert '"checked": "every frame"' in doc and '"readable_samples": 0' in doc
    # an intact file verifies clean
    assert main(["info", str(recorded.path), "--verify"]) == 0
    assert "every frame read: all " in capsys.readouterr().out
    # dump says why it gave nothing
    assert main(["dump", str(damaged)]) == 1
    err = capsys.readouterr().err
    assert "benchtui: warning: the file is damaged at byte " in err
    assert f"no sample of {damaged} could be read: the file is damaged" in err
