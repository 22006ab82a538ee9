"""``benchtui`` entry point: builds the argument parser and dispatches to a command module.

Errors of the user's making (``BenchtuiError``) become one sentence on stderr and an exit code;
nothing here imports a heavy module until a command needs it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from benchtui import __version__
from benchtui.errors import BenchtuiError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchtui",
        description="Run storage and network benchmarks on many hosts and watch them live.",
    )
    parser.add_argument("--version", action="version", version=f"benchtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "parse",
        help="print the samples found in saved tool output",
        description="Print the samples found in saved benchmark tool output as JSON Lines "
        "(docs/SAMPLES.md) or CSV. The tool is detected from the content unless --tool names it.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="tool output to read; - for stdin")
    p.add_argument("--tool", help="the tool that wrote the output (see --list)")
    p.add_argument("--host", default="-", help='host name to put in the samples (default "-")')
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    p.add_argument("--histograms", action="store_true",
                   help="also print per-interval latency histograms (JSON Lines only)")
    p.add_argument("--list", action="store_true", help="list the tools and formats known")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print warnings")

    p = sub.add_parser(
        "check", help="validate a plan and check its hosts, without running anything",
        description="Validate the plan, connect to every host, print what was found on each "
        "(tool versions, devices) and every problem. Nothing is run.")
    _engine_options(p)

    p = sub.add_parser(
        "run", help="run a plan on its hosts",
        description="Run the plan: monitors for the whole session, steps one after another, "
        "each on all its hosts at once. With --jsonl, samples go to stdout as JSON Lines and "
        "progress to stderr. Exit 0 when all steps succeeded, 1 when any failed, 130 on Ctrl-C.")
    _engine_options(p)
    p.add_argument("--jsonl", action="store_true", help="no console: print samples as JSON Lines")
    p.add_argument("--verbose", "-v", action="store_true", help="print every event on stderr")
    return parser


def _engine_options(p: argparse.ArgumentParser) -> None:
    # Kept here (not imported from the command module) so that --help stays fast.
    p.add_argument("plan", metavar="PLAN", help="the plan file (TOML, see docs/plans.md)")
    p.add_argument("--keep-going", action="store_true",
                   help="run on the hosts that passed preflight even if others did not")
    p.add_argument("--accept-new-host-keys", action="store_true",
                   help="trust and remember the host key of a host seen for the first time")
    p.add_argument("--known-hosts", metavar="FILE", help="known_hosts file to use")
    p.add_argument("--ssh-config", metavar="FILE", help="OpenSSH config file to read")
    p.add_argument("--facts", metavar="FILE",
                   help="write the hosts' facts as a JSON document to FILE (- for stdout)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "parse":
            from benchtui.cli.parse_cmd import run_parse

            return run_parse(args)
        if args.command == "check":
            from benchtui.cli.fleet_cmd import run_check

            return run_check(args)
        if args.command == "run":
            from benchtui.cli.fleet_cmd import run_headless

            return run_headless(args)
    except BenchtuiError as exc:
        print(f"benchtui: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``benchtui parse x | head``): not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    print(f"benchtui: unknown command {args.command!r}", file=sys.stderr)
    return EXIT_USAGE
