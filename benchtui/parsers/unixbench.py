"""UnixBench (byte-unixbench ``Run``) text report, version 5.1.x.

A report has one block per "N parallel copies" run (UnixBench/Run, summarizeRun)::

    Benchmark Run: Mon Aug 09 2021 17:19:07 - 17:48:22
    48 CPUs in system; running 1 parallel copy of tests

    Dhrystone 2 using register variables       34839728.4 lps   (10.0 s, 7 samples)
    File Copy 1024 bufsize 2000 maxblocks        517296.7 KBps  (30.0 s, 2 samples)

    System Benchmarks Index Values               BASELINE       RESULT    INDEX
    Dhrystone 2 using register variables         116700.0   34839728.4   2985.4
                                                                       ========
    System Benchmarks Index Score                                        1111.1

(``Partial Index`` and ``Index Score (Partial Only)`` when only some index tests ran).

Samples, all kind ``summary``, metric ``benchmark_score`` with labels ``test`` (the test's name
as printed), ``unit`` and ``copies`` (the run's parallel copies, ``"1"`` when the block header
is missing):

* result lines: the score as printed, ``unit`` = UnixBench's own unit (``lps`` loops/s,
  ``lpm`` loops/min, ``MWIPS``, ``KBps`` = KB/s of the file-copy tests). These are the tool's
  scores, kept in its units rather than converted.
* index table rows: the INDEX column, ``unit="index"`` (rows with ``---`` are skipped);
* the index score line: ``test`` = its title as printed (e.g. ``System Benchmarks Index
  Score``), ``unit="index"``.

UnixBench prints no per-second data. ``t`` is the time the line was received; ``elapsed`` is
the block's run length from the ``Benchmark Run:`` header (end - start, across midnight if the
end is earlier), or, without a header, the test's own time (seconds per sample x samples; for
index lines the sum of the block's tests' times).
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import SUMMARY, Sample
from benchtui.model.units import parse_float
from benchtui.parsers.base import Parser

_RUN: Final = re.compile(
    r"^\s*Benchmark Run: \w+ \w+ \d+ \d+ (\d\d):(\d\d):(\d\d) - (\d\d):(\d\d):(\d\d)\s*$")
_COPIES: Final = re.compile(r"running (\d+) parallel cop(?:y|ies) of tests")
_RESULT: Final = re.compile(
    r"^\s*(?P<test>\S.*?)\s+(?P<score>\d+(?:\.\d+)?)\s+(?P<unit>[A-Za-z][\w/]*)\s+"
    r"\((?P<time>\d+(?:\.\d+)?) s, (?P<samples>\d+) samples?\)\s*$")
_INDEX_HEAD: Final = re.compile(r"(?:Index Values|Partial Index)\s+BASELINE\s+RESULT\s+INDEX")
_INDEX_ROW: Final = re.compile(
    r"^\s*(?P<test>\S.*?)\s+(?:[\d.]+|---)\s+[\d.]+\s+(?P<index>\d+(?:\.\d+)?|---)\s*$")
_SCORE: Final = re.compile(
    r"^\s*(?P<test>\S.*? Index Score(?: \(Partial Only\))?)\s+(?P<score>\d+(?:\.\d+)?)\s*$")
_DETECT_RUN: Final = re.compile(
    r"^\s*Benchmark Run: \w+ \w+ \d+ \d+ \d\d:\d\d:\d\d - \d\d:\d\d:\d\d", re.MULTILINE)
_DETECT_RESULT: Final = re.compile(
    r"^.{1,80}?\d\.\d \s*(?:lps|lpm|MWIPS|KBps|fps)\s+\(\d+\.\d s, \d+ samples\)\s*$",
    re.MULTILINE)


class UnixBenchParser(Parser):
    """UnixBench Run's result and index tables."""

    name: ClassVar[str] = "unixbench"
    tool: ClassVar[str] = "unixbench"
    description: ClassVar[str] = "UnixBench Run report (test scores and index tables)"

    def __init__(self, host: str = "-", source: str = "-") -> None:
        super().__init__(host, source)
        self._copies = "1"
        self._run_seconds: float | None = None
        #: Sum of the block's tests' own times, for reports without a header.
        self._tests_seconds = 0.0
        self._in_index = False

    @classmethod
    def detect(cls, head: str) -> int:
        result = _DETECT_RESULT.search(head) is not None
        if result and _DETECT_RUN.search(head) is not None:
            return 95
        return 70 if result else 0

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        if "samples)" in line and " s, " in line:
            m = _RESULT.match(line)
            if m is None:
                self.warn("malformed UnixBench result line", line)
                return None
            return self._result(m, t)
        if "Benchmark Run:" in line:
            self._header(line)
            return None
        if "parallel cop" in line:
            c = _COPIES.search(line)
            if c is not None:
                self._copies = c.group(1)
                return None
        if "Index Score" in line:
            s = _SCORE.match(line)
            self._in_index = False
            if s is None:
                self.warn("malformed UnixBench index score line", line)
                return None
            return self._score(s.group("test"), s.group("score"), t)
        if _INDEX_HEAD.search(line) is not None:
            self._in_index = True
            return None
        if self._in_index:
            r = _INDEX_ROW.match(line)
            if r is not None:
                index = r.group("index")
                return None if index == "---" else self._score(r.group("test"), index, t)
            if line.strip() and not line.strip().startswith("==="):
                self._in_index = False
        self.unknown()
        return None

    def _header(self, line: str) -> None:
        m = _RUN.match(line)
        self._copies = "1"
        self._in_index = False
        self._tests_seconds = 0.0
        if m is None:
            self._run_seconds = None
            self.warn("malformed UnixBench run header", line)
            return
        h1, m1, s1, h2, m2, s2 = (int(g) for g in m.groups())
        self._run_seconds = float(((h2 - h1) * 3600 + (m2 - m1) * 60 + (s2 - s1)) % 86400)

    def _result(self, m: re.Match[str], t: float | None) -> list[Sample] | None:
        score = parse_float(m.group("score"))
        took = parse_float(m.group("time"))
        samples = parse_float(m.group("samples"))
        if score is None or took is None or samples is None:
            self.warn("unreadable numbers in UnixBench result line", m.group(0))
            return None
        self._tests_seconds += took * samples
        elapsed = self._run_seconds if self._run_seconds is not None else took * samples
        labels = {"test": m.group("test"), "unit": m.group("unit"), "copies": self._copies}
        return [self.sample("benchmark_score", score, labels, t, kind=SUMMARY, elapsed=elapsed)]

    def _score(self, test: str, text: str, t: float | None) -> list[Sample] | None:
        value = parse_float(text)
        if value is None:
            self.warn("unreadable UnixBench index", text)
            return None
        labels = {"test": test, "unit": "index", "copies": self._copies}
        elapsed = self._run_seconds if self._run_seconds is not None else self._tests_seconds
        return [self.sample("benchmark_score", value, labels, t, kind=SUMMARY, elapsed=elapsed)]
