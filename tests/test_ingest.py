"""A run's ingestion (session/ingest.py): its samples as the parser makes them, its warnings
taken as they come and bounded, and the tool's own last words, whatever came after them."""

from __future__ import annotations

import json
import os

from benchtui.parsers import registry
from benchtui.session.ingest import TAIL_BYTES, WARNINGS_SHOWN, WORDS_LINES, RunIngest
from benchtui.transport import Chunk


def ingest_of(parser: str, data: bytes, *, chunk: int = 4096,
              lines_wanted: bool = False) -> tuple[RunIngest, int]:
    """``data`` fed in chunks of ``chunk`` bytes: the ingestion, and the samples made."""
    ingest = RunIngest(registry.all_parsers()[parser](host="h", source="h:t"),
                       lines_wanted=lines_wanted)
    samples = 0
    for start in range(0, len(data), chunk):
        piece = data[start:start + chunk]
        samples += len(ingest.feed(Chunk(start + len(piece), piece), 1.0).samples)
    return ingest, samples + len(ingest.finish(2.0).samples)


def test_the_error_fio_printed_before_its_long_report_is_its_last_words() -> None:
    """fio says what is wrong first, then prints a JSON report longer than the tail kept:
    its words come from the start; JSON lines, repeats and blank lines are passed over."""
    report = json.dumps({"jobs": [{"jobname": "x", "error": 2, "pad": ["y" * 60] * 600}]},
                        indent=2)
    data = (b"fio: pid=4242, err=2/file:filesetup.c:805, func=open, error=No such file\n"
            b"fio: pid=4242, err=2/file:filesetup.c:805, func=open, error=No such file\n\n"
            + report.encode() + b"\n")
    assert len(data) > 2 * TAIL_BYTES
    ingest, _ = ingest_of("fio-json", data)
    assert ingest.last_words() == [
        "fio: pid=4242, err=2/file:filesetup.c:805, func=open, error=No such file"]


def garbage(size: int) -> bytes:
    """Random bytes without a line end: one line, not UTF-8 (as good as surely)."""
    return os.urandom(size).replace(b"\n", b"x").replace(b"\r", b"x")


def test_last_words_are_few_short_and_never_garbage() -> None:
    lines = [f"line {i} " + "w" * 300 for i in range(10)]
    ingest, _ = ingest_of("mbw", ("\n".join(lines) + "\n").encode() + garbage(3000))
    words = ingest.last_words()
    assert len(words) == WORDS_LINES and words[-1].startswith("line 9 ")
    assert all(len(w) == 200 and w.endswith("…") for w in words)
    noise, _ = ingest_of("mbw", garbage(50_000))
    assert noise.last_words() == []
    nothing, _ = ingest_of("mbw", b"")
    assert nothing.last_words() == [] and nothing.bytes == 0


def test_warnings_are_taken_as_they_come_and_the_rest_counted() -> None:
    """A parser warning per malformed line: the first ``WARNINGS_SHOWN`` are given, the rest
    counted, and the parser's own list does not grow with them."""
    line = b"AVG\tMethod: MEMCPY\tElapsed: x\tMiB: 1\tCopy: zz MiB/s\n"
    ingest = RunIngest(registry.all_parsers()["mbw"](host="h", source="h:mbw"),
                       lines_wanted=True)
    given = []
    for n in range(1, 6):
        got = ingest.feed(Chunk(n * 100 * len(line), line * 100), 1.0)
        assert len(got.lines) == 100
        given += ingest.new_warnings()
        assert ingest.parser.warnings == []
    assert len(given) == WARNINGS_SHOWN and ingest.warnings_hidden == 500 - WARNINGS_SHOWN
    assert "malformed mbw line" in str(given[0])
