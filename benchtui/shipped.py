"""The files shipped with benchtui: console themes, example plans, the Grafana dashboard.

Their source is the project's top-level ``themes/``, ``examples/`` and ``dashboards/``; the
build (``setup.py``) puts them inside the package as ``benchtui/share/NAME/``, so that an
installed benchtui (a wheel, an sdist, ``pipx``, ``uv tool``) has them without the checkout.
In a checkout (a source tree or an editable install) they are the top-level directories
themselves, so that an edit there shows at once.
"""

from __future__ import annotations

from pathlib import Path

THEMES = "themes"
EXAMPLES = "examples"
DASHBOARDS = "dashboards"
#: The Grafana dashboard, in ``DASHBOARDS``.
DASHBOARD_FILE = "benchtui.json"

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The directory of shipped files ``name`` (``THEMES``, ``EXAMPLES``, ``DASHBOARDS``):
    inside the installed package, else the checkout's top-level one. It may be missing only
    in a broken install, which the callers say in words."""
    installed = _PACKAGE / "share" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def dashboard_path() -> Path:
    """The Grafana dashboard's JSON file."""
    return shipped_dir(DASHBOARDS) / DASHBOARD_FILE
