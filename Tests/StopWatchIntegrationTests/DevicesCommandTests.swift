import Foundation
import Glibc
import LinuxSystem
import StopwatchProtocol
import Testing
import Varlink

/// `swctl devices`, `log --device`, `report --device`, `report --by device` and log's DEVICE
/// column, through swctl and a real daemon whose history folder holds another device's
/// folder (as a sync tool would have brought it).
@Suite("devices through swctl and the daemon")
struct DevicesCommandTests {
    let directory: TestDirectory
    static let laptop = "11111111111111111111111111111111"
    static let desk = "22222222222222222222222222222222"
    /// 2023-10-15 00:00 UTC: the desk's interval, one hour from then.
    static let deskStart: Int64 = 1_697_328_000_000

    init() throws {
        directory = try TestDirectory()
    }

    /// A history folder with the desk's folder: its name and one interval of "call".
    func sharedFolder() throws -> String {
        let shared = directory.path + "/shared-history"
        let desk = shared + "/" + Self.desk
        try FileManager.default.createDirectory(atPath: desk, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(#"{"id":"\#(Self.desk)","name":"desk","host":"d"}"#.utf8 + [10]).write(to: URL(fileURLWithPath: desk + "/device.json"))
        let line = #"{"id":"00000000000000d1","name":"call","start_ms":\#(Self.deskStart),"end_ms":\#(Self.deskStart + 3_600_000),"elapsed_ms":3600000}"#
        try Data(line.utf8 + [10]).write(to: URL(fileURLWithPath: desk + "/2023-10.jsonl"))
        return shared
    }

    @Test("devices lists this device and the other one with what arrived from each; log shows a DEVICE column and filters by --device (name or id); report counts per device and filters")
    func devicesLogAndReport() throws {
        let shared = try sharedFolder()
        let daemon = try DaemonProcess(
            socket: directory.socket, arguments: ["--device-id", Self.laptop, "--device-name", "laptop", "--history-dir", shared]
        )
        let socket = daemon.socket
        #expect(try Swctl.run(["track", "work", "2023-10-16T09:00", "2023-10-16T10:30"], socket: socket).status == 0)

        let json = try Swctl.run(["--json", "devices"], socket: socket)
        #expect(json.status == 0, "\(json.error)")
        guard case .array(let items) = try JSONParser.parse(Array(json.output.utf8)) else {
            Issue.record("not an array: \(json.output)")
            return
        }
        let devices = try items.map { try Device(json: $0) }
        #expect(devices.map(\.name) == ["laptop", "desk"])
        #expect(devices.map(\.id) == [Self.laptop, Self.desk])
        #expect(devices.map(\.this) == [true, false])
        #expect(devices.map(\.intervals) == [1, 1])
        #expect(devices.last?.lastEndMs == Self.deskStart + 3_600_000)

        let table = try Swctl.run(["devices"], socket: socket)
        #expect(table.status == 0)
        #expect(table.lines.first?.hasPrefix("NAME    ID        INTERVALS") == true, "\(table.output)")
        #expect(table.lines.contains { $0.hasPrefix("laptop  11111111") && $0.hasSuffix("this device") }, "\(table.output)")
        #expect(table.lines.contains { $0.hasPrefix("desk    22222222          1") }, "\(table.output)")

        // Two devices have history: the DEVICE column.
        let log = try Swctl.run(["log"], socket: socket)
        #expect(log.status == 0, "\(log.error)")
        #expect(log.lines.first?.contains("DEVICE") == true, "\(log.output)")
        #expect(log.lines.count == 3)
        // --device by name: the desk's row only, numbered among all (@2: the older one).
        let deskLog = try Swctl.run(["log", "--device", "desk"], socket: socket)
        #expect(deskLog.lines.count == 2, "\(deskLog.output)")
        #expect(deskLog.lines.last?.hasPrefix("@2") == true && deskLog.lines.last?.contains("call") == true, "\(deskLog.output)")
        // --device by id, as CSV (the daemon filters).
        let deskCSV = try Swctl.run(["log", "--device", Self.desk, "--csv"], socket: socket)
        #expect(deskCSV.lines.count == 2 && deskCSV.lines.last?.hasPrefix("call,") == true, "\(deskCSV.output)")
        // By the 8 digits `devices` shows.
        let byPrefix = try Swctl.run(["log", "--device", String(Self.desk.prefix(8)), "--csv"], socket: socket)
        #expect(byPrefix.status == 0 && byPrefix.lines == deskCSV.lines, "\(byPrefix.error)")

        let byDevice = try Swctl.run(["report", "--by", "device", "--csv"], socket: socket)
        #expect(byDevice.status == 0, "\(byDevice.error)")
        #expect(byDevice.lines == ["device,name,elapsed_ms", "laptop,work,5400000", "desk,call,3600000"])
        let laptopOnly = try Swctl.run(["report", "--device", "laptop", "--csv"], socket: socket)
        #expect(laptopOnly.lines == ["name,elapsed_ms", "work,5400000"])
        let text = try Swctl.run(["report", "--by", "device"], socket: socket)
        #expect(text.lines.first == "DEVICE  NAME   TIME", "\(text.output)")
        #expect(text.lines.last == "total          2:30:00")
        // A device no name or id matches is refused (exit 1, nothing printed), not shown as
        // a device with no time; in every format, for log and report.
        for arguments in [["log", "--device", "deks"], ["log", "--device", "deks", "--csv"], ["report", "--device", "2222"]] {
            let unknown = try Swctl.run(arguments, socket: socket)
            #expect(unknown.status == 1 && unknown.output.isEmpty, "\(arguments): \(unknown.status) \(unknown.output)")
            #expect(unknown.error.contains("no device is named '\(arguments[2])'") && unknown.error.contains("swctl devices"), "\(unknown.error)")
        }
        _ = daemon
    }

    @Test("With only this device's history, log has no DEVICE column")
    func oneDeviceNoColumn() throws {
        let daemon = try DaemonProcess(
            socket: directory.socket, arguments: ["--device-id", Self.laptop, "--device-name", "laptop", "--history-dir", directory.path + "/history"]
        )
        #expect(try Swctl.run(["track", "work", "2023-10-16T09:00", "2023-10-16T10:30"], socket: daemon.socket).status == 0)
        let log = try Swctl.run(["log"], socket: daemon.socket)
        #expect(log.status == 0 && log.lines.count == 2, "\(log.output)\(log.error)")
        #expect(log.lines.first?.contains("DEVICE") == false)
        let devices = try Swctl.run(["devices"], socket: daemon.socket)
        #expect(devices.lines.count == 2, "\(devices.output)")
    }
}
