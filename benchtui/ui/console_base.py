"""The console's machinery: its parts, its source and its redrawing (``ConsoleApp``, in
``benchtui.ui.app``, adds its keys).

``ConsoleBase(source)`` shows whatever its ``ConsoleSource`` provides (``benchtui.ui.source``):
a live ``Session`` or a replay. It runs ``source.run()`` as a task for as long as it is open,
and redraws on a timer (``REFRESH_HZ``) only what changed, reading ``source.state`` (a
``FleetState``) and ``source.now()``; a host's pane is also redrawn soon after its samples
arrive (``data_wakeup.DataWakeup``), and drawn in that turn of the event loop, as is what a
key on the host grid changed (``draw_now``). The state is never written here.

Extension points, for a front end built on the console (replay, ``benchtui.ui.replay``):
    ``compose_top()`` / ``compose_bottom()``  widgets above / below the host grid;
    ``header_badges()``                       words on the header's first line;
    ``before_refresh()``                      called on every tick before the state is read;
    ``help_rows()``                           more keys for the help screen (add BINDINGS too);
    ``palette_commands()``                    more command palette entries.
With ``ghost`` (``benchtui.ui.ghost.Ghost``: ``--baseline OLD.btr``), the panes, the header
and the detail view draw the baseline's figures beside the live ones; ``notices`` are
sentences said once the console is up (why there is no baseline, a damaged baseline file).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.notifications import SeverityLevel
from textual.widget import Widget

from benchtui import gc_policy
from benchtui.errors import BenchtuiError
from benchtui.session.stop_signals import detach_from_terminal, is_hangup, stop_signals
from benchtui.store.fleet import FleetState
from benchtui.ui.chart_window import ChartWindow
from benchtui.ui.console_help import CONSOLE_KEYS
from benchtui.ui.data_wakeup import DataWakeup
from benchtui.ui.detail import HostDetailScreen
from benchtui.ui.draw_now import answer_key, draw_now
from benchtui.ui.footer import ConsoleFooter
from benchtui.ui.grid import HostGrid
from benchtui.ui.hangup import write_nowhere
from benchtui.ui.header import FleetHeader
from benchtui.ui.notices import NoticeBar, event_notices
from benchtui.ui.pane import HostPane
from benchtui.ui.reused_lines import ReusingScreen
from benchtui.ui.screens import SessionLogScreen
from benchtui.ui.scrollbars import use_whole_cell_scrollbars
from benchtui.ui.source import EXIT_INTERRUPTED, EXIT_OK, ConsoleSource
from benchtui.ui.themes import DEFAULT_THEME, ConsoleTheme, load_theme

if TYPE_CHECKING:
    from benchtui.ui.ghost import Ghost

#: The refresh tick (a live session's panes are also drawn as their samples arrive:
#: ``data_wakeup``; the header, the clock and a view a key opened wait for the tick).
REFRESH_HZ = 8.0
#: How long quitting waits for the session to stop its processes (the engine's own
#: timeouts are shorter: TERM, then KILL after a grace period).
STOP_TIMEOUT = 60.0
#: Where the theme's CSS sits in the stylesheet (replaced when the theme changes).
THEME_SOURCE = ("benchtui-theme", "")


class ConsoleBase(App[int]):
    """The console over any ``ConsoleSource``, without its keys (``ConsoleApp``)."""

    TITLE = "benchtui"
    CSS = """
    Screen { layout: vertical; }
    """

    def __init__(self, source: ConsoleSource, *, theme: str = DEFAULT_THEME,
                 window: float | None = None, refresh_hz: float = REFRESH_HZ,
                 ghost: Ghost | None = None, notices: Sequence[str] = (),
                 screenshot_dir: str | None = None) -> None:
        super().__init__()
        use_whole_cell_scrollbars()  # no thumb end drawn like a chart's bar (scrollbars.py)
        self.source = source
        #: Where Screenshot (the palette, Ctrl-S) writes its SVG files: here by default.
        self.screenshot_dir = screenshot_dir
        #: The baseline drawn beside the session (``--baseline``), and what to say at start.
        self.ghost = ghost
        self._notices = list(notices)
        self._ghost_generation = -1
        self.title = f"benchtui · {source.name}" if source.name else "benchtui"
        #: The charts' time window: fitted to the step unless given (or + or - pressed).
        self.chart_window = ChartWindow(window)
        self.refresh_hz = refresh_hz
        self.paused = False
        #: The signals handled as an interrupt while mounted (session/stop_signals.py).
        self._stop_signals: tuple[signal.Signals, ...] = ()
        #: Grows whenever something every widget draws with changes (theme, window).
        self.generation = 0
        self.exit_code: int | None = None
        #: The path of the last screenshot saved (tests).
        self.last_screenshot: str | None = None
        self.console_theme: ConsoleTheme = load_theme(theme)
        self.stylesheet.add_source(self.console_theme.css, read_from=THEME_SOURCE)
        self.register_theme(self.console_theme.textual)
        self._state: FleetState | None = None
        self._events_seen = 0
        self._source_task: asyncio.Task[int | None] | None = None
        self._stopping = False
        self._interrupted = False
        #: Hosts whose drawing failed, with the error type (reported once each).
        self._reported: set[str] = set()
        self.header = FleetHeader()
        self.grid = HostGrid()
        self.notices = NoticeBar()
        self._wakeup = DataWakeup(self._redraw_hosts)

    # --- extension points ------------------------------------------------------------------

    def compose_top(self) -> Iterator[Widget]:
        """Widgets between the header and the host grid (replay: its timeline)."""
        yield from ()

    def compose_bottom(self) -> Iterator[Widget]:
        """Widgets between the host grid and the footer."""
        yield from ()

    def header_badges(self) -> tuple[str, ...]:
        """Words shown on the header's first line."""
        badges = [self.chart_window.badge()]
        if self.ghost is not None:
            badges.insert(0, f"vs {self.ghost.name}")
        if self.paused:
            badges.insert(0, "PAUSED")
        if self._stopping:
            badges.insert(0, "stopping…")
        return tuple(badges)

    def before_refresh(self) -> None:
        """Called on every refresh tick, before the state is read."""

    def help_rows(self) -> list[tuple[str, str]]:
        return list(CONSOLE_KEYS)

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield from ()

    # --- composition -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header
        yield from self.compose_top()
        yield self.grid
        yield from self.compose_bottom()
        yield self.notices
        yield ConsoleFooter()

    def get_default_screen(self) -> ReusingScreen:
        return ReusingScreen()

    def on_mount(self) -> None:
        self.theme = self.console_theme.textual.name
        self.set_interval(1.0 / self.refresh_hz, self.refresh_display, name="refresh")
        self._wakeup.start(asyncio.get_running_loop())
        self._source_task = asyncio.create_task(self._drive(), name="benchtui-source")
        # kill, Ctrl-C outside raw mode, the terminal closed (SIGHUP, unless nohup)
        self._stop_signals = stop_signals()
        for sig in self._stop_signals:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().add_signal_handler(sig, self._on_stop_signal, sig)
        self.call_after_refresh(self.refresh_display)
        for notice in self._notices:
            self.notify(notice, title="baseline", severity="warning", timeout=20)
        # The controller's collector policy while the console is up (gc_policy; put back on
        # unmount: another app in the same process, tests). What exists after the first frame
        # (imports, styles, widgets) lives as long as the console: out of the collector's way,
        # full collections no longer walk it (benchmarks/ui_render.py)
        gc_policy.begin()
        self.call_after_refresh(gc_policy.freeze, collect=False)

    async def on_event(self, event: events.Event) -> None:
        # a key on the host grid: answered and drawn in this turn of the loop (draw_now.py)
        if isinstance(event, events.Key) and self.screen_stack:
            grid = self.screen_stack[0]
            if isinstance(grid, ReusingScreen) and await answer_key(self, event, grid, HostPane):
                draw_now(grid)  # (nothing if the key opened another screen: Textual draws it)
                return
        await super().on_event(event)

    def _on_stop_signal(self, sig: signal.Signals) -> None:
        if is_hangup(sig):  # the terminal went away: stop everything, quietly
            detach_from_terminal()
            write_nowhere(self._driver)
        self.call_later(self._stop_and_exit)

    async def on_unmount(self) -> None:
        self._wakeup.stop()
        gc_policy.end()
        for sig in self._stop_signals:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().remove_signal_handler(sig)
        await self._stop_driver()

    # --- the source ------------------------------------------------------------------------

    async def _drive(self) -> int | None:
        try:
            code = await self.source.run()
        except asyncio.CancelledError:
            raise
        except BenchtuiError as error:
            self.exit_code = error.exit_code
            self.notify(str(error), title="session stopped", severity="error", timeout=60)
            return self.exit_code
        except Exception as error:  # noqa: BLE001 - shown, and the exit code says it failed
            self.exit_code = 1
            self.notify(f"{type(error).__name__}: {error}", title="session crashed",
                        severity="error", timeout=60)
            return self.exit_code
        if code is not None:
            self.exit_code = code
            if code == EXIT_OK:
                self.notify("session finished: every step succeeded; q quits",
                            title="done", timeout=15)
            else:
                self.notify("session finished with failures (l shows the log); q quits",
                            title="done", severity="error", timeout=30)
        return code

    async def _stop_driver(self) -> None:
        """Cancel the source's task and wait until it has stopped everything it started."""
        task = self._source_task
        if task is None or task.done():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(task, STOP_TIMEOUT)

    async def _stop_and_exit(self) -> None:
        if self._stopping:  # a second Ctrl-C: end now, the hosts' watchdogs stop the rest
            task = self._source_task
            if task is not None and not task.done():
                task.cancel()
            return
        self._stopping = True
        if self.source.busy():
            self._interrupted = True
            self.notify("stopping every process benchtui started on every host…",
                        title="quitting", timeout=STOP_TIMEOUT)
            self.refresh_display()
        await self._stop_driver()
        code = EXIT_INTERRUPTED if self._interrupted else self.exit_code
        self.exit(EXIT_OK if code is None else code)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Notices go to the lines above the footer (``NoticeBar``) of every screen that has
        them (the grid, the detail view, the log), never over a pane or a chart; Textual's
        toasts only before the screen is up."""
        if timeout is None:
            timeout = self.NOTIFICATION_TIMEOUT
        bars = [bar for screen in self.screen_stack for bar in screen.query(NoticeBar)
                if bar.is_mounted]
        for bar in bars:
            bar.add(message, title=title, severity=severity, timeout=timeout)
        if not bars:
            super().notify(message, title=title, severity=severity, timeout=timeout,
                           markup=markup)

    @property
    def window(self) -> float:
        """The seconds every chart covers (``chart_window``)."""
        return self.chart_window.seconds

    def window_changed(self) -> None:
        """The charts' window changed: every view draws anew (replay keeps that much)."""
        self.generation += 1

    # --- refreshing ------------------------------------------------------------------------

    def refresh_display(self) -> None:
        """One tick: adopt a new state, notify new warnings, redraw what changed."""
        if not self.screen_stack:  # closing: a redraw asked for after the last screen went
            return
        self.before_refresh()
        state = self.source.state
        if state is not self._state:
            self._adopt(state)
        self._notify_events(state)
        if self.chart_window.follow(state):
            self.window_changed()
        self.header.badges = self.header_badges()
        if self.paused:
            return
        now = self.source.now()
        ghost = self.ghost
        if ghost is not None:
            self._follow_ghost(ghost, state, now)
        screen = self.screen
        if isinstance(screen, SessionLogScreen):
            screen.update_from(state)
            return
        if not isinstance(screen, HostDetailScreen):
            self.header.update_from(state, now, self.generation, ghost=ghost,
                                    runs=self.source.planned_runs())
            self.grid.show_versus(ghost is not None)
            self.grid.sync_hosts(state)
            visible = self.grid.visible_panes()
            if self.focused is None and visible and screen is self.screen_stack[0]:
                visible[0].focus()  # Enter works at once; arrows and Tab move on
        self._draw_hosts(state, now, ghost)

    def _redraw_hosts(self, hosts: set[str]) -> None:
        """``hosts``' samples just arrived (``DataWakeup``): their panes or detail view."""
        state, screen = self._state, self.screen
        if not self.paused and state is not None and state is self.source.state and (
                isinstance(screen, HostDetailScreen) or screen is self.screen_stack[0]):
            self._draw_hosts(state, self.source.now(), self.ghost, hosts)
            if isinstance(screen, ReusingScreen):
                draw_now(screen)  # not some turns of the loop later (draw_now.py)

    def _draw_hosts(self, state: FleetState, now: float, ghost: Ghost | None,
                    hosts: set[str] | None = None) -> None:
        """The detail view's host, else the visible panes (those of ``hosts`` if given)."""
        screen = self.screen
        if isinstance(screen, HostDetailScreen):
            if hosts is None or screen.host in hosts:
                self._guard(screen.host, screen.update_from, state, now, now, self.window,
                            ghost)
            return
        for pane in self.grid.visible_panes():
            if hosts is None or pane.host in hosts:
                self._guard(pane.host, pane.update_from, state, now, now, self.window,
                            self.generation, ghost=ghost)

    def _follow_ghost(self, ghost: Ghost, state: FleetState, now: float) -> None:
        """The baseline follows the step on screen; what it says is said, quietly for a
        step or hosts it does not have; views redraw when its lines start over."""
        try:
            notices = ghost.update(state, now, self.window)
        except Exception as error:  # noqa: BLE001 - the session goes on without the ghost
            self.ghost = None
            self.notify(f"the baseline stopped: {type(error).__name__}: {error}",
                        title="baseline", severity="error", timeout=20)
            return
        for severity, text in notices:
            loud = severity != "information"
            self.notify(text, title="baseline", severity="warning" if loud else "information",
                        timeout=15 if loud else 5)
        if ghost.generation != self._ghost_generation:
            self._ghost_generation = ghost.generation
            self.generation += 1

    def _guard(self, host: str, update: object, *args: object, **kwargs: object) -> None:
        """Run one host's redraw; a bug drawing one host must not stop the others (or the
        session): it is reported once and that host's view keeps its last content."""
        try:
            update(*args, **kwargs)  # type: ignore[operator]
        except Exception as error:  # noqa: BLE001 - contained, reported below
            key = f"{host}:{type(error).__name__}"
            if key not in self._reported:
                self._reported.add(key)
                self.notify(f"cannot draw {host}: {type(error).__name__}: {error}",
                            severity="error", timeout=20)

    def _adopt(self, state: FleetState) -> None:
        """A new state object (start, or a replay seek): start the views over."""
        first = self._state is None
        self._state = state
        self._wakeup.follow(state)
        self._reported = set()
        # Events already in a state adopted later (a replay seek) were notified, or are old.
        self._events_seen = state.events_total
        if not first:
            self.grid.clear_hosts()
        self.grid.sync_hosts(state)

    def _notify_events(self, state: FleetState) -> None:
        total = state.events_total
        new = total - self._events_seen
        self._events_seen = total
        if new > 0:
            for message, title, severity, timeout in event_notices(
                    list(state.events)[-min(new, len(state.events)):]):
                self.notify(message, title=title, severity=severity, timeout=timeout)
