"""Sweeps: a ``[[step]]`` with ``matrix`` becomes one ordinary step per combination of values.

``matrix = { ioengine = ["psync", "libaio"], bs = ["4k", "1m"] }`` on a fio step named
``randread`` gives the steps ``randread ioengine=psync bs=4k``, ``randread ioengine=psync
bs=1m``, ``randread ioengine=libaio bs=4k``, ``randread ioengine=libaio bs=1m``: the first key
varies slowest (``itertools.product`` in the plan's key order). Each value is given to fio as
its option, for every job: in ``args`` and in the jobfile's text (``fio_rewrite``). The steps
carry ``sweep`` (the name written in the plan) and ``matrix`` (their values), so that the
engine needs no sweep logic and a report can put them side by side.

Only fio steps (with ``args`` or a ``jobfile``) take a matrix: every key must be a fio option.
Other tools have no common way to say where a value goes, so a matrix there is refused; write
one step per value. Part of the loader: every problem is a ``PlanError`` at the key's line.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace

from benchtui.plan.fields import Fields, did_you_mean, shown, type_name
from benchtui.plan.fio_rewrite import (
    is_fio_option,
    jobfiles_in_args,
    known_fio_options,
    set_in_args,
    set_in_jobfile,
)
from benchtui.plan.fio_value_check import value_problem
from benchtui.plan.model import DEFAULT_SELECT, SELECT_CHOICES, StepSpec

#: Most steps one matrix may make (as many as ``repeat`` may run one step).
MAX_COMBINATIONS = 10000
#: Options a sweep may not set: job names are benchtui's labels (the step's name names jobs).
_REFUSED = {"name": "fio's job name is set from the step's name"}


def read_select(fields: Fields) -> str:
    """``select = "median" | "best" | "all"``: what a report shows of the repeats."""
    value = fields.text("select", DEFAULT_SELECT) or DEFAULT_SELECT
    if value not in SELECT_CHOICES:
        hint = did_you_mean(value, SELECT_CHOICES) or \
            'write select = "median" (the typical run), "best" or "all" (every run)'
        raise fields.error("select", f"select {shown(value)} of {fields.what} must be one of "
                                     f"{', '.join(SELECT_CHOICES)}", hint)
    return value


def read_matrix(fields: Fields, tool: str, command: tuple[str, ...], args: tuple[str, ...]
                ) -> dict[str, tuple[str, ...]] | None:
    """The step's ``matrix``: fio option -> its values as fio reads them; None when absent."""
    if not fields.has("matrix"):
        return None
    table = fields.table["matrix"]
    if tool != "fio":
        raise fields.error("matrix", f"matrix of {fields.what} is for fio steps, not {tool}",
                           "each value of a matrix becomes a fio option; for other tools "
                           "write one step per value")
    if command:
        raise fields.error("matrix", f"{fields.what} runs a command, which runs as written, so "
                                     "it cannot take a matrix",
                           'give fio its options with args = "..." or jobfile = "..." instead')
    named = jobfiles_in_args(args)
    if named:
        raise fields.error("matrix", f"args of {fields.what} name a jobfile ({shown(named[0])}), "
                                     "whose own options would win over the matrix's",
                           f'give it with jobfile = {shown(named[0])} instead, so that the '
                           "values are set in it")
    if not isinstance(table, dict):
        raise fields.wrong_type("matrix", "a table of lists", table)
    if not table:
        raise fields.error("matrix", f"matrix of {fields.what} is empty",
                           fields.example("matrix"))
    matrix: dict[str, tuple[str, ...]] = {}
    combinations = 1
    for key, values in table.items():
        matrix[key] = _read_values(fields, key, values)
        combinations *= len(matrix[key])
    if combinations > MAX_COMBINATIONS:
        raise fields.error("matrix", f"matrix of {fields.what} makes {combinations} steps, "
                                     f"more than {MAX_COMBINATIONS}",
                           "sweep fewer values, or split the sweep into several steps")
    return matrix


def _read_values(fields: Fields, key: str, values: object) -> tuple[str, ...]:
    path = (*fields.path, "matrix", key)
    where = f"{key} in matrix of {fields.what}"
    if key in _REFUSED:
        raise fields.source.error(path, f"{where} cannot be swept: {_REFUSED[key]}",
                                  "sweep the options of the job instead")
    if not is_fio_option(key):
        guess = did_you_mean(key, known_fio_options())
        raise fields.source.error(path, f"{where} is not a fio option",
                                  guess or "matrix keys are fio option names, as in "
                                  "matrix = { bs = [\"4k\", \"1m\"] }")
    if not isinstance(values, list):
        raise fields.source.error(path, f"{where} must be a list of values, not "
                                        f"{type_name(values)} ({shown(values)})",
                                  f"write {key} = [{shown(values)}]")
    if not values:
        raise fields.source.error(path, f"{where} is an empty list",
                                  f"give the values to sweep, e.g. {key} = [...] with two or "
                                  f"more, or remove {key}")
    texts: list[str] = []
    for n, value in enumerate(values, start=1):
        text = _option_text(value)
        if text is None:
            hint = f"write it as text: {shown(str(value))}" if isinstance(value, float) \
                else f'write the values as fio reads them, e.g. {key} = ["..."]'
            raise fields.source.error(
                path, f"value {n} of {where} must be text, a whole number or true/false, not "
                      f"{type_name(value)} ({shown(value)})", hint)
        if not text.strip() or text != text.strip() or \
                any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise fields.source.error(
                path, f"value {n} of {where} ({shown(text)}) is empty or holds spaces at its "
                      "ends or control characters", f'write it as fio reads it, e.g. "{key}"')
        problem = value_problem(key, text)
        if problem is not None:
            raise fields.source.error(path, f"value {n} of {where}: {problem[0]}", problem[1])
        if text in texts:
            raise fields.source.error(
                path, f"{where} lists {shown(text)} twice, which would make two steps with "
                      "the same name", "list each value once")
        texts.append(text)
    return tuple(texts)


def _option_text(value: object) -> str | None:
    """A TOML value as fio option text: text as is, numbers in decimal, true/false as 1/0."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | str):
        return str(value)
    return None


def sweep_name(name: str, values: Mapping[str, str]) -> str:
    """``randread ioengine=libaio bs=4k``: the step's name, then each key=value."""
    return " ".join((name, *(f"{k}={v}" for k, v in values.items())))


def expand(step: StepSpec, matrix: Mapping[str, tuple[str, ...]], fields: Fields,
           used: set[str]) -> list[StepSpec]:
    """One step per combination of ``matrix`` (first key slowest), each with its values in
    ``args`` and in the jobfile's text; ``used`` (the names taken) gets their names."""
    steps: list[StepSpec] = []
    for combination in itertools.product(*matrix.values()):
        values = dict(zip(matrix, combination, strict=True))
        name = sweep_name(step.name, values)
        if name in used:
            raise fields.error("matrix", f"matrix of {fields.what} makes the step name "
                                         f"{shown(name)} twice", "list each value once")
        used.add(name)
        args, text = step.args, step.jobfile_text
        for key, value in values.items():
            args = set_in_args(args, key, value)
            if text is not None:
                text = set_in_jobfile(text, key, value)
        steps.append(replace(step, name=name, args=args, jobfile_text=text, sweep=step.name,
                             matrix=values))
    return steps
