"""Whether benchtui's optional compiled parts are wanted: the one reading of
``BENCHTUI_PURE_PYTHON`` (docs/install.md, "The compiled parts, and pure Python").

Each part is loaded by the module it serves (``parsers._fio_json_walked.load_pass``,
``parsers._json_documents``' line count, ``export.formats.load_lines``), which falls back to
its pure-Python path where the part is not built or not wanted. Below every layer, beside
``errors`` and ``cpus``: it imports nothing of benchtui's.
"""

from __future__ import annotations

import os


def wanted() -> bool:
    """False when ``BENCHTUI_PURE_PYTHON`` is set to anything but ``0`` (or empty): the
    compiled parts are then left unused (read at each call: tests set it)."""
    return os.environ.get("BENCHTUI_PURE_PYTHON", "0") in ("", "0")
