"""The controller's garbage-collector policy (``benchtui/gc_policy.py``): applied and put back
as its users nest, and cyclic garbage still collected under it.

The policy in a real session (a ``Session`` over the tests' real sshd) is checked in
``tests/test_session_engine.py`` (``test_samples_from_every_host_every_second``), and in a
real parse worker process here.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator

import pytest

from benchtui import gc_policy


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    """Each test starts and ends with the process's own collector settings."""
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    yield
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


class Node:
    """An object in a reference cycle with another."""

    def __init__(self) -> None:
        self.other: Node | None = None
        self.payload = [[0] * 8 for _ in range(4)]  # (containers: counted by the collector)


def cycles(n: int) -> list[weakref.ref[Node]]:
    """``n`` pairs of objects in cycles, dropped at once: only the collector frees them."""
    refs = []
    for _ in range(n):
        a, b = Node(), Node()
        a.other, b.other = b, a
        refs.append(weakref.ref(a))
    return refs


def test_applied_nested_and_put_back() -> None:
    before = gc.get_threshold()
    with gc_policy.controller():
        assert gc.get_threshold() == gc_policy.THRESHOLDS
        gc_policy.freeze()
        frozen = gc.get_freeze_count()
        assert frozen > 0
        gc_policy.begin()  # (the console's, around its session's)
        with gc_policy.controller():
            assert gc.get_threshold() == gc_policy.THRESHOLDS
        gc_policy.end()
        assert gc.get_threshold() == gc_policy.THRESHOLDS  # (the outermost has not ended)
        assert gc.get_freeze_count() >= frozen
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    gc_policy.end()  # (an end without a begin: nothing)
    assert gc.get_threshold() == before


def test_put_back_when_the_user_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), gc_policy.controller():
        gc_policy.freeze()
        raise RuntimeError
    assert gc.get_threshold() == before


def test_what_someone_else_froze_stays_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_policy.controller():
            gc_policy.freeze()
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


def test_cyclic_garbage_is_still_collected_under_the_policy() -> None:
    """Cycles made and dropped in a loop, as a long session makes them (futures, exceptions
    with tracebacks), with the heap frozen as a session freezes it: the collector's own
    collections free them, never more of them waiting than the young generation holds; and
    cycles that were alive at a young collection (promoted) are freed by the middle
    generation's, within its threshold."""
    young, middle, _ = gc_policy.THRESHOLDS
    per_pair = 2 * 6  # (a Node, its payload list and the 4 lists in it: 6 containers)
    with gc_policy.controller():
        gc_policy.freeze()
        collections = gc.get_stats()[0]["collections"]
        refs: list[weakref.ref[Node]] = []
        waiting_most = 0
        for _ in range(100):  # (100,000 pairs: 1.2 million containers)
            refs += cycles(1_000)
            refs = [r for r in refs if r() is not None]
            waiting_most = max(waiting_most, len(refs))
        assert gc.get_stats()[0]["collections"] > collections
        assert waiting_most * per_pair <= young + 1_000 * per_pair

        kept = [Node() for _ in range(2_000)]
        for a, b in zip(kept[::2], kept[1::2], strict=True):
            a.other, b.other = b, a
        alive = [weakref.ref(node) for node in kept]
        gc.collect(0)  # (alive now: promoted to the middle generation)
        del kept, a, b
        assert all(r() is not None for r in alive)  # (garbage, waiting in the middle one)
        made = 0
        while any(r() is not None for r in alive):
            cycles(100)
            made += 100
            assert made * per_pair <= 2 * young * (middle + 1), "never freed"


def test_a_parse_worker_runs_under_the_policy() -> None:
    """A real parse worker process (``python -m benchtui.session.parse_worker``) applies the
    policy at its start: asked through its own loop, it answers with its collector's
    settings."""
    probe = ("import gc, runpy, sys\n"
             "import benchtui.session.parse_worker as w\n"
             "def serve(orders, answers):\n"
             "    answers.write(repr((gc.get_threshold(), gc.get_freeze_count() > 0)).encode())\n"
             "w.serve = serve\n"
             "w.main()\n")
    done = subprocess.run([sys.executable, "-c", probe], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60, check=True)
    assert done.stdout.decode() == repr((gc_policy.THRESHOLDS, True))
