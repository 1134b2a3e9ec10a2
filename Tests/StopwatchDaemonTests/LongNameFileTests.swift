import Dispatch
import Foundation
import LinuxSystem
import StopWatchCore
@testable import StopwatchDaemon
import Testing

/// The files of long names, whose file names are cut and end with a digest of the whole name:
/// two names never share one, a file that records another name is never replaced, and the
/// files of earlier releases (FNV-1a digests) load and are renamed.
@Suite("persistence: long names' files")
struct LongNameFileTests {
    /// Two valid names whose earlier file names were one: FNV-1a of their UTF-8 is
    /// 0xC0D77F20284C08FD for both (found by a birthday search over the 16 ASCII characters
    /// after the shared prefix), and both are cut after the same 15 emoji.
    static let colliding = (
        String(repeating: "😀", count: 16) + "8b36162fa71e2996",
        String(repeating: "😀", count: 16) + "b25524c14cc7812b"
    )

    let root: String
    let directory: String
    let log = Locked<[String]>([])
    /// What the store is to write again for a name whose write failed.
    let current = Locked<[String: StopWatchSnapshot]>([:])
    let clocks = ClockReading(boot: .seconds(50), wall: .seconds(1_700_000_000), bootID: "boot-a")

    init() throws {
        root = NSTemporaryDirectory() + "swlong-\(UInt64.random(in: 0...UInt64.max))"
        directory = root + "/stopwatches"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A store as the daemon's: one at a time holds the directory's lock.
    func makeStore() -> StateStore {
        let log = self.log, current = self.current
        let clocks = self.clocks
        return StateStore(
            directory: root, maximumLaps: 10_000,
            logger: Logger(minimumLevel: .debug, journald: false) { line in log.withLock { $0.append(line) } },
            queue: DispatchQueue(label: "store"), currentSnapshot: { name in current.withLock { $0[name] } }, problemChanged: { _ in },
            retryInterval: .seconds(3600)
        ) { clocks }
    }

    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// Writes a record of `name` into `file`, as a daemon (or an earlier release) would have.
    func plant(_ name: String, _ snapshot: StopWatchSnapshot, as file: String) {
        let record = StopwatchRecord(name: name, snapshot: snapshot, at: clocks)
        #expect(FileManager.default.createFile(atPath: directory + "/" + file, contents: Data(record.serialized)))
    }

    func recordedName(_ file: String) throws -> String? {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["name"] as? String
    }

    @Test("two long names that shared a file under FNV-1a get two files: both survive a restart")
    func collidingNamesKeptApart() throws {
        let (first, second) = Self.colliding
        #expect(StopwatchFileName.fnv1a(first.utf8) == StopwatchFileName.fnv1a(second.utf8))
        #expect(StopwatchFileName.of(first) != StopwatchFileName.of(second))
        try { () throws in
            let store = makeStore()
            #expect(try store.load().isEmpty)
            store.save(first, .paused(at: .seconds(1)))
            store.save(second, .paused(at: .seconds(2)))
            #expect(store.problem == nil)
        }()
        let loaded = try makeStore().load()
        #expect(loaded.count == 2)
        #expect(loaded.first { $0.name == first }?.snapshot == .paused(at: .seconds(1)))
        #expect(loaded.first { $0.name == second }?.snapshot == .paused(at: .seconds(2)))
    }

    @Test("a file in a long name's place that records another name is never replaced or removed")
    func otherNamesFileKept() throws {
        let name = String(repeating: "😀", count: 40)
        let other = String(repeating: "😀", count: 39) + "😁"
        let file = StopwatchFileName.of(name)
        let store = makeStore()
        _ = try store.load()
        // Put there after the start (a start moves such a file aside: it is not `name`'s).
        plant(other, .paused(at: .seconds(9)), as: file)
        store.save(name, .paused(at: .seconds(1)))
        #expect(try recordedName(file) == other)
        #expect(store.problem?.contains("holds stopwatch '\(other)'") == true)
        #expect(log.withLock { $0 }.contains { $0.contains("not saving stopwatch '\(name)'") && $0.contains("error") })
        store.save(name, nil)
        #expect(try recordedName(file) == other)
        #expect(try files() == [file])
        // Moved away, the place is the stopwatch's again.
        try FileManager.default.moveItem(atPath: directory + "/" + file, toPath: root + "/kept.json")
        current.withLock { $0[name] = .paused(at: .seconds(2)) }
        store.save(name, .paused(at: .seconds(2)))
        #expect(store.problem == nil)
        #expect(try recordedName(file) == name)
    }

    @Test("an earlier release's file of a long name loads unchanged, and is renamed at start")
    func earlierReleaseFileRenamed() throws {
        let name = String(repeating: "タ", count: 64)
        let legacy = try #require(StopwatchFileName.legacyOf(name))
        #expect(legacy.hasSuffix("~" + String(StopwatchFileName.fnv1a(name.utf8), radix: 16, uppercase: true) + ".json"))
        plant(name, .paused(at: .seconds(3), laps: [.seconds(1)]), as: legacy)
        plant("short", .stopped, as: "short.json")
        try { () throws in
            let loaded = try makeStore().load()
            #expect(loaded.map(\.name).sorted() == ["short", name].sorted())
            #expect(loaded.first { $0.name == name }?.snapshot == .paused(at: .seconds(3), laps: [.seconds(1)]))
            #expect(try files() == [StopwatchFileName.of(name), "short.json"].sorted())
        }()
        #expect(try makeStore().load().first { $0.name == name }?.snapshot == .paused(at: .seconds(3), laps: [.seconds(1)]))
    }

    @Test("an earlier release's file beside the current one (a crash while renaming): the current one is read, the other moved aside")
    func bothFiles() throws {
        let name = String(repeating: "é", count: 64)
        let legacy = try #require(StopwatchFileName.legacyOf(name))
        plant(name, .paused(at: .seconds(1)), as: legacy)
        plant(name, .paused(at: .seconds(2)), as: StopwatchFileName.of(name))
        let loaded = try makeStore().load()
        #expect(loaded.count == 1)
        #expect(loaded.first?.snapshot == .paused(at: .seconds(2)))
        let names = try files()
        #expect(names.contains(StopwatchFileName.of(name)))
        #expect(!names.contains(legacy))
        #expect(names.contains { $0.hasPrefix(legacy + ".corrupt-") })
    }

    @Test("a file of a colliding earlier name is not removed for another name")
    func collidingEarlierFileKept() throws {
        let (first, second) = Self.colliding
        let legacy = try #require(StopwatchFileName.legacyOf(first))
        #expect(StopwatchFileName.legacyOf(second) == legacy)
        // An earlier release kept `second` there; `first` is new.
        plant(second, .paused(at: .seconds(5)), as: legacy)
        let store = makeStore()
        _ = try store.load()
        store.save(first, .paused(at: .seconds(1)))
        #expect(store.problem == nil)
        #expect(Set(try files()) == [StopwatchFileName.of(first), StopwatchFileName.of(second)])
        #expect(try recordedName(StopwatchFileName.of(second)) == second)
    }

    @Test("a long name's file this daemon wrote or read at start is not read again before each save; after a removal, or a failed save, it is")
    func ownFileNotReadAgain() throws {
        let name = String(repeating: "😀", count: 40)
        let other = String(repeating: "😀", count: 39) + "😁"
        let file = StopwatchFileName.of(name)
        try { () throws in
            let store = makeStore()
            _ = try store.load()
            store.save(name, .paused(at: .seconds(1)))
            // What a read before the next save would find: another name, which would refuse
            // it. Not read (a lap of a long-named stopwatch parsed its whole file), so saved.
            plant(other, .paused(at: .seconds(9)), as: file)
            store.save(name, .paused(at: .seconds(2)))
            #expect(store.problem == nil)
            #expect(try recordedName(file) == name)
            // Removed: the place is looked at again by the next save, and refused.
            store.save(name, nil)
            plant(other, .paused(at: .seconds(9)), as: file)
            store.save(name, .paused(at: .seconds(3)))
            #expect(store.problem?.contains("holds stopwatch '\(other)'") == true)
            #expect(try recordedName(file) == other)
            // A failed save is no check: the next one looks again.
            store.save(name, .paused(at: .seconds(4)))
            #expect(try recordedName(file) == other)
            try FileManager.default.removeItem(atPath: directory + "/" + file)
            current.withLock { $0[name] = .paused(at: .seconds(5)) }
            store.save(name, .paused(at: .seconds(5)))
            #expect(store.problem == nil)
        }()
        // Read at start, holding its name: not read again either.
        let store = makeStore()
        #expect(try store.load().map(\.name) == [name])
        plant(other, .paused(at: .seconds(9)), as: file)
        store.save(name, .paused(at: .seconds(6)))
        #expect(store.problem == nil)
        #expect(try recordedName(file) == name)
    }

    @Test(
        "removing a long-named stopwatch whose earlier release's file cannot be removed fails the save: the stopwatch does not come back from it at the next start",
        .enabled(if: Immutable.works, "cannot make a file immutable here (FS_IOC_SETFLAGS needs CAP_LINUX_IMMUTABLE and a file system with the flag)")
    )
    func removalWithEarlierFileLeft() throws {
        let name = String(repeating: "タ", count: 64)
        let legacy = try #require(StopwatchFileName.legacyOf(name))
        plant(name, .paused(at: .seconds(3)), as: legacy)
        // Not removable (EPERM), though readable: as an unlink that fails with EIO.
        try Immutable.set(directory + "/" + legacy, true)
        defer { try? Immutable.set(directory + "/" + legacy, false) }
        try { () throws in
            let store = makeStore()
            #expect(try store.load().map(\.name) == [name])
            // Renamed at start; the earlier file is left (the next start moves it aside).
            #expect(try files() == [StopwatchFileName.of(name), legacy].sorted())
            store.save(name, nil)
            #expect(store.problem?.contains("cannot save stopwatches") == true, "\(String(describing: store.problem))")
            #expect(try files().contains(legacy))
            try Immutable.set(directory + "/" + legacy, false)
            store.save(name, nil)
            #expect(store.problem == nil)
            #expect(try files() == [])
        }()
        #expect(try makeStore().load().isEmpty)
    }
}

/// The immutable attribute (`chattr +i`): such a file can be read but not unlinked, even by
/// root, which is how a test makes one unlink fail. Set with FS_IOC_SETFLAGS (needs
/// CAP_LINUX_IMMUTABLE and a file system that keeps the flag, as ext4, xfs and btrfs do).
enum Immutable {
    // <linux/fs.h>: _IOR('f', 1, long), _IOW('f', 2, long); the kernel reads an int.
    private static let getFlags: UInt = 0x8008_6601
    private static let setFlags: UInt = 0x4008_6602
    private static let immutableFlag: CInt = 0x10

    static func set(_ path: String, _ immutable: Bool) throws {
        let file = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { throw Errno(errno) }
        defer { close(file) }
        var flags: CInt = 0
        guard ioctl(file, getFlags, &flags) == 0 else { throw Errno(errno) }
        flags = immutable ? flags | immutableFlag : flags & ~immutableFlag
        guard ioctl(file, setFlags, &flags) == 0 else { throw Errno(errno) }
    }

    /// Whether `set` works on a file in the temporary directory.
    static let works: Bool = {
        let path = NSTemporaryDirectory() + "swimmutable-\(UInt64.random(in: 0...UInt64.max))"
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return false }
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard (try? set(path, true)) != nil else { return false }
        try? set(path, false)
        return true
    }()
}
