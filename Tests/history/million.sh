#!/usr/bin/env bash
# A history of 1,000,000 intervals and 10,000 corrections (Tests/history/generate-history.py,
# format 2), streamed end to end by `swctl report` and `swctl log --csv` from the release
# build: the totals must be the generator's (corrections applied, deletions left out), and
# the daemon's resident memory must not grow by 8 MiB or more while it streams (SPEC §4
# "History": batches, never the whole history; the correction index is the corrections only).
#
#   bash Tests/history/million.sh [BUILD_DIR]     (default .build-release/release; `make` first)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build-release/release}
count=${STOPWATCHD_HISTORY_COUNT:-1000000}
corrections=${STOPWATCHD_HISTORY_CORRECTIONS:-10000}
device=0123456789abcdef0123456789abcdef
limit_kib=$((8 * 1024))

fail() { printf 'FAIL: %b\n' "$*" >&2; exit 1; }

work=$(mktemp -d)
daemon=
cleanup() {
    if [ -n "$daemon" ]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }

echo "== generating $count intervals and $corrections corrections"
mkdir -m 0700 "$work/state"
python3 Tests/history/generate-history.py "$work/state/history" "$device" "$count" --corrections "$corrections" --totals >"$work/expected.csv"
deleted=$(grep -c '"op":"delete"' "$work/state/history/$device/"*.jsonl | awk -F: '{ s += $2 } END { print s + 0 }')

socket="$work/stopwatchd.sock"
"$bin/stopwatchd" --socket "$socket" --state-dir "$work/state" --device-id "$device" 2>"$work/daemon.log" &
daemon=$!
swctl() { "$bin/swctl" --socket "$socket" "$@"; }
for _ in $(seq 300); do
    swctl list >/dev/null 2>&1 && break
    kill -0 "$daemon" 2>/dev/null || fail "stopwatchd exited:\n$(cat "$work/daemon.log")"
    sleep 0.1
done
swctl list >/dev/null || fail "stopwatchd did not answer within 30 s"

# The peak is reset once the daemon is up (clear_refs 5), so VmHWM afterwards is the peak of
# the streaming alone.
before=$(kib "$daemon" VmRSS)
echo 5 >"/proc/$daemon/clear_refs"

echo "== swctl report over all of it"
start=$(date +%s%N)
swctl report --csv >"$work/report.csv"
report_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "== swctl log --csv over all of it"
start=$(date +%s%N)
lines=$(swctl log --csv | wc -l)
log_ms=$(( ($(date +%s%N) - start) / 1000000 ))
peak=$(kib "$daemon" VmHWM)
growth=$((peak - before))
printf 'report: %d ms; log: %d ms, %d lines; daemon RSS %d KiB before, peak %d KiB while streaming (+%d KiB)\n' \
    "$report_ms" "$log_ms" "$lines" "$before" "$peak" "$growth"

[ "$lines" -eq $((count - deleted + 1)) ] || fail "swctl log --csv printed $lines lines, expected $((count - deleted)) intervals ($deleted deleted) and a header"
diff <(sort "$work/expected.csv") <(tail -n +2 "$work/report.csv" | sort) \
    || fail "swctl report's totals differ from the generator's (expected < > reported)"
[ "$growth" -lt "$limit_kib" ] || fail "the daemon's RSS grew by $growth KiB while streaming (limit $limit_kib KiB)"
echo "ok"
