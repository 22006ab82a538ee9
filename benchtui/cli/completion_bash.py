"""The bash completion script of ``benchtui``, generated from its ``CommandSpec``.

The script is plain bash (4.0 or newer, with or without the bash-completion package): a few
``case`` tables made from the parser (each command's subcommands, options, the kind of value
an option or a positional argument takes) and one function that reads the command line with
them. Plan files complete as ``*.toml``, session files as ``*.btr`` (and directories), the
step and host names of the plan or session on the line through ``benchtui completion --list``.
"""

from __future__ import annotations

import shlex

from benchtui.cli.completion import PLAN_GLOB, SESSION_GLOB, CommandSpec


def bash_script(spec: CommandSpec, version: str) -> str:
    """The whole script: ``source`` it, or let ``benchtui completion --install`` do it."""
    commands = spec.walk()
    lines = [
        f"# bash completion for benchtui {version}, written by `benchtui completion bash`.",
        "# Installed by `benchtui completion --install`; or source this file from ~/.bashrc.",
        "",
        "_benchtui_commands() {  # the subcommands of command \"$1\"",
        '    case "$1" in',
        *(f"        {_word(' '.join(c.path))}) echo {_word(' '.join(c.commands))};;"
          for c in commands if c.commands),
        "    esac",
        "}",
        "",
        "_benchtui_options() {  # the options of command \"$1\"",
        '    case "$1" in',
        *(f"        {_word(' '.join(c.path))}) echo "
          f"{_word(' '.join(n for o in c.options for n in o.names))};;" for c in commands),
        "    esac",
        "}",
        "",
        "_benchtui_value() {  # what option \"$2\" of command \"$1\" takes (nothing: a flag)",
        '    case "$1 $2" in',
        *_value_cases(commands),
        "    esac",
        "}",
        "",
        "_benchtui_positional() {  # what positional \"$2\" (from 0) of command \"$1\" is",
        '    case "$1" in',
        *_positional_cases(commands),
        "    esac",
        "}",
        "",
        _MAIN.replace("@PLAN@", PLAN_GLOB).replace("@SESSION@", SESSION_GLOB),
    ]
    return "\n".join(lines) + "\n"


def _word(text: str) -> str:
    """``text`` as one shell word."""
    return shlex.quote(text)


def _kind_word(kind: str, choices: tuple[str, ...]) -> str:
    return _word(" ".join(("choice", *choices)) if kind == "choice" else kind)


def _value_cases(commands: list[CommandSpec]) -> list[str]:
    cases = []
    for command in commands:
        for option in command.options:
            if option.kind is None:
                continue
            keys = " | ".join(_word(f"{' '.join(command.path)} {name}") for name in option.names)
            cases.append(f"        {keys}) echo {_kind_word(option.kind, option.choices)};;")
    return cases


def _positional_cases(commands: list[CommandSpec]) -> list[str]:
    cases = []
    for command in commands:
        if not command.positionals:
            continue
        arms = []
        for index, positional in enumerate(command.positionals):
            pattern = "*" if positional.many else str(index)
            arms.append(f"{pattern}) echo {_kind_word(positional.kind, positional.choices)};;")
            if positional.many:
                break
        cases.append(f"        {_word(' '.join(command.path))}) case \"$2\" in "
                     + " ".join(arms) + " esac;;")
    return cases


_MAIN = r"""_benchtui_unquote() {  # a word as typed -> the text it stands for (no eval)
    local w=$1
    case $w in
        \'*) w=${w#\'}; w=${w%\'} ;;
        \"*) w=${w#\"}; w=${w%\"} ;;
        *) w=${w//\\/} ;;
    esac
    case $w in "~"|"~/"*) w=$HOME${w#\~} ;; esac
    printf '%s' "$w"
}

_benchtui_reply() {  # the words that complete "$2" as a value of kind "$1"
    local kind=$1 cur=$2 file=$3 plain line
    case $kind in
        choice\ *)
            mapfile -t COMPREPLY < <(compgen -W "${kind#choice }" -- "$cur") ;;
        file)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        dir)
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        plan | session)
            local glob='@PLAN@'
            [ "$kind" = session ] && glob='@SESSION@'
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -X "!$glob" -- "$cur"; compgen -d -- "$cur") ;;
        step | host | theme)
            [ "$kind" != theme ] && [ -z "$file" ] && return
            plain=$(_benchtui_unquote "$cur")
            COMPREPLY=()
            while IFS= read -r line; do
                [[ $line == "$plain"* ]] && COMPREPLY+=("$line")
            done < <(benchtui completion --list "$kind" ${file:+"$file"} 2>/dev/null)
            # names with spaces ("randread bs=4k") are quoted as file names are
            compopt -o filenames 2>/dev/null ;;
    esac
}

_benchtui() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local command="" word kind subs file="" i j n=0 here="" at=0
    COMPREPLY=()
    # the whole line, for the command and the plan or session file (it may come after the
    # cursor); the command and the positional's number as they are at the cursor
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        if ((i == COMP_CWORD)); then
            here=$command at=$n
            continue
        fi
        word=${COMP_WORDS[i]}
        case $word in
            --) ;;
            -*=*) ;;
            -*)
                kind=$(_benchtui_value "$command" "$word")
                if [ -n "$kind" ]; then  # its value: the next word, or "=" and the next
                    j=$((i + 1))
                    [ "${COMP_WORDS[j]}" = "=" ] && ((j++))
                    while ((i < j && i + 1 != COMP_CWORD)); do ((i++)); done
                fi ;;
            *)
                subs=" $(_benchtui_commands "$command") "
                if ((n == 0)) && [[ $subs == *" $word "* ]]; then
                    command=${command:+$command }$word
                else
                    kind=$(_benchtui_positional "$command" "$n")
                    if [ -z "$file" ] && { [ "$kind" = plan ] || [ "$kind" = session ]; }; then
                        file=$(_benchtui_unquote "$word")
                    fi
                    ((n++))
                fi ;;
        esac
    done
    command=$here n=$at
    # the value of an option: "--theme light", "--theme=light" (bash splits at "=")
    local option=""
    if [ "$cur" = "=" ]; then
        option=$prev cur=""
    elif [ "$prev" = "=" ] && ((COMP_CWORD >= 2)); then
        option=${COMP_WORDS[COMP_CWORD-2]}
    elif [[ $prev == -* ]]; then
        option=$prev
    fi
    if [ -n "$option" ]; then
        kind=$(_benchtui_value "$command" "$option")
        if [ -n "$kind" ]; then
            _benchtui_reply "$kind" "$cur" "$file"
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_benchtui_options "$command")" -- "$cur")
        return
    fi
    subs=$(_benchtui_commands "$command")
    if [ -n "$subs" ] && ((n == 0)); then
        mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
        return
    fi
    kind=$(_benchtui_positional "$command" "$n")
    [ -n "$kind" ] && _benchtui_reply "$kind" "$cur" "$file"
}

complete -F _benchtui benchtui"""
