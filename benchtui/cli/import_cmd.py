"""``benchtui import OUTPUT... -o SESSION``: saved tool output made into a session file that
``report``, ``replay``, ``dump`` and ``info`` read like a recorded one (docs/import.md).

Plain outputs take ``--host``/``--step`` (once for all files, or once per file); a pasted
report holding many hosts and steps takes ``--map`` (a TOML file saying which lines mark a
host and which a step). A mistake (unreadable file, bad map, a map rule that matches nothing,
no tool output, an existing SESSION) is one sentence and exit status 2, and nothing is written.
"""

from __future__ import annotations

import argparse
import sys

from benchtui.errors import UsageError
from benchtui.model.format import plural
from benchtui.session.ghost_digest import GhostDigest
from benchtui.session.import_map import load_map
from benchtui.session.importer import import_outputs


def run_import(args: argparse.Namespace) -> int:
    if args.map is not None and (args.host or args.step):
        raise UsageError("--map names the hosts and steps: leave out --host and --step")
    imap = load_map(args.map) if args.map is not None else None
    summary = import_outputs(args.outputs, args.output, import_map=imap,
                             hosts=args.host or (), steps=args.step or (), tool=args.tool,
                             name=args.name, figures=GhostDigest())
    warned = f", {plural(summary.warnings, 'parse warning')} (benchtui info)" \
        if summary.warnings else ""
    print(f"benchtui: imported {summary.path}: {plural(len(summary.hosts), 'host')}, "
          f"{plural(len(summary.steps), 'step')}, {plural(summary.samples, 'sample')}{warned}; "
          "no live timing "
          f"(steps placed one after another, {summary.seconds:.0f} s in all)", file=sys.stderr)
    return 0
