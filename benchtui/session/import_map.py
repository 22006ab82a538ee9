"""The map file of ``benchtui import``, and a pasted report cut into (host, step) pieces by it.

A report pasted together by hand (the seeds) holds many hosts' and steps' outputs in one
file. The map (TOML, docs/import.md) says which lines mark a host and which mark a step::

    within = "#### 测试数据"    # optional: only the section under this heading is read

    [host]
    marker = "bullet"          # heading | bullet | comment | line
    [step]
    marker = "comment"

A marker's text, cleaned up (``match``'s first group, ``strip``, ``rename``), names the host
or the step. The text after a marker, up to the next marker or the end of the section, is a
piece: the output of the latest host and step named. The kind of marker met first in a
section is the outer one: a new outer marker forgets the inner name until it is named again
(hosts holding steps, as in seed 000, or steps holding hosts). One line may mark both
(seed 001's ``--- Ext4 posixaio randrw``).

Pure text in, pieces out; only ``load_map`` reads a file.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

from benchtui.errors import InputError
from benchtui.model.format import CONTROL, escape_control
from benchtui.plan.locate import KeyIndex, syntax_error
from benchtui.session.inputs import read_input

MARKERS: Final = ("heading", "bullet", "comment", "line")
_RULE_KEYS: Final = ("marker", "level", "match", "strip", "rename")
_TOP_KEYS: Final = ("within", "host", "step")

_FENCE: Final = re.compile(r"^\s*(?:```|~~~)")
_HEADING: Final = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_BULLET: Final = re.compile(r"^\s*[*+-]\s+(.*\S)\s*$")
_COMMENT: Final = re.compile(r"^\s*#\s+(.*\S)\s*$")


@dataclass(frozen=True, slots=True)
class MarkerRule:
    """``[host]`` or ``[step]``: which lines name a host (a step), and how the name is made."""

    role: str  # "host" or "step"
    marker: str  # one of MARKERS
    level: int | None = None  # a heading's level (None: any)
    match: re.Pattern[str] | None = None
    strip: str = ""
    rename: Mapping[str, str] = field(default_factory=dict)
    line: int | None = None  # where the rule is in the map file

    def name(self, kind: str | None, level: int | None, text: str, line: str) -> str | None:
        """The name this line gives, or None when it is not this rule's marker. ``kind`` and
        ``text`` are the line's Markdown reading (``classify``)."""
        if self.marker == "line":
            text = line.strip()
        elif kind != self.marker or (self.level is not None and level != self.level):
            return None
        if self.match is not None:
            m = self.match.search(text)
            if m is None:
                return None
            if self.match.groups:  # (without a group, match only chooses the lines)
                text = m.group(1) or ""
        text = text.strip().strip(self.strip).strip()
        return self.rename.get(text, text) or None

    def describe(self) -> str:
        what = {"heading": "headings" + (f" of level {self.level}" if self.level else ""),
                "bullet": "bullets", "comment": "# comments in code blocks",
                "line": "lines"}[self.marker]
        return f"[{self.role}] rule ({what}" + (
            f" matching '{self.match.pattern}')" if self.match else ")")


@dataclass(frozen=True, slots=True)
class Within:
    """The section the markers count in: under a heading, up to the next heading of the same
    or a higher level."""

    text: str
    level: int | None  # None: a heading of any level with this text
    written: str  # as the map wrote it

    def starts(self, level: int, text: str) -> bool:
        return text == self.text and (self.level is None or level == self.level)


@dataclass(frozen=True, slots=True)
class ImportMap:
    path: str
    text: str  # the map file's text, kept in the session
    host: MarkerRule
    step: MarkerRule
    within: Within | None = None
    #: The file's size and SHA-256 (hex), to say in the session which map was used.
    size: int = 0
    sha256: str = ""


@dataclass(slots=True)
class Piece:
    """The output of one host and step: the lines after its marker, up to the next marker
    or the end of the section."""

    host: str
    step: str
    line: int  # 1-based number of the marker line in the report
    lines: list[str] = field(default_factory=list)
    #: The number of the line after its last one (the next marker, the end of the section,
    #: or the report's end): its lines are those numbered ``line + 1`` to ``end - 1``.
    end: int = 1 << 62


# --- reading the map -----------------------------------------------------------------------


#: The largest map file read (a map is a few rules of TOML).
MAX_MAP_BYTES = 2**20


def load_map(path: str) -> ImportMap:
    if not os.path.exists(path):
        raise InputError(path, "no such map file")
    if os.path.isdir(path):
        raise InputError(path, "is a directory, not a map file")
    data = read_input(path, hint="a map is a small TOML file (docs/import.md)",
                      limit=MAX_MAP_BYTES)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise InputError(path, "is not a text (UTF-8) map file") from None
    return parse_map(text, path, data)


def parse_map(text: str, path: str, data: bytes | None = None) -> ImportMap:
    """The map in ``text`` (from file ``path``, whose bytes are ``data``: default, the text
    in UTF-8); an ``InputError`` naming the line when it is wrong."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        plan_error = syntax_error(path, text, error)
        at = f"{path}:{plan_error.line}" if plan_error.line else path
        raise InputError(at, plan_error.reason, plan_error.hint) from None
    where = _Where(path, KeyIndex(text))
    for key in doc:
        if key not in _TOP_KEYS:
            raise where.error((key,), f"unknown key {key!r} in the map",
                              "a map has within, [host] and [step] (docs/import.md)")
    within = doc.get("within")
    if within is not None and (not isinstance(within, str) or not within.strip()):
        raise where.error(("within",), "within must be a heading, as text",
                          'e.g. within = "#### 测试数据"')
    host, step = (_rule(role, doc.get(role), where) for role in ("host", "step"))
    data = text.encode() if data is None else data
    return ImportMap(path, text, host, step, _within(within) if within is not None else None,
                     len(data), hashlib.sha256(data).hexdigest())


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a key of the map file is, for its errors."""

    path: str
    keys: KeyIndex

    def error(self, key: tuple[str, ...], reason: str, hint: str = "") -> InputError:
        line = self.keys.line(key) if key else None
        return InputError(f"{self.path}:{line}" if line else self.path, reason, hint)


def _within(written: str) -> Within:
    m = _HEADING.match(written)
    if m is None:
        return Within(written.strip(), None, written)
    return Within(m.group(2), len(m.group(1)), written)


def _rule(role: str, table: object, where: _Where) -> MarkerRule:
    if table is None:
        raise where.error((), f"the map has no [{role}] table",
                          f'add one, e.g. [{role}] marker = "bullet"')
    if not isinstance(table, dict):
        raise where.error((role,), f"{role} must be a table ([{role}])")
    for key in table:
        if key not in _RULE_KEYS:
            raise where.error((role, key), f"unknown key {key!r} in [{role}]",
                              f"the keys are {', '.join(_RULE_KEYS)}")
    marker = table.get("marker")
    if marker not in MARKERS:
        raise where.error((role, "marker") if "marker" in table else (role,),
                          f"[{role}] needs marker = one of {', '.join(MARKERS)}")
    level = table.get("level")
    if level is not None and (marker != "heading" or not isinstance(level, int)
                              or isinstance(level, bool) or not 1 <= level <= 6):
        raise where.error((role, "level"), f"[{role}] level must be a heading level from 1 "
                          'to 6, with marker = "heading"')
    pattern = table.get("match")
    match: re.Pattern[str] | None = None
    if pattern is not None:
        if not isinstance(pattern, str):
            raise where.error((role, "match"),
                              f"[{role}] match must be a regular expression, as text")
        try:
            match = re.compile(pattern)
        except re.error as exc:
            raise where.error((role, "match"), f"[{role}] match is not a valid regular "
                              f"expression ({exc})") from None
    elif marker == "line":
        raise where.error((role, "marker"), f'[{role}] marker = "line" needs a match',
                          "a regular expression that only the marker lines match")
    strip = table.get("strip", "")
    if not isinstance(strip, str):
        raise where.error((role, "strip"), f"[{role}] strip must be text: the characters to "
                          "strip from both ends of a name")
    rename = table.get("rename", {})
    if not isinstance(rename, dict) or not all(isinstance(v, str) for v in rename.values()):
        raise where.error((role, "rename"), f"[{role}] rename must be a table of names",
                          'e.g. rename = { "libaio" = "io_submit" }')
    return MarkerRule(role, marker, level, match, strip, dict(rename), where.keys.line((role,)))


# --- cutting a report into pieces ----------------------------------------------------------


Reading = tuple[str | None, int | None, str]


def classify(lines: Iterable[str]) -> Iterator[Reading]:
    """Each line's Markdown reading: (kind, heading level, text). Kinds: "fence" (a code
    block's ``` or ~~~ line), "heading", "bullet" (outside code blocks), "comment" (a
    ``# text`` line inside one), None (anything else; text "")."""
    in_code = False
    for line in lines:
        found, in_code = _reading(line, in_code)
        yield found


def _reading(line: str, in_code: bool) -> tuple[Reading, bool]:
    """``line``'s reading (``classify``) and whether the line after it is in a code block."""
    if _FENCE.match(line):
        return ("fence", None, ""), not in_code
    if in_code:
        m = _COMMENT.match(line)
        return (("comment", None, m.group(1)) if m else (None, None, "")), True
    m = _HEADING.match(line)
    if m:
        return ("heading", len(m.group(1)), m.group(2)), False
    m = _BULLET.match(line)
    return (("bullet", None, m.group(1)) if m else (None, None, "")), False


def split_pieces(lines: Iterable[str], imap: ImportMap, source: str, *,
                 keep_lines: bool = True) -> list[Piece]:
    """The (host, step) pieces of a report's ``lines`` (from file ``source``), each with its
    lines (``keep_lines``) and where it ends. An ``InputError`` when a rule of the map
    matches nothing there, or no piece is found."""
    splitter = PieceSplitter(imap, source, keep_lines=keep_lines)
    splitter.feed(1, lines)
    return splitter.finish()


class PieceSplitter:
    """``split_pieces`` fed a block of lines at a time (``feed``), as a file is read."""

    def __init__(self, imap: ImportMap, source: str, *, keep_lines: bool = True) -> None:
        self.imap, self.source, self.keep_lines = imap, source, keep_lines
        self.section: int | None = None  # the level of the section's heading, inside one
        self.matched = {"within": imap.within is None, "host": False, "step": False}
        self.host: str | None = None
        self.step: str | None = None
        self.outer: str | None = None
        self.piece: Piece | None = None
        self.pieces: list[Piece] = []
        self.in_code = False
        self.number = 0

    def _close(self, number: int) -> None:
        """The piece being read (if any) ends before line ``number``."""
        if self.piece is not None and self.piece.end > number:
            self.piece.end = number

    def feed(self, number: int, lines: Iterable[str]) -> None:
        """The next lines of the report, the first numbered ``number``."""
        imap, within, source = self.imap, self.imap.within, self.source
        keep = self.keep_lines
        n = number - 1
        for n, line in enumerate(lines, number):
            kind, level, text = self._classify(line)
            if within is not None and kind == "heading":
                assert level is not None
                if self.section is not None and level <= self.section:
                    self.section = None
                    self._close(n)
                if self.section is None and within.starts(level, text):
                    self.section, self.matched["within"] = level, True
                    self._close(n)
                    self.host = self.step = self.outer = self.piece = None
                    continue
            if within is not None and self.section is None:
                continue
            piece = self.piece
            if kind == "fence":  # (never a marker; kept in the piece, as the report has it)
                if piece is not None and keep:
                    piece.lines.append(line)
                continue
            h = _named(imap.host, kind, level, text, line, where=f"{source}:{n}")
            s = _named(imap.step, kind, level, text, line, where=f"{source}:{n}")
            if h is None and s is None:
                if piece is not None and keep:
                    piece.lines.append(line)
                continue
            self._close(n)
            self._marker(n, h, s)
        self.number = n

    def _marker(self, number: int, h: str | None, s: str | None) -> None:
        self.matched["host"] = self.matched["host"] or h is not None
        self.matched["step"] = self.matched["step"] or s is not None
        if self.outer is None:
            self.outer = "host" if h is not None else "step"
        if h is not None:
            self.host, self.step = h, s if s is not None else (
                None if self.outer == "host" else self.step)
        else:
            self.step, self.host = s, (None if self.outer == "step" else self.host)
        self.piece = Piece(self.host, self.step, number) \
            if self.host is not None and self.step is not None else None
        if self.piece is not None:
            self.pieces.append(self.piece)

    def _classify(self, line: str) -> Reading:
        found, self.in_code = _reading(line, self.in_code)
        return found

    def finish(self) -> list[Piece]:
        """The pieces (each one's end set); ``InputError`` as ``split_pieces`` says."""
        self._close(self.number + 1)
        _check(self.matched, self.pieces, self.imap, self.source)
        return self.pieces


#: Seconds a map's regular expressions may take over one file (a report of thousands of
#: lines takes milliseconds; ``importer`` enforces it; docs/import.md).
MATCH_SECONDS = 5.0


class MatchTimeout(Exception):
    """Raised into a map's regular expression by whoever bounds its time (``importer``)."""


def control_error(where: str, what: str, name: str) -> InputError:
    """The sentence refusing ``name``: it would clear a screen or break a table when shown."""
    return InputError(where, f"the {what} '{escape_control(name)}' holds "
                      "control characters (a newline, an escape sequence); benchtui does "
                      "not take them in names", "remove them from the report")


def _named(rule: MarkerRule, kind: str | None, level: int | None, text: str, line: str, *,
           where: str) -> str | None:
    try:
        name = rule.name(kind, level, text, line)
    except MatchTimeout:
        raise InputError(where, f"the {rule.describe()} ran past {MATCH_SECONDS:g} s "
                         "on this line (a regular expression that backtracks without end, such "
                         "as (a+)+$)",
                         "write a simpler match") from None
    if name is not None and CONTROL.search(name):
        raise control_error(where, f"{rule.role} name", name)
    return name


def _check(matched: dict[str, bool], pieces: list[Piece], imap: ImportMap,
           source: str) -> None:
    within = imap.within
    if not matched["within"]:
        assert within is not None
        raise InputError(imap.path, f'within = "{within.written}" matched no heading of '
                         f"{source}", "write the heading as the report has it")
    where = f' under "{within.written}"' if within is not None else ""
    for rule in (imap.host, imap.step):
        if not matched[rule.role]:
            at = f"{imap.path}:{rule.line}" if rule.line else imap.path
            raise InputError(at, f"the {rule.describe()} matched no line of {source}{where}")
    if not pieces:
        raise InputError(imap.path, f"no line of {source}{where} comes after both a host and "
                         "a step marker, so it holds no piece of output")
