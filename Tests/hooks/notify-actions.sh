#!/usr/bin/env bash
# The shipped notify hook's actions, without a desktop: hooks/notify runs with stand-ins for
# notify-send and swctl (shell scripts that record their arguments; the stand-in notify-send
# answers with the key the test gives it, or waits to be given up). It checks which actions
# are offered for a countdown and for cycles (auto or not, the next phase's label read from
# the Watch reply's JSON, labels with quotes, backslashes, brackets and non-ASCII), that the
# chosen one runs `swctl --socket SOCKET restart|snooze|next -- NAME` with the name as one
# argument, that the hook returns before the answer (the waiting is left to a job of its own),
# that an unanswered notification is given up after STOPWATCHD_NOTIFY_GIVE_UP seconds with
# no process of the hook left, and that without --action it sends the plain notification.
# Needs only sh, coreutils and sed: it runs everywhere (hooks/notification.sh is the same
# against a real notification server and daemon).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

work=$(mktemp -d /tmp/swnotify-actions-XXXXXX)
marker="SWNOTIFY_ACTIONS_TEST=$work"
# The hook's processes carry $marker in their environment: what is left of them.
left() {
    local environ pid
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}
        pid=${pid%/environ}
        grep -qsxzF -- "$marker" "$environ" && echo "$pid $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"
    done
    return 0
}
cleanup() {
    local line
    left | while read -r line; do kill -9 "${line%% *}" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# Waits up to $1 seconds for the command after it to succeed.
within() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

stub=$work/bin
mkdir -p "$stub" "$work/calls"
# The hook finds swctl beside the daemon that runs it (/proc/PPID/exe): here the daemon is a
# copy of timeout(1), named stopwatchd, in the stand-ins' folder; it runs the hook as a child.
cp "$(command -v timeout)" "$stub/stopwatchd"
cat >"$stub/notify-send" <<'EOF'
#!/bin/sh
# A stand-in for notify-send: --help says whether it has --action ($work/no-actions); a call
# records its arguments, one a line, in calls/notify.N; with --print-id it prints id 7, then
# the key in $work/answer once the test writes it (or waits to be killed).
work=${SWNOTIFY_ACTIONS_TEST:?}
for argument in "$@"; do
    if [ "$argument" = --help ]; then
        [ -e "$work/no-actions" ] || echo "  -A, --action=[NAME=]Text...   Specifies the actions"
        exit 0
    fi
done
printf '%s\n' "$@" >"$work/calls/notify.$(ls "$work/calls" | grep -c '^notify')"
for argument in "$@"; do
    if [ "$argument" = --print-id ]; then
        echo 7
        while ! [ -e "$work/answer" ]; do sleep 0.05; done
        cat "$work/answer"
        rm -f "$work/answer"
    fi
done
exit 0
EOF
cat >"$stub/swctl" <<'EOF'
#!/bin/sh
work=${SWNOTIFY_ACTIONS_TEST:?}
printf '%s\n' "$@" >"$work/calls/swctl"
EOF
chmod +x "$stub/notify-send" "$stub/swctl"

name='tea ☕ "x" -n'
socket="$work/s.sock"
# Runs the hook as the daemon would for an expiry of $name, the JSON $1 on its standard input,
# more variables after it; returns when the hook has returned.
run_hook() {
    local json=$1
    shift
    printf '%s\n' "$json" | env PATH="$stub:$PATH" "$marker" STOPWATCHD_EVENT=expired STOPWATCHD_NAME="$name" \
        STOPWATCHD_STATE=running STOPWATCHD_ELAPSED_MS=300000 STOPWATCHD_TARGET_MS=300000 \
        STOPWATCHD_LATE_MS=0 STOPWATCHD_SOCKET="$socket" "$@" "$stub/stopwatchd" 30 "$root/hooks/notify"
}
# The actions of notification N ("key=Label" lines, in order).
actions() { sed -n 's/^--action=//p' "$work/calls/notify.$1"; }
notified() { [ -e "$work/calls/notify.$1" ]; }
nothing_left() { [ -z "$(left)" ]; }
reset_calls() {
    within 10 nothing_left || fail "processes of the hook are left: $(left)"
    rm -f "$work/calls/"* "$work/answer"
}
expect_actions() {
    local number=$1 expected=$2
    within 10 notified "$number" || fail "no notification $number"
    [ "$(actions "$number")" = "$expected" ] || fail "notification $number offers
$(actions "$number")
not
$expected"
}
swctl_called() { [ -e "$work/calls/swctl" ]; }
answer() { echo "$1" >"$work/answer"; }

countdown="{\"stopwatch\":{\"name\":\"tea ☕ \\\"x\\\" -n\",\"state\":\"running\",\"elapsed_ms\":300000,\"laps_ms\":[],\"target_ms\":300000},\"event\":\"expired\"}"
# A cycle's Watch reply: phases $1 (JSON), then phase, round, auto and, optionally, rounds.
cycle_json() {
    local rounds=
    [ -z "${5:-}" ] || rounds=",\"rounds\":$5"
    echo "{\"stopwatch\":{\"name\":\"c\",\"state\":\"running\",\"elapsed_ms\":1,\"laps_ms\":[],\"target_ms\":1,\"note\":\"a \\\"cycle\\\":{\\\"phases\\\":[ note\",\"cycle\":{\"phases\":$1,\"phase\":$2,\"round\":$3,\"auto\":$4$rounds}},\"event\":\"expired\"}"
}
phases='[{"label":"fo\"c}u\\s","target_ms":1},{"label":"long ]break ☕","target_ms":2},{"label":"x","target_ms":3}]'

echo "== a countdown: Restart and Snooze 5 min; snooze runs swctl with the name as one argument"
start=$(date +%s%N)
run_hook "$countdown"
took=$((($(date +%s%N) - start) / 1000000))
expect_actions 0 "restart=Restart
snooze=Snooze 5 min"
[ -n "$(left)" ] || fail "nothing waits for the answer"
swctl_called && fail "swctl ran before an answer"
echo "ok: the hook returned in $took ms, its job waits for the answer"
grep -qxF -- "$name: time is up" "$work/calls/notify.0" || fail "the summary does not name the stopwatch"
answer snooze
within 10 swctl_called || fail "swctl did not run after the answer snooze"
expected=$(printf '%s\n' --socket "$socket" snooze -- "$name" 5m)
[ "$(cat "$work/calls/swctl")" = "$expected" ] || fail "swctl got: $(cat "$work/calls/swctl")"
echo "ok: swctl $(tr '\n' ' ' <"$work/calls/swctl")"
reset_calls
echo "ok: no process of the hook is left after the answer"

echo "== restart"
run_hook "$countdown"
within 10 notified 0 || fail "no notification"
answer restart
within 10 swctl_called || fail "swctl did not run after the answer restart"
[ "$(cat "$work/calls/swctl")" = "$(printf '%s\n' --socket "$socket" restart -- "$name")" ] || fail "swctl got: $(cat "$work/calls/swctl")"
echo "ok: swctl $(tr '\n' ' ' <"$work/calls/swctl")"
reset_calls

echo "== a cycle without auto: Start LABEL of the next phase, read from the JSON"
run_hook "$(cycle_json "$phases" 0 1 false)" STOPWATCHD_PHASE='fo"c}u\s'
expect_actions 0 "restart=Restart
snooze=Snooze 5 min
next=Start long ]break ☕"
grep -qxF -- 'fo"c}u\s ran 0:05:00.' "$work/calls/notify.0" || fail "the body does not name the phase: $(cat "$work/calls/notify.0")"
answer next
within 10 swctl_called || fail "swctl did not run after the answer next"
[ "$(cat "$work/calls/swctl")" = "$(printf '%s\n' --socket "$socket" next -- "$name")" ] || fail "swctl got: $(cat "$work/calls/swctl")"
echo "ok: Start long ]break ☕, then swctl $(tr '\n' ' ' <"$work/calls/swctl")"
answer ''
reset_calls

echo "== the last phase of a round: the next round's first phase; the last of the last round: none"
run_hook "$(cycle_json "$phases" 2 1 false)"
expect_actions 0 'restart=Restart
snooze=Snooze 5 min
next=Start fo"c}u\s'
answer ''
reset_calls
run_hook "$(cycle_json "$phases" 2 3 false 3)"
expect_actions 0 "restart=Restart
snooze=Snooze 5 min"
answer ''
reset_calls
run_hook "$(cycle_json "$phases" 2 2 false 3)"
expect_actions 0 'restart=Restart
snooze=Snooze 5 min
next=Start fo"c}u\s'
answer ''
reset_calls
echo "ok"

echo "== an auto cycle: Restart alone while it moves on; Restart and Snooze once it has ended"
run_hook "$(cycle_json "$phases" 1 1 true 2)"
expect_actions 0 "restart=Restart"
answer ''
reset_calls
run_hook "$(cycle_json "$phases" 2 2 true 2)"
expect_actions 0 "restart=Restart
snooze=Snooze 5 min"
answer ''
reset_calls
echo "ok"

echo "== a cycle not in the expected shape: Start next phase"
run_hook "$(cycle_json '[{"label":"a","target_ms":1}]' '"x"' 1 false)"
expect_actions 0 "restart=Restart
snooze=Snooze 5 min
next=Start next phase"
answer ''
reset_calls
echo "ok"

echo "== nobody answers: given up after STOPWATCHD_NOTIFY_GIVE_UP, shown again without actions, nothing left"
start=$(date +%s)
run_hook "$countdown" STOPWATCHD_NOTIFY_GIVE_UP=2
within 10 notified 0 || fail "no notification"
within 20 notified 1 || fail "no notification replaced it after the give-up"
grep -qxF -- --replace-id=7 "$work/calls/notify.1" || fail "the second notification does not replace the first: $(cat "$work/calls/notify.1")"
grep -q -- --action "$work/calls/notify.1" && fail "the notification shown again still has actions"
within 20 nothing_left || fail "processes of the hook are left after the give-up: $(left)"
swctl_called && fail "swctl ran without an answer"
echo "ok: given up and nothing left after $(($(date +%s) - start)) s"
reset_calls

echo "== stopped while waiting (SIGTERM to all its processes, as when systemd stops the service): shown again without actions"
run_hook "$countdown"
within 10 notified 0 || fail "no notification"
left | while read -r line; do kill -TERM "${line%% *}" 2>/dev/null || true; done
within 20 notified 1 || fail "no notification replaced it after SIGTERM"
grep -qxF -- --replace-id=7 "$work/calls/notify.1" || fail "the second notification does not replace the first: $(cat "$work/calls/notify.1")"
grep -q -- --action "$work/calls/notify.1" && fail "the notification shown again still has actions"
within 20 nothing_left || fail "processes of the hook are left after SIGTERM: $(left)"
swctl_called && fail "swctl ran without an answer"
reset_calls
echo "ok"

echo "== without --action (libnotify before 0.8): the plain notification, sent by the hook itself"
touch "$work/no-actions"
run_hook "$countdown"
notified 0 || fail "no notification"
grep -q -e --action -e --print-id "$work/calls/notify.0" && fail "actions offered by a notify-send without --action"
rm "$work/no-actions"
reset_calls
echo "ok"

echo "== no STOPWATCHD_SOCKET: the plain notification"
run_hook "$countdown" STOPWATCHD_SOCKET=
notified 0 || fail "no notification"
grep -q -e --action "$work/calls/notify.0" && fail "actions offered without a socket to answer through"
reset_calls
echo "ok"

echo "== another event: nothing"
printf '%s\n' "$countdown" | env PATH="$stub:$PATH" "$marker" STOPWATCHD_EVENT=start STOPWATCHD_NAME=x "$stub/stopwatchd" 30 "$root/hooks/notify"
[ -z "$(ls "$work/calls")" ] || fail "the hook did something for a start"
echo "ok"
