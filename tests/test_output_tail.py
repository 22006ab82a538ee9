"""``OutputTail``: a host's newest raw lines, kept as blocks, read like the deque it replaced."""

from __future__ import annotations

from collections import deque

import pytest

from benchtui.store.output_tail import OutputLine, OutputTail


def test_keeps_the_newest_lines_as_a_bounded_deque_would() -> None:
    tail, model = OutputTail(7), deque[OutputLine](maxlen=7)
    sizes = [3, 1, 9, 2, 0, 5, 7, 4, 12, 1]
    for n, size in enumerate(sizes):
        texts = tuple(f"line {n}.{i}" for i in range(size))
        if n % 3 == 2:  # some blocks arrive as lines already made (replay, tests)
            made = [OutputLine(float(n), "s", "iostat", text) for text in texts]
            tail.extend(made)
            model.extend(made)
        else:
            tail.add(float(n), "s", "fio", texts)
            model.extend(OutputLine(float(n), "s", "fio", text) for text in texts)
        assert len(tail) == len(model) and bool(tail) == bool(model)
        assert list(tail) == list(model)
        assert list(reversed(tail)) == list(reversed(model))
        assert [tail[i] for i in range(-len(model), len(model))] == \
            [model[i] for i in range(-len(model), len(model))]
    with pytest.raises(IndexError):
        tail[7]
    with pytest.raises(IndexError):
        tail[-8]
    assert not OutputTail(3)


def test_a_line_read_twice_is_the_same_object() -> None:
    """The Output tab finds where it stopped by identity (``OutputView.show``)."""
    tail = OutputTail(4)
    tail.add(1.0, "s", "fio", ("a", "b", "c"))
    last = tail[-1]
    first = next(iter(tail))
    tail.add(2.0, "s", "fio", ("d", "e"))  # trims the first block made before
    assert tail[-3] is last and next(iter(tail)) is not first
    assert [line.text for line in tail] == ["b", "c", "d", "e"]
    assert next(reversed(tail)) is tail[-1]
    unbounded = OutputTail()
    unbounded.add(1.0, "s", "fio", tuple(map(str, range(5000))))
    assert len(unbounded) == 5000
