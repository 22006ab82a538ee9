"""Every parser gives, on every tool output the project keeps, what it gave when the stored
outputs were made (tests/parser_golden.py says how, and how to regenerate them), sample for
sample: by the path ``benchtui parse FILE`` takes (raw bytes or the whole text), with and without
--histograms (the samples other than histograms are the same), and line by line (the live
path). Detection picks the same parsers.

Two changes of issue 30 are let through, and only those: a table of another program read as
iostat device lines (devices named like ``528000000:``) may stop being read, and iperf 2 may
read an RTT it skipped before (a Cwnd of ``-1K``). A parser added since the outputs were made
may be detected where it reads something; its outputs are compared once they are regenerated.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from benchtui.parsers import registry
from benchtui.parsers._flattened import restore_line_breaks
from benchtui.parsers.base import decode_output
from tests import parser_golden as golden

FILES = sorted(golden.load()["files"])
_DEVFREQ_ROW = re.compile(r"^\*?\d+:$")


def _key(row: list[Any]) -> str:
    return repr(row)


def _tolerated_loss(row: list[Any]) -> bool:
    """A sample main made of another program's table (issue 30: devfreq rows as devices)."""
    labels = row[5]
    return row[1] == "iostat" and bool(_DEVFREQ_ROW.match(labels.get("device", "")))


def _tolerated_gain(row: list[Any]) -> bool:
    """A sample main did not make and issue 30 asks for: iperf 2's RTT beside any Cwnd."""
    return row[1] in ("iperf", "iperf2") and row[3] == "net_rtt_seconds"


def _compare(what: str, want: list[list[Any]], got: list[list[Any]]) -> None:
    if got == want:
        return
    lost = Counter(map(_key, want)) - Counter(map(_key, got))
    gained = Counter(map(_key, got)) - Counter(map(_key, want))
    rows = {_key(r): r for r in want + got}
    bad_lost = [rows[k] for k in lost if not _tolerated_loss(rows[k])]
    bad_gained = [rows[k] for k in gained if not _tolerated_gain(rows[k])]
    if not bad_lost and not bad_gained:
        return  # (order aside, only the tolerated changes)
    if not lost and not gained:
        first = next(i for i, (a, b) in enumerate(zip(want, got, strict=True)) if a != b)
        pytest.fail(f"{what}: same samples in another order, first at #{first}: "
                    f"was {want[first]}, now {got[first]}")
    pytest.fail(f"{what}: {len(bad_lost)} sample(s) lost, {len(bad_gained)} new or changed "
                f"(of {len(want)} before, {len(got)} now); lost e.g. {bad_lost[:3]}; "
                f"new e.g. {bad_gained[:3]}")


@pytest.mark.parametrize("relpath", FILES)
def test_same_outputs_as_stored(relpath: str) -> None:
    stored = golden.load()
    known = set(stored["parsers"])
    want_file = stored["files"][relpath]
    path = golden.FIXTURES / relpath
    assert path.is_file(), f"{relpath} is gone: regenerate the stored outputs"
    data = path.read_bytes()
    text = restore_line_breaks(decode_output(data))
    detected = [c.name for c in registry.choose(text[:registry.DETECT_HEAD_BYTES])]
    assert [n for n in detected if n in known] == want_file["detected"], relpath
    for name, cls in sorted(registry.all_parsers().items()):
        if name not in known:
            continue  # a parser added since: compared once the outputs are regenerated
        want = want_file["parsers"].get(name, {"samples": [], "warnings": []})
        bulk = golden.run_parser(cls, data, text)
        _compare(f"{relpath} read by {name}", want["samples"], bulk["samples"])
        plain = golden.run_parser(cls, data, text, histograms=False)
        _compare(f"{relpath} read by {name} without histograms",
                 [r for r in want["samples"] if r[9] is None], plain["samples"])
        assert bulk["warnings"] == want["warnings"], (relpath, name)
        p = cls(host="-", source="golden")
        lines = [golden.sample_row(s) for line in text.split("\n") for s in p.feed(line)]
        lines += [golden.sample_row(s) for s in p.finish()]
        _compare(f"{relpath} read line by line by {name}", want["samples"], lines)


def test_every_parser_and_file_was_stored() -> None:
    """The stored outputs cover the parsers and files of their time, and still exist."""
    stored = golden.load()
    assert len(stored["files"]) >= 200
    assert {"fio-json", "iostat", "iostat-json", "iperf3-json"} <= set(stored["parsers"])
    assert set(stored["files"]) <= set(golden.input_files())


FIO_JSON_FILES = [f for f in FILES if "fio-json" in golden.load()["files"][f]["parsers"]]


@pytest.mark.parametrize("relpath", FIO_JSON_FILES)
def test_fio_json_without_histograms_in_pure_python(relpath: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored outputs again, without the compiled pass (``test_same_outputs_as_stored``
    takes it where it is built): the percentiles ``benchtui parse`` prints by both paths."""
    from benchtui.parsers import _fio_json_walked

    monkeypatch.setattr(_fio_json_walked, "PASS", None)
    want = golden.load()["files"][relpath]["parsers"]["fio-json"]
    data = (golden.FIXTURES / relpath).read_bytes()
    text = restore_line_breaks(decode_output(data))
    plain = golden.run_parser(registry.all_parsers()["fio-json"], data, text, histograms=False)
    _compare(f"{relpath} read by fio-json without histograms in pure Python",
             [r for r in want["samples"] if r[9] is None], plain["samples"])
