"""Finding parsers by name and choosing them from the content of a stream.

Every module of this package that defines a ``Parser`` subclass with a ``name`` is a parser;
no list is kept by hand. Names are what ``--tool`` takes (``fio-json``, ``iostat``, ...); a
tool with several output formats (fio) can also be named by its tool name, and the format is
then chosen from the content.
"""

from __future__ import annotations

import importlib
from functools import cache

from benchtui.errors import UsageError
from benchtui.parsers._prefixes import LinePrefixes, PrefixShape, find_prefixes
from benchtui.parsers.base import Parser

#: A parser is chosen for a stream when it scores at least this much.
DETECT_THRESHOLD = 50
#: How much of a stream detection looks at.
DETECT_HEAD_BYTES = 2 * 1024 * 1024


@cache
def all_parsers() -> dict[str, type[Parser]]:
    """name -> parser class, for every parser module in this package."""
    import pkgutil  # (here: it imports typing, ~13 M instructions; --tool NAME does not list)

    import benchtui.parsers as package

    found: dict[str, type[Parser]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name in ("base", "registry") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"benchtui.parsers.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Parser)
                and obj is not Parser
                and obj.__module__ == module.__name__
                and obj.name
            ):
                found[obj.name] = obj
    return found


def tool_names() -> list[str]:
    """Every name ``--tool`` accepts: parser names, their aliases and tool names."""
    names: set[str] = set()
    for name, cls in all_parsers().items():
        names.add(name)
        names.add(cls.tool)
        names.update(cls.aliases)
    return sorted(names)


def _named_module(name: str) -> type[Parser] | None:
    """The parser called ``name`` when its module is named after it (``fio-json`` in
    ``fio_json``): found without importing every parser and compiling its patterns (a third
    of ``benchtui parse --tool NAME``'s start-up)."""
    module_name = name.replace("-", "_")
    if not module_name.isidentifier() or module_name.startswith("_") or module_name in (
            "base", "registry"):
        return None
    try:
        module = importlib.import_module(f"benchtui.parsers.{module_name}")
    except ImportError:
        return None
    for obj in vars(module).values():
        if (isinstance(obj, type) and issubclass(obj, Parser) and obj.name == name
                and obj.__module__ == module.__name__):
            return obj
    return None


def candidates(name: str) -> list[type[Parser]]:
    """The parsers a ``--tool`` name stands for (several when it names a tool with several
    formats, e.g. ``fio``)."""
    named = _named_module(name)
    if named is not None:
        return [named]
    parsers = all_parsers()
    if name in parsers:
        return [parsers[name]]
    matches = [c for c in parsers.values() if name in c.aliases]
    if matches:
        return matches
    matches = [c for c in parsers.values() if c.tool == name]
    if matches:
        return matches
    raise UsageError(f"unknown tool {name!r}; known tools: {', '.join(tool_names())}")


def scores(head: str, among: list[type[Parser]] | None = None) -> list[tuple[int, type[Parser]]]:
    """(score, parser) for every parser that recognises something in ``head``, best first."""
    pool = among if among is not None else list(all_parsers().values())
    scored = []
    for cls in pool:
        try:
            score = int(cls.detect(head))
        except Exception:  # noqa: BLE001 - a detector bug must not break the others
            score = 0
        if score > 0:
            scored.append((score, cls))
    scored.sort(key=lambda pair: (-pair[0], pair[1].name))
    return scored


def detect(head: str, among: list[type[Parser]] | None = None) -> list[type[Parser]]:
    """The parsers to run over a stream that starts with ``head``.

    A report pasted together from several tools gets one parser per tool found. Within one
    tool (fio's json/text/terse, iperf3's text/json) only the best-scoring format is kept;
    parsers of different tools that claim the same lines are told apart by their
    ``conflicts`` (e.g. iperf3 versus iperf 2), the higher score winning.
    """
    chosen: list[type[Parser]] = []
    for score, cls in scores(head, among):
        if score < DETECT_THRESHOLD:
            continue
        if any(c.tool == cls.tool or c.name in cls.conflicts or cls.name in c.conflicts
               for c in chosen):
            continue
        chosen.append(cls)
    return chosen


def choose(head: str, among: list[type[Parser]] | None = None) -> list[type[Parser]]:
    """The parsers for a stream that starts with ``head``, ``among`` the ones a ``--tool``
    name stands for (None: all). A name standing for a single format is used as told even
    if detection is unsure; a tool with several formats picks by content."""
    if among is not None and len(among) == 1:
        return among
    found = detect(head, among)
    if not found and among:
        ranked = scores(head, among)
        found = [ranked[0][1]] if ranked else among[:1]
    return found


def choose_stream(head: str, among: list[type[Parser]] | None = None
                  ) -> tuple[PrefixShape | None, list[type[Parser]]]:
    """The line prefixes of a stream that starts with ``head`` (pdsh's ``host: ``, a logger's
    stamp: ``_prefixes``), or None, and its parsers (``choose``) for its lines once those are
    removed. A prefix shape carried by most lines is kept only when the output is recognised at
    least as well without it (and at ``DETECT_THRESHOLD`` at least, unless ``--tool`` names
    the tool), and a stamp alone only when the tool does not stamp its own lines (SPDK's log,
    rados bench --show-time: ``Parser.stamps_own_lines``)."""
    shape = find_prefixes(head)
    if shape is not None:
        stripped = LinePrefixes(shape).strip_head(head)
        best = max((score for score, _ in scores(stripped, among)), default=0)
        raw = max((score for score, _ in scores(head, among)), default=0)
        if best >= raw and (best >= DETECT_THRESHOLD or among is not None):
            chosen = choose(stripped, among)
            if shape.hosts or not any(c.stamps_own_lines for c in chosen):
                return shape, chosen
    return None, choose(head, among)

