"""The console over a real session: real fio and iostat on this machine, in run_test.

Also the commands around it: ``benchtui demo``'s plan and its missing-fio sentence, and the
console's usage errors. The real-terminal (tmux) test lives in tests/test_ui_tmux.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from benchtui.cli.demo_plan import demo_plan, direct_io_works, plan_text
from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.parsers.registry import all_parsers
from benchtui.plan.loader import parse_plan
from benchtui.session.engine import Session
from benchtui.store.fleet import FleetState
from benchtui.ui.app import ConsoleApp
from benchtui.ui.source import LiveSource
from tests.test_ui_app import screen_text

pytestmark = pytest.mark.skipif(not Path("/usr/bin/fio").exists(), reason="needs fio")
VENV_BIN = Path(sys.executable).parent


def _plan(tmp_path: Path, seconds: int) -> Session:
    text = plan_text(tmp_path, seconds, direct=direct_io_works(tmp_path), device=None)
    text = text.replace("--size=128m", "--size=16m")
    plan = parse_plan(text, tmp_path / "live.toml", parser_names=all_parsers())
    return Session(plan)


def _console(session: Session) -> tuple[ConsoleApp, LiveSource]:
    state = FleetState(session.plan.name, session.transports, window=600)
    session.add_sample_sink(state.on_samples)
    session.add_event_sink(state.on_event)
    session.add_output_sink(state.on_output)
    source = LiveSource(session, state)
    return ConsoleApp(source), source


async def _until(pilot: Pilot[object], what: object, timeout: float) -> float:
    """Wait until ``what()`` is true; the seconds it took."""
    start = time.monotonic()
    while not what():  # type: ignore[operator]
        assert time.monotonic() - start < timeout, "timed out"
        await pilot.pause(0.1)
    return time.monotonic() - start


def _fio_running(path: Path) -> bool:
    out = subprocess.run(["pgrep", "-af", "fio"], check=False, capture_output=True,
                         text=True).stdout
    return any(str(path) in line for line in out.splitlines())


async def test_a_real_session_is_shown_live_and_exits_0_when_done(tmp_path: Path) -> None:
    session = _plan(tmp_path, 3)
    app, source = _console(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: "r " in screen_text(app) and app.grid.panes
                     and (app.grid.panes["localhost"].figures or None) is not None
                     and app.grid.panes["localhost"].figures.iops.get("read"), 20)
        text = screen_text(app)
        assert "● localhost · running" in text and "step randrw-4k" in text
        assert "fleet IOPS r" in text
        seen: list[Event] = []
        session.add_event_sink(seen.append)
        await pilot.press("m", *"warm", "enter")  # a mark goes through the engine's sinks
        await _until(pilot, lambda: any(e.kind == ev.MARK for e in source.state.events), 5)
        assert [(e.message, e.step) for e in seen if e.kind == ev.MARK] == [
            ("mark: warm", "randrw-4k")]
        await _until(pilot, lambda: "finished ✔" in screen_text(app), 40)
        await _until(pilot, lambda: not source.busy(), 20)  # the engine closes its links
        assert "✔ localhost · done" in screen_text(app)
        state = source.state
        tools = {s.tool for s in state.store.series.values()}
        assert {"fio", "iostat"} <= tools or {"fio", "diskstats"} <= tools
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 0


async def test_quitting_a_running_session_stops_fio_and_exits_130(tmp_path: Path) -> None:
    session = _plan(tmp_path, 120)
    app, source = _console(session)
    async with app.run_test(size=(80, 24)) as pilot:
        first = await _until(pilot, lambda: app.grid.panes.get("localhost") is not None
                             and app.grid.panes["localhost"].figures is not None
                             and bool(app.grid.panes["localhost"].figures.iops), 20)
        assert first < 15
        assert _fio_running(tmp_path / "demo.dat")
        await pilot.press("q")
        await pilot.pause()
        assert "stop every process" in screen_text(app)
        await pilot.press("y")
        await _until(pilot, lambda: not source.busy(), 30)
    assert app.return_value == 130
    assert not _fio_running(tmp_path / "demo.dat")


def test_the_demo_plan_is_a_real_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    plan = demo_plan(42, parser_names=list(all_parsers()))
    written = tmp_path / "benchtui" / "demo" / "demo.toml"
    assert written.is_file() and plan.name == "demo"
    (step,) = plan.steps
    assert step.tool == "fio" and "--runtime=42" in step.args
    assert f"--filename={tmp_path / 'benchtui' / 'demo' / 'demo.dat'}" in step.args
    assert f"--direct={int(direct_io_works(written.parent))}" in step.args
    (monitor,) = plan.monitors
    assert monitor.tool == "iostat"


def _benchtui(*args: str, path: str | None = None, cwd: Path | None = None
              ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([str(VENV_BIN / "benchtui"), *args], check=False, capture_output=True,
                          text=True,
                          env=env, cwd=cwd, timeout=60, stdin=subprocess.DEVNULL)


def test_demo_without_fio_says_how_to_install_it(tmp_path: Path) -> None:
    result = _benchtui("demo", path=str(VENV_BIN))
    assert result.returncode == 1
    assert result.stderr.strip() == ("benchtui: this machine: fio is not installed and "
                                     "benchtui demo needs it (install it with: sudo apt-get "
                                     "install fio)")
    assert "Traceback" not in result.stderr


def test_console_usage_errors_are_one_sentence(tmp_path: Path) -> None:
    plan = tmp_path / "p.toml"
    plan.write_text(plan_text(tmp_path, 1, direct=False, device=None))
    result = _benchtui("run", str(plan), "--theme", "nope")
    assert result.returncode == 2
    assert result.stderr.startswith("benchtui: no theme named 'nope'; the themes are: dark")
    result = _benchtui("run", str(plan), "--history", "0")
    assert (result.returncode, result.stderr.strip()) == (
        2, "benchtui: --history must be at least 1 point")
    result = _benchtui("demo", "--seconds", "0")
    assert (result.returncode, result.stderr.strip()) == (
        2, "benchtui: --seconds must be at least 1")
    result = _benchtui("run", str(tmp_path / "missing.toml"))
    assert result.returncode == 2 and "no such file" in result.stderr
    assert "Traceback" not in result.stderr
