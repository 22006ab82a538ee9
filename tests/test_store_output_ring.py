"""OutputRing: a host's newest raw lines, made into OutputLines only when read; to its readers
(the console's output tab, replay's tests) a deque of at most ``maxlen`` lines like any other.
Compared, batch after batch, with the plain bounded deque it stands for."""

from __future__ import annotations

import copy
import pickle
from collections import deque

import pytest

from benchtui.store.output_ring import OutputLine, OutputRing


def batches() -> list[tuple[float, str, str, tuple[str, ...]]]:
    """Batches of every size around a ring of 5: none, fewer, as many, more, many more."""
    sizes = [2, 0, 1, 5, 3, 7, 1, 12, 4, 5, 6, 2, 2, 2]
    return [(float(i), "s", "fio" if i % 2 else "iostat", tuple(f"{i}.{k}" for k in range(n)))
            for i, n in enumerate(sizes)]


@pytest.mark.parametrize("maxlen", [5, 1, None])
@pytest.mark.parametrize("read_every", [1, 3, 100])
def test_reads_as_the_bounded_deque_it_stands_for(maxlen: int | None, read_every: int) -> None:
    ring, plain = OutputRing(maxlen=maxlen), deque[OutputLine](maxlen=maxlen)
    for n, (t, step, tool, lines) in enumerate(batches()):
        ring.add(t, step, tool, lines)
        plain.extend(OutputLine(t, step, tool, line) for line in lines)
        if n % read_every == 0:  # (read now and then: what is made stays made)
            assert list(ring) == list(plain)
    assert len(ring) == len(plain) and bool(ring) == bool(plain)
    assert ring[-1] == plain[-1] and ring[0] == plain[0]
    assert list(reversed(ring)) == list(reversed(plain))
    assert ring == plain and plain[-1] in ring
    if maxlen is not None:
        assert len(ring) == maxlen


def test_lines_are_the_same_objects_until_pushed_out() -> None:
    """The console finds where it stopped reading by identity (``line is last``)."""
    ring = OutputRing(maxlen=4)
    ring.add(1.0, "s", "fio", ("a", "b", "c"))
    last = ring[-1]
    ring.add(2.0, "s", "fio", ("d", "e"))
    assert any(line is last for line in ring) and [x.text for x in ring] == ["b", "c", "d", "e"]
    ring.add(3.0, "s", "fio", ("f", "g", "h", "i", "j"))
    assert not any(line is last for line in ring)
    assert [(x.t, x.text) for x in ring] == [(3.0, "g"), (3.0, "h"), (3.0, "i"), (3.0, "j")]


def test_changes_by_hand_come_after_the_waiting_lines() -> None:
    """What a test or a reader adds with deque's own methods lands after what was added."""
    ring = OutputRing(maxlen=6)
    ring.add(1.0, "s", "fio", ("a", "b"))
    ring.extend([OutputLine(2.0, "s", "x", "c")])
    ring.append(OutputLine(3.0, "s", "x", "d"))
    ring.extendleft([OutputLine(0.0, "s", "x", "z")])
    ring.add(4.0, "s", "fio", ("e",))
    assert [x.text for x in ring] == ["z", "a", "b", "c", "d", "e"]
    assert ring.pop().text == "e" and ring.popleft().text == "z"
    ring.add(5.0, "s", "fio", ("f", "g"))
    ring.clear()
    assert not ring and len(ring) == 0


def test_copies_hold_the_lines() -> None:
    ring = OutputRing(maxlen=3)
    ring.add(1.0, "s", "fio", ("a", "b", "c", "d"))
    for other in (copy.copy(ring), ring.copy(), pickle.loads(pickle.dumps(ring))):
        assert isinstance(other, OutputRing) and other.maxlen == 3
        assert [x.text for x in other] == ["b", "c", "d"]
