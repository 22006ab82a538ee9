"""Figures computed from samples as a step goes: the figure track.

A baseline's ghost (``session.baseline``) shows, beside each live figure, the baseline's
figure at the same second of the step, computed as the console computes its own: a
``Digest`` (``session.ghost_digest.GhostDigest``: the console's figure functions) asked, after
each of a host's batches, for the host's figures at that moment, and once a second for the
fleet's, over a scratch ``FleetState`` fed with the step's samples. ``FigureTrack`` is that
computation, in one place for its two users:

- ``FigureRecorder``, a live session's sink beside the recorder (``record``, ``run
  --record``): it computes the track as the samples arrive and the recorder writes it in
  FIGS frames (``store.recording.figframe``), so that a baseline made by benchtui is read,
  not recomputed, when a later run is compared with it;
- the baseline's worker, for files without a track (older files, or one whose track stopped)
  or past where the track ends (a recording cut short): it feeds the track with the decoded
  samples.

A track starts afresh at each step (its origin: the ``step_start`` event's time) and reads
only the step's hosts: the same figures whichever of the two computed them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from operator import attrgetter, itemgetter
from typing import Protocol

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.model.sample import INTERVAL, Sample
from benchtui.store.batch_shape import BatchShapes
from benchtui.store.fleet import FleetState
from benchtui.store.recording.figframe import Key

__all__ = ["SCRATCH_POINTS", "Digest", "FigureRecorder", "FigureTrack", "Keep", "Key"]

#: Where a track's figures go: (host, or the fleet's name, time, the figures).
Keep = Callable[[str | None, float, Iterable[tuple[Key, float]]], None]
#: The scratch state's points per series: figures use the newest few points only.
SCRATCH_POINTS = 16
_T, _HOST = attrgetter("t"), attrgetter("host")


class Digest(Protocol):
    """What a figure track computes from the samples (the console's figures)."""

    #: Names the figures (written in a recording's metadata: a track of another digest is
    #: not read as this one's).
    name: str
    #: The metrics it reads (the others are not decoded).
    metrics: Collection[str]

    def reads(self, metric: str, labels: Mapping[str, str]) -> bool:
        """Whether a series of ``metrics`` is read (fio's percentiles it does not draw are
        not)."""
        ...

    def host(self, state: FleetState, host: str, t: float) -> Iterable[tuple[Key, float]]:
        """One host's figures at ``t``, the state having been fed up to ``t``."""
        ...

    def fleet(self, state: FleetState, t: float) -> Iterable[tuple[Key, float]]:
        """The fleet's figures at ``t``."""
        ...


class FigureTrack:
    """One step's figures from its samples (module docstring). ``keep`` gets each host's
    figures (host, t, figures) after its batches and the fleet's (None, t, figures) once a
    second of step time; those before ``start`` (epoch seconds) are not kept: samples from
    before it are fed so that the first figures count what was current then."""

    def __init__(self, digest: Digest, origin: float, keep: Keep, *,
                 start: float | None = None) -> None:
        self.digest = digest
        self.origin = origin
        self.start = origin if start is None else start
        self.state = FleetState("figures", window=SCRATCH_POINTS)
        self._keep = keep
        self._metrics = frozenset(digest.metrics)
        #: Epoch seconds: the fleet's figures are taken when a host's batch reaches this.
        self.next_fleet = origin + math.floor(self.start - origin)

    def reads(self, metric: str, labels: Mapping[str, str]) -> bool:
        """Whether samples of ``metric`` with ``labels`` are fed (the digest's)."""
        return metric in self._metrics and self.digest.reads(metric, labels)

    def add(self, host: str, samples: list[Sample], newest: float) -> None:
        """A batch of ``host``'s samples (interval samples the digest reads, with their
        times), whose newest time is ``newest``."""
        state, digest = self.state, self.digest
        if newest >= self.next_fleet:
            # once a second: the fleet as the samples fed so far make it, at the newest of
            # them (where a host's own figures would be taken)
            fed = state.latest_t
            if fed is not None and fed >= self.start:
                self._keep(None, fed, digest.fleet(state, fed))
            self.next_fleet = self.origin + math.floor(newest - self.origin) + 1.0
        state.store.add(samples)  # the store is what the figures read
        state.latest_t = newest if state.latest_t is None else max(state.latest_t, newest)
        if newest >= self.start:
            self._keep(host, newest, digest.host(state, host, newest))


class FigureRecorder:
    """A live session's figure track, handed to ``write`` (the recorder's ``on_figures``):
    give ``on_samples`` and ``on_event`` to the session's sinks, after the recorder's.

    The track is an extra: should computing it fail (a bug), it stops, ``error`` says why,
    ``on_error`` is called once (the recorder then marks the file as having no track: its
    ghost is computed from the samples), and the session and its recording go on."""

    def __init__(self, digest: Digest,
                 write: Callable[[float, str | None, list[tuple[Key, float]]], None], *,
                 on_error: Callable[[], object] | None = None) -> None:
        self.digest = digest
        self._write = write
        self._on_error = on_error
        #: Why the track stopped (None: it did not).
        self.error: str | None = None
        self._track: FigureTrack | None = None
        self._hosts: frozenset[str] = frozenset()
        #: The positions fed of the last batch of each shape (``_picked``).
        self._shapes: BatchShapes[list[int]] = BatchShapes()
        #: CPU seconds spent computing (benchmarks report them).
        self.cpu_seconds = 0.0

    def on_event(self, event: Event) -> None:
        if self.error is not None:
            return
        if event.kind == ev.STEP_START:
            hosts = event.data.get("hosts")
            self._hosts = frozenset(str(h) for h in hosts) if isinstance(hosts, list) \
                else frozenset()
            self._track = FigureTrack(self.digest, event.t, self._keep)
            self._shapes = BatchShapes()  # (what is fed depends on the step's hosts)
        elif event.kind == ev.STEP_END:
            self._track = None

    def _keep(self, host: str | None, t: float, figures: Iterable[tuple[Key, float]]) -> None:
        kept = list(figures)
        if kept:
            self._write(t, host, kept)

    def on_samples(self, samples: list[Sample], arrived: float | None = None) -> None:
        """A batch the session handed to its sinks (``arrived``: when, for samples without
        a time of their own; now when not given, as the recorder keeps them)."""
        track = self._track
        if track is None or not samples:
            return
        started = time.thread_time()
        try:
            self._add(track, samples, arrived)
        except Exception as error:  # noqa: BLE001 - a bug must not stop the session
            self.error = f"the figure track stopped: {type(error).__name__}: {error}"
            self._track = None
            if self._on_error is not None:
                self._on_error()
        self.cpu_seconds += time.thread_time() - started

    def _add(self, track: FigureTrack, samples: list[Sample], arrived: float | None) -> None:
        picked = self._shapes.find(samples)
        if picked is None:
            picked = self._picked(track, samples)
            self._shapes.keep(samples, picked)
        if not picked:
            return
        fed = samples if len(picked) == len(samples) else list(itemgetter(*picked)(samples)) \
            if len(picked) > 1 else [samples[picked[0]]]
        times = list(map(_T, fed))
        if None in times:  # as the recorder keeps them: at their arrival
            arrived = time.time() if arrived is None else arrived
            fed = [dataclasses.replace(s, t=arrived) if s.t is None else s for s in fed]
            times = [arrived if t is None else t for t in times]
        hosts = list(map(_HOST, fed))
        if hosts.count(hosts[0]) == len(hosts):  # (a batch is one host's but for tests)
            track.add(hosts[0], fed, max(-math.inf, *times))  # (the newest: a fold from -inf)
            return
        groups: dict[str, list[Sample]] = {}
        newest: dict[str, float] = {}
        for s, host, t in zip(fed, hosts, times, strict=True):
            groups.setdefault(host, []).append(s)
            if t > newest.get(host, -math.inf):
                newest[host] = t
        for host, batch in groups.items():
            track.add(host, batch, newest.get(host, -math.inf))

    def _picked(self, track: FigureTrack, samples: list[Sample]) -> list[int]:
        """The positions of the samples of a batch that the track is fed: the digest's
        interval samples of the step's hosts. They depend only on the batch's shape (each
        sample's kind, host, metric and labels: ``store.batch_shape``), so a batch like the
        last one of its host, tool and size is not looked at sample by sample."""
        reads, hosts = track.reads, self._hosts
        return [i for i, s in enumerate(samples)
                if s.kind == INTERVAL and (not hosts or s.host in hosts)
                and reads(s.metric, s.labels)]
