"""``benchtui completion [bash|zsh] [--install]``: shell completion, printed or installed.

Without ``--install`` the script goes to stdout (for a setup of one's own). ``--install``
writes it to ``$XDG_DATA_HOME/benchtui/completion.SHELL`` (``~/.local/share/...``) and adds
one line that sources it to the shell's start-up file (``~/.bashrc``; ``$ZDOTDIR/.zshrc`` or
``~/.zshrc``), once: run again after an upgrade, it rewrites the script and leaves the line.
The shell is the one named, else the login shell (``$SHELL``).

The hidden ``--list KIND [FILE]`` is what the scripts call at completion time: the step or
host names of a plan or session file, or the console themes, one per line.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from benchtui import __version__
from benchtui.errors import UsageError

SHELLS = ("bash", "zsh")
#: The comment that marks the line ``--install`` adds to a start-up file.
MARK = "# benchtui shell completion"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "completion", help="shell completion for bash or zsh: print it, or --install it",
        description="Print the completion script of bash or zsh (commands, options, plan and "
        "session files, the step and host names of the plan or session on the line, themes), "
        "or install it with --install: the script goes to ~/.local/share/benchtui/ and one "
        "line that sources it to ~/.bashrc or ~/.zshrc (added once). Open a new shell "
        "afterwards.")
    p.add_argument("shell", nargs="?", choices=SHELLS,
                   help="bash or zsh (default: your login shell, $SHELL)")
    p.add_argument("--install", action="store_true",
                   help="write the script and source it from the shell's start-up file")
    p.add_argument("--list", nargs="+", metavar=("KIND", "FILE"), help=argparse.SUPPRESS)


def run_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.list:
        from benchtui.cli.completion import list_values

        kind, *rest = args.list
        for value in list_values(kind, rest[0] if rest else None):
            print(value)
        return 0
    shell = args.shell or _login_shell()
    script = completion_script(shell, parser)
    if not args.install:
        sys.stdout.write(script)
        return 0
    target, rc_file, added = install(shell, script)
    print(f"benchtui: wrote the {shell} completion to {target}", file=sys.stderr)
    if added:
        print(f"benchtui: {rc_file} sources it now (one line added, marked {MARK!r}); open "
              f"a new shell, or run: source {shlex.quote(str(target))}", file=sys.stderr)
    else:
        print(f"benchtui: {rc_file} already sources it; open a new shell to use this version",
              file=sys.stderr)
    return 0


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    from benchtui.cli.completion import command_spec

    spec = command_spec(parser)
    if shell == "bash":
        from benchtui.cli.completion_bash import bash_script

        return bash_script(spec, __version__)
    from benchtui.cli.completion_zsh import zsh_script

    return zsh_script(spec, __version__)


def _login_shell() -> str:
    name = Path(os.environ.get("SHELL", "")).name
    if name not in SHELLS:
        raise UsageError(f"name the shell: benchtui completion bash or zsh (your login shell "
                         f"is {name or 'not set in $SHELL'})")
    return name


def script_path(shell: str) -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "benchtui" / f"completion.{shell}"


def rc_path(shell: str) -> Path:
    if shell == "zsh":
        return Path(os.environ.get("ZDOTDIR") or Path.home()) / ".zshrc"
    return Path.home() / ".bashrc"


def install(shell: str, script: str) -> tuple[Path, Path, bool]:
    """Write the script, and the line that sources it unless the start-up file has it: (the
    script's path, the start-up file, whether the line was added)."""
    target, rc_file = script_path(shell), rc_path(shell)
    quoted = shlex.quote(str(target))
    line = f"[ -f {quoted} ] && . {quoted}  {MARK}\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(script, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {target}: {error.strerror or error}") from None
    try:
        current = rc_file.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        current = ""
    except OSError as error:
        raise UsageError(f"cannot read {rc_file}: {error.strerror or error}") from None
    if str(target) in current:
        return target, rc_file, False
    try:
        with rc_file.open("a", encoding="utf-8") as f:
            f.write(("" if not current or current.endswith("\n") else "\n") + line)
    except OSError as error:
        raise UsageError(f"cannot add the completion to {rc_file}: "
                         f"{error.strerror or error}; add this line yourself: "
                         f"{line.strip()}") from None
    return target, rc_file, True
