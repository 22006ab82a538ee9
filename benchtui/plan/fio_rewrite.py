"""Setting one fio option for every job of a step: in its args and in its jobfile's text.

This is how a sweep's values (``matrix``) reach fio. fio's rules decide where the value goes:
on the command line, options before the first ``--name`` are defaults for every job (the
jobfile's too) and options after a ``--name`` belong to that job and win over the defaults; in
a jobfile, ``[global]`` sets defaults for the sections after it and a job section's own
options win. So the option is replaced wherever it is already set (in any form: ``--bs=4k``,
``--bs 4k``, ``-bs=4k``, ``blocksize = 4k``) and added to the defaults when they lack it.
Options are compared by fio's name for them (``blocksize`` is ``bs``).
"""

from __future__ import annotations

from benchtui.plan.fio_option_names import (
    ALIASES,
    ENGINE_OPTIONS,
    FLAG_OPTIONS,
    GENERAL_OPTIONS,
    SINCE,
)
from benchtui.plan.fio_options import split_option


def canonical_option(key: str) -> str:
    """fio's name of an option (``blocksize`` -> ``bs``, ``readwrite`` -> ``rw``)."""
    key = key.strip().lower()
    return ALIASES.get(key, key)


def is_fio_option(key: str) -> bool:
    """Whether fio (or one of its I/O engines) has a job option called ``key``: in the fio
    the names were read from, or in a later release (preflight checks each host's fio)."""
    return key in GENERAL_OPTIONS or key in ENGINE_OPTIONS or key in ALIASES or key in SINCE


def known_fio_options() -> list[str]:
    """Every option name, for "did you mean" hints."""
    return sorted(GENERAL_OPTIONS | ENGINE_OPTIONS | ALIASES.keys())


def jobfiles_in_args(args: tuple[str, ...]) -> list[str]:
    """The words of ``args`` that fio reads as jobfiles: not options, nor the value of an
    option written ``--key value`` (fio takes the next word for every option but flags)."""
    out: list[str] = []
    value_next = False
    for word in args:
        option = split_option(word)
        if option is None:
            if not value_next:
                out.append(word)
            value_next = False
            continue
        value_next = option[1] is None and canonical_option(option[0]) not in FLAG_OPTIONS
    return out


def set_in_args(args: tuple[str, ...], key: str, value: str) -> tuple[str, ...]:
    """``args`` with fio option ``key`` set to ``value`` for every job they define: each
    ``--key`` already there becomes ``--key=value`` in place, and ``--key=value`` is added to
    the defaults (before the first ``--name``, else at the end) when they do not set it."""
    want = canonical_option(key)
    word = f"--{key}={value}"
    out: list[str] = []
    in_defaults, in_defaults_set = True, False
    i = 0
    while i < len(args):
        current = args[i]
        option = split_option(current)
        i += 1
        if option is None:
            out.append(current)
            continue
        name, attached = option[0].lower(), option[1]
        takes_next = attached is None and i < len(args) and not args[i].startswith("-")
        if name == "name":
            if in_defaults and not in_defaults_set:
                out.append(word)
                in_defaults_set = True
            in_defaults = False
            out.append(current)
            if takes_next:  # --name JOB
                out.append(args[i])
                i += 1
            continue
        if canonical_option(name) != want:
            out.append(current)
            continue
        if takes_next and want not in FLAG_OPTIONS:  # --bs 4k: drop the old value too
            i += 1
        out.append(word)
        in_defaults_set = in_defaults_set or in_defaults
    if not in_defaults_set:
        out.append(word)
    return tuple(out)


def set_in_jobfile(text: str, key: str, value: str) -> str:
    """A jobfile's ``text`` with ``key=value`` for every job: each line that sets the option
    (in ``[global]`` or a job section) is replaced, and the line is added to a ``[global]``
    section ahead of every job (the first section when it is ``[global]``, else a new one
    before the first section) unless that section already set it. Comments, blank lines and
    the other lines are kept as they are."""
    want = canonical_option(key)
    setting = f"{key}={value}"
    out: list[str] = []
    first_header: int | None = None
    first_is_global = first_set = False
    sections = 0
    for raw in text.split("\n"):
        line = raw.strip()
        eol = "\r" if raw.endswith("\r") else ""
        if not line or line[0] in "#;":
            out.append(raw)
            continue
        if line.startswith("[") and line.endswith("]"):
            sections += 1
            if first_header is None:
                first_header = len(out)
                first_is_global = line[1:-1].strip() == "global"
            out.append(raw)
            continue
        name = line.partition("=")[0].strip()
        if sections and canonical_option(name) == want:
            indent = raw[:len(raw) - len(raw.lstrip())]
            out.append(f"{indent}{setting}{eol}")
            first_set = first_set or (sections == 1 and first_is_global)
            continue
        out.append(raw)
    if first_header is None:
        return text  # no section: no job to set it for (the loader refuses such jobfiles)
    eol = "\r" if out[first_header].endswith("\r") else ""
    if first_is_global:
        if not first_set:
            out.insert(first_header + 1, setting + eol)
    else:
        out[first_header:first_header] = ["[global]" + eol, setting + eol]
    return "\n".join(out)
