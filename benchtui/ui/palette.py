"""The console's entries in the command palette (Ctrl-P): every action of its keys, the
themes by name, the hosts by name (``ConsoleApp.get_system_commands``; a front end adds
its own with ``palette_commands``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from textual.app import SystemCommand

from benchtui.ui.source import ConsoleSource
from benchtui.ui.themes import available_themes


class Console(Protocol):
    """What the palette's entries call (``ConsoleApp``'s actions)."""

    source: ConsoleSource

    def action_screenshot(self) -> None: ...
    def action_pause(self) -> None: ...
    def action_log(self) -> None: ...
    def action_window(self, step: int) -> None: ...
    def action_fit_window(self) -> None: ...
    def action_compact(self) -> None: ...
    def set_console_theme(self, name: str) -> None: ...
    def open_host(self, host: str) -> None: ...


def console_commands(app: Console) -> Iterator[SystemCommand]:
    yield SystemCommand("Screenshot", "Save an SVG of the screen here (or in "
                        "--screenshot-dir) and say where", app.action_screenshot)
    yield SystemCommand("Pause display", "Freeze or resume the display (p)",
                        app.action_pause)
    yield SystemCommand("Session log", "Every event, warning and error (l)",
                        app.action_log)
    yield SystemCommand("Longer window", "Charts cover more time (+)",
                        lambda: app.action_window(1))
    yield SystemCommand("Shorter window", "Charts cover less time (-)",
                        lambda: app.action_window(-1))
    yield SystemCommand("Window fits the step", "Charts cover the running step's planned "
                        "length (as at the start)", app.action_fit_window)
    yield SystemCommand("Compact rows", "One line per host on/off (c)", app.action_compact)
    for name in available_themes():
        yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme",
                            lambda name=name: app.set_console_theme(name))
    for host in list(app.source.state.hosts):
        yield SystemCommand(f"Host: {host}", f"Open {host}'s detail view",
                            lambda host=host: app.open_host(host))
