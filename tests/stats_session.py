"""A synthetic session with many short steps, for the stats-block tests of ``series_stats``.

Three hosts; each step starts (``step_start``), then each host's run starts a little later
(``run_start``), runs ~40 s, ends (``run_end``), and the step ends; a few seconds of pause
between steps. Every second each host sends a fio-like batch (floats, integers, decimals, a
latency histogram per job and op, some values without a time) and an iostat-like batch with
its text; records reach the writer slightly out of time order, as they do live. Segments are
short (10 s) so that a window crosses many. Deterministic for a seed.

``tests/fixtures/recording/before-stats.btr`` was written with this generator by the writer
before stats blocks existed (benchtui at commit 244da1b):
``.venv/bin/python -m tests.stats_session tests/fixtures/recording/before-stats.btr``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from benchtui.model import events as ev
from benchtui.model.events import Event, OutputLines
from benchtui.model.fio_buckets import bucket_values
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample
from benchtui.store.recording import SCHEMA_VERSION, Record, SessionMeta, SessionWriter

T0 = 1_795_000_000.125
HOSTS = ("h1", "h2", "h3")
BUCKETS = bucket_values(4)[100:260]
Timed = tuple[float, Record]


def records(steps: int = 4, seed: int = 3, run_seconds: int = 40, pause: float = 6.0,
            late_events: bool = False, partial_last: float | None = None) -> list[Timed]:
    """The session's records (time, record), in the order they reach the writer: batches of
    samples up to half a second late, events on time (``late_events``: late too, so that
    some cuts come after samples past them; ``partial_last``: each run's last fio interval
    covers that many seconds, ``Sample.duration``)."""
    rng = random.Random(seed)
    out: list[Timed] = []
    t = T0
    out.append((t, Event(t, ev.SESSION_START, "session stats-test")))
    for step in range(steps):
        name = f"s{step}"
        te = t + 1.0
        out.append((te, Event(te, ev.STEP_START, f"step {name}", step=name,
                              data={"index": step, "repeat": 1})))
        starts = {h: te + 0.05 + 0.2 * i + rng.random() * 0.1 for i, h in enumerate(HOSTS)}
        for h in HOSTS:
            out.append((starts[h], Event(starts[h], ev.RUN_START, f"{h}: started", host=h,
                                         step=name)))
        timed: list[Timed] = []
        for second in range(run_seconds + 2):
            now = te + second
            for i, h in enumerate(HOSTS):
                at = now + 0.1 + rng.random() * 0.6
                timed.append((at, _iostat(h, name, at, rng)))
                timed.append((at, OutputLines(at, h, name, "iostat", "monitor",
                                              (f"{h} line {second}",))))
                if starts[h] <= now < starts[h] + run_seconds:
                    fio_at = now + 0.3 + i * 0.01 + rng.random() * 0.3
                    batch = _fio(h, name, fio_at, second, rng)
                    if partial_last is not None and now + 1 >= starts[h] + run_seconds:
                        for s in batch:
                            s.duration = partial_last
                    timed.append((fio_at, batch))
        end = te + run_seconds + 1.5
        for h in HOSTS:
            e = end + 0.01 * HOSTS.index(h)
            timed.append((e, Event(e, ev.RUN_END, f"{h}: exited 0", host=h, step=name,
                                   data={"status": 0})))
        timed.append((end + 0.2, Event(end + 0.2, ev.STEP_END, f"step {name} done",
                                       step=name, data={"ok": True})))
        # out of order by up to half a second: sorted by a jittered time, not their own
        timed.sort(key=lambda x: x[0] + (0.0 if isinstance(x[1], Event) and not late_events
                                         else rng.random() * 0.5))
        out += timed
        t = end + pause
    out.append((t, Event(t, ev.SESSION_END, "done")))
    return out


def _fio(host: str, step: str, t: float, second: int, rng: random.Random) -> list[Sample]:
    out = []
    for job in ("a", "b"):
        for op in ("read", "write"):
            labels = {"job": job, "op": op, "step": step}
            n = rng.randrange(200, 400)
            counts = {BUCKETS[rng.randrange(len(BUCKETS))]: rng.randrange(1, 50)
                      for _ in range(n // 10)}
            hist = LatencyHistogram(counts)
            total = hist.total()
            out.append(Sample(t, "fio", "interval", "iops", total / rng.uniform(0.99, 1.01),
                              labels, host, float(second)))
            out.append(Sample(t, "fio", "interval", "ios", total, labels, host, None))
            out.append(Sample(None, "fio", "interval", "latency_mean_seconds",
                              round(rng.uniform(1e-4, 9e-4), 6), {**labels, "measure": "clat"},
                              host, float(second)))
            out.append(Sample(t, "fio", "interval", "latency_histogram", float(total),
                              {**labels, "measure": "clat"}, host, float(second), hist))
    return out


def _iostat(host: str, step: str, t: float, rng: random.Random) -> list[Sample]:
    return [Sample(t, "iostat", "interval", metric, round(rng.uniform(0, 500), 2),
                   {"device": dev, "step": step}, host, None)
            for dev in ("vda", "vdb") for metric in ("r_per_s", "w_per_s", "util_ratio")]


def meta() -> SessionMeta:
    return SessionMeta(SCHEMA_VERSION, "stats-test", "sid-stats", "[session]\n", None, T0, None,
                       hosts=list(HOSTS))


def write(path: Path, timed: list[Timed], *, segment_seconds: float = 10.0,
          close: bool = True) -> SessionWriter:
    """Write ``timed`` in half-second frames, as the recorder does."""
    w = SessionWriter(str(path), meta(), segment_seconds=segment_seconds)
    frame: list[Timed] = []
    flush_at = T0 + 0.5
    for t, r in timed:
        while t >= flush_at:
            if frame:
                w.append(frame)
                frame = []
            flush_at += 0.5
        frame.append((t, r))
    if frame:
        w.append(frame)
    if close:
        w.close(ended=timed[-1][0] + 1)
    return w


if __name__ == "__main__":
    write(Path(sys.argv[1]), records())
