import UserDatabase
import Foundation
import LinuxSystem
import StopwatchdClient
import Testing

/// The daemon's directories are used through descriptors and only when trusted (SPEC §4,
/// "Trust of the filesystem"): no link planted in them is followed, a directory another user
/// controls is refused at start, a file it cannot read stops the start instead of being
/// moved aside, and one state directory serves one daemon.
@Suite("directory trust")
struct DirectoryTrustTests {
    static var canSwitchUser: Bool { LifecycleTests.canSwitchUser }
    static let nobody = (uid: 65534, gid: 65534)
    static let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    func isSymbolicLink(_ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }

    @Test("a symbolic link planted at every lock and temporary path is never followed: the file it points to is unchanged")
    func plantedLinks() throws {
        let directory = try TestDirectory()
        let state = DaemonProcess.stateDirectory(for: directory.socket)
        try FileManager.default.createDirectory(atPath: state + "/stopwatches", withIntermediateDirectories: true)
        let victim = directory.file("victim")
        let original = Data("precious\n".utf8)
        #expect(FileManager.default.createFile(atPath: victim, contents: original, attributes: [.posixPermissions: 0o644]))
        let planted = [directory.socket + ".lock", state + "/stopwatchd.lock", state + "/stopwatches/.tea.json.tmp"]
        for path in planted { try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim) }

        let daemon = try DaemonProcess(socket: directory.socket)
        let client = StopwatchClient(socketPath: directory.socket)
        // Planted again while it runs, where the next write creates its temporary file.
        try? FileManager.default.removeItem(atPath: state + "/stopwatches/.tea.json.tmp")
        try FileManager.default.createSymbolicLink(atPath: state + "/stopwatches/.tea.json.tmp", withDestinationPath: victim)
        _ = try client.start("tea")
        _ = try client.lap("tea")
        _ = try client.stop("tea")
        try client.remove("tea")
        _ = try client.start("coffee")

        #expect(FileManager.default.contents(atPath: victim) == original)
        #expect(try FileManager.default.attributesOfItem(atPath: victim)[.posixPermissions] as? Int == 0o644)
        // The locks are real files now, and the temporary path holds no link.
        #expect(!isSymbolicLink(directory.socket + ".lock"))
        #expect(!isSymbolicLink(state + "/stopwatchd.lock"))
        #expect(!isSymbolicLink(state + "/stopwatches/.tea.json.tmp"))
        #expect(daemon.stop() == 0)
        #expect(FileManager.default.contents(atPath: victim) == original)
    }

    enum Untrusted: String, CaseIterable, CustomTestStringConvertible {
        case stateOwnedByOther, stateWorldWritable, socketOwnedByOther, socketWorldWritable
        case stateOwnedByThirdUserUnderNobody
        var testDescription: String { rawValue }
    }

    @Test("a state or socket directory another user owns, or anyone may write, is refused at start with what to fix; nothing is written in it",
          .enabled(if: canSwitchUser, "needs root (chown) and setpriv (a daemon as another user)"),
          arguments: Untrusted.allCases)
    func untrustedDirectory(_ untrusted: Untrusted) throws {
        let directory = try TestDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let home = directory.file("home")
        let socketDirectory = home + "/run"
        let state = home + "/state"
        for path in [home, socketDirectory, state] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var launcher: [String] = []
        let suspect: String
        let fix: String
        switch untrusted {
        case .stateOwnedByOther:
            (suspect, fix) = (state, "chown 0")
            #expect(chown(state, uid_t(Self.nobody.uid), gid_t(Self.nobody.gid)) == 0)
        case .stateWorldWritable:
            (suspect, fix) = (state, "chmod o-w")
            #expect(chmod(state, 0o777) == 0)
        case .socketOwnedByOther:
            (suspect, fix) = (socketDirectory, "chown 0")
            #expect(chown(socketDirectory, uid_t(Self.nobody.uid), gid_t(Self.nobody.gid)) == 0)
        case .socketWorldWritable:
            (suspect, fix) = (socketDirectory, "chmod o-w")
            #expect(chmod(socketDirectory, 0o1777) == 0)
        case .stateOwnedByThirdUserUnderNobody:
            // The daemon runs as nobody; its state directory belongs to a third uid.
            launcher = Self.asNobody
            (suspect, fix) = (state, "chown 65534")
            for path in [home, socketDirectory] { #expect(chown(path, uid_t(Self.nobody.uid), gid_t(Self.nobody.gid)) == 0) }
            #expect(chown(state, 4242, 4242) == 0)
            #expect(chmod(state, 0o755) == 0)
        }
        let daemon = try DaemonProcess(
            socket: socketDirectory + "/s.sock", arguments: ["--state-dir", state], waitUntilReady: false, launcher: launcher
        )
        let status = daemon.waitForExit()
        #expect(status != nil && status != 0)
        let log = daemon.readLog()
        #expect(log.contains(suspect) && log.contains(fix), "\(log)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: suspect).isEmpty)
    }

    @Test("a state file it cannot read (EACCES) stops the start, naming the file, which stays as it was",
          .enabled(if: canSwitchUser, "needs root and setpriv to run the daemon as a user that mode 000 stops"))
    func unreadableFile() throws {
        let directory = try TestDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let home = directory.file("home")
        let stopwatches = home + "/state/stopwatches"
        try FileManager.default.createDirectory(atPath: stopwatches, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let content = Data(#"{"format":1,"name":"tea","state":"pause","elapsed_ns":5,"laps_ns":[]}"#.utf8)
        let file = stopwatches + "/tea.json"
        #expect(FileManager.default.createFile(atPath: file, contents: content, attributes: [.posixPermissions: 0o000]))
        for path in [home, home + "/state", stopwatches, file] {
            #expect(chown(path, uid_t(Self.nobody.uid), gid_t(Self.nobody.gid)) == 0)
        }

        let daemon = try DaemonProcess(
            socket: home + "/s.sock", arguments: ["--state-dir", home + "/state"], waitUntilReady: false, launcher: Self.asNobody
        )
        let status = daemon.waitForExit()
        #expect(status != nil && status != 0)
        let log = daemon.readLog()
        #expect(log.contains("cannot read the stopwatch file \(file)"), "\(log)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: stopwatches) == ["tea.json"])
        #expect(FileManager.default.contents(atPath: file) == content)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0)
    }

    @Test("--allow-group: every directory made for the socket is 0750 and the group's, so a member reaches a socket two levels down",
          .enabled(if: canSwitchUser, "needs root and setpriv to run a client as a group member"))
    func groupReachesDeepSocket() throws {
        let directory = try TestDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let group = try #require(try UserDatabase.Users.groupID(named: "nogroup"), "the nogroup group")
        let socket = directory.path + "/a/b/s.sock"
        let daemon = try DaemonProcess(socket: socket, arguments: ["--allow-group", "nogroup"])
        for path in [directory.path + "/a", directory.path + "/a/b"] {
            let made = try FileSystem.ownerAndMode(at: path)
            #expect(made.mode == 0o750 && made.gid == group, "\(path): \(made)")
        }
        let bound = try FileSystem.ownerAndMode(at: socket)
        #expect(bound.mode == 0o660 && bound.gid == group)
        #expect(try Swctl.run(["start"], socket: daemon.socket, user: (uid: Self.nobody.uid, gid: Int(group))).status == 0)
    }

    @Test("a second daemon on the same state directory, on another socket, is refused; the first's files are intact")
    func oneDaemonPerStateDirectory() throws {
        let directory = try TestDirectory()
        let state = directory.file("state")
        let first = try DaemonProcess(socket: directory.file("a.sock"), arguments: ["--state-dir", state])
        _ = try StopwatchClient(socketPath: first.socket).start("tea")
        let paused = try StopwatchClient(socketPath: first.socket).stop("tea")
        // Its file, and its journal beside it (issue 30), each as it was.
        func files() throws -> [String: Data?] {
            let names = try FileManager.default.contentsOfDirectory(atPath: state + "/stopwatches")
            return Dictionary(uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: state + "/stopwatches/" + $0)) })
        }
        let before = try files()
        #expect(before.keys.contains("tea.json"))

        let second = try DaemonProcess(socket: directory.file("b.sock"), arguments: ["--state-dir", state], waitUntilReady: false)
        let status = second.waitForExit()
        #expect(status != nil && status != 0)
        #expect(second.readLog().contains("another stopwatchd uses the state directory \(state)"), "\(second.readLog())")

        #expect(try files() == before)
        #expect(try StopwatchClient(socketPath: first.socket).get("tea") == paused)
    }
}
