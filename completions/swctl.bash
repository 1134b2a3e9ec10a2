# bash completion for swctl (stopwatchd's client) and stopwatchd.
# Installed as $(PREFIX)/share/bash-completion/completions/swctl, with a `stopwatchd`
# symlink beside it; or sourced from ~/.bashrc. Works with or without the
# bash-completion package.

_swctl_formats="plain json waybar i3blocks polybar"

# Sets cur, prev, words and cword, with `--opt=value` and `17:30` kept in one word.
_swctl_init()
{
    if declare -F _init_completion >/dev/null; then
        _init_completion -n =: || return
    else
        # Bash alone splits `--format=js` into `--format` `=` `js`, and `17:30` into `17`
        # `:` `30`: glue back the words typed with no blank between them, as the line
        # shows. (`--format= js` keeps its space: `js` stays a word of its own.)
        local i w glue=0 rest=$COMP_LINE trimmed spaced
        words=() cword=0
        for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
            w=${COMP_WORDS[i]}
            trimmed=${rest#"${rest%%[![:blank:]]*}"}
            [[ $trimmed != "$rest" ]] && spaced=1 || spaced=0
            # Each word is in the line as typed; should it not be, it counts as apart.
            if [[ $trimmed == "$w"* ]]; then rest=${trimmed:${#w}}; else spaced=1; fi
            if ((i > 0 && !spaced)) && [[ $w == [=:] || $glue == 1 ]]; then
                words[-1]+=$w
            else
                words+=("$w")
            fi
            [[ $w == [=:] ]] && glue=1 || glue=0
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
    # readline replaces only what follows the last `:` of the word (a name `a:b`, a path):
    # that much of each reply goes, as bash-completion's __ltrim_colon_completions does.
    local typed=$eqprefix$cur
    if [[ $typed == *:* && $COMP_WORDBREAKS == *:* ]]; then
        local colon=${typed%"${typed##*:}"}
        COMPREPLY=("${COMPREPLY[@]#"$colon"}")
    fi
}

# Prints the names of the running daemon's stopwatches, one per line. $1 is swctl, the
# rest the socket option typed on the line. Prints nothing when no daemon answers within
# a second.
_swctl_names()
{
    local swctl=$1 out name re='"name":"(([^"\\]|\\.)*)"'
    shift
    # `list --json`, not the table: no header line to skip (a stopwatch may well be
    # called NAME), and a name holding spaces stays one. A name has no control
    # characters, so its only JSON escapes are \" and \\.
    if type -P timeout >/dev/null; then
        out=$(timeout 1 "$swctl" "$@" --json list 2>/dev/null </dev/null)
    else
        out=$("$swctl" "$@" --json list 2>/dev/null </dev/null)
    fi
    while [[ $out =~ $re ]]; do
        _swctl_unescaped "${BASH_REMATCH[1]}"
        printf '%s\n' "$REPLY"
        out=${out#*"${BASH_REMATCH[0]}"}
    done
}

# REPLY = $1 with each backslash escape taken as the character it escapes.
_swctl_unescaped()
{
    local s=$1 i c
    REPLY=""
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        if [[ $c == \\ ]]; then
            i=$((i + 1))
            c=${s:i:1}
        fi
        REPLY+=$c
    done
}

# REPLY = $1 with a backslash before each character the shell would take for syntax, so
# that a name such as `client call` or `R&D` is one word on the line.
_swctl_escaped()
{
    local s=$1 i c
    REPLY=""
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        [[ $c == [[:space:]\"\'\\\$\`\!\&\|\;\(\)\<\>\*\?\[\]\{\}\~\#] ]] && REPLY+=\\
        REPLY+=$c
    done
}

# COMPREPLY = the stopwatch names (from `_swctl_names "$@"`) that begin with the word
# typed, each one word for the line: `client\ call` after `cli` (or `client\ c`), and
# `client call` after an opening quote (`"cli`), since readline puts it after the quote.
_swctl_name_reply()
{
    local name typed quoted=0
    case $cur in
        \"* | \'*) quoted=1 typed=${cur:1} ;;
        *) _swctl_unescaped "$cur" && typed=$REPLY ;;
    esac
    COMPREPLY=()
    while IFS= read -r name; do
        [[ -n $name && $name == "$typed"* ]] || continue
        if ((quoted)); then
            COMPREPLY+=("$name")
        else
            _swctl_escaped "$name"
            COMPREPLY+=("$REPLY")
        fi
    done < <(_swctl_names "$@")
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
        --host)
            # bash-completion's hosts (~/.ssh/config, known_hosts) when it is loaded.
            declare -F _known_hosts_real >/dev/null && _known_hosts_real -- "$cur"
            return
            ;;
        --format | -f)
            _swctl_reply -W "$_swctl_formats"
            return
            ;;
        --for)
            _swctl_reply -W "expired stop change phase"
            return
            ;;
        --by)
            _swctl_reply -W "name day device phase"
            return
            ;;
        --since | --until | --at | --start | --end)
            _swctl_reply -W "now today yesterday monday tuesday wednesday thursday friday saturday sunday"
            return
            ;;
        # A duration, a note, amend's new name or a device: nothing to offer.
        --timeout | --note | --name | --device | --rounds) return ;;
    esac

    # What the line already has. Options may come before or after the command.
    local i w command="" names=0 socket=() json=0 format=0 dashdash=0 timer_option=0 for=0 timeout=0 rounds=0 manual=0
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
            --host)
                i=$((i + 1))
                socket=(--host "${words[i]}")
                ;;
            --host=*) socket=(--host "${w#*=}") ;;
            --user | --system) socket=("$w") ;;
            --json) json=1 ;;
            --format | -f)
                i=$((i + 1))
                format=1
                ;;
            --format=*) format=1 ;;
            --keep | --off) timer_option=1 ;;
            --manual) manual=1 ;;
            --rounds)
                i=$((i + 1))
                rounds=1
                ;;
            --rounds=*) rounds=1 ;;
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
            --since | --until | --by | --device | --at | --note | --name | --start | --end) i=$((i + 1)) ;;
        esac
    done

    if [[ $cur == -* ]] && ((!dashdash)); then
        local options="--help --version"
        ((${#socket[@]})) || options+=" --socket --user --system --host"
        ((json)) || options+=" --json"
        [[ $command == watch ]] && ((!format)) && options+=" --format"
        [[ $command == timer ]] && ((!timer_option)) && options+=" --keep --off"
        [[ $command == wait ]] && ((!for)) && options+=" --for"
        [[ $command == wait ]] && ((!timeout)) && options+=" --timeout"
        [[ $command == log || $command == report ]] && options+=" --since --until --device --csv"
        [[ $command == report ]] && options+=" --by"
        [[ $command == start || $command == stop || $command == toggle ]] && options+=" --at"
        [[ $command == start || $command == toggle || $command == track || $command == amend ]] && options+=" --note"
        [[ $command == amend ]] && options+=" --name --start --end"
        [[ $command == skip-sleep ]] && ((!timer_option)) && options+=" --off"
        [[ $command == cycle || $command == pomodoro ]] && ((!rounds)) && options+=" --rounds"
        [[ $command == cycle || $command == pomodoro ]] && ((!manual)) && options+=" --manual"
        _swctl_reply -W "$options"
    elif [[ -z $command ]]; then
        _swctl_reply -W "start stop toggle reset lap status list remove timer cycle pomodoro next snooze restart skip-sleep wait watch log report track amend delete undo devices bridge"
    elif ((names == 0)); then
        # timer's, cycle's and snooze's first word may be a NAME or a DURATION: names are
        # offered all the same.
        case $command in
            start | stop | toggle | reset | lap | status | remove | timer | cycle | pomodoro | next | snooze | restart | skip-sleep | wait | watch | log | track)
                _swctl_name_reply "$(_swctl_tilde "${words[0]}")" "${socket[@]}"
                ;;
            # INTERVAL: ids are not completed (they are read off 'swctl log'); @1 is the latest.
            amend | delete) _swctl_reply -W "@1" ;;
        esac
    fi
}

_stopwatchd()
{
    local cur prev words cword eqprefix=""
    _swctl_init || return

    case $prev in
        --socket) compopt -o filenames 2>/dev/null; _swctl_reply -f; return ;;
        --state-dir | --hook-dir | --history-dir) compopt -o filenames 2>/dev/null; _swctl_reply -d; return ;;
        # An id or a name of this device's own: nothing to offer.
        --device-id | --device-name) return ;;
        --allow-group) _swctl_reply -g; return ;;
        --log-level) _swctl_reply -W "debug info notice warning error"; return ;;
        # A duration or a number: nothing to offer.
        --tick | --max-* | --hook-backlog | --history-memory | --history-days | --history-devices | --exit-idle | --message-timeout | --write-timeout | --idle-timeout | --hook-timeout) return ;;
    esac
    [[ $cur == -* ]] && _swctl_reply -W "--socket --state-dir --tick --allow-group --log-level
        --max-connections --max-connections-per-user --max-stopwatches --max-laps
        --max-message-size --max-pending-events --message-timeout --write-timeout
        --idle-timeout --hook-dir --hook-timeout --max-hooks-running --hook-backlog
        --history-memory --history-days --history-devices --history-dir --device-id --device-name --exit-idle --help --version"
}

complete -F _swctl swctl
complete -F _stopwatchd stopwatchd
