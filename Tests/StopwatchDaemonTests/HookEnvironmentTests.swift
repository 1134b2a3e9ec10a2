import Glibc
import LinuxSystem
import StopwatchProtocol
import Testing
@testable import StopwatchDaemon

@Suite("hook environment")
struct HookEnvironmentTests {
    @Test("a start of a plain stopwatch: no target, no lateness")
    func start() {
        let event = StopwatchEvent(update: WatchUpdate(stopwatch: Stopwatch(name: "tea", state: .counting, elapsedMs: 0), event: .start))
        let variables = HookEnvironment.variables(for: event)
        #expect(variables.map(\.name) == ["STOPWATCHD_EVENT", "STOPWATCHD_NAME", "STOPWATCHD_STATE", "STOPWATCHD_ELAPSED_MS"])
        #expect(variables.map(\.value) == ["start", "tea", "counting", "0"])
    }

    @Test("an expiry of a countdown: its target and how late it is delivered")
    func expiry() {
        let event = StopwatchEvent(
            update: WatchUpdate(stopwatch: Stopwatch(name: "café timer", state: .counting, elapsedMs: 240_012, targetMs: 240_000), event: .expired),
            late: .milliseconds(12_345)
        )
        let environment = HookEnvironment.environment(
            ["PATH=/usr/bin", "STOPWATCHD_EVENT=stale", "NOTIFY_SOCKET=/run/systemd/notify", "EMPTY=", "A=b=c"],
            for: event
        )
        #expect(environment == [
            "PATH=/usr/bin", "EMPTY=", "A=b=c",
            "STOPWATCHD_EVENT=expired", "STOPWATCHD_NAME=café timer", "STOPWATCHD_STATE=counting",
            "STOPWATCHD_ELAPSED_MS=240012", "STOPWATCHD_TARGET_MS=240000", "STOPWATCHD_LATE_MS=12345",
        ])
        // A stop of the same countdown: its target, no lateness.
        let stop = StopwatchEvent(update: WatchUpdate(stopwatch: Stopwatch(name: "t", state: .pause, elapsedMs: 5, targetMs: 9), event: .stop))
        #expect(HookEnvironment.variables(for: stop).map(\.name).last == "STOPWATCHD_TARGET_MS")
    }

    @Test("standard input: the Watch reply's parameters, one line")
    func standardInput() {
        let event = StopwatchEvent(update: WatchUpdate(stopwatch: Stopwatch(name: "t", state: .counting, elapsedMs: 300, targetMs: 300), event: .expired))
        let text = String(decoding: HookEnvironment.standardInput(for: event), as: UTF8.self)
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\"event\":\"expired\""))
        #expect(text.contains("\"target_ms\":300"))
        #expect(text.contains("\"name\":\"t\""))
    }
}

@Suite("hook file trust")
struct HookFileTrustTests {
    static let me: uid_t = 1000

    static func status(_ kind: mode_t = S_IFREG, _ mode: mode_t = 0o755, owner: uid_t = me) -> FileStatus {
        var info = stat()
        info.st_mode = kind | mode
        info.st_uid = owner
        info.st_gid = owner
        return FileStatus(info)
    }

    static func entry(_ name: String, _ entry: FileStatus, target: FileStatus?? = .none) -> HookFileTrust.Entry {
        HookFileTrust.Entry(name: name, entry: entry, target: target ?? entry)
    }

    @Test("a listing: what runs in name order, what is skipped and why")
    func listing() {
        let trust = HookFileTrust(userID: Self.me)
        let link = Self.status(S_IFLNK, 0o777)
        let plan = trust.plan([
            Self.entry("zz-last", Self.status()),
            Self.entry("10-root", Self.status(owner: 0)),
            Self.entry("Upper", Self.status(S_IFREG, 0o700)),
            Self.entry("notify", link, target: Self.status(S_IFREG, 0o755, owner: 0)),
            Self.entry(".notify.swp", Self.status(S_IFREG, 0o600)),
            Self.entry("other-owner", Self.status(owner: 1001)),
            Self.entry("group-writable", Self.status(S_IFREG, 0o775)),
            Self.entry("world-writable", Self.status(S_IFREG, 0o757)),
            Self.entry("not-executable", Self.status(S_IFREG, 0o644)),
            Self.entry("fifo", Self.status(S_IFIFO, 0o755)),
            Self.entry("directory", Self.status(S_IFDIR, 0o755)),
            Self.entry("dangling", link, target: .some(nil)),
            Self.entry("their-link", Self.status(S_IFLNK, 0o777, owner: 1001), target: Self.status()),
            Self.entry("link-to-writable", link, target: Self.status(S_IFREG, 0o777)),
            Self.entry("link-to-directory", link, target: Self.status(S_IFDIR, 0o755)),
        ])
        #expect(plan.run == ["10-root", "Upper", "notify", "zz-last"])
        let skipped: [String: HookFileTrust.Skip] = Dictionary(uniqueKeysWithValues: plan.skipped.map { ($0.name, $0.skip) })
        let expected: [String: HookFileTrust.Skip] = [
            "other-owner": .untrustedOwner(1001),
            "group-writable": .writableByOthers(0o775),
            "world-writable": .writableByOthers(0o757),
            "not-executable": .notExecutable,
            "fifo": .notRegular(.fifo),
            "directory": .notRegular(.directory),
            "dangling": .linkToNothing,
            "their-link": .untrustedLink(owner: 1001),
            "link-to-writable": .writableByOthers(0o777),
            "link-to-directory": .notRegular(.directory),
        ]
        #expect(skipped == expected)
        #expect(plan.skipped.map(\.name).first == "dangling")
        #expect(HookFileTrust.Skip.writableByOthers(0o775).isWarning)
        #expect(!HookFileTrust.Skip.notExecutable.isWarning)
        #expect(HookFileTrust.Skip.writableByOthers(0o775).message("/h/x", userID: 1000).contains("chmod go-w"))
    }

    @Test("root's daemon runs root's files and its own only")
    func asRoot() {
        let trust = HookFileTrust(userID: 0)
        #expect(trust.decide(entry: Self.status(owner: 0), target: Self.status(owner: 0)) == .run)
        #expect(trust.decide(entry: Self.status(owner: 1000), target: Self.status(owner: 1000)) == .skip(.untrustedOwner(1000)))
    }
}

@Suite("hook environment: note and socket")
struct HookEnvironmentNoteTests {
    @Test("a note and the daemon's socket are told; an inherited STOPWATCHD_SOCKET is replaced")
    func noteAndSocket() {
        let event = StopwatchEvent(update: WatchUpdate(
            stopwatch: Stopwatch(name: "work", state: .counting, elapsedMs: 0, note: "the report"), event: .start
        ))
        let environment = HookEnvironment.environment(
            ["PATH=/usr/bin", "STOPWATCHD_SOCKET=/elsewhere", "STOPWATCHD_NOTE=stale"], for: event, socket: "/run/user/1000/stopwatchd/stopwatchd.sock"
        )
        #expect(environment == [
            "PATH=/usr/bin", "STOPWATCHD_EVENT=start", "STOPWATCHD_NAME=work", "STOPWATCHD_STATE=counting",
            "STOPWATCHD_ELAPSED_MS=0", "STOPWATCHD_NOTE=the report", "STOPWATCHD_SOCKET=/run/user/1000/stopwatchd/stopwatchd.sock",
        ])
        // No note, no socket known: neither variable.
        let plain = StopwatchEvent(update: WatchUpdate(stopwatch: Stopwatch(name: "t", state: .pause, elapsedMs: 5), event: .stop))
        #expect(!HookEnvironment.variables(for: plain).map(\.name).contains { $0 == "STOPWATCHD_NOTE" || $0 == "STOPWATCHD_SOCKET" })
    }
}
