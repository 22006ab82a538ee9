"""What ``import`` and ``parse`` refuse, each in one sentence and exit 2 before much is read:
devices and endless inputs (``/dev/zero``), files over the documented size, names holding
control characters (with the line that holds them), and a map's regular expression that
backtracks without end (cut at its time bound, with the line). A pipe path (``<(cmd)``) is
parsed as the live stream it is, like stdin."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.session import importer
from benchtui.session.inputs import MAX_INPUT_BYTES

FIXTURES = Path(__file__).parent / "fixtures"
IOSTAT = FIXTURES / "disk" / "seed003_iostat_x_grep_1copy_qd8_aio.txt"
FIO = FIXTURES / "fio_text" / "seed000_linux_none.txt"


def benchtui(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], capture_output=True,
                          text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)


def one_sentence(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchtui: "), done.stderr
    return lines[0]


def test_endless_inputs_are_refused_before_reading(tmp_path: Path) -> None:
    out = str(tmp_path / "z.btr")
    for argv in (("import", "/dev/zero", "--host", "h", "--step", "s", "-o", out),
                 ("import", str(IOSTAT), "--map", "/dev/zero", "-o", out),
                 ("parse", "/dev/zero"), ("parse", "/dev/urandom")):
        start = time.monotonic()
        done = benchtui(*argv)
        assert time.monotonic() - start < 10
        assert done.returncode == 2, done.stderr
        assert "is a device, not a file of saved output" in one_sentence(done)
    assert not os.path.exists(out)


def test_files_over_the_limit_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as f:  # sparse: costs no disk
        f.truncate(MAX_INPUT_BYTES + 1)
    done = benchtui("import", str(big), "--host", "h", "--step", "s", "-o",
                    str(tmp_path / "b.btr"))
    assert done.returncode == 2
    assert one_sentence(done) == (
        f"benchtui: {big}: is 512.0 MiB, more than the 512 MiB benchtui reads whole; cut it "
        "into parts (split -l) and import the part you need")
    done = benchtui("parse", str(big))
    assert done.returncode == 2
    assert "benchtui parse - < FILE reads it as a stream" in one_sentence(done)


def test_a_pipe_path_is_parsed_as_a_live_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "live"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as w:
            w.write(IOSTAT.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    done = benchtui("parse", str(fifo))
    writer.join(5)
    assert done.returncode == 0, done.stderr
    assert done.stdout == benchtui("parse", str(IOSTAT)).stdout.replace(
        str(IOSTAT), str(fifo))
    assert done.stdout.count("\n") > 100


def test_control_characters_in_names_are_refused_with_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "c.btr")
    # on the command line
    for option in ("--host", "--step"):
        names = {"--host": "h", "--step": "s", option: "db\x1b[2J1"}
        assert main(["import", str(IOSTAT), "--host", names["--host"], "--step",
                     names["--step"], "-o", out]) == 2
        err = capsys.readouterr().err
        assert f"benchtui: {option} 'db\\x1b[2J1' holds control characters" in err
        assert "\x1b" not in err
    # named by a map: the marker's line
    report = tmp_path / "r.md"
    report.write_text("## randread\n\n- host a\n\n" + IOSTAT.read_text(encoding="utf-8")
                      + "\n- ho\x07st\x1b[2J\n\n" + IOSTAT.read_text(encoding="utf-8"),
                      encoding="utf-8")
    imap = tmp_path / "m.toml"
    imap.write_text('[host]\nmarker = "bullet"\n[step]\nmarker = "heading"\n',
                    encoding="utf-8")
    line = report.read_text(encoding="utf-8").split("\n").index("- ho\x07st\x1b[2J") + 1
    assert main(["import", str(report), "--map", str(imap), "-o", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"benchtui: {report}:{line}: the host name 'ho\\x07st\\x1b[2J' holds "
                          "control characters")
    assert "\x1b" not in err and "\x07" not in err
    # a name the tool printed: fio's job name
    fio = tmp_path / "fio.txt"
    text = FIO.read_text(encoding="utf-8")
    fio.write_text(text.replace("random-read: (groupid=0", "rand\x1b[2Jread: (groupid=0", 1),
                   encoding="utf-8")
    line = fio.read_text(encoding="utf-8").split("\n").index(
        next(x for x in fio.read_text(encoding="utf-8").split("\n") if "\x1b" in x)) + 1
    assert main(["import", str(fio), "--host", "h", "--step", "s", "-o", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"benchtui: {fio}:{line}: the job name 'rand\\x1b[2Jread' holds "
                          "control characters"), err
    assert not os.path.exists(out)


def test_a_backtracking_match_is_cut_at_its_time_bound(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "MATCH_SECONDS", 0.5)
    report = tmp_path / "r.md"
    report.write_text("## randread\n\n- host a\n\n" + IOSTAT.read_text(encoding="utf-8")
                      + "\n- " + "a" * 64 + "b\n", encoding="utf-8")
    imap = tmp_path / "m.toml"
    imap.write_text('[host]\nmarker = "bullet"\nmatch = "^(a+)+$"\n[step]\n'
                    'marker = "heading"\n', encoding="utf-8")
    start = time.monotonic()
    assert main(["import", str(report), "--map", str(imap), "-o", str(tmp_path / "x.btr")]) == 2
    assert time.monotonic() - start < 5
    err = capsys.readouterr().err
    line = report.read_text(encoding="utf-8").split("\n").index("- " + "a" * 64 + "b") + 1
    assert err.startswith(f"benchtui: {report}:{line}: the [host] rule (bullets matching "
                          "'^(a+)+$') ran past "), err
    assert "write a simpler match" in err
    # the bound is lifted afterwards, and a timer that ran before (pytest-timeout's) runs on
    import signal

    outer = signal.setitimer(signal.ITIMER_REAL, 0)  # (pytest-timeout's, if any: put back)
    with importer.time_bound(1.0):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        signal.setitimer(signal.ITIMER_REAL, 60.0)
        with importer.time_bound(1.0):
            pass
        assert 50 < signal.getitimer(signal.ITIMER_REAL)[0] <= 60
    finally:
        signal.signal(signal.SIGALRM, previous)
        signal.setitimer(signal.ITIMER_REAL, *outer)


def test_names_of_an_older_session_are_printed_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written before names were checked (made here by lifting the check) is still
    printed safely: the escape sequence and the newline are shown, not obeyed."""
    import re

    monkeypatch.setattr(importer, "CONTROL", re.compile(r"(?!)"))
    session = str(tmp_path / "old.btr")
    assert main(["import", str(IOSTAT), "--host", "db\x1b[2J\n1", "--step", "s",
                 "-o", session]) == 0
    capsys.readouterr()
    for argv in (["info", session], ["report", session]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "db\\x1b[2J\\n1" in out, argv
    assert main(["report", session]) == 0
    table = [x for x in capsys.readouterr().out.splitlines() if x.startswith("|")]
    assert len({x.count("|") for x in table}) == 1  # every row has the header's cells


def test_a_session_name_with_control_characters_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(IOSTAT), "--host", "h", "--step", "s", "--name", "n\x1b[2J",
                 "-o", str(tmp_path / "n.btr")]) == 2
    assert capsys.readouterr().err == (
        "benchtui: the session name 'n\\x1b[2J' holds control characters; give one without "
        "them (--name)\n")
