"""The cyclic garbage collector's collections and pauses in a benchmark's process (issue 32).

``GcPauses()`` watches every collection from then on (``gc.callbacks``); ``figures()`` gives
per generation how many, their total wall time and the longest (a pause of the event loop,
in a controller), over a stretch of time or all of it: a JSON-able dict for a benchmark's
results; ``words(figures)`` its text for a table's cell: ``gen0 1164 / 120 / 2.3; ...``
(collections / total ms / longest ms).
``controller_policy()`` is what ``Session.run`` does with the collector, for a benchmark that
drives the ingestion path without a ``Session``; ``variant(spec)`` another policy, to weigh
the options against each other (``ingest_cost.py --gc``).
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class GcPauses:
    """Every collection from creation on: when it ended (``time.monotonic``), its generation
    and its wall time."""

    def __init__(self) -> None:
        self.log: list[tuple[float, int, float]] = []
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.log.append((time.monotonic(), info["generation"],
                         time.perf_counter() - self._started))

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._callback)

    def figures(self, since: float = 0.0, until: float = float("inf")) -> dict[str, Any]:
        """Per generation: collections, total and longest seconds (of those that ended
        between ``since`` and ``until``, monotonic); the thresholds and the frozen objects at
        the time of asking."""
        count, total, longest = [0, 0, 0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        for t, g, spent in self.log:
            if since <= t <= until:
                count[g] += 1
                total[g] += spent
                longest[g] = max(longest[g], spent)
        return {"collections": count, "total_s": total, "longest_s": longest,
                "thresholds": list(gc.get_threshold()), "frozen": gc.get_freeze_count()}


def words(figures: dict[str, Any] | None) -> str:
    """``figures`` for a table's cell: per generation, collections / total ms / longest ms."""
    if not figures:
        return "-"
    return "; ".join(f"gen{g} {n} / {1e3 * t:.0f} / {1e3 * m:.1f}" for g, (n, t, m) in
                     enumerate(zip(figures["collections"], figures["total_s"],
                                   figures["longest_s"], strict=True)))


@contextlib.contextmanager
def controller_policy() -> Iterator[None]:
    """What ``Session.run`` does with the collector, for a benchmark that drives the
    ingestion path without one: the code under measurement's controller policy
    (``benchtui.gc_policy``), its start-up heap frozen; nothing for code from before it."""
    import benchtui

    # (not ``import benchtui.gc_policy``: an editable install's finder would find this
    # checkout's for older code imported from another directory)
    if not (Path(benchtui.__file__).parent / "gc_policy.py").exists():
        yield
        return
    from benchtui import gc_policy

    with gc_policy.controller():
        gc_policy.freeze()
        yield


@contextlib.contextmanager
def variant(spec: str) -> Iterator[None]:
    """A collector policy to weigh against the code's (``ingest_cost.py --gc SPEC``): words
    joined by ``+``: ``code`` (the code's own, ``controller_policy``), ``t=A/B/C`` (these
    thresholds), ``freeze`` (``gc.collect`` then ``gc.freeze`` first), ``paused`` (each
    ``RunIngest.feed`` with the collector off, on again after). ``python``: Python's own."""
    parts = spec.split("+")
    with contextlib.ExitStack() as stack:
        if "code" in parts:
            stack.enter_context(controller_policy())
        before = gc.get_threshold()
        stack.callback(gc.set_threshold, *before)
        for word in parts:
            if word.startswith("t="):
                gc.set_threshold(*map(int, word[2:].split("/")))
            elif word == "freeze":
                gc.collect()
                gc.freeze()
                stack.callback(gc.unfreeze)
            elif word == "paused":
                stack.enter_context(_feed_paused())
            elif word not in ("code", "python"):
                raise SystemExit(f"--gc: unknown word {word!r}")
        yield


@contextlib.contextmanager
def _feed_paused() -> Iterator[None]:
    from benchtui.session.ingest import RunIngest

    feed = RunIngest.feed

    def paused(self: RunIngest, chunk: Any, t: float) -> Any:
        gc.disable()
        try:
            return feed(self, chunk, t)
        finally:
            gc.enable()

    RunIngest.feed = paused  # type: ignore[method-assign]
    try:
        yield
    finally:
        RunIngest.feed = feed  # type: ignore[method-assign]
