"""The synthetic times of an import, and the records a live session would have had at them
(docs/import.md, "Times (no live timing)").

The steps follow one another in the order the outputs first name them, each starting
``STEP_GAP`` after the whole second at or after the previous one's end, the first at the
import's start time (a whole second); each runs on all its hosts at once, and lasts as long
as its longest run. A run lasts as long as its output says (the largest ``elapsed`` of its
samples: fio's ``run=60039msec``, the last interval's second; or the span of the clock times
the tool printed), else ``DEFAULT_SPAN``. A sample is placed at its slot's start plus its
``elapsed``, or plus its clock time's offset from the run's first one; one with neither (an
end-of-run figure with no run time) at its run's end. The raw text and ``run_end`` come at
the run's end, ``step_end`` at the slot's end.

The records are made a step at a time and in time order (at one time, in the order a live
session has them: the step's start, then each run's records in the order of the runs), and
a run's samples are read from its store (``import_store``) as they are written: an import
never holds more than a chunk of each run of the step it writes. A run's samples come sorted
by their place in time (ties in the order the parsers gave them), from the stretches of them
already in that order (a run of a file holding two fio runs has a few; a clock that went
back in an iostat log, two) merged as they are read.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from itertools import islice, pairwise
from typing import Final

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.format import plural
from benchtui.model.sample import Sample
from benchtui.plan.commands import STEP
from benchtui.session.import_parse import ImportedRun, Streams
from benchtui.store.recording import Record
from benchtui.store.recording.outputfilter import JsonOutputFilter

#: How long a run lasts when its output does not say (seconds).
DEFAULT_SPAN: Final = 10.0
#: Seconds between one step's end and the next one's start.
STEP_GAP: Final = 1.0
#: Stretches of a run's samples merged as they are read; a run with more (samples in no
#: order at all) is sorted whole.
_MERGED: Final = 64

Timed = tuple[float, Record]


class Timeline:
    """The import's steps, placed (the module's doc); ``records`` makes their records."""

    def __init__(self, t0: float, runs: list[ImportedRun], streams: Streams) -> None:
        self.t0 = t0
        #: the time of the last record, once ``records`` has been read to its end
        self.end = t0
        self._streams = streams
        # dicts, not list membership: 10^5 steps must not cost 10^10 comparisons
        self.hosts = list(dict.fromkeys(r.host for r in runs))
        self._by_step: dict[str, list[ImportedRun]] = {}
        for r in runs:
            self._by_step.setdefault(r.step, []).append(r)
        self.steps = list(self._by_step)
        self.samples = sum(r.samples.count for r in runs)
        self.warnings = sum(len(r.warnings) for r in runs)

    def records(self, started: str) -> Iterator[Timed]:
        """Every record, in time order, made a step at a time. Read once: each step's runs
        are let go of once its records are made."""
        t = self.t0
        for host in self.hosts:
            yield t, _event(t, ev.HOST_STATE, f"{host}: up (imported)", host=host, state="up")
        yield t, _event(t, ev.SESSION_START, started, imported=True)
        self.end = t
        for index, step in enumerate(self.steps):
            runs = self._by_step.pop(step)
            placed = [_Placed(run, self._streams) for run in runs]
            yield from self._step(index, step, t, placed)
            self.end = t + max(p.span for p in placed)
            t = math.ceil(self.end) + STEP_GAP  # the next step starts on a whole second
        yield self.end, _event(self.end, ev.SESSION_END, "done")

    def _step(self, index: int, step: str, t0: float, placed: list[_Placed]
              ) -> Iterator[Timed]:
        seconds = max(p.span for p in placed)
        runs = [p.run for p in placed]
        yield t0, _event(t0, ev.STEP_START, f"step {step} on {', '.join(r.host for r in runs)}",
                         step=step, hosts=[r.host for r in runs], tool=runs[0].tools[0],
                         expected_seconds=seconds, index=index, repeat=1, repeats=1,
                         select="all", sweep=None, matrix={})
        json_lines = JsonOutputFilter()  # (a stream per host: the runs' order is theirs)
        merged = heapq.merge(*(((t, k, r) for t, r in p.records(t0, json_lines))
                               for k, p in enumerate(placed)), key=lambda x: x[:2])
        for t, _k, record in merged:
            yield t, record
        yield t0 + seconds, _event(t0 + seconds, ev.STEP_END, f"step {step} done in "
                                   f"{seconds:.1f} s (imported)", step=step, seconds=seconds)


def _stream_of(seen: tuple[int, str | None]) -> int:
    return seen[0]


def _event(t: float, kind: str, message: str, *, host: str | None = None,
           step: str | None = None, **data: object) -> Event:
    return Event(t, kind, message, ev.INFO, host, step, data)


class _Placed:
    """A run placed in its step's slot: its span, and its records (``records``)."""

    def __init__(self, run: ImportedRun, streams: Streams) -> None:
        self.run = run
        self._streams = streams
        self.first = run.first_clock if run.first_clock is not None else 0.0
        ends = [e for e in (run.most_elapsed, None if run.last_clock is None else
                            run.last_clock - self.first) if e is not None]
        self.span = max(ends, default=0.0) or DEFAULT_SPAN
        self._labels: dict[tuple[int, str | None], str | None] = {}
        self._stretches: list[int] = []  # where each stretch of ordered samples starts
        self._from_parsing()

    def _offset(self, s: Sample) -> float:
        if s.elapsed is not None:
            return max(s.elapsed, 0.0)
        return self.span if s.t is None else s.t - self.first

    def _from_parsing(self) -> None:
        """What the run's parsing noted: the run label each (stream, label) gets (runs
        numbered again within the run: the first keeps its stream's first label, fio's
        none; the k-th ``run="k"``), and where its stretches of samples in time order start
        (the store gives the streams' samples one stream after the other)."""
        names, run = self._streams.names, self.run
        per_tool: dict[str, int] = {}
        for stream, label in sorted(run.labels_seen, key=_stream_of):  # (a stable sort)
            source, parser = names[stream]
            rank = per_tool[parser] = per_tool.get(parser, 0) + 1
            self._labels[(stream, label)] = run.first_run[(source, parser)] if rank == 1 \
                else str(rank)
        base = 0
        for stream in sorted(run.stretches):
            self._stretches += [base + n for n in run.stretches[stream]]
            base += run.samples.stream_count(stream)

    def _sorted(self) -> Iterator[tuple[float, Sample]]:
        """(offset, sample) of every sample, by offset; ties in the order they were given."""
        store, starts = self.run.samples, self._stretches
        if len(starts) <= 1:
            for stream, s in store:
                yield self._offset(s), self._labelled(stream, s)
            return
        if len(starts) > _MERGED:
            found = [(self._offset(s), i, stream, s) for i, (stream, s) in enumerate(store)]
            found.sort(key=lambda x: x[:2])
            for offset, _i, stream, s in found:
                yield offset, self._labelled(stream, s)
            return
        bounds = [*starts, store.count]
        parts = [((self._offset(s), i, stream, s) for i, (stream, s) in
                  enumerate(islice(store.iter_from(a), b - a), a))
                 for a, b in pairwise(bounds)]
        for offset, _i, stream, s in heapq.merge(*parts, key=lambda x: x[:2]):
            yield offset, self._labelled(stream, s)

    def _labelled(self, stream: int, s: Sample) -> Sample:
        """``s`` with its run label numbered within the run and its ``step`` label, as the
        engine labels a sample."""
        label = self._labels[(stream, s.labels.get("run"))]
        labels = {k: v for k, v in s.labels.items() if k != "run"}
        if label is not None:
            labels["run"] = label
        labels["step"] = self.run.step
        s.labels = labels
        return s

    def records(self, t0: float, json_lines: JsonOutputFilter) -> Iterator[Timed]:
        """The run's records in its step's slot from ``t0``, by (time, order made): its
        host running and started, its parse warnings, its samples before its end, its raw
        text, its samples at its end, its end and its host done."""
        run, end = self.run, t0 + self.span
        host, step = run.host, run.step
        tools = "+".join(run.tools)
        where = f"{run.source}:{run.line}" if run.line else run.source
        yield t0, _event(t0, ev.HOST_STATE, f"{host}: running", host=host, state="running")
        yield t0, _event(t0, ev.RUN_START, f"{host}: {tools} imported from {where}",
                         host=host, step=step, source=run.source, line=run.line)
        for w in run.warnings:
            yield t0, Event(t0, ev.PARSE_WARNING, str(w), ev.WARNING, host, step)
        batches = self._batches(t0)
        at_end: list[Timed] = []
        for t, batch in batches:
            if t >= end:
                at_end.append((t, batch))
                break
            yield t, batch
        dropped = json_lines.dropped
        for k, lines in enumerate(run.text.chunks()):
            out = json_lines(OutputLines(end, host, step, tools, STEP, tuple(lines)))
            if out is None or (k and json_lines.dropped > dropped
                               and not any(line.strip() for line in out.lines)):
                continue  # (blank lines between a JSON tool's documents, as in one chunk)
            yield out.t, out
        yield from at_end
        yield from batches
        yield end, _event(end, ev.RUN_END, f"{host}: {tools} imported, "
                          f"{plural(run.samples.count, 'sample')}", host=host, step=step,
                          status=0)
        yield end, _event(end, ev.HOST_STATE, f"{host}: done", host=host, state="done")

    def _batches(self, t0: float) -> Iterator[tuple[float, list[Sample]]]:
        """The samples at their times, one batch per time (a sink call's)."""
        batch: list[Sample] = []
        at = t0
        for offset, s in self._sorted():
            t = t0 + offset
            if batch and t != at:
                yield at, batch
                batch = []
            at = s.t = t
            batch.append(s)
        if batch:
            yield at, batch

