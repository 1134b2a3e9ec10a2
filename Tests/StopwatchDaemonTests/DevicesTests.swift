import Foundation
import Glibc
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import TestSupport
import Testing
import Varlink

/// `Devices` (SPEC §3): this device and every other device whose folder is in the history
/// folder, with the interval lines that arrived from each, the latest end and the last
/// change; counted once per month file and again only when the file changed. Manual clocks,
/// a temporary folder; nothing sleeps.
@Suite("Devices")
final class DevicesTests {
    let root: String
    let logged = Locked<[String]>([])
    typealias P = PeerDevicesTests
    static let hour: Int64 = 3_600_000

    init() throws {
        var template = Array("/tmp/swdevices-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno(errno) }
        root = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func fixture() -> StopwatchServiceFixture {
        StopwatchServiceFixture(
            now: .seconds(100), historyDirectory: root + "/" + P.own, wallClock: ManualWallClock(P.now), historyMemory: HistoryMemory(limit: 32 * 1024 * 1024),
            logged: logged, device: (P.own, "laptop", root, 64)
        )
    }

    /// Writes `text` as `name` in `device`'s folder: by rename (a new file, as Syncthing
    /// does), or appended to the same file (`inPlace`).
    func write(_ device: String, _ name: String, _ text: String, inPlace: Bool = false) throws {
        let folder = root + "/" + device
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        if inPlace, let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(Data(text.utf8))
            handle.closeFile()
        } else {
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/.writing"))
            guard rename(folder + "/.writing", path) == 0 else { throw Errno(errno) }
        }
    }

    /// Sets the modification time of `name` in `device`'s folder (seconds since the epoch).
    func touch(_ device: String, _ name: String, seconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, root + "/" + device + "/" + name, &times, 0) == 0 else { throw Errno(errno) }
    }

    func devices(_ f: StopwatchServiceFixture) -> [Device]? {
        guard case .array(let items)? = f.reply("Devices")?["devices"] else { return nil }
        return items.compactMap { try? Device(json: $0) }
    }

    func monthsRead(_ f: StopwatchServiceFixture) -> Int {
        f.queue.sync { f.history!.deviceSummaries.monthsRead }
    }

    static func track(_ record: UInt64, made: Int64, _ number: UInt64, _ name: String, _ start: Int64, _ end: Int64) -> String {
        let interval = Interval(id: P.id(number), name: name, startMs: start, endMs: end, elapsedMs: end - start)
        var bytes: [UInt8] = []
        HistoryCorrection(record: P.id(record), madeMs: made, change: .form(.track, id: P.id(number), interval: interval)).encode(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("With no other device's folder, Devices is this device alone: its name and id, its interval lines and track records (other records not counted), its latest end")
    func thisDeviceOnly() throws {
        let m = P.midOctober, h = Self.hour
        try write(
            P.own, P.october,
            P.line(1, "a", m, m + h) + P.line(2, "b", m + h, m + 3 * h) + P.delete(100, made: P.now, 1)
                + P.amend(101, made: P.now, 2, "b", m + h, m + 2 * h) + Self.track(102, made: P.now, 3, "c", m + 3 * h, m + 4 * h)
        )
        let f = fixture()
        let answer = try #require(devices(f))
        #expect(answer.count == 1)
        let own = try #require(answer.first)
        #expect(own.id == P.own && own.name == "laptop" && own.this)
        #expect(own.intervals == 3)
        #expect(own.lastEndMs == m + 4 * h)
        #expect(own.changedMs != nil)
        // Through the wire form too: what the client reads is what was sent.
        #expect(try Device(json: own.json) == own)
    }

    @Test("Two other devices with months: each with its name (device.json), its lines over every month, its latest end and its folder's latest change (open.json included), this device first, the others by name")
    func twoPeersWithMonths() throws {
        let m = P.midOctober, n = P.earlyNovember, h = Self.hour
        try write(P.own, P.october, P.line(1, "own", m, m + h))
        try write(P.peerB, HistoryLayout.deviceFileName, #"{"id":"\#(P.peerB)","name":"zeta","host":"h"}"# + "\n")
        try write(P.peerB, P.october, P.line(10, "b", m, m + h) + P.line(11, "b", m + h, m + 2 * h))
        try write(P.peerB, P.november, P.line(12, "b", n, n + h) + P.amend(101, made: P.now, 10, "b", m, m + h / 2))
        try write(P.peerC, HistoryLayout.deviceFileName, #"{"id":"\#(P.peerC)","name":"alpha","host":"h"}"# + "\n")
        try write(P.peerC, P.october, P.line(20, "c", m + 5 * h, m + 6 * h))
        try write(P.peerC, PeerDevices.openFileName, #"{"intervals":[]}"# + "\n")
        try touch(P.peerB, P.october, seconds: 1_697_000_000)
        try touch(P.peerB, P.november, seconds: 1_699_500_000)
        try touch(P.peerC, P.october, seconds: 1_697_000_000)
        try touch(P.peerC, PeerDevices.openFileName, seconds: 1_699_900_000)
        let f = fixture()
        let answer = try #require(devices(f))
        #expect(answer.map(\.name) == ["laptop", "alpha", "zeta"])
        #expect(answer.map(\.this) == [true, false, false])
        #expect(answer.map(\.id) == [P.own, P.peerC, P.peerB])
        #expect(answer.map(\.intervals) == [1, 1, 3])
        #expect(answer[2].lastEndMs == n + h)
        #expect(answer[1].lastEndMs == m + 6 * h)
        #expect(answer[2].changedMs == 1_699_500_000_000)
        #expect(answer[1].changedMs == 1_699_900_000_000)
    }

    @Test("A month counted once is not read again while unchanged; one that grew is read from where it grew, one replaced is counted again whole, one gone is forgotten")
    func changedMonthRecounted() throws {
        let m = P.midOctober, n = P.earlyNovember, h = Self.hour
        try write(P.own, P.october, P.line(1, "own", m, m + h))
        try write(P.peerB, P.october, P.line(10, "b", m, m + h) + P.line(11, "b", m + h, m + 2 * h))
        try write(P.peerB, P.november, P.line(12, "b", n, n + h))
        let f = fixture()
        #expect(devices(f)?.map(\.intervals) == [1, 3])
        #expect(monthsRead(f) == 3)
        #expect(devices(f)?.map(\.intervals) == [1, 3])
        #expect(monthsRead(f) == 3)
        // Grown in place: read again (from its last whole line), the other months not.
        try write(P.peerB, P.november, P.line(13, "b", n + h, n + 2 * h), inPlace: true)
        let grown = try #require(devices(f))
        #expect(grown.map(\.intervals) == [1, 4])
        #expect(grown[1].lastEndMs == n + 2 * h)
        #expect(monthsRead(f) == 4)
        // Replaced by a shorter file: counted whole again.
        try write(P.peerB, P.october, P.line(10, "b", m, m + h))
        #expect(devices(f)?.map(\.intervals) == [1, 3])
        #expect(monthsRead(f) == 5)
        // Gone: forgotten.
        try FileManager.default.removeItem(atPath: root + "/" + P.peerB + "/" + P.november)
        #expect(devices(f)?.map(\.intervals) == [1, 1])
        #expect(f.queue.sync { f.history!.deviceSummaries.counted[P.peerB]?.count } == 1)
    }

    @Test("A device whose device.json is damaged, or missing, is shown by its id")
    func damagedDeviceFileShownByID() throws {
        let m = P.midOctober, h = Self.hour
        try write(P.peerB, HistoryLayout.deviceFileName, #"{"id":"#)
        try write(P.peerB, P.october, P.line(10, "b", m, m + h))
        try write(P.peerC, P.october, P.line(20, "c", m, m + h))
        let f = fixture()
        let answer = try #require(devices(f))
        #expect(answer.map(\.name) == ["laptop", P.peerB, P.peerC])
        #expect(answer.map(\.intervals) == [0, 1, 1])
        #expect(answer[0].lastEndMs == nil)
    }

    @Test("A folder whose files' modification times are before 1970 has no changed_ms, not one no client reads")
    func changedTimeOutOfRangeLeftOut() throws {
        let m = P.midOctober, h = Self.hour
        // (Past the year 9999 too, where a file system keeps such times: ext4 and tmpfs clamp
        // them to 2446.)
        try write(P.peerB, P.october, P.line(10, "b", m, m + h))
        try touch(P.peerB, P.october, seconds: -100)
        try write(P.peerC, P.october, P.line(20, "c", m, m + h))
        try touch(P.peerC, P.october, seconds: -1)
        let f = fixture()
        guard case .array(let items)? = f.reply("Devices")?["devices"] else {
            Issue.record("no devices in the reply")
            return
        }
        let peers = items.compactMap { item -> JSONObject? in
            guard case .object(let object) = item, object["this"] == .bool(false) else { return nil }
            return object
        }
        #expect(peers.count == 2)
        // Each file's time alone: one past the year 9999 (where a file system keeps it) is
        // none, and does not hide another file's.
        #expect(DeviceSummaries.shown(400_000_000_000_000) == nil && DeviceSummaries.shown(-1) == nil)
        #expect(DeviceSummaries.shown(1_699_500_000_000) == 1_699_500_000_000)
        #expect(peers.allSatisfy { $0["changed_ms"] == nil && $0["intervals"] == .int(1) }, "\(peers.map { JSONValue.object($0).text })")
    }
}
