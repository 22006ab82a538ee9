"""fio's options in a plan, checked as fio will check them: names, then values.

A step's ``args`` are read the way fio's ``getopt_long_only`` reads its command line: ``--key``
or ``-key``, a value after ``=`` or as the next word (for every option but flags), and a long
option may be shortened to any unambiguous prefix (``--runti=10`` is ``--runtime``). A jobfile's
lines are read the way fio's ``parse_jobs_ini`` does: ``key=value`` or ``key`` alone, names
exactly as written, everything after ``;`` or ``#`` a comment. Names are checked against
``fio_option_names`` (fio's job options, its engines' options, aliases, and fio's own
command-line options for ``args``), with fio's own "did you mean" rule (parse.c,
``string_distance_ok``: a Levenshtein distance of at most half the name). Values are checked
where fio's parser (``fio_values``) refuses or misreads them: numbers, sizes, times, booleans,
and options with a fixed list of values (``rw``, ``ioengine``...).

Not checked: values holding a placeholder, ``$`` (a jobfile's environment variables) or an
arithmetic expression (``(...)``); names unknown to fio when a job's ioengine is an external
engine (SPDK's, ``external:...``), whose own options fio only knows once it is loaded; names of
a fio newer than the names' (``SINCE``): ``newer_options`` returns them, for preflight to check
against each host's fio version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from benchtui.plan.fio_option_names import (
    ALIASES,
    CHOICES,
    COMMAND_OPTIONS,
    ENGINE_OPTIONS,
    FLAG_OPTIONS,
    GENERAL_OPTIONS,
    SINCE,
    VALUE_KINDS,
)
from benchtui.plan.fio_rewrite import canonical_option as canonical
from benchtui.plan.fio_value_check import closest, not_checked, value_problem

_JOB_OPTIONS = GENERAL_OPTIONS | ENGINE_OPTIONS | ALIASES.keys()
_LONG_OPTIONS = sorted(_JOB_OPTIONS | COMMAND_OPTIONS.keys())


@dataclass(frozen=True)
class FioOption:
    """One option: ``name`` is fio's (a prefix completed; an alias kept) or, when fio has no
    such option, as written; ``written`` is the words or line as written (``--iodepth 8``);
    ``line`` is the jobfile's line (None in args)."""

    name: str
    written: str
    value: str | None
    known: bool
    line: int | None = None
    #: A prefix that fits several options: the options it fits.
    ambiguous: tuple[str, ...] = ()


@dataclass(frozen=True)
class FioOptionProblem:
    """An option fio would refuse or misread: the option as written, why, what to write."""

    option: str
    reason: str
    hint: str = ""
    line: int | None = None


def _resolve_long(name: str) -> tuple[str | None, tuple[str, ...]]:
    """getopt_long's lookup: an exact name, else the one option all matching prefixes name."""
    if name in _JOB_OPTIONS or name in COMMAND_OPTIONS:
        return name, ()
    if not name:
        return None, ()
    matches = [o for o in _LONG_OPTIONS if o.startswith(name)]
    if len({canonical(o) for o in matches}) == 1:
        return matches[0], ()
    return None, tuple(matches)


def _takes_next_word(name: str) -> bool:
    if name in COMMAND_OPTIONS and name not in _JOB_OPTIONS:
        return COMMAND_OPTIONS[name]
    return canonical(name) not in FLAG_OPTIONS and VALUE_KINDS.get(name) != "flag"


def args_options(args: Iterable[str]) -> list[FioOption]:
    """The options of fio's command line ``args`` (words), in order; jobfile names and
    other words that are not options are left out."""
    words = list(args)
    out: list[FioOption] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            break
        if not word.startswith("-") or word == "-":
            continue
        body = word[2:] if word.startswith("--") else word[1:]
        written, sep, value = body.partition("=")
        name, ambiguous = _resolve_long(written)
        if name is None and not word.startswith("--") and len(written) == 1:
            continue  # a short option (-o FILE): not a job option
        given: str | None = value if sep else None
        as_written = word
        if name is not None and not sep and _takes_next_word(name) and i < len(words):
            given = words[i]
            as_written = f"{word} {words[i]}"
            i += 1
        out.append(FioOption(name or written, as_written, given, name is not None,
                             ambiguous=ambiguous))
    return out


def jobfile_options(text: str) -> list[FioOption]:
    """The options of a jobfile's sections, with their lines."""
    out: list[FioOption] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = re.split(r"[;#]", raw, maxsplit=1)[0].strip()
        if not line or line.startswith("[") or re.match(r"include\s", line):
            continue
        written, sep, value = line.partition("=")
        name = written.strip()
        given = value.strip() if sep else None
        out.append(FioOption(name, line, given, name in _JOB_OPTIONS, line=number))
    return out


def _engine_of(options: list[FioOption]) -> list[str]:
    return [o.value.split(":", 1)[0] for o in options
            if canonical(o.name) == "ioengine" and o.value and not not_checked(o.value)]


def external_engine(options: list[FioOption]) -> bool:
    """Whether a job uses an engine fio loads from elsewhere (``external:``, a path, or a name
    that is neither fio's nor a misspelling of one: SPDK's plugin engine, say)."""
    for engine in _engine_of(options):
        if engine.startswith("external") or "/" in engine:
            return True
        if engine not in CHOICES["ioengine"] and \
                closest(engine, CHOICES["ioengine"]) is None:
            return True
    return False


def check_options(options: list[FioOption], *, external: bool = False, jobfile: bool = False
                  ) -> list[FioOptionProblem]:
    """What fio would refuse or misread among ``options`` (of ``args``, or of a jobfile);
    ``external``: the step's ioengine is an external one (unknown names are its own)."""
    out: list[FioOptionProblem] = []
    prefix = "" if jobfile else "--"
    kb_base = 1000 if any(canonical(o.name) == "kb_base" and o.value == "1000"
                          for o in options) else 1024
    for option in options:
        if not_checked(option.name):
            continue
        if option.ambiguous:
            out.append(FioOptionProblem(
                option.written, f"fio cannot tell which option {option.written} means",
                f"it fits {', '.join(prefix + o for o in option.ambiguous)}: write the option "
                "in full", option.line))
        elif not option.known:
            if option.name in SINCE or external:
                continue  # a newer fio's (preflight checks each host's), or the engine's own
            pool = _JOB_OPTIONS if jobfile else _LONG_OPTIONS
            guess = closest(option.name, pool)
            out.append(FioOptionProblem(
                option.written, f"fio has no option {prefix}{option.name}",
                f"did you mean {prefix}{guess}?" if guess else
                "fio --cmdhelp=all lists fio's options", option.line))
        else:
            problem = value_problem(option.name, option.value, prefix, kb_base=kb_base)
            if problem is not None:
                reason, hint = problem
                out.append(FioOptionProblem(option.written, reason, hint, option.line))
    return out


def newer_options(options: Iterable[FioOption]) -> dict[str, str]:
    """Options that came with a fio release (``SINCE``) -> that release: the options a host's
    fio may not have (preflight checks them against each host's fio version)."""
    out: dict[str, str] = {}
    for option in options:
        name = option.name if option.name in SINCE else canonical(option.name)
        if name in SINCE and not option.ambiguous:
            out[name] = SINCE[name]
    return out


def release(version: str) -> tuple[int, int] | None:
    """``fio-3.33`` (``fio-3.33-12-gabc``, ``3.33``) -> (3, 33); None when not a fio version."""
    m = re.search(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None
