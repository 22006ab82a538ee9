"""The console's notices (warnings, errors, "session finished", a screenshot's path) in lines
of their own above the footer (of the host grid, the detail view, the session log), rather
than Textual's toasts, which float over the panes' borders and figures.

``NoticeBar.add(message, title=, severity=, timeout=)`` shows a notice for ``timeout``
seconds; the bar shows the newest ``MAX_SHOWN`` (a line each, wrapped when longer than the
screen is wide, and how many more there are) and takes no room when it has none. The grid
gives up those lines while notices are shown. Each screen has its bar; a notice goes to the
bars of every screen open (``ConsoleApp.notify``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from typing import ClassVar

from rich.text import Text
from textual.notifications import SeverityLevel
from textual.widgets import Static

from benchtui.model import events as ev
from benchtui.model.events import Event

#: Notices shown at once; older ones still current are counted on the last line.
MAX_SHOWN = 3
_MARK = {"information": "•", "warning": "⚠", "error": "✖"}


#: Events' notices per refresh tick at most; the rest are counted in one more.
MAX_NOTIFICATIONS = 3
_NOTIFY_LEVEL: dict[str, SeverityLevel] = {ev.WARNING: "warning", ev.ERROR: "error"}


def event_notices(events: Sequence[Event]) -> list[tuple[str, str, SeverityLevel, float]]:
    """The notices the console shows for new ``events``: (message, title, severity,
    seconds shown) of each warning and error, ``MAX_NOTIFICATIONS`` at most and a last one
    that counts the others."""
    loud = [e for e in events if e.level in _NOTIFY_LEVEL]
    out: list[tuple[str, str, SeverityLevel, float]] = [
        (e.message, " · ".join(x for x in (e.host, e.step) if x) or e.kind,
         _NOTIFY_LEVEL[e.level], 20.0 if e.level == ev.ERROR else 8.0)
        for e in loud[:MAX_NOTIFICATIONS]]
    if len(loud) > MAX_NOTIFICATIONS:
        more = len(loud) - MAX_NOTIFICATIONS
        out.append((f"{more} more warning{'' if more == 1 else 's'}: l shows the log", "",
                    "warning", 8.0))
    return out


@dataclass(frozen=True, slots=True)
class Notice:
    key: int
    message: str
    title: str
    severity: str


class NoticeBar(Static):
    """Current notices, newest last (see the module's docstring)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"notice--information", "notice--warning",
                                             "notice--error", "notice--title"}
    DEFAULT_CSS = """
    NoticeBar { height: auto; max-height: 6; display: none; padding: 0 1;
                background: $panel; }
    NoticeBar > .notice--information { color: $text; }
    NoticeBar > .notice--warning { color: $warning; }
    NoticeBar > .notice--error { color: $error; }
    NoticeBar > .notice--title { text-style: bold; }
    """

    def __init__(self) -> None:
        super().__init__("", classes="notices")
        self.notices: list[Notice] = []
        self._keys = count()

    def add(self, message: str, *, title: str = "", severity: str = "information",
            timeout: float = 5.0) -> Notice:
        """Show ``message`` for ``timeout`` seconds."""
        notice = Notice(next(self._keys), message, title, severity)
        self.notices.append(notice)
        self.set_timer(max(timeout, 0.5), lambda: self.dismiss(notice))
        self._show()
        return notice

    def dismiss(self, notice: Notice) -> None:
        if notice in self.notices:
            self.notices.remove(notice)
            self._show()

    def text(self) -> Text:
        """The lines shown: the newest notices, and how many older ones are not."""
        shown = self.notices[-MAX_SHOWN:]
        hidden = len(self.notices) - len(shown)
        out = Text()
        for i, n in enumerate(shown):
            style = self.get_component_rich_style(f"notice--{n.severity}", partial=True)
            if i:
                out.append("\n")
            out.append(f"{_MARK.get(n.severity, '•')} ", style)
            if n.title:
                out.append(f"{n.title}: ", style + self.get_component_rich_style(
                    "notice--title", partial=True))
            out.append(" ".join(n.message.split()), style)
        if hidden:
            out.append(f"  (+{hidden} older)", self.get_component_rich_style(
                "notice--information", partial=True))
        return out

    def _show(self) -> None:
        self.display = bool(self.notices)
        self.update(self.text())
