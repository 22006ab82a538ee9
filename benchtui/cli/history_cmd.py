"""``benchtui history ...``: a catalog of sessions, their series and change points, and a
gate on sustained changes (docs/history.md).

Exit status: 0; 1 when the catalog cannot be opened or written, a session file cannot be
read or is refused (an absurd figure, a reserved host name), or ``check`` finds damage; 2
for a mistake on the command line (a plan, step, run or change not in the catalog);
``gate``: 3 when a new confirmed regression appeared since the last gate or the plan's
newest ``--require-complete`` runs did not complete, 4 (with ``--require-history N``) when
a gated series has fewer than N points.

Only argparse is imported at the top: ``benchtui --help`` builds this parser.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import suppress
from datetime import datetime
from typing import TYPE_CHECKING

from benchtui.cli.history_add import say as _say
from benchtui.cli.skip_arg import skip_seconds

if TYPE_CHECKING:
    from benchtui.history.analysis import Analysed, Options
    from benchtui.history.catalog import Catalog


def _p_value(text: str) -> float:
    try:
        p = float(text)
    except ValueError:
        p = -1.0
    if not 0.0 < p < 1.0:
        raise argparse.ArgumentTypeError(f"must be a probability between 0 and 1, such as "
                                         f"0.001, not {text!r}")
    return p


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return n


def _window(text: str) -> int:
    n = _positive(text)
    if n < 4:
        raise argparse.ArgumentTypeError(f"must be at least 4 points, not {text!r}")
    return n


def _change(text: str) -> float:
    try:
        v = float(text.strip().removesuffix("%")) / 100.0
    except ValueError:
        v = -1.0
    if not 0.0 <= v < 10.0:
        raise argparse.ArgumentTypeError(f"must be a percentage such as 5%, not {text!r}")
    return v


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number (0 or more), not {text!r}")
    return n


def attribute(text: str) -> tuple[str, str]:
    """``--attr NAME=VALUE`` (``history import``, ``record --history``, ``run
    --history-catalog``)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"must be NAME=VALUE (e.g. commit=abc123), not "
                                         f"{text!r}")
    return name.strip(), value.strip()


def _since(text: str) -> float:
    text = text.strip()
    units = {"h": 3600, "d": 86400, "w": 7 * 86400}
    if text[:-1].isdigit() and text[-1:] in units:
        return time.time() - int(text[:-1]) * units[text[-1]]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a date (2026-11-01), a time "
                                         f"(2026-11-01T08:00) or an age (30d, 12h, 8w), not "
                                         f"{text!r}") from None


def _catalog_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--catalog", metavar="URL",
                   help="a SQLite file, or postgresql://USER@HOST:PORT/DB (default: "
                   "~/.local/share/benchtui/history.sqlite)")


def _analysis_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--p", type=_p_value, default=0.001, metavar="P",
                   help="the t-test's significance (default 0.001)")
    p.add_argument("--window", type=_window, default=50, metavar="N",
                   help="e-divisive's window in points (default 50)")
    p.add_argument("--min-change", type=_change, default=0.0, metavar="PCT",
                   help="changes smaller than this are not reported (default 0%%)")
    p.add_argument("--confirm", type=_positive, default=5, metavar="N",
                   help="runs a new level must hold to be confirmed (default 5)")


def _filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("plan", metavar="PLAN", help="the plan's name (its [session] name)")
    p.add_argument("--step", metavar="STEP", help="only this step")
    p.add_argument("--metric", metavar="M",
                   help="only this metric: iops, bw, lat_mean, lat_p99, util")
    p.add_argument("--host", metavar="H", help="only this scope: a host, or (fleet)")
    p.add_argument("--since", type=_since, metavar="DATE",
                   help="only runs since DATE (2026-11-01) or for an age (30d)")
    p.add_argument("--branch", metavar="B", help="only runs with the attribute branch=B")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``history`` and its commands, on ``benchtui``'s subparsers."""
    h = sub.add_parser(
        "history", help="a catalog of sessions: series, change points and a gate",
        description="Keep every session's figures in a catalog (SQLite, or PostgreSQL for a "
        "team), as series per step, metric and host; find the changes that held "
        "(e-divisive means with a t-test, as Apache Otava) and gate on them "
        "(docs/history.md).")
    hs = h.add_subparsers(dest="history_command", metavar="COMMAND")

    p = hs.add_parser("import", help="add sessions to the catalog (twice changes nothing)")
    p.add_argument("sessions", nargs="+", metavar="SESSION", help="session files")
    _catalog_option(p)
    p.add_argument("--attr", type=attribute, action="append", default=[], metavar="NAME=VALUE",
                   help="an attribute of the runs: commit=abc123, branch=main, version=..., "
                   "build=...; repeatable")
    p.add_argument("--skip", type=skip_seconds, default=None, metavar="SECONDS",
                   help="ramp-up left out of each run's figures (default 5, as report)")

    p = hs.add_parser("gate", help="exit 3 on a new confirmed regression since the last gate")
    p.add_argument("plan", metavar="PLAN", help="the plan's name")
    _catalog_option(p)
    p.add_argument("--require-history", type=_positive, metavar="N",
                   help="exit 4 when a gated series has fewer than N points")
    p.add_argument("--metric", action="append", default=[], metavar="M",
                   help="gate only this metric: iops, bw, lat_mean, lat_p99; repeatable "
                   "(default: all four)")
    p.add_argument("--scope", choices=("fleet", "host", "all"), default="fleet",
                   help="gate the fleet's series (default), each host's own, or both")
    p.add_argument("--require-complete", type=_count, default=1, metavar="N",
                   help="exit 3 when the plan's newest N runs did not complete (default 1; "
                   "0: never)")
    _analysis_options(p)

    p = hs.add_parser("show", help="each series' sparkline, level, last change and verdict")
    _filters(p)
    _catalog_option(p)
    p.add_argument("--last", type=_positive, default=40, metavar="N",
                   help="points in the sparkline (default 40)")
    _analysis_options(p)

    p = hs.add_parser("analyze", help="every series' change points as md, json, junit or html")
    _filters(p)
    _catalog_option(p)
    p.add_argument("--format", choices=("md", "json", "junit", "html"), default="md")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE (whole or not at all)")
    p.add_argument("--link", metavar="TEMPLATE",
                   help="html: where each point links, with {path}, {session}, {run} (default: "
                   "the session file's report next to it, PATH.html)")
    p.add_argument("--require-history", type=_positive, default=10, metavar="N",
                   help="junit: series with fewer points are skipped (default 10)")
    _analysis_options(p)

    p = hs.add_parser("export", help="one row per run, step and scope, one column per metric")
    p.add_argument("plan", nargs="?", metavar="PLAN", help="only this plan")
    _catalog_option(p)
    p.add_argument("--csv", action="store_true", help="CSV (the only format, and the default)")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE; default stdout")

    p = hs.add_parser("ack", help="acknowledge a change: it no longer fails a gate")
    p.add_argument("change", type=_positive, metavar="CHANGE", help="the change's number")
    p.add_argument("--reason", default="", help="why (kept in the catalog)")
    _catalog_option(p)

    p = hs.add_parser("exclude", help="leave a run out of the analysis (shown hollow)")
    p.add_argument("run", type=_positive, metavar="RUN", help="the run's number")
    p.add_argument("--reason", required=True, help="why (kept in the catalog)")
    _catalog_option(p)

    p = hs.add_parser("env-change", help="mark a run as the first of a new environment")
    p.add_argument("run", type=_positive, metavar="RUN", help="the run's number")
    p.add_argument("--reason", default="", help="what changed (a new kernel, a re-imaged disk)")
    _catalog_option(p)

    p = hs.add_parser("check", help="is the catalog whole, and does it still hold what was "
                      "imported? (reads only; exit 1 on damage)")
    _catalog_option(p)


def _options(args: argparse.Namespace) -> Options:
    from benchtui.history.analysis import Options

    return Options(window=args.window, p=args.p, min_change=args.min_change,
                   confirm=args.confirm)


def _known_plan(catalog: Catalog, plan: str) -> None:
    from benchtui.errors import CompareError

    plans = tuple(r[0] for r in catalog.rows("SELECT DISTINCT plan FROM runs ORDER BY plan"))
    if plan not in plans:
        raise CompareError(f"the plan {plan!r} is not in the catalog {catalog.name}",
                           known=plans, hint="import its sessions with benchtui history "
                           "import" if not plans else "")


def _check_filters(catalog: Catalog, args: argparse.Namespace) -> str | None:
    """The metric's report name; CompareError for a step, metric or host not there."""
    from benchtui.errors import CompareError
    from benchtui.history.series import METRICS, metric_named

    _known_plan(catalog, args.plan)
    for column, value, what in (("step", args.step, "step"), ("scope", args.host, "host")):
        if value is None:
            continue
        known = tuple(r[0] for r in catalog.rows(
            f"SELECT DISTINCT {column} FROM series WHERE plan = ? ORDER BY {column}",
            (args.plan,)))
        if value not in known:
            raise CompareError(f"the {what} {value!r} of plan {args.plan!r} is not in the "
                               "catalog", known=known)
    if args.metric is None:
        return None
    m = metric_named(args.metric)
    if m is None:
        raise CompareError(f"{args.metric!r} is not a metric of the history",
                           known=tuple(x.short for x in METRICS))
    return m.name


def _open(args: argparse.Namespace) -> Catalog:
    """The catalog of a command that does not import: a SQLite file must exist (and
    ``check`` writes nothing)."""
    from benchtui.history.catalog import open_catalog

    return open_catalog(args.catalog, create=False,
                        read_only=args.history_command == "check", say=_say)


def _left_out(catalog: Catalog, plan: str) -> None:
    """One sentence per figure of ``plan`` beyond its bounds (left out of the analysis)."""
    from benchtui.history.bounds import beyond
    from benchtui.history.check import outside_bounds

    found = outside_bounds(catalog, plan)
    for run_id, path, scope, metric, op, value in found[:5]:
        _say(f"history: run {run_id} ({path}), {scope}: {beyond(metric, op, value)}; that "
             f"point is left out (history exclude {run_id} --reason ... says why)")
    if len(found) > 5:
        _say(f"history: {len(found) - 5} more points beyond their bounds are left out "
             "(history check lists them)")


def _analysed(catalog: Catalog, args: argparse.Namespace) -> list[Analysed]:
    from benchtui.history.analysis import analyse_plan
    from benchtui.history.catalog import CatalogError
    from benchtui.history.dberrors import READ_ONLY
    from benchtui.history.gate import sync

    metric = _check_filters(catalog, args)
    _left_out(catalog, args.plan)
    found = analyse_plan(catalog, args.plan, _options(args), step=args.step, metric=metric,
                         host=args.host, branch=args.branch, since=args.since)
    try:
        sync(catalog, found)
    except CatalogError as exc:  # a catalog this user may only read: shown, not stored
        if exc.kind != READ_ONLY:
            raise
        with suppress(CatalogError):
            catalog.rollback()
        _say(f"{exc}; the changes found are shown but not stored (a change not stored has "
             "no number for history ack)")
    return found


def run_history(args: argparse.Namespace) -> int:
    from benchtui.errors import UsageError

    command = args.history_command
    if command is None:
        raise UsageError("history needs a command: import, gate, show, analyze, "
                         "export, ack, exclude, env-change or check (benchtui history --help)")
    if command == "import":
        from benchtui.cli.history_add import import_sessions

        return import_sessions(args)
    with _open(args) as catalog:
        if command == "gate":
            return _gate(catalog, args)
        if command == "show":
            from benchtui.history.render import show_lines

            lines = show_lines(_analysed(catalog, args), args.last)
            sys.stdout.write("\n".join(lines) + "\n" if lines else "")
            return 0
        if command == "analyze":
            return _analyze(catalog, args)
        if command == "export":
            return _export(catalog, args)
        if command == "check":
            return _check(catalog)
        return _annotate(catalog, args)


def _gate(catalog: Catalog, args: argparse.Namespace) -> int:
    from benchtui.history.gate import gate
    from benchtui.history.render import gate_lines

    _known_plan(catalog, args.plan)
    _left_out(catalog, args.plan)
    result = gate(catalog, args.plan, _options(args), require=args.require_history,
                  metrics=_gated_metrics(args.metric), scope=args.scope,
                  require_complete=args.require_complete)
    sys.stdout.write("\n".join(gate_lines(result)) + "\n")
    return result.exit_code


def _gated_metrics(names: list[str]) -> set[str]:
    """The report names of the metrics ``--metric`` names; CompareError for one that is not
    a metric, or one that never gates (utilisation)."""
    from benchtui.errors import CompareError
    from benchtui.history.series import METRICS, metric_named

    gated = tuple(m.short for m in METRICS if m.gated)
    out: set[str] = set()
    for name in names:
        m = metric_named(name)
        if m is None or not m.gated:
            what = "is shown, never gated" if m is not None else "is not a metric of the history"
            raise CompareError(f"--metric {name!r} {what}", known=gated)
        out.add(m.name)
    return out


def _analyze(catalog: Catalog, args: argparse.Namespace) -> int:
    from benchtui.history import render

    found = _analysed(catalog, args)
    if args.format == "json":
        text = render.to_json(args.plan, found)
    elif args.format == "junit":
        gated = [a for a in found if a.series.scope == "(fleet)" and a.series.info.gated]
        text = render.to_junit(args.plan, gated, args.require_history)
    elif args.format == "html":
        from benchtui.history.html import render_html

        text = render_html(args.plan, found, catalog, link=args.link)
    else:
        text = render.to_markdown(args.plan, found)
    if args.output:
        from benchtui.cli.report_cmd import write_whole

        write_whole(args.output, text.encode())
    else:
        sys.stdout.write(text)
    return 0


def _export(catalog: Catalog, args: argparse.Namespace) -> int:
    import csv
    import io

    if args.plan is not None:
        _known_plan(catalog, args.plan)
    where, params = ("WHERE plan = ? ", (args.plan,)) if args.plan else ("", ())
    names, rows = catalog.table(f"SELECT * FROM history_metrics {where}"
                                "ORDER BY plan, step, scope, started", params)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    writer.writerows(rows)
    if args.output:
        from benchtui.cli.report_cmd import write_whole

        write_whole(args.output, out.getvalue().encode())
    else:
        sys.stdout.write(out.getvalue())
    return 0


def _check(catalog: Catalog) -> int:
    from benchtui.history.check import check

    found = check(catalog)
    lines = [f"history check: {found.catalog} ({found.kind}, schema version {found.version}): "
             f"{found.runs} runs, {found.points} points"]
    lines += [f"  ok: {line}" for line in found.checked]
    lines += [f"  DAMAGE: {line}" for line in found.problems]
    lines.append("history check: no damage found" if found.ok else
                 f"history check: {len(found.problems)} problem(s) found")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if found.ok else 1


#: The largest id either database has (a signed 64-bit integer): a number above it names
#: no run or change.
_MAX_ID = 2**63 - 1


def _annotate(catalog: Catalog, args: argparse.Namespace) -> int:
    from benchtui.errors import CompareError

    now = time.time()
    if args.history_command == "ack":
        found = catalog.one("SELECT id FROM change_points WHERE id = ?", (args.change,)) \
            if args.change <= _MAX_ID else None
        if found is None:
            raise CompareError(f"there is no change {args.change} in the catalog "
                               f"{catalog.name}", hint="history show and history gate print "
                               "each change's number")

        def ack() -> None:
            catalog.execute("UPDATE change_points SET acked = ? WHERE id = ?",
                            (now, args.change))
            catalog.execute("INSERT INTO annotations (kind, change_id, reason, created) "
                            "VALUES ('ack', ?, ?, ?)", (args.change, args.reason, now))

        catalog.write(ack)
        print(f"history: change {args.change} acknowledged", file=sys.stderr)
        return 0
    run = catalog.one("SELECT id, session_name FROM runs WHERE id = ?", (args.run,)) \
        if args.run <= _MAX_ID else None
    if run is None:
        raise CompareError(f"there is no run {args.run} in the catalog {catalog.name}",
                           hint="history import prints each run's number")
    kind = args.history_command
    catalog.write(lambda: catalog.execute(
        "INSERT INTO annotations (kind, run_id, reason, created) VALUES (?, ?, ?, ?)",
        (kind, args.run, args.reason, now)))
    what = "left out of the analysis" if kind == "exclude" \
        else "marked as the first of a new environment"
    print(f"history: run {args.run} ({run[1]}) {what}", file=sys.stderr)
    return 0
