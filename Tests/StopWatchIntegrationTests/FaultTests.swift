import Foundation
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
import StopwatchdClient
import Synchronization
import Testing
import Varlink

/// Clients that vanish, floods of connections, and the daemon stopped or killed under load.
@Suite("faults")
struct FaultTests {
    @Test("2,000 connections at once: those over the limit are refused with a reason, the rest are served")
    func connectionFlood() throws {
        _ = ResourceLimits.raiseOpenFileLimit()
        let directory = try TestDirectory()
        // Every call is sent before any reply is read: read one by one, call after call, under
        // a sanitizer beside the load tests, the later connections outlived the idle timeout.
        // That limit is not what is measured here.
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--idle-timeout", "1h"])
        var connections: [RawConnection] = []
        for _ in 0..<2000 {
            connections.append(try RawConnection(daemon.socket))
        }
        var refused = 0
        var served = 0
        var other: [String] = []
        for connection in connections {
            try? connection.call("io.stopwatchd.Get")
        }
        for (index, connection) in connections.enumerated() {
            do {
                guard let reply = try connection.reply(timeout: .seconds(30)) else {
                    other.append("\(index): closed without a reply")
                    continue
                }
                if reply.errorName == "io.stopwatchd.ProtocolError" {
                    refused += 1
                } else if reply.stopwatch != nil {
                    served += 1
                } else {
                    other.append("\(index): \(reply)")
                }
            } catch {
                other.append("\(index): \(error)")
            }
        }
        #expect(served >= 1000 && served <= 1024, "served \(served)")
        #expect(refused + served == 2000, "refused \(refused), served \(served), other: \(other.prefix(5))")
        connections.removeAll()
        #expect(Deadline.wait { (try? StopwatchClient(socketPath: daemon.socket).start()) != nil })
    }

    // A timing bound: under a sanitizer, beside the load tests on 2 cores, ticks are late
    // whatever the accept loop does.
    @Test("a flood of connections does not starve the ticks of a watcher",
          .enabled(if: !Binaries.sanitized, "timing, not races: measured without a sanitizer"))
    func connectFloodKeepsTicks() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "20ms"])
        _ = try StopwatchClient(socketPath: daemon.socket).start()
        let watcher = try RawConnection(daemon.socket)
        try watcher.call("io.stopwatchd.Watch", more: true)
        _ = try watcher.reply()

        // Four threads connect and hang up as fast as they can for two seconds.
        let flooding = Atomic<Bool>(true)
        let group = DispatchGroup()
        let path = daemon.socket
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while flooding.load(ordering: .relaxed) {
                    guard let socket = try? FileDescriptor.unixStreamSocket(nonBlocking: false) else { continue }
                    try? socket.connect(toPath: path)
                    socket.close()
                }
            }
        }
        var longestGap = Duration.zero
        var previous = ContinuousClock.now
        let end = previous + .seconds(2)
        while ContinuousClock.now < end, try watcher.reply(timeout: .seconds(10)) != nil {
            longestGap = max(longestGap, ContinuousClock.now - previous)
            previous = ContinuousClock.now
        }
        flooding.store(false, ordering: .relaxed)
        #expect(group.wait(timeout: .now() + 30) == .success)
        // 20 ms ticks: a gap of a second means the accepts held the queue.
        #expect(longestGap < .seconds(1), "longest gap between ticks \(longestGap)")
    }

    @Test("clients that leave mid-message and mid-stream leave nothing behind")
    func clientsVanish() throws {
        let directory = try TestDirectory()
        let daemon = try DaemonProcess(socket: directory.socket, arguments: ["--tick", "10ms"])
        _ = try StopwatchClient(socketPath: daemon.socket).start()
        let baseline = try #require(DaemonMemory.residentKiB(of: daemon.pid))
        for round in 0..<200 {
            let connection = try RawConnection(daemon.socket)
            if round.isMultiple(of: 2) {
                try connection.send(#"{"method":"io.stopwatchd.St"#, terminated: false)
            } else {
                try connection.call("io.stopwatchd.Watch", more: true)
                _ = try connection.reply()
            }
            // Gone without a word.
        }
        let watcher = try RawConnection(daemon.socket)
        try watcher.call("io.stopwatchd.Watch", more: true)
        var ticks = 0
        while ticks < 10, try watcher.reply()?.stopwatch != nil { ticks += 1 }
        #expect(ticks == 10)
        let resident = DaemonMemory.residentKiB(of: daemon.pid) ?? .max
        // Not under a sanitizer: AddressSanitizer holds freed memory back on purpose (its
        // quarantine), so its resident size follows what was allocated, not what is kept
        // (41.7 MiB from 23.9 once, with no leak; LeakSanitizer looks for leaks there).
        if !Binaries.sanitized {
            #expect(Double(resident) <= Double(baseline) * 1.5 + 2048, "\(resident) KiB, was \(baseline)")
        }
    }

    static let cycle: [StopWatchCommand] = [.start, .lap, .stop, .start, .stop, .reset]

    /// The (state, laps) a stopwatch reported as `last` has after `command`: computed with the
    /// stopwatch's own transition table (a refused command leaves it as it was). The lap a
    /// command may add is unknown in value, so laps are compared by count and prefix.
    static func after(_ last: Stopwatch, _ command: StopWatchCommand) -> (state: Stopwatch.State, laps: Int) {
        let now = Duration.seconds(10_000)
        let laps = last.lapsMs.map { Duration.milliseconds($0) }
        let snapshot: StopWatchSnapshot = switch last.state {
        case .stopped: .stopped
        case .pause: .paused(at: .milliseconds(last.elapsedMs), laps: laps)
        case .counting: .counting(since: now - .milliseconds(last.elapsedMs), laps: laps, now: now)
        }
        let next = (try? snapshot.applying(command, at: now + .milliseconds(1))) ?? snapshot
        let state: Stopwatch.State = switch next.state {
        case .stopped: .stopped
        case .pause: .pause
        case .counting: .counting
        }
        return (state, next.laps.count)
    }

    /// One client per name, each running the same fixed cycle of commands, so the order on
    /// each name is known. What the daemon restores must be the last acknowledged state, or
    /// the state after the next command in the cycle (applied and saved, its reply lost).
    func underLoad(stopWith signal: Int32) throws {
        let directory = try TestDirectory()
        var daemon = try DaemonProcess(socket: directory.socket)
        let names = (0..<20).map { "f\($0)" }
        let acknowledged = Locked<[String: (index: Int, stopwatch: Stopwatch)]>([:])
        let stop = Atomic(false)
        let group = DispatchGroup()
        for name in names {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let connection = try? VarlinkConnection(path: directory.socket, timeout: .seconds(30)) else { return }
                var index = 0
                while !stop.load(ordering: .relaxed) {
                    let command = Self.cycle[index % Self.cycle.count]
                    let method = "\(command)".capitalized
                    guard (try? connection.send(VarlinkCall(method: "io.stopwatchd.\(method)", parameters: ["name": .string(name)]))) != nil,
                        let stopwatch = try? connection.receive().stopwatch(from: connection, method: method)
                    else { return }
                    acknowledged.withLock { $0[name] = (index, stopwatch) }
                    index += 1
                }
            }
        }
        #expect(Deadline.wait { acknowledged.withLock { $0.count == 20 && $0.values.allSatisfy { $0.index >= 12 } } })
        let status = daemon.stop(signal)
        stop.store(true, ordering: .relaxed)
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(status == (signal == SIGTERM ? 0 : 128 + signal))

        daemon = try DaemonProcess(socket: directory.socket)
        let restored = Dictionary(uniqueKeysWithValues: try StopwatchClient(socketPath: directory.socket).list().map { ($0.name, $0) })
        for name in names {
            let (index, last) = try #require(acknowledged.withLock { $0[name] })
            let found = try #require(restored[name], "\(name) is gone")
            let sameAsLast = found.state == last.state && found.lapsMs == last.lapsMs
                && (found.state == .counting ? found.elapsedMs >= last.elapsedMs : found.elapsedMs == last.elapsedMs)
            let next = Self.after(last, Self.cycle[(index + 1) % Self.cycle.count])
            let isNext = found.state == next.state && found.lapsMs.count == next.laps
                && (next.state == .stopped || found.lapsMs.starts(with: last.lapsMs.prefix(next.laps)))
            #expect(sameAsLast || isNext, "\(name): restored \(found); last acknowledged (command \(index)) \(last)")
        }
    }

    @Test("SIGTERM under load: exit 0, and every acknowledged change is there after a restart")
    func sigtermUnderLoad() throws {
        try underLoad(stopWith: SIGTERM)
    }

    @Test("kill -9 under load: after a restart, every acknowledged change is there")
    func killUnderLoad() throws {
        try underLoad(stopWith: SIGKILL)
    }
}
