"""``benchtui examples [--copy DIR]`` and ``benchtui themes [--copy DIR]``: where the files
shipped with benchtui are (``benchtui.shipped``), and a copy of them to start from.

``examples`` lists the example plans, import maps and fio job files with each file's first
comment line, and the Grafana dashboard; ``themes`` lists every console theme found (the
built-in ones and the user's, which come first when a name is in both) with its file, and
says which do not load. ``--copy DIR`` writes a copy into DIR (made if missing) and never
overwrites: a file already there stops it before anything is written (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from benchtui.errors import BenchtuiError, OutputError, UsageError
from benchtui.shipped import (
    DASHBOARD_FILE,
    DASHBOARDS,
    EXAMPLES,
    dashboard_path,
    shipped_dir,
)

DESCRIPTION_WIDTH = 78


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "examples", help="where the example plans and the Grafana dashboard are, or a copy",
        description="List the example plans, import maps, fio job files and the Grafana "
        "dashboard that come with benchtui, with where they are; --copy DIR writes a copy "
        "to start from (nothing is overwritten).")
    p.add_argument("--copy", metavar="DIR",
                   help="copy them into DIR (made if missing; the dashboard in "
                   "DIR/dashboards/)")
    p = sub.add_parser(
        "themes", help="the console themes, with their files, or a copy to make your own",
        description="List the console themes (--theme NAME): the built-in ones and yours "
        "(in $BENCHTUI_THEMES or ~/.config/benchtui/themes/), with their files. --copy DIR "
        "writes a copy of the built-in ones to start your own (nothing is overwritten).")
    p.add_argument("--copy", metavar="DIR", help="copy the built-in themes into DIR")


def run_examples(args: argparse.Namespace) -> int:
    examples = _existing(shipped_dir(EXAMPLES), "the example plans")
    dashboard = dashboard_path()
    files = {path.relative_to(examples): path for path in _files(examples)}
    if args.copy:
        if dashboard.is_file():
            files[Path(DASHBOARDS) / DASHBOARD_FILE] = dashboard
        _copy(files, Path(args.copy))
        return 0
    out = [f"Examples, in {examples}:"]
    width = max((len(str(name)) for name in files), default=0)
    for name, path in files.items():
        out.append(f"  {name!s:<{width}}  {_first_comment(path)}".rstrip())
    out.append(f"Grafana dashboard ({_dashboard_title(dashboard)}): {dashboard}")
    out.append("Try one: benchtui check "
               f"{examples / 'local-demo.toml'}; start from a copy: benchtui examples "
               "--copy DIR")
    print("\n".join(out))
    return 0


def run_themes(args: argparse.Namespace) -> int:
    from benchtui.ui.themes import (
        SUFFIX,
        available_themes,
        builtin_dir,
        find_theme,
        load_theme,
        theme_dirs,
        user_dir,
    )

    builtin = _existing(builtin_dir(), "the built-in themes")
    if args.copy:
        _copy({Path(p.name): p for p in sorted(builtin.glob(f"*{SUFFIX}"))}, Path(args.copy))
        return 0
    names = available_themes()
    width = max(map(len, names), default=0)
    out = ["Console themes (--theme NAME; t in the console cycles through them):"]
    for name in names:
        path = find_theme(name)
        whose = "built-in" if path.parent == builtin else "yours"
        try:
            load_theme(name)
            problem = ""
        except BenchtuiError as error:
            problem = f"  (does not load: {error})"
        out.append(f"  {name:<{width}}  {whose:<8}  {path}{problem}")
    searched = [d for d in theme_dirs() if d != builtin]
    out.append("Your own themes go in " + " or ".join(str(d) for d in searched)
               + f" as NAME.tcss; start from a copy: benchtui themes --copy {user_dir()}")
    print("\n".join(out))
    return 0


def _existing(directory: Path, what: str) -> Path:
    if not directory.is_dir():
        raise UsageError(f"{what} are not where this benchtui keeps them ({directory}): "
                         "reinstall benchtui")
    return directory


def _files(directory: Path) -> list[Path]:
    """Every file under ``directory``, top level first, then by name."""
    found = [p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(found, key=lambda p: (len(p.relative_to(directory).parts), str(p)))


def _first_comment(path: Path) -> str:
    """The file's first comment line (``#`` or ``;``), shortened to fit a line."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                text = line.strip()
                if text[:1] in ("#", ";"):
                    text = text.lstrip("#; ").strip()
                    if len(text) > DESCRIPTION_WIDTH:
                        text = text[:DESCRIPTION_WIDTH - 1].rsplit(" ", 1)[0] + " …"
                    return text
    except OSError:
        pass
    return ""


def _dashboard_title(path: Path) -> str:
    try:
        return str(json.loads(path.read_text(encoding="utf-8")).get("title", "Grafana"))
    except (OSError, ValueError, AttributeError):
        return "missing"


def _copy(files: dict[Path, Path], directory: Path) -> None:
    """Copy ``files`` (name in ``directory`` -> source) into ``directory``: all of them, or,
    when one is already there or the directory cannot be made, none."""
    existing = sorted(str(directory / name) for name in files if (directory / name).exists())
    if existing:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise UsageError(f"{existing[0]}{more} already exist; nothing was copied (remove "
                         "them, or copy into another directory)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not os.access(directory, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as error:
        raise UsageError(f"cannot write into {directory}: {error.strerror or error}") from None
    written = 0
    try:
        for name, source in sorted(files.items()):
            target = directory / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            written += 1
    except OSError as error:  # the directory was fine; writing failed (a full disk)
        raise OutputError(str(directory), f"the copy ({written} of {len(files)} files "
                          "written)", error.strerror or str(error)) from None
    print(f"benchtui: copied {written} files into {directory}", file=sys.stderr)
