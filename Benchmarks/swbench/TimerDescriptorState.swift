import Glibc
import LinuxSystem
import Varlink

/// One `timerfd` of another process as /proc/PID/fdinfo/FD shows it: its clock, when it
/// next expires (`it_value`, relative; zero when disarmed) and how it was armed.
struct TimerDescriptorState {
    let descriptor: Int
    /// `clockid:`: 0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC, 7 CLOCK_BOOTTIME.
    let clockID: Int
    /// `it_value:`, seconds and nanoseconds until it expires.
    let value: (seconds: Int, nanoseconds: Int)
    /// `settime flags:` (kernels from 5.17 print them): 1 TFD_TIMER_ABSTIME, 2
    /// TFD_TIMER_CANCEL_ON_SET. Nil where not printed.
    let flags: Int?

    static let bootClock = 7
    static let realtimeClock = 0
    static let cancelOnSet = 2

    var isArmed: Bool { value.seconds != 0 || value.nanoseconds != 0 }

    /// Armed on `CLOCK_REALTIME` with `TFD_TIMER_CANCEL_ON_SET`: the daemon's watch for
    /// steps of the wall clock (`WallClockStepWatch`), armed a century ahead so that it
    /// never expires; only a step of the clock ends its wait.
    var watchesWallClockSteps: Bool {
        clockID == Self.realtimeClock && flags.map { $0 & Self.cancelOnSet != 0 } ?? (value.seconds > 50 * 365 * 86_400)
    }

    /// Every timerfd of `pid`: the descriptors whose fdinfo has `clockid:` and `it_value:`
    /// lines, which only a timerfd's has.
    static func all(of pid: pid_t) -> [TimerDescriptorState] {
        let directory = "/proc/\(pid)/fdinfo"
        let descriptors = ((try? FileSystem.entries(of: directory)) ?? []).compactMap { Int($0) }.sorted()
        return descriptors.compactMap { descriptor in
            guard let bytes = try? FileSystem.contents(of: "\(directory)/\(descriptor)", limit: 1 << 16) else { return nil }
            return TimerDescriptorState(descriptor: descriptor, fdinfo: String(decoding: bytes, as: UTF8.self))
        }
    }

    init?(descriptor: Int, fdinfo: String) {
        var clockID: Int?, value: (Int, Int)?, flags: Int?
        for line in fdinfo.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let field = parts[1].filter { $0 != " " && $0 != "\t" }
            switch parts[0] {
            case "clockid": clockID = Int(field)
            // Printed in octal ("settime flags:\t03").
            case "settime flags": flags = Int(field, radix: 8)
            case "it_value":
                // "(12, 345678900)"
                let numbers = field.split { $0 == "(" || $0 == ")" || $0 == "," || $0 == " " }.compactMap { Int($0) }
                if numbers.count == 2 { value = (numbers[0], numbers[1]) }
            default: break
            }
        }
        guard let clockID, let value else { return nil }
        self.descriptor = descriptor
        self.clockID = clockID
        self.value = value
        self.flags = flags
    }

    var json: JSONValue {
        var object: JSONObject = [
            "fd": .int(Int64(descriptor)),
            "clockid": .int(Int64(clockID)),
            "it_value_s": .int(Int64(value.seconds)),
            "it_value_ns": .int(Int64(value.nanoseconds)),
        ]
        object["settime_flags"] = flags.map { .int(Int64($0)) } ?? .null
        return .object(object)
    }
}
