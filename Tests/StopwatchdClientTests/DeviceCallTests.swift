import StopwatchProtocol
@testable import StopwatchdClient
import Testing
import Varlink

/// `devices()` and `history`'s `device:`: what the client sends and reads, and a daemon of an
/// earlier release (no `Devices`, which would ignore `device`) told too old before any
/// `History` is sent. Against a socket that answers with canned replies.
@Suite("device calls")
struct DeviceCallTests {
    typealias Daemon = CorrectionCallTests.OneCallDaemon
    static let devicesReply = #"{"parameters":{"devices":[{"id":"11111111111111111111111111111111","name":"laptop","this":true,"intervals":3,"last_end_ms":5,"changed_ms":6},{"id":"22222222222222222222222222222222","name":"desk","this":false,"intervals":0}]}}"#
    static let methodNotFound = #"{"error":"org.varlink.service.MethodNotFound","parameters":{"method":"io.stopwatchd.Devices"}}"#

    @Test("devices() sends Devices and reads each Device, absent times nil")
    func devicesRead() throws {
        let daemon = try Daemon(reply: Self.devicesReply)
        let devices = try daemon.client.devices()
        #expect(try daemon.call().method == "io.stopwatchd.Devices")
        #expect(devices == [
            Device(id: String(repeating: "1", count: 32), name: "laptop", this: true, intervals: 3, lastEndMs: 5, changedMs: 6),
            Device(id: String(repeating: "2", count: 32), name: "desk", this: false, intervals: 0),
        ])
    }

    @Test("history with device: Devices asked first, then History with the device")
    func historyWithDevice() throws {
        let daemon = try Daemon(replies: [Self.devicesReply, #"{"parameters":{"intervals":[]}}"#])
        let stream = try daemon.client.history(nil, device: "desk")
        #expect(try stream.next() == [])
        stream.close()
        let calls = try daemon.calls()
        #expect(calls.map(\.method) == ["io.stopwatchd.Devices", "io.stopwatchd.History"])
        #expect(calls.last?.parameters["device"] == .string("desk"))
    }

    @Test("a daemon without Devices, which would ignore device, gets no History: too old for --device, exit 70")
    func previousReleaseRefused() throws {
        let daemon = try Daemon(replies: [Self.methodNotFound, #"{"parameters":{"intervals":[]}}"#])
        do {
            _ = try daemon.client.history(nil, device: "desk")
            Issue.record("History went on with a daemon too old for --device")
        } catch {
            #expect(error == .daemonTooOld(feature: "--device"))
            #expect(error.exitStatus == 70)
        }
        #expect(try daemon.calls().map(\.method) == ["io.stopwatchd.Devices"])
    }

    @Test("a Device time out of range (a file's odd modification time) reads as none; one of the wrong type is refused")
    func deviceTimeOutOfRange() throws {
        let device = try Device(
            json: JSONParser.parse(#"{"id":"22222222222222222222222222222222","name":"desk","this":false,"intervals":1,"last_end_ms":-1,"changed_ms":400000000000000}"#)
        )
        #expect(device.lastEndMs == nil && device.changedMs == nil && device.intervals == 1)
        #expect(throws: MalformedMessage.self) {
            try Device(json: JSONParser.parse(#"{"id":"2","name":"desk","this":false,"intervals":1,"changed_ms":"soon"}"#))
        }
    }
}
