// swift-tools-version:6.0
import PackageDescription

// No package dependencies: the Swift toolchain only (SPEC §1).
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "stopwatchd",
    products: [
        .library(name: "StopWatchCore", targets: ["StopWatchCore"]),
        .executable(name: "stopwatchd", targets: ["stopwatchd"]),
        .executable(name: "swctl", targets: ["swctl"]),
    ],
    targets: [
        // Linux headers Glibc's module lacks (timerfd), for the Posix layer.
        .target(name: "CLinux"),
        .target(name: "StopWatchCore", dependencies: ["CLinux"], swiftSettings: strict),
        // In-memory test doubles (manual clock and timers, state recorder) for this package's
        // tests and for anyone testing code built on StopWatchCore.
        .target(name: "StopWatchTesting", dependencies: ["StopWatchCore"], swiftSettings: strict),
        .executableTarget(name: "stopwatchd", dependencies: ["StopWatchCore"], swiftSettings: strict),
        .executableTarget(
            name: "swctl",
            dependencies: ["StopWatchCore"],
            swiftSettings: strict,
            // A status bar or a key binding starts swctl for every click: a fully static
            // binary skips the dynamic loader (libstdc++ alone costs ~1 ms), so it starts
            // about as fast as /bin/true (docs/PERFORMANCE.md). lld, because it does not
            // repeat glibc's warning that static binaries may dlopen: swctl must never reach
            // NSS (getpwnam, getgrouplist: `Users`, `PeerPolicy`), which would need that.
            linkerSettings: [.unsafeFlags(["-static-executable", "-use-ld=lld"], .when(platforms: [.linux], configuration: .release))]
        ),
        // The benchmark of SPEC §7: each figure beside a baseline it measures itself
        // (docs/PERFORMANCE.md).
        .executableTarget(name: "swbench", dependencies: ["StopWatchCore"], path: "Benchmarks/swbench", swiftSettings: strict),
        .testTarget(
            name: "StopWatchCoreTests",
            dependencies: ["StopWatchCore", "StopWatchTesting"],
            swiftSettings: strict
        ),
        // Runs the real stopwatchd and swctl binaries, built beside the test bundle.
        .testTarget(
            name: "StopWatchIntegrationTests",
            dependencies: ["StopWatchCore"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
