"""The console's side of a baseline session (``--baseline OLD.btr``): the ghost.

``GhostDigest`` (``session.ghost_digest``) is what a ghost compares: the console's own
figure functions (``store.figures``), so that a ghost is the same figure as what it stands
beside. A ``session.figure_track.FigureTrack`` runs it over a session's samples: the
recorder's as the session is recorded (the file's figure track), or the baseline's worker for
a file without one. ``benchtui.session.baseline.BaselineSeries`` opens the baseline, matches
each step as it starts and gets, in its worker thread, the baseline's figures per second of
the step.

``Ghost`` is what the console holds: on every refresh (``update``) it tells the baseline
which step is on screen and where the clock is; a pane asks it for the ghost of a chart
(``series``: store ``Series`` holding the baseline's points up to the console's clock, laid
on the current step's time axis, so that a chart's column cache takes them as it takes the
live ones) and for its figures against the baseline (``host_versus``, ``fleet_versus``).
Nothing here reads the file or computes a figure from samples: the UI only draws.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Mapping

from benchtui.model.sample import INTERVAL
from benchtui.session.baseline import FLEET, BaselineSeries, GhostRun, Key, open_baseline
from benchtui.session.ghost_digest import GHOST_QUANTILE, METRICS, GhostDigest, chart_key
from benchtui.store import figures as fig
from benchtui.store.fleet import FleetState, StepView
from benchtui.store.live import DEFAULT_WINDOW, Series

__all__ = ["DEFAULT_TOLERANCE", "GHOST_QUANTILE", "METRICS", "Ghost", "GhostDigest", "chart_key",
           "open_ghost"]

#: ``--tolerance``: shares within 5% of the baseline's are not coloured.
DEFAULT_TOLERANCE = 0.05
def _series_key(metric: str, labels: Mapping[str, str]) -> Key:
    """Where a chart's ghost is: IOPS and bandwidth charts draw the numbers (the jobs'
    values summed, as the charts sum them), latency charts their own figure."""
    if metric in ("iops", "bandwidth_bytes") and set(labels) == {"op"}:
        return (metric, labels["op"])
    return chart_key(metric, labels)


class _Shown:
    """A chart's ghost as a store series, filled up to the console's clock."""

    __slots__ = ("next", "series", "to")

    def __init__(self, series: Series) -> None:
        self.series = series
        self.next = 0       # the next point of the baseline's to add
        self.to = -math.inf  # the console's time it is filled up to


class Ghost:
    """A baseline beside the console (module docstring). Used on the UI thread only."""

    def __init__(self, baseline: BaselineSeries, *, tolerance: float = DEFAULT_TOLERANCE,
                 history: int = DEFAULT_WINDOW) -> None:
        self.baseline = baseline
        self.tolerance = tolerance
        self.history = history
        #: Grows when the ghost's series are made anew (another step, a seek back).
        self.generation = 0
        self._run: GhostRun | None = None
        self._run_generation = -1
        self._step: tuple[str, float] | None = None
        #: The console's time the ghost is shown up to (the step's end once it ended).
        self._until = -math.inf
        self._window = 0.0
        self._shown: dict[tuple[str, Key], _Shown] = {}

    @property
    def name(self) -> str:
        return self.baseline.name

    def close(self) -> None:
        self.baseline.close()

    # --- the refresh tick --------------------------------------------------------------------

    def update(self, state: FleetState, now: float, window: float) -> list[tuple[str, str]]:
        """The console is at ``now`` showing ``state``: follow its step, have the baseline
        computed around ``now``; the (severity, sentence) notices to show."""
        step = state.current_step or (state.steps[-1] if state.steps else None)
        if step is None:
            self._set_run(None)
            return self.baseline.take_notices()
        key = (step.name, step.started)
        if key != self._step:
            self._step = key
            run = self.baseline.start_step(step.name, step.started, step.hosts,
                                           _step_data(state, step))
        else:
            run = self.baseline.run
        self._set_run(run)
        until = now if step.ended is None else min(now, step.ended)
        if until < self._until - 0.5:
            self._restart()  # the clock went back (a replay seek)
        self._until = until
        self._window = window
        if run is not None:
            self.baseline.want(until, window)
            if run.generation != self._run_generation:
                self._run_generation = run.generation
                self._restart()
        return self.baseline.take_notices()

    def _set_run(self, run: GhostRun | None) -> None:
        if run is not self._run:
            self._run = run
            self._run_generation = run.generation if run is not None else -1
            self._restart()

    def _restart(self) -> None:
        self._shown = {}
        self.generation += 1

    # --- what the panes, the header and the detail view ask ----------------------------------

    @property
    def run(self) -> GhostRun | None:
        return self._run

    def series(self, host: str, metric: str, labels: Mapping[str, str]) -> Series | None:
        """The ghost of ``host``'s chart of ``metric`` with ``labels``, up to the console's
        clock (None when the host has no baseline, or the baseline not that figure)."""
        run = self._run
        if run is None:
            return None
        base = run.baseline_host(host)
        if base is None:
            return None
        key = _series_key(metric, labels)
        points = run.points(base, key)
        if points is None:
            return None
        shown = self._shown.get((base, key))
        if shown is None:
            series = Series(base, "baseline", metric, dict(labels), INTERVAL,
                            deque(maxlen=self.history), deque(maxlen=self.history))
            shown = self._shown[(base, key)] = _Shown(series)
            first = self._until - run.started - self._window * 1.1
            shown.next = bisect_right(points.elapsed, first, 0, len(points))
        if self._until > shown.to:
            e = self._until - run.started
            n = len(points)
            i = shown.next
            times, values = shown.series.times, shown.series.values
            elapsed, figures = points.elapsed, points.values
            started = run.started
            while i < n and elapsed[i] <= e:
                times.append(started + elapsed[i])
                values.append(figures[i])
                i += 1
            shown.next = i
            shown.to = self._until
        return shown.series

    def value(self, host: str, key: Key, now: float) -> float | None:
        """A figure of ``host``'s baseline (FLEET: the baseline's fleet) current at ``now``:
        its newest point at most ``figures.STALE_AFTER`` seconds old, as the console counts
        its own."""
        run = self._run
        if run is None:
            return None
        base = FLEET if host == FLEET else run.baseline_host(host)
        if base is None:
            return None
        points = run.points(base, key)
        if points is None:
            return None
        e = min(now, self._until) - run.started
        i = bisect_right(points.elapsed, e, 0, len(points)) - 1
        if i < 0 or e - points.elapsed[i] > fig.STALE_AFTER:
            return None
        return points.values[i]

    def _versus(self, host: str, prefix: tuple[str, ...], *, iops: dict[str, float],
                bandwidth: dict[str, float], latency: dict[str, fig.Latency],
                now: float, net: Mapping[str, float | None] | None = None
                ) -> fig.Versus | None:
        if self._run is None or (self._run.baseline_host(host) is None and host != FLEET):
            return None

        def shares(current: Mapping[str, float | None],
                   key: Callable[[str], Key]) -> dict[str, float]:
            out = {}
            for op, v in current.items():
                base = self.value(host, (*prefix, *key(op)), now)
                if v is not None and base:
                    out[op] = v / base
            return out

        lat: dict[str, float | None] = {
            op: lt.p50 if lt.source == "mean" else lt.p99 for op, lt in latency.items()}
        lat_shares = shares({op: v for op, v in lat.items() if latency[op].source != "mean"},
                            lambda op: ("lat", op, "p99"))
        lat_shares.update(shares({op: v for op, v in lat.items()
                                  if latency[op].source == "mean"},
                                 lambda op: ("lat", op, "mean")))
        return fig.Versus(shares(iops, lambda op: ("iops", op)),
                          shares(bandwidth, lambda op: ("bandwidth_bytes", op)),
                          lat_shares, shares(net or {}, lambda d: ("net", d)),
                          self.tolerance)

    def host_versus(self, f: fig.HostFigures, now: float) -> fig.Versus | None:
        """A host's current figures against its baseline's (None: no baseline for it; the
        end-of-run figures of a finished host are not compared)."""
        if f.final:
            return None
        net = {} if f.net_final else {"send": f.net_send, "receive": f.net_receive}
        return self._versus(f.name, (), iops=f.iops, bandwidth=f.bandwidth,
                            latency=f.latency, now=now, net=net)

    def fleet_versus(self, f: fig.FleetFigures, now: float) -> fig.Versus | None:
        """The fleet's current figures against the baseline's fleet."""
        return self._versus(FLEET, ("fleet",), iops=f.iops, bandwidth=f.bandwidth,
                            latency=f.latency, now=now)


def _step_data(state: FleetState, step: StepView) -> dict[str, object]:
    """The ``step_start`` event's data of ``step`` (its repeat), from the state's events;
    the repeat read from the label (``name#2``) when the event is no longer kept."""
    for event in reversed(state.events):
        if event.kind == "step_start" and event.step == step.name and event.t == step.started:
            return dict(event.data)
    found = re.search(r"#(\d+)$", step.name)
    return {"repeat": int(found.group(1))} if found else {}


def open_ghost(text: str, *, baseline_host: str | None = None,
               tolerance: float = DEFAULT_TOLERANCE, history: int = DEFAULT_WINDOW,
               check: Callable[[BaselineSeries], object] | None = None,
               threaded: bool = True) -> tuple[Ghost | None, list[str]]:
    """A console's ghost of the baseline ``text`` (``OLD.btr``), checked by ``check`` (the
    plan's or the replayed session's steps and hosts): (the ghost or None, sentences to
    show: why there is none, or the file's warnings). A console goes on without it."""
    baseline, notes = open_baseline(text, GhostDigest(), baseline_host=baseline_host,
                                    threaded=threaded, check=check)
    if baseline is None:
        return None, notes
    return Ghost(baseline, tolerance=tolerance, history=history), notes

