#!/usr/bin/env bash
# Builds a second package that depends on this one as a user's package would, by a version
# tag of a git repository, and uses the client library through its public API only:
#
#   - the dependent imports nothing but `StopwatchdClient`, and calls every public entry
#     point of it (StopwatchClient, Stopwatch, WatchStream, WatchEvent, WatchUpdate,
#     ClientError), so anything a user needs that is still `package` fails the build;
#   - SwiftPM refuses a version-tagged dependency whose products' targets use `unsafeFlags`
#     (a branch or revision would let them through), so such flags fail it too;
#   - the built program, run with no daemon, must report ClientError.unreachable (69).
#
# What is tested is the commit checked out (HEAD), as a fresh clone has it: it is pushed to
# a bare repository in a temporary directory and tagged there; this repository is not
# changed. Everything, SwiftPM's caches included, stays in that directory, removed at exit.
#
#   bash Tests/package/dependent-package.sh     # from anywhere in the repository
set -euo pipefail
cd "$(dirname "$0")/../.."
repository=$PWD

work=$(mktemp -d "${TMPDIR:-/tmp}/stopwatchd-dependent.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "note: uncommitted changes are not tested: the dependent package gets HEAD, $(git rev-parse --short HEAD)"
fi

# Named stopwatchd.git: SwiftPM names the package after the URL's last component.
upstream=$work/stopwatchd.git
version=1.0.0
git init --quiet --bare "$upstream"
git push --quiet "$upstream" "HEAD:refs/heads/main" "HEAD:refs/tags/$version"
git --git-dir="$upstream" symbolic-ref HEAD refs/heads/main

dependent=$work/dependent
mkdir -p "$dependent/Sources/dependent"
cat >"$dependent/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "dependent",
    dependencies: [.package(url: "file://$upstream", exact: "$version")],
    targets: [
        .executableTarget(
            name: "dependent",
            dependencies: [.product(name: "StopwatchdClient", package: "stopwatchd")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
MANIFEST

cat >"$dependent/Sources/dependent/main.swift" <<'SWIFT'
import StopwatchdClient

/// Every public entry point of the client library, as code outside the package sees it.
/// Never called: compiling it is the test.
func everyPublicCall(_ client: StopwatchClient) async throws {
    let started: Stopwatch = try client.start("dependent")
    _ = try client.stop("dependent")
    _ = try client.toggle()
    _ = try client.reset(nil)
    _ = try client.lap("dependent")
    let current = try client.get("dependent")
    let all: [Stopwatch] = try client.list()
    try client.remove("dependent")
    let countdown: Stopwatch = try client.countdown("tea", target: .seconds(240))
    let reminder: Stopwatch = try client.setTarget("dependent", target: .seconds(7200))
    _ = try client.setTarget(nil, target: nil)
    let stream: WatchStream = try client.openWatch("dependent")
    let update: Stopwatch = try stream.next()
    let next: WatchUpdate = try stream.nextUpdate()
    let expired: Bool = next.event == .expired && next.stopwatch.targetMs != nil
    stream.interrupt()
    stream.close()
    for try await watched in client.watch("dependent") where watched.state == .counting { break }
    let made = Stopwatch(name: "made", state: .pause, elapsedMs: 1_500, lapsMs: [1_000], targetMs: 2_000)
    let left: Int64? = made.remainingMs
    let words: [String] = Stopwatch.State.allCases.map(\.rawValue)
    let events: [String] = WatchEvent.allCases.map(\.rawValue)
    let told = WatchUpdate(stopwatch: made, event: WatchEvent(rawValue: "tick") ?? .current)
    var configured = StopwatchClient(socketPath: StopwatchClient.defaultSocketPath(), timeout: .seconds(1))
    configured.timeout = .milliseconds(500)
    // Where the daemon is: a socket, or a bridge command (ssh HOST swctl bridge).
    let remote = StopwatchClient(endpoint: StopwatchClient.sshBridge(host: "desk", ssh: ["ssh", "-p", "2222"]), timeout: .seconds(5))
    let bridged: Bool = if case .bridge = remote.endpoint { true } else { false }
    let failed: ClientError = .bridgeFailed(command: remote.endpoint.description, reason: "ssh: connect to host desk port 2222: Connection refused")
    _ = (started.name, current.elapsedMs, current.lapsMs, all, update, made, words, configured.endpoint == .socket(StopwatchClient.defaultSocketPath()), StopwatchClient(), bridged, failed.exitStatus)
    _ = (countdown.targetMs, reminder, expired, left, events, told == told, told.stopwatch, told.event)
}

// With a socket path argument: one call, and what became of it on one line.
let path = CommandLine.arguments.dropFirst().first ?? StopwatchClient.defaultSocketPath()
do {
    let stopwatch = try StopwatchClient(socketPath: path, timeout: .seconds(2)).get("dependent")
    print("reached: \(stopwatch.name) \(stopwatch.state.rawValue) \(stopwatch.elapsedMs) ms")
} catch {
    // Typed throws: `error` is a ClientError, and every case of it is public.
    switch error {
    case .unreachable(let path, let reason): print("unreachable \(error.exitStatus): \(path): \(reason)")
    case .connectionClosed(let path, let reason): print("connection closed \(error.exitStatus): \(path): \(reason)")
    case .permissionDenied(let path): print("permission denied \(error.exitStatus): \(path)")
    case .bridgeFailed(let command, let reason): print("bridge failed \(error.exitStatus): \(command): \(reason)")
    case .protocolViolation(let reason): print("protocol violation \(error.exitStatus): \(reason)")
    case .refused(let errorName, let explanation): print("refused \(error.exitStatus): \(errorName): \(explanation)")
    case .daemonTooOld(let feature): print("daemon too old \(error.exitStatus): \(feature)")
    }
}
SWIFT

echo "building a package that depends on stopwatchd $(git rev-parse --short HEAD) (as $version) …"
log=$work/build.log
if ! swift build --package-path "$dependent" --scratch-path "$dependent/.build" \
    --cache-path "$work/cache" --manifest-cache local >"$log" 2>&1; then
    cat "$log" >&2
    echo "FAIL: a package depending on StopwatchdClient does not build (above)" >&2
    exit 1
fi
if grep -q "warning:" "$log"; then
    grep "warning:" "$log" >&2
    echo "FAIL: building the dependent package warns (above)" >&2
    exit 1
fi
echo "ok: it builds, without warnings, importing StopwatchdClient alone"
# The client side cannot reach the daemon's code or NSS by construction (SPEC §8): building
# the client product compiles neither.
if ! grep -q "Compiling StopwatchdClient" "$log"; then
    cat "$log" >&2
    echo "FAIL: the build log names no 'Compiling StopwatchdClient': this check no longer reads it" >&2
    exit 1
fi
if grep -E "Compiling (StopwatchDaemon|UserDatabase)[ ]" "$log" >&2; then
    echo "FAIL: building StopwatchdClient compiled the daemon's code or the NSS lookups (above)" >&2
    exit 1
fi
echo "ok: neither StopwatchDaemon nor UserDatabase was compiled"

socket=$work/no-daemon.sock
output=$("$dependent/.build/debug/dependent" "$socket")
expected="unreachable 69: $socket: "
if [[ "$output" != "$expected"* ]]; then
    echo "FAIL: with no daemon, the dependent program printed '$output', not '$expected…'" >&2
    exit 1
fi
echo "ok: with no daemon it reports ClientError.unreachable (69): ${output#"$expected"}"
echo "dependent package: builds and runs"
