#!/usr/bin/env bash
# Builds the varlink libFuzzer target and runs it for a while on a copy of the seed corpus.
#
#   bash Fuzz/run.sh [SECONDS]     default 60
#
# Environment: SWIFTC (compiler, default swiftc), FUZZ_BUILD_DIR (default .build-fuzz),
# FUZZ_ARTIFACTS (where crashing inputs go, default $FUZZ_BUILD_DIR/artifacts),
# FUZZ_KEEP_CORPUS (a folder to copy the grown working corpus into; by default it is deleted).
# Exits 0 when nothing was found, non-zero on a crash, leak, timeout or out-of-memory, or a
# build failure.
set -euo pipefail

duration="${1:-60}"
if ! [[ "$duration" =~ ^[0-9]+$ ]] || [ "$duration" -lt 1 ]; then
    echo "usage: $0 [SECONDS]   (a whole number of seconds, at least 1)" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

swiftc="${SWIFTC:-swiftc}"
build_dir="${FUZZ_BUILD_DIR:-.build-fuzz}"
artifacts="${FUZZ_ARTIFACTS:-$build_dir/artifacts}"
fuzzer="$build_dir/varlink-fuzzer"
seeds="Fuzz/corpus"
dictionary="Fuzz/varlink.dict"

# The sources the fuzzer needs, compiled as one module with it (not the package: no other
# code, and so no Dispatch or sockets, is involved), from copies without their imports of
# this package's modules. If a listed file starts using another type of this package, add
# that type's file here.
sources=(
    Sources/Varlink/VarlinkFramer.swift
    Sources/Varlink/JSONParser.swift
    Sources/Varlink/JSONValue.swift
    Sources/Varlink/JSONValue+Writing.swift
    Sources/Varlink/VarlinkCall.swift
    Sources/Varlink/VarlinkCallScanner.swift
    Sources/Varlink/VarlinkReply.swift
    Sources/Varlink/VarlinkError.swift
    Sources/Varlink/MalformedMessage.swift
    Sources/StopwatchProtocol/Stopwatch.swift
    Sources/StopWatchCore/StopWatch/StopWatchSnapshot.swift
    Sources/StopWatchCore/StopWatch/StopWatchState.swift
    Sources/StopWatchCore/StopWatch/StopWatchCommand.swift
    Sources/StopWatchCore/StopWatch/StopWatchClock.swift
    Sources/StopWatchCore/StopWatch/InvalidTransition.swift
    Sources/StopWatchCore/StopWatch/StopWatchCycle.swift
    Sources/StopWatchCore/UseCase/Command.swift
    Sources/LinuxSystem/Duration+Nanoseconds.swift
)
package_modules='^import (Varlink|StopwatchProtocol|StopWatchCore|LinuxSystem)$'

mkdir -p "$build_dir" "$artifacts"

# --- Build (skipped when the binary is newer than every source and this script) ---
stale=0
if [ ! -x "$fuzzer" ]; then
    stale=1
else
    for file in Fuzz/VarlinkFuzzer.swift "${sources[@]}" Fuzz/run.sh; do
        if [ "$file" -nt "$fuzzer" ]; then stale=1; break; fi
    done
fi
if [ "$stale" = 1 ]; then
    copies="$build_dir/sources"
    rm -rf "$copies"
    mkdir -p "$copies"
    compiled=(Fuzz/VarlinkFuzzer.swift)
    for file in "${sources[@]}"; do
        copy="$copies/$(basename "$(dirname "$file")")-$(basename "$file")"
        grep -Ev "$package_modules" "$file" >"$copy"
        compiled+=("$copy")
    done
    flags=(-sanitize=fuzzer,address -parse-as-library -g -swift-version 6
        -enable-upcoming-feature ExistentialAny -module-name VarlinkFuzz -package-name stopwatchd
        -module-cache-path "$build_dir/module-cache" -o "$fuzzer.tmp")
    # Compiler output goes to a log: the gold linker warns once per ASan helper symbol
    # ("Cannot export local symbol"), which is harmless noise.
    build_log="$build_dir/build.log"
    show_build_log() { grep -v 'Cannot export local symbol' "$build_log" >&2 || true; }
    echo "fuzz: building $fuzzer"
    if ! "$swiftc" -O "${flags[@]}" "${compiled[@]}" </dev/null >"$build_log" 2>&1; then
        show_build_log
        echo "fuzz: the -O build failed; trying -Onone" >&2
        if ! "$swiftc" -Onone "${flags[@]}" "${compiled[@]}" </dev/null >"$build_log" 2>&1; then
            show_build_log
            echo "fuzz: FAILED: the fuzzer does not build (see the source list in $0)" >&2
            exit 1
        fi
    fi
    mv -f "$fuzzer.tmp" "$fuzzer"
fi

# --- Run on a scratch copy of the seeds, so the repository is never written to ---
work="$(mktemp -d "${TMPDIR:-/tmp}/varlink-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$seeds"/* "$work/corpus/"
log="$build_dir/last-run.log"

# libFuzzer and ASan report crashes themselves. The Swift runtime's own backtracer, if left
# on, trips ASan while reading the crashed process and then never exits, which holds the
# pipe below open and hangs this script.
export SWIFT_BACKTRACE=enable=no

if command -v llvm-symbolizer >/dev/null 2>&1; then
    export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer)}"
elif [ -x "$(dirname "$(command -v "$swiftc")")/llvm-symbolizer" ]; then
    export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(dirname "$(command -v "$swiftc")")/llvm-symbolizer}"
fi

echo "fuzz: running $fuzzer for ${duration}s on $(ls "$work/corpus" | wc -l) seeds from $seeds"
set +e
"$fuzzer" \
    -max_total_time="$duration" -max_len=70000 -timeout=10 -rss_limit_mb=2048 \
    -dict="$dictionary" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$work/corpus" </dev/null 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
corpus_size="$(ls "$work/corpus" | wc -l | tr -d ' ')"
corpus_bytes="$(du -sb "$work/corpus" | cut -f1)"
echo "fuzz: ${executions:-?} executions (${rate:-?}/s), corpus ${corpus_size} inputs (${corpus_bytes} bytes), exit status ${status}"

if [ -n "${FUZZ_KEEP_CORPUS:-}" ]; then
    mkdir -p "$FUZZ_KEEP_CORPUS"
    cp "$work/corpus"/* "$FUZZ_KEEP_CORPUS/"
    echo "fuzz: working corpus copied to $FUZZ_KEEP_CORPUS"
fi

if [ "$status" -ne 0 ]; then
    saved="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
    echo "fuzz: FAILED: libFuzzer exited with status $status; full output in $log" >&2
    if [ -n "$saved" ]; then
        echo "fuzz: the failing input was saved to $saved" >&2
        echo "fuzz: reproduce with: $fuzzer $saved" >&2
    fi
    exit 1
fi
