"""How the cyclic garbage collector runs in benchtui's long-running processes: the controller
of a session (``run``/``demo``, the console or headless, ``record``, ``serve``), its parse
workers, and the replay console.

Python's default collects the youngest generation after every 700 net new containers, the
middle one every 10 of those, the whole heap every 10 of the middle's (and only once the
objects promoted since the last full collection are a quarter of the long-lived ones). A
controller's objects come in bursts that live a little while: a 32-job fio json+ document's
parse makes ~640 samples, each with its labels, alive until the sinks have them, and 32 hosts'
documents come together each second. At 700 the collector ran ~3 times per document, found
the burst alive each time and promoted it; the promotions then set off full collections of
the whole heap (the stores, asyncssh, the console) every second or so, 60-100 ms each, on
the event loop (``benchmarks/ingest_cost.py``: 1,050 young, 96 middle and 8 full
collections in 10 s of 32 such hosts). Measured in ``docs/benchmarks/fleet_scale.md`` ("The
garbage collector"), the options weighed in ``docs/architecture.md``.

The policy:

- ``THRESHOLDS``: the youngest generation is collected after ``20,000`` net new containers
  (a collection then walks at most that many young objects: a few ms), by which time most of
  a burst has been delivered and freed by reference counting; the middle generation every 50
  of those (a million containers), the whole heap at most every 10 of those, and, as always,
  only once the objects promoted since are a quarter of the long-lived ones. Cyclic garbage
  (asyncio's futures and exceptions with their tracebacks, asyncssh's channels) is still
  collected: the young collections are driven by the garbage itself (at most 20,000
  containers wait for one), and garbage promoted while it was alive waits for the middle
  generation's (a million containers at most) or, promoted twice, for a full collection,
  which the promotions still bring (``tests/test_gc_policy.py`` holds the first two to it).
- ``freeze``: what exists once the controller has started (the modules, classes and
  functions imported, the plan, the links, the console's widgets) is moved out of the
  collector's way (``gc.freeze``): a full collection walks only what the session made since.
  Still freed by reference counting when dropped; only its cycles would wait for the
  policy's end.

``controller()`` applies the policy for as long as a session's controller runs
(``Session.run``, the console, a parse worker's life) and puts back what it found when the
outermost user ends (a library user's thresholds, a test process's heap unfrozen): the
policies nest, the console's around its session's. ``paused()`` holds the collector off
altogether where nothing makes reference cycles (``benchtui parse`` of a saved capture);
``fewer_collections()`` raises the youngest threshold for a stretch of work (a report's
reads). Below every layer (beside ``cpus``): it imports nothing of benchtui's.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

#: The controller's thresholds: youngest generation, middle, whole heap (``gc.set_threshold``).
THRESHOLDS: Final = (20_000, 50, 10)


class _Applied:
    """How many ``begin`` have not ended, and what the outermost found (put back at its end).
    A plain class: a dataclass costs ~2 M instructions to create, at every ``benchtui parse``."""

    __slots__ = ("depth", "frozen_before", "thresholds")

    def __init__(self) -> None:
        self.depth = 0
        self.thresholds: tuple[int, int, int] = (700, 10, 10)
        #: Objects were frozen already (by someone else: then left frozen at the end).
        self.frozen_before = False


_applied = _Applied()


def begin() -> None:
    """The controller's policy from now on (``end`` puts back what was before); nested calls
    count. For a start and an end in different callbacks (the console's mount and
    unmount); ``controller()`` otherwise."""
    _applied.depth += 1
    if _applied.depth > 1:
        return
    a, b, c = gc.get_threshold()
    _applied.thresholds = (a, b, c)
    _applied.frozen_before = gc.get_freeze_count() > 0
    gc.set_threshold(*THRESHOLDS)


def end() -> None:
    """The end of one ``begin``: the outermost puts back the thresholds it found, and
    unfreezes what was frozen meanwhile (``freeze``), unless something was frozen before it."""
    if _applied.depth == 0:
        return
    _applied.depth -= 1
    if _applied.depth > 0:
        return
    gc.set_threshold(*_applied.thresholds)
    if not _applied.frozen_before:
        gc.unfreeze()


@contextlib.contextmanager
def controller() -> Iterator[None]:
    """The controller's policy (``begin``) for the time of the ``with``."""
    begin()
    try:
        yield
    finally:
        end()


def freeze(*, collect: bool = True) -> None:
    """Move every object alive now out of the collector's way (``gc.freeze``), after one
    full collection of what is garbage already (``collect``). Within a ``controller()``: its
    end unfreezes them (outside one they stay frozen for the process's life)."""
    if collect:
        gc.collect()
    gc.freeze()


def ending() -> None:
    """The process ends now, its work done and its output written (``benchtui parse``'s): what
    it holds is moved out of the collector's way (``gc.freeze``), so that the interpreter's
    last collection at exit does not walk it all (~18 M instructions after a 32-job capture's
    parse, docs/benchmarks/parse_speed.md, round 9). Only for a process that makes no
    reference cycles holding what must be finalized (a file's buffer in a cycle would not be
    flushed)."""
    gc.freeze()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No collection for the time of the ``with`` (for work that makes no reference cycles
    and keeps what it makes: the collector would only walk it again and again)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@contextlib.contextmanager
def fewer_collections(young: int) -> Iterator[None]:
    """The youngest generation collected every ``young`` net new containers at most often,
    for the time of the ``with`` (the threshold put back after)."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], young), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
