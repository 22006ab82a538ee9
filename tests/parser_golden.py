"""Every parser's output on every tool output the project keeps, stored to be compared later.

``tests/test_parser_golden.py`` checks that the parsers' outputs stay the same, sample for
sample, on every file of tests/fixtures/ (which holds copies of ../shared/corpus and
../shared/seeds): a change that makes a parser faster must not change what it reads. This
module makes the stored outputs (``GOLDEN``, compressed JSON) and reads them back.

For every file: the parsers detection picks for it, as ``benchtui parse FILE`` picks them; and
for EVERY parser of the registry, forced on it as ``benchtui parse --tool NAME FILE`` forces it
(raw bytes to a parser that takes bytes, else the decoded text), the samples and warnings it
gives, when it gives any. Histograms are stored as their (bucket ns, count) pairs.

Regenerate (after an intended change of what a parser reads, or to take in new fixture files;
the diff of the test's failure says what changed, and the commit must say why)::

    .venv/bin/python -m tests.parser_golden

Files added to tests/fixtures/ after the last regeneration are not compared until then.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers._flattened import restore_line_breaks
from benchtui.parsers.base import Parser, decode_output

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
GOLDEN = FIXTURES / "golden" / "parsers.json.xz"
#: What is not a tool's output: documentation, provenance, scripts, recordings, the goldens.
_SKIPPED_NAMES = ("README.md", "SOURCE")
_SKIPPED_SUFFIXES = (".py", ".btr", ".xz")


def input_files() -> list[str]:
    """Every tool output under tests/fixtures/, as paths relative to it."""
    return sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*")
                  if p.is_file() and p.name not in _SKIPPED_NAMES
                  and not p.name.endswith(_SKIPPED_SUFFIXES))


def sample_row(s: Sample) -> list[Any]:
    hist = None
    if s.histogram is not None:
        hist = sorted([int(k), int(v)] for k, v in s.histogram.counts.items() if v)
    return [s.t, s.tool, s.kind, s.metric, s.value, dict(sorted(s.labels.items())), s.host,
            s.elapsed, s.duration, hist]


def run_parser(cls: type[Parser], data: bytes, text: str, *, histograms: bool = True
               ) -> dict[str, Any]:
    """``cls`` forced on a file, as ``benchtui parse --tool`` runs it (``histograms``: as with
    --histograms; without, a parser may skip the work of the histograms it would not make)."""
    p = cls(host="-", source="golden")
    p.histograms = histograms
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
    if p.takes_bytes and not utf16:
        samples = p.feed_bytes(data)
    else:
        samples = p.feed_text(text)
    samples += p.finish()
    return {"samples": [sample_row(s) for s in samples],
            "warnings": [[w.line, w.reason] for w in p.warnings]}


def file_outputs(relpath: str) -> dict[str, Any]:
    data = (FIXTURES / relpath).read_bytes()
    text = restore_line_breaks(decode_output(data))
    detected = [c.name for c in registry.choose(text[:registry.DETECT_HEAD_BYTES])]
    parsers: dict[str, Any] = {}
    for name, cls in sorted(registry.all_parsers().items()):
        out = run_parser(cls, data, text)
        if out["samples"] or out["warnings"]:
            parsers[name] = out
    return {"detected": detected, "parsers": parsers}


def make() -> dict[str, Any]:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=False,
                            capture_output=True, text=True).stdout.strip()
    return {"made_at_commit": commit, "parsers": sorted(registry.all_parsers()),
            "files": {f: file_outputs(f) for f in input_files()}}


@cache
def load() -> dict[str, Any]:
    with lzma.open(GOLDEN, "rt", encoding="utf-8") as f:
        golden: dict[str, Any] = json.load(f)
    return golden


def main() -> int:
    golden = make()
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(golden, separators=(",", ":"), sort_keys=True).encode()
    GOLDEN.write_bytes(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
    n = sum(len(p["samples"]) for f in golden["files"].values() for p in f["parsers"].values())
    print(f"{GOLDEN.relative_to(ROOT)}: {len(golden['files'])} files, {n} samples, "
          f"{GOLDEN.stat().st_size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
