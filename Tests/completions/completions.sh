#!/usr/bin/env bash
# The shell completions in completions/ (bash, zsh, fish), run against a daemon of their
# own: commands, options, --format values, and stopwatch names from the running daemon
# through the socket option on the line, and nothing (quickly) when no daemon answers.
# Also checks that every command, long option and format in the --help texts appears in
# each file. zsh and fish parts are skipped where the shell is not installed.
#   Tests/completions/completions.sh      (from the repository root)
#   SWCTL=… STOPWATCHD=…                   other binaries (default .build/debug/…)
set -euo pipefail
# EPOCHREALTIME below must have a "." for its decimal point.
export LC_ALL=C
cd "$(dirname "$0")/../.."

# Absolute, keeping the name (swctl is run by name, from PATH).
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
SWCTL=$(absolute "${SWCTL:-.build/debug/swctl}")
STOPWATCHD=$(absolute "${STOPWATCHD:-.build/debug/stopwatchd}")
[ -x "$SWCTL" ] && [ -x "$STOPWATCHD" ] || { echo "FAIL: build first: no $SWCTL or $STOPWATCHD" >&2; exit 1; }
[ "$(basename "$SWCTL")" = swctl ] || { echo "FAIL: SWCTL must be a file named swctl (it is put on PATH)" >&2; exit 1; }

work=$(mktemp -d /tmp/swcomp-XXXXXX)
pids=()
cleanup() {
    local pid
    for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
    for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

# --- a daemon with three stopwatches --------------------------------------------------
socket=$work/s.sock
"$STOPWATCHD" --socket "$socket" --state-dir "$work/state" 2>"$work/daemon.log" &
pids+=($!)
deadline=$((SECONDS + 10))
until [ -S "$socket" ]; do
    if ! kill -0 "${pids[0]}" 2>/dev/null || ((SECONDS >= deadline)); then
        echo "FAIL: the daemon did not make $socket:" >&2
        cat "$work/daemon.log" >&2
        exit 1
    fi
    sleep 0.05
done
export STOPWATCHD_SOCKET=$socket
export PATH=$(dirname "$SWCTL"):$PATH
export XDG_RUNTIME_DIR=$work/run # holds no socket: `--user` finds no daemon
mkdir -p "$XDG_RUNTIME_DIR"
for name in work walk other; do swctl start "$name" >/dev/null; done
names="other walk work"

# A second daemon, with names that need quoting on a command line: the names must come
# back as one word each, quoted as each shell quotes.
quoted_socket=$work/q.sock
"$STOPWATCHD" --socket "$quoted_socket" --state-dir "$work/state-q" 2>"$work/daemon-q.log" &
pids+=($!)
deadline=$((SECONDS + 10))
until [ -S "$quoted_socket" ]; do
    ((SECONDS < deadline)) || { echo "FAIL: the daemon did not make $quoted_socket" >&2; exit 1; }
    sleep 0.05
done
for name in "client call" client 'R&D "q" \x' "café au lait"; do
    swctl --socket "$quoted_socket" start "$name" >/dev/null
done

# The drivers print the candidates of a line on one line, joined by $COMPLETION_SEPARATOR
# (a space unless set): a name holding a space is told apart from two names with ",".
mkdir "$work/bin"
cat >"$work/bin/completion-join" <<'EOF'
#!/bin/sh
exec awk 'BEGIN { sep = ENVIRON["COMPLETION_SEPARATOR"]; if (sep == "") sep = " " } { s = s (NR > 1 ? sep : "") $0 } END { print s }'
EOF
chmod +x "$work/bin/completion-join"
export PATH=$work/bin:$PATH

# What the --help texts name, which the completions must offer.
commands=$(swctl --help | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' | sort | xargs)
formats=$(swctl --help | sed -n "s/.*--format \([a-z0-9|]*\)|'TEMPLATE'.*/\1/p" | tr '|' '\n' | sort | xargs)
options=$(swctl --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | xargs)
daemon_options=$("$STOPWATCHD" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | xargs)
[ "$(wc -w <<<"$commands")" -ge 11 ] && [ "$(wc -w <<<"$formats")" -ge 5 ] && [ -n "$options" ] && [ -n "$daemon_options" ] \
    || { echo "FAIL: cannot read the commands, formats and options from the --help texts" >&2; exit 1; }

# A socket that accepts and never answers: completion must still come back at once.
hang=$work/hang.sock
if command -v python3 >/dev/null; then
    python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
held = []
while True:
    held.append(s.accept())   # keep every connection open, answer none, until killed' "$hang" &
    pids+=($!)
    deadline=$((SECONDS + 10))
    until [ -S "$hang" ] || ((SECONDS >= deadline)); do sleep 0.05; done
fi

# --- drivers: each prints, for each LINE given, the candidates on one line, sorted -----
# bash: sets COMP_WORDS as bash would for a line typed with the cursor at its end (words
# split at blanks outside quotes and backslash escapes, each kept as typed; `=` and `:`
# words of their own, as in bash's COMP_WORDBREAKS), calls the function.
cat >"$work/bash-driver.bash" <<'EOF'
[ "$1" = with-bash-completion ] && source /usr/share/bash-completion/bash_completion
shift
source completions/swctl.bash
for line; do
    COMP_LINE=$line COMP_POINT=${#line} COMP_WORDS=() COMPREPLY=()
    parts=() part="" quote=""
    for ((i = 0; i < ${#line}; i++)); do
        c=${line:i:1}
        if [[ -n $quote ]]; then
            part+=$c
            [[ $c == "$quote" ]] && quote=""
            continue
        fi
        case $c in
            \\) part+=$c${line:i+1:1} i=$((i + 1)) ;;
            \" | \') part+=$c quote=$c ;;
            " ") [[ -n $part ]] && parts+=("$part") part="" ;;
            *) part+=$c ;;
        esac
    done
    [[ -n $part ]] && parts+=("$part")
    for w in "${parts[@]}"; do
        while [[ $w == *[=:]* ]]; do
            head=${w%%[=:]*}
            [[ -n $head ]] && COMP_WORDS+=("$head")
            COMP_WORDS+=("${w:${#head}:1}")
            w=${w:${#head}+1}
        done
        [[ -n $w ]] && COMP_WORDS+=("$w")
    done
    [[ $line == *' ' ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    start=$EPOCHREALTIME
    "_${COMP_WORDS[0]}"
    [[ -z ${DURATION_FILE-} ]] || echo $((${EPOCHREALTIME/./} - ${start/./})) >>"$DURATION_FILE"
    printf '%s\n' "${COMPREPLY[@]}" | sort -u | completion-join
done
EOF
# zsh: completion needs the line editor, so an interactive zsh runs in a pseudo-terminal
# (zpty). A compadd wrapper appends every candidate to a file, and TAB is bound to a widget
# that completes and then appends =DONE=; the terminal's screen is never parsed.
cat >"$work/zsh-driver.zsh" <<'EOF'
zmodload zsh/zpty zsh/datetime || exit 1
capture=$1; shift
: >$capture
zpty z zsh -f -i
zpty -w z "fpath=(${(q)PWD}/completions \$fpath); autoload -Uz compinit; compinit -u -D; capture=${(q)capture}"
# (No comments in what is typed: an interactive zsh takes '#' as a word. compadd calls
# with -O, -A or -D only fill arrays for the completion system, and add nothing.)
zpty -w z 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a hits; builtin compadd -A hits "$@"
  (( $#hits )) && print -rl -- $hits >>$capture
  builtin compadd "$@"
}'
zpty -w z 'tab() { zle complete-word; print -r -- "=DONE=" >>$capture; }; zle -N tab; bindkey "^I" tab'
for line; do
  start=$EPOCHREALTIME
  zpty -w -n z "$line"$'\t'
  deadline=$(( EPOCHREALTIME + 10 ))
  until grep -qx '=DONE=' $capture; do
    # Give up at the deadline, or at once when the test has gone (its directory with it).
    (( EPOCHREALTIME < deadline )) && [[ -e $capture ]] || { print -r -- "(zsh gave no answer)"; zpty -d z; exit 1; }
    zpty -r -t z junk 2>/dev/null # drain the terminal so zsh never blocks writing to it
    sleep 0.05
  done
  [[ -z ${DURATION_FILE-} ]] || printf '%.0f\n' $(( (EPOCHREALTIME - start) * 1000000 )) >>$DURATION_FILE
  grep -vx '=DONE=' $capture | sort -u | completion-join
  : >$capture
  zpty -w -n z $'\C-u' # clear the line for the next one
done
zpty -d z
EOF
# fish: completions found as installed, through fish_complete_path (stopwatchd.fish is a
# symlink to swctl.fish).
mkdir "$work/fish"
ln -s "$PWD/completions/swctl.fish" "$work/fish/swctl.fish"
ln -s "$PWD/completions/swctl.fish" "$work/fish/stopwatchd.fish"
fish_driver='set -g fish_complete_path $FISH_DIR
for line in $argv
    set -l start (date +%s%6N)
    set -l found (complete -C $line)
    set -q DURATION_FILE; and math -s0 (date +%s%6N) - $start >>$DURATION_FILE
    printf "%s\n" $found | string replace -r "\t.*" "" | sort -u | completion-join
end'

complete_in() { # SHELL LINE...
    local shell=$1
    shift
    case $shell in
        bash) bash --norc --noprofile "$work/bash-driver.bash" without "$@" ;;
        bash+bash-completion) bash --norc --noprofile "$work/bash-driver.bash" with-bash-completion "$@" ;;
        zsh) zsh -f "$work/zsh-driver.zsh" "$work/zsh-capture" "$@" ;;
        fish) FISH_DIR=$work/fish fish --no-config -c "$fish_driver" "$@" ;;
    esac
}

# check SHELL, then cases on stdin, one `LINE|EXPECTED` a line (EXPECTED sorted).
check() {
    local shell=$1 line expected lines=() wanted=() got=() i
    while IFS='|' read -r line expected; do
        lines+=("$line")
        wanted+=("$(xargs <<<"$expected")")
    done
    mapfile -t got < <(complete_in "$shell" "${lines[@]}")
    for i in "${!lines[@]}"; do
        if [ "${got[i]-}" = "${wanted[i]}" ]; then
            pass
        else
            fail "$shell: completing '${lines[i]}': expected [${wanted[i]}], got [${got[i]-}]"
        fi
    done
}

# check_exact SHELL: like check, but EXPECTED is the candidates exactly as the shell has
# them, joined by ",".
check_exact() {
    local shell=$1 line expected lines=() wanted=() got=() i
    while IFS='|' read -r line expected; do
        lines+=("$line")
        wanted+=("$expected")
    done
    mapfile -t got < <(COMPLETION_SEPARATOR=, complete_in "$shell" "${lines[@]}")
    for i in "${!lines[@]}"; do
        if [ "${got[i]-}" = "${wanted[i]}" ]; then
            pass
        else
            fail "$shell: completing '${lines[i]}': expected [${wanted[i]}], got [${got[i]-}]"
        fi
    done
}

# check_all SHELL: the cases every shell agrees on, then the socket option on the line:
# it wins over $STOPWATCHD_SOCKET, and an unreachable daemon gives no names.
check_all() {
    local shell=$1
    check "$shell" <<EOF
swctl st|start status stop
swctl start w|walk work
swctl remove |$names
swctl watch --format |$formats
swctl watch -f w|waybar
swctl --so|--socket
swctl --ho|--host
swctl br|bridge
swctl --json wat|watch
swctl ti|timer
swctl wa|wait watch
swctl timer w|walk work
swctl wait w|walk work
swctl wait --for |change expired phase stop
swctl wait --timeout 1s --for |change expired phase stop
swctl cy|cycle
swctl po|pomodoro
swctl sn|snooze
swctl next w|walk work
swctl snooze w|walk work
swctl cycle --ro|--rounds
swctl pomodoro --ma|--manual
stopwatchd --log|--log-level
stopwatchd --log-level |debug error info notice warning
swctl un|undo
swctl sk|skip-sleep
swctl skip-sleep w|walk work
swctl skip-sleep --o|--off
swctl track w|walk work
swctl stop --a|--at
swctl start --at |friday monday now saturday sunday thursday today tuesday wednesday yesterday
swctl amend @1 --end |friday monday now saturday sunday thursday today tuesday wednesday yesterday
swctl amend @1 --no|--note
swctl amend @1 --st|--start
swctl toggle --n|--note
swctl stop --at 17:30 w|walk work
swctl start --at 9:05 --no|--note
EOF
    STOPWATCHD_SOCKET=$work/none.sock check "$shell" <<EOF
swctl --socket $socket status w|walk work
swctl --socket=$socket status w|walk work
EOF
    check "$shell" <<EOF
swctl --socket $work/none.sock status |
swctl --user status |
EOF
    if [ -S "$hang" ]; then
        # The completion's own time, as the driver measures it around the call: the shell's
        # start (an interactive zsh with compinit, bash-completion sourced) is not the
        # completion's, and under load took more than the 3 s on its own.
        : >"$work/durations"
        DURATION_FILE=$work/durations check "$shell" <<<"swctl --socket $hang status |"
        local took
        took=$(tail -n 1 "$work/durations")
        [[ $took =~ ^[0-9]+$ ]] && ((took < 3000000)) && pass \
            || fail "$shell: completing names from a daemon that never answers took ${took:-?} µs, not under 3 s"
    fi
}

# The shells part ways where a line has no argument left: zsh offers the options there
# (as zsh does), bash and fish offer nothing until a '-' is typed. And fish replaces the
# whole `--format=p` word, the others only what follows the `=`.
for shell in bash bash+bash-completion; do
    if [ $shell = bash+bash-completion ] && [ ! -r /usr/share/bash-completion/bash_completion ]; then
        echo "SKIP: $shell: the bash-completion package is not installed"
        continue
    fi
    echo "== $shell"
    check_all $shell
    # Escaped with backslashes for the line, or as they are after a quote typed there.
    check_exact $shell <<EOF
swctl --socket $quoted_socket start cli|client,client\ call
swctl --socket $quoted_socket start client\ c|client\ call
swctl --socket $quoted_socket start "cli|client,client call
swctl --socket $quoted_socket start R|R\&D\ \"q\"\ \\\\x
swctl --socket $quoted_socket start caf|café\ au\ lait
swctl --socket $quoted_socket remove |R\&D\ \"q\"\ \\\\x,café\ au\ lait,client,client\ call
EOF
    check $shell <<EOF
swctl |$commands
swctl watch --format=p|plain polybar
swctl --socket $work/fi|$work/fish
swctl list |
swctl start work |
swctl -|--help --host --json --socket --system --user --version
swctl --user watch -|--format --help --json --version
swctl timer -|--help --host --json --keep --off --socket --system --user --version
swctl timer tea 4m --keep -|--help --host --json --socket --system --user --version
swctl wait -|--for --help --host --json --socket --system --timeout --user --version
swctl wait --for stop -|--help --host --json --socket --system --timeout --user --version
swctl wait --for=e|expired
swctl amend |@1
swctl delete |@1
swctl --user delete 0a|
EOF
done

echo "== zsh"
if ! command -v zsh >/dev/null; then
    echo "SKIP: zsh is not installed"
else
    zsh -n completions/_swctl && pass || fail "zsh -n completions/_swctl: does not parse"
    check_all zsh
    # As zsh inserts them: escaped, or as they are after a quote typed on the line. (Not
    # café: in the C locale these tests run in, zsh writes its é as $'\303'$'\251'.)
    check_exact zsh <<EOF
swctl --socket $quoted_socket start cli|client,client\\ call
swctl --socket $quoted_socket start client\\ c|client\\ call
swctl --socket $quoted_socket start "cli|client,client call
swctl --socket $quoted_socket start R|R\\&D\\ \\"q\\"\\ \\\\x
swctl --socket $quoted_socket remove cl|client,client\\ call
EOF
    check zsh <<EOF
swctl |$commands
swctl watch --format=p|plain polybar
swctl --socket $work/fi|fish
swctl list |--help --host --json --socket --system --user --version -h
swctl start work |--at --help --host --json --note --socket --system --user --version -h
swctl delete @1 |--help --host --json --socket --system --user --version -h
swctl delete |@1
swctl -|--help --host --json --socket --system --user --version -h
swctl --user watch -|--format --help --json --version -f -h
swctl timer -|--help --host --json --keep --off --socket --system --user --version -h
swctl timer tea 4m --keep -|--help --host --json --socket --system --user --version -h
swctl wait -|--for --help --host --json --socket --system --timeout --user --version -h
swctl wait --for stop -|--help --host --json --socket --system --timeout --user --version -h
swctl wait --for=e|expired
EOF
fi

echo "== fish"
if ! command -v fish >/dev/null; then
    echo "SKIP: fish is not installed"
else
    fish -n completions/swctl.fish && pass || fail "fish -n completions/swctl.fish: does not parse"
    check_all fish
    # The names as they are: fish escapes what it inserts.
    check_exact fish <<EOF
swctl --socket $quoted_socket start cli|client,client call
swctl --socket $quoted_socket start client\\ c|client call
swctl --socket $quoted_socket start "cli|client,client call
swctl --socket $quoted_socket start R|R&D "q" \\x
swctl --socket $quoted_socket remove |R&D "q" \\x,café au lait,client,client call
EOF
    check fish <<EOF
swctl |$commands
swctl watch --format=p|--format=plain --format=polybar
swctl --socket $work/fi|$work/fish/
swctl list |
swctl start work |
swctl -|--help --host --json --socket --system --user --version -h
swctl --user watch -|--format --help --json --version -f -h
swctl timer -|--help --host --json --keep --off --socket --system --user --version -h
swctl timer tea 4m --keep -|--help --host --json --socket --system --user --version -h
swctl wait -|--for --help --host --json --socket --system --timeout --user --version -h
swctl wait --for stop -|--help --host --json --socket --system --timeout --user --version -h
swctl wait --for=e|--for=expired
swctl amend |@1
swctl delete |@1
swctl --user delete 0a|
EOF
fi

echo "== the --help texts against the files"
for file in completions/swctl.bash completions/_swctl completions/swctl.fish; do
    for word in $commands $formats; do
        grep -qw -- "$word" "$file" && pass || fail "$file does not name '$word' (from swctl --help)"
    done
    for option in $options $daemon_options; do
        # fish writes `-l socket`, the others `--socket`
        grep -qE -- "(^|[^a-z-])(${option}|-l ${option#--})([^a-z-]|$)" "$file" && pass \
            || fail "$file does not name '$option' (from the --help texts)"
    done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
