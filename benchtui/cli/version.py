"""``benchtui --version``: benchtui's version and where it runs from, with the versions of
Python, Textual and asyncssh (what a bug report needs first). The versions are read from
the installed packages' metadata, without importing them, and only when asked."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchtui import __version__

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any, NoReturn

#: The libraries whose versions ``--version`` prints, by distribution name.
LIBRARIES = (("Textual", "textual"), ("asyncssh", "asyncssh"))


def version_text() -> str:
    import platform
    from importlib import metadata

    package = Path(__file__).resolve().parents[1]
    lines = [f"benchtui {__version__} ({package})",
             f"Python {platform.python_version()} ({sys.executable})"]
    for shown, distribution in LIBRARIES:
        try:
            lines.append(f"{shown} {metadata.version(distribution)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{shown} not installed")
    return "\n".join(lines)


class VersionAction(argparse.Action):
    """``--version``: print ``version_text()`` and exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the versions of benchtui, Python, Textual and "
                          "asyncssh, and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None
                 ) -> NoReturn:
        sys.stdout.write(version_text() + "\n")
        parser.exit()
