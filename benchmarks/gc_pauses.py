"""The cyclic garbage collector's collections and pauses in a benchmark's process (issue 32).

``GcPauses()`` watches every collection from then on (``gc.callbacks``): per generation how
many, their total wall time and the longest (a pause of the event loop, in a controller).
``figures()`` is a JSON-able dict for a benchmark's results, ``words(figures)`` its text for a
table's cell: ``gen0 1164 / 120 ms / 2.3 ms; ...`` (collections / total / longest).
``controller_policy()`` is what ``Session.run`` does with the collector, for a benchmark that
drives the ingestion path without a ``Session``.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class GcPauses:
    """Each generation's collections, total and longest wall time, from creation on."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.total = [0.0, 0.0, 0.0]
        self.longest = [0.0, 0.0, 0.0]
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        spent = time.perf_counter() - self._started
        g = info["generation"]
        self.count[g] += 1
        self.total[g] += spent
        self.longest[g] = max(self.longest[g], spent)

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._callback)

    def figures(self) -> dict[str, Any]:
        """Per generation: collections, total and longest seconds; the thresholds and the
        frozen objects at the time of asking."""
        return {"collections": list(self.count), "total_s": list(self.total),
                "longest_s": list(self.longest), "thresholds": list(gc.get_threshold()),
                "frozen": gc.get_freeze_count()}


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
