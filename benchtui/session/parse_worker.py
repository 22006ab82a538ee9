"""A parser worker process: runs' output bytes in, their samples out.

The session's main process keeps SSH, the intake and the sinks; with parse workers on
(``parse_pool.ParsePool``) it sends each run's chunks, in order, to the one worker that
holds that run's parser (``ingest.RunIngest``, the same as in process: fio json+'s parser
keeps state across documents) and gets back what each chunk completed. This module is both
sides' protocol and the worker's loop; the worker is ``python -m
benchtui.session.parse_worker`` of the same interpreter (an installed package works as the
checkout does: nothing but ``benchtui`` is imported).

The wire: the worker reads its standard input, the main process its standard output.

* An order: ``ORDER`` (kind, run number, the chunk's end offset, the time it arrived, the
  payload's length) and the payload: ``OPEN`` (a pickled ``(parser name, host, source,
  histogram bits, offset)``: a new run, or a run resumed at that byte; its histograms are
  sent at the session's resolution, as ``Sinks.deliver`` would make them), ``FEED`` (a
  chunk's bytes), ``REPLAY`` (bytes already parsed once, fed again to a resumed run's new
  parser: nothing is answered, its samples and warnings were delivered before), ``FINISH``
  (the output's end), ``CLOSE`` (the run is done with).
* An answer to each ``FEED`` and ``FINISH``, in order: its length (``LENGTH``) and a pickled
  ``Answer`` (``answer_frame``: the samples as tuples of their fields, chosen by
  measurement, ``benchmarks/parse_wire.py``: a 32-job document's ~670 samples in about a
  tenth of the time it takes to parse them, each way).

An exception a parser raises (none should: ``parsers.base``) is answered, and raised in the
run's follower as it would be in process; the worker goes on. The worker ignores SIGINT and
SIGHUP (a Ctrl-C or a hangup of the terminal is its main process's to handle) and ends when
its standard input does (the main process closed it, or is gone). Its garbage collector runs
under the controller's policy (``gc_policy``), as its main process's does.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import signal
import struct
import time
from dataclasses import dataclass, field, fields
from itertools import starmap
from operator import attrgetter
from typing import BinaryIO, Final

from benchtui import gc_policy
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers.base import ParseWarning
from benchtui.session.ingest import RunIngest
from benchtui.transport.base import Chunk

#: An order's header: kind, run number, the chunk's end offset, arrival time, payload length.
ORDER: Final = struct.Struct("!BIqdI")
#: An answer's header: the pickled answer's length.
LENGTH: Final = struct.Struct("!I")

#: Bytes each pipe to and from the worker holds (``F_SETPIPE_SZ``; Linux's limit for a user:
#: /proc/sys/fs/pipe-max-size, 1 MiB by default; left as they are where it refuses).
PIPE_BYTES: Final = 1 << 20
F_SETPIPE_SZ: Final = getattr(fcntl, "F_SETPIPE_SZ", 1031)

#: Bytes of orders read at a time at most.
READ_BYTES: Final = 1 << 20
#: Seconds an answer may wait for the others of its batch.
FLUSH: Final = 0.01

OPEN: Final = 1
FEED: Final = 2
REPLAY: Final = 3
FINISH: Final = 4
CLOSE: Final = 5


@dataclass(slots=True)
class Answer:
    """What one ``FEED`` or ``FINISH`` of run ``run`` completed."""

    run: int
    samples: list[Sample] = field(default_factory=list)
    #: Some text arrived (``ingest.Ingested.text``).
    text: bool = False
    #: The parser's new warnings (all of them: the main process counts and cuts them).
    warnings: list[ParseWarning] = field(default_factory=list)
    #: The run's lines cut for their length so far, and the bytes they dropped.
    cut_lines: int = 0
    dropped_bytes: int = 0
    #: What the parser (or the line cutter) raised.
    error: BaseException | None = None
    #: The first samples of a resumed run's new parser, which had no document before them
    #: (a fio json+ run's are averages since its jobs' start, not the interval's).
    first: bool = False


def order(kind: int, run: int, payload: bytes = b"", *, offset: int = 0,
          t: float = 0.0) -> bytes:
    """One order, framed."""
    return ORDER.pack(kind, run, offset, t, len(payload)) + payload


def answer_frame(answer: Answer) -> bytes:
    """One answer, framed: pickled, its samples as tuples of their fields (half the cost
    of pickling ``Sample`` objects either way: ``benchmarks/parse_wire.py``)."""
    samples = list(map(_AS_TUPLE, answer.samples))
    wire = (answer.run, samples, answer.text, answer.warnings, answer.cut_lines,
            answer.dropped_bytes, answer.error, answer.first)
    try:
        data = pickle.dumps(wire, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 (an exception that does not pickle: its words)
        wire = (*wire[:6], RuntimeError(str(answer.error)), answer.first)
        data = pickle.dumps(wire, protocol=pickle.HIGHEST_PROTOCOL)
    return LENGTH.pack(len(data)) + data


def read_answer(data: bytes) -> Answer:
    """An answer from its frame's bytes (after ``LENGTH``)."""
    run, samples, text, warnings, cut, dropped, error, first = pickle.loads(data)
    return Answer(run, list(starmap(Sample, samples)), text, warnings, cut, dropped, error,
                  first)


#: A sample's fields as a tuple, in the order ``Sample`` takes them.
_AS_TUPLE: Final = attrgetter(*(f.name for f in fields(Sample)))


class Worker:
    """The runs of one worker process, each with its ``RunIngest``."""

    def __init__(self) -> None:
        self.runs: dict[int, RunIngest] = {}
        #: Resumed runs whose new parser gave no samples yet.
        self.fresh: set[int] = set()
        #: Each run's histogram resolution (the session's: ``Sinks`` finds nothing to do).
        self.bits: dict[int, int] = {}
        #: Runs whose parser could not be made: what that raised, answered to each order.
        self.broken: dict[int, BaseException] = {}

    def take(self, kind: int, run: int, offset: int, t: float, payload: bytes) -> Answer | None:
        """Do one order; its answer (None for those answered by nothing)."""
        if kind == OPEN:
            try:
                self._open(run, payload)
            except Exception as exc:  # noqa: BLE001 (said with the run's first answer)
                self.broken[run] = exc
            return None
        if kind == CLOSE:
            self.runs.pop(run, None)
            self.fresh.discard(run)
            self.broken.pop(run, None)
            self.bits.pop(run, None)
            return None
        if run in self.broken:
            return None if kind == REPLAY else Answer(run, error=self.broken[run])
        ingest = self.runs[run]
        out = Answer(run)
        try:
            if kind == FINISH:
                got = ingest.finish(t)
            else:
                got = ingest.feed(Chunk(offset, payload), t)
            out.samples, out.text = got.samples, got.text
            bits = self.bits[run]
            for sample in got.samples:
                if sample.histogram is not None:
                    sample.histogram = sample.histogram.coarsened(bits)
        except Exception as exc:  # noqa: BLE001 (raised in the run's follower, as in process)
            out.error = exc
        out.warnings = list(ingest.parser.warnings)
        ingest.parser.warnings.clear()
        out.cut_lines, out.dropped_bytes = ingest.cut_lines, ingest.dropped_bytes
        if out.samples and run in self.fresh:
            self.fresh.discard(run)
            out.first = kind != REPLAY
        return None if kind == REPLAY else out

    def _open(self, run: int, payload: bytes) -> None:
        """A run's parser, new or resumed at a byte."""
        name, host, source, bits, start = pickle.loads(payload)
        self.bits[run] = bits
        parser = registry.all_parsers()[name](host=host, source=source)
        parser.stream = True
        parser.histogram_bits = bits  # (its histograms made that coarse)
        # (a resumed run: its bytes go on from ``start``)
        self.runs[run] = RunIngest(parser, lines_wanted=False, start=start)
        if start:
            self.fresh.add(run)


def serve(orders: int, answers: BinaryIO) -> None:
    """Take orders from file descriptor ``orders`` until it ends: as many as a read brings
    at a time, their answers written together once those orders are done or ``FLUSH`` s
    after the first of them was made (one wake-up of the main process per batch, not per
    chunk; a long batch still sends its first answers soon)."""
    worker = Worker()
    buffer = bytearray()
    out: list[bytes] = []
    first = 0.0
    while True:
        data = os.read(orders, READ_BYTES)
        if not data:
            return
        buffer += data
        pos, end = 0, len(buffer)
        while end - pos >= ORDER.size:
            kind, run, offset, t, size = ORDER.unpack_from(buffer, pos)
            if end - pos - ORDER.size < size:
                break
            start = pos + ORDER.size
            payload = bytes(buffer[start:start + size])
            pos = start + size
            answer = worker.take(kind, run, offset, t, payload)
            if answer is not None:
                if not out:
                    first = time.monotonic()
                out.append(answer_frame(answer))
                if time.monotonic() - first >= FLUSH:
                    answers.write(b"".join(out))
                    answers.flush()
                    out.clear()
        del buffer[:pos]
        if out:
            answers.write(b"".join(out))
            answers.flush()
            out.clear()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    for fd in (0, 1):  # (64 KiB by default: a 32-job document would wake us every 64 KiB)
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
    # The answers go to the standard output as it was; anything printed goes to stderr.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    with gc_policy.controller(), contextlib.suppress(BrokenPipeError):  # (the main is gone)
        gc_policy.freeze()  # (its start-up heap: what it imported)
        serve(0, answers)

