#!/usr/bin/env bash
# A real desktop notification, end to end: the built stopwatchd runs the shipped hook
# (hooks/notify) when a 300 ms countdown expires, and the hook's notify-send reaches a
# notification server on a private session bus (python-dbusmock's notification_daemon
# template, under dbus-run-session). Passes when the server's log shows Notify called
# exactly once, with the stopwatch's name in its summary, within the deadline.
#
# Installs what it needs from Debian when missing: libnotify-bin, dbus, python3-dbusmock
# (for Debian's /usr/bin/python3, not whichever python3 is first on PATH), but only with
# STOPWATCHD_TEST_SYSTEM=1 (`.ci/run` sets it); without, it skips naming them. Uses the debug
# build in .build/debug (swift build); stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "${1:-}" != inside ]; then
    missing=()
    [ -x /usr/bin/notify-send ] || missing+=(libnotify-bin)
    { command -v dbus-run-session && command -v dbus-send && command -v dbus-daemon; } >/dev/null || missing+=(dbus)
    /usr/bin/python3 -c 'import dbusmock' 2>/dev/null || missing+=(python3-dbusmock)
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
mock_pid=
daemon_pid=
# Ends what it started whatever its exit status (the mock dies of the SIGTERM: 143), and
# never stops early itself: under `set -e` a failing `wait` would skip the rest of the trap
# and become the script's status.
cleanup() {
    local pid
    for pid in "$daemon_pid" "$mock_pid"; do
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
show_logs() {
    echo "--- notification server log:" >&2; cat "$work/notifications.log" >&2 || true
    echo "--- stopwatchd log:" >&2; cat "$work/daemon.log" >&2 || true
}

# Waits up to $1 seconds for the command after it to succeed.
within() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

echo "== notification server (python-dbusmock, notification_daemon)"
/usr/bin/python3 -m dbusmock --template notification_daemon -l "$work/notifications.log" >"$work/mock.out" 2>&1 &
mock_pid=$!
owns_name() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q 'boolean true'
}
within 20 owns_name || { cat "$work/mock.out" >&2; fail "the mock server did not own org.freedesktop.Notifications"; }
echo "ok: org.freedesktop.Notifications is owned"

echo "== stopwatchd with the shipped hook"
install -d -m 0700 "$work/hooks"
ln -s "$root/hooks/notify" "$work/hooks/notify"
socket="$work/s.sock"
"$root/.build/debug/stopwatchd" --socket "$socket" --state-dir "$work/state" --hook-dir "$work/hooks" \
    --log-level debug 2>"$work/daemon.log" &
daemon_pid=$!
swctl() { "$root/.build/debug/swctl" --socket "$socket" "$@"; }
swctl_quietly() { swctl "$@" >/dev/null 2>&1; }
within 20 swctl_quietly list || { show_logs; fail "stopwatchd did not start"; }

echo "== swctl timer t 300ms"
swctl timer t 300ms >/dev/null || { show_logs; fail "swctl timer t 300ms failed"; }

# The expiry's run of the hook has ended once the daemon logs it (at debug level): only then
# is "exactly once" meaningful.
ran() { grep -q "hook notify (expired of 't') succeeded" "$work/daemon.log"; }
within 20 ran || { show_logs; fail "the hook did not run to success within 20 s of the countdown"; }
calls=$(grep -c ' Notify ' "$work/notifications.log" || true)
[ "$calls" -eq 1 ] || { show_logs; fail "Notify was called $calls times, not once"; }
grep ' Notify ' "$work/notifications.log" | grep -q '"t: time is up"' \
    || { show_logs; fail "the notification's summary does not name the stopwatch"; }
echo "ok: Notify called once: $(grep ' Notify ' "$work/notifications.log" | cut -c1-160)"
