"""The error tree's classes behave as the dataclasses they were: built by position or by
keyword with the same defaults, equal when their class and fields are, shown by their fields,
unhashable, pickled whole (a parse worker's errors cross processes), and said in one sentence."""

from __future__ import annotations

import pickle

import pytest

from benchtui.errors import (
    BenchtuiError,
    CompareError,
    ExportError,
    HostError,
    InputError,
    OutputError,
    PlanError,
    RecordingError,
    ToolMissingError,
    UsageError,
)
from benchtui.transport.errors import HostUnreachableError


def test_fields_defaults_and_sentences() -> None:
    assert str(UsageError("no plan")) == "no plan"
    assert str(InputError("f.txt", "empty")) == "f.txt: empty"
    assert str(InputError("f.txt", "empty", hint="check it")) == "f.txt: empty; check it"
    assert str(PlanError("p.toml", "bad key", 3, "write x")) == "p.toml:3: bad key; write x"
    assert str(HostError("h1", "refused", "start sshd")) == "h1: refused (start sshd)"
    missing = ToolMissingError("h1", "no fio", tool="fio")
    assert (missing.host, missing.reason, missing.hint, missing.command, missing.tool) == (
        "h1", "no fio", "", "", "fio")
    assert str(RecordingError("s.btr", "damaged", offset=12)) == "s.btr at byte 12: damaged"
    assert str(OutputError("o.md", "the report", "disk full")) == \
        "cannot write the report to o.md: disk full"
    assert str(CompareError("no such host", ("a", "b"))) == "no such host (there are: a, b)"
    assert str(ExportError("0:1", "taken", "another port")) == \
        "cannot serve metrics on 0:1: taken; another port"
    errors = (UsageError("x"), InputError("s", "r"), PlanError("f", "r"), HostError("h", "r"),
              RecordingError("p", "r"), RecordingError("p", "r", exit_code=2),
              OutputError("p", "w", "r"), CompareError("r"), ExportError("a", "r"))
    codes = [e.exit_code for e in errors]
    assert codes == [2, 2, 2, 1, 1, 2, 1, 2, 2]
    assert isinstance(missing, BenchtuiError) and isinstance(missing, Exception)


def test_equal_by_class_and_fields_shown_by_fields() -> None:
    assert InputError("f", "r", "h") == InputError("f", "r", hint="h")
    assert InputError("f", "r") != InputError("f", "r", "h")
    assert HostError("h", "r") != ToolMissingError("h", "r")  # (another class)
    assert HostUnreachableError("h", "r") == HostUnreachableError("h", "r")
    assert repr(PlanError("p.toml", "bad", 3)) == \
        "PlanError(file='p.toml', reason='bad', line=3, hint='')"
    assert repr(ToolMissingError("h", "r", tool="fio")) == \
        "ToolMissingError(host='h', reason='r', hint='', command='', tool='fio')"
    assert repr(HostUnreachableError("h", "r")) == \
        "HostUnreachableError(host='h', reason='r', hint='', command='')"
    with pytest.raises(TypeError):
        hash(UsageError("x"))


def test_pickled_whole() -> None:
    for error in (InputError("f", "r"), PlanError("p", "r", 2, hint="h"),
                  ToolMissingError("h", "r", "x", tool="fio"), HostUnreachableError("h", "r"),
                  RecordingError("p", "r", offset=5, exit_code=2), CompareError("r", ("a",))):
        back = pickle.loads(pickle.dumps(error))
        assert back == error and str(back) == str(error)
        assert back.exit_code == error.exit_code
