# bash completion for swctl (stopwatchd's client) and stopwatchd.
# Installed as $(PREFIX)/share/bash-completion/completions/swctl, with a `stopwatchd`
# symlink beside it; or sourced from ~/.bashrc. Works with or without the
# bash-completion package.

_swctl_formats="plain json waybar i3blocks polybar"

# Sets cur, prev, words and cword, with `--opt=value` kept in one word.
_swctl_init()
{
    if declare -F _init_completion >/dev/null; then
        _init_completion -n = || return
    else
        # Bash alone splits `--format=js` into `--format` `=` `js`: glue them back. An
        # empty word after `=` means a space was typed there (`--format= `), so it stays.
        local i w glue=0
        words=() cword=0
        for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
            w=${COMP_WORDS[i]}
            if ((i > 0)) && [[ ($w == = && ${words[-1]} == --*) || ($glue == 1 && -n $w) ]]; then
                words[-1]+=$w
            else
                words+=("$w")
            fi
            [[ $w == = ]] && glue=1 || glue=0
            ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
        done
        cur=${words[cword]}
        prev=${words[cword - 1]}
    fi
    # `--opt=val`: complete `val` as the value of `--opt`.
    if [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        cur=${cur#*=}
        # readline replaces only what follows `=`, unless `=` was taken out of
        # COMP_WORDBREAKS; then the `--opt=` must be part of each reply.
        [[ $COMP_WORDBREAKS == *=* ]] || eqprefix=$prev=
    fi
    return 0
}

# COMPREPLY from compgen's arguments "$@", one reply per line (paths may hold spaces).
_swctl_reply()
{
    mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
    [[ -z $eqprefix ]] || COMPREPLY=("${COMPREPLY[@]/#/$eqprefix}")
}

# Prints the names of the running daemon's stopwatches, one per line. $1 is swctl, the
# rest the socket option typed on the line. Prints nothing when no daemon answers within
# a second.
_swctl_names()
{
    local swctl=$1 out re='"name":"([^"]*)"'
    shift
    # `list --json`, not the table: no header line to skip (a stopwatch may well be
    # called NAME), and names cannot contain '"' ([A-Za-z0-9._-] only).
    if type -P timeout >/dev/null; then
        out=$(timeout 1 "$swctl" "$@" --json list 2>/dev/null </dev/null)
    else
        out=$("$swctl" "$@" --json list 2>/dev/null </dev/null)
    fi
    while [[ $out =~ $re ]]; do
        printf '%s\n' "${BASH_REMATCH[1]}"
        out=${out#*"${BASH_REMATCH[0]}"}
    done
}

# `~/x` as typed -> $HOME/x (the only expansion worth doing for a path on the line).
_swctl_tilde()
{
    local p=$1
    [[ $p == '~/'* ]] && p=$HOME/${p#'~/'}
    printf '%s' "$p"
}

_swctl()
{
    local cur prev words cword eqprefix=""
    _swctl_init || return

    case $prev in
        --socket)
            compopt -o filenames 2>/dev/null
            _swctl_reply -f
            return
            ;;
        --format | -f)
            _swctl_reply -W "$_swctl_formats"
            return
            ;;
        --for)
            _swctl_reply -W "expired stop change"
            return
            ;;
        --by)
            _swctl_reply -W "name day"
            return
            ;;
        --since | --until)
            _swctl_reply -W "now today yesterday monday tuesday wednesday thursday friday saturday sunday"
            return
            ;;
        # A duration: nothing to offer.
        --timeout) return ;;
    esac

    # What the line already has. Options may come before or after the command.
    local i w command="" names=0 socket=() json=0 format=0 dashdash=0 timer_option=0 for=0 timeout=0
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        if ((dashdash)) || [[ $w != -* ]]; then
            if [[ -z $command ]]; then command=$w; else names=$((names + 1)); fi
            continue
        fi
        case $w in
            --) dashdash=1 ;;
            --socket)
                i=$((i + 1))
                socket=(--socket "$(_swctl_tilde "${words[i]}")")
                ;;
            --socket=*) socket=(--socket "$(_swctl_tilde "${w#*=}")") ;;
            --user | --system) socket=("$w") ;;
            --json) json=1 ;;
            --format | -f)
                i=$((i + 1))
                format=1
                ;;
            --format=*) format=1 ;;
            --keep | --off) timer_option=1 ;;
            --for)
                i=$((i + 1))
                for=1
                ;;
            --for=*) for=1 ;;
            --timeout)
                i=$((i + 1))
                timeout=1
                ;;
            --timeout=*) timeout=1 ;;
            --since | --until | --by) i=$((i + 1)) ;;
        esac
    done

    if [[ $cur == -* ]] && ((!dashdash)); then
        local options="--help --version"
        ((${#socket[@]})) || options+=" --socket --user --system"
        ((json)) || options+=" --json"
        [[ $command == watch ]] && ((!format)) && options+=" --format"
        [[ $command == timer ]] && ((!timer_option)) && options+=" --keep --off"
        [[ $command == wait ]] && ((!for)) && options+=" --for"
        [[ $command == wait ]] && ((!timeout)) && options+=" --timeout"
        [[ $command == log || $command == report ]] && options+=" --since --until --csv"
        [[ $command == report ]] && options+=" --by"
        _swctl_reply -W "$options"
    elif [[ -z $command ]]; then
        _swctl_reply -W "start stop toggle reset lap status list remove timer wait watch log report"
    elif ((names == 0)); then
        # timer's first word may be a NAME or the DURATION: names are offered all the same.
        case $command in
            start | stop | toggle | reset | lap | status | remove | timer | wait | watch | log)
                _swctl_reply -W "$(_swctl_names "$(_swctl_tilde "${words[0]}")" "${socket[@]}")"
                ;;
        esac
    fi
}

_stopwatchd()
{
    local cur prev words cword eqprefix=""
    _swctl_init || return

    case $prev in
        --socket) compopt -o filenames 2>/dev/null; _swctl_reply -f; return ;;
        --state-dir | --hook-dir) compopt -o filenames 2>/dev/null; _swctl_reply -d; return ;;
        --allow-group) _swctl_reply -g; return ;;
        --log-level) _swctl_reply -W "debug info notice warning error"; return ;;
        # A duration or a number: nothing to offer.
        --tick | --max-* | --history-days | --message-timeout | --write-timeout | --idle-timeout | --hook-timeout) return ;;
    esac
    [[ $cur == -* ]] && _swctl_reply -W "--socket --state-dir --tick --allow-group --log-level
        --max-connections --max-connections-per-user --max-stopwatches --max-laps
        --max-message-size --max-pending-events --message-timeout --write-timeout
        --idle-timeout --hook-dir --hook-timeout --max-hooks-running --max-hooks-waiting
        --history-days --help --version"
}

complete -F _swctl swctl
complete -F _stopwatchd stopwatchd
