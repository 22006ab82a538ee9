"""``-o FILE`` of report and plot: written whole under a temporary name, with a plain file's
mode, and devices written directly (renaming over /dev/null would replace the device)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.cli.report_cmd import write_whole
from benchtui.errors import OutputError, UsageError


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


def test_a_full_disk_is_a_failure_at_run_time() -> None:
    with pytest.raises(OutputError, match="cannot write the output to /dev/full: No space"):
        write_whole("/dev/full", b"x")


# --- values too large for a double -------------------------------------------------------------

HUGE = f"{1.7e308:.2f}"


def _huge_iostat(tmp_path: Path) -> Path:
    """A real iostat -x capture of seed 003 with every number replaced by 1.7e308 (finite, so
    iostat's parser takes it): the device's means overflow to infinity, the rest stay huge."""
    src = Path(__file__).parent / "fixtures" / "disk" / "seed003_iostat_x_grep_1copy_qd8_aio.txt"
    lines = []
    for line in src.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        huge = parts and parts[0] == "nvme1n1"
        lines.append(" ".join([parts[0], *(HUGE for _ in parts[1:])]) if huge else line)
    path = tmp_path / "huge.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_overflowing_values_say_so_in_every_format(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "h.btr"
    assert main(["import", str(_huge_iostat(tmp_path)), "--host", "h", "--step", "s",
                 "-o", str(session)]) == 0
    capsys.readouterr()
    out = {}
    for fmt in ("md", "csv", "json", "html"):
        assert main(["report", str(session), "--format", fmt]) == 0, fmt
        out[fmt], err = capsys.readouterr()
        assert "Traceback" not in err
    # the queue depth's mean overflowed: every format says so, none leaves it blank
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    depth = next(r for r in rows if r["metric"] == "disk_queue_depth")
    assert depth["value"] == "overflow"
    doc = json.loads(out["json"])
    jdepth = next(v for r in doc["rows"] for v in r["values"]
                  if v["metric"] == "disk_queue_depth")
    assert jdepth["value"] is None and jdepth["overflow"] == ["value"]
    assert "overflow" in out["html"]
    # finite huge values stay numbers, in a short cell: no 300-digit runs anywhere
    awaits = [r for r in rows if r["metric"] == "disk_await_seconds"]
    assert awaits and all(float(r["value"]) > 1e300 for r in awaits)
    for fmt, text in out.items():
        assert not re.search(r"\d{40}", text), fmt
    assert re.search(r"r 1\.7e\+305 s", out["md"])
