#!/usr/bin/env bash
# The README's Quick start, followed literally in a fresh clone, as a new user would:
#
#   - reads the two `console` blocks of the README's "Quick start" section: terminal 1's one
#     command, and terminal 2's commands, each with the output the README shows under it;
#   - clones this repository (its HEAD) into a temporary directory, and there, as an
#     unprivileged user with a HOME and XDG_RUNTIME_DIR of its own (nothing shared with
#     this checkout's .build, nor with the machine's /run/stopwatchd or /var/lib/stopwatchd):
#   - starts terminal 1's command in the background, in a process group of its own as a
#     terminal's foreground job is, and waits (with a deadline: the first run builds) for
#     its "listening on" line;
#   - runs terminal 2's commands exactly as written, one after the other in one shell (so
#     its `export` holds for the next), each of which must exit 0 and print what the README
#     shows under it;
#   - presses Ctrl-C (SIGINT to terminal 1's process group): the daemon must log
#     "received SIGINT, stopping", as the README says, and exit 0; and terminal 1 must have
#     printed what the README shows, then that line.
#
# Outputs are compared line by line after both sides are made alike where they must vary:
# every H:MM:SS, the version, a duration in a log line or a build's "complete! (…s)", the
# user's runtime directory (written /run/user/1000 in the README) and home (/home/you). A
# line "…" in the README stands for any lines (a build's progress).
#
# Run as root it adds a user to follow the README as (removed at exit), which changes the
# machine: only with STOPWATCHD_TEST_SYSTEM=1, as `.ci/run` sets; run as anyone else it
# follows it as that user (HOME and XDG_RUNTIME_DIR still its own, but SwiftPM writes its
# configuration and cache in the home directory the user database names, as any `swift
# build` by that user does). Where it cannot follow the README here it skips, saying why;
# under CI (CI set) or with STOPWATCHD_TEST_SYSTEM=1 it fails instead: it was asked to run.
# Whatever happens (a failure, SIGINT, SIGTERM), it stops what it started and removes what
# it made; the clone copies the repository's objects (--no-hardlinks), so nothing it
# changes is shared with this checkout. The clone's first `swift run` builds stopwatchd
# and swctl in debug: a few minutes. Its temporary directory is under ${TMPDIR:-/tmp}.
#
#   bash Tests/docs/quick-start.sh     # from anywhere in the repository
set -euo pipefail
cd "$(dirname "$0")/../.."
repository=$PWD

fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
# Not run here: a skip, unless asked to run (CI, or STOPWATCHD_TEST_SYSTEM=1), then a failure.
skip() {
    if [ "${STOPWATCHD_TEST_SYSTEM:-}" = 1 ] || { [ -n "${CI:-}" ] && [ "${CI:-}" != false ]; }; then
        fail "cannot follow the Quick start here, and CI or STOPWATCHD_TEST_SYSTEM=1 asks it to: $*"
    fi
    echo "SKIP: $*"
    exit 0
}
# Seconds a step that builds may take (terminal 1; a `swift …` command of terminal 2),
# and any other command of terminal 2.
build_deadline=${STOPWATCHD_QUICK_START_DEADLINE:-1800}
command_deadline=120

command -v git >/dev/null || fail "git is needed to clone the repository"
swift=$(command -v swift) || fail "swift is not on PATH"
toolchain_bin=$(dirname "$(readlink -f "$swift")")

user=
if [ "$(id -u)" = 0 ]; then
    if [ "${STOPWATCHD_TEST_SYSTEM:-}" != 1 ]; then
        skip "as root the quick-start test adds a user to follow the README as: it does only with STOPWATCHD_TEST_SYSTEM=1 (or run it as another user)"
    fi
    for tool in useradd userdel setpriv; do
        command -v "$tool" >/dev/null || fail "$tool is needed to follow the README as an unprivileged user"
    done
    user="swquick$$"
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "note: uncommitted changes are not tested: the clone gets HEAD, $(git rev-parse --short HEAD)"
fi

# The Quick start's console blocks: each line "$ COMMAND" followed by its output. Written
# as files block1, block2, … of "command" / "output" pairs (NUL-separated).
readme_blocks() {
    python3 - "$1" "$2" <<'PYTHON'
import sys
lines = open(sys.argv[2], encoding="utf-8").read().split("\n")
start = lines.index("## Quick start")
end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
section, blocks, block = lines[start:end], [], None
for line in section:
    if block is None and line.strip() == "```console":
        block = []
    elif block is not None and line.strip() == "```":
        blocks.append(block)
        block = None
    elif block is not None:
        block.append(line)
for number, block in enumerate(blocks, 1):
    steps = []
    for line in block:
        if line.startswith("$ "):
            steps.append([line[2:], []])
        elif not steps:
            sys.exit(f"block {number} of the Quick start does not begin with a '$ ' command")
        else:
            steps[-1][1].append(line)
    with open(f"{sys.argv[1]}/block{number}", "w", encoding="utf-8") as out:
        for command, output in steps:
            out.write(command + "\0" + "".join(l + "\n" for l in output) + "\0")
print(len(blocks))
with open(f"{sys.argv[1]}/section", "w", encoding="utf-8") as out:
    out.write("\n".join(section) + "\n")
PYTHON
}

work=$(mktemp -d "${TMPDIR:-/tmp}/swquick-XXXXXX")
# World-searchable: the user goes through it to its home.
chmod 0755 "$work"
home=$work/home
runtime=$work/run
clone=$home/stopwatchd
# Each terminal is a process group of its own (set -m), led by the job's first process.
terminal1=
terminal2=
# Stops a terminal's whole group, even when its leader is gone: TERM, up to 5 s, then KILL.
stop_group() {
    kill -TERM -- "-$1" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 -- "-$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    trap - INT TERM
    [ -z "$terminal2" ] || stop_group "$terminal2"
    [ -z "$terminal1" ] || stop_group "$terminal1"
    if [ -n "$user" ] && id "$user" >/dev/null 2>&1; then
        # Whatever of the user's is left (a build a failure interrupted); userdel refuses a
        # user with processes, and SIGKILL takes effect after pkill returns.
        pkill -KILL -u "$user" 2>/dev/null || true
        for _ in $(seq 100); do pgrep -u "$user" >/dev/null || break; sleep 0.1; done
        if ! userdel "$user" 2>"$work/userdel" && ! userdel -f "$user" 2>>"$work/userdel"; then
            echo "WARNING: the user $user this test added is left: $(cat "$work/userdel"; pgrep -a -u "$user")" >&2
        fi
    fi
    rm -rf "$work"
}
trap cleanup EXIT
# A signal ends the script, and so runs cleanup (bash runs a trap as soon as `wait` or the
# current short command returns: no foreground command here runs long).
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== a fresh clone of $(git rev-parse --short HEAD), for ${user:-$(id -un)} (HOME and XDG_RUNTIME_DIR of its own)"
mkdir -p "$home" "$runtime"
chmod 0700 "$runtime"
# Copies, not hard links: the user's chown must not reach this repository's objects.
git clone --quiet --no-hardlinks "$repository" "$clone"
linked=$(find "$clone/.git" -type f -links +1 | head -3)
[ -z "$linked" ] || fail "the clone shares files with this repository (hard links), which the user's chown would change: $linked"

# The clone's README, as the new user reads it.
blocks=$(readme_blocks "$work" "$clone/README.md") || fail "cannot read the README's Quick start"
[ "$blocks" = 2 ] || fail "the README's Quick start has $blocks console blocks, not 2 (terminal 1, terminal 2)"
mapfile -d '' -t terminal1_steps <"$work/block1"
mapfile -d '' -t terminal2_steps <"$work/block2"
[ ${#terminal1_steps[@]} = 2 ] || fail "terminal 1 of the Quick start has $((${#terminal1_steps[@]} / 2)) commands, not 1"
stop_line="stopwatchd: info: received SIGINT, stopping"
grep -q "received SIGINT, stopping" "$work/section" && grep -q "exits 0" "$work/section" \
    || fail "the Quick start no longer says what Ctrl-C does (received SIGINT, stopping; exits 0): change this test with it"
environment=(HOME="$home" XDG_RUNTIME_DIR="$runtime" PATH="$toolchain_bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8)
if [ -n "$user" ]; then
    useradd --no-create-home --home-dir "$home" --shell /bin/bash --user-group "$user"
    chown -R "$user:$user" "$home" "$runtime"
    environment+=(USER="$user" LOGNAME="$user")
    as_user() { setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups env -i "${environment[@]}" "$@"; }
else
    # SwiftPM keeps its configuration in the home directory of the user database, not
    # $HOME's: a user without a writable one (nobody) gets warnings no new user would.
    passwd_home=$(getent passwd "$(id -u)" | cut -d: -f6)
    if [ ! -w "$passwd_home" ]; then
        skip "your home directory ($passwd_home) is not writable, and SwiftPM would say so in terminal 1: run as a user with a home, or as root"
    fi
    environment+=(USER="$(id -un)" LOGNAME="$(id -un)")
    as_user() { env -i "${environment[@]}" "$@"; }
fi
if ! as_user "$swift" --version >"$work/swift-version" 2>&1; then
    skip "the Swift toolchain ($swift) does not run as ${user:-this user}: $(head -3 "$work/swift-version")"
fi

# What varies from run to run, made alike on both sides (see the header).
normalize() {
    sed -E \
        -e "s#${runtime}#/run/user/1000#g" -e "s#${home}#/home/you#g" \
        -e 's/[0-9]+:[0-9]{2}:[0-9]{2}/H:MM:SS/g' \
        -e 's/stopwatchd [0-9]+\.[0-9]+\.[0-9]+[^ ]*/stopwatchd VERSION/' \
        -e 's/ in [0-9.]+(ns|µs|us|ms|s)$/ in DURATION/' \
        -e "s/ complete! \\([0-9.]+s\\)/ complete! (SECONDS)/"
}
# Whether ACTUAL's lines are EXPECTED's, "…" in EXPECTED standing for any lines.
matches() {
    local -a expected actual
    mapfile -t expected <"$1"
    mapfile -t actual <"$2"
    local line index=0 skipping=no
    for line in "${expected[@]}"; do
        if [ "$line" = "…" ]; then skipping=yes; continue; fi
        if [ "$skipping" = yes ]; then
            while [ "$index" -lt ${#actual[@]} ] && [ "${actual[$index]}" != "$line" ]; do index=$((index + 1)); done
            skipping=no
        fi
        [ "$index" -lt ${#actual[@]} ] && [ "${actual[$index]}" = "$line" ] || return 1
        index=$((index + 1))
    done
    [ "$skipping" = yes ] || [ "$index" = ${#actual[@]} ]
}
# Compares what WHAT printed (file ACTUAL) with what the README shows (file EXPECTED).
compare() {
    local what=$1 expected=$2 actual=$3
    normalize <"$expected" >"$expected.normal"
    normalize <"$actual" >"$actual.normal"
    if ! matches "$expected.normal" "$actual.normal"; then
        echo "--- $what: the README shows (normalized):" >&2; cat "$expected.normal" >&2
        echo "--- it printed (normalized):" >&2; cat "$actual.normal" >&2
        fail "$what does not print what the README shows"
    fi
}

command1=${terminal1_steps[0]}
echo "== terminal 1: $command1"
started=$(date +%s)
# A job of its own, as a terminal's foreground job is: not ignoring SIGINT (bash's
# background jobs without job control do), and a process group Ctrl-C reaches whole.
: >"$work/terminal1"
set -m
as_user bash -c 'cd "$1" && eval "$2"' terminal1 "$clone" "$command1" </dev/null >"$work/terminal1" 2>&1 &
terminal1=$!
set +m
until grep -q " listening on " "$work/terminal1"; do
    kill -0 "$terminal1" 2>/dev/null || { cat "$work/terminal1" >&2; fail "terminal 1 ended before it listened"; }
    [ $(($(date +%s) - started)) -lt "$build_deadline" ] || { tail -20 "$work/terminal1" >&2; fail "terminal 1 did not listen within $build_deadline s"; }
    sleep 1
done
echo "listening after $(($(date +%s) - started)) s: $(grep " listening on " "$work/terminal1")"

echo "== terminal 2, in the same directory"
# One shell for all, as a terminal is: each command's output and exit status after a mark.
mark="@@quick-start-step@@"
{
    echo "cd \"\$1\""
    for ((i = 0; i < ${#terminal2_steps[@]}; i += 2)); do
        # A newline before `}`: the command may end in a # comment.
        printf 'echo %s\n{ %s\n} 2>&1\necho "%s status $?"\n' "$mark" "${terminal2_steps[$i]}" "$mark"
    done
} >"$work/terminal2.sh"
chmod 0644 "$work/terminal2.sh"
# In the background, in a group of its own (which cleanup stops whole), watched with a
# deadline per command: a build's, or a client command's.
: >"$work/terminal2"
set -m
as_user bash "$work/terminal2.sh" "$clone" </dev/null >"$work/terminal2" 2>&1 &
terminal2=$!
set +m
done_steps=-1
while kill -0 "$terminal2" 2>/dev/null; do
    now_done=$(grep -c "^$mark status " "$work/terminal2" || true)
    if [ "$now_done" != "$done_steps" ]; then
        done_steps=$now_done step_started=$(date +%s) deadline=$command_deadline
        case ${terminal2_steps[$((2 * done_steps))]:-} in "swift "*) deadline=$build_deadline ;; esac
    fi
    [ $(($(date +%s) - step_started)) -lt "$deadline" ] \
        || { cat "$work/terminal2" >&2; fail "terminal 2's \$ ${terminal2_steps[$((2 * done_steps))]:-} did not end within $deadline s"; }
    sleep 0.2
done
status=0
wait "$terminal2" || status=$?
terminal2=
[ "$status" = 0 ] || { cat "$work/terminal2" >&2; fail "terminal 2's shell exited $status"; }
# Split at the marks: step N's output, then its status.
for ((i = 0, step = 1; i < ${#terminal2_steps[@]}; i += 2, step += 1)); do
    command=${terminal2_steps[$i]}
    awk -v step="$step" -v mark="$mark" '
        $0 == mark { seen++; next }
        index($0, mark " status ") == 1 { if (seen == step) { print substr($0, length(mark " status ") + 1) > "/dev/stderr" }; next }
        seen == step { print }
    ' "$work/terminal2" >"$work/step$step.out" 2>"$work/step$step.status"
    status=$(cat "$work/step$step.status")
    [ "$status" = 0 ] || { cat "$work/step$step.out" >&2; fail "\$ $command: exit ${status:-unknown}, not 0"; }
    printf '%s' "${terminal2_steps[$((i + 1))]}" >"$work/step$step.expected"
    compare "\$ $command" "$work/step$step.expected" "$work/step$step.out"
    echo "\$ $command: as the README shows (lines: $(wc -l <"$work/step$step.out"))"
done

echo "== Ctrl-C in terminal 1"
kill -INT -- "-$terminal1"
stopping=$(date +%s)
while kill -0 "$terminal1" 2>/dev/null; do
    [ $(($(date +%s) - stopping)) -lt 30 ] || { cat "$work/terminal1" >&2; fail "terminal 1 did not stop within 30 s of SIGINT"; }
    sleep 0.1
done
status=0
wait "$terminal1" || status=$?
terminal1=
[ "$status" = 0 ] || { cat "$work/terminal1" >&2; fail "terminal 1 exited $status after Ctrl-C, not 0"; }
{ printf '%s' "${terminal1_steps[1]}"; echo "$stop_line"; } >"$work/terminal1.expected"
compare "terminal 1 ($command1, then Ctrl-C)" "$work/terminal1.expected" "$work/terminal1"
echo "terminal 1 printed what the README shows, then \"$stop_line\", and exited 0"
echo "quick start followed in $(($(date +%s) - started)) s"
