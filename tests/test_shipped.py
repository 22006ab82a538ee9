"""``benchtui examples``, ``themes`` and ``--version`` from a checkout (an editable install reads
the top-level directories in place; tests/test_install.py runs them from a wheel): what they
list, ``--copy`` that never overwrites, a user's theme beside the built-in ones, and a broken
install said in one sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchtui import __version__
from benchtui.cli.main import main
from benchtui.shipped import DASHBOARDS, EXAMPLES, THEMES, dashboard_path, shipped_dir

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_checkout_reads_its_own_directories() -> None:
    for name in (THEMES, EXAMPLES, DASHBOARDS):
        assert shipped_dir(name) == ROOT / name
    assert dashboard_path() == ROOT / "dashboards" / "benchtui.json"


def test_examples_lists_every_file_and_copies_without_overwriting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "examples")
    assert code == 0
    assert out.startswith(f"Examples, in {ROOT / 'examples'}:\n"), out
    expected = sorted(str(p.relative_to(ROOT / "examples"))
                      for p in (ROOT / "examples").rglob("*") if p.is_file())
    listed = sorted(m.group(1) for m in re.finditer(r"^  (\S+)", out, re.M))
    assert listed == expected
    assert re.search(r"^  local-demo\.toml +A demo on this machine only", out, re.M), out
    assert f"Grafana dashboard (benchtui): {ROOT / 'dashboards' / 'benchtui.json'}" in out

    target = tmp_path / "new" / "bench"  # parents are made
    code, _, err = run(capsys, "examples", "--copy", str(target))
    assert code == 0 and f"copied {len(expected) + 1} files into {target}" in err, err
    for name in expected:
        assert (target / name).read_bytes() == (ROOT / "examples" / name).read_bytes()
    assert (target / "dashboards" / "benchtui.json").is_file()

    (target / "sweep.toml").write_text("# mine\n", encoding="utf-8")
    (target / "fleet.toml").unlink()
    code, _, err = run(capsys, "examples", "--copy", str(target))
    assert code == 2
    assert err.startswith(f"benchtui: {target / 'dashboards' / 'benchtui.json'} and ") \
        and "already exist; nothing was copied" in err, err
    assert not (target / "fleet.toml").exists()  # nothing: not even what was missing
    assert (target / "sweep.toml").read_text(encoding="utf-8") == "# mine\n"


def test_themes_lists_built_in_and_user_themes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "mine"
    monkeypatch.setenv("BENCHTUI_THEMES", str(mine))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    code, _, err = run(capsys, "themes", "--copy", str(mine))
    assert code == 0 and "copied 3 files" in err, err
    (mine / "dark.tcss").rename(mine / "night.tcss")
    (mine / "broken.tcss").write_text("$bt-mode: dark;\n", encoding="utf-8")
    code, out, _ = run(capsys, "themes")
    assert code == 0
    builtin = ROOT / "themes"
    assert re.search(rf"^  dark +built-in +{builtin / 'dark.tcss'}$", out, re.M), out
    assert re.search(rf"^  light +yours +{mine / 'light.tcss'}$", out, re.M), out  # in its place
    assert re.search(rf"^  night +yours +{mine / 'night.tcss'}$", out, re.M), out
    assert re.search(r"^  broken +yours +\S+broken\.tcss  \(does not load: .*defines no "
                     r"\$bt-primary colour", out, re.M), out
    assert f"Your own themes go in {mine} or {tmp_path / 'config' / 'benchtui' / 'themes'}" \
        in out, out


def test_a_broken_install_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import benchtui.shipped

    monkeypatch.setattr(benchtui.shipped, "_PACKAGE", tmp_path / "site-packages" / "benchtui")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("BENCHTUI_THEMES", raising=False)
    code, _, err = run(capsys, "replay", str(tmp_path / "any.btr"))  # the theme comes first
    assert code == 2
    assert err == (f"benchtui: no theme named 'dark': no theme files (*.tcss) in "
                   f"{tmp_path / 'config' / 'benchtui' / 'themes'}, "
                   f"{tmp_path / 'site-packages' / 'themes'}; reinstall benchtui, or give "
                   "the path of a .tcss file\n")
    code, _, err = run(capsys, "examples")
    assert code == 2 and "the example plans are not where this benchtui keeps them" in err


def test_version_names_python_textual_and_asyncssh(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"benchtui {__version__} ({ROOT / 'benchtui'})"
    assert re.fullmatch(r"Python 3\.\d+\.\d+ \(.+\)", lines[1]), lines
    assert re.fullmatch(r"Textual \d+\.\d+\.\d+", lines[2]), lines
    assert re.fullmatch(r"asyncssh \d+\.\d+\.\d+", lines[3]), lines
