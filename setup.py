"""The one build step pyproject.toml cannot say: the package carries the project's top-level
``themes/``, ``examples/`` and ``dashboards/`` (which stay their source) as
``benchtui/share/NAME/``, so that an installed benchtui (``pip install``, ``pipx install``,
``uv tool install``) has its console themes, example plans and Grafana dashboard without the
checkout. An editable install copies nothing: ``benchtui/shipped.py`` finds the checkout's own
directories. The sdist carries the three directories (MANIFEST.in), so a wheel built from it
has them too.

It also builds the package's one compiled module, ``benchtui.parsers._fio_json_pass`` (one C
file, CPython's C API, no other dependency): an optional accelerator of ``benchtui parse``'s
fio json+ percentiles (docs/architecture.md). ``optional=True``: where it cannot be built (no
compiler, no Python headers) the build says so and goes on, and benchtui runs in pure Python
(``benchtui/parsers/_fio_json_walked.py`` falls back), with the same output.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

#: The top-level directories the package carries (keep in step with benchtui/shipped.py).
SHIPPED = ("themes", "examples", "dashboards")


class BuildPyWithShipped(build_py):  # type: ignore[misc]
    """``build_py`` that also copies ``SHIPPED`` into ``benchtui/share/`` of the build."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        root = Path(__file__).resolve().parent
        for name in SHIPPED:
            source = root / name
            if not source.is_dir():
                raise FileNotFoundError(f"{source}: the package ships it; the source tree "
                                        "(or the sdist) must have it")
            target = Path(self.build_lib) / "benchtui" / "share" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


#: The optional compiled pass over fio json+'s latency buckets (see the docstring).
PASS = Extension("benchtui.parsers._fio_json_pass", ["benchtui/parsers/_fio_json_pass.c"],
                 optional=True)

#: The optional compiled writer of JSON Lines' usual lines (``benchtui/export/formats.py``
#: falls back to its pure-Python path, with the same bytes).
LINES = Extension("benchtui.export._jsonl_lines", ["benchtui/export/_jsonl_lines.c"],
                  optional=True)

setup(cmdclass={"build_py": BuildPyWithShipped}, ext_modules=[PASS, LINES])
