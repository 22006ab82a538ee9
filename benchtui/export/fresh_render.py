"""Scrapes that arrive together share one rendering, and every answer is still fresh.

A burst of scrapes (several Prometheus servers, a federation, a dashboard reload, 200 at once)
would otherwise render the whole fleet once each, one after another (~20 ms per 16 hosts: 200
of them take seconds). ``FreshRenderer.body(arrived, ...)`` gives a request the newest
rendering that *started after the request arrived*: so nothing older than the request is ever
served, and all the requests that arrived while one rendering ran share the next one. One
rendering runs at a time per format; a burst costs about two renderings, not one per scrape.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _Format:
    #: When the newest finished rendering started (monotonic), and its bytes.
    started: float = -1.0
    body: bytes = b""
    running: bool = False


class FreshRenderer:
    """``body(arrived, openmetrics, gzipped)`` from ``render(openmetrics, gzipped)``."""

    def __init__(self, render: Callable[[bool, bool], bytes],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._render = render
        self._clock = clock
        self._cond = threading.Condition()
        self._formats: dict[tuple[bool, bool], _Format] = {}

    def body(self, arrived: float, openmetrics: bool, gzipped: bool) -> bytes:
        """A rendering that started at or after ``arrived`` (the request's arrival)."""
        key = (openmetrics, gzipped)
        with self._cond:
            state = self._formats.setdefault(key, _Format())
            while state.started < arrived:
                if state.running:
                    self._cond.wait()
                    continue
                state.running = True
                started = self._clock()
                self._cond.release()
                try:
                    body = self._render(openmetrics, gzipped)
                finally:
                    self._cond.acquire()
                    state.running = False
                    self._cond.notify_all()
                state.started, state.body = started, body
            return state.body
