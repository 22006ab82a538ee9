"""``-o FILE`` of report and plot: written whole under a temporary name, with a plain file's
mode, and devices written directly (renaming over /dev/null would replace the device)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from benchtui.cli.report_cmd import write_whole
from benchtui.errors import UsageError


def test_written_whole_with_a_plain_mode(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    write_whole(str(out), b"x")
    mask = os.umask(0o022)
    os.umask(mask)
    assert out.read_bytes() == b"x" and stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    out.chmod(0o640)
    write_whole(str(out), b"y")  # replacing keeps the file's mode
    assert out.read_bytes() == b"y" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]


def test_a_device_is_written_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_whole(str(fifo), b"through")
        assert os.read(reader, 100) == b"through"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_an_unwritable_place_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot write"):
        write_whole(str(tmp_path / "no" / "such" / "r.md"), b"x")
