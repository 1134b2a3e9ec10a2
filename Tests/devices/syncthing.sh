#!/usr/bin/env bash
# Two devices' histories carried by a real Syncthing (SPEC §4 "History across devices",
# docs/DEVICES.md): two stopwatchd daemons, "desk" (A) and "laptop" (B), each with its own
# device id, state directory and history folder, and two Syncthing instances on loopback
# sharing those two history folders as one Syncthing folder, set up as docs/DEVICES.md says.
#
# What it checks, each wait bounded by a deadline:
#   (a) an interval stopped on A: A's device folder arrives in B's history folder byte for
#       byte, and B's in A's;
#   (b) Syncthing made no conflict copy (`*.sync-conflict-*`) anywhere; each daemon wrote
#       only its own device folder (before Syncthing ran, a history folder held only its own
#       device's), every record in a device's folder is one that device made (by the names
#       and notes this test gives each side), records are only ever appended (what a folder
#       held before is a prefix of what it holds at the end), and once in sync both copies
#       of each device folder are the same;
#   (c) the interval stopped on A is in B's `swctl log --json` with "device":"desk" and in B's
#       `swctl report`, and B's in A's;
#   (d) `swctl amend` on B of A's interval: both reports the same, the amended time in each;
#   (e) A and B amending one interval at nearly the same time: both end with the same
#       `log --json`, the amend that SPEC §4's rule picks (latest, ties to the greater id);
#   (f) a stopwatch counting on A shows on B as open (no end_ms, "device":"desk").
#
#   bash Tests/devices/syncthing.sh [DIR]     # DIR holds the built swctl and stopwatchd (.build/debug)
#
# Needs Debian's syncthing (1.19 or later), curl and python3; installs nothing. Without
# syncthing it skips (exit 0, a SKIP line), except under CI (CI=true, or
# STOPWATCHD_REQUIRE_SYNCTHING=1 as `.ci/run` sets after installing it), where that fails.
# Everything it starts (two daemons, two Syncthing) is stopped at the end whatever happened,
# and its folder under /tmp removed.
set -euo pipefail
cd "$(dirname "$0")/../.."


fail() { echo "FAIL: $*" >&2; show_logs; exit 1; }
show_logs() { :; }

required=no
[ "${CI:-}" != true ] && [ "${STOPWATCHD_REQUIRE_SYNCTHING:-}" != 1 ] || required=yes
for tool in syncthing curl python3; do
    command -v "$tool" >/dev/null && continue
    [ "$required" = no ] || fail "$tool is missing: the Syncthing test must run in CI (.ci/run installs it)"
    echo "SKIP: the Syncthing test needs $tool: install Debian's $tool package (.ci/run does)"
    exit 0
done
bin=$(cd "${1:-.build/debug}" && pwd)
for binary in swctl stopwatchd; do [ -x "$bin/$binary" ] || fail "no $bin/$binary: build it first"; done

now_ms() { echo $(($(date +%s%N) / 1000000)); }
started=$(now_ms)
# A section's title, with the seconds since the start.
step() { local ms=$(($(now_ms) - started)); echo "== [$((ms / 1000)).$((ms % 1000 / 100)) s] $*"; }
work=$(mktemp -d /tmp/swsync-XXXXXX)
declare -A daemon_pid=() syncthing_pid=()
cleanup() {
    local pid
    for pid in "${daemon_pid[@]}" "${syncthing_pid[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${daemon_pid[@]}" "${syncthing_pid[@]}"; do
        # Syncthing shuts down in well under a second; a process still there after 10 s is killed.
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
# Killed (a CI timeout, ^C) while a command runs, bash runs no EXIT trap of itself: exit.
trap 'exit 130' INT
trap 'exit 143' TERM HUP
show_logs() {
    local side
    for side in a b; do
        echo "--- stopwatchd ${name[$side]} log:" >&2; tail -20 "$work/$side/daemon.log" >&2 || true
        echo "--- syncthing ${name[$side]} log:" >&2; tail -20 "$work/$side/syncthing.log" >&2 || true
        echo "--- ${name[$side]}'s history folder:" >&2; (cd "$work/$side/history" && find . -printf '%M %8s %p\n' | sort -k3) >&2 || true
    done
}

# Waits up to $1 seconds for the command after it to succeed (polling every 0.2 s).
within() {
    local deadline=$(($(now_ms) + $1 * 1000))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$(now_ms)" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
# Four free loopback ports, all different: each instance's listener and REST API.
free_ports() {
    python3 -c '
import socket
sockets = [socket.socket() for _ in range(4)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))'
}

# The two sides: a is "desk", b is "laptop". B's device id is the greater (for (e)).
declare -A name=([a]=desk [b]=laptop) device=([a]=aaaaaaaaaaaaaaaa0000000000000001 [b]=bbbbbbbbbbbbbbbb0000000000000002)
declare -A other=([a]=b [b]=a)
declare -A history=() socket=() port=() gui=() key=() syncthing_id=()
folder=stopwatchd-history
read -r 'port[a]' 'port[b]' 'gui[a]' 'gui[b]' <<<"$(free_ports)"
for side in a b; do
    mkdir -m 0700 "$work/$side" "$work/$side/state" "$work/$side/history" "$work/$side/syncthing"
    history[$side]=$work/$side/history
    socket[$side]=$work/$side/stopwatchd.sock
    key[$side]=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
done

swctl() { local side=$1; shift; "$bin/swctl" --socket "${socket[$side]}" "$@"; }
# Syncthing's REST API on side $1: rest SIDE PATH [curl options].
rest() {
    local side=$1 path=$2
    shift 2
    curl -sf --max-time 5 -H "X-API-Key: ${key[$side]}" "http://127.0.0.1:${gui[$side]}/rest/$path" "$@"
}
# The JSON on standard input, judged by the Python expression $1 over it (`j`), with $2… as
# `arg[0]`…: exit 0 when true.
json_test() {
    local expression=$1
    shift
    python3 -c '
import json, sys
j = json.load(sys.stdin)
arg = sys.argv[2:]
sys.exit(0 if eval(sys.argv[1]) else 1)' "$expression" "$@"
}

step "two daemons, desk and laptop, each with its own device id and history folder"
for side in a b; do
    "$bin/stopwatchd" --socket "${socket[$side]}" --state-dir "$work/$side/state" \
        --history-dir "${history[$side]}" --device-id "${device[$side]}" --device-name "${name[$side]}" \
        2>"$work/$side/daemon.log" &
    daemon_pid[$side]=$!
done
for side in a b; do
    within 30 swctl "$side" list || fail "stopwatchd ${name[$side]} did not answer within 30 s"
done

# An interval of 30 minutes ended now on side $1, named $2.
interval() {
    swctl "$1" start "$2" --at 30m >/dev/null
    swctl "$1" stop "$2" >/dev/null
}
# The id of the interval named $2 on side $1's `log --json` (the latest of that name).
interval_id() {
    swctl "$1" --json log | python3 -c '
import json, sys
ids = [i["id"] for i in json.load(sys.stdin) if i["name"] == sys.argv[1]]
print(ids[-1] if ids else "")' "$2"
}
interval a desk-work
interval b laptop-work
desk_work=$(interval_id a desk-work)
laptop_work=$(interval_id b laptop-work)
[ -n "$desk_work" ] && [ -n "$laptop_work" ] || fail "the intervals are not in their own daemons' logs"
echo "desk-work $desk_work on desk, laptop-work $laptop_work on laptop"

# What each daemon wrote before any sync: a history folder holds only its own device's folder
# (and the format marker), and that folder only what a daemon writes there.
own_files_only() {
    local side=$1 entries
    entries=$(ls -A "${history[$side]}" | tr '\n' ' ')
    [ "$entries" = "${device[$side]} stopwatchd-history.json " ] \
        || fail "${name[$side]}'s history folder holds '$entries' before any sync, not only its device folder and the marker"
    ls -A "${history[$side]}/${device[$side]}" | grep -Evq '^([0-9]{4}-[0-9]{2}\.jsonl|device\.json|open\.json)$' \
        && fail "${name[$side]}'s device folder holds a file a daemon does not write: $(ls -A "${history[$side]}/${device[$side]}")"
    cp -a "${history[$side]}/${device[$side]}" "$work/$side/before-sync"
}
own_files_only a
own_files_only b
echo "ok: before any sync each history folder holds only its own device's folder: $(ls -A "${history[a]}/${device[a]}" | tr '\n' ' ')"

step "two Syncthing instances on loopback sharing the history folders"
for side in a b; do
    syncthing generate --home="$work/$side/syncthing" --no-default-folder >"$work/$side/syncthing.log" 2>&1 \
        || fail "syncthing generate failed: $(cat "$work/$side/syncthing.log")"
    syncthing_id[$side]=$(syncthing --home="$work/$side/syncthing" --device-id)
    # Syncthing refuses a folder without its marker (a folder that vanished, an unmounted disk).
    mkdir "${history[$side]}/.stfolder"
done
# Only desk dials: laptop knows desk as "dynamic", which without discovery is no address, so
# it only accepts. Syncthing 1.19 exchanges Hello messages one connection at a time: when both
# dial at once, each waits (20 s) for a Hello the other has not sent, as it is busy waiting on
# its own connection, and both connections fail (a CI run hit it). With one dialer there is one
# connection. Laptop starts first and desk once laptop listens, so that desk's first dial finds
# it (a refused dial is tried again only seconds later).
declare -A peer_address=([a]="tcp://127.0.0.1:${port[b]}" [b]=dynamic)
for side in a b; do
    peer=${other[$side]}
    # The whole configuration: Syncthing fills in the defaults of what is not given. No
    # discovery, relays, NAT, usage reports or upgrades: the other instance is at a fixed
    # loopback address, and nothing leaves the machine.
    cat >"$work/$side/syncthing/config.xml" <<EOF
<configuration version="36">
    <folder id="$folder" label="stopwatchd history" path="${history[$side]}" type="sendreceive" rescanIntervalS="10" fsWatcherEnabled="true" fsWatcherDelayS="1">
        <device id="${syncthing_id[$side]}"></device>
        <device id="${syncthing_id[$peer]}"></device>
    </folder>
    <device id="${syncthing_id[$side]}" name="${name[$side]}">
        <address>dynamic</address>
    </device>
    <device id="${syncthing_id[$peer]}" name="${name[$peer]}">
        <address>${peer_address[$side]}</address>
    </device>
    <gui enabled="true" tls="false">
        <address>127.0.0.1:${gui[$side]}</address>
        <apikey>${key[$side]}</apikey>
    </gui>
    <options>
        <listenAddress>tcp://127.0.0.1:${port[$side]}</listenAddress>
        <globalAnnounceEnabled>false</globalAnnounceEnabled>
        <localAnnounceEnabled>false</localAnnounceEnabled>
        <relaysEnabled>false</relaysEnabled>
        <natEnabled>false</natEnabled>
        <urAccepted>-1</urAccepted>
        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
        <crashReportingEnabled>false</crashReportingEnabled>
        <startBrowser>false</startBrowser>
        <reconnectionIntervalS>1</reconnectionIntervalS>
    </options>
</configuration>
EOF
done
# Syncthing $1 is listening: it logs this line once its socket is bound (the REST status
# names a listener before it is).
listening() {
    grep -qF "TCP listener (127.0.0.1:${port[$1]}) starting" "$work/$1/syncthing.log"
}
for side in b a; do
    STNODEFAULTFOLDER=1 STNOUPGRADE=1 syncthing serve --home="$work/$side/syncthing" \
        --no-browser --no-restart --no-upgrade >>"$work/$side/syncthing.log" 2>&1 &
    syncthing_pid[$side]=$!
    within 30 rest "$side" system/ping || fail "syncthing ${name[$side]}'s REST API did not answer within 30 s"
    within 30 listening "$side" || fail "syncthing ${name[$side]} is not listening on 127.0.0.1:${port[$side]} after 30 s"
done
connected() {
    rest "$1" system/connections | json_test 'j["connections"].get(arg[0], {}).get("connected")' "${syncthing_id[${other[$1]}]}"
}
begin=$(now_ms)
within 30 connected a || fail "syncthing desk is not connected to laptop after 30 s"
within 30 connected b || fail "syncthing laptop is not connected to desk after 30 s"
echo "ok: connected in $(($(now_ms) - begin)) ms"

# Both copies of device $2's folder are the same (byte for byte, no file more or less: a
# Syncthing temporary file being written counts as a difference) on side $1 and its owner.
same_folder() {
    local side=$1 owner=$2
    diff -r "${history[$owner]}/${device[$owner]}" "${history[$side]}/${device[$owner]}"
}
# Syncthing on side $1 has nothing left to pull and the other has everything side $1 has.
in_sync() {
    local side=$1
    rest "$side" "db/status?folder=$folder" \
        | json_test 'j["state"] == "idle" and j["needTotalItems"] == 0' || return 1
    rest "$side" "db/completion?folder=$folder&device=${syncthing_id[${other[$side]}]}" \
        | json_test 'j["completion"] == 100 and j["needItems"] == 0'
}
both_in_sync() { in_sync a && in_sync b; }
# Waits for both device folders to be the same on both sides and Syncthing idle, 30 s at most.
synced() {
    within 30 same_folder b a || fail "${1:-}desk's device folder did not arrive on laptop as it is within 30 s: $(diff -r "${history[a]}/${device[a]}" "${history[b]}/${device[a]}" 2>&1 | head -5)"
    within 30 same_folder a b || fail "${1:-}laptop's device folder did not arrive on desk as it is within 30 s: $(diff -r "${history[b]}/${device[b]}" "${history[a]}/${device[b]}" 2>&1 | head -5)"
    within 30 both_in_sync || fail "${1:-}Syncthing is not idle and in sync within 30 s"
}
no_conflicts() {
    local conflicts
    conflicts=$(find "${history[a]}" "${history[b]}" -name '*.sync-conflict-*')
    [ -z "$conflicts" ] || fail "${1:-}Syncthing made conflict copies: $conflicts"
}

passed=()

step "(a) each device's folder arrives on the other, byte for byte"
# First what each daemon wrote before Syncthing ran (its folder, device.json, a month) ...
begin=$(now_ms)
synced "the first sync: "
no_conflicts "after the first sync: "
echo "ok: what was there before arrived and is in sync after $(($(now_ms) - begin)) ms, no conflict copy (each daemon made its own format marker, the same bytes)"
# ... then an interval stopped on each side while Syncthing runs: a month that grew, which
# Syncthing carries by replacing the other side's copy (found by its file watcher).
interval a desk-more
interval b laptop-more
begin=$(now_ms)
within 30 same_folder b a || fail "desk's new interval did not arrive on laptop as it is within 30 s"
echo "ok: desk's new interval on laptop after $(($(now_ms) - begin)) ms"
within 30 same_folder a b || fail "laptop's new interval did not arrive on desk as it is within 30 s"
echo "ok: laptop's new interval on desk after $(($(now_ms) - begin)) ms"
within 30 both_in_sync || fail "Syncthing is not idle and in sync within 30 s"
no_conflicts "after an interval on each side: "
passed+=("(a) each device's folder carried to the other, byte for byte, before and while Syncthing runs")

# The cross-device checks, each within 30 s of Syncthing's carrying.
cross_deadline=30
# cross LABEL DESCRIPTION COMMAND…: runs a cross-device check.
cross() {
    local label=$1 description=$2
    shift 2
    "$@" || fail "$label $description"
    echo "ok: $label $description"
    passed+=("$label $description")
}
# Side $1's log --json holds interval $2 from device $3 (named $4), ended or (with $5 = open) not.
logs_interval() {
    swctl "$1" --json log | json_test '
any(i["id"] == arg[0] and i.get("device") == arg[1] and i["name"] == arg[2]
    and (("end_ms" in i) == (arg[3] == "ended")) for i in j)' "$2" "$3" "$4" "${5:-ended}"
}
reports_name() { swctl "$1" report | grep -q "^$2 "; }

step "(c) each device's interval in the other's log and report"
seen_across() {
    within "$cross_deadline" logs_interval b "$desk_work" desk desk-work || { echo "laptop's log --json: $(swctl b --json log)"; return 1; }
    within "$cross_deadline" logs_interval a "$laptop_work" laptop laptop-work || { echo "desk's log --json: $(swctl a --json log)"; return 1; }
    reports_name b desk-work && reports_name a laptop-work || { echo "laptop's report: $(swctl b report)"; return 1; }
}
cross "(c)" "desk's interval in laptop's log and report, laptop's in desk's" seen_across

step "(d) an amend on laptop of desk's interval shows the same in both reports"
# The amended interval is 20 minutes long (it was 30): each report must say so, and the two
# reports be the same.
same_reports() {
    [ "$(swctl a --json report)" = "$(swctl b --json report)" ] || return 1
    swctl a --json report | json_test 'any(n["name"] == "desk-work" and 19 * 60000 <= n["elapsed_ms"] <= 21 * 60000 for n in j["names"])'
}
amended_across() {
    # Its end given too: 20 minutes however long the test took since the interval ended.
    swctl b amend "$desk_work" --start 20m --end now --note "amended by laptop" || return 1
    within "$cross_deadline" same_reports || { echo "desk's report: $(swctl a --json report); laptop's: $(swctl b --json report)"; return 1; }
}
cross "(d)" "laptop's amend of desk's interval in both reports" amended_across

step "(e) desk and laptop amend one interval at nearly the same time: the same history on both"
# What SPEC §4's rule picks from the amends of interval $1 in both device folders on side a:
# the latest made_ms, a tie to the greater device id; prints its note.
winning_note() {
    python3 -c '
import json, os, sys
root, interval = sys.argv[1], sys.argv[2]
best = None
for device in sorted(os.listdir(root)):
    folder = os.path.join(root, device)
    if not os.path.isdir(folder) or device.startswith("."):
        continue
    for month in sorted(f for f in os.listdir(folder) if f.endswith(".jsonl")):
        for line in open(os.path.join(folder, month), encoding="utf-8"):
            record = json.loads(line)
            if record.get("op") == "amend" and record["id"] == interval:
                key = (record["made_ms"], device)
                if best is None or key > best[0]:
                    best = (key, record.get("note"))
print(best[1] if best else "")' "${history[a]}" "$1"
}
same_logs() { [ "$(swctl a --json log)" = "$(swctl b --json log)" ]; }
tie_converges() {
    local desk_status=0 laptop_status=0 desk_amend laptop_amend expected
    swctl a amend "$laptop_work" --note "tie by desk" >"$work/a/amend.out" 2>&1 &
    desk_amend=$!
    swctl b amend "$laptop_work" --note "tie by laptop" >"$work/b/amend.out" 2>&1 &
    laptop_amend=$!
    wait "$desk_amend" || desk_status=$?
    wait "$laptop_amend" || laptop_status=$?
    [ "$desk_status" = 0 ] || { echo "desk's amend: exit $desk_status: $(cat "$work/a/amend.out")"; return 1; }
    [ "$laptop_status" = 0 ] || { echo "laptop's amend: exit $laptop_status: $(cat "$work/b/amend.out")"; return 1; }
    within "$cross_deadline" same_logs || { echo "desk's log: $(swctl a --json log); laptop's: $(swctl b --json log)"; return 1; }
    # Both amends are on both sides now (each log holds the winner, whichever it is): the
    # files say which one the rule picks.
    within "$cross_deadline" both_in_sync || return 1
    expected=$(winning_note "$laptop_work")
    echo "the rule picks the note '$expected'"
    logs_note() { swctl "$1" --json log | json_test 'any(i["id"] == arg[0] and i.get("note") == arg[1] for i in j)' "$laptop_work" "$expected"; }
    logs_note a && logs_note b || { echo "the logs do not show '$expected': $(swctl a --json log)"; return 1; }
}
cross "(e)" "two amends at once end the same on both, as the rule picks" tie_converges

step "(f) a stopwatch counting on desk shows on laptop as open"
desk_open=
open_across() {
    swctl a start desk-open >/dev/null
    desk_open=$(swctl a --json log | python3 -c '
import json, sys
print(next((i["id"] for i in json.load(sys.stdin) if i["name"] == "desk-open" and "end_ms" not in i), ""))')
    [ -n "$desk_open" ] || { echo "desk's own log does not show desk-open counting"; return 1; }
    within "$cross_deadline" logs_interval b "$desk_open" desk desk-open open || { echo "laptop's log --json: $(swctl b --json log)"; return 1; }
}
cross "(f)" "desk's counting stopwatch open on laptop" open_across

step "(b) no conflict copy; each device's records in its own folder only, appended, the same on both"
synced "at the end: "
no_conflicts "at the end: "
for side in a b; do
    peer=${other[$side]}
    entries=$(ls -A "${history[$side]}" | tr '\n' ' ')
    expected=$(printf '%s\n' .stfolder stopwatchd-history.json "${device[a]}" "${device[b]}" | sort | tr '\n' ' ')
    [ "$(ls -A "${history[$side]}" | sort | tr '\n' ' ')" = "$expected" ] \
        || fail "${name[$side]}'s history folder holds '$entries', not only the marker, .stfolder and the two device folders"
    ls -A "${history[$side]}/${device[$side]}" | grep -Evq '^([0-9]{4}-[0-9]{2}\.jsonl|device\.json|open\.json)$' \
        && fail "${name[$side]}'s device folder holds a file a daemon does not write: $(ls -A "${history[$side]}/${device[$side]}")"
    # Every record in device $side's folder, in both copies, is one that device made: its
    # intervals are named "<its name>-…", its corrections' notes end in "by <its name>".
    for copy in a b; do
        python3 -c '
import json, os, sys
folder, device_name = sys.argv[1], sys.argv[2]
for month in sorted(f for f in os.listdir(folder) if f.endswith(".jsonl")):
    for number, line in enumerate(open(os.path.join(folder, month), encoding="utf-8"), 1):
        record = json.loads(line)
        mine = (record.get("note", "").endswith("by " + device_name) if "op" in record
                else record["name"].startswith(device_name + "-"))
        if not mine:
            sys.exit(f"{folder}/{month}:{number} is not a record of {device_name}: {line.strip()}")' \
            "${history[$copy]}/${device[$side]}" "${name[$side]}" || fail "a record in ${name[$side]}'s folder on ${name[$copy]} is not its own"
    done
    # Records are appended, never rewritten: each month as it was before any sync is the
    # beginning of the month now.
    for month in "$work/$side/before-sync"/*.jsonl; do
        now_file="${history[$side]}/${device[$side]}/$(basename "$month")"
        cmp -s "$month" <(head -c "$(stat -c %s "$month")" "$now_file") \
            || fail "${name[$side]}'s $(basename "$month") is not what it was before the sync with lines appended"
    done
done
echo "ok: no conflict copy; in both copies each device folder holds only that device's records, appended"
passed+=("(b) no conflict copy, one writer per folder, records appended")

echo
echo "Syncthing test: $(($(now_ms) - started)) ms"
for check in "${passed[@]}"; do echo "  pass:  $check"; done
echo "Syncthing test passed"
