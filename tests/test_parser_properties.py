"""Property tests over every registered parser: garbage, truncated, mutilated, interleaved and
binary input never raise, never yield NaN/inf, and never trip a parser's internal error net.
Feeding a text in one block or line by line gives the same samples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchtui.parsers import registry
from benchtui.parsers.base import Parser
from tests.helpers import FIXTURES, check_invariants

PARSERS = sorted(registry.all_parsers().items())
FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".md")
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _texts() -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in FIXTURE_FILES]


TEXTS = _texts()


def _run(cls: type[Parser], lines: list[str]) -> Parser:
    parser = cls(source="prop")
    samples = []
    for line in lines:
        samples.extend(parser.feed(line, None))
    samples.extend(parser.finish())
    check_invariants(samples)
    internal = [w for w in parser.warnings if "internal parser error" in w.reason]
    assert not internal, f"{cls.name}: {internal[:3]}"
    return parser


def test_there_are_parsers_and_fixtures() -> None:
    assert len(PARSERS) >= 1
    assert all(cls.tool for _, cls in PARSERS)


@pytest.mark.parametrize(("name", "cls"), PARSERS, ids=[n for n, _ in PARSERS])
@SETTINGS
@given(st.lists(st.text(max_size=200), max_size=60))
def test_random_text(name: str, cls: type[Parser], lines: list[str]) -> None:
    _run(cls, lines)


@pytest.mark.parametrize(("name", "cls"), PARSERS, ids=[n for n, _ in PARSERS])
@SETTINGS
@given(st.binary(max_size=4000))
def test_binary_garbage(name: str, cls: type[Parser], data: bytes) -> None:
    _run(cls, data.decode("utf-8", errors="replace").split("\n"))


@pytest.mark.skipif(not TEXTS, reason="no fixtures yet")
@pytest.mark.parametrize(("name", "cls"), PARSERS, ids=[n for n, _ in PARSERS])
@SETTINGS
@given(data=st.data())
def test_mutilated_fixtures(name: str, cls: type[Parser], data: st.DataObject) -> None:
    """A real output, cut short, with lines dropped, doubled, swapped, or characters changed."""
    text = data.draw(st.sampled_from(TEXTS))
    lines = text.split("\n")
    if len(lines) > 400:
        start = data.draw(st.integers(0, len(lines) - 400))
        lines = lines[start:start + 400]
    ops = data.draw(st.lists(st.tuples(st.sampled_from("dcsxt"), st.integers(0, 10**6),
                                       st.text(max_size=5)), max_size=12))
    for op, pos, junk in ops:
        if not lines:
            break
        i = pos % len(lines)
        if op == "d":
            del lines[i]
        elif op == "c":
            lines.insert(i, lines[i])
        elif op == "s" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "x" and lines[i]:
            j = pos % len(lines[i])
            lines[i] = lines[i][:j] + junk + lines[i][j + 1:]
        elif op == "t":
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: pos % (len(lines[-1]) + 1)]
    _run(cls, lines)


@pytest.mark.skipif(len(TEXTS) < 2, reason="needs two fixtures")
@pytest.mark.parametrize(("name", "cls"), PARSERS, ids=[n for n, _ in PARSERS])
@SETTINGS
@given(data=st.data())
def test_interleaved_outputs(name: str, cls: type[Parser], data: st.DataObject) -> None:
    """Two tools' outputs interleaved line by line (two panes pasted together)."""
    a = data.draw(st.sampled_from(TEXTS)).split("\n")[:300]
    b = data.draw(st.sampled_from(TEXTS)).split("\n")[:300]
    mixed: list[str] = []
    ia = ib = 0
    while ia < len(a) or ib < len(b):
        if ib >= len(b) or (ia < len(a) and data.draw(st.booleans())):
            mixed.append(a[ia])
            ia += 1
        else:
            mixed.append(b[ib])
            ib += 1
    _run(cls, mixed)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[str(p.relative_to(FIXTURES))
                                                      for p in FIXTURE_FILES])
def test_block_feed_equals_line_feed(path: Path) -> None:
    """``feed_text`` (the fast path for files) and ``feed`` (the live path) agree exactly."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for cls in registry.detect(text):
        by_line = cls(source="p")
        a = [s for line in text.split("\n") for s in by_line.feed(line)] + by_line.finish()
        by_block = cls(source="p")
        b = by_block.feed_text(text) + by_block.finish()
        assert [x.to_dict() for x in a] == [y.to_dict() for y in b], cls.name
