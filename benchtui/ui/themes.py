"""Console themes: Textual CSS files in ``themes/``, one per theme, found by name.

A theme is one ``NAME.tcss`` file and nothing else, so that a user can copy one, change the
colours and pick it with ``--theme NAME`` (or a path). Its ``$bt-*`` variables do two jobs:
the base ones (``$bt-primary``, ``$bt-background``, ``$bt-mode: dark|light``, ...) become a
Textual ``Theme`` that colours Textual's own widgets (footer, dialogs, command palette,
notifications), and every variable colours benchtui's widgets through the file's own rules.

Themes are looked up in ``$BENCHTUI_THEMES`` (a directory), ``~/.config/benchtui/themes/``,
then the built-in ones: the project's ``themes/``, which the package carries
(``benchtui.shipped``; ``benchtui themes`` lists them all with their files). A theme may use
only its own ``$bt-*`` variables, so that it is checked on its own when loaded and a mistake
is one sentence, before the console starts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from textual.css.errors import StylesheetError
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from textual.css.tokenizer import TokenError
from textual.theme import Theme

from benchtui.errors import InputError, UsageError
from benchtui.shipped import THEMES, shipped_dir

#: Built-in themes, in the order ``t`` cycles through them (user themes come after).
BUILTIN_ORDER = ("dark", "light", "high-contrast")
DEFAULT_THEME = "dark"
SUFFIX = ".tcss"
_VARIABLE = re.compile(r"^\s*\$bt-([a-z0-9-]+)\s*:\s*([^;]+?)\s*;", re.MULTILINE)
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


@dataclass(frozen=True)
class ConsoleTheme:
    """A loaded theme: its CSS for benchtui's widgets and the Textual theme made from it."""

    name: str
    path: Path
    css: str
    textual: Theme


def builtin_dir() -> Path:
    """The built-in themes' directory: in the installed package, or the checkout's."""
    return shipped_dir(THEMES)


def user_dir() -> Path:
    """Where a user's own themes go: ``$XDG_CONFIG_HOME/benchtui/themes/``."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "benchtui" / "themes"


def theme_dirs() -> list[Path]:
    """Where themes are looked up, first match wins."""
    dirs: list[Path] = []
    env = os.environ.get("BENCHTUI_THEMES")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(user_dir())
    dirs.append(builtin_dir())
    return dirs


def available_themes() -> list[str]:
    """Every theme name that can be found: the built-in ones first, in cycling order."""
    names: list[str] = [n for n in BUILTIN_ORDER if (builtin_dir() / f"{n}{SUFFIX}").is_file()]
    for directory in theme_dirs():
        if directory.is_dir():
            for path in sorted(directory.glob(f"*{SUFFIX}")):
                if path.stem not in names:
                    names.append(path.stem)
    return names


def find_theme(name: str) -> Path:
    """The file of theme ``name`` (a name, or the path of a ``.tcss`` file)."""
    if name.endswith(SUFFIX) or os.sep in name:
        path = Path(name).expanduser()
        if not path.is_file():
            raise InputError(name, "no such theme file", "give a .tcss file or a theme name: "
                             + ", ".join(available_themes()))
        return path
    for directory in theme_dirs():
        path = directory / f"{name}{SUFFIX}"
        if path.is_file():
            return path
    names = available_themes()
    if not names:  # a broken install: say where they were looked for
        raise UsageError(f"no theme named {name!r}: no theme files (*{SUFFIX}) in "
                         + ", ".join(str(d) for d in theme_dirs())
                         + "; reinstall benchtui, or give the path of a .tcss file")
    raise UsageError(f"no theme named {name!r}; the themes are: " + ", ".join(names))


def theme_variables(css: str) -> dict[str, str]:
    """The ``$bt-NAME: value;`` definitions of a theme file (comments ignored)."""
    return {m.group(1): m.group(2) for m in _VARIABLE.finditer(_COMMENT.sub("", css))}


def load_theme(name: str) -> ConsoleTheme:
    """Find, read and check a theme; its Textual theme is named ``benchtui-STEM``."""
    path = find_theme(name)
    try:
        css = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"cannot be read: {error}") from None
    variables = theme_variables(css)
    if "primary" not in variables:
        raise InputError(str(path), "defines no $bt-primary colour",
                         "a theme sets at least $bt-primary (see the built-in dark.tcss: "
                         "benchtui themes)")
    mode = variables.get("mode", "dark")
    if mode not in ("dark", "light"):
        raise InputError(str(path), f"$bt-mode is {mode!r}", "write $bt-mode: dark; or light;")
    _check_css(path, css)
    get = variables.get
    stem = path.stem
    try:
        textual = Theme(name=f"benchtui-{stem}", primary=variables["primary"],
                        secondary=get("secondary"), warning=get("warning"), error=get("error"),
                        success=get("success"), accent=get("accent"),
                        foreground=get("foreground"), background=get("background"),
                        surface=get("surface"), panel=get("panel"), boost=get("boost"),
                        dark=mode == "dark")
        textual.to_color_system().generate()
    except Exception as error:  # noqa: BLE001 - a bad colour value, in the user's words
        raise InputError(str(path), f"is not a usable theme: {error}") from None
    return ConsoleTheme(stem, path, css, textual)


def _check_css(path: Path, css: str) -> None:
    """Parse the file on its own, so a mistake is reported before the console starts."""
    sheet = Stylesheet()
    try:
        sheet.add_source(css, read_from=(str(path), ""))
        sheet.parse()
    except StylesheetParseError as error:
        found = [(token.location[0] + 1, str(message)) for rule in error.errors.rules
                 for token, message in rule.errors]
        line, message = found[0] if found else (None, "")
        raise InputError(f"{path}:{line}" if line else str(path),
                         "is not valid Textual CSS" + (f" ({_plain(message)})" if message
                                                       else ""),
                         "see the built-in dark.tcss (benchtui themes) for the rules a "
                         "theme may set") from None
    except (StylesheetError, TokenError) as error:
        raise InputError(str(path), f"is not valid Textual CSS ({_plain(str(error))})",
                         "a theme may use only its own $bt-* variables") from None


def _plain(message: str) -> str:
    """The first line of a Textual CSS error message, without its markup."""
    lines = message.strip().splitlines()
    return re.sub(r"\[/?[a-z ]*\]", "", lines[0]) if lines else ""


def next_theme(current: str, names: list[str] | None = None) -> str:
    """The theme after ``current`` in cycling order (the first one after the last)."""
    names = names if names is not None else available_themes()
    if not names:
        return current
    try:
        return names[(names.index(current) + 1) % len(names)]
    except ValueError:
        return names[0]
