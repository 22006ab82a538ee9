"""The live console: a fleet header, one pane per host, a footer of keys.

``ConsoleApp(source)`` is ``ConsoleBase`` (``benchtui.ui.console_base``: the parts, the
source, the redrawing and the extension points for a front end built on it) with the
console's keys: ``BINDINGS`` and their actions; the help lists them (``console_help``), the
palette has their actions (``palette``), the footer the main ones (``footer``). A key on the
host grid is answered and drawn in the turn of the event loop that read it (``draw_now``).

Exit code (``app.run()`` returns it): the source's (live: 0 ok, 1 a host or step failed),
130 when the user stopped a session that was running.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual import events
from textual.app import SystemCommand
from textual.binding import BindingType
from textual.screen import Screen

from benchtui.errors import BenchtuiError
from benchtui.model.format import format_duration
from benchtui.ui.console_base import THEME_SOURCE, ConsoleBase
from benchtui.ui.console_help import CONSOLE_BINDINGS, HELP_NOTES
from benchtui.ui.detail import HostDetailScreen
from benchtui.ui.palette import console_commands
from benchtui.ui.pane import HostPane
from benchtui.ui.screens import ConfirmQuitScreen, HelpScreen, MarkScreen, SessionLogScreen
from benchtui.ui.screenshot import save_screenshot, screenshot_name
from benchtui.ui.themes import load_theme, next_theme


class ConsoleApp(ConsoleBase):
    """The console over any ``ConsoleSource``, with its keys."""

    BINDINGS: ClassVar[list[BindingType]] = list(CONSOLE_BINDINGS)

    # --- actions ---------------------------------------------------------------------------

    async def action_quit(self) -> None:
        if self._stopping:
            return
        if self.source.busy():
            if not isinstance(self.screen, ConfirmQuitScreen):
                self.push_screen(ConfirmQuitScreen(), self._confirmed)
            return
        await self._stop_and_exit()

    def _confirmed(self, answer: bool | None) -> None:
        if answer:
            self.call_later(self._stop_and_exit)

    async def action_interrupt(self) -> None:
        await self._stop_and_exit()

    def action_screenshot(self, filename: str | None = None,
                          path: str | None = None) -> None:
        """Save an SVG of the screen in ``path``, else ``screenshot_dir``, else the current
        directory, and say where it went; or why it could not be saved."""
        self.deliver_screenshot(filename, path)

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Textual's, saving to a file the user is told about (never its download
        machinery, whose failure says only "Failed to save screenshot")."""
        saved, said = save_screenshot(self, path or self.screenshot_dir,
                                      filename or screenshot_name(self.source.name))
        self.notify(said, title="screenshot", severity="information" if saved else "error",
                    timeout=8 if saved else 15)
        if saved is not None:
            self.last_screenshot = saved
        return saved

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_rows(), HELP_NOTES))

    def action_pause(self) -> None:
        self.paused = not self.paused
        self.generation += 1
        self.header.badges = self.header_badges()
        if self.paused:
            self.header.update_from(self.source.state, self.source.now(), self.generation,
                                    runs=self.source.planned_runs())
        self.refresh_display()

    def action_window(self, step: int) -> None:
        self.chart_window.step(step)
        self.window_changed()
        self.notify(f"chart window: {format_duration(self.window)}", timeout=2)
        self.refresh_display()

    def action_fit_window(self) -> None:
        self.chart_window.fit(self.source.state)
        self.window_changed()
        self.notify(f"chart window: {format_duration(self.window)}, fitted to the step",
                    timeout=2)
        self.refresh_display()

    def action_cycle_theme(self) -> None:
        self.set_console_theme(next_theme(self.console_theme.name))

    def set_console_theme(self, name: str) -> None:
        try:
            theme = load_theme(name)
        except BenchtuiError as error:
            self.notify(str(error), title="theme", severity="error")
            return
        self.console_theme = theme
        self.stylesheet.add_source(theme.css, read_from=THEME_SOURCE)
        self.register_theme(theme.textual)
        self.theme = theme.textual.name
        self.generation += 1
        self.notify(f"theme: {theme.name}", timeout=2)
        self.call_after_refresh(self.refresh_display)

    def action_log(self) -> None:
        if not isinstance(self.screen, SessionLogScreen):
            screen = SessionLogScreen()
            self.push_screen(screen)
            self.call_after_refresh(self.refresh_display)

    def action_mark(self) -> None:
        if not isinstance(self.screen, MarkScreen):
            self.push_screen(MarkScreen(), self._marked)

    def _marked(self, note: str | None) -> None:
        if note is None:
            return
        note = " ".join(note.split())
        if self.source.mark(note):
            self.notify(f"marked{': ' + note if note else ''}", title="mark", timeout=3)
            self.refresh_display()
        else:
            self.notify("nothing to mark: marks are made while a session runs", title="mark",
                        severity="warning")

    def action_compact(self) -> None:
        lay = self.grid.layout_now
        self.grid.compact = None if self.grid.compact is not None else not lay.compact
        self.grid.relayout()
        self.generation += 1
        self.refresh_display()

    def action_page(self, delta: int) -> None:
        if self.grid.turn_page(delta):
            self.refresh_display()

    def action_move(self, dx: int, dy: int) -> None:
        """Focus the host beside (dx) or above/below (dy) the focused one, across pages."""
        names = list(self.grid.panes)
        if not names:
            return
        focused = self.focused
        current = names.index(focused.host) if isinstance(focused, HostPane) else 0
        columns = self.grid.layout_now.columns
        target = min(max(current + dx + dy * columns, 0), len(names) - 1)
        self.grid.show_host(names[target])
        self.grid.panes[names[target]].focus()

    def open_host(self, host: str) -> None:
        if host in self.source.state.hosts:
            self.push_screen(HostDetailScreen(host))
            self.call_after_refresh(self.refresh_display)

    def on_host_pane_open(self, message: HostPane.Open) -> None:
        self.open_host(message.host)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # the event's own widget: ``self.focused`` asks the screen stack, which is already
        # empty when a focus event is still delivered while the app shuts down
        focused = event.widget
        if isinstance(focused, HostPane):
            self.grid.show_host(focused.host)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            # Textual's own themes would not restyle benchtui; its screenshot is ours
            if command.title not in ("Theme", "Screenshot"):
                yield command
        yield from console_commands(self)
        yield from self.palette_commands()
