"""``benchtui`` entry point: builds the argument parser and dispatches to a command module.

Errors of the user's making (``BenchtuiError``) become one sentence on stderr and an exit code;
nothing here imports a heavy module until a command needs it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from benchtui import gc_policy
from benchtui.cli.output import (
    failure_sentence,
    guard_stderr,
    guard_stdout,
    reserve_closed_descriptors,
    silence_stdout,
)
from benchtui.cli.skip_arg import skip_seconds
from benchtui.cli.version import VersionAction
from benchtui.errors import BenchtuiError, UsageError
from benchtui.model.fio_buckets import DEFAULT_BITS, FIO_PLAT_BITS, MIN_BITS

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import NoReturn

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only="parse"``: the root and ``parse`` alone (what
    ``benchtui parse ...`` needs: the other commands' options import their modules, a good
    part of the start-up of a parse of a short capture)."""
    parser = argparse.ArgumentParser(
        prog="benchtui",
        description="Run storage and network benchmarks on many hosts and watch them live.",
    )
    parser.add_argument("--version", action=VersionAction)
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
    if only == "parse":
        return parser

    p = sub.add_parser(
        "check", help="validate a plan and check its hosts, without running anything",
        description="Validate the plan, connect to every host, print what was found on each "
        "(tool versions, devices) and every problem. Nothing is run.")
    _engine_options(p)
    p.add_argument("--commands", action="store_true",
                   help="also print the exact command line each host will run for every step "
                   "and monitor (after sweeps and placeholders, shell-quoted as it runs)")

    p = sub.add_parser(
        "run", help="run a plan on its hosts, in the live console",
        description="Run the plan: monitors for the whole session, steps one after another, "
        "each on all its hosts at once, shown live in the console. With --jsonl there is no "
        "console: samples go to stdout as JSON Lines and progress to stderr. Exit 0 when all "
        "steps succeeded, 1 when any failed, 130 on Ctrl-C.")
    _engine_options(p)
    p.add_argument("--jsonl", action="store_true", help="no console: print samples as JSON Lines")
    p.add_argument("--verbose", "-v", action="store_true", help="print every event on stderr")
    _histogram_option(p)
    _watchdog_options(p)
    _recording_options(p)
    _console_options(p)
    _baseline_options(p)

    p = sub.add_parser(
        "demo", help="run a short built-in fio + iostat plan on this machine, in the console",
        description="Run a built-in plan on this machine (fio randrw on a temporary file in "
        "your cache directory, with iostat or /proc/diskstats beside it) in the live console.")
    p.add_argument("--seconds", type=int, default=60, help="how long fio runs (default 60)")
    _histogram_option(p)
    _watchdog_options(p)
    _recording_options(p)
    _console_options(p)
    _baseline_options(p)

    p = sub.add_parser(
        "record", help="run a plan headless and record the session to a file",
        description="Run the plan with no console and record everything (plan, host facts, "
        "events, samples, raw output) to a session file; progress goes to stderr.")
    _engine_options(p)
    p.add_argument("--output", "-o", metavar="SESSION", required=True,
                   help="the session file to write")
    p.add_argument("--export", metavar="ADDR",
                   help="also serve Prometheus metrics on ADDR (host:port) while recording")
    p.add_argument("--history", "--history-catalog", dest="history_catalog", nargs="?",
                   const="", metavar="URL", help="add the session to a history catalog when "
                   "it ends (default catalog without URL; docs/history.md)")
    _attr_option(p)
    p.add_argument("--verbose", "-v", action="store_true", help="print every event on stderr")
    _histogram_option(p)
    _watchdog_options(p)
    _baseline_options(p)

    p = sub.add_parser(
        "replay", help="replay a recorded session in the console",
        description="Open a session file in the console: play, pause, speed x0.25 to x32, "
        "step, seek, jump between events.")
    p.add_argument("session", metavar="SESSION", help="a session file (benchtui record)")
    p.add_argument("--speed", type=float, default=1.0, help="playback speed (0.25 to 32)")
    _console_options(p)
    _baseline_options(p)

    p = sub.add_parser(
        "dump", help="print the samples of a recorded session",
        description="Print the samples recorded in a session file as JSON Lines "
        "(docs/SAMPLES.md), CSV or OpenMetrics (for promtool tsdb create-blocks-from "
        "openmetrics).")
    p.add_argument("session", metavar="SESSION", help="a session file (benchtui record)")
    p.add_argument("--format", choices=("jsonl", "csv", "openmetrics"), default="jsonl")
    p.add_argument("--host", action="append", metavar="H", help="only this host (repeatable)")
    p.add_argument("--metric", action="append", metavar="M",
                   help="only this metric (repeatable)")
    p.add_argument("--from", dest="from_", metavar="T",
                   help="from this time: seconds into the session, or an ISO 8601 time")
    p.add_argument("--to", metavar="T",
                   help="up to this time: seconds into the session, or an ISO 8601 time")
    p.add_argument("--histograms", action="store_true",
                   help="also print per-interval latency histograms (JSON Lines only)")

    p = sub.add_parser(
        "info", help="describe a recorded session",
        description="Print a session file's plan, hosts, steps, duration, size and any gaps.")
    p.add_argument("session", metavar="SESSION", help="a session file (benchtui record)")
    p.add_argument("--json", action="store_true", help="print it as a JSON document")
    p.add_argument("--verify", action="store_true",
                   help="read every frame (not only the index) and say what is damaged; "
                   "exit 1 when anything is")

    p = sub.add_parser(
        "import", help="make a session file from saved tool output",
        description="Make a session file from saved tool output, which report, replay, "
        "dump and info read like a recorded one. Plain outputs take --host and --step; a "
        "pasted report holding many hosts and steps takes --map, a TOML file saying which "
        "headings, bullets or comments mark a host and which a step (docs/import.md).")
    p.add_argument("outputs", nargs="+", metavar="OUTPUT", help="saved tool output to read")
    p.add_argument("--output", "-o", metavar="SESSION", required=True,
                   help="the session file to write (never overwritten)")
    p.add_argument("--map", metavar="FILE", help="the map of a report with many hosts and steps")
    p.add_argument("--host", action="append", metavar="H",
                   help="the host of plain output (once for all files, or once per file)")
    p.add_argument("--step", action="append", metavar="S",
                   help="the step of plain output (once for all files, or once per file)")
    p.add_argument("--tool", help="the tool that wrote the output (see parse --list)")
    p.add_argument("--name", help="the session's name (default: the first file's name)")

    p = sub.add_parser(
        "report", help="tables of sessions' steps and hosts, against a baseline",
        description="Print one row per step and host of each session (and a fleet row per "
        "step whose percentiles come from the merged histograms): IOPS, bandwidth, latency "
        "mean/p50/p99/p99.9 per op, device utilisation and await, network and memory "
        "figures, over each run minus its ramp-up. With --baseline every value is also a "
        "percentage of the baseline row. --fail-below/--fail-above make it a regression "
        "gate: exit 3 when a value falls past a threshold (docs/report.md).")
    p.add_argument("sessions", nargs="+", metavar="SESSION", help="session files to report")
    p.add_argument("--baseline", metavar="SELECTOR",
                   help="host=NAME, step=NAME or session=FILE: what every row is compared with")
    p.add_argument("--baseline-host", metavar="NAME",
                   help="with session=FILE: compare every host with this host of the baseline "
                   "session (or 'fleet': with its fleet)")
    p.add_argument("--format", choices=("md", "csv", "json", "html"), default="md",
                   help="md (the seeds' tables, default), csv (tidy: one row per value), json, "
                   "html (one self-contained page: the tables, plots of every step, the "
                   "hosts' facts)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write the report to FILE (written whole or not at all); default stdout")
    p.add_argument("--skip", metavar="SECONDS", type=skip_seconds, default=None,
                   help="seconds of ramp-up left out at the start of every run (default 5)")
    p.add_argument("--select", choices=("all", "median", "best"),
                   help="of a repeated step's runs, show all, the median or the best (IOPS); "
                   "default: the plan's select, else all")
    p.add_argument("--figures", choices=("window", "summary"),
                   help="IOPS, bandwidth and mean latency from the per-second figures over "
                   "each run's window, or from the tool's end-of-run summary (default: window "
                   "for recorded sessions, summary for imported ones)")
    p.add_argument("--steps", action="append", metavar="PATTERN", default=[],
                   help="only the steps whose name (as benchtui check prints it) matches "
                   "PATTERN (shell-style: 'rand bs=4k*'); repeatable")
    p.add_argument("--exclude-step", action="append", metavar="PATTERN", default=[],
                   help="leave out the steps whose name matches PATTERN (e.g. layout); "
                   "repeatable")
    p.add_argument("--fail-below", action="append", metavar="[METRIC=]N%", default=[],
                   help="exit 3 when a value is below N%% of its baseline (default metrics: "
                   "IOPS, bandwidth, network, memory, scores); repeatable")
    p.add_argument("--fail-above", action="append", metavar="[METRIC=]N%", default=[],
                   help="exit 3 when a value is above N%% of its baseline (default metrics: "
                   "latency mean and percentiles), e.g. p99=110%%; repeatable")

    p = sub.add_parser(
        "plot", help="plot one step's per-second IOPS, bandwidth or latency to PNG or SVG",
        description="Draw one step of a recorded session: the per-second IOPS, bandwidth or "
        "latency percentiles (p50/p99/p99.9) of every host (or one) over its run, one panel "
        "per op, the ramp-up left out of report's tables shaded. The format is the output "
        "file's extension (.png or .svg); the file is written whole or not at all.")
    p.add_argument("session", metavar="SESSION", help="a session file (benchtui record)")
    p.add_argument("--step", required=True, metavar="STEP",
                   help="the step's name, or one run of a repeated step (randrw#2)")
    p.add_argument("--metric", default=None, metavar="METRIC",
                   help="iops, bandwidth, latency or net (default: the step's own: IOPS, "
                   "else network)")
    p.add_argument("--size", metavar="WxH", default=None,
                   help="the plot's size in pixels (at --dpi), e.g. 1200x600")
    p.add_argument("--dpi", type=float, default=None, metavar="N",
                   help="dots per inch of a PNG (default 110); with --size, the text's scale")
    p.add_argument("--host", metavar="NAME", help="only this host (default: every host)")
    p.add_argument("--select", choices=("median", "best", "all"),
                   help="of a repeated step's runs, each host's median or best (IOPS) "
                   "(default: the plan's select, else median); all: name one run")
    p.add_argument("--skip", metavar="SECONDS", type=skip_seconds, default=None,
                   help="seconds of ramp-up shaded at the start of the run (default 5, as "
                   "report)")
    p.add_argument("--output", "-o", metavar="FILE", required=True,
                   help="the plot to write: FILE.png or FILE.svg")

    p = sub.add_parser(
        "serve", help="run a plan headless and serve Prometheus metrics",
        description="Run the plan with no console and serve its live values on /metrics for "
        "Prometheus while it runs, and for --linger seconds after the last step.")
    _engine_options(p)
    p.add_argument("--listen", metavar="ADDR", default="127.0.0.1:9464",
                   help="host:port to serve /metrics on (default 127.0.0.1:9464)")
    p.add_argument("--linger", type=float, default=30.0, metavar="SECONDS",
                   help="keep serving this long after the last step (default 30)")
    p.add_argument("--record", metavar="SESSION", help="also record the session to this file")
    p.add_argument("--verbose", "-v", action="store_true", help="print every event on stderr")
    _histogram_option(p)
    _watchdog_options(p)

    from benchtui.cli.history_cmd import add_parser as add_history_parser

    add_history_parser(sub)
    # the files shipped with benchtui, and shell completion
    from benchtui.cli.completion_cmd import add_parser as add_completion_parser
    from benchtui.cli.shipped_cmd import add_parsers as add_shipped_parsers

    add_shipped_parsers(sub)
    add_completion_parser(sub)
    return parser


def _histogram_bits(text: str) -> int:
    try:
        bits = int(text)
    except ValueError:
        bits = -1
    if not MIN_BITS <= bits <= FIO_PLAT_BITS:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from {MIN_BITS} to {FIO_PLAT_BITS}, not {text!r} "
            f"({FIO_PLAT_BITS} keeps fio's own resolution)")
    return bits


def _histogram_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--histogram-bits", type=_histogram_bits, metavar="N",
                   help="keep latency histograms at N sub-bucket bits per power of two of "
                   f"fio's scheme ({MIN_BITS}-{FIO_PLAT_BITS}; {FIO_PLAT_BITS}: fio's own "
                   f"resolution, exact; default: the plan's [session] histogram_bits, "
                   f"else {DEFAULT_BITS}: percentiles within 3.1%%)")


def _controller_grace(text: str) -> float:
    from benchtui.plan.grace import parse_grace

    try:
        return parse_grace(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parse_workers(text: str) -> int:
    if not text.isdigit() or int(text) > 64:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes from 0 to 64")
    return int(text)


def _reconnect_window(text: str) -> float:
    from benchtui.plan.grace import WINDOW_EXAMPLES, parse_window

    try:
        return parse_window(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} {exc}; write {WINDOW_EXAMPLES}") from None


def _watchdog_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--controller-grace", type=_controller_grace, metavar="DURATION",
                   help="how long each host lets this session's processes run on once this "
                   "benchtui is gone (killed, or its connection down and not back), then "
                   "stops them: 60s, 5m, 0 (at once) or off (until their deadline); default: "
                   "the plan's [session] controller_grace, else 60s")
    p.add_argument("--reconnect-window", type=_reconnect_window, metavar="DURATION",
                   help="how long a host may stay unreachable (its link lost and not made "
                   "again) before the session gives it up, fails its runs and goes on "
                   "without it: 30s, 2m; default: the plan's [session] reconnect_window, "
                   "else 120s (the grace + 30s when that is longer)")
    p.add_argument("--stop-leftovers", action="store_true",
                   help="stop the processes an earlier run of the same plan left running on "
                   "the hosts (preflight refuses to start while there are some)")
    p.add_argument("--parse-workers", type=_parse_workers, metavar="N",
                   help="parse the hosts' output in N processes of their own, to use more "
                   "than one core (0: in this process); default: one per core this process "
                   "may run on (its CPU affinity) but two (at most 4) for sessions of 16 "
                   "hosts or more on 4 such cores or more, else 0")


def _attr_option(p: argparse.ArgumentParser) -> None:
    from benchtui.cli.history_cmd import attribute

    p.add_argument("--attr", type=attribute, action="append", default=[],
                   metavar="NAME=VALUE", help="with the history catalog: an attribute of the "
                   "run (commit=abc123, branch=main, build=...); repeatable")


def _recording_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--record", metavar="SESSION", help="also record the session to this file")
    p.add_argument("--history-catalog", nargs="?", const="", metavar="URL",
                   help="with --record: add the session to a history catalog when it ends "
                   "(default catalog without URL; docs/history.md)")
    _attr_option(p)
    p.add_argument("--export", metavar="ADDR",
                   help="also serve Prometheus metrics on ADDR (host:port)")


def _console_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--theme", default="dark", metavar="NAME",
                   help="console theme: a name from themes/ (dark, light, high-contrast)")
    p.add_argument("--history", type=int, default=3600, metavar="POINTS",
                   help="points kept per chart series, older ones are dropped (default 3600: "
                   "an hour at one sample a second); bounds memory however long it runs")
    p.add_argument("--screenshot-dir", metavar="DIR", type=_directory,
                   help="where the console's Screenshot (command palette) writes its SVG "
                   "files (default: the current directory)")


def _directory(text: str) -> str:
    """An existing directory (``--screenshot-dir``), said at start rather than at the first
    screenshot."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory (create it first)")
    return text


def _tolerance(text: str) -> float:
    """``5%`` or ``5`` (percent) -> 0.05."""
    try:
        value = float(text.strip().removesuffix("%")) / 100.0
    except ValueError:
        value = -1.0
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to 99, such as 5%, "
                                          f"not {text!r}")
    return value


def _baseline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", metavar="OLD.btr",
                   help="a recorded session to compare with: its figures at the same second "
                   "of each step (steps and hosts matched by name) drawn as faint lines, and "
                   "each number's share of the baseline's")
    p.add_argument("--baseline-host", metavar="NAME",
                   help="compare every host with this host of the baseline (e.g. the "
                   "physical machine), or with its fleet: --baseline-host fleet")
    p.add_argument("--tolerance", type=_tolerance, default=0.05, metavar="PCT",
                   help="shares of the baseline within this are not coloured (default 5%%)")


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


def program() -> NoReturn:
    """The ``benchtui`` program (its console script, ``python -m benchtui``): ``main`` with
    the process's arguments, then the process's end (``gc_policy.ending`` after ``parse``)."""
    code = main()
    if sys.argv[1:2] == ["parse"]:
        gc_policy.ending()
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. Standard output that cannot be written (a full disk,
    a reader gone, a closed descriptor) ends any command the same way: one sentence, exit 1.
    Standard error that cannot be written stops nothing, but the exit status is then 1."""
    reserve_closed_descriptors()
    with guard_stderr() as stderr:
        code = _guarded(argv)
    return EXIT_FAILED if code == EXIT_OK and stderr.error is not None else code


def _guarded(argv: Sequence[str] | None) -> int:
    with guard_stdout() as guard:
        try:
            try:
                code = _dispatch(argv)
            except SystemExit:  # argparse: --help, --version, a usage error
                sys.stdout.flush()
                if guard.error is not None:  # argparse swallows its own write errors
                    raise guard.error from None
                raise
            sys.stdout.flush()
            return code
        except OSError as exc:
            sentence = failure_sentence(exc, guard)
            if sentence is None:
                sentence = _os_sentence(exc)
            else:
                silence_stdout()  # (what is still buffered for it can go nowhere)
            print(f"benchtui: {sentence}", file=sys.stderr)
            return EXIT_FAILED


def _os_sentence(exc: OSError) -> str:
    """An operating system error no command turned into words: still one sentence."""
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _dispatch(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser("parse" if words and words[0] == "parse" else None)
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
        if args.command in ("run", "demo") and args.history_catalog is not None \
                and not args.record:
            raise UsageError("--history-catalog adds the recorded session: give --record "
                             "SESSION too")
        if args.command in ("run", "demo", "record") and args.attr \
                and args.history_catalog is None:
            option = "--history" if args.command == "record" else "--history-catalog"
            raise UsageError(f"--attr is an attribute of the run in the history catalog: "
                             f"give {option} too")
        if args.command in ("run", "demo", "record") and args.history_catalog is not None:
            from benchtui.cli.history_add import check_catalog_for_recording

            check_catalog_for_recording(args.history_catalog)  # before the run, not after
        if args.command == "run":
            if args.jsonl and args.baseline:
                raise UsageError("--baseline goes with the console, not with --jsonl")
            if args.jsonl:
                from benchtui.cli.fleet_cmd import run_headless

                return run_headless(args)
            from benchtui.cli.console_cmd import run_console

            return run_console(args)
        if args.command == "demo":
            from benchtui.cli.console_cmd import run_demo

            return run_demo(args)
        if args.command == "record":
            from benchtui.cli.record_cmd import run_record

            return run_record(args)
        if args.command == "replay":
            from benchtui.cli.replay_cmd import run_replay

            return run_replay(args)
        if args.command in ("dump", "info"):
            from benchtui.cli.dump_cmd import run_dump, run_info

            return run_dump(args) if args.command == "dump" else run_info(args)
        if args.command == "import":
            from benchtui.cli.import_cmd import run_import

            return run_import(args)
        if args.command == "report":
            from benchtui.cli.report_cmd import run_report

            return run_report(args)
        if args.command == "plot":
            from benchtui.cli.plot_cmd import run_plot

            return run_plot(args)
        if args.command == "history":
            from benchtui.cli.history_cmd import run_history

            return run_history(args)
        if args.command == "serve":
            from benchtui.cli.serve_cmd import run_serve

            return run_serve(args)
        if args.command in ("examples", "themes"):
            from benchtui.cli.shipped_cmd import run_examples, run_themes

            return run_examples(args) if args.command == "examples" else run_themes(args)
        if args.command == "completion":
            from benchtui.cli.completion_cmd import run_completion

            return run_completion(args, parser)
    except BenchtuiError as exc:
        print(f"benchtui: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    print(f"benchtui: unknown command {args.command!r}", file=sys.stderr)
    return EXIT_USAGE
