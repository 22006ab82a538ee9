"""Reports whose line breaks were lost: fio's text put back on its own lines.

A report pasted through a tool that flattens Markdown (seed 001 is one: the whole report, fio's
output included, is one 25,000-character line) keeps every token of the tool's output but
none of its line breaks: each newline and the indentation after it became one space. Parsers
read line by line, so such a line gives nothing.

``restore_line_breaks`` puts a newline back before every token that starts a line of fio's
normal output (job sections, direction lines, latency and percentile tables, group and disk
statistics, the status line, and the Markdown fences and rules around them) and touches
nothing else. Only lines that are long (``MIN_CHARS``) and hold several such starts
(``MIN_STARTS``) are changed: a line that a tool really printed is never that long with that
many section starts (fio's longest, ``READ: bw=...``, is ~150 characters), and JSON (a
compact fio json document is one long line) has none of them. Indentation is not restored;
the parsers do not depend on it. Joining the restored lines with spaces gives the text back.

Pure text in, text out: no I/O (a private module of ``parsers``; the registry skips it).
"""

from __future__ import annotations

import re
from functools import cache
from itertools import islice

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Final

#: A line shorter than this is never taken for a flattened report.
MIN_CHARS: Final = 1000
#: ... nor one with fewer section starts than this.
MIN_STARTS: Final = 3

#: The tokens that start a line of fio's normal output (fio 2.x and 3.x, Linux and Windows),
#: and the Markdown around a pasted block. Each must follow a space or tab.
LINE_STARTS: Final = (
    r"-{3,}(?= [^|]|$)", r"```", r"#{1,6} ",  # Markdown rules (not table rows), fences, headings
    r"fio --", r"fio-\d+\.\d+", r"Starting \d+ (?:process|thread)",
    r"\.\.\.(?= (?:fio-\d|Starting \d))",  # numjobs' clones, announced after the job line
    r"[^\s:]+: Laying out IO file",
    r"Jobs: \d+ \(f=\d+\)",
    r"[^\s:]+: \(g=\d+\): rw=", r"[^\s:]+: \(groupid=\d+, jobs=\d+\)",
    r"(?:read|write|trim|mixed) ?: (?:IOPS=|io=)",
    r"(?:slat|clat|lat) \((?:nsec|usec|msec)\)", r"(?:slat|clat|lat) percentiles \(",
    r"\| +\d+(?:\.\d+)?th=\[",
    r"bw \( *[A-Za-z]+ */s\)", r"iops +:", r"cpu +:", r"IO depths +:", r"submit +:",
    r"complete +:", r"issued rwts:", r"issued +:", r"latency +:",
    r"Run status group \d+", r"(?:READ|WRITE|TRIM|MIXED): (?:bw|io)=",
    r"Disk stats \(read/write\):", r"[^\s:]+: ios=\d+/\d+",
)
#: fio's --eta status line: rewritten in place, so a capture without its ``\r`` glues hundreds of
#: them onto one long line. Such a line is not a flattened report (``fio_text`` splits it
#: itself, and the lines after it keep their numbers), so status lines do not count as starts.
_STATUS_START: Final = r"Jobs: \d+ \(f=\d+\)"
_ANY_START: Final = "|".join(f"(?:{s})" for s in LINE_STARTS)


@cache
def _split() -> re.Pattern[str]:
    """Where a flattened report's lines start (compiled on first use: most inputs hold no
    long line, and compiling it costs ``benchtui parse`` a few percent of its start-up)."""
    return re.compile(rf"[ \t]+(?={_ANY_START})")


@cache
def _starts() -> re.Pattern[str]:
    """The tokens that count as line starts (compiled on first use, as ``_split``)."""
    return re.compile(
        rf"(?<=[ \t])(?:{'|'.join(f'(?:{s})' for s in LINE_STARTS if s != _STATUS_START)})")


_LONG_LINE: Final = re.compile(rf"^[^\n]{{{MIN_CHARS},}}", re.MULTILINE)


def is_flattened(line: str) -> bool:
    """True when ``line`` looks like a report flattened onto one line."""
    if len(line) < MIN_CHARS or line.lstrip().startswith(("{", "[")):
        return False
    return sum(1 for _ in islice(_starts().finditer(line), MIN_STARTS)) == MIN_STARTS


def restore_line(line: str) -> str:
    """``line`` with a newline put back before every token that starts a line of fio's
    output, when it is a flattened report; otherwise ``line`` itself."""
    if not is_flattened(line):
        return line
    return _split().sub("\n", line)


def restore_line_breaks(text: str) -> str:
    """``text`` with each flattened report in it put back on its lines (see the module's
    doc); text with no long line is returned as it is."""
    if not may_have_long_line(text):
        return text
    return _LONG_LINE.sub(_restore_match, text)


def may_have_long_line(text: str) -> bool:
    """False when no line of ``text`` is ``MIN_CHARS`` long (True may also mean a line half
    that long). A line that long holds a whole stride-aligned window of half its length, so
    looking for a newline in each window is enough: ~2 ms for an hour of iostat (7 MB), where
    a regular expression for a long line takes ~25 ms."""
    half = MIN_CHARS // 2
    find = text.find
    return any(find("\n", i, i + half) < 0 for i in range(0, len(text) - half + 1, half))


def _restore_match(match: re.Match[str]) -> str:
    return restore_line(match.group(0))
