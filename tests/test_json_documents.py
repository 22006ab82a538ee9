"""``_json_documents.JsonDocuments``: JSON documents found on bytes fed in chunks cut anywhere.

The same documents, foreign-line count and closing-line numbers whatever the cuts: fed whole,
cut at every byte in two, byte by byte. Layouts: pretty-printed at any indentation, compact on
one line, opened by a line that leaves the document open (sysstat's), elements of a
pretty-printed array, CRLF, after fio's ``\\r``-rewritten status line; and what is not one.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtui.parsers import _json_documents
from benchtui.parsers._json_documents import BROKEN, Found, JsonDocuments
from benchtui.parsers.fio_json import FioJsonParser

STREAM = (
    b"fio: a note on a merged stderr\n"
    b"{\n"
    b'  "a" : 1,\n'
    b'  "b" : {\n'
    b'    "c" : [1, 2]\n'
    b"  }\n"
    b"}\n"
    b"    {\n"
    b'        "shifted": true\n'
    b"    }\n"
    b'{"compact": [1, {"x": 2}]}\n'
    b'{"sysstat": {\n'
    b'\t"hosts": [{"n": 1}]\n'
    b"}}\n"
    b"[\n"
    b" {\n"
    b'  "element": 1\n'
    b" },\n"
    b" {\n"
    b'  "element": 2\n'
    b" }\n"
    b"]\n"
    b"{\r\n"
    b'  "crlf": 1\r\n'
    b"}\r\n"
    b"Jobs: 1 (f=1): [R(1)][50.0%]\r{\n"
    b'  "after_eta": 1\n'
    b"}\n"
    b"{foo} is not JSON\n"
    b"{\n"
    b'  "short": 1\n'
    b"}\n"
)
WANT = [{"a": 1, "b": {"c": [1, 2]}}, {"shifted": True}, {"compact": [1, {"x": 2}]},
        {"sysstat": {"hosts": [{"n": 1}]}}, {"element": 1}, {"element": 2}, {"crlf": 1},
        {"after_eta": 1}, {"short": 1}]
#: The line that closes each (1-based).
WANT_LINES = [7, 10, 11, 14, 18, 21, 25, 28, 32]
#: fio's note, "[", "]" and "{foo} is not JSON".
WANT_FOREIGN = 4


def run(chunks: list[bytes]) -> tuple[list[object], list[int], JsonDocuments]:
    docs = JsonDocuments()
    values, lines = [], []

    def take(found: list[Found]) -> None:
        for f in found:
            values.append(f.value)
            lines.append(docs.line_at(f.last_line_at))

    for chunk in chunks:
        take(list(docs.feed(chunk)))
    take(list(docs.finish()))
    return values, lines, docs


@pytest.fixture(params=["compiled", "pure-python"])
def counting(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines counted by the compiled pass (``_fio_json_pass.newlines``) or by bytes.count."""
    if request.param == "compiled":
        monkeypatch.delenv("BENCHTUI_PURE_PYTHON", raising=False)
        built = _json_documents._load_newlines()
        if built is None:
            pytest.skip("the compiled pass is not built here")
        monkeypatch.setattr(_json_documents, "NEWLINES", built)
    else:
        monkeypatch.setattr(_json_documents, "NEWLINES", None)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=9000) | st.lists(st.sampled_from([b"\n", b"a", b"\n\n", b"{}"]),
                                                max_size=5000).map(b"".join),
       start=st.integers(-3, 10000), end=st.integers(-3, 10000))
def test_newlines_counts_as_bytes_count(data: bytes, start: int, end: int) -> None:
    """Every stretch (across the pass's 16-byte steps and 255-step rounds), as bytes.count
    counts it; what it does not take (negative positions, other kinds): None."""
    count = _json_documents._load_newlines()
    if count is None:
        pytest.skip("the compiled pass is not built here (or BENCHTUI_PURE_PYTHON is set)")
    for blk in (data, bytearray(data)):
        got = count(blk, start, end)
        if start < 0 or end < 0:
            assert got is None
        else:
            assert got == blk.count(b"\n", start, end)
    assert count(memoryview(data), 0, 1) is None and count(data, 0, 2**70) is None
    big = b"\n" * (16 * 255 * 3 + 7)  # every byte a line end: the lanes' counts full
    assert count(big, 0, len(big)) == len(big) and count(big, 5, len(big) - 2) == len(big) - 7


def test_whole(counting: None) -> None:
    values, lines, docs = run([STREAM])
    assert values == WANT
    assert lines == WANT_LINES
    assert docs.foreign == WANT_FOREIGN and docs.incomplete is None and docs.too_long == 0


def test_cut_anywhere(counting: None) -> None:
    for cut in range(len(STREAM) + 1):
        values, lines, docs = run([STREAM[:cut], STREAM[cut:]])
        assert (values, lines, docs.foreign) == (WANT, WANT_LINES, WANT_FOREIGN), cut
    values, lines, docs = run([STREAM[i:i + 1] for i in range(len(STREAM))])
    assert (values, lines, docs.foreign) == (WANT, WANT_LINES, WANT_FOREIGN)


def test_shorter_after_longer_and_no_final_line_end() -> None:
    """The end of a document is first looked for where the last one's length says: a shorter
    one after it is found all the same, in one block or in chunks."""
    long = json.dumps({"k": list(range(3000))}, indent=2).encode()
    short = b'{\n  "s": 1\n}'
    data = long + b"\n" + short + b"\n" + long + b"\n" + short  # (no final line end)
    want = [json.loads(long), {"s": 1}, json.loads(long), {"s": 1}]
    assert run([data])[0] == want
    assert run([data[i:i + 4096] for i in range(0, len(data), 4096)])[0] == want
    assert run([data[i:i + 100] for i in range(0, len(data), 100)])[0] == want


def test_what_is_not_a_document() -> None:
    # cut short on its line, and a document that never closes (the end of the stream)
    values, _, docs = run([b'{"a": 1, "b"\n{\n  "x": 1\n'])
    assert values == [BROKEN]
    assert docs.incomplete == b"{"
    # a "{" line that never closes does not hold the stream: given up past max_bytes
    docs = JsonDocuments(max_bytes=64)
    found = list(docs.feed(b"{\n" + b'  "x": 1,\n' * 20))
    found += list(docs.feed(b'{"after": 1}\n'))
    assert [f.value for f in found] == [{"after": 1}]
    assert docs.too_long == 1


def test_a_view_held_by_the_caller_does_not_break_the_next_feed() -> None:
    docs = JsonDocuments()
    kept = [f.raw for f in docs.feed(b'{"a": 1}\n{\n "b": 2\n')]
    kept += [f.raw for f in docs.feed(b"}\n{\n")]
    kept += [f.raw for f in docs.feed(b' "c": 3\n}\n')]
    assert [json.loads(bytes(r)) for r in kept] == [{"a": 1}, {"b": 2}, {"c": 3}]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_parser_reads_utf16_and_bom_in_chunks(encoding: str) -> None:
    doc = {"fio version": "fio-3.33", "timestamp_ms": 1000, "jobs": [
        {"jobname": "j\u00e9", "elapsed": 1, "read": {
            "io_bytes": 4096, "io_kbytes": 4, "runtime": 1000, "total_ios": 1, "iops": 1.0,
            "bw_bytes": 4096, "clat_ns": {"N": 1, "min": 5, "max": 5, "mean": 5.0}}}]}
    data = json.dumps(doc, indent=2).encode(encoding)
    whole = FioJsonParser()
    want = [s.to_dict() for s in whole.feed_bytes(data) + whole.finish()]
    assert want and {s["labels"]["job"] for s in want} == {"j\u00e9"}  # type: ignore[index]
    chunked = FioJsonParser()
    got = [s for i in range(0, len(data), 5) for s in chunked.feed_bytes(data[i:i + 5])]
    got += chunked.finish()
    assert [s.to_dict() for s in got] == want
