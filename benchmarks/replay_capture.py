"""Replay a real capture at its real pace, as if the tool were running now (stdlib only).

Runs on a benchmark "host" (through SSH) in place of the real tool, so that one machine can
pretend to be a fleet without running hundreds of fio jobs:

    python3 replay_capture.py fio-json CAPTURE [--seconds N]
    python3 replay_capture.py iostat CAPTURE [--seconds N]
    python3 replay_capture.py prerender CAPTURE --seconds N OUT
    python3 replay_capture.py fio-prerendered OUT [--seconds N]

``fio-json``: CAPTURE holds a few status dumps of ``fio --status-interval=1
--output-format=json+`` (2 or more, consecutive). One document is printed per second, in
fio's pretty-printed layout, starting from the capture's last dump and advancing every
cumulative counter (``io_bytes``, ``total_ios``, ``runtime``, latency ``N``, ``mean``, every
histogram bin, ...) by the capture's own increments, looped; ``timestamp_ms``, ``timestamp``,
``time`` and ``elapsed`` are the current time when the document is printed. Rendering uses a
template made once (the numbers are slots), so a replay costs about a millisecond a second.

``iostat``: CAPTURE is the output of ``S_TIME_FORMAT=ISO iostat -x -y -t 1 N``. Its banner is
printed at once, then one report per second with its timestamp line rewritten to now, looped.

``prerender`` renders ``--seconds`` fio documents as ``fio-json`` would print them into OUT
once, and ``fio-prerendered`` prints them one a second with only their timestamps
(``timestamp``, ``timestamp_ms``, ``time``, at the top of each document) set to now: a
simulated host then costs a write a second, whatever the documents' size (32 jobs: ~700 KB
each). The file is read through ``mmap``, so every host of a fleet shares its pages.

Output is flushed after every document or report. ``--seconds 0`` runs until killed.
``--on-the-second``: every document is printed on a whole second of the clock (the first
after at least one second), so that every host of a fleet prints at the same instant, as fio
instances started together do (their ``--status-interval`` timers in step); without it each
replay prints a second after its own start, and a fleet's hosts are as far apart as their
starts were.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import mmap
import re
import sys
import time
from collections.abc import Iterator
from typing import Any

#: Keys of fio's cumulative counters (besides histogram bins, which are all counters).
FIO_COUNTERS = frozenset({
    "io_bytes", "io_kbytes", "total_ios", "short_ios", "drop_ios", "runtime", "N",
    "job_runtime", "ctx", "read_ios", "write_ios", "read_merges", "write_merges",
    "read_ticks", "write_ticks", "in_queue",
})
_SLOT = re.compile(r'"@@(\d+)@@"')
_ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
#: The timestamps at the top of a fio document (``prerendered``: set to the time of printing).
_STAMPS = re.compile(rb'("timestamp" : )\d+(,\n\s*"timestamp_ms" : )\d+(,\n\s*"time" : )"[^"]*"')
#: Bytes at the top of a fio document that hold its timestamps.
_HEAD = 256

Path = tuple[str | int, ...]


def split_fio_documents(text: str) -> list[dict[str, Any]]:
    """The JSON documents of a fio stream (each opens with ``{`` and closes with ``}`` at
    column 0)."""
    docs = []
    pos = text.find("{\n")
    while pos >= 0:
        end = text.find("\n}\n", pos)
        if end < 0:
            break
        docs.append(json.loads(text[pos:end + 2]))
        pos = text.find("{\n", end + 3)
    return docs


def _leaves(node: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*path, index))
    else:
        yield path, node


def _get(node: Any, path: Path, default: Any = 0) -> Any:
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return default
    return node


def _put(node: Any, path: Path, value: Any) -> None:
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


class FioReplay:
    """fio json+ status dumps, continued from a capture."""

    def __init__(self, docs: list[dict[str, Any]]) -> None:
        if len(docs) < 2:
            raise SystemExit("a fio capture needs at least 2 consecutive status dumps")
        base = docs[-1]  # cumulative: its bins hold every key the earlier dumps have
        counters: list[Path] = []
        means: list[tuple[Path, Path]] = []  # (mean, its N)
        elapsed: list[Path] = []
        for path, value in _leaves(base):
            key = path[-1]
            numeric = type(value) in (int, float)
            if numeric and (key in FIO_COUNTERS or (len(path) > 1 and path[-2] == "bins")):
                counters.append(path)
            elif numeric and key == "mean" and type(_get(base, (*path[:-1], "N"))) is int:
                means.append((path, (*path[:-1], "N")))
            elif key == "elapsed" and len(path) == 3 and path[0] == "jobs":
                elapsed.append(path)
        self.values: list[float] = [_get(base, p) for p in counters]
        # Per capture interval: each counter's increment, and each mean's Δ(mean x N).
        self.increments = [[_get(b, p) - _get(a, p) for p in counters]
                           for a, b in itertools.pairwise(docs)]
        n_index = {p: i for i, p in enumerate(counters)}
        self.mean_n = [n_index[n] for _, n in means]
        self.sums = [_get(base, m) * _get(base, n) for m, n in means]
        self.sum_increments = [
            [_get(b, m) * _get(b, n) - _get(a, m) * _get(a, n) for m, n in means]
            for a, b in itertools.pairwise(docs)]
        self.base_elapsed = [int(_get(base, p)) for p in elapsed]
        # The template: every slot replaced by "@@i@@", rendered once in fio's layout.
        slots = [*counters, *(m for m, _ in means), *elapsed,
                 ("timestamp",), ("timestamp_ms",), ("time",)]
        template = json.loads(json.dumps(base))
        for i, path in enumerate(slots):
            _put(template, path, f"@@{i}@@")
        text = json.dumps(template, indent=2, separators=(",", " : ")) + "\n"
        parts = _SLOT.split(text)
        self.literals = parts[0::2]
        order = [int(x) for x in parts[1::2]]
        if sorted(order) != list(range(len(slots))):
            raise SystemExit("the capture has a layout this replay does not understand")
        self.order = order
        self.step = 0
        self.started_ms = 0

    def document(self, now: float) -> bytes:
        """The next dump, stamped ``now`` (seconds since the epoch)."""
        now_ms = int(now * 1000)
        if self.step == 0:
            self.started_ms = now_ms - max(self.base_elapsed, default=0) * 1000
        else:
            k = (self.step - 1) % len(self.increments)
            self.values = [v + d for v, d in zip(self.values, self.increments[k], strict=True)]
            self.sums = [s + d for s, d in zip(self.sums, self.sum_increments[k], strict=True)]
        self.step += 1
        values = [str(v) for v in self.values]
        for total, n in zip(self.sums, self.mean_n, strict=True):
            count = self.values[n]
            values.append(f"{total / count:.6f}" if count else "0.0")
        elapsed = max(1, (now_ms - self.started_ms + 999) // 1000)
        values.extend(str(elapsed) for _ in self.base_elapsed)
        values += [str(now_ms // 1000), str(now_ms),
                   json.dumps(time.strftime("%a %b %d %H:%M:%S %Y",
                                            time.localtime(now_ms / 1000)))]
        out = [self.literals[0]]
        for slot, literal in zip(self.order, self.literals[1:], strict=True):
            out.append(values[slot])
            out.append(literal)
        return "".join(out).encode()


class IostatReplay:
    """``iostat -x -y -t`` reports, looped, each stamped with the time it is printed."""

    def __init__(self, text: str) -> None:
        lines = text.splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if _ISO_TIME.match(line)]
        if not starts:
            raise SystemExit("an iostat capture needs -t timestamps (S_TIME_FORMAT=ISO)")
        self.banner = "".join(lines[:starts[0]]).encode()
        self.reports = ["".join(lines[a + 1:b])
                        for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
        self.step = 0

    def document(self, now: float) -> bytes:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now))
        report = self.reports[self.step % len(self.reports)]
        self.step += 1
        return f"{stamp}\n{report}".encode()


class FioPrerendered:
    """fio documents rendered beforehand (``prerender``), stamped with the time of printing."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.starts = [0]
        while (end := self.data.find(b"\n}\n", self.starts[-1])) >= 0:
            self.starts.append(end + 3)
        if len(self.starts) < 2:
            raise SystemExit(f"{path} holds no fio document")
        self.step = 0

    def document(self, now: float) -> bytes:
        k = self.step % (len(self.starts) - 1)
        self.step += 1
        a, b = self.starts[k], self.starts[k + 1]
        head = self.data[a:min(a + _HEAD, b)]
        now_ms = int(now * 1000)
        clock = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now))
        stamped = _STAMPS.sub(lambda m: b"%s%d%s%d%s\"%s\"" % (
            m[1], now_ms // 1000, m[2], now_ms, m[3], clock.encode()), head, count=1)
        return stamped + self.data[a + len(head):b]


def prerender(capture: str, seconds: int, out: str) -> None:
    """``seconds`` documents of ``FioReplay`` (one a second from now) into ``out``."""
    with open(capture, encoding="utf-8") as f:
        source = FioReplay(split_fio_documents(f.read()))
    now = time.time()
    with open(out, "wb") as f:
        for k in range(max(seconds, 1)):
            f.write(source.document(now + k))


def replay(source: FioReplay | FioPrerendered | IostatReplay, seconds: int,
           on_the_second: bool = False) -> None:
    """Print one document per second (the first after one second, as the tools do; on
    whole seconds of the clock with ``on_the_second``)."""
    out = sys.stdout.buffer
    if isinstance(source, IostatReplay):
        out.write(source.banner)
        out.flush()
    start = time.time()
    if on_the_second:
        start = float(math.ceil(start))
    tick = 0
    while seconds <= 0 or tick < seconds:
        tick += 1
        delay = start + tick - time.time()
        if delay > 0:
            time.sleep(delay)
        out.write(source.document(time.time()))
        out.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("fio-json", "iostat", "prerender", "fio-prerendered"))
    ap.add_argument("capture", help="the captured output to replay (fio-prerendered: the "
                    "file prerender wrote)")
    ap.add_argument("out", nargs="?", help="prerender: the file to write")
    ap.add_argument("--seconds", type=int, default=0, help="documents to print (0: forever)")
    ap.add_argument("--on-the-second", action="store_true",
                    help="print on whole seconds of the clock (a fleet's hosts in step)")
    args = ap.parse_intermixed_args(argv)
    if args.kind == "prerender":
        if not args.out:
            ap.error("prerender needs the file to write")
        prerender(args.capture, args.seconds, args.out)
        return 0
    source: FioReplay | FioPrerendered | IostatReplay
    if args.kind == "fio-prerendered":
        source = FioPrerendered(args.capture)
    else:
        with open(args.capture, encoding="utf-8") as f:
            text = f.read()
        source = FioReplay(split_fio_documents(text)) if args.kind == "fio-json" \
            else IostatReplay(text)
    try:
        replay(source, args.seconds, args.on_the_second)
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
