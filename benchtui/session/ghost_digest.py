"""The figures a baseline's ghost compares (``GhostDigest``): the console's own figure
functions (``store.figures``) run over a session's samples by a ``figure_track.FigureTrack``,
the recorder's as the session is recorded (the file's figure track) or the baseline's worker
for a file without one; the console (``ui.ghost``) only draws what they give.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

from benchtui.model.sample import HISTOGRAM_METRIC
from benchtui.store import figures as fig
from benchtui.store.fleet import FleetState
from benchtui.store.live import Series
from benchtui.store.recording.figframe import Key

__all__ = ["GHOST_QUANTILE", "METRICS", "GhostDigest", "chart_key"]

#: The metrics a ghost reads of the baseline (the rest is not decoded).
METRICS = ("iops", "bandwidth_bytes", "latency_seconds", "latency_mean_seconds",
           HISTOGRAM_METRIC, "net_bandwidth_bytes")
#: The percentile whose ghost the latency charts draw and whose share the numbers show: the
#: tail the header compares (fio's other percentile series are not read).
GHOST_QUANTILE = "0.99"
_P99 = (0.99,)


def chart_key(metric: str, labels: Mapping[str, str]) -> Key:
    """The key of a latency chart's ghost: the chart's metric and labels
    (``pane_rows.ChartSpec``)."""
    return ("chart", metric, *(f"{k}={v}" for k, v in sorted(labels.items())))


def _newest_at(points: Series | fig.Points | None, t: float) -> float | None:
    """The value at ``t`` of a combined series just fed up to ``t`` (None if it has none)."""
    if points is None or not points.times or points.times[-1] < t - 1e-6:
        return None
    return points.values[-1]


def _numbers(iops: dict[str, float], bandwidth: dict[str, float],
             lat: dict[str, fig.Latency], scale: float = 1.0) -> Iterator[tuple[Key, float]]:
    for op, v in iops.items():
        yield ("iops", op), v * scale
    for op, v in bandwidth.items():
        yield ("bandwidth_bytes", op), v * scale
    for op, latency in lat.items():
        if latency.source == "mean":
            if latency.p50 is not None:
                yield ("lat", op, "mean"), latency.p50
        elif latency.p99 is not None:
            yield ("lat", op, "p99"), latency.p99


class GhostDigest:
    """The figures a ghost compares, computed from a session's samples as the console
    computes the live ones (``session.figure_track.Digest``)."""

    #: The figures' name in a recording's figure track (``session.figure_track``): to be
    #: changed whenever what they are changes (a track of other figures is then not read).
    name = "ghost/2"
    metrics: Collection[str] = METRICS

    def reads(self, metric: str, labels: Mapping[str, str]) -> bool:
        """Not fio's other percentiles, nor its submission latency's mean (the total
        latency's, never smaller, is what the mean figures take)."""
        if metric == "latency_seconds":
            return labels.get("quantile") == GHOST_QUANTILE
        return metric != "latency_mean_seconds" or labels.get("measure") != "slat"

    def host(self, state: FleetState, host: str, t: float) -> Iterator[tuple[Key, float]]:
        """The host's numbers (``figures.io_figures``: IOPS and bandwidth summed over its
        jobs, which its IOPS and bandwidth charts draw too, and its latency percentiles from
        merged histograms; its network rates, ``figures.net_rates``) and its latency chart's
        ghost: the worst job's p99, as the pane's
        chart combines it (its mean, for tools without percentiles)."""
        store = state.store
        iops, bandwidth, lat = fig.io_figures(store, host, t, quantiles=_P99)
        yield from _numbers(iops, bandwidth, lat)
        send, receive = fig.net_rates(store, host, t)
        if send is not None:
            yield ("net", "send"), send
        if receive is not None:
            yield ("net", "receive"), receive
        index = fig.index_of(store)
        percentiles = bool(index.found("latency_seconds", host))
        for op in lat:
            if percentiles:
                v = _newest_at(fig.combined(index.found("latency_seconds", host, op=op,
                                                        quantile=GHOST_QUANTILE), t,
                                            worst=True), t)
                key = chart_key("latency_seconds", {"op": op, "quantile": GHOST_QUANTILE})
            else:
                v = _newest_at(fig.combined(index.found("latency_mean_seconds", host, op=op),
                                            t, worst=True), t)
                key = chart_key("latency_mean_seconds", {"op": op})
            if v is not None:
                yield key, v

    def fleet(self, state: FleetState, t: float) -> Iterator[tuple[Key, float]]:
        """The fleet's figures (``("fleet", ...)``, the header's), and those of a host of
        the fleet on average (``--baseline-host fleet``): rates divided by the hosts
        reporting them, the fleet's latency percentiles (merged histograms); its charts
        are these numbers."""
        store = state.store
        iops, bandwidth, lat = fig.io_figures(store, None, t, quantiles=_P99)
        for key, value in _numbers(iops, bandwidth, lat):
            yield ("fleet", *key), value
        hosts = {s.host for metric in ("iops", "bandwidth_bytes")
                 for s in fig.fresh(store, metric, None, t)}
        if not hosts:
            return
        for key, value in _numbers(iops, bandwidth, lat, 1.0 / len(hosts)):
            yield key, value
            if key[0] == "lat" and key[2] == "mean":
                yield chart_key("latency_mean_seconds", {"op": key[1]}), value
            elif key[0] == "lat":
                yield chart_key("latency_seconds", {"op": key[1],
                                                    "quantile": GHOST_QUANTILE}), value
