"""The shared corpus of real tool outputs written by other people (../shared/corpus/, see its
README.md and */SOURCE), copied whole to tests/fixtures/corpus/ (as the seeds are to
tests/fixtures/seeds/): a clone outside this workplace, CI's, has no ../shared.

``parse_file`` reads a file as ``benchtui parse FILE`` does (detection on the head, a report
flattened onto one line put back on its lines, fio-json fed the raw bytes). ``Printed`` is one
figure as the tool printed it, with the tolerance the issue asks for: half a unit of its last
printed digit, in base units.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers._flattened import restore_line_breaks
from benchtui.parsers.base import Parser, ParseWarning, decode_output
from tests.helpers import check_invariants

#: A copy of ../shared/corpus (its README names every file's source), kept with the tests so
#: that a clone anywhere (CI's) has it.
CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"


def corpus_files(tool: str, *suffixes: str) -> list[str]:
    """The names of the corpus files of ``tool`` (its directory), SOURCE and README left out."""
    folder = CORPUS / tool
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.name not in ("SOURCE", "README.md")
                  and (not suffixes or p.name.endswith(suffixes)))


def corpus_path(tool: str, name: str) -> Path:
    path = CORPUS / tool / name
    if not path.is_file():
        pytest.skip(f"the shared corpus is not at {CORPUS}")
    return path


@dataclass
class Parsed:
    parsers: list[Parser]
    samples: list[Sample]
    warnings: list[ParseWarning]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parsers]


def parse_file(tool: str, name: str) -> Parsed:
    """One corpus file read as ``benchtui parse`` reads it."""
    data = corpus_path(tool, name).read_bytes()
    text = restore_line_breaks(decode_output(data))
    classes = registry.choose(text[:registry.DETECT_HEAD_BYTES])
    parsers = [cls(host="-", source=name) for cls in classes]
    samples: list[Sample] = []
    for p in parsers:
        samples.extend(p.feed_bytes(data) if p.takes_bytes else p.feed_text(text))
        samples.extend(p.finish())
    check_invariants(samples)
    return Parsed(parsers, samples, [w for p in parsers for w in p.warnings])


@dataclass(frozen=True)
class Printed:
    """A figure as printed (``text``, e.g. ``"22.1k"``) times ``scale`` (to base units)."""

    value: float
    tolerance: float
    where: str = ""

    def matches(self, got: float) -> bool:
        return abs(got - self.value) <= self.tolerance * (1 + 1e-9) + 1e-15 * abs(self.value)


_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "m": 1e6, "G": 1e9, "g": 1e9}
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.(\d*))?)([kKMmGg]?)\s*$")


def printed(text: str, scale: float = 1.0, where: str = "") -> Printed:
    """``"22.1k"`` -> 22100 +- 50 (times ``scale``): the value and half its last digit."""
    m = _NUMBER.match(text)
    assert m is not None, f"not a printed number: {text!r} ({where})"
    digits = len(m.group(2) or "")
    mult = _SUFFIX[m.group(3)] * scale
    return Printed(float(m.group(1)) * mult, 0.5 * 10.0 ** -digits * mult, where)


def exact(value: float, where: str = "") -> Printed:
    """A figure printed with every digit (JSON): equal to 1e-9 relative."""
    return Printed(value, abs(value) * 1e-9, where)


def match_all(expected: dict[str, list[Printed]], samples: list[Sample], what: str) -> None:
    """Every expected figure of each metric is one of the samples of that metric (as many
    samples as figures, each within its tolerance): sorted, then pairwise."""
    for metric, figures in expected.items():
        got = sorted(s.value for s in samples if s.metric == metric)
        want = sorted(figures, key=lambda p: p.value)
        assert len(got) == len(want), (what, metric, len(got), len(want))
        bad = [(p, g) for p, g in zip(want, got, strict=True) if not p.matches(g)]
        assert not bad, (what, metric, bad[:5])


def isclose(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)
