import Glibc
import LinuxSystem
import StopwatchProtocol
import Varlink

/// The baseline for the fan-out: a thread in swbench that sleeps until each tick boundary
/// on `CLOCK_BOOTTIME` and writes a tick message (of the daemon's format) to 1,000 Unix
/// stream sockets, read by the same reader as the daemon's watchers. What is left of the
/// delays is the kernel's and the reader's share.
enum RawFanOut {
    static func run(watchers: Int, ticks: Int, tick: Duration) throws(BenchError) -> FanOutResult {
        var senders: [FileDescriptor] = [], receivers: [FileDescriptor] = []
        defer { (senders + receivers).forEach { $0.close() } }
        for _ in 0..<watchers {
            var pair: [CInt] = [0, 0]
            guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw BenchError("socketpair failed: \(Errno(errno))")
            }
            senders.append(FileDescriptor(rawValue: pair[0]))
            receivers.append(FileDescriptor(rawValue: pair[1]))
        }
        let reader = WatcherReader(receivers)
        let origin = Now.boot() + .milliseconds(200)
        let sockets = senders
        let sender = BenchThread { send(to: sockets, origin: origin, ticks: ticks, tick: tick) }
        let harvest = reader.finish(at: origin + tick * ticks + tick / 2)
        let cpu = sender.join()
        let statistics = TickStatistics(harvest.deliveries, watchers: watchers, ticks: ticks, tick: tick, origin: origin)
        return FanOutResult(statistics: statistics, cpuPercent: cpu.inSeconds / (tick * ticks).inSeconds * 100, closed: harvest.closed)
    }

    /// Sends tick 1…`ticks` to every socket, each at its boundary; returns the CPU time used.
    private static func send(to sockets: [FileDescriptor], origin: Duration, ticks: Int, tick: Duration) -> Duration {
        let cpuAtStart = threadCPUTime()
        for k in 1...ticks {
            sleep(until: origin + tick * k)
            let elapsed = Now.boot() - origin
            let stopwatch = Stopwatch(name: "fan", state: .counting, elapsedMs: elapsed.milliseconds)
            let message = VarlinkReply(parameters: ["stopwatch": stopwatch.json], continues: true).message
            for socket in sockets {
                var sent = 0
                while sent < message.count, let count = try? socket.send(message, from: sent) { sent += count }
            }
        }
        return threadCPUTime() - cpuAtStart
    }

    /// `clock_nanosleep` to an absolute time on `CLOCK_BOOTTIME`.
    private static func sleep(until instant: Duration) {
        let (seconds, attoseconds) = instant.components
        var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        while clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &time, nil) == EINTR {}
    }

    private static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
