"""``benchtui dump SESSION`` and ``benchtui info SESSION``: a recorded session, read by people
and by other programs.

``dump`` prints the recorded samples as JSON Lines or CSV (the writers ``benchtui parse`` uses,
so the schema is docs/SAMPLES.md) or as OpenMetrics text for ``promtool tsdb
create-blocks-from openmetrics``; ``--host``, ``--metric``, ``--from`` and ``--to`` narrow it.
``info`` describes the file: plan, hosts, steps, duration, size, counts, gaps and the warnings
of a damaged or truncated file. Both print the reader's warnings on stderr and exit 1 when the
file cannot be read as a session (one sentence, from ``RecordingError``), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TextIO

import orjson

from benchtui.errors import UsageError
from benchtui.export.formats import writer_for
from benchtui.export.labels import matrix_of_events
from benchtui.model import events as ev
from benchtui.model.fio_buckets import FIO_PLAT_BITS, relative_error
from benchtui.model.format import escape_control, plural
from benchtui.model.sample import HISTOGRAM_METRIC, Sample
from benchtui.session.replay import (
    TimelineStep,
    monitored_hosts,
    parse_position,
    real_gaps,
    steps_from_events,
)
from benchtui.store.recording import RECORDED, Gap, SessionReader

#: Samples handed to a writer at once.
BATCH = 5000
#: Gaps listed one by one by ``info`` before they are only counted.
MAX_GAPS_SHOWN = 20


def _open(path: str) -> SessionReader:
    reader = SessionReader.open(path)
    for warning in reader.warnings:
        print(f"benchtui: warning: {warning}", file=sys.stderr)
    return reader


def _time_bound(option: str, text: str | None, reader: SessionReader) -> float | None:
    if text is None:
        return None
    try:
        return parse_position(text, reader.start, reader.end)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def _batches(samples: Iterable[Sample]) -> Iterator[list[Sample]]:
    it = iter(samples)
    while batch := list(islice(it, BATCH)):
        yield batch


def run_dump(args: argparse.Namespace) -> int:
    if args.histograms and args.format == "csv":
        raise UsageError("--histograms needs --format jsonl or openmetrics "
                         "(a histogram does not fit in a CSV row)")
    with _open(args.session) as reader:
        opened = len(reader.warnings)
        t0 = _time_bound("--from", args.from_, reader)
        t1 = _time_bound("--to", args.to, reader)
        if t0 is not None and t1 is not None and t1 <= t0:
            raise UsageError("--to must be later than --from")
        unknown = sorted(set(args.host or ()) - set(reader.meta.hosts))
        if unknown and reader.meta.hosts:
            raise UsageError(f"no host {', '.join(unknown)} in {args.session}; its hosts are "
                             f"{', '.join(reader.meta.hosts)}")
        metrics = set(args.metric) if args.metric else None
        if metrics is not None and args.histograms:
            metrics.add(HISTOGRAM_METRIC)
        samples = reader.samples(hosts=args.host, metrics=metrics, t0=t0, t1=t1)
        out = sys.stdout
        if args.format == "openmetrics":
            events = reader.events()
            # The session's health series describe every host: only for a whole dump.
            health = (reader.meta.name, events, t0, t1) \
                if not args.host and not args.metric else None
            written = _dump_openmetrics(samples, out, histograms=args.histograms,
                                        matrix=matrix_of_events(events), health=health)
        else:
            writer = writer_for(args.format, out, histograms=args.histograms)
            written = sum(writer.write(batch) for batch in _batches(samples))
        out.flush()
        for warning in reader.warnings[opened:]:  # damage met while reading the frames
            print(f"benchtui: warning: {warning}", file=sys.stderr)
        damaged = any("damaged" in w for w in reader.warnings)
    unfiltered = not (args.host or args.metric or args.from_ or args.to)
    if written == 0 and damaged and unfiltered and reader.sample_count:
        print(f"benchtui: no sample of {args.session} could be read: the file is damaged "
              f"(the warnings above say where; its index counts {reader.sample_count})",
              file=sys.stderr)
        return 1
    if written == 0:
        print(f"benchtui: no recorded sample in {args.session} matches "
              f"{_describe_filter(args)}", file=sys.stderr)
        return 1
    return 0


def _dump_openmetrics(samples: Iterable[Sample], out: TextIO, *, histograms: bool,
                      matrix: dict[str, dict[str, str]],
                      health: tuple[str, list[ev.Event], float | None, float | None] | None
                      ) -> int:
    from benchtui.export.openmetrics import OpenMetricsWriter

    with OpenMetricsWriter(out, matrix=matrix) as writer:
        for batch in _batches(samples):
            writer.write(s for s in batch if histograms or s.histogram is None)
        if health is not None:
            name, events, t0, t1 = health
            writer.add_health(name, events, t0=t0, t1=t1)
    for reason, n in sorted(writer.skipped.items()):
        print(f"benchtui: note: {n} samples left out of the OpenMetrics output ({reason})",
              file=sys.stderr)
    return writer.written


def _describe_filter(args: argparse.Namespace) -> str:
    parts = []
    if args.host:
        parts.append("host " + "/".join(args.host))
    if args.metric:
        parts.append("metric " + "/".join(args.metric))
    if args.from_:
        parts.append(f"from {args.from_}")
    if args.to:
        parts.append(f"to {args.to}")
    return ", ".join(parts) if parts else "(the file holds no samples)"


# --- info -------------------------------------------------------------------------------------


@dataclass(slots=True)
class SessionInfo:
    """Everything ``info`` tells about a session file (``--json`` prints it as is)."""

    path: str
    name: str
    session_id: str
    schema_version: int
    writer: str
    plan_path: str | None
    plan: str
    started: float
    ended: float | None
    complete: bool
    start: float
    end: float
    size_bytes: int
    sample_count: int
    event_count: int
    event_warnings: int
    event_errors: int
    hosts: dict[str, str]
    facts: dict[str, dict[str, object]]
    steps: list[TimelineStep]
    gaps: list[Gap]
    warnings: list[str]
    marks: list[tuple[float, str]]  # (time, note) of the users' marks
    #: Sub-bucket bits per power of two the latency histograms were kept at (6: fio's own);
    #: None for a file that does not say (fio's own).
    histogram_bits: int | None = None
    #: "recorded", or "imported" (benchtui import: made from saved output, no live timing).
    source: str = RECORDED
    #: An imported session's files ({"path", "bytes", "sha256"}) and its map (with "text").
    imported_from: list[dict[str, object]] = field(default_factory=list)
    import_map: dict[str, object] | None = None
    #: The figure track's figures ("ghost/2": the console's, per second, for a later run's
    #: ghost); None: the file has none (a ghost computes them from the samples).
    figures: str | None = None
    #: The time of the figure track's last tick (None: it has none).
    figures_until: float | None = None
    #: How the session ended (``events.OUTCOMES``) and why, from its ``session_end``; None:
    #: the recording holds no end (it was cut short, or the session did not start).
    outcome: str | None = None
    reason: str = ""
    #: What was read to tell this: "index" (a closed file: its index only, the frames' data
    #: not read), "frames" (no usable index: every frame header was walked) or "every frame"
    #: (``--verify``: every frame read and decoded).
    checked: str = "index"
    #: With ``--verify``: the samples that could be read (``sample_count`` is the index's).
    readable_samples: int | None = None

    @property
    def duration_seconds(self) -> float:
        return self.end - self.start

    def to_dict(self) -> dict[str, object]:
        out = {k: getattr(self, k) for k in self.__slots__}
        out["duration_seconds"] = self.duration_seconds
        out["steps"] = [{"name": s.name, "start": s.t0, "end": s.t1, "ok": s.ok,
                         "outcome": s.outcome, "reason": s.reason,
                         "silences": [{"host": h, "tool": tool, "seconds": seconds}
                                      for h, tool, seconds in s.silences],
                         "seconds": None if s.t1 is None else s.t1 - s.t0} for s in self.steps]
        out["gaps"] = [{"host": g.host, "start": g.t0, "end": g.t1, "seconds": g.seconds}
                       for g in self.gaps]
        out["marks"] = [{"t": t, "note": note} for t, note in self.marks]
        return out


def session_info(reader: SessionReader, *, verify: bool = False) -> SessionInfo:
    """What ``info`` tells; with ``verify`` every frame is read first (its damage joins the
    warnings), else a closed file is described from its index alone."""
    readable = reader.verify() if verify else None
    meta = reader.meta
    events = sorted(reader.events(), key=lambda e: e.t)
    end = next((e for e in reversed(events) if e.kind == ev.SESSION_END), None)
    gaps = real_gaps(reader.gaps(), events, end=reader.end,
                     monitored=monitored_hosts(meta.plan_text, meta.hosts))
    return SessionInfo(
        path=reader.path, name=meta.name, session_id=meta.session_id,
        schema_version=meta.schema_version, writer=meta.writer, plan_path=meta.plan_path,
        plan=meta.plan_text, histogram_bits=meta.histogram_bits, started=meta.started,
        ended=meta.ended, complete=reader.complete,
        start=reader.start, end=reader.end, size_bytes=reader.size_bytes,
        sample_count=reader.sample_count, event_count=reader.event_count,
        event_warnings=sum(1 for e in events if e.level == ev.WARNING),
        event_errors=sum(1 for e in events if e.level == ev.ERROR),
        hosts={h: _host_line(meta.facts.get(h, {})) for h in meta.hosts},
        facts=meta.facts, steps=steps_from_events(events), gaps=gaps,
        warnings=list(reader.warnings),
        marks=[(e.t, str(e.data.get("note", ""))) for e in events if e.kind == ev.MARK],
        source=meta.source, imported_from=meta.imported_from, import_map=meta.import_map,
        figures=meta.figures, figures_until=_track_end(reader),
        outcome=None if end is None else ev.outcome_of(end),
        reason="" if end is None else ev.reason_of(end),
        checked="every frame" if verify else "index" if reader.complete else "frames",
        readable_samples=readable)


def _track_end(reader: SessionReader) -> float | None:
    track = reader.figure_track
    return None if track is None else track.until


def _host_line(facts: dict[str, object]) -> str:
    """A host's facts in a few words: OS, kernel, CPUs, memory."""
    parts = []
    if facts.get("os"):
        parts.append(str(facts["os"]))
    if facts.get("kernel"):
        parts.append(f"kernel {facts['kernel']}")
    cpus = facts.get("cpu_count")
    if isinstance(cpus, int):
        parts.append(f"{cpus} x {facts.get('cpu_model') or 'CPU'}")
    mem = facts.get("mem_bytes")
    if isinstance(mem, int | float):
        parts.append(f"{mem / 2**30:.1f} GiB RAM")
    return ", ".join(parts)


def _precision(bits: int | None) -> str:
    """How precise the recorded latency histograms are, in words."""
    if bits is None or bits >= FIO_PLAT_BITS:
        return (f"latency histograms at fio's own resolution ({FIO_PLAT_BITS} bits: "
                f"{1 << FIO_PLAT_BITS} buckets per power of two)")
    return (f"latency histograms at {bits} bits: {1 << bits} buckets per power of two, "
            f"percentiles within {relative_error(bits):.1%} of fio's")


def _figures(info: SessionInfo) -> str:
    """Whether the file holds the console's figures (its figure track), in words."""
    if info.figures is None:
        return ("no figure track: a --baseline ghost of this session computes its figures "
                "from the samples")
    if info.figures_until is None and not info.complete:
        return (f"figure track ({info.figures}) not in the file: the recording stopped before "
                "its first segment (a minute) was sealed, and the track is written a segment "
                "at a time (a kill -9, a crash or a full disk): a --baseline ghost of this "
                "session computes its figures from the samples")
    if info.figures_until is None:
        return f"figure track ({info.figures}), empty: no step had interval samples"
    cut = "" if info.complete or info.figures_until >= info.end - 1.0 else (
        f" up to +{_span(info.figures_until - info.start)} (the recording was not closed: the "
        "track ends with its last whole segment, past it a ghost computes them)")
    return (f"the console's figures per second ({info.figures}){cut}: a --baseline ghost of "
            "this session reads them")


def _clock(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(t))


def _span(seconds: float) -> str:
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s" if m else f"{seconds:.1f}s"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def run_info(args: argparse.Namespace) -> int:
    with _open(args.session) as reader:
        opened = len(reader.warnings)
        info = session_info(reader, verify=args.verify)
        for warning in reader.warnings[opened:]:  # what only reading every frame found
            print(f"benchtui: warning: {warning}", file=sys.stderr)
    if args.json:
        sys.stdout.write(orjson.dumps(info.to_dict(), option=orjson.OPT_INDENT_2).decode()
                         + "\n")
    else:
        sys.stdout.write(format_info(info))
    if args.verify and (info.warnings or info.readable_samples != info.sample_count):
        return 1
    return 0


def format_info(info: SessionInfo) -> str:
    """The text ``info`` prints: a few labelled lines, then the plan as recorded."""
    start = info.start
    imported = info.source != RECORDED
    lines = [
        f"session   {info.name} ({info.path})",
        f"format    schema {info.schema_version}, written by benchtui {info.writer or '?'}"
        + ("" if info.complete else "; NOT closed (the recorder stopped early)"),
        f"plan      {info.plan_path or ('(none)' if imported else '(no path recorded)')}",
        *(_imported(info) if imported else []),
        f"precision {_precision(info.histogram_bits)}",
        f"figures   {_figures(info)}",
        f"time      {_clock(start)} .. {_clock(info.end)} ({_span(info.duration_seconds)})",
        f"size      {_size(info.size_bytes)}, {plural(info.sample_count, 'sample')}, "
        f"{plural(info.event_count, 'event')} ({plural(info.event_warnings, 'warning')}, "
        f"{plural(info.event_errors, 'error')})",
        f"checked   {_checked(info)}",
        f"hosts     {len(info.hosts)}",
        *(f"  {h}{': ' + line if line else ''}" for h, line in info.hosts.items()),
        f"ended     {_session_end(info)}",
        f"steps     {len(info.steps)}",
    ]
    for step in info.steps:
        lines.append(f"  {step.name}: at +{_span(step.t0 - start)}, {_how_it_ended(step)}")
    lines.append(f"gaps      {len(info.gaps) or 'none'}")
    lines.extend(f"  {g.host}: no sample for {_span(g.seconds)} from +{_span(g.t0 - start)} "
                 f"({_clock(g.t0)})" for g in info.gaps[:MAX_GAPS_SHOWN])
    if len(info.gaps) > MAX_GAPS_SHOWN:
        lines.append(f"  ... and {len(info.gaps) - MAX_GAPS_SHOWN} more (see --json)")
    if info.marks:
        lines.append(f"marks     {len(info.marks)}")
        lines.extend(f"  +{_span(t - start)} ({_clock(t)}){': ' + note if note else ''}"
                     for t, note in info.marks)
    lines.extend(f"warning   {w}" for w in info.warnings)
    if info.plan.strip():
        lines.extend(["", "plan as recorded:"])
        lines.extend(f"  {line}" for line in info.plan.rstrip().splitlines())
    map_text = (info.import_map or {}).get("text")
    if isinstance(map_text, str) and map_text.strip():
        lines.extend(["", "import map as used:"])
        lines.extend(f"  {line}" for line in map_text.rstrip().splitlines())
    # names from an old or foreign file may hold control characters: never print them raw
    return "\n".join(escape_control(line) for line in lines) + "\n"


def _checked(info: SessionInfo) -> str:
    """What the counts above were read from, in words: a plain ``info`` of a closed file
    trusts its index and does not read the data (``--verify`` does)."""
    if info.checked == "index":
        return ("the index only: the frames' data were not read (benchtui info --verify "
                "reads every frame)")
    if info.checked == "frames":
        return ("every frame header (the file has no usable index); benchtui info --verify "
                "also reads their data")
    readable = info.readable_samples or 0
    if readable == info.sample_count and not info.warnings:
        return f"every frame read: all {info.sample_count} samples intact"
    return (f"every frame read: DAMAGED, {readable} of {info.sample_count} samples can be "
            "read (the warnings below say where)")


def _session_end(info: SessionInfo) -> str:
    if info.outcome is None:
        return "no end recorded (the recording was cut short, or nothing was started)"
    if info.outcome == ev.COMPLETED:
        return "completed"
    return info.outcome.upper() + (f": {info.reason}" if info.reason else "")


def _how_it_ended(step: TimelineStep) -> str:
    """``12.8s, completed``, ``12.8s, INTERRUPTED: Ctrl-C (SIGINT)``, with the tools that
    fell silent: what ``info`` says of a run of a step."""
    if step.t1 is None:
        return "still running when the recording ended"
    outcome = step.outcome or ("completed" if step.ok else "failed")
    said = outcome if step.ok else outcome.upper() + (f": {step.reason}" if step.reason else "")
    silent = [f"{tool} on {host} printed nothing for {_span(seconds)}"
              for host, tool, seconds in step.silences]
    return f"{_span(step.t1 - step.t0)}, {said}" + ("; " + "; ".join(silent) if silent else "")


def _imported(info: SessionInfo) -> list[str]:
    """Where an imported session's numbers came from: its files and map."""
    def one(f: dict[str, object]) -> str:
        digest = f.get("sha256")
        return f"{f.get('path', '?')}: {f.get('bytes', '?')} bytes" + (
            f", sha256 {digest[:16]}" if isinstance(digest, str) else "")

    names = ", ".join(os.path.basename(str(f.get("path", "?"))) for f in info.imported_from)
    return [f"source    {info.source} from {names or '?'} (no live timing: the times are "
            "placed by benchtui import)",
            *(f"  {one(f)}" for f in info.imported_from),
            *([f"  map {one(info.import_map)}"] if info.import_map is not None else [])]
