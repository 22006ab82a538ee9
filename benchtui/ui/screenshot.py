"""The console's screenshot: an SVG of the screen, in a file the user is told about."""

from __future__ import annotations

import os
import time
from typing import Any

from textual.app import App


def screenshot_name(session: str) -> str:
    """``benchtui-demo-20261125T201502Z.svg``: the session and the UTC time."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in session) or "console"
    return f"benchtui-{safe}-{stamp}.svg"


def save_screenshot(app: App[Any], directory: str | None, name: str
                    ) -> tuple[str | None, str]:
    """Save an SVG of ``app``'s screen as ``name`` in ``directory`` (the current one when
    None): (its path, "saved PATH"), or (None, why it could not be saved)."""
    where = os.path.abspath(directory or os.getcwd())
    try:
        if not os.path.isdir(where):
            raise FileNotFoundError(f"{where} is not a directory")
        saved = app.save_screenshot(name, where)
    except OSError as error:
        reason = error.strerror or str(error)
        target = error.filename or os.path.join(where, name)
        return None, f"could not save the screenshot to {target}: {reason}"
    return saved, f"saved {saved}"
