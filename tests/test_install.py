"""benchtui installed as users install it, with nothing from the checkout: the console, replay,
reports and check run from a wheel built from the sdist, in a virtualenv of its own.

The sdist is built from a copy of the files the build reads (so nothing is written into the
checkout), the wheel from that sdist (``python -m build``, offline: no build isolation, the
test venv's setuptools), and the wheel is installed into a fresh virtualenv in the test's
directory. Its dependencies are the test venv's, made visible by a ``.pth`` line after the
new venv's own site-packages (installing Textual, matplotlib and the rest again would take a
minute and test pip, not benchtui); the check that ``benchtui`` runs from the new venv is
``--version``, which names the package's directory. Every command runs with a clean
environment (``env -i``), a home and cache of the test's own, from a directory outside the
checkout: ``demo`` in a real terminal (tmux) with the default (its output parsed in a parser
worker process) and the light theme, ``replay``
of the first demo's recording, ``report --format html`` of it, ``check`` of an example plan
from the package, ``examples --copy``, ``themes`` and the bash completion script.

The wheel holds the compiled parts (the fio json+ parser's pass ``_fio_json_pass`` and the
JSON Lines writer's ``_jsonl_lines``, built from the sdist's C source) and the installed
package uses them; a wheel built where the compiler fails (``CC=false``) installs and parses
in pure Python, printing the same samples.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from tests.helpers import require_tool
from tests.test_ui_tmux import PANE_IOPS, Tmux

ROOT = Path(__file__).resolve().parents[1]
#: What ``python -m build`` reads: the package, the build files and the shipped directories.
SOURCES = ("benchtui", "themes", "examples", "dashboards", "pyproject.toml", "setup.py",
           "MANIFEST.in", "README.md")
SHIPPED = ("themes/dark.tcss", "themes/light.tcss", "themes/high-contrast.tcss",
           "examples/local-demo.toml", "examples/sweep.toml", "examples/jobs/rbd-4M-seq-30job.fio",
           "examples/import/seed000.toml", "dashboards/benchtui.json")


#: The compiled parts in a package or an archive (their names end with the platform's suffix).
COMPILED = (re.compile(r"benchtui/parsers/_fio_json_pass\.[^/]*(so|pyd)$"),
            re.compile(r"benchtui/export/_jsonl_lines\.[^/]*(so|pyd)$"))
FIO_JSON = ROOT / "tests" / "fixtures" / "fio_json" / "randread_randwrite.jsonplus.txt"


def build(tmp: Path, env: dict[str, str] | None = None) -> tuple[Path, Path]:
    """The sdist and the wheel built from it (``env``: the build's environment)."""
    source, dist = tmp / "source", tmp / "dist"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(dist), str(source)], capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,), (wheel,) = dist.glob("*.tar.gz"), dist.glob("*.whl")
    return sdist, wheel


def install(tmp: Path, wheel: Path) -> Path:
    """A fresh venv with the wheel installed; the test venv's packages visible after its own."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=60)
    python = venv / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-deps", "--no-index", "--quiet", str(wheel)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True)
    deps = sysconfig.get_path("purelib")
    Path(site.stdout.strip(), "zz-benchtui-test-dependencies.pth").write_text(deps + "\n")
    return venv


class Installed:
    """Runs the installed ``benchtui`` with a clean environment, from ``work``."""

    def __init__(self, venv: Path, tmp: Path) -> None:
        self.venv, self.work = venv, tmp / "work"
        self.work.mkdir()
        self.env = {"HOME": str(tmp / "home"), "XDG_CACHE_HOME": str(tmp / "cache"),
                    "XDG_CONFIG_HOME": str(tmp / "config"), "XDG_DATA_HOME": str(tmp / "data"),
                    "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "LANG": "C.UTF-8"}
        (tmp / "home").mkdir()

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["benchtui", *args], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=120, check=False)
        if ok:
            assert done.returncode == 0, f"benchtui {shlex.join(args)}: {done.stderr}"
        return done

    def python(self, code: str) -> str:
        """What the installed package's Python prints running ``code``."""
        return subprocess.run([str(self.venv / "bin" / "python"), "-c", code], cwd=self.work,
                              env=self.env, capture_output=True, text=True, timeout=60,
                              check=True).stdout

    def shell(self, *args: str, exit_file: Path) -> str:
        """A shell command for tmux: ``benchtui ARGS`` in the clean environment (the terminal's
        own TERM kept), its status written to ``exit_file``; the window then stays open."""
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        return (f"cd {shlex.quote(str(self.work))} && env -i TERM=\"$TERM\" {assignments} "
                f"benchtui {shlex.join(args)}; echo $? > {exit_file}; sleep 60")


def exit_status(path: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return path.read_text().strip() if path.exists() else "(none: still running)"


def in_terminal(tmux: Tmux, command: str) -> None:
    tmux.run("kill-session", "-t", "demo", check=False)
    tmux.run("new-session", "-d", "-s", "demo", "-x", "120", "-y", "40", command)


def background_colours(tmux: Tmux) -> set[str]:
    """The background colours (SGR 4x/10x/48;...) drawn on the screen."""
    screen = tmux.run("capture-pane", "-p", "-e", "-t", "demo", check=False)
    found: set[str] = set()
    for codes in re.findall(r"\x1b\[([\d;]*)m", screen):
        parts = codes.split(";")
        for i, part in enumerate(parts):
            if part == "48":
                found.add(";".join(parts[i:i + (5 if parts[i + 1:i + 2] == ["2"] else 3)]))
            elif re.fullmatch(r"4[0-7]|10[0-7]", part):
                found.add(part)
    return found


@pytest.mark.slow
def test_an_installed_wheel_runs_every_command_without_the_checkout(tmp_path: Path) -> None:
    require_tool("tmux")
    require_tool("fio")
    sdist, wheel = build(tmp_path)
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert set(SHIPPED) <= names, set(SHIPPED) - names
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
    assert {f"benchtui/share/{name}" for name in SHIPPED} <= names
    for part in COMPILED:
        assert any(map(part.match, names)), f"the wheel has no {part.pattern}"
    venv = install(tmp_path, wheel)
    package = next((venv / "lib").glob("python*/site-packages/benchtui"))
    shipped = package / "share"
    bt = Installed(venv, tmp_path)
    used = bt.python(USED).split()
    for part, path in zip(COMPILED, used, strict=True):
        assert part.match(path.removeprefix(f"{package.parent}/")), path
    assert bt.run("parse", str(FIO_JSON)).stdout == _checkout_parse()

    version = bt.run("--version").stdout
    assert version.startswith(f"benchtui {_version()} ({package})"), version
    assert re.search(r"^Python \d+\.\d+\.\d+ ", version, re.M), version
    assert re.search(r"^Textual \d", version, re.M) and re.search(r"^asyncssh \d", version,
                                                                  re.M), version
    themes = bt.run("themes").stdout
    for name in ("dark", "light", "high-contrast"):
        assert re.search(rf"^  {name}\s+built-in\s+{shipped}/themes/{name}\.tcss$", themes,
                         re.M), themes
    examples = bt.run("examples").stdout
    assert f"Examples, in {shipped}/examples:" in examples, examples
    assert f"{shipped}/dashboards/benchtui.json" in examples, examples
    bt.run("examples", "--copy", "mine")
    assert (bt.work / "mine" / "sweep.toml").is_file()
    assert (bt.work / "mine" / "dashboards" / "benchtui.json").is_file()
    completion = bt.run("completion", "bash").stdout
    assert subprocess.run(["bash", "-n"], input=completion, text=True,
                          check=False).returncode == 0

    plan = shipped / "examples" / "local-demo.toml"
    checked = bt.run("check", str(plan), "--commands")
    assert "here: up" in checked.stdout + checked.stderr, checked.stderr
    assert "fio" in checked.stdout and "--runtime=20" in checked.stdout, checked.stdout

    tmux = Tmux(tmp_path / "tmux.sock")
    try:
        # the default theme, to the end of the step: recorded for replay and report; its
        # output parsed in a parser worker, which must run the installed package too
        status = tmp_path / "demo-dark"
        in_terminal(tmux, bt.shell("demo", "--seconds", "5", "--record", "demo.btr",
                                   "--parse-workers", "1", exit_file=status))
        tmux.wait_for("fio's numbers", PANE_IOPS.search, 20)
        dark = background_colours(tmux)
        tmux.wait_for("the end of the session", lambda s: "session finished" in s, 20)
        tmux.run("send-keys", "-t", "demo", "q")
        assert exit_status(status, 10) == "0", tmux.screen()
        assert "demo: every step succeeded" in tmux.screen()

        # the light theme: its colours, not the dark one's; q, y while fio runs
        status = tmp_path / "demo-light"
        in_terminal(tmux, bt.shell("demo", "--seconds", "5", "--theme", "light",
                                   exit_file=status))
        tmux.wait_for("fio's numbers", PANE_IOPS.search, 20)
        light = background_colours(tmux)
        assert light and dark and light != dark, (light, dark)
        tmux.run("send-keys", "-t", "demo", "q")
        tmux.wait_for("the quit question", lambda s: "Stop and quit" in s, 5)
        tmux.run("send-keys", "-t", "demo", "y")
        assert exit_status(status, 10) == "130", tmux.screen()

        # replay of the recording: the step and fio's numbers come back
        status = tmp_path / "replay"
        in_terminal(tmux, bt.shell("replay", "demo.btr", "--speed", "4", exit_file=status))
        screen = tmux.wait_for("the replayed numbers", PANE_IOPS.search, 20)
        assert "randrw-4k" in screen, screen
        tmux.run("send-keys", "-t", "demo", "q")
        assert exit_status(status, 10) == "0", tmux.screen()
    finally:
        tmux.run("kill-server", check=False)

    bt.run("report", "demo.btr", "--format", "html", "-o", "demo.html")
    page = (bt.work / "demo.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and "randrw-4k" in page
    assert "<svg" in page  # the plots, drawn by matplotlib from the install


#: Where the compiled parts that benchtui uses come from ("None": pure Python), one a line.
USED = ("from benchtui.parsers import _fio_json_walked as w; from benchtui.export import formats"
        " as f; print(w.PASS and w.PASS.__file__); print(f.LINES and f.LINES.__file__)")


@pytest.mark.slow
def test_a_wheel_built_without_a_compiler_runs_in_pure_python(tmp_path: Path) -> None:
    """The compiler fails (``CC=false``): the build says so and goes on (the extension is
    optional), and the wheel, without the compiled pass, parses as the checkout does."""
    _, wheel = build(tmp_path, {**os.environ, "CC": "false"})
    with zipfile.ZipFile(wheel) as whl:
        assert not any(part.match(name) for part in COMPILED for name in whl.namelist())
    bt = Installed(install(tmp_path, wheel), tmp_path)
    assert bt.python(USED).split() == ["None", "None"]
    assert bt.run("parse", str(FIO_JSON)).stdout == _checkout_parse()


def _checkout_parse() -> str:
    """``benchtui parse`` of the fio json+ fixture by the checkout (the compiled pass where
    it is built)."""
    return subprocess.run([sys.executable, "-m", "benchtui", "parse", str(FIO_JSON)],
                          capture_output=True, text=True, timeout=60, check=True).stdout


def _version() -> str:
    from benchtui import __version__

    return __version__
