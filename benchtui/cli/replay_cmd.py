"""``benchtui replay SESSION``: a recorded session in the live console, played back.

The file is opened (and its warnings printed) before the screen changes, so that a missing,
damaged or too-new file is one sentence on stderr and exit 1, never a broken screen. The
replay starts playing at ``--speed`` from the session's start; see ``benchtui.ui.replay`` for
the keys.
"""

from __future__ import annotations

import argparse
import sys

from benchtui.errors import UsageError
from benchtui.session.compare import SessionLayout
from benchtui.session.replay import MAX_SPEED, MIN_SPEED, ReplayPlayer
from benchtui.store.recording import SessionReader

EXIT_OK = 0
EXIT_FAILED = 1


def run_replay(args: argparse.Namespace) -> int:
    if not MIN_SPEED <= args.speed <= MAX_SPEED:
        raise UsageError(f"--speed must be between {MIN_SPEED:g} and {MAX_SPEED:g} "
                         f"(got {args.speed:g})")
    if args.history < 1:
        raise UsageError("--history must be at least 1 point")
    # Textual is imported only now: dump/info and --help stay fast.
    from benchtui.cli.baseline_opts import console_ghost
    from benchtui.ui.replay import ReplayApp, ReplaySource
    from benchtui.ui.themes import load_theme

    load_theme(args.theme)  # a wrong name is one sentence here, before the screen changes
    with SessionReader.open(args.session) as reader:
        for warning in reader.warnings:
            print(f"benchtui: warning: {warning}", file=sys.stderr)
        layout = SessionLayout.from_events(reader.events())
        with console_ghost(args, lambda b: b.check_session(layout)) as (ghost, notices):
            player = ReplayPlayer(reader, history=args.history, speed=args.speed)
            player.play()
            app = ReplayApp(ReplaySource(player), theme=args.theme, ghost=ghost,
                            notices=notices, screenshot_dir=args.screenshot_dir)
            code = app.run()
    if code is None:  # the console itself failed; Textual printed why
        return app.return_code or EXIT_FAILED
    return EXIT_OK
