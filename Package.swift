// swift-tools-version:6.0
import PackageDescription

// No package dependencies: the Swift toolchain only (SPEC §1). The targets draw the
// architecture (SPEC §8, docs/ARCHITECTURE.md); each depends only on those below it:
//
//   stopwatchd ─► StopwatchDaemon ─► UserDatabase
//                      │
//   swctl ─► StopwatchdClient ─┬─► StopwatchProtocol ─► Varlink
//                      ▼       │            │
//                   (both) ────┴────────────┴─► StopWatchCore ─► LinuxSystem ─► CLinux
//
// The client side (swctl, StopwatchdClient) cannot reach the daemon's code or NSS
// (UserDatabase): nothing it depends on does.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "stopwatchd",
    products: [
        // The UseCaseKit-style kit and the stopwatch: the seed's API.
        .library(name: "StopWatchCore", targets: ["StopWatchCore"]),
        // In-memory test doubles (manual clock and timers, state recorder) for code built on
        // StopWatchCore.
        .library(name: "StopWatchTesting", targets: ["StopWatchTesting"]),
        // A client of the daemon: the calls of io.stopwatchd, and the types they carry.
        .library(name: "StopwatchdClient", targets: ["StopwatchdClient", "StopwatchProtocol"]),
        .executable(name: "stopwatchd", targets: ["stopwatchd"]),
        .executable(name: "swctl", targets: ["swctl"]),
    ],
    targets: [
        // Linux headers Glibc's module lacks (timerfd, epoll, eventfd), for LinuxSystem.
        .target(name: "CLinux"),
        // The system layer: libc wrappers (descriptors, sockets, files, clocks, processes,
        // epoll, timerfd, eventfd). Errors are `Errno`; `Posix.call` retries EINTR.
        .target(name: "LinuxSystem", dependencies: ["CLinux"], swiftSettings: strict),
        // Users and groups from the system's databases (NSS): the daemon's peer policy only.
        .target(name: "UserDatabase", dependencies: ["LinuxSystem"], swiftSettings: strict),
        .target(name: "StopWatchCore", dependencies: ["LinuxSystem"], swiftSettings: strict),
        .target(name: "StopWatchTesting", dependencies: ["StopWatchCore", "LinuxSystem"], swiftSettings: strict),
        // varlink itself: JSON, framing, calls, replies, errors, org.varlink.service.
        .target(name: "Varlink", swiftSettings: strict),
        // The io.stopwatchd interface: its IDL, the Stopwatch it carries, its errors, names,
        // durations, where the socket is; what daemon and client agree on.
        .target(name: "StopwatchProtocol", dependencies: ["StopWatchCore", "Varlink", "LinuxSystem"], swiftSettings: strict),
        .target(name: "StopwatchdClient", dependencies: ["StopwatchProtocol", "Varlink", "LinuxSystem"], swiftSettings: strict),
        .target(
            name: "StopwatchDaemon",
            dependencies: ["StopwatchProtocol", "Varlink", "StopWatchCore", "LinuxSystem", "UserDatabase"],
            swiftSettings: strict
        ),
        .executableTarget(name: "stopwatchd", dependencies: ["StopwatchDaemon"], swiftSettings: strict),
        // A status bar or a key binding starts swctl for every click: the Makefile links it
        // fully static, so it starts about as fast as /bin/true (docs/PERFORMANCE.md). No
        // linker flags here: `unsafeFlags` would stop other packages from depending on this one.
        .executableTarget(name: "swctl", dependencies: ["StopwatchdClient"], swiftSettings: strict),
        // The benchmark of SPEC §7: each figure beside a baseline it measures itself
        // (docs/PERFORMANCE.md).
        .executableTarget(
            name: "swbench",
            // The daemon's target for its state files: the idle figure restores thousands.
            dependencies: ["StopwatchdClient", "StopwatchDaemon", "Varlink", "LinuxSystem"],
            path: "Benchmarks/swbench",
            swiftSettings: strict
        ),
        .testTarget(name: "StopWatchCoreTests", dependencies: ["StopWatchCore", "StopWatchTesting", "LinuxSystem"], swiftSettings: strict),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink"], swiftSettings: strict),
        // The system layer's own logic (SHA-256, byte search, whole nanoseconds), without a daemon.
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem"], swiftSettings: strict),
        // The client library and the protocol's types it carries: connections, replies,
        // errors and exit statuses, the ssh bridge, names, durations, socket paths.
        .testTarget(name: "StopwatchdClientTests", dependencies: ["StopwatchdClient"], swiftSettings: strict),
        // swctl's own logic without a daemon: command lines, output formats, history text,
        // local time, tick rate, wait decisions.
        .testTarget(name: "SwctlTests", dependencies: ["swctl"], swiftSettings: strict),
        // What more than one test target uses (a file lease), once: internal to the tests, no
        // product, no public API.
        .target(name: "TestSupport", dependencies: ["LinuxSystem"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(
            name: "StopwatchDaemonTests",
            dependencies: ["StopwatchDaemon", "StopWatchTesting", "TestSupport"],
            swiftSettings: strict
        ),
        // Runs the real stopwatchd and swctl binaries, built beside the test bundle.
        .testTarget(
            name: "StopWatchIntegrationTests",
            // The daemon's and the user database's targets only to write state files and
            // look up groups as a test's setup.
            dependencies: ["StopwatchdClient", "Varlink", "LinuxSystem", "StopwatchDaemon", "UserDatabase", "TestSupport"],
            swiftSettings: strict
        ),
        // swbench's own logic (what it checks in a client's output, where it finds the C client,
        // what its phase group asks for and times).
        .testTarget(name: "SwbenchTests", dependencies: ["swbench", "StopwatchProtocol", "Varlink"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
