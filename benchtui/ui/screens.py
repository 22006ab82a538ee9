"""The console's secondary screens: help, the session log, the quit confirmation and the
prompt for a mark's note."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, RichLog, Static

from benchtui.model import events as ev
from benchtui.model.events import Event
from benchtui.store.fleet import FleetState
from benchtui.ui.footer import ConsoleFooter
from benchtui.ui.notices import NoticeBar

#: Events kept on screen by the log view (the state keeps its own bounded deque).
MAX_LOG_LINES = 5000
_LEVEL_STYLE = {ev.ERROR: "bold red", ev.WARNING: "yellow", ev.INFO: ""}


def event_text(event: Event) -> Text:
    """One log line: local time, level, host and step, the message."""
    text = Text()
    text.append(time.strftime("%H:%M:%S", time.localtime(event.t)), "dim")
    level = event.level if event.level != ev.INFO else ""
    text.append(f" {level:7} ", _LEVEL_STYLE.get(event.level, ""))
    where = " ".join(x for x in (event.host, event.step and f"[{event.step}]") if x)
    if where:
        text.append(f"{where} ", "bold")
    text.append(event.message, _LEVEL_STYLE.get(event.level, ""))
    return text


class HelpScreen(ModalScreen[None]):
    """Every key of the console (the app's ``help_rows``) and what the screen shows. Taller
    than the screen (80x24), it scrolls: arrows, PgUp/PgDn, Home/End, the wheel; its
    bottom border says so."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; max-width: 100%; height: auto; max-height: 100%;
                                  border: round $accent; background: $surface; padding: 0 1;
                                  border-subtitle-color: $text-muted; }
    HelpScreen Static { width: 100%; height: auto; }
    HelpScreen #help-notes { margin-top: 1; color: $text-muted; }
    """

    def __init__(self, rows: Sequence[tuple[str, str]], notes: str) -> None:
        super().__init__()
        self.rows = rows
        self.notes = notes

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold")
        table.add_column()
        for key, what in self.rows:
            table.add_row(key, what)
        with VerticalScroll(id="help-box"):
            yield Static(Text("benchtui keys", style="bold"))
            yield Static(table, id="help-keys")
            yield Static(self.notes, id="help-notes")

    def on_mount(self) -> None:
        self.query_one("#help-box").focus()  # the keys scroll it

    def on_resize(self) -> None:
        self.call_after_refresh(self._say_scroll)

    def _say_scroll(self) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        box.border_subtitle = ("↑↓ PgUp PgDn Home End scroll · Esc closes"
                               if box.max_scroll_y > 0 else "Esc closes")


def plural(count: int, noun: str) -> str:
    """"1 warning", "2 warnings", "0 errors"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


#: Host states a host goes through in every step: routine, hidden by default in the log.
ROUTINE_STATES = frozenset({"running", "done"})


def routine(event: Event) -> bool:
    """An event that happens in every step on every host, and says nothing went wrong: a
    process started or ended well, a host running or done."""
    if event.level != ev.INFO:
        return False
    if event.kind in (ev.RUN_START, ev.RUN_END):
        return True
    return event.kind == ev.HOST_STATE and event.data.get("state") in ROUTINE_STATES


class SessionLogScreen(Screen[None]):
    """The session's events (engine messages, warnings, host states), newest last; routine
    ones (``routine``) hidden until ``a`` shows all."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,l", "app.pop_screen", "Back"),
        Binding("a", "all_events", "All events")]
    DEFAULT_CSS = """
    SessionLogScreen #log-title { height: 1; padding: 0 1; background: $panel; }
    SessionLogScreen RichLog { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._seen = 0
        #: Routine events shown too (``a``).
        self.show_all = False
        self._hidden = 0
        self._state: FleetState | None = None

    def action_all_events(self) -> None:
        """Show every event, or hide the routine ones again: the log is written anew."""
        self.show_all = not self.show_all
        self._seen = 0
        self._hidden = 0
        if self.is_mounted and self.query("#events"):
            self.query_one("#events", RichLog).clear()
            if self._state is not None:
                self.update_from(self._state)

    def compose(self) -> ComposeResult:
        yield Static("session log", id="log-title")
        yield RichLog(id="events", max_lines=MAX_LOG_LINES, wrap=True, auto_scroll=True,
                      min_width=20)
        yield NoticeBar()
        yield ConsoleFooter()

    def on_mount(self) -> None:
        redraw = getattr(self.app, "refresh_display", None)  # the console's: fill it now
        if callable(redraw):
            self.call_after_refresh(redraw)

    def update_from(self, state: FleetState) -> None:
        """Append the events that arrived since the last call."""
        self._state = state
        if not self.is_mounted or not self.query("#events"):  # pushed, not composed yet
            return  # (its children mount after the screen itself): next tick
        total = state.events_total
        log = self.query_one("#events", RichLog)
        if total == self._seen or not log.size.width:
            return  # nothing new, or not laid out yet (lines are wrapped at the log's width)
        new = min(total - self._seen, len(state.events))
        if total < self._seen:  # a new state (replay seek): start over
            log.clear()
            self._hidden = 0
            new = len(state.events)
        events = list(state.events)[-new:] if new else []
        width = log.scrollable_content_region.width
        for event in events:
            if not self.show_all and routine(event):
                self._hidden += 1
                continue
            log.write(event_text(event), width=width)
        self._seen = total
        shown = ("all shown, a hides routine ones" if self.show_all else
                 f"{self._hidden} routine hidden, a shows all" if self._hidden else "")
        self.query_one("#log-title", Static).update(" · ".join(p for p in (
            "session log", plural(total, "event") + (f" ({shown})" if shown else ""),
            plural(state.warnings_total, "warning"), plural(state.errors_total, "error"))))


class ConfirmQuitScreen(ModalScreen[bool]):
    """Asked before quitting while steps run: quitting stops them on every host."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "answer(True)", "Stop and quit"),
                Binding("n,escape", "answer(False)", "Keep running")]
    DEFAULT_CSS = """
    ConfirmQuitScreen { align: center middle; }
    ConfirmQuitScreen > Vertical { width: 60; height: auto; border: thick $error;
                                   background: $surface; padding: 1 2; }
    ConfirmQuitScreen Horizontal { height: auto; margin-top: 1; align-horizontal: center; }
    ConfirmQuitScreen Button { margin: 0 2; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Steps are running. Quit now and stop every process benchtui "
                         "started on every host?")
            with Horizontal():
                yield Button("Stop and quit (y)", variant="error", id="yes")
                yield Button("Keep running (n)", variant="primary", id="no")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class PromptScreen(ModalScreen[str | None]):
    """Asks for one line of text: Enter gives it (may be empty), Esc cancels (None).
    Subclasses set what is asked."""

    HELP: ClassVar[str] = ""
    PLACEHOLDER: ClassVar[str] = ""
    #: What is asked (``HELP`` unless an instance says otherwise).
    question = ""
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 64; height: auto; border: round $accent;
                              background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question or self.HELP, classes="prompt-help")
            yield Input(placeholder=self.PLACEHOLDER, classes="prompt-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


class MarkScreen(PromptScreen):
    """Asks for a mark's note."""

    HELP = "Mark this moment: a note (optional), Enter to mark, Esc to cancel"
    PLACEHOLDER = "e.g. moved the scheduler to none"
