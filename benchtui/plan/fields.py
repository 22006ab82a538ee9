"""Reading typed values out of a parsed TOML table, with errors that say where and what to write.

A ``Fields`` object wraps one TOML table of the plan (``[session]``, a host, a step, a monitor)
together with its key path and a name for messages (``step "randrw-4k"``); its readers return
Python values or raise ``PlanError`` with the file, the line of the offending key and a hint
built from the key's example (``write port = 22``).
"""

from __future__ import annotations

import datetime
import difflib
import math
import re
import shlex
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from benchtui.errors import PlanError
from benchtui.plan.locate import KeyIndex, KeyPath

#: What a name (session, host, step, monitor) may be made of: it labels samples and files.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Source:
    """A plan file's name and text: makes PlanErrors that point at a key's line."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.text = text

    @cached_property
    def index(self) -> KeyIndex:
        return KeyIndex(self.text)

    def line(self, path: KeyPath) -> int | None:
        return self.index.line(path)

    def error(self, path: KeyPath, reason: str, hint: str = "") -> PlanError:
        return PlanError(self.file, reason, self.line(path), hint)


def type_name(value: object) -> str:
    """How a TOML value's type is called in messages."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime.date | datetime.time):
        return "a date or time"
    return type(value).__name__


def shown(value: object) -> str:
    """A value as the user wrote it, shortened."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif isinstance(value, dict):
        text = "{...}"
    else:
        text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` was most likely meant to be, if one is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``did you mean 'hosts'?`` or ``""``."""
    close = closest(word, choices)
    return f"did you mean '{close}'?" if close else ""


class Fields:
    """One table of the plan, read key by key."""

    def __init__(self, source: Source, table: Mapping[str, Any], path: KeyPath, what: str,
                 examples: Mapping[str, str]) -> None:
        self.source = source
        self.table = table
        self.path = path
        #: The table's name in messages: ``[session]``, ``host "db1"``, ``step "net"``.
        self.what = what
        #: key -> what to write, e.g. ``port = 22``; the keys the table may hold.
        self.examples = examples

    def error(self, key: str | None, reason: str, hint: str = "") -> PlanError:
        path = self.path if key is None else (*self.path, key)
        return self.source.error(path, reason, hint)

    def example(self, key: str) -> str:
        return f"write {self.examples[key]}" if key in self.examples else ""

    def check_keys(self) -> None:
        """Every key must be one the table may hold."""
        for key in self.table:
            if key not in self.examples:
                hint = did_you_mean(key, self.examples) or \
                    f"the keys of {self.kind_name()} are: {', '.join(self.examples)}"
                raise self.error(key, f"unknown key '{key}' in {self.what}", hint)

    def kind_name(self) -> str:
        return self.what.split(" ")[0] if not self.what.startswith("[") else self.what

    def has(self, key: str) -> bool:
        return key in self.table

    def wrong_type(self, key: str, expected: str, value: object) -> PlanError:
        return self.error(
            key, f"{key} of {self.what} must be {expected}, not {type_name(value)} "
                 f"({shown(value)})", self.example(key))

    def _text(self, key: str, value: object, *, expected: str = "text") -> str:
        if not isinstance(value, str):
            raise self.wrong_type(key, expected, value)
        if "\x00" in value:
            raise self.error(key, f"{key} of {self.what} holds a NUL character, which no "
                                  "command line can carry", "remove the \\u0000")
        return value

    def text(self, key: str, default: str | None = None, *, empty_ok: bool = False
             ) -> str | None:
        if key not in self.table:
            return default
        value = self._text(key, self.table[key])
        if not empty_ok and not value.strip():
            raise self.error(key, f"{key} of {self.what} is empty", self.example(key))
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        if key not in self.table:
            return default
        value = self.table[key]
        if not isinstance(value, bool):
            raise self.wrong_type(key, "true or false", value)
        return value

    def whole(self, key: str, default: int | None, low: int, high: int) -> int | None:
        if key not in self.table:
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.wrong_type(key, "a whole number", value)
        if not low <= value <= high:
            raise self.error(key, f"{key} of {self.what} must be between {low} and {high}, "
                                  f"not {value}", self.example(key))
        return value

    def seconds(self, key: str, default: float | None, *, zero_ok: bool = False
                ) -> float | None:
        """A duration in seconds: a positive (or zero) finite number."""
        if key not in self.table:
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.wrong_type(key, "a number of seconds", value)
        number = float(value)
        if not math.isfinite(number) or number < 0 or (number == 0 and not zero_ok) \
                or number > 1e9:
            limit = "zero or more" if zero_ok else "more than zero"
            raise self.error(key, f"{key} of {self.what} must be {limit} seconds, not "
                                  f"{shown(value)}", self.example(key))
        return number

    def text_list(self, key: str, *, single_ok: bool = False) -> list[str] | None:
        """A list of texts (or one text, when ``single_ok``); None when absent."""
        if key not in self.table:
            return None
        value = self.table[key]
        if isinstance(value, str) and single_ok:
            return [self._text(key, value)]
        if not isinstance(value, list):
            raise self.wrong_type(key, "a list of texts", value)
        items = []
        for n, item in enumerate(value, start=1):
            if not isinstance(item, str):
                raise self.error(key, f"item {n} of {key} in {self.what} must be text, not "
                                      f"{type_name(item)} ({shown(item)})", self.example(key))
            items.append(self._text(key, item))
        return items

    def words(self, key: str) -> tuple[str, ...] | None:
        """A command line: text split like a shell would (no expansion), or a list of words."""
        if key not in self.table:
            return None
        value = self.table[key]
        if isinstance(value, str):
            text = self._text(key, value)
            try:
                words = shlex.split(text)
            except ValueError as error:
                raise self.error(
                    key, f"{key} of {self.what} cannot be split into words: {error}",
                    'close the quote, or give a list of words: '
                    f'{key} = ["--filename=/data/fio.dat", "--rw=read"]') from None
            return tuple(words)
        if isinstance(value, list):
            return tuple(self.text_list(key) or ())
        raise self.wrong_type(key, "text or a list of texts", value)

    def text_table(self, key: str, *, key_check: str = "") -> dict[str, str]:
        """A table of text values (labels, env); ``key_check`` 'name' requires identifiers."""
        if key not in self.table:
            return {}
        value = self.table[key]
        if not isinstance(value, dict):
            raise self.wrong_type(key, "a table", value)
        out: dict[str, str] = {}
        for name, item in value.items():
            if key_check == "name" and not (name.isidentifier() and name.isascii()):
                raise self.source.error(
                    (*self.path, key, name), f"'{name}' in {key} of {self.what} is not a "
                    "variable name", "use letters, digits and _ (not first), e.g. CEPH_ARGS")
            if not isinstance(item, str):
                raise self.source.error(
                    (*self.path, key, name), f"{key}.{name} of {self.what} must be text, not "
                    f"{type_name(item)} ({shown(item)})", f'write {name} = "{item}"')
            out[name] = self._text(key, item)
        return out


def checked_name(fields: Fields, key: str, value: str) -> str:
    """A name that can label samples and name files."""
    if not NAME.fullmatch(value):
        fixed = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-._")[:64] or "name1"
        raise fields.error(key, f"{key} {shown(value)} of {fields.what} may hold only letters, "
                                "digits, '.', '_' and '-' (64 at most, the first a letter or "
                                "digit)", f'write {key} = "{fixed}"')
    return value
