#!/usr/bin/env bash
# stopwatchd --exit-idle under a real socket activator, systemd-socket-activate: the daemon
# exits 0 (STOPPING=1) once idle; a counting stopwatch counts on while no process exists and
# the next client (through a new activation) sees the right elapsed time; a pending
# countdown, a watching client and a running hook each keep the daemon up until they end.
# Without socket activation --exit-idle is a usage error (exit 2).
#
# systemd-socket-activate (without --accept) waits for the first connection, then execs the
# daemon in its own process with the socket as fd 3; when the daemon exits the socket is
# gone with it, so this script plays the manager: it activates again after each exit.
#
# Usage: bash Tests/systemd/exit-idle.sh [DIRECTORY OF BUILT BINARIES, default .build/debug]
# Builds nothing. Skips where systemd-socket-activate is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

activate=/usr/bin/systemd-socket-activate
if [ ! -x "$activate" ]; then
    echo "SKIP: $activate is not installed; the exit-on-idle test needs it"
    exit 0
fi
bin=$(cd "${1:-.build/debug}" && pwd)
for program in stopwatchd swctl; do
    [ -x "$bin/$program" ] || { echo "FAIL: no $bin/$program (build first)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 is needed for the notify socket" >&2; exit 1; }
unset STOPWATCHD_SOCKET LISTEN_FDS LISTEN_PID NOTIFY_SOCKET

work=$(mktemp -d /tmp/swidle-XXXXXX)
chmod 0700 "$work"
sock="$work/run/stopwatchd.sock"
state="$work/state"
notify="$work/notify.sock"
notes="$work/notify.log"
log="$work/daemon.log"
daemon=""
listener=""
watcher=""
cleanup() {
    # A hook the test left running (it failed midway) goes too.
    pkill -f "$work/hooks/" 2>/dev/null || true
    for pid in $watcher $daemon $listener; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in $watcher $daemon $listener; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "--- daemon log" >&2; cat "$log" >&2 || true
    echo "--- notifications" >&2; cat "$notes" >&2 || true
    exit 1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
swctl() { "$bin/swctl" --socket "$sock" "$@"; }
elapsed_of() { sed -n 's/.*"elapsed_ms":\([0-9]*\).*/\1/p'; }

mkdir -p "$work/run" "$state" "$work/no-hooks"
install -d -m 0700 "$work/hooks"

# The notify socket, as systemd's: one line per datagram.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(65536).decode(errors="replace").replace("\n", " ") + "\n")
' "$notify" "$notes" &
listener=$!
for _ in $(seq 100); do [ -S "$notify" ] && break; sleep 0.05; done
[ -S "$notify" ] || fail "the notify listener did not start"

# Listens on $sock as systemd would; the daemon starts at the first connection. $1: hook dir.
launch() {
    rm -f "$sock"
    : >"$notes"
    "$activate" -l "$sock" -E PATH -E NOTIFY_SOCKET="$notify" \
        "$bin/stopwatchd" --exit-idle 1s --state-dir "$state" --hook-dir "$1" --log-level debug >>"$log" 2>&1 &
    daemon=$!
    for _ in $(seq 100); do [ -S "$sock" ] && return 0; sleep 0.05; done
    fail "systemd-socket-activate did not listen on $sock"
}

# Waits up to $1 seconds for the daemon to exit; sets $gone to when (ms); fails unless it
# exited with status 0. (Not in a subshell: `wait` needs the daemon to be this shell's child.)
wait_exit() {
    local deadline=$(( $(now_ms) + $1 * 1000 ))
    while alive; do
        [ "$(now_ms)" -lt "$deadline" ] || fail "the daemon (pid $daemon) is still running after $1 s"
        sleep 0.02
    done
    gone=$(now_ms)
    local status=0
    wait "$daemon" || status=$?
    # Reaped: its pid may be anyone's now, and cleanup must not signal it.
    daemon=""
    [ "$status" = 0 ] || fail "the daemon exited with status $status"
}
alive() { [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; }
# Waits up to $1 seconds for the notify log to have a line matching $2 (the listener writes
# each datagram as it comes, maybe after the daemon is gone).
noted() {
    local deadline=$(( $(now_ms) + $1 * 1000 ))
    until grep "$2" "$notes" | grep -q "${3:-}"; do
        [ "$(now_ms)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

echo "== without socket activation: a usage error"
# Bounded, and with the user's directories inside $work: were the check ever to fail, the
# daemon must neither bind the user's real socket nor hang the run.
refused() {
    XDG_RUNTIME_DIR="$work/xdg-run" XDG_CONFIG_HOME="$work/xdg-config" XDG_STATE_HOME="$work/xdg-state" \
        timeout 10 "$bin/stopwatchd" "$@"
}
status=0
refused --exit-idle 1s --socket "$work/direct.sock" --state-dir "$work/direct" >"$work/usage.out" 2>&1 || status=$?
[ "$status" = 2 ] || fail "--exit-idle with --socket: exit $status, not 2: $(cat "$work/usage.out")"
grep -q "socket activation" "$work/usage.out" || fail "the message does not say why: $(cat "$work/usage.out")"
[ ! -e "$work/direct.sock" ] || fail "a socket was made before the refusal"
status=0
refused --exit-idle 1s --state-dir "$work/direct" >/dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "--exit-idle with no socket passed: exit $status, not 2"
echo "refused: $(cat "$work/usage.out")"

echo "== idle: exits 0 a period after the last client left"
launch "$work/no-hooks"
# One client only: its reply is the elapsed time, and it is the last client to leave.
started_json=$(swctl --json start)
read_at=$(now_ms)
echo "$started_json" | grep -q '"state":"counting"' || fail "swctl start through the activator: $started_json"
before=$(echo "$started_json" | elapsed_of)
wait_exit 10
took=$(( gone - read_at ))
echo "exited ${took} ms after the last client left (period 1 s)"
[ "$took" -ge 900 ] || fail "exited ${took} ms after the last client: before its idle period"
noted 5 "READY=1" || fail "no READY=1"
noted 5 "STOPPING=1" "idle" || fail "no STOPPING=1 with an idle STATUS"
grep -q "idle for .*: exiting; the socket starts stopwatchd again" "$log" || fail "no log line for the idle exit"
echo "told systemd: $(grep STOPPING=1 "$notes")"

echo "== no process for 2 s: the stopwatch counts on, the next client starts the daemon again"
sleep 2
pgrep -f -- "--state-dir $state" >/dev/null && fail "a daemon process exists during the gap"
launch "$work/no-hooks"
asked=$(now_ms)
status_json=$(swctl --json status)
after=$(echo "$status_json" | elapsed_of)
gap=$(( asked - read_at ))
echo "$status_json" | grep -q '"state":"counting"' || fail "not counting after the restart: $status_json"
echo "elapsed ${before} ms, then ${after} ms after a gap of ${gap} ms with no daemon for most of it"
[ "$after" -ge $(( before + gap - 50 )) ] || fail "elapsed ${after} ms is short of ${before} + ${gap} ms"
[ "$after" -le $(( before + gap + 5000 )) ] || fail "elapsed ${after} ms is far past ${before} + ${gap} ms"
wait_exit 10

echo "== a pending countdown keeps it until it expires"
launch "$work/no-hooks"
set_at=$(now_ms)
swctl timer egg 3s | grep -q "egg counting" || fail "swctl timer egg 3s"
sleep 2
alive || fail "the daemon exited with a countdown pending (2 s of 3)"
wait_exit 10
took=$(( gone - set_at ))
echo "a 3 s countdown: exited ${took} ms after it was set (expiry at 3 s, then 1 s idle)"
[ "$took" -ge 3900 ] || fail "exited ${took} ms after the countdown was set: before expiry + period"
[ "$took" -le 7000 ] || fail "exited ${took} ms after the countdown was set: long after expiry + period"
launch "$work/no-hooks"
egg=$(swctl --json status egg)
echo "$egg" | grep -q '"state":"counting".*"target_ms":3000' || fail "egg after the restart: $egg"
[ "$(echo "$egg" | elapsed_of)" -ge 3000 ] || fail "egg has not reached its target after the restart: $egg"
wait_exit 10

echo "== a watching client keeps it"
launch "$work/no-hooks"
"$bin/swctl" --socket "$sock" watch default >"$work/watch.out" 2>&1 &
watcher=$!
sleep 3
alive || fail "the daemon exited while a client watched"
[ -s "$work/watch.out" ] || fail "the watcher got nothing"
stopped=$(now_ms)
kill "$watcher"; wait "$watcher" 2>/dev/null || true
watcher=""
wait_exit 10
took=$(( gone - stopped ))
echo "watched 3 s; exited ${took} ms after the watcher left"
[ "$took" -ge 900 ] || fail "exited ${took} ms after the watcher left: before its idle period"

echo "== a running hook keeps it"
cat >"$work/hooks/slow" <<EOF
#!/bin/sh
[ "\$STOPWATCHD_EVENT" = start ] || exit 0
sleep 3
touch "$work/hook-done"
EOF
chmod 0700 "$work/hooks/slow"
launch "$work/hooks"
started=$(now_ms)
swctl start tea | grep -q "tea counting" || fail "swctl start tea"
sleep 2
alive || fail "the daemon exited while a hook ran (2 s of 3)"
wait_exit 15
took=$(( gone - started ))
[ -e "$work/hook-done" ] || fail "the hook did not finish"
echo "a 3 s hook: exited ${took} ms after the event (hook 3 s, then 1 s idle)"
[ "$took" -ge 3900 ] || fail "exited ${took} ms after the event: before the hook's end + period"
[ "$took" -le 8000 ] || fail "exited ${took} ms after the event: long after the hook's end + period"

echo "exit-on-idle test passed"
