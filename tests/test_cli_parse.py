"""``benchtui parse`` as a user runs it: exit codes, messages, formats, stdin."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import FIXTURES, SEEDS


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchtui", *args], input=None if stdin is None else stdin.decode(
            "utf-8", errors="replace"), capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONUTF8": "1"})


def assert_one_sentence(stderr: str) -> None:
    assert "Traceback" not in stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert lines and lines[-1].startswith("benchtui: ")


def test_version() -> None:
    out = run("--version")
    assert out.returncode == 0 and out.stdout.startswith("benchtui ")


def test_no_file_is_usage_error() -> None:
    out = run("parse")
    assert out.returncode == 2
    assert_one_sentence(out.stderr)


def test_unknown_tool_is_usage_error(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("hello\n")
    out = run("parse", "--tool", "nosuchtool", str(f))
    assert out.returncode == 2
    assert "unknown tool 'nosuchtool'" in out.stderr and "fio" in out.stderr
    assert_one_sentence(out.stderr)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    out = run("parse", str(tmp_path / "nope.txt"))
    assert out.returncode == 2 and "no such file" in out.stderr
    assert_one_sentence(out.stderr)
    out = run("parse", str(tmp_path))
    assert out.returncode == 2 and "directory" in out.stderr
    assert_one_sentence(out.stderr)


def test_garbage_exits_1_with_one_sentence(tmp_path: Path) -> None:
    f = tmp_path / "garbage.txt"
    f.write_text("this is not the output of any benchmark\n" * 50)
    out = run("parse", str(f))
    assert out.returncode == 1
    assert out.stdout == ""
    assert "nothing in" in out.stderr and "--tool" in out.stderr
    assert_one_sentence(out.stderr)


def test_binary_input_never_tracebacks(tmp_path: Path) -> None:
    f = tmp_path / "random.bin"
    f.write_bytes(bytes(range(256)) * 200 + os.urandom(20000))
    out = run("parse", str(f))
    assert out.returncode == 1
    assert_one_sentence(out.stderr)
    for name in ("fio", "iostat", "iperf3"):
        out = run("parse", "--tool", name, str(f))
        assert out.returncode in (0, 1)
        assert "Traceback" not in out.stderr


def test_list_names_every_parser() -> None:
    out = run("parse", "--list")
    assert out.returncode == 0
    for name in ("fio-json", "fio-text", "iostat", "iperf3", "mbw"):
        assert name in out.stdout


FIO_JSON = FIXTURES / "fio_json" / "randread_randwrite.jsonplus.txt"


def test_stdin_jsonl_and_csv_agree() -> None:
    data = FIO_JSON.read_bytes()
    out = run("parse", "--host", "db1", "-", stdin=data)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    assert rows and all(r["host"] == "db1" and r["tool"] == "fio" for r in rows)
    assert {"t", "host", "tool", "kind", "metric", "value", "labels"} <= set(rows[0])
    out_csv = run("parse", "--format", "csv", "--host", "db1", str(FIO_JSON))
    table = list(csv.DictReader(io.StringIO(out_csv.stdout)))
    assert len(table) == len(rows)
    assert [float(r["value"]) for r in table] == [r["value"] for r in rows]
    with_hist = run("parse", "--histograms", str(FIO_JSON))
    hist_rows = [json.loads(x) for x in with_hist.stdout.splitlines()]
    assert any("buckets" in r for r in hist_rows)


def test_csv_has_the_duration_of_a_partial_interval() -> None:
    """A partial interval's ``duration`` (fio's last, 0.176 s) is in the CSV's last column,
    as in the JSON Lines; empty for a nominal interval."""
    path = FIXTURES / "fio_json" / "randread_randwrite.jsonplus.txt"
    rows = [json.loads(x) for x in run("parse", str(path)).stdout.splitlines()]
    out = run("parse", "--format", "csv", str(path))
    assert out.returncode == 0, out.stderr
    table = list(csv.DictReader(io.StringIO(out.stdout)))
    assert list(table[0])[-1] == "duration"
    assert [r["duration"] for r in table] == [
        repr(r["duration"]) if "duration" in r else "" for r in rows]
    assert any(r["duration"] == "0.176" for r in table)


def test_mixed_report_finds_every_tool() -> None:
    """A whole seed report (several tools pasted into Markdown) yields each tool's numbers."""
    seed = SEEDS / "000_217b3b91532e58e6.txt"
    out = run("parse", "-q", str(seed))
    assert out.returncode == 0, out.stderr
    tools = {json.loads(x)["tool"] for x in out.stdout.splitlines()}
    assert {"fio", "iperf3", "mbw", "unixbench"} <= tools


def test_parse_starts_without_the_other_commands_modules() -> None:
    """``benchtui parse`` builds only its own options: its start-up imports no module of
    another command (they cost a good part of the start-up of a parse of a short capture)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "benchtui", "parse", "--tool", "fio-json",
         str(FIXTURES / "fio_json" / "randread_randwrite.jsonplus.txt")],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and '"metric":"iops"' in done.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "benchtui.parsers._fio_json_jobs" in imported
    others = sorted(m for m in imported if m.startswith("benchtui.cli.")
                    and m.endswith("_cmd") and m != "benchtui.cli.parse_cmd")
    assert others == []
    assert run("parse", "--help").stdout.startswith("usage: benchtui parse")
    full = run("--help")
    assert "history" in full.stdout and "parse" in full.stdout


def test_parse_imports_only_what_it_uses() -> None:
    """`benchtui parse` of fio JSON Lines (the default) in a fresh process: none of the other
    commands' heavy libraries (Textual, asyncssh, numpy, matplotlib, prometheus_client), and
    none of the modules only other formats or commands need (csv, the parsers of other tools,
    the session engine's ingestion), nor typing (annotations only: ``if TYPE_CHECKING``, ~13 M
    instructions at each start) and pkgutil (which imports it); the samples are printed all
    the same."""
    fixture = FIXTURES / "fio_json" / "randread_randwrite.jsonplus.txt"
    code = (
        "import contextlib, io, sys\n"
        "from benchtui.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main(['parse', '--tool', 'fio-json', {str(fixture)!r}])\n"
        "unwanted = ('textual', 'asyncssh', 'numpy', 'matplotlib', 'prometheus_client', 'csv',\n"
        "            'benchtui.parsers.fio_text', 'benchtui.parsers.iostat',\n"
        "            'benchtui.session.ingest', 'benchtui.session.engine', 'typing', 'pkgutil')\n"
        "print(code, len(out.getvalue().splitlines()),\n"
        "      sorted(m for m in unwanted if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    status, lines, imported = done.stdout.split(" ", 2)
    assert (status, imported.strip()) == ("0", "[]")
    assert int(lines) > 100
