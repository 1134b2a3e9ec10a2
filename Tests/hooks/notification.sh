#!/usr/bin/env bash
# A real desktop notification, end to end: the built stopwatchd runs the shipped hook
# (hooks/notify) when countdowns expire, and the hook's notify-send reaches a notification
# server on a private session bus (python-dbusmock's notification_daemon template, with the
# "actions" capability, under dbus-run-session). The test answers a notification as a person
# would by clicking: it makes the server emit ActionInvoked with the action's key for the
# notification's id (the server numbers new notifications from 1, in the order of its log).
#   1. A countdown expires: Notify is called once, naming the stopwatch, with the actions
#      Restart and Snooze 5 min, and the hook's run has ended meanwhile.
#   2. Nobody answers: five countdowns expiring together all notify at once while the first
#      notification still waits for its answer (the waiting holds no hook slot); after the
#      give-up time (STOPWATCHD_NOTIFY_GIVE_UP, shortened here) each is shown again without
#      actions, and no process of the hook is left (they carry a marker in their environment).
#   3. "snooze": the expired countdown counts on, its target elapsed + 5 minutes.
#   4. "restart": the countdown counts again from zero, its target as it was.
#   5. A cycle without auto offers "Start LABEL" (its next phase); "next" starts that phase.
#
# Installs what it needs from Debian when missing: libnotify-bin, dbus, python3-dbusmock
# (for Debian's /usr/bin/python3, not whichever python3 is first on PATH), libglib2.0-bin
# (gdbus, to make the server emit), but only with STOPWATCHD_TEST_SYSTEM=1 (`.ci/run` sets
# it); without, it skips naming them. Uses the debug build in .build/debug (swift build);
# stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "${1:-}" != inside ]; then
    missing=()
    [ -x /usr/bin/notify-send ] || missing+=(libnotify-bin)
    { command -v dbus-run-session && command -v dbus-send && command -v dbus-daemon; } >/dev/null || missing+=(dbus)
    /usr/bin/python3 -c 'import dbusmock' 2>/dev/null || missing+=(python3-dbusmock)
    command -v gdbus >/dev/null || missing+=(libglib2.0-bin)
    if [ ${#missing[@]} -gt 0 ] && [ "${STOPWATCHD_TEST_SYSTEM:-}" != 1 ]; then
        echo "SKIP: the notification test needs ${missing[*]}: install them (apt-get install ${missing[*]}), or let it with STOPWATCHD_TEST_SYSTEM=1"
        exit 0
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    for binary in stopwatchd swctl; do
        [ -x ".build/debug/$binary" ] || swift build --product "$binary" >/dev/null
    done
    exec dbus-run-session -- bash "$0" inside
fi


# Inside a private session bus from here on.
work=$(mktemp -d /tmp/swnotify-XXXXXX)
# Every process of the hook inherits the daemon's environment, this marker with it.
marker="SWNOTIFY_TEST=$work"
give_up=15
mock_pid=
daemon_pid=
# The processes (but the daemon) with the marker: what is left of the hook's runs.
hook_processes() {
    local environ pid
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}
        pid=${pid%/environ}
        [ "$pid" != "$daemon_pid" ] || continue
        grep -qsxzF -- "$marker" "$environ" && echo "$pid $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"
    done
    return 0
}
# Ends what it started whatever its exit status (the mock dies of the SIGTERM: 143), and
# never stops early itself: under `set -e` a failing `wait` would skip the rest of the trap
# and become the script's status.
cleanup() {
    local pid line
    for pid in "$daemon_pid" "$mock_pid"; do
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    hook_processes | while read -r line; do kill -9 "${line%% *}" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
show_logs() {
    echo "--- notification server log:" >&2; cat "$work/notifications.log" >&2 || true
    echo "--- stopwatchd log:" >&2; cat "$work/daemon.log" >&2 || true
    echo "--- processes of the hook:" >&2; hook_processes >&2
}
fail() { show_logs; echo "FAIL: $*" >&2; exit 1; }

# Waits up to $1 seconds for the command after it to succeed.
within() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

echo "== notification server (python-dbusmock, notification_daemon, with actions)"
/usr/bin/python3 -m dbusmock --template notification_daemon -l "$work/notifications.log" \
    --parameters '{"capabilities": "body actions"}' >"$work/mock.out" 2>&1 &
mock_pid=$!
owns_name() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q 'boolean true'
}
within 20 owns_name || { cat "$work/mock.out" >&2; fail "the mock server did not own org.freedesktop.Notifications"; }
echo "ok: org.freedesktop.Notifications is owned"

echo "== stopwatchd with the shipped hook (give-up after $give_up s)"
install -d -m 0700 "$work/hooks"
ln -s "$root/hooks/notify" "$work/hooks/notify"
socket="$work/s.sock"
env "$marker" STOPWATCHD_NOTIFY_GIVE_UP=$give_up "$root/.build/debug/stopwatchd" --socket "$socket" \
    --state-dir "$work/state" --hook-dir "$work/hooks" --log-level debug 2>"$work/daemon.log" &
daemon_pid=$!
swctl() { "$root/.build/debug/swctl" --socket "$socket" "$@"; }
swctl_quietly() { swctl "$@" >/dev/null 2>&1; }
within 20 swctl_quietly list || fail "stopwatchd did not start"

# The server's log: a new notification is a Notify whose replaces_id is 0, and its id is its
# number among those (the mock counts from 1); a notification shown again replaces its id.
notifications() { grep -c ' Notify "stopwatchd" 0 ' "$work/notifications.log" || true; }
notification() { grep ' Notify "stopwatchd" 0 ' "$work/notifications.log" | sed -n "$1p"; }
at_least() { [ "$(notifications)" -ge "$1" ]; }
# The id of the first notification for stopwatch $1 (empty while there is none).
id_of() { grep ' Notify "stopwatchd" 0 ' "$work/notifications.log" | grep -nF -- "\"$1: time is up\"" | head -n 1 | cut -d: -f1; }
notified() { [ -n "$(id_of "$1")" ]; }
# Clicks action $2 of notification $1.
click() {
    gdbus call --session --dest org.freedesktop.Notifications --object-path /org/freedesktop/Notifications \
        --method org.freedesktop.DBus.Mock.EmitSignal org.freedesktop.Notifications ActionInvoked us \
        "[<uint32 $1>, <'$2'>]" >/dev/null
}
# A field of `swctl --json status NAME`: $2 is a Python expression on the object `s`.
field() {
    swctl --json status -- "$1" | /usr/bin/python3 -c "import json, sys; s = json.load(sys.stdin); print($2)"
}
ran() { grep -q "hook notify (expired of '$1') succeeded" "$work/daemon.log"; }

echo "== 1. swctl timer t 300ms: one notification, with Restart and Snooze 5 min"
swctl timer t 300ms >/dev/null || fail "swctl timer t 300ms failed"
within 20 ran t || fail "the hook did not run to success within 20 s of the countdown"
# The hook has returned; its job sends the notification.
within 20 at_least 1 || fail "no notification within 20 s of the hook's run"
[ "$(notifications)" -eq 1 ] || fail "Notify was called $(notifications) times, not once"
notification 1 | grep -q '"t: time is up"' || fail "the notification's summary does not name the stopwatch"
notification 1 | grep -qF '["restart", "Restart", "snooze", "Snooze 5 min"]' || fail "the notification does not offer Restart and Snooze 5 min"
sender() { notification "$1" | sed -n 's/.*"sender-pid": \([0-9]*\).*/\1/p'; }
waiting=$(sender 1)
[ -n "$waiting" ] && [ -d "/proc/$waiting" ] || fail "the hook's run ended only once its notification no longer waited (notify-send $waiting)"
echo "ok: the hook's run has ended, its notification waits: $(notification 1 | cut -c1-160)"

echo "== 2. nobody answers: 5 countdowns expire together, all notify while the first waits; given up after $give_up s"
first=$(($(notifications) + 1))
for n in 1 2 3 4 5; do swctl timer "quiet $n" 1s >/dev/null || fail "swctl timer 'quiet $n' 1s failed"; done
within 20 at_least $((first + 4)) || fail "5 expiries gave $(($(notifications) - first + 1)) notifications within 20 s"
all_ran() { local n; for n in 1 2 3 4 5; do ran "quiet $n" || return 1; done; }
within 10 all_ran || fail "the 5 runs of the hook did not all end"
waiting=$(sender "$first")
[ -n "$waiting" ] && [ -d "/proc/$waiting" ] || fail "the first of the 5 notifications no longer waits for its answer (notify-send $waiting)"
echo "ok: 5 notifications, the 5 runs of the hook ended, while the first notify-send ($waiting) still waits"
nothing_left() { [ -z "$(hook_processes)" ]; }
within $((give_up + 30)) nothing_left || fail "processes of the hook are left $((give_up + 30)) s after the give-up"
grep -q " Notify \"stopwatchd\" $first " "$work/notifications.log" || fail "notification $first was not shown again, without actions, at the give-up"
grep " Notify \"stopwatchd\" $first " "$work/notifications.log" | grep -q '"restart"' && fail "notification $first still has actions after the give-up"
echo "ok: given up: shown again without actions, and no process of the hook is left"

echo "== 3. snooze: the target becomes elapsed + 5 minutes"
name='tea ☕ "x"'
swctl timer "$name" 1s >/dev/null || fail "swctl timer '$name' 1s failed"
within 20 notified "$name" || fail "no notification for '$name'"
id=$(id_of "$name")
before=$(field "$name" "s['elapsed_ms']")
[ "$(field "$name" "s['target_ms']")" = 1000 ] || fail "the target is not 1000 ms before the snooze"
click "$id" snooze
snoozed() { [ "$(field "$name" "s['target_ms']")" != 1000 ]; }
within 20 snoozed || fail "the target did not change within 20 s of the answer snooze"
read -r target elapsed state < <(field "$name" "s['target_ms'], s['elapsed_ms'], s['state']")
[ "$state" = counting ] || fail "the snoozed countdown is $state, not counting"
[ "$target" -ge $((before + 300000)) ] && [ "$target" -le $((elapsed + 300000)) ] \
    || fail "the target is $target ms, not elapsed + 5 minutes (elapsed $before ms before the answer, $elapsed ms after)"
echo "ok: target $target ms (elapsed $before ms at the answer, $elapsed ms now)"

echo "== 4. restart: from zero, the same target"
swctl timer r 1s >/dev/null || fail "swctl timer r 1s failed"
within 20 notified r || fail "no notification for r"
id=$(id_of r)
before=$(field r "s['elapsed_ms']")
click "$id" restart
restarted() { [ "$(field r "s['elapsed_ms']")" -lt "$before" ]; }
within 20 restarted || fail "r did not count again from zero within 20 s of the answer restart"
read -r target state < <(field r "s['target_ms'], s['state']")
[ "$target" = 1000 ] && [ "$state" = counting ] || fail "after restart r is $state with target $target ms, not counting with 1000 ms"
echo "ok: counting again from zero (elapsed was $before ms), target $target ms"

echo "== 5. a cycle without auto: Start rest; next starts it"
swctl cycle c 1s:work 5m:rest --manual >/dev/null || fail "swctl cycle c 1s:work 5m:rest --manual failed"
within 20 notified c || fail "no notification for the phase work of c"
id=$(id_of c)
notification "$id" | grep -qF '"next", "Start rest"' || fail "the notification does not offer Start rest"
click "$id" next
moved() { [ "$(field c "s['cycle']['phase']")" = 1 ]; }
within 20 moved || fail "c did not move to its phase rest within 20 s of the answer next"
echo "ok: c runs rest"
