"""What changed between a session and its baseline session: the plans' differences step by
step, and the hosts' facts that differ.

A report against a session baseline (``--baseline session=FILE``) opens with these, so that a
reader sees *why* the figures may differ before the figures: an engine changed in a step's
arguments, a sweep's values, a host added, a kernel, a scheduler or a tool version.

- The plans are the TOML each session recorded (``SessionMeta.plan_text``), compared table
  by table: ``[[step]]`` tables matched by name (``compare.py``'s rule for steps), their
  arguments word by word (``--ioengine=psync`` -> ``--ioengine=libaio``), their matrix
  values, hosts and every other key; ``[hosts.NAME]`` tables by name; the other tables
  key by key. A jobfile is named by its path (its content is not in the session).
- The facts (``session/facts.py``) of each host and its baseline host (the pairs
  ``compare.host_pairs`` gives: by name, or the one ``--baseline-host``), flattened to one
  line per fact (``block_devices.vda.scheduler``).

Everything is plain data (``Change``); the report lays it out.
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: Keys of the facts that change from run to run without meaning anything (a file's size
#: after the previous session wrote it is still a fact: it is kept).
_VOLATILE_FACTS = frozenset({"hostname"})
#: At most this many facts per host are listed (a new machine differs in everything).
MAX_FACTS = 40


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: ``where`` (``step rand``, ``host alpha``, ``plan``), ``what`` (a key,
    a fact), and its value in the baseline (``before``) and in the session (``after``);
    "" for a value that is absent on that side."""

    where: str
    what: str
    before: str
    after: str

    def describe(self, mark: str = "") -> str:
        """In words, each value between ``mark`` (a Markdown backquote, say)."""
        before, after = f"{mark}{self.before}{mark}", f"{mark}{self.after}{mark}"
        if not self.before and not self.after:  # a note: "plan: not recorded in ..."
            return f"{self.where}: {self.what}"
        if not self.before:
            return f"{self.where}: {self.what} {after} (not in the baseline)"
        if not self.after:
            return f"{self.where}: {self.what} {before} (only in the baseline)"
        return f"{self.where}: {self.what} {before} → {after}"


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} = {_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value)


def _words(value: object) -> list[str]:
    text = " ".join(value) if isinstance(value, list) else str(value)
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _word_change(where: str, key: str, before: object, after: object) -> Change:
    """Arguments compared word by word: the words only the baseline has, and only the
    session has (``--ioengine=psync`` -> ``--ioengine=libaio``)."""
    old, new = _words(before), _words(after)
    gone = [w for w in old if w not in new]
    added = [w for w in new if w not in old]
    if not gone and not added:  # the same words in another order
        return Change(where, key, " ".join(old), " ".join(new))
    return Change(where, key, " ".join(gone) or "(nothing)", " ".join(added) or "(nothing)")


def _table_changes(where: str, before: Mapping[str, object], after: Mapping[str, object]
                   ) -> list[Change]:
    out: list[Change] = []
    for key in dict.fromkeys([*before, *after]):
        b, a = before.get(key), after.get(key)
        if b == a:
            continue
        if key in ("args", "server_args") and b is not None and a is not None:
            out.append(_word_change(where, key, b, a))
        elif key == "matrix" and isinstance(b, Mapping) and isinstance(a, Mapping):
            for option in dict.fromkeys([*b, *a]):
                if b.get(option) != a.get(option):
                    out.append(Change(where, f"matrix {option}",
                                      "" if b.get(option) is None else _text(b.get(option)),
                                      "" if a.get(option) is None else _text(a.get(option))))
        else:
            out.append(Change(where, key, "" if b is None else _text(b),
                              "" if a is None else _text(a)))
    return out


def _named(tables: object) -> dict[str, Mapping[str, object]]:
    """``[[step]]`` tables by name (the n-th unnamed one as ``#n``)."""
    out: dict[str, Mapping[str, object]] = {}
    if isinstance(tables, list):
        for i, t in enumerate(tables):
            if isinstance(t, Mapping):
                out[str(t.get("name") or t.get("tool") or f"#{i + 1}")] = t
    return out


def _sections(before: Mapping[str, object], after: Mapping[str, object], key: str,
              what: str, tables: bool) -> list[Change]:
    b = _named(before.get(key)) if tables else dict(before.get(key) or {})  # type: ignore[call-overload]
    a = _named(after.get(key)) if tables else dict(after.get(key) or {})  # type: ignore[call-overload]
    out: list[Change] = []
    for name in dict.fromkeys([*b, *a]):
        if name not in b:
            out.append(Change(f"{what} {name}", "added:", "", _text(a[name])))
        elif name not in a:
            out.append(Change(f"{what} {name}", "removed:", _text(b[name]), ""))
        elif isinstance(b[name], Mapping) and isinstance(a[name], Mapping):
            out += _table_changes(f"{what} {name}", b[name], a[name])
        elif b[name] != a[name]:
            out.append(Change(what, name, _text(b[name]), _text(a[name])))
    return out


def plan_changes(before_text: str, after_text: str) -> list[Change]:
    """The differences of two plans' TOML (module doc); one Change saying so when either
    is missing or cannot be read."""
    if not before_text or not after_text:
        missing = "the baseline" if not before_text else "the session"
        return [Change("plan", f"not recorded in {missing}", "", "")] \
            if before_text != after_text else []
    try:
        before, after = tomllib.loads(before_text), tomllib.loads(after_text)
    except tomllib.TOMLDecodeError:
        return [Change("plan", "cannot be compared (a plan is not valid TOML)", "", "")]
    out = _sections(before, after, "step", "step", tables=True)
    out += _sections(before, after, "monitor", "monitor", tables=True)
    out += _sections(before, after, "hosts", "host", tables=False)
    for key in dict.fromkeys([*before, *after]):
        if key in ("step", "monitor", "hosts"):
            continue
        b, a = before.get(key), after.get(key)
        if isinstance(b, Mapping) and isinstance(a, Mapping):
            out += _table_changes(f"[{key}]", b, a)
        elif b != a:
            out.append(Change("plan", key, "" if b is None else _text(b),
                              "" if a is None else _text(a)))
    return out


def flat_facts(facts: Mapping[str, object], prefix: str = "") -> dict[str, str]:
    """A host's facts as ``key -> text``, nested keys joined by dots
    (``block_devices.vda.scheduler``); lists of mounts keyed by their mount point."""
    out: dict[str, str] = {}
    for key, value in facts.items():
        name = f"{prefix}{key}"
        if key in _VOLATILE_FACTS:
            continue
        if isinstance(value, Mapping) and key == "files":  # a file's facts on one line
            for path, file_facts in value.items():
                out[f"{name} {path}"] = _text(file_facts)
        elif isinstance(value, Mapping):
            out.update(flat_facts(value, name + "."))
        elif isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
            for v in value:
                tag = str(v.get("mountpoint") or v.get("name") or len(out))
                out[f"{name}.{tag}"] = _text(v)
        else:
            out[name] = _text(value)
    return out


def fact_changes(before: Mapping[str, Mapping[str, object]],
                 after: Mapping[str, Mapping[str, object]],
                 pairs: Iterable[tuple[str, str]]) -> list[Change]:
    """The facts that differ between each (host, baseline host) of ``pairs``
    (``compare.host_pairs``), at most ``MAX_FACTS`` per host (the last Change says how many
    more)."""
    found: dict[tuple[str, str, str], list[str]] = {}
    per_host: dict[str, int] = {}
    for host, base in pairs:
        if host not in after or base not in before:
            continue
        a, b = flat_facts(after[host]), flat_facts(before[base])
        name = host if host == base else f"{host} (against {base})"
        for key in dict.fromkeys([*b, *a]):
            if a.get(key) != b.get(key):
                per_host[name] = per_host.get(name, 0) + 1
                if per_host[name] <= MAX_FACTS:
                    found.setdefault((key, b.get(key, ""), a.get(key, "")), []).append(name)
    # a fact that changed alike on several hosts is said once, for all of them
    out = [Change(("host " if len(hosts) == 1 else "hosts ") + ", ".join(hosts), key,
                  before_text, after_text)
           for (key, before_text, after_text), hosts in found.items()]
    out += [Change(f"host {name}", f"and {n - MAX_FACTS} more facts", "…", "…")
            for name, n in per_host.items() if n > MAX_FACTS]
    return out


def plan_description(plan_text: str) -> str:
    """The ``[session] description`` of a plan's TOML ("" when none or unreadable)."""
    try:
        session = tomllib.loads(plan_text).get("session") if plan_text else None
    except tomllib.TOMLDecodeError:
        return ""
    text = session.get("description") if isinstance(session, Mapping) else None
    return text if isinstance(text, str) else ""
