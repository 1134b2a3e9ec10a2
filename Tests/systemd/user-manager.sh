#!/usr/bin/env bash
# stopwatchd under a real systemd: a private *user* manager (never a system manager, whose
# boot-time tmpfiles step would empty the host's /tmp). Installs with `make install` into a
# temporary prefix, links the user units in, and checks socket activation, Type=notify and
# STATUS=, restarts that keep a counting stopwatch counting, Restart=on-failure after
# kill -9, a clean stop, exit on idle (a drop-in shortens the units' 5min to 1s), and a
# hook that reaches a TCP listener on 127.0.0.1 (the user unit does not sandbox its
# user's hooks). Runs in CI and when called; skips where systemd is absent. Where
# /run/systemd/system is missing (a machine not booted with systemd) it makes it, and
# removes it at exit: that changes the machine, so only with STOPWATCHD_TEST_SYSTEM=1.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x /lib/systemd/systemd ]; then
    echo "SKIP: /lib/systemd/systemd is not installed; the systemd test needs it"
    exit 0
fi
if [ ! -d /run/systemd/system ] && [ "${STOPWATCHD_TEST_SYSTEM:-}" != 1 ]; then
    echo "SKIP: this machine was not booted with systemd; the systemd test would make /run/systemd/system: it does only with STOPWATCHD_TEST_SYSTEM=1"
    exit 0
fi

work=$(mktemp -d /tmp/swsd-XXXXXX)
manager=""
watcher=""
listener=""
made_systemd_dirs=()
cleanup() {
    [ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
    [ -z "$listener" ] || kill "$listener" 2>/dev/null || true
    if [ -n "$manager" ] && kill -0 "$manager" 2>/dev/null; then
        XDG_RUNTIME_DIR="$work/run" systemctl --user stop stopwatchd.service stopwatchd.socket >/dev/null 2>&1 || true
        kill "$manager" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$manager" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$manager" 2>/dev/null || true
    fi
    if [ ${#made_systemd_dirs[@]} -gt 0 ] && ! rmdir "${made_systemd_dirs[@]}" 2>"$work/rmdir"; then
        # Something else made a file in it meanwhile: left, but said.
        echo "WARNING: could not remove ${made_systemd_dirs[*]}, which this test made: $(cat "$work/rmdir")" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# Waits up to 20 s for a command to succeed.
eventually() {
    for _ in $(seq 200); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    return 1
}

# A machine booted with systemd has this; it tells systemctl a manager may be running.
# Made only where missing, and then removed at exit (innermost first).
for directory in /run/systemd/system /run/systemd; do
    [ -d "$directory" ] || made_systemd_dirs+=("$directory")
done
mkdir -p /run/systemd/system
install -d -m 0700 "$work/run" "$work/config" "$work/state"
export XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
export HOME="$work" STOPWATCHD_SOCKET=""

make --no-print-directory install DESTDIR= PREFIX="$work/prefix" >/dev/null
mkdir -p "$XDG_CONFIG_HOME/systemd/user"
cp "$work/prefix/lib/systemd/user/stopwatchd.service" "$work/prefix/lib/systemd/user/stopwatchd.socket" "$XDG_CONFIG_HOME/systemd/user/"
swctl="$work/prefix/bin/swctl"

/lib/systemd/systemd --user >"$work/manager.log" 2>&1 &
manager=$!
eventually systemctl --user is-system-running || { cat "$work/manager.log"; fail "the user manager did not start"; }
echo "user manager $manager is up ($(systemctl --user is-system-running || true))"

show() { systemctl --user show -p "$1" --value stopwatchd.service; }
# A function, not `test "$(show …)"`: `eventually` must read the state anew each time.
is_active() { [ "$(show ActiveState)" = active ]; }
elapsed() { "$swctl" --user --json status | sed -n 's/.*"elapsed_ms":\([0-9]*\).*/\1/p'; }

echo "== socket activation"
systemctl --user start stopwatchd.socket
[ "$(show ActiveState)" = inactive ] || fail "the service ran before anyone called"
"$swctl" --user start | grep -q "default counting" || fail "swctl start through the socket"
eventually is_active || fail "the service did not become active"
eventually sh -c "systemctl --user show -p StatusText --value stopwatchd.service | grep -q '1 stopwatch, 1 counting'" \
    || fail "StatusText: '$(show StatusText)'"
echo "active: $(show StatusText)"
[ "$(stat -c %a "$XDG_RUNTIME_DIR/stopwatchd/stopwatchd.sock")" = 600 ] || fail "the user socket is not 0600"

echo "== stop and start keep a counting stopwatch counting"
before=$(elapsed)
systemctl --user stop stopwatchd.service stopwatchd.socket
[ "$(show ExecMainStatus)" = 0 ] || fail "ExecMainStatus after stop: $(show ExecMainStatus)"
systemctl --user start stopwatchd.service          # the service alone: it brings its socket
eventually is_active || fail "starting the service directly"
after=$(elapsed)
"$swctl" --user status | grep -q "default counting" || fail "not counting after the restart"
[ "$after" -ge "$before" ] || fail "elapsed went back: $before -> $after"
echo "counting on: ${before}ms -> ${after}ms"

echo "== kill -9: restarted by systemd, nothing lost"
pid=$(show MainPID)
before=$(elapsed)
kill -9 "$pid"
eventually sh -c "[ \"\$(systemctl --user show -p MainPID --value stopwatchd.service)\" != $pid ] && [ \"\$(systemctl --user show -p ActiveState --value stopwatchd.service)\" = active ]" \
    || fail "no automatic restart after kill -9 (state $(show ActiveState))"
after=$(elapsed)
"$swctl" --user status | grep -q "default counting" || fail "not counting after kill -9"
[ "$after" -ge "$before" ] || fail "elapsed went back after kill -9: $before -> $after"
echo "restarted as $(show MainPID): ${before}ms -> ${after}ms"

echo "== clean stop"
systemctl --user stop stopwatchd.service
[ "$(show ExecMainStatus)" = 0 ] || fail "ExecMainStatus: $(show ExecMainStatus)"
[ "$(show Result)" = success ] || fail "Result: $(show Result)"
# StateDirectory= of a user unit: $XDG_STATE_HOME (systemd 254 and later) or $XDG_CONFIG_HOME.
state=$(find "$XDG_STATE_HOME/stopwatchd" "$XDG_CONFIG_HOME/stopwatchd" -name default.json 2>/dev/null | head -n 1 || true)
[ -n "$state" ] || fail "no state file in the user's StateDirectory"
echo "state kept in $state"

echo "== exit on idle (a drop-in sets --exit-idle 1s): the service stops by itself, the socket starts it again"
dropin="$XDG_CONFIG_HOME/systemd/user/stopwatchd.service.d"
mkdir -p "$dropin"
printf '[Service]\nExecStart=\nExecStart=%s --exit-idle 1s\n' "$work/prefix/bin/stopwatchd" >"$dropin/exit-idle.conf"
systemctl --user daemon-reload
systemctl --user show -p ExecStart --value stopwatchd.service | grep -q -- "--exit-idle 1s" \
    || fail "the drop-in's ExecStart is not used: $(systemctl --user show -p ExecStart --value stopwatchd.service)"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
inactive() { [ "$(show ActiveState)" = inactive ]; }
# A watcher keeps the daemon while its pid and the elapsed time are read: with a 1 s period,
# a loaded machine could otherwise see it gone between two calls.
"$swctl" --user watch >"$work/watch.out" 2>&1 &
watcher=$!
eventually is_active \
    || fail "the service did not start for a watcher (state $(show ActiveState); watch said: $(cat "$work/watch.out"))"
pid=$(show MainPID)
[ "$pid" != 0 ] || fail "no main process while a client watches"
before=$(elapsed)
read_at=$(now_ms)
kill "$watcher"
wait "$watcher" 2>/dev/null || true
watcher=""
grep -q "default counting" "$work/watch.out" || fail "the watcher saw nothing: $(cat "$work/watch.out")"
eventually inactive || fail "the service did not stop when idle (state $(show ActiveState))"
echo "idle exit after $(( $(now_ms) - read_at )) ms (or less): Result=$(show Result), ExecMainStatus=$(show ExecMainStatus)"
[ "$(show Result)" = success ] || fail "Result after the idle exit: $(show Result)"
[ "$(show ExecMainStatus)" = 0 ] || fail "ExecMainStatus after the idle exit: $(show ExecMainStatus)"
[ "$(systemctl --user show -p ActiveState --value stopwatchd.socket)" = active ] || fail "the socket is not listening after the idle exit"
kill -0 "$pid" 2>/dev/null && fail "the daemon's process $pid still exists"
sleep 2
inactive || fail "the service started again with nobody calling"
asked=$(now_ms)
status_json=$("$swctl" --user --json status)
after=$(echo "$status_json" | sed -n 's/.*"elapsed_ms":\([0-9]*\).*/\1/p')
gap=$(( asked - read_at ))
echo "$status_json" | grep -q '"state":"counting"' || fail "not counting after the idle exit: $status_json"
[ "$after" -ge $(( before + gap - 50 )) ] || fail "elapsed ${after} ms is short of ${before} + ${gap} ms"
[ "$(show MainPID)" != "$pid" ] || fail "the same process answered"
echo "started again as $(show MainPID): ${before} ms, then ${after} ms after ${gap} ms"
eventually inactive || fail "the service did not stop when idle again"

echo "== exit on idle: a pending countdown keeps the service until it expires"
set_at=$(now_ms)
"$swctl" --user timer egg 3s | grep -q "egg counting" || fail "swctl timer egg 3s"
sleep 2
[ "$(show ActiveState)" = active ] || fail "the service stopped with a countdown pending (state $(show ActiveState))"
eventually inactive || fail "the service did not stop after the countdown expired"
took=$(( $(now_ms) - set_at ))
echo "a 3 s countdown: inactive ${took} ms after it was set"
[ "$took" -ge 3900 ] || fail "inactive ${took} ms after a 3 s countdown was set: before its expiry and the idle period"
[ "$(show Result)" = success ] || fail "Result after the countdown's idle exit: $(show Result)"
rm -r "$dropin"
systemctl --user daemon-reload

echo "== a hook is the user's own program, not sandboxed: it reaches a TCP listener on 127.0.0.1 when a countdown expires"
# The listener: one connection; what it sent is kept in $work/received.
python3 - "$work/port" "$work/received" <<'PY' &
import os, socket, sys
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.bind(("127.0.0.1", 0))
server.listen(1)
with open(sys.argv[1] + ".tmp", "w") as port:
    port.write(str(server.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.settimeout(60)
connection, _ = server.accept()
received = b""
while chunk := connection.recv(4096):
    received += chunk
with open(sys.argv[2] + ".tmp", "wb") as out:
    out.write(received)
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
PY
listener=$!
eventually test -s "$work/port" || fail "the TCP listener did not start"
port=$(cat "$work/port")
install -d -m 0700 "$work/hooks"
printf '#!/bin/bash\n[ "$STOPWATCHD_EVENT" = expired ] || exit 0\necho "$STOPWATCHD_EVENT $STOPWATCHD_NAME" >/dev/tcp/127.0.0.1/%s\n' "$port" >"$work/hooks/tcp"
chmod 0755 "$work/hooks/tcp"
systemctl --user stop stopwatchd.service
mkdir -p "$dropin"
printf '[Service]\nExecStart=\nExecStart=%s --exit-idle 5min --hook-dir %s\nStandardError=append:%s\n' \
    "$work/prefix/bin/stopwatchd" "$work/hooks" "$work/daemon.log" >"$dropin/hooks.conf"
systemctl --user daemon-reload
"$swctl" --user timer tcp 1s | grep -q "tcp counting" || fail "swctl timer tcp 1s"
eventually test -s "$work/received" \
    || fail "the hook's connection to 127.0.0.1:$port did not arrive; the daemon's log: $(cat "$work/daemon.log" 2>/dev/null)"
[ "$(cat "$work/received")" = "expired tcp" ] || fail "the listener received '$(cat "$work/received")'"
echo "the hook connected to 127.0.0.1:$port and sent: $(cat "$work/received")"
wait "$listener" 2>/dev/null || true
listener=""
rm -r "$dropin"
systemctl --user daemon-reload

echo "systemd user manager test passed"
