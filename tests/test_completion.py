"""Shell completion, in the real shells: bash's ``complete`` function called as readline calls
it, and bash and zsh in a real terminal (tmux) after ``benchtui completion --install``, with
a Tab typed.

The scripts are generated from the argument parser (benchtui/cli/completion*.py); the step
and host names come from a real session file, imported from a real fio output with names
that need quoting (``rand read bs=4k``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtui.cli.completion import KINDS, command_spec
from benchtui.cli.main import build_parser, main
from tests.helpers import require_tool
from tests.test_ui_tmux import Tmux

FIO = Path(__file__).parent / "fixtures" / "fio_json" / "final_only.jsonplus.txt"
BIN = Path(sys.executable).parent  # where the checkout's ``benchtui`` is installed
STEPS = ("rand read bs=4k", "seq write")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A directory with plan and session files, a subdirectory and another file."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    for name in ("a.toml", "my plan.toml", "notes.txt"):
        (work / name).write_text("", encoding="utf-8")
    assert main(["import", str(FIO), str(FIO), "--host", "db 1", "--step", STEPS[0],
                 "--step", STEPS[1], "-o", str(work / "s.btr")]) == 0
    return work


def _script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def _bash_complete(script: Path, work: Path, *words: str, cword: int | None = None
                   ) -> list[str]:
    """What ``_benchtui`` offers for the command line ``words`` (the cursor on the last word,
    or on ``cword``), in a bash with nothing else loaded."""
    code = ('source "$1"; shift; COMP_WORDS=("$@"); '
            'COMP_CWORD=${CWORD:-$((${#COMP_WORDS[@]} - 1))}; _benchtui; '
            'printf "%s\\n" "${COMPREPLY[@]}"')
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8"}
    if cword is not None:
        env["CWORD"] = str(cword)
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", code, "_", str(script),
                           "benchtui", *words], cwd=work, env=env, capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_commands_options_files_and_names(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = work.parent / "completion.bash"
    script.write_text(_script("bash", capsys), encoding="utf-8")
    complete = subprocess.run(["bash", "--norc", "-c", f'source "{script}"; complete -p benchtui'],
                              capture_output=True, text=True, check=True)
    assert complete.stdout.strip() == "complete -F _benchtui benchtui"

    def offers(*words: str, cword: int | None = None) -> list[str]:
        return _bash_complete(script, work, *words, cword=cword)

    commands = list(command_spec(build_parser()).commands)
    assert offers("") == commands and "completion" in commands and "examples" in commands
    assert offers("rep") == ["replay", "report"]
    assert offers("-") == ["-h", "--help", "--version"]
    assert offers("report", "s.btr", "--f") == ["--format", "--figures", "--fail-below",
                                                 "--fail-above"]
    assert offers("report", "s.btr", "--format", "") == ["md", "csv", "json", "html"]
    assert offers("demo", "--theme", "=", "l") == ["light"]  # bash splits --theme=l at "="
    assert offers("demo", "--theme", "") == ["dark", "light", "high-contrast"]
    assert sorted(offers("check", "")) == ["a.toml", "my plan.toml", "sub"]
    assert sorted(offers("report", "")) == ["s.btr", "sub"]
    assert sorted(offers("parse", "")) == ["a.toml", "my plan.toml", "notes.txt", "s.btr",
                                           "sub"]
    assert offers("replay", "--screenshot-dir", "") == ["sub"]
    # the steps and hosts of the session on the line, wherever it is on the line
    assert offers("plot", "s.btr", "--step", "") == list(STEPS)
    assert offers("plot", "s.btr", "--step", "rand") == [STEPS[0]]
    assert offers("plot", "--step", "", "s.btr", cword=3) == list(STEPS)
    assert offers("report", "s.btr", "--steps", "seq") == [STEPS[1]]
    assert offers("dump", "s.btr", "--host", "") == ["db 1"]
    assert offers("plot", "--step", "") == []  # no session yet: nothing to offer
    # history's commands, and its PLAN is a name in the catalog, not a file
    assert offers("history", "") == list(command_spec(build_parser()).commands["history"]
                                          .commands)
    assert offers("history", "show", "") == []
    assert "--catalog" in offers("history", "show", "x", "--")
    assert offers("completion", "") == ["bash", "zsh"]
    # free text: nothing (not the files bash would offer by default)
    assert offers("import", "x", "--host", "") == []


def test_every_argument_has_a_known_kind_and_both_scripts_parse(
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = command_spec(build_parser())
    kinds = {o.kind for c in spec.walk() for o in c.options if o.kind is not None}
    kinds |= {p.kind for c in spec.walk() for p in c.positionals}
    assert kinds <= set(KINDS) and {"plan", "session", "step", "host", "theme"} <= kinds
    for shell in ("bash", "zsh"):
        if shell == "zsh":
            require_tool("zsh")
        checked = subprocess.run([shell, "-n"], input=_script(shell, capsys), text=True,
                                 capture_output=True, check=False)
        assert checked.returncode == 0, checked.stderr


def _type(tmux: Tmux, text: str, expected: str, timeout: float = 10) -> str:
    tmux.run("send-keys", "-t", "demo", text, "Tab")
    return tmux.wait_for(repr(expected), lambda s: expected in s, timeout)


def _clear(tmux: Tmux) -> None:
    """Abandon the line once the completion is over (the screen unchanged for 0.3 s), then
    clear the screen (once the shell has taken the Ctrl-C: a new, empty prompt)."""
    deadline, before = time.monotonic() + 10, None
    while time.monotonic() < deadline and (screen := tmux.screen()) != before:
        before = screen
        time.sleep(0.3)
    tmux.run("send-keys", "-t", "demo", "C-c")
    tmux.wait_for("a new prompt", lambda s: s.rstrip().splitlines()[-1:] == ["$"], 10)
    tmux.run("send-keys", "-t", "demo", "clear", "Enter")
    tmux.wait_for("a clear screen", lambda s: s.strip() == "$", 10)


@pytest.mark.slow
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_installed_completion_works_in_a_real_terminal(work: Path, shell: str) -> None:
    require_tool("tmux")
    path = require_tool(shell)
    home = work.parent / "home"
    home.mkdir()
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "SHELL": path,
           "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    for _ in range(2):  # twice: the start-up file gets one line, the script is rewritten
        done = subprocess.run([str(BIN / "benchtui"), "completion", "--install"], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    rc = (home / (".zshrc" if shell == "zsh" else ".bashrc")).read_text(encoding="utf-8")
    assert rc.count("benchtui shell completion") == 1, rc
    assert (home / ".local" / "share" / "benchtui" / f"completion.{shell}").is_file()
    assert "already sources it" in done.stderr, done.stderr

    tmux = Tmux(work.parent / "tmux.sock")
    start = " ".join(f"{k}='{v}'" for k, v in env.items())
    prompt = "PS1='$ '" if shell == "bash" else "PROMPT='$ '"
    # an interactive shell reads ~/.bashrc or ~/.zshrc
    tmux.run("new-session", "-d", "-s", "demo", "-x", "150", "-y", "30", "-c", str(work),
             f"env -i {start} {path} -i")
    try:
        tmux.run("send-keys", "-t", "demo", f"{prompt}; clear", "Enter")
        tmux.wait_for("the prompt", lambda s: s.strip() == "$", 10)
        _type(tmux, "benchtui repo", "$ benchtui report")
        _clear(tmux)
        _type(tmux, "benchtui plot s.btr --step ran", "--step rand\\ read\\ bs")
        _clear(tmux)
        # an ambiguous completion: zsh lists it at the first Tab, bash at the second
        tabs = ["Tab"] if shell == "zsh" else ["Tab", "Tab"]
        tmux.run("send-keys", "-t", "demo", "benchtui demo --theme ", *tabs)
        tmux.wait_for("the themes", lambda s: "high-contrast" in s and "light" in s, 10)
        _clear(tmux)
        _type(tmux, "benchtui check my", "benchtui check my\\ plan.toml")
    finally:
        tmux.run("kill-server", check=False)
