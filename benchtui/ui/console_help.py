"""The console's keys (``ConsoleApp.BINDINGS``) and what its help says of them and of the
screen (``screens.HelpScreen``). Front ends built on the console add their own keys
(``ConsoleApp.help_rows``)."""

from __future__ import annotations

from textual.binding import Binding

#: + and - side by side in the footer: "+ - Window".
WINDOW_KEYS = Binding.Group("Window")
#: The console's keys (the footer shows those with ``show``).
CONSOLE_BINDINGS: tuple[Binding, ...] = (
    Binding("question_mark", "help", "Help"),
    Binding("p", "pause", "Pause"),
    Binding("plus,equals_sign", "window(1)", "Window+", key_display="+",
            group=WINDOW_KEYS),
    Binding("minus", "window(-1)", "Window-", key_display="-", group=WINDOW_KEYS),
    Binding("t", "cycle_theme", "Theme"),
    Binding("l", "log", "Log"),
    Binding("m", "mark", "Mark", show=False),
    Binding("c", "compact", "Compact", show=False),
    Binding("left", "move(-1, 0)", "Previous host", show=False),
    Binding("right", "move(1, 0)", "Next host", show=False),
    Binding("up", "move(0, -1)", "Host above", show=False),
    Binding("down", "move(0, 1)", "Host below", show=False),
    Binding("pageup", "page(-1)", "Page up", show=False),
    Binding("pagedown", "page(1)", "Page down", show=False),
    Binding("q", "quit", "Quit"),
    Binding("ctrl+c", "interrupt", "Stop", show=False, priority=True),
)

#: The console's keys and what each does, in the help's order.
CONSOLE_KEYS: tuple[tuple[str, str], ...] = (
    ("?", "this help"),
    ("p", "pause the display (data keeps flowing); p again resumes"),
    ("+ / -", "longer / shorter chart time window"),
    ("t", "next theme: the built-in ones, then yours (benchtui themes lists them)"),
    ("l", "session log: events, warnings and errors (a: routine ones too)"),
    ("m", "mark this moment with a note: in the log, the recording (replay's timeline "
          "shows it) and the exporter's events"),
    ("c", "compact rows on/off (one line per host)"),
    ("PgUp / PgDn", "previous / next page of hosts"),
    ("arrows, Tab", "move between hosts"),
    ("Enter, click", "a host's detail view: charts, devices, jobs, raw output"),
    ("1-4 (detail)", "charts, devices, jobs, output tabs; Esc goes back"),
    ("o / f (detail)", "output of the next tool / fio's JSON folded or as printed"),
    ("a (log)", "show routine events too (processes started and ended, hosts "
                "running and done), or hide them"),
    ("q", "quit; while steps run, asks first: quitting stops them on every host"),
    ("Ctrl-C", "stop the session now and quit (exit code 130)"),
    ("Ctrl-P", "command palette (Screenshot: an SVG here or in --screenshot-dir)"),
)

#: The help's notes: paragraphs, each wrapped by the help box to its width.
HELP_NOTES = "\n".join([
    "Header: session, current step with progress and ETA, elapsed time, hosts up/total, "
    "fleet IOPS and bandwidth (summed over hosts), fleet latency p50/p99/p99.9 (quantiles "
    "of the merged histograms of every host, never an average of percentiles).",
    "Panes: r = read, w = write; charts end now and cover the chart window (the header's "
    "badge: the running step's length by default, + and - change it); a gap at the right "
    "of a chart means the host stopped reporting. Numbers are current values (the last "
    "5 s).",
    "Baseline (--baseline OLD.btr): dotted lines are the baseline's figures at the same "
    "second of the step; a percentage after a number is its share of the baseline's, "
    "coloured outside the tolerance (latency: p99, higher is worse).",
])
