"""Reports flattened onto one line (seed 001): put back on their lines, then parsed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.parsers._flattened import (
    MIN_CHARS,
    is_flattened,
    may_have_long_line,
    restore_line,
    restore_line_breaks,
)
from tests.helpers import FIXTURES, SEEDS, fixture_text

SEED001 = SEEDS / "001_82a32511c661f41a.txt"
RESTORED = FIXTURES / "fio_text" / "seed001_all_runs.txt"
# Real fio 3.7 and 3.1 reports, each with its line breaks and indentation.
REPORTS = ["fio_text/seed000_physical.txt", "fio_text/seed004_4k_randread_qd128.txt",
           "fio_text/fio333_normal_eta_2jobs.txt"]


def _flatten(text: str) -> str:
    """What a Markdown flattener does: each newline and the indentation after it -> a space."""
    return " ".join(line.strip() for line in text.splitlines())


def _parse(*args: str, stdin: str | None = None) -> list[dict[str, object]]:
    out = subprocess.run([sys.executable, "-m", "benchtui", "parse", *args], input=stdin,
                         capture_output=True, text=True, timeout=60, check=True,
                         env={**os.environ, "PYTHONUTF8": "1"})
    return [json.loads(line) for line in out.stdout.splitlines()]


def _strip_run_labels(samples: list[dict[str, object]]) -> list[str]:
    return sorted(json.dumps(s, sort_keys=True) for s in samples)


def test_the_flattened_seed_parses_as_the_restored_fixture() -> None:
    """`benchtui parse` of seed 001 as pasted gives exactly the samples of the fixture whose
    line breaks were put back by hand (checked against the authors' table in
    test_parse_fio_text.py), from a file and from stdin."""
    expected = _parse(str(RESTORED))
    assert len(expected) > 700
    assert _strip_run_labels(_parse(str(SEED001))) == _strip_run_labels(expected)
    from_stdin = _parse("-", stdin=SEED001.read_text(encoding="utf-8"))
    assert _strip_run_labels(from_stdin) == _strip_run_labels(expected)


def test_restored_seed_has_the_fixtures_lines() -> None:
    restored = restore_line_breaks(SEED001.read_text(encoding="utf-8")).splitlines()
    fixture = RESTORED.read_text(encoding="utf-8").splitlines()
    start = restored.index(fixture[0])
    # one difference only: the seed's damaged status line ("obs: 1 (f=1)", its J lost) is not
    # a line start fio prints, so it stays on the command line before it
    damaged = [line for line in fixture if line.startswith("obs: ")]
    assert len(damaged) == 1
    merged = [line for line in restored[start:] if line.endswith(damaged[0])]
    assert len(merged) == 1
    assert [line for line in restored[start:] if line not in merged] == [
        line for line in fixture if line not in damaged and not merged[0].startswith(line)]


def test_flattened_real_reports_give_their_samples_back(tmp_path: Path) -> None:
    for name in REPORTS:
        text = fixture_text(name)
        flat = tmp_path / "flat.txt"
        flat.write_text(_flatten(text), encoding="utf-8")
        assert "\n" not in flat.read_text(encoding="utf-8").rstrip("\n")
        # fio's --eta status lines rewritten with \r are split by the parser, not here
        assert _strip_run_labels(_parse(str(flat))) == _strip_run_labels(
            _parse(str(FIXTURES / name))), name


def test_real_reports_and_other_long_lines_are_left_alone() -> None:
    for name in REPORTS:
        text = fixture_text(name)
        assert restore_line_breaks(text) is text
    compact_json = json.dumps({"jobs": [{"jobname": "x", "read": {"iops": 1.0}}] * 200})
    assert len(compact_json) > MIN_CHARS and not is_flattened(compact_json)
    command = "fio " + " ".join(f"--name=job{i} --rw=randread --bs=4k" for i in range(60))
    assert restore_line(command) is command
    table = "| Ext4 | posixaio | 53.8 MiB/s |" * 100 + " | -------- | -------- |"
    assert restore_line(table) is table


def test_markdown_table_rows_are_not_split() -> None:
    seed = restore_line_breaks(SEED001.read_text(encoding="utf-8"))
    first = seed.splitlines()[0]
    assert first.startswith("# Linux AIO") and "| -------- | -------- |" in first


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([
    *"ab |:=()[]-`#\n\t", "read: IOPS=1k, ", "clat (usec): ", "| 1.00th=[ 5], ",
    "Run status group 0 ", "Disk stats (read/write): ", "sda: ios=1/2, ", "Jobs: 1 (f=1): ",
    "cpu : ", "```"]),
    max_size=400).map("".join))
def test_only_line_breaks_are_put_back(text: str) -> None:
    """Whatever the text, restoring changes nothing but spaces/tabs into newlines, and a
    second pass changes nothing more."""
    restored = restore_line_breaks(text)
    assert len(restored) <= len(text)
    if restored is not text:
        assert "".join(restored.split()) == "".join(text.split())
        assert restore_line_breaks(restored) == restored


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2 * MIN_CHARS), max_size=12))
def test_a_long_line_is_never_missed(lengths: list[int]) -> None:
    text = "\n".join("x" * n for n in lengths)
    if any(n >= MIN_CHARS for n in lengths):
        assert may_have_long_line(text)
    if all(n < MIN_CHARS // 2 for n in lengths):
        assert not may_have_long_line(text)
