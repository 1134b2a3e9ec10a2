import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
import Testing
import Varlink

/// Two daemons, two device ids, one history folder (as a sync tool would make it, without the
/// delay): each writes only its own device folder and reports the time of both.
@Suite("one history folder, two devices, against the daemon")
struct SharedHistoryFolderTests {
    let directory: TestDirectory
    static let laptop = "11111111111111111111111111111111"
    static let desk = "22222222222222222222222222222222"

    init() throws {
        directory = try TestDirectory()
    }

    func call(_ socket: String, _ method: String, _ parameters: String) throws -> JSONObject {
        let connection = try RawConnection(socket)
        try connection.call("io.stopwatchd." + method, parameters)
        guard let reply = try connection.reply() else { throw Errno(ETIMEDOUT) }
        return reply
    }

    @Test("an interval stopped on one device is in the other's History under its name; a counting one shows open on the other; an amend on the other shows on both; each writes only its own folder")
    func twoDevicesOneFolder() throws {
        let shared = directory.path + "/shared-history"
        let laptop = try DaemonProcess(
            socket: directory.socket, arguments: ["--device-id", Self.laptop, "--device-name", "laptop", "--history-dir", shared]
        )
        let otherSocket = directory.path + "/other/stopwatchd.sock"
        try FileManager.default.createDirectory(atPath: directory.path + "/other", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let desk = try DaemonProcess(socket: otherSocket, arguments: ["--device-id", Self.desk, "--device-name", "desk", "--history-dir", shared])
        _ = try call(laptop.socket, "Start", #"{"name":"work"}"#)
        _ = try call(laptop.socket, "Stop", #"{"name":"work"}"#)
        _ = try call(desk.socket, "Start", #"{"name":"call"}"#)
        let onDesk = try RawConnection.streamedHistory(desk.socket)
        #expect(onDesk.map(\.name) == ["work", "call"], "\(onDesk)")
        #expect(onDesk.map(\.device) == ["laptop", "desk"])
        let onLaptop = try RawConnection.streamedHistory(laptop.socket)
        #expect(onLaptop.map(\.name) == ["work", "call"], "\(onLaptop)")
        #expect(onLaptop.last?.endMs == nil && onLaptop.last?.device == "desk")
        let work = try #require(onLaptop.first)
        _ = try call(desk.socket, "Amend", #"{"id":"\#(work.id)","note":"from the desk"}"#)
        for socket in [laptop.socket, desk.socket] {
            let amended = try RawConnection.streamedHistory(socket).first { $0.id == work.id }
            #expect(amended?.note == "from the desk" && amended?.device == "laptop", "\(String(describing: amended))")
        }
        // Each device's records are in its own folder only: the amend is the desk's.
        let laptopFiles = try FileManager.default.contentsOfDirectory(atPath: shared + "/" + Self.laptop).filter { $0.hasSuffix(".jsonl") }
        let laptopText = try laptopFiles.map { try String(contentsOfFile: shared + "/" + Self.laptop + "/" + $0, encoding: .utf8) }.joined()
        #expect(!laptopText.contains(#""op":"#))
        let deskFiles = try FileManager.default.contentsOfDirectory(atPath: shared + "/" + Self.desk).filter { $0.hasSuffix(".jsonl") }
        let deskText = try deskFiles.map { try String(contentsOfFile: shared + "/" + Self.desk + "/" + $0, encoding: .utf8) }.joined()
        #expect(deskText.contains(#""op":"amend""#))
        // The desk's History by device: the laptop's interval only.
        let connection = try RawConnection(desk.socket)
        try connection.call("io.stopwatchd.History", #"{"device":"laptop"}"#)
        let reply = try #require(try connection.reply())
        guard case .object(let parameters)? = reply["parameters"], case .array(let items)? = parameters["intervals"] else {
            Issue.record("no intervals: \(reply)")
            return
        }
        #expect(try items.map { try Interval(json: $0).id } == [work.id])
        _ = (laptop, desk)
    }
}
