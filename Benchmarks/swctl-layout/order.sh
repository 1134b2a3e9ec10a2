#!/bin/bash
# Writes swctl.order: the functions a one-shot swctl runs, in the order callgrind first meets
# them, for the Makefile to link first (lld --symbol-ordering-file). A status-bar click then
# touches a few 64 KiB windows of swctl's code instead of pages spread over all of it, and
# each window it touches is a page fault (docs/PERFORMANCE.md, "Where swctl's start-up goes").
# A stale list costs only speed: lld places the names it finds and ignores the rest.
#
#   make && Benchmarks/swctl-layout/order.sh      (needs valgrind; starts its own daemon)
set -euo pipefail
cd "$(dirname "$0")/../.."
binaries=${BUILD_DIR:-.build-release}/release
work=$(mktemp -d)
"$binaries/stopwatchd" --socket "$work/s.sock" --state-dir "$work" 2>/dev/null &
daemon=$!
trap 'kill $daemon; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.05; done
# Without debug information: valgrind 3.19 cannot read the C target's.
strip -g -o "$work/swctl" "$binaries/swctl"
swctl() {
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$RANDOM$RANDOM" \
        "$work/swctl" --socket "$work/s.sock" "$@" >/dev/null 2>&1
}
# The status-bar commands first: status is the one SPEC §7 times.
swctl start bench
swctl status bench
swctl --json status bench
swctl toggle bench
swctl list
nm --defined-only "$binaries/swctl" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$work/functions"
# callgrind names each function once, as "fn=(ID) NAME" or "cfn=(ID) NAME"; keep first sightings.
ls -tr "$work"/cg.* | xargs sed -n 's/^c\?fn=([0-9]*) //p' | awk '!seen[$0]++' \
    | grep -Fxf "$work/functions" > Benchmarks/swctl-layout/swctl.order
echo "$(wc -l < Benchmarks/swctl-layout/swctl.order) functions in Benchmarks/swctl-layout/swctl.order"
