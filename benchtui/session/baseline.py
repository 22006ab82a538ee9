"""A baseline session beside the one on screen: the console's ghost (``--baseline OLD.btr``).

Opening costs the baseline's index and events only (``SessionReader.open`` and its layout,
``compare.SessionLayout``). The rest is read a step at a time: when a step of the session on
screen starts, ``start_step`` matches it with the baseline (``compare.match_step``: steps by
name, hosts by name, or every host with one baseline host or with the baseline's fleet),
picks the baseline's run of it (``compare.counterpart_run``) and lays that run on the step's
clock: a baseline point ``e`` seconds into its step is shown ``e`` seconds into the step on
screen (step-elapsed seconds).

A worker thread gets the baseline run's figures (the ``Digest``'s: the console's own figure
functions, ``benchtui.ui.ghost``), a stretch at a time a little ahead of the console's clock
(``want``): read from the file's figure track where it has one of this digest (written as the
baseline was recorded: ``session.figure_track``, FIGS frames), computed otherwise (older
files, past where a recording cut short ends) by a ``FigureTrack`` fed with the run's
decoded samples of the few metrics the digest reads. The figures are kept per
(baseline host, figure) as append-only arrays of (step-elapsed seconds, value) that the UI
thread reads without a lock (``GhostRun.points``): nothing is read, decoded or computed on the
UI thread.

A problem (the file damaged where the run lies, a bug) ends the ghost with one sentence
(``GhostRun.error``); the session on screen goes on. A step the baseline does not have, and
hosts it does not have, are said once each (``notices``).
"""

from __future__ import annotations

import math
import os
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from benchtui.errors import BenchtuiError, CompareError, RecordingError
from benchtui.model.histogram import LatencyHistogram, RunningSumsHistogram
from benchtui.model.sample import INTERVAL, Sample
from benchtui.session.compare import (
    FLEET,
    SESSION,
    BaselineSpec,
    Matching,
    SessionLayout,
    counterpart_run,
    match,
    match_step,
    match_steps,
    parse_baseline,
    split_label,
)
from benchtui.session.figure_track import Digest, FigureTrack, Key
from benchtui.store.recording import SessionReader
from benchtui.store.recording.codec import SeriesDef
from benchtui.store.recording.figframe import FLEET_HOST
from benchtui.store.recording.histcodec import RecordedHistogram

__all__ = ["AHEAD", "FLEET", "BaselineSeries", "Digest", "GhostRun", "Key", "Points"]

#: Seconds of the baseline the worker keeps computed ahead of the console's clock.
AHEAD = 15.0
#: A move of the console's clock further than this past what was computed (a replay seek)
#: starts the computing over at the new place, rather than computing the stretch between.
JUMP = 60.0
#: The figure track of a file cut short is read up to this many seconds before its last
#: tick (past it, the figures are computed from the samples).
_TRACK_SLACK = 1.0
#: Seconds before the first figure wanted whose samples are fed too, so that the first
#: figures count what was current then (the console counts points of the last 5 s).
LEAD = 6.0


class Points:
    """One figure of one baseline host over a run: step-elapsed seconds and values, in time
    order, appended by the worker and read by the UI thread (``len`` is what is complete)."""

    __slots__ = ("elapsed", "values")

    def __init__(self) -> None:
        self.elapsed = array("d")
        self.values = array("d")

    def add(self, elapsed: float, value: float) -> None:
        self.values.append(value)  # the value first: a reader counts the times
        self.elapsed.append(elapsed)

    def __len__(self) -> int:
        return len(self.elapsed)


@dataclass(eq=False)
class _Load:
    """What one stretch of computing has made (a jump starts a new one)."""

    #: (baseline host or FLEET, key) -> points
    points: dict[tuple[str, Key], Points] = field(default_factory=dict)
    #: Step-elapsed seconds: figures are complete from ``start`` to ``done_to``.
    start: float = 0.0
    done_to: float = 0.0
    #: How far the worker was asked to go.
    asked_to: float = 0.0
    #: Computing the figures from the samples (None: reading them, or not begun).
    track: FigureTrack | None = None


@dataclass(eq=False)
class GhostRun:
    """One step of the session on screen beside its baseline run."""

    label: str
    step: str
    #: When the step on screen started (the console's clock): step-elapsed time counts
    #: from here.
    started: float
    #: The baseline's run: its label, when that step started and ended (baseline clock).
    base_label: str
    base_started: float
    base_ended: float
    #: Host on screen (and FLEET) -> baseline host (or FLEET); hosts without one are absent.
    pairs: Mapping[str, str]
    #: The baseline hosts whose samples are read (every host of the baseline's run: the
    #: fleet's figures are theirs).
    hosts: tuple[str, ...]
    #: Grows when the points start over (a seek far from what was computed).
    generation: int = 0
    #: One sentence when the ghost stopped (the baseline file cannot be read there).
    error: str | None = None
    _load: _Load = field(default_factory=_Load)

    @property
    def length(self) -> float:
        """Seconds of the baseline's run."""
        return max(self.base_ended - self.base_started, 0.0)

    def points(self, host: str, key: Key) -> Points | None:
        """The figure ``key`` of baseline host ``host`` (or FLEET), as computed so far."""
        return self._load.points.get((host, key))

    def baseline_host(self, host: str) -> str | None:
        """The baseline host (or FLEET) that ``host`` on screen is compared with."""
        return self.pairs.get(host)


class BaselineSeries:
    """A baseline session, read a step at a time for the console (module docstring).

    ``threaded=False`` computes in the calling thread instead (tests that need a known
    screen, benchmarks that measure the work itself)."""

    def __init__(self, reader: SessionReader, spec: BaselineSpec, digest: Digest, *,
                 threaded: bool = True) -> None:
        self.reader = reader
        self.spec = spec
        self.digest = digest
        self.name = os.path.basename(reader.path)
        self.layout = SessionLayout.from_events(reader.events())
        self.run: GhostRun | None = None
        #: Sentences for the user, said once each (the console takes them: ``take_notices``).
        self._notices: list[tuple[str, str]] = []
        self._said: set[str] = set()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="benchtui-baseline") \
            if threaded else None
        self._job: Future[None] | None = None
        self._lock = threading.Lock()  # the reader is for one thread at a time
        self.closed = False
        #: CPU seconds spent computing (benchmarks/ui_render.py reports them).
        self.cpu_seconds = 0.0
        #: Ticks of figures read from the file's figure track, and batches of samples
        #: computed into figures (tests and benchmarks tell the two ways apart by them).
        self.figures_read = 0
        self.figures_computed = 0

    @classmethod
    def open(cls, text: str, digest: Digest, *, baseline_host: str | None = None,
             threaded: bool = True) -> BaselineSeries:
        """Open ``OLD.btr`` (``session=OLD.btr`` too). Raises CompareError or RecordingError
        (one sentence each) when it is not a session baseline or cannot be read."""
        # a console's baseline is a session: any file name will do (not only *.btr)
        kind = text.partition("=")[0].strip().lower()
        spec = parse_baseline(text if kind in ("host", "step", "session") else
                              f"session={text}", baseline_host=baseline_host)
        if spec.kind != SESSION:
            raise CompareError(f"--baseline {text} is not a session file: the console "
                               "compares with another session (OLD.btr)")
        reader = SessionReader.open(spec.value)
        try:
            return cls(reader, spec, digest, threaded=threaded)
        except BaseException:
            reader.close()
            raise

    def close(self) -> None:
        """Stop the worker (after the stretch it is computing) and close the file."""
        self.closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self.reader.close()

    # --- matching ----------------------------------------------------------------------------

    def check_plan(self, steps: Sequence[tuple[str, Sequence[str]]]) -> None:
        """A live run's plan (its steps' names and hosts) against the baseline, before
        anything runs: raises CompareError (no step in common, hosts that do not match)."""
        match_steps(self.spec, self.layout, steps)

    def check_session(self, layout: SessionLayout) -> Matching:
        """A recorded session (replay) against the baseline: raises CompareError."""
        return match(layout, self.spec, self.layout)

    def warnings(self) -> list[str]:
        """The baseline file's own warnings (a damaged or unclosed file)."""
        return list(self.reader.warnings)

    def take_notices(self) -> list[tuple[str, str]]:
        """(severity, sentence) said since the last call: "information" for a step or hosts
        without a counterpart, "warning" when the ghost stopped."""
        out, self._notices = self._notices, []
        return out

    def _say(self, key: str, severity: str, text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self._notices.append((severity, text))

    def start_step(self, label: str, started: float, hosts: Sequence[str],
                   data: Mapping[str, object] | None = None) -> GhostRun | None:
        """A step of the session on screen started (``label`` as the engine gives it, its
        ``step_start`` event's ``data`` for the repeat): its ghost run, or None (said once)
        when the baseline has no such step. The same step again (a seek within it) keeps its
        run."""
        run = self.run
        if run is not None and run.label == label and run.started == started:
            return run
        self.run = None
        name, repeat = split_label(label, data or {})
        pairs = match_step(self.spec, self.layout, name, hosts)
        base = counterpart_run(self.layout, name, FLEET, repeat) if pairs else None
        if base is None:
            self._say(f"step:{name}", "information",
                      f"step {name} is not in the baseline {self.name}: no ghost for it")
            return None
        runs = [r for r in self.layout.runs if r.label == base.label]
        ends = [r.t1 for r in runs if r.t1 is not None]
        base_started = self.layout.step_started.get(base.label, base.t0)
        by_host = {h: b for (_s, h), (_bs, b) in pairs.items()}
        missing = [h for h in hosts if h not in by_host]
        if missing:
            self._say(f"hosts:{name}", "information",
                      f"step {name}: no baseline for {', '.join(missing[:8])}"
                      f"{', ...' if len(missing) > 8 else ''} in {self.name} (hosts are "
                      "matched by name; --baseline-host NAME compares with one host)")
        self.run = GhostRun(
            label, name, started, base.label, base_started,
            max(ends) if ends else self.reader.end, by_host,
            tuple(dict.fromkeys(r.host for r in runs)))
        return self.run

    # --- computing ---------------------------------------------------------------------------

    def want(self, now: float, window: float) -> None:
        """The console's clock is at ``now`` and its charts show ``window`` seconds: have
        the figures from ``now - window`` to a little past ``now`` computed (in the worker).
        Called on every refresh; costs a few comparisons when nothing is to be done."""
        run = self.run
        if run is None or run.error is not None or self.closed:
            return
        e = now - run.started
        load = run._load
        first = max(min(e - window, run.length), 0.0)
        if first < load.start - 1.0 or e > load.asked_to + JUMP:
            # a seek back before what was computed (or a longer window), or far ahead
            run.generation += 1
            load = run._load = _Load(start=first, done_to=first, asked_to=first)
        if load.asked_to >= min(e + AHEAD, run.length + 1.0):
            return  # asked for already (the worker may still be on it)
        if self._job is not None and not self._job.done():
            return
        load.asked_to = min(max(e, load.done_to) + 2 * AHEAD, run.length + 1.0)
        if self._executor is None:
            self._compute(run, load, load.asked_to)
        else:
            self._job = self._executor.submit(self._compute, run, load, load.asked_to)

    def wait(self, timeout: float = 30.0) -> None:
        """Until the stretch being computed is done (tests, benchmarks)."""
        job = self._job
        if job is not None:
            job.result(timeout)

    def _compute(self, run: GhostRun, load: _Load, to: float) -> None:
        """The worker: figures from where ``load`` is to ``to`` (step-elapsed seconds)."""
        started = time.thread_time()
        try:
            with self._lock:
                if self.closed:
                    return
                self._extend(run, load, to)
        except Exception as error:  # noqa: BLE001 - a damaged file or a bug: one sentence
            run.error = f"the baseline {self.name} cannot be read for step {run.step}: " \
                        f"{error}; going on without its ghost"
            self._say(f"error:{run.label}", "warning", run.error)
        self.cpu_seconds += time.thread_time() - started
        warnings = self.reader.warnings
        if warnings and run.error is None:
            self._say(f"damaged:{warnings[0]}", "warning",
                      f"the baseline {self.name}: {warnings[0]}; its ghost shows what can "
                      "be read")

    def _extend(self, run: GhostRun, load: _Load, to: float) -> None:
        to = min(to, run.length + 1.0)
        if to <= load.done_to:
            return
        if load.track is None and self._read_track(run, load, to):
            return
        self._compute_track(run, load, to)

    def _read_track(self, run: GhostRun, load: _Load, to: float) -> bool:
        """Figures up to ``to`` from the file's figure track, as far as it goes: True when
        all of them came from it."""
        track = self.reader.figure_track
        if track is None or track.digest != self.digest.name or track.until is None:
            return False
        base0 = run.base_started
        # a closed file's track is whole; a file cut short may have lost the ticks of its
        # last segment, a little earlier than those of the last one kept
        upto = to if self.reader.complete else min(to, track.until - base0 - _TRACK_SLACK)
        if upto <= load.done_to:
            return False
        ticks = track.ticks(base0 + load.done_to, base0 + upto)
        if ticks is None:  # a damaged frame: computed from the samples instead
            return False
        points = load.points
        for t, host, figures in ticks:
            if run._load is not load or self.closed:
                return True  # started over meanwhile
            self._keep(points, FLEET if host == FLEET_HOST else host, t - base0, figures)
        load.done_to = upto
        self.figures_read += len(ticks)
        return upto >= to

    def _compute_track(self, run: GhostRun, load: _Load, to: float) -> None:
        """Figures up to ``to`` computed from the run's samples (``FigureTrack``)."""
        base0 = run.base_started
        points = load.points

        def keep(host: str | None, t: float, figures: Iterable[tuple[Key, float]]) -> None:
            self._keep(points, FLEET if host is None else host, t - base0, figures)

        if load.track is None:
            load.track = FigureTrack(self.digest, base0, keep, start=base0 + load.done_to)
            read_from = max(load.done_to - LEAD, 0.0)
        else:
            read_from = load.done_to
        track = load.track
        hosts, reads = set(run.hosts), track.reads

        def wanted(d: SeriesDef) -> bool:
            return d.kind == INTERVAL and d.host in hosts and reads(d.metric, dict(d.labels))

        for t, batch in self.reader.sample_batches(base0 + read_from, base0 + to, wanted):
            if run._load is not load or self.closed:
                return  # started over meanwhile
            groups: dict[str, list[Sample]] = {}
            newest: dict[str, float] = {}
            for s in batch:
                if s.t is None:
                    s.t = t
                if s.histogram is not None:
                    s.histogram = _with_running_sums(s.histogram)
                groups.setdefault(s.host, []).append(s)
                if s.t > newest.get(s.host, -math.inf):
                    newest[s.host] = s.t
            for host, samples in groups.items():
                track.add(host, samples, newest[host])
            self.figures_computed += len(groups)
            load.done_to = max(load.done_to, min(t - base0, to))
        load.done_to = max(load.done_to, to)

    @staticmethod
    def _keep(points: dict[tuple[str, Key], Points], host: str, e: float,
              figures: Iterable[tuple[Key, float]]) -> None:
        for key, value in figures:
            p = points.get((host, key))
            if p is None:
                p = points[(host, key)] = Points()
            if not p.elapsed or e > p.elapsed[-1]:
                p.add(e, value)


#: Bucket key lists seen, by their keys: a histogram whose buckets are those of one seen
#: before shares its list, so that the union of a host's jobs' lists is made once per set
#: (``model.histogram._union`` keeps them by identity, as it does the parsers' lists).
_KEY_LISTS: dict[tuple[int, ...], Sequence[int]] = {}


def _with_running_sums(histogram: LatencyHistogram) -> LatencyHistogram:
    """A recorded histogram as one holding running sums (what the parsers' hold): the
    console's quantiles of merged histograms then take a binary search over them rather
    than merging the histograms (``model.histogram.merged_quantiles``)."""
    if not isinstance(histogram, RecordedHistogram):
        return histogram
    made = histogram.with_running_sums()
    sums = made.running_sums()
    if sums is None:
        return made
    keys, cum = sums
    ident = tuple(keys)
    known = _KEY_LISTS.get(ident)
    if known is None:
        if len(_KEY_LISTS) >= 4096:
            _KEY_LISTS.clear()
        known = _KEY_LISTS[ident] = keys
    return made if known is keys else RunningSumsHistogram(known, cum)


def open_baseline(text: str, digest: Digest, *, baseline_host: str | None = None,
                  threaded: bool = True,
                  check: Callable[[BaselineSeries], object] | None = None
                  ) -> tuple[BaselineSeries | None, list[str]]:
    """``BaselineSeries.open`` and ``check`` (the plan's or the session's matching), for a
    console that goes on without a ghost when either fails: (the baseline or None, the
    sentences to show: why there is none, or the file's warnings)."""
    try:
        baseline = BaselineSeries.open(text, digest, baseline_host=baseline_host,
                                       threaded=threaded)
    except RecordingError as error:  # its sentence names the file
        return None, [f"the baseline {error}; going on without a baseline"]
    except BenchtuiError as error:
        return None, [f"--baseline {text}: {error}; going on without a baseline"]
    try:
        if check is not None:
            check(baseline)
    except CompareError as error:
        baseline.close()
        return None, [f"{error}; going on without a baseline"]
    return baseline, [f"the baseline {baseline.name}: {w}" for w in baseline.warnings()]
