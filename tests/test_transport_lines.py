"""LineSplitter: lines across chunk boundaries, \\r and \\r\\n, byte offsets, continuity;
LineCutter: the same bytes passed on, over-long lines cut as LineSplitter cuts them."""

from __future__ import annotations

import itertools
import pickle
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchtui.model.text_lines import TextLines
from benchtui.transport.base import Chunk
from benchtui.transport.lines import LineCutter, LineSplitter


def chunks_of(data: bytes, cuts: list[int], start: int = 0) -> list[Chunk]:
    """``data`` cut at ``cuts`` into chunks whose offsets count from ``start``."""
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [Chunk(start + b, data[a:b]) for a, b in itertools.pairwise(bounds)]


def split_all(data: bytes, cuts: list[int]) -> tuple[list[str], LineSplitter]:
    splitter = LineSplitter()
    lines: list[str] = []
    for chunk in chunks_of(data, cuts):
        lines.extend(splitter.feed(chunk))
    lines.extend(splitter.finish())
    return lines, splitter


def test_partial_lines_wait_for_their_end() -> None:
    splitter = LineSplitter()
    assert splitter.feed(Chunk(3, b"abc")) == []
    assert splitter.pending == 3
    assert splitter.feed(Chunk(8, b"de\nfg")) == ["abcde"]
    assert splitter.consumed == 6 and splitter.offset == 8
    assert splitter.finish() == ["fg"]


def test_carriage_return_ends_a_line_and_crlf_is_one_end() -> None:
    eta = b"Jobs: 1 [r(1)][10%]\rJobs: 1 [r(1)][20%]\r\nnext\n"
    assert split_all(eta, [])[0] == ["Jobs: 1 [r(1)][10%]", "Jobs: 1 [r(1)][20%]", "next"]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    splitter = LineSplitter()
    assert splitter.feed(Chunk(2, b"a\r")) == ["a"]
    assert splitter.consumed == 2
    assert splitter.feed(Chunk(5, b"\nb\n")) == ["b"]
    assert splitter.consumed == 5


def test_utf8_character_cut_between_chunks_is_kept_whole() -> None:
    data = "µs → 12\n".encode()
    assert split_all(data, [1, 2, 5])[0] == ["µs → 12"]


def test_a_lost_or_repeated_byte_is_caught() -> None:
    splitter = LineSplitter()
    splitter.feed(Chunk(4, b"abcd"))
    with pytest.raises(ValueError, match="1 bytes lost"):
        splitter.feed(Chunk(7, b"fg"))
    with pytest.raises(ValueError, match="1 bytes repeated"):
        splitter.feed(Chunk(5, b"de"))


def test_resume_at_an_offset_continues_the_count() -> None:
    splitter = LineSplitter(offset=100)
    assert splitter.feed(Chunk(104, b"xyz\n")) == ["xyz"]
    assert splitter.consumed == 104


def test_an_endless_line_is_cut_to_bound_memory() -> None:
    """A line longer than the limit is given cut to it as soon as it reaches it; the rest of
    it is dropped up to its end, and counted."""
    splitter = LineSplitter(max_line_bytes=8)
    assert splitter.feed_bytes(b"0123") == []
    assert splitter.feed_bytes(b"456789") == ["01234567"]
    assert splitter.pending == 0
    assert splitter.feed_bytes(b"abc" * 1000) == []  # still the same line: dropped
    assert splitter.pending == 0
    assert splitter.feed_bytes(b"def\r\nok\n") == ["ok"]
    assert (splitter.cut_lines, splitter.dropped_bytes) == (1, 2 + 3000 + 3)
    assert splitter.offset == 10 + 3000 + 8
    assert splitter.feed_text(Chunk(splitter.offset + 20, b"x" * 18 + b"\ny")) == "xxxxxxxx"
    assert (splitter.cut_lines, splitter.dropped_bytes, splitter.pending) == (2, 3015, 1)


@given(st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", "é".encode(), b" "]),
                max_size=40),
       st.lists(st.integers(min_value=0, max_value=200), max_size=10))
def test_any_chunking_gives_the_lines_of_the_whole(pieces: list[bytes], cuts: list[int]
                                                   ) -> None:
    data = b"".join(pieces)
    whole, _ = split_all(data, [])
    chunked, splitter = split_all(data, cuts)
    assert chunked == whole
    assert splitter.offset == len(data)
    # Lines joined back with their ends equal the text, ends normalised to \n.
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    expected = text.split("\n")
    if expected[-1] == "":
        expected.pop()
    assert whole == expected


#: A stream of bytes (line ends of every kind, a character of two bytes), where it is cut into
#: chunks, and the longest line: for the properties of feed_text and feed_lines against feed.
_STREAMS = given(
    st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", "é".encode(), b" "]),
             max_size=40),
    st.lists(st.integers(min_value=0, max_value=200), max_size=10),
    st.sampled_from([4, 1 << 20]))


@_STREAMS
def test_feed_text_gives_the_lines_of_feed_joined(pieces: list[bytes], cuts: list[int],
                                                  max_line: int) -> None:
    data = b"".join(pieces)
    by_lines, by_text = LineSplitter(max_line_bytes=max_line), LineSplitter(max_line_bytes=max_line)
    for chunk in chunks_of(data, cuts):
        lines = by_lines.feed(chunk)
        assert by_text.feed_text(chunk) == ("\n".join(lines) if lines else None)
        assert (by_text.offset, by_text.consumed, by_text.pending) == (
            by_lines.offset, by_lines.consumed, by_lines.pending)
    assert by_text.finish() == by_lines.finish()


@_STREAMS
def test_feed_lines_gives_the_lines_of_feed(pieces: list[bytes], cuts: list[int],
                                            max_line: int) -> None:
    data = b"".join(pieces)
    by_list, by_text = LineSplitter(max_line_bytes=max_line), LineSplitter(max_line_bytes=max_line)
    for chunk in chunks_of(data, cuts):
        lines = by_list.feed(chunk)
        got = by_text.feed_lines(chunk)
        assert len(got) == len(lines) and got == lines and list(got) == lines
        assert (by_text.offset, by_text.consumed, by_text.pending) == (
            by_list.offset, by_list.consumed, by_list.pending)
    assert by_text.finish() == by_list.finish()


def test_lines_of_a_text_are_made_when_read() -> None:
    lines = TextLines("a\n\nbé")
    assert lines._lines is None and len(lines) == 3 and lines.text == "a\n\nbé"
    assert lines == ("a", "", "bé") and lines == ["a", "", "bé"] and lines != ("a", "")
    assert lines[2] == "bé" and list(lines[1:]) == ["", "bé"] and lines._lines is not None
    assert hash(lines) == hash(("a", "", "bé")) and lines == TextLines("a\n\nbé")
    assert pickle.loads(pickle.dumps(lines)) == lines
    assert list(TextLines("")) == [""] and len(TextLines("")) == 1


def test_feed_text_catches_a_lost_byte_too() -> None:
    splitter = LineSplitter()
    assert splitter.feed_text(Chunk(5, b"ab\ncd")) == "ab"
    with pytest.raises(ValueError, match="1 bytes lost"):
        splitter.feed_text(Chunk(10, b"\nxyz"))


def cut_all(data: bytes, cuts: list[int], max_line: int) -> tuple[bytes, LineCutter]:
    cutter = LineCutter(max_line_bytes=max_line)
    return b"".join(cutter.feed(c) for c in chunks_of(data, cuts)), cutter


def test_the_cutter_passes_bytes_as_they_come_and_cuts_an_endless_line() -> None:
    cutter = LineCutter(max_line_bytes=8)
    assert cutter.feed(Chunk(4, b"0123")) == b"0123"
    assert cutter.feed(Chunk(10, b"456789")) == b"4567\n"
    assert cutter.feed(Chunk(3010, b"abc" * 1000)) == b""  # the same line: dropped
    assert cutter.feed(Chunk(3018, b"def\r\nok\n")) == b"ok\n"
    assert (cutter.cut_lines, cutter.dropped_bytes) == (1, 2 + 3000 + 3)
    with pytest.raises(ValueError, match="2 bytes lost"):
        cutter.feed(Chunk(3022, b"xy"))


@given(st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", "é".encode(), b" ",
                                 b"x" * 7]), max_size=40),
       st.lists(st.integers(min_value=0, max_value=300), max_size=10),
       st.sampled_from([4, 9, 1 << 20]))
def test_the_cutter_cuts_every_line_too_long_and_only_those(pieces: list[bytes],
                                                            cuts: list[int], max_line: int
                                                            ) -> None:
    data = b"".join(pieces)
    passed, cutter = cut_all(data, cuts, max_line)
    given_lines = [x for x in re.split(rb"\r\n|\r|\n", data) if x]
    too_long = [x for x in given_lines if len(x) > max_line]
    assert [x for x in re.split(rb"\r\n|\r|\n", passed) if x] == [x[:max_line]
                                                                 for x in given_lines]
    assert cutter.cut_lines == len(too_long)
    assert cutter.dropped_bytes == sum(len(x) - max_line for x in too_long)
    assert cutter.offset == len(data)
    if not too_long:
        assert passed == data  # the bytes as they came
