"""Names that Markdown tables must carry whole, and a skip that must be a ramp-up.

A step or host named with a ``|`` (``rand|read``, ``db|1``) is a cell of ``report``'s and
``history analyze``'s tables, escaped (``rand\\|read``) so that every row keeps its columns;
``report --skip`` longer than any ramp-up is one sentence, not a 300-digit duration.
The session is imported from a real fio output (tests/fixtures/fio_json)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchtui.cli.main import main

FIO = Path(__file__).parent / "fixtures" / "fio_json" / "final_only.jsonplus.txt"
#: A cell separator: a "|" not escaped with a backslash.
_SEPARATOR = re.compile(r"(?<!\\)\|")


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "pipes.btr"
    code = main(["import", str(FIO), str(FIO), str(FIO), str(FIO), "--host", "db|1", "--host",
                 "db|1", "--host", "x|2", "--host", "x|2", "--step", "rand|read", "--step",
                 "seq write", "--step", "rand|read", "--step", "seq write", "-o", str(path)])
    assert code == 0
    return path


def _tables(text: str) -> list[list[str]]:
    """Each table of a Markdown text: its lines."""
    tables: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return tables


def _columns_hold(text: str, names: tuple[str, ...]) -> None:
    tables = _tables(text)
    assert tables, text
    for table in tables:
        widths = {len(_SEPARATOR.split(line)) for line in table}
        assert len(widths) == 1, table  # every row has the header's columns
    for name in names:
        assert name.replace("|", "\\|") in text, name


def test_a_pipe_in_step_and_host_names_stays_in_its_cell(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = _session(tmp_path)
    capsys.readouterr()
    assert main(["report", str(session), "--baseline", "host=db|1"]) == 0
    _columns_hold(capsys.readouterr().out, ("rand|read", "db|1", "x|2"))

    catalog = str(tmp_path / "h.sqlite")
    assert main(["history", "import", str(session), "--catalog", catalog]) == 0
    capsys.readouterr()
    assert main(["history", "analyze", "final_only.jsonplus", "--catalog", catalog]) == 0
    _columns_hold(capsys.readouterr().out, ("rand|read", "db|1", "x|2"))


@pytest.mark.parametrize("skip", ["1e308", "604801"])
def test_a_skip_longer_than_a_week_is_one_sentence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], skip: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["report", str(tmp_path / "any.btr"), "--skip", skip])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --skip: '{skip}' is more than the 7 days (604800 s) a ramp-up can be" \
        in err, err
    assert len(err.splitlines()[-1]) < 200, err
