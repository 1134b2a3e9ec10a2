import Dispatch
import Glibc
import LinuxSystem
import StopWatchTesting
import Testing
import TestSupport

@testable import StopwatchDaemon

/// `STATUS=` on manual time, through a real datagram socket as `$NOTIFY_SOCKET`: changes
/// coalesced into one send per delay on the timer it is given, changes before it has one
/// sent once it does, nothing sent for nothing new.
@Suite("systemd STATUS= updates")
struct StatusReporterTests {
    let time = ManualTime(now: .seconds(1000))
    let queue = DispatchQueue(label: "status-test")
    let folder: TemporaryFolder
    let receiver: FileDescriptor
    let counts = Locked(0)
    let reporter: StatusReporter

    init() throws {
        folder = try TemporaryFolder(prefix: "status")
        let path = folder.path + "/notify"
        receiver = try FileDescriptor.unixDatagramSocket()
        try receiver.bind(toPath: path)
        try receiver.setNonBlocking()
        let counts = self.counts
        reporter = StatusReporter(
            notifier: SystemdNotifier(ProcessEnvironment(["NOTIFY_SOCKET": path])), queue: queue, delay: .milliseconds(200)
        ) { "\(counts.withLock { $0 }) counting" }
    }

    /// The messages received so far.
    func received() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let count = try? buffer.withUnsafeMutableBytes({ (bytes) throws(Errno) in try receiver.read(into: bytes) }), count > 0 {
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return messages
    }

    func change(to count: Int) {
        counts.withLock { $0 = count }
        queue.sync { reporter.changed() }
    }

    @Test func changesWaitForTheTimerThenOneSendForAll() {
        change(to: 1)
        time.advance(by: .seconds(1))
        #expect(received().isEmpty, "nothing sent before it has a timer")
        queue.sync { reporter.useTimers(time.bootTimers, now: time.now) }
        change(to: 2)
        // The change before the timer is pending: armed when it came, 200 ms on.
        time.advance(by: .milliseconds(199))
        #expect(received().isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(received() == ["STATUS=2 counting"])
        // The same text again: nothing sent.
        change(to: 2)
        time.advance(by: .seconds(1))
        #expect(received().isEmpty)
        change(to: 3)
        change(to: 4)
        time.advance(by: .seconds(1))
        #expect(received() == ["STATUS=4 counting"])
        receiver.close()
    }

    @Test func aChangeBeforeTheTimerIsSentOnceItComes() {
        change(to: 5)
        queue.sync { reporter.useTimers(time.bootTimers, now: time.now) }
        time.advance(by: .milliseconds(200))
        #expect(received() == ["STATUS=5 counting"])
        time.advance(by: .seconds(5))
        #expect(received().isEmpty, "sent once")
        receiver.close()
    }
}
