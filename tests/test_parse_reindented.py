"""JSON output laid out by other programs reads as the tool printed it (issue 30).

tests/fixtures/reindented/ holds real fio json+, sysstat ``iostat -o JSON`` and iperf3 ``-J``
output, and the same re-indented by ``jq .``, ``python -m json.tool --indent 4``, compacted by
``jq -c``, tabs expanded, CRLF, and indented as a Markdown code block (its README gives every
command). Each variant is detected as its tool's and gives the original's samples, sample for
sample: read as ``benchtui parse FILE`` reads it, with ``--tool``, line by line, and as raw
chunks cut anywhere (the live path).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchtui.parsers import registry
from benchtui.parsers._flattened import restore_line_breaks
from benchtui.parsers.base import Parser, decode_output
from tests.helpers import FIXTURES, check_invariants, require_tool

DIR = FIXTURES / "reindented"
ORIGINALS = {"fio": "fio-json", "iostat": "iostat-json", "iperf3": "iperf3-json"}
VARIANTS = sorted(p.name for p in DIR.iterdir()
                  if p.name != "README.md" and p.name.split(".", 1)[0] in ORIGINALS
                  and p.name.split(".", 1)[1] != "json")


def _tool(name: str) -> str:
    return name.split(".", 1)[0]


def read(path: Path, cls: type[Parser] | None = None) -> tuple[list[str], list[dict[str, object]],
                                                               list[str]]:
    """(parsers, samples as dicts, warning reasons): as ``benchtui parse`` reads the file."""
    data = path.read_bytes()
    text = restore_line_breaks(decode_output(data))
    classes = [cls] if cls else registry.choose(text[:registry.DETECT_HEAD_BYTES])
    names, samples, warnings = [], [], []
    for c in classes:
        p = c(host="-", source=path.name)
        got = p.feed_bytes(data) if p.takes_bytes else p.feed_text(text)
        got += p.finish()
        check_invariants(got)
        names.append(p.name)
        samples += [s.to_dict() for s in got]
        warnings += [w.reason for w in p.warnings]
    return names, samples, warnings


def original(name: str) -> tuple[list[str], list[dict[str, object]], list[str]]:
    return read(DIR / f"{_tool(name)}.json")


def test_the_originals_read() -> None:
    for tool, parser in ORIGINALS.items():
        names, samples, _ = original(tool)
        assert names == [parser] and len(samples) > 20, tool


@pytest.mark.parametrize("name", VARIANTS)
def test_detected_and_read_as_the_original(name: str) -> None:
    want = original(name)
    assert read(DIR / name) == want


@pytest.mark.parametrize("name", VARIANTS)
def test_read_with_tool_line_by_line_and_in_chunks(name: str) -> None:
    _, want, reasons = original(name)
    cls = registry.candidates(ORIGINALS[_tool(name)])[0]
    assert read(DIR / name, cls)[1:] == (want, reasons)
    data = (DIR / name).read_bytes()
    by_line = cls()
    got = [s for line in decode_output(data).split("\n") for s in by_line.feed(line)]
    got += by_line.finish()
    assert [s.to_dict() for s in got] == want
    if by_line.takes_bytes:
        rng = random.Random(name)
        for sizes in ((1,), (7, 13), (4096,), tuple(rng.randrange(1, 3000) for _ in range(50))):
            chunked, got, pos, i = cls(), [], 0, 0
            while pos < len(data):
                step = sizes[i % len(sizes)]
                got += chunked.feed_bytes(data[pos:pos + step])
                pos, i = pos + step, i + 1
            got += chunked.finish()
            assert [s.to_dict() for s in got] == want, (name, sizes)
            assert [w.reason for w in chunked.warnings] == reasons


def test_the_cli_reads_them(tmp_path: Path) -> None:
    """``benchtui parse`` of a compact fio stream and of jq's iostat: what the originals give."""
    for name in ("fio.jq-c.json", "iostat.jq.json", "iperf3.jq-c.json"):
        outs = []
        for path in (DIR / f"{_tool(name)}.json", DIR / name):
            done = subprocess.run([sys.executable, "-m", "benchtui", "parse", str(path)],
                                  capture_output=True, text=True, timeout=60, check=False)
            assert done.returncode == 0, done.stderr
            outs.append(done.stdout)
        assert outs[0] == outs[1] and outs[0].count("\n") > 20, name


def _made_by(program: list[str], source: Path, *, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(program + ([] if stdin is not None else [str(source)]), input=stdin,
                          capture_output=True, timeout=60, check=True)
    return done.stdout


def test_the_variants_are_what_the_programs_make() -> None:
    """Made again from the originals by the programs the README names."""
    jq = require_tool("jq")
    for tool in ORIGINALS:
        src = DIR / f"{tool}.json"
        text = src.read_bytes()
        made = {
            "jq.json": _made_by([jq, "."], src),
            "jq-c.json": _made_by([jq, "-c", "."], src),
            "crlf.json": text.replace(b"\n", b"\r\n"),
        }
        tool_indent = [sys.executable, "-m", "json.tool", "--indent", "4"]
        if tool == "fio":  # a stream of documents: one per line in, each pretty-printed out
            made["json-tool-indent4.json"] = _made_by(
                [*tool_indent, "--json-lines"], src, stdin=made["jq-c.json"])
            made["markdown-indented.md"] = b"# fio json+ status dumps\n\n" + b"".join(
                b"    " + line for line in text.splitlines(keepends=True))
        else:
            made["json-tool-indent4.json"] = _made_by(tool_indent, src)
        if tool == "iostat" and shutil.which("expand"):
            made["expand.json"] = _made_by(["expand", "-t", "4"], src)
        for suffix, content in made.items():
            path = DIR / f"{tool}.{suffix}"
            if path.exists():
                assert path.read_bytes() == content, path.name
    assert {p.name for p in DIR.iterdir()} >= {f"{t}.json" for t in ORIGINALS}
    assert os.path.getsize(DIR / "fio.json") > 10_000


def test_iostat_laid_out_by_jq_streams_report_by_report() -> None:
    """Each report's samples come when its entry ends, not at the end of the document."""
    cls = registry.candidates("iostat-json")[0]
    for name in ("iostat.jq.json", "iostat.json-tool-indent4.json"):
        lines = (DIR / name).read_text().split("\n")
        p = cls()
        seen = [len(p.feed(line)) for line in lines]
        firsts = [i for i, n in enumerate(seen) if n]
        assert len(firsts) == 3 and firsts[-1] < len(lines) - 5, (name, firsts)
