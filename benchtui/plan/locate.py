"""Line numbers for plan errors.

``tomllib`` returns plain dicts with no positions, so the plan's text is scanned once more to
find where each table and key starts: ``KeyIndex(text).line(("step", 1, "args"))`` is the
line of ``args`` in the second ``[[step]]``. The scan follows TOML's layout rules closely
enough for that (table headers, arrays of tables, dotted and quoted keys, multi-line strings
and arrays, comments); what it cannot place (a key inside an inline table) gets the line of
the nearest enclosing key or table that it can. TOML syntax errors carry their position in
tomllib's message, "(at line N, column M)", which ``syntax_error`` turns into a ``PlanError``.
"""

from __future__ import annotations

import re
import tomllib

from benchtui.errors import PlanError

PathPart = str | int
KeyPath = tuple[PathPart, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_END = re.compile(r"\s*\(at end of document\)\s*$")


def _read_key(text: str, pos: int) -> tuple[list[str], int] | None:
    """A (dotted) key starting at ``pos``: its parts and the position after it."""
    parts: list[str] = []
    while True:
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos >= len(text):
            return None
        char = text[pos]
        if char in "\"'":
            end = pos + 1
            while end < len(text) and text[end] != char:
                end += 2 if char == '"' and text[end] == "\\" else 1
            if end >= len(text):
                return None
            raw = text[pos + 1:end]
            parts.append(raw.replace('\\"', '"').replace("\\\\", "\\") if char == '"' else raw)
            pos = end + 1
        else:
            m = _BARE.match(text, pos)
            if not m:
                return None
            parts.append(m.group(0))
            pos = m.end()
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] == ".":
            pos += 1
            continue
        return parts, pos


class _Scanner:
    """Tracks what spans lines: multi-line strings and brackets."""

    def __init__(self) -> None:
        self.in_string: str | None = None  # '"""' or "'''"
        self.depth = 0
        #: The line where the string or bracket still open was opened.
        self.opened_at = 0
        self.number = 0

    @property
    def at_statement(self) -> bool:
        return self.in_string is None and self.depth == 0

    def scan(self, line: str, pos: int) -> None:
        """Follow ``line`` from ``pos`` to its end."""
        n = len(line)
        while pos < n:
            if self.in_string is not None:
                close = self.in_string
                if close == '"""' and line[pos] == "\\":
                    pos += 2
                    continue
                if line.startswith(close, pos):
                    self.in_string = None
                    pos += 3
                    continue
                pos += 1
                continue
            char = line[pos]
            if char == "#":
                return
            if line.startswith('"""', pos) or line.startswith("'''", pos):
                self.in_string = line[pos:pos + 3]
                if self.depth == 0:
                    self.opened_at = self.number
                pos += 3
                continue
            if char in "\"'":
                end = pos + 1
                while end < n and line[end] != char:
                    end += 2 if char == '"' and line[end] == "\\" else 1
                pos = end + 1
                continue
            if char in "[{":
                if self.depth == 0:
                    self.opened_at = self.number
                self.depth += 1
            elif char in "]}":
                self.depth = max(0, self.depth - 1)
            pos += 1


class KeyIndex:
    """Where every table header and key of a TOML text starts (1-based lines)."""

    def __init__(self, text: str) -> None:
        self.lines: dict[KeyPath, int] = {}
        self._array_counts: dict[KeyPath, int] = {}
        self._build(text)

    def _note(self, path: KeyPath, number: int) -> None:
        for n in range(1, len(path) + 1):
            self.lines.setdefault(path[:n], number)

    def _resolve(self, parts: list[str]) -> KeyPath:
        """A header's key with the current index of every array of tables along it."""
        path: KeyPath = ()
        for part in parts:
            path = (*path, part)
            if path in self._array_counts:
                path = (*path, self._array_counts[path] - 1)
        return path

    def _build(self, text: str) -> None:
        table: KeyPath = ()
        scanner = _Scanner()
        for number, line in enumerate(text.split("\n"), start=1):
            scanner.number = number
            if not scanner.at_statement:
                scanner.scan(line, 0)
                continue
            stripped = line.lstrip()
            pos = len(line) - len(stripped)
            if stripped.startswith("[["):
                key = _read_key(line, pos + 2)
                if key is not None:
                    parts = key[0]
                    parent = self._resolve(parts[:-1])
                    array = (*parent, parts[-1])
                    self._array_counts[array] = self._array_counts.get(array, 0) + 1
                    table = (*array, self._array_counts[array] - 1)
                    self._note(table, number)
                    pos = key[1]
            elif stripped.startswith("["):
                key = _read_key(line, pos + 1)
                if key is not None:
                    table = self._resolve(key[0])
                    self._note(table, number)
                    pos = key[1]
            else:
                key = _read_key(line, pos)
                if key is not None and line[key[1]:key[1] + 1] == "=":
                    self._note((*table, *key[0]), number)
                    pos = key[1] + 1
                elif stripped.startswith("#"):
                    continue
            scanner.scan(line, pos)

    def line(self, path: KeyPath) -> int | None:
        """The line of ``path``, or of its nearest enclosing key or table that was found."""
        for n in range(len(path), 0, -1):
            found = self.lines.get(path[:n])
            if found is not None:
                return found
        return None


def unclosed_line(text: str) -> int | None:
    """The line where a string or list that is never closed starts, if one is."""
    scanner = _Scanner()
    for number, line in enumerate(text.split("\n"), start=1):
        scanner.number = number
        scanner.scan(line, 0)
    return None if scanner.at_statement else scanner.opened_at or None


def syntax_error(file: str, text: str, error: tomllib.TOMLDecodeError) -> PlanError:
    """A TOML syntax error as one PlanError: the line, what is wrong, what to write."""
    message = str(error)
    line: int | None = None
    column: int | None = None
    m = _POSITION.search(message)
    if m:
        line, column = int(m.group(1)), int(m.group(2))
        message = message[:m.start()]
    else:
        end = _END.search(message)
        if end:
            message = message[:end.start()]
            line = unclosed_line(text) or max(
                1, text.count("\n") + (0 if text.endswith("\n") else 1))
    if message.startswith("Unclosed"):
        opened = unclosed_line(text)
        if opened is not None and (line is None or opened <= line):
            line, column = opened, None
    source = text.split("\n")[line - 1] if line and line <= text.count("\n") + 1 else ""
    reason = f"TOML syntax error: {message[:1].lower()}{message[1:]}"
    if column is not None:
        reason += f" (column {column})"
    return PlanError(file, reason, line, _syntax_hint(message, source))


_UNQUOTED = re.compile(r"^\s*([A-Za-z0-9_.\"'-]+)\s*=\s*([^\"'\[{\s#][^#]*?)\s*(?:#.*)?$")


def _syntax_hint(message: str, source: str) -> str:
    """What to write instead, for the mistakes people make most."""
    m = _UNQUOTED.match(source)
    if message.startswith("Invalid value") and m:
        key, value = m.group(1), m.group(2).replace("\\", "\\\\").replace('"', '\\"')
        return f'text needs quotes: write {key} = "{value}"'
    if "twice" in message and ("step" in message or "monitor" in message):
        return "each [[step]] and [[monitor]] needs double brackets"
    if "twice" in message:
        return "each [table] may appear only once; merge the two"
    if "overwrite" in message:
        return "this key is already set above; keep one of the two"
    if "Unclosed array" in message:
        return 'close the list with "]"'
    if "Unclosed" in message or "Unterminated" in message or "Illegal character '\\n'" in message:
        return "close the string with the same quote it starts with"
    if "Expected '=' after a key" in message:
        return 'write key = value, e.g. tool = "fio"'
    return "see https://toml.io for the syntax"
