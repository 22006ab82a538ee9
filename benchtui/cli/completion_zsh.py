"""The zsh completion script of ``benchtui``, generated from its ``CommandSpec``.

One ``_arguments`` function per command (options with their help, what each value is),
``_describe`` for subcommands. The file works both ways zsh loads completions: autoloaded
from a directory of ``$fpath`` (as ``_benchtui``) or sourced from ``~/.zshrc`` (what
``benchtui completion --install`` sets up), where it calls ``compinit`` first if nothing did.
"""

from __future__ import annotations

from benchtui.cli.completion import PLAN_GLOB, SESSION_GLOB, CommandSpec, OptionSpec

_ACTIONS = {
    "text": " ",
    "file": "_files",
    "dir": "_files -/",
    "plan": f"_files -g '{PLAN_GLOB}(-.)'",
    "session": f"_files -g '{SESSION_GLOB}(-.)'",
    "step": "_benchtui_values step",
    "host": "_benchtui_values host",
    "theme": "_benchtui_values theme",
}


def zsh_script(spec: CommandSpec, version: str) -> str:
    """The whole script (``#compdef`` first, as zsh's autoloader wants)."""
    lines = [
        "#compdef benchtui",
        f"# zsh completion for benchtui {version}, written by `benchtui completion zsh`.",
        "# Installed by `benchtui completion --install`; or put it in a directory of $fpath as",
        "# _benchtui, or source it from ~/.zshrc.",
        "",
        _VALUES,
    ]
    for command in spec.walk():
        lines += _function(command)
    lines += ["", _ENTRY]
    return "\n".join(lines) + "\n"


def _name(path: tuple[str, ...]) -> str:
    return "_benchtui" + "".join("__" + word.replace("-", "_") for word in path)


def _quote(text: str) -> str:
    """``text`` in single quotes, for zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def _described(text: str) -> str:
    """Help text inside an ``_arguments`` spec's ``[...]`` or a ``_describe`` entry."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _action(kind: str, choices: tuple[str, ...]) -> str:
    if kind == "choice":
        return "(" + " ".join(choices) + ")"
    return _ACTIONS.get(kind, " ")


def _option(option: OptionSpec) -> str:
    names = option.names
    exclusive = "" if option.repeatable or len(names) == 1 else "(" + " ".join(names) + ")"
    if names[-1] in ("-h", "--help"):
        exclusive = "(- *)"  # nothing else after --help
    star = "*" if option.repeatable else ""
    value = ""
    if option.kind is not None:
        colon = "::" if option.optional_value else ":"
        what = _described(option.value_name.lower())
        value = f"{colon}{what}:{_action(option.kind, option.choices)}"
    body = f"[{_described(option.help)}]{value}"
    if len(names) == 1:
        return _quote(f"{exclusive}{star}{names[0]}{body}")
    return (_quote(f"{exclusive}{star}") + "{" + ",".join(names) + "}" + _quote(body))


def _function(command: CommandSpec) -> list[str]:
    specs = [_option(o) for o in command.options]
    if command.commands:
        specs += ["'1: :->command'", "'*:: :->argument'"]
    else:
        for index, positional in enumerate(command.positionals):
            position = "*" if positional.many else str(index + 1)
            colon = "::" if positional.optional and not positional.many else ":"
            specs.append(_quote(f"{position}{colon}{_described(positional.name.lower())}:"
                                f"{_action(positional.kind, positional.choices)}"))
    lines = ["", f"{_name(command.path)}() {{"]
    if command.commands:
        lines.append("    local curcontext=$curcontext state line ret=1")
    lines.append("    _arguments -C -S \\" if command.commands else "    _arguments -S \\")
    lines += [f"        {spec} \\" for spec in specs[:-1]]
    lines.append(f"        {specs[-1]}" + (" && ret=0" if command.commands else ""))
    if command.commands:
        entries = " ".join(_quote(f"{_described(name)}:{_described(sub.help)}")
                           for name, sub in command.commands.items())
        lines += [
            "    case $state in",
            "        command)",
            f"            local -a commands=({entries})",
            "            _describe -t commands 'benchtui command' commands && ret=0 ;;",
            "        argument)",
            "            curcontext=${curcontext%:*:*}:benchtui-$words[1]:",
            "            case $words[1] in",
            *(f"                {_quote(name)}) {_name(sub.path)} && ret=0 ;;"
              for name, sub in command.commands.items()),
            "            esac ;;",
            "    esac",
            "    return ret",
        ]
    lines.append("}")
    return lines


_VALUES = r"""_benchtui_values() {  # the last argument: step, host (of the plan or session on the
    # line) or theme; the ones before it are _arguments' own, for compadd
    local kind=${@[-1]} word file=""
    local -a found
    if [[ $kind != theme ]]; then
        for word in $words[2,-1]; do
            word=${(Q)word}
            word=${word/#\~/$HOME}
            if [[ ( $word == @PLAN@ || $word == @SESSION@ ) && -f $word ]]; then
                file=$word
                break
            fi
        done
        [[ -n $file ]] || return 1
    fi
    found=(${(f)"$(benchtui completion --list $kind ${file:+"$file"} 2>/dev/null)"})
    compadd "${@[1,-2]}" -a found
}""".replace("@PLAN@", PLAN_GLOB).replace("@SESSION@", SESSION_GLOB)

_ENTRY = r"""if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _benchtui "$@"
else
    (( $+functions[compdef] )) || { autoload -Uz compinit && compinit -i }
    compdef _benchtui benchtui
fi"""
