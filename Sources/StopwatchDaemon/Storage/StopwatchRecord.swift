import StopWatchCore
import StopwatchProtocol
import Varlink

/// How one stopwatch is kept on disk (format 1):
///
///     {"format":1,"name":"tea","state":"counting","elapsed_ns":5000000000,"laps_ns":[],
///      "boot_id":"…","origin_boot_ns":…,"origin_wall_ns":…,"interval_start_ns":2000000000,
///      "target_ns":240000000000,"expired":false}
///
/// `elapsed_ns` is what it had counted when written. A counting one also keeps where its
/// count began, on the boot clock and on the wall clock, and which boot that was. A
/// counting one keeps the elapsed time its current counting interval began at
/// (`interval_start_ns`; absent in files of earlier versions: zero, the whole count one
/// interval), so that the interval reaches the history whole after a restart. A
/// countdown keeps its target, and whether its expiry was delivered: a restart neither
/// repeats it nor loses one that fell while the daemon was down. (Both fields are absent
/// for a plain stopwatch, so its file is what earlier versions wrote and read.)
///
/// Fields added since, each absent where it says nothing, so files of earlier versions load
/// as they are (and earlier versions read these, skipping members they do not know; a
/// stopped plain stopwatch's file is still what they wrote):
/// - `counts_sleep` (only `false`): it counts only time awake. A counting one then also keeps
///   its origin on the awake clock (`origin_awake_ns`), exact in the same boot; its
///   `origin_boot_ns` and `origin_wall_ns` are where a count of the same elapsed time on
///   the boot and wall clocks began, so after a reboot (or for an earlier version) it goes on
///   from the wall clock as any other.
/// - `note`: while counting, the note of its counting interval.
/// - `interval_start_boot_ns` and `interval_start_wall_ns` (only with `counts_sleep`): while
///   counting, when its counting interval began on the boot clock (exact in the same boot)
///   and on the wall clock (after a reboot), which its awake-clock origin cannot tell once
///   it slept; `lap_boot_ns`, when its latest lap was taken on the boot clock (same boot).
/// - `transition_boot_ns`, `transition_wall_ns` and (with `counts_sleep`) `transition_awake_ns`:
///   while paused, when it was stopped, which no start dated in the past may precede: on the
///   boot clock, with `boot_id`, exact in the same boot, on the awake clock, to tell the sleep
///   since, and on the wall clock for after a reboot (a counting one's latest transition is
///   where its counting interval began, which its origin and `interval_start_ns` say).
/// - `cycle` (only with `target_ns`): the cycle it runs, `{"phases":[{"label":…,"target_ns":…}…],
///   "phase":P,"round":R[,"rounds":N],"auto":A}` (`phase` 0-based, `round` 1-based, no
///   `rounds` for one without end), within `CyclePlan`'s limits, as StartCycle takes them;
///   its `target_ns` is the current phase's (or, snoozed, what the snoozes made it).
/// - `snooze` (only with `target_ns`): a countdown's snoozes since it last began anew,
///   `{"count":C,"original_target_ns":T}`. A snoozed countdown's `target_ns` is the elapsed
///   time at the latest snooze plus its length: any number of nanoseconds up to 100 years
///   and 24 hours, not a target as given in milliseconds.
///
/// Boot and awake clock readings count only in the boot they were written in (`boot_id`);
/// after a reboot the wall-clock ones stand in for them.
package struct StopwatchRecord: Equatable, Sendable {
    package static let format: Int64 = 1
    /// The most elapsed time (or lap) a record may hold: 100 years. Anything beyond is a
    /// damaged or forged file, not a stopwatch: well short of the ~292 years at which
    /// nanoseconds overflow Int64, so no arithmetic on a loaded record comes near it.
    package static let maximumElapsed = Duration.seconds(Int64(100 * 365.25 * 86_400))

    package var name: String
    /// Written as the wire spells it (`stopped`, `counting`, `pause`).
    package var state: Stopwatch.State
    package var elapsed: Duration
    package var laps: [Duration]
    /// While counting: the origin on each clock, and the boot they belong to.
    package var originBoot: Duration?
    package var originWall: Duration?
    package var bootID: String?
    /// While counting: the elapsed time the current counting interval began at.
    package var intervalStart: Duration?
    /// A countdown's target, and whether its expiry was delivered.
    package var target: Duration?
    package var hasExpired = false
    /// false: it counts only time awake (`CLOCK_MONOTONIC`).
    package var countsSleep = true
    /// While counting and skipping sleep: its origin on the awake clock.
    package var originAwake: Duration?
    /// While counting: the note of its counting interval.
    package var note: String?
    /// While counting: its counting interval's id (`interval_id`, 16 hex digits), the one
    /// History shows and the stop writes; absent in files of earlier versions. The daemon's
    /// (`StopwatchRegistry`'s table), not the core's: set by the state store, not by `init`.
    package var intervalID: String?
    /// An `interval_id` read that is not one (as JSON), ignored: the interval gets a new id.
    package var ignoredIntervalID: String?
    /// While counting and skipping sleep: when its counting interval began, on the boot clock
    /// and on the wall clock, and when its latest lap was taken on the boot clock (if known).
    package var intervalStartBoot: Duration?
    package var intervalStartWall: Duration?
    package var latestLapBoot: Duration?
    /// While paused: when it was stopped, when known: on the boot clock, the awake clock (for
    /// one that skips sleep) and the wall clock.
    package var latestTransitionBoot: Duration?
    package var latestTransitionAwake: Duration?
    package var latestTransitionWall: Duration?
    /// A countdown's cycle, and its snoozes (the core's; both need `target`).
    package var cycle: StopWatchCycle?
    package var snooze: StopWatchSnooze?
    /// The journal's sequence number this record holds (`StopwatchJournal`): its lines up to
    /// it are older than the record. 0: none (absent from the file).
    package var journalSequence: Int64 = 0
    /// The journal this record begins (a snapshot) or belongs to (a line): a new id at each
    /// snapshot, so that no line of an earlier one, or of a stopwatch of the same name
    /// removed since, is replayed over it. 16 lowercase hex digits; nil: none.
    package var journalID: String?

    /// The record of `snapshot` at `now`.
    package init(name: String, snapshot: StopWatchSnapshot, at now: ClockReading) {
        self.name = name
        self.laps = snapshot.laps
        self.target = snapshot.target
        self.hasExpired = snapshot.hasExpired
        self.cycle = snapshot.cycle
        self.snooze = snapshot.snooze
        self.countsSleep = snapshot.countsSleep
        let reading = snapshot.reading(at: now.instant)
        self.elapsed = snapshot.elapsed(at: reading)
        self.state = Stopwatch.State(snapshot.state)
        if let origin = snapshot.origin {
            // On the boot clock: where a count of the same elapsed time began (the origin
            // itself for one that counts sleep).
            originBoot = now.boot - (reading - origin)
            if !snapshot.countsSleep { originAwake = origin }
            // Not before the epoch: a clock that read 1970 (no RTC, before NTP) would otherwise
            // write an origin the reader refuses as out of range.
            originWall = max(now.wall - (reading - origin), .zero)
            bootID = now.bootID
            intervalStart = snapshot.elapsedAtIntervalStart
            note = snapshot.note
            if !snapshot.countsSleep, let began = snapshot.intervalStartBoot, let originWall {
                intervalStartBoot = began
                // Never after where its origin places it (what a reader checks): the clocks
                // are read one after the other.
                let wall = min(now.wall - max(now.boot - began, .zero), originWall + (intervalStart ?? .zero))
                if wall > .zero { intervalStartWall = wall }
                latestLapBoot = snapshot.latestLapBoot
            }
        }
        if let latest = snapshot.pausedAt {
            // On the boot clock: as far back as on its own clock, when not known there (a file
            // of an earlier version's stop of one that skips sleep).
            let boot = min(snapshot.pausedAtBoot ?? now.boot - max(reading - latest, .zero), now.boot)
            bootID = now.bootID
            latestTransitionBoot = boot
            if !snapshot.countsSleep { latestTransitionAwake = min(latest, now.awake) }
            latestTransitionWall = max(now.wall - (now.boot - boot), .zero)
        }
    }

    /// The stopwatch as it is at `now`. Counting on: exactly, from its own clock, in the
    /// same boot; from the wall clock after a reboot, where a clock set back never takes away
    /// what was already counted.
    package func snapshot(restoredAt now: ClockReading) -> StopWatchSnapshot {
        restoredState(at: now).restoring(cycle: cycle, snooze: snooze)
    }

    /// `snapshot(restoredAt:)` without its cycle and snoozes.
    private func restoredState(at now: ClockReading) -> StopWatchSnapshot {
        let reading = countsSleep ? now.boot : now.awake
        let sameBoot = bootID == now.bootID
        switch state {
        case .stopped:
            return .stopped(target: target, countsSleep: countsSleep)
        case .pause:
            // When it was stopped: exactly in the same boot; after a reboot, as far back as on
            // the wall clock (nothing tells sleep from shutdown then).
            var latest: (own: Duration, boot: Duration)?
            if sameBoot, let boot = latestTransitionBoot {
                latest = (countsSleep ? boot : latestTransitionAwake ?? now.awake - max(now.boot - boot, .zero), boot)
            } else if let wall = latestTransitionWall {
                let since = max(now.wall - wall, .zero)
                latest = (reading - since, now.boot - since)
            }
            return .paused(
                at: elapsed, laps: laps, target: target, hasExpired: hasExpired, countsSleep: countsSleep,
                latestTransition: latest?.own, latestTransitionBoot: latest?.boot
            )
        case .counting:
            let counted: Duration
            if bootID == now.bootID, !countsSleep, let originAwake {
                counted = max(now.awake - originAwake, elapsed)
            } else if bootID == now.bootID, let originBoot {
                counted = max(now.boot - originBoot, elapsed)
            } else if let originWall {
                counted = max(now.wall - originWall, elapsed)
            } else {
                counted = elapsed
            }
            let intervalStartBoot = sameBoot ? self.intervalStartBoot : nil
            return .counting(
                since: reading - counted, laps: laps, now: reading, target: target, hasExpired: hasExpired,
                intervalStart: intervalStart ?? .zero, countsSleep: countsSleep, note: note,
                intervalStartBoot: countsSleep ? nil : intervalStartBoot ?? intervalStartWall.map { now.boot - max(now.wall - $0, .zero) },
                latestLapBoot: sameBoot && !countsSleep ? latestLapBoot : nil
            )
        }
    }

    /// Whether the wall-clock origin no longer agrees with the boot-clock one, in the boot
    /// it was written in: the wall clock was set while no daemon ran to see it (one that
    /// exited on idle), so the file is to be written again against the clock as it is now.
    /// Kept as it is, a reboot would add or take away the step.
    package func wallOriginIsStale(at now: ClockReading) -> Bool {
        guard state == .counting, bootID == now.bootID, let originBoot, let originWall, originBoot <= now.boot else {
            return false
        }
        let expected = now.wall - (now.boot - originBoot)
        let difference = expected > originWall ? expected - originWall : originWall - expected
        return difference > Self.wallClockTolerance
    }

    /// How far the two origins may disagree before the file is written again: the clocks
    /// are read one after the other, and NTP slews the wall clock by milliseconds.
    static let wallClockTolerance = Duration.seconds(1)

    private static func isInRange(_ nanoseconds: Int64) -> Bool {
        nanoseconds >= 0 && Duration.nanoseconds(nanoseconds) <= maximumElapsed
    }

    /// Throws when the record cannot be true at `now`: on the boot it was written in, an
    /// origin later than now or more than 100 years back; on any boot, a wall-clock origin
    /// more than 100 years back. A wall-clock origin later than now is not an error: after a
    /// reboot that is a clock set back, and `snapshot(restoredAt:)` keeps the stored elapsed.
    package func checkRange(at now: ClockReading) throws(MalformedMessage) {
        if let latestTransitionWall, now.wall - latestTransitionWall > Self.maximumElapsed {
            throw MalformedMessage("transition_wall_ns is more than 100 years ago")
        }
        if bootID == now.bootID {
            for (key, value, clock) in [
                ("transition_boot_ns", latestTransitionBoot, now.boot), ("transition_awake_ns", latestTransitionAwake, now.awake),
                ("interval_start_boot_ns", intervalStartBoot, now.boot), ("lap_boot_ns", latestLapBoot, now.boot),
            ] {
                guard let value else { continue }
                guard value <= clock else { throw MalformedMessage("\(key) is in the future") }
                guard clock - value <= Self.maximumElapsed else { throw MalformedMessage("\(key) is more than 100 years ago") }
            }
        }
        guard state == .counting, let originBoot, let originWall else { return }
        if bootID == now.bootID {
            guard originBoot <= now.boot else { throw MalformedMessage("origin_boot_ns is in the future") }
            guard now.boot - originBoot <= Self.maximumElapsed else {
                throw MalformedMessage("origin_boot_ns makes elapsed more than 100 years")
            }
            if let originAwake {
                guard originAwake <= now.awake else { throw MalformedMessage("origin_awake_ns is in the future") }
                guard now.awake - originAwake <= Self.maximumElapsed else {
                    throw MalformedMessage("origin_awake_ns makes elapsed more than 100 years")
                }
            }
        }
        guard now.wall - originWall <= Self.maximumElapsed else {
            throw MalformedMessage("origin_wall_ns is more than 100 years ago")
        }
    }

    /// An optional integer member, as a duration of nanoseconds (its range is `checkRange`'s).
    private static func optionalInteger(_ object: JSONObject, _ key: String) throws(MalformedMessage) -> Duration? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let value)?: return .nanoseconds(value)
        default: throw MalformedMessage("\(key) is not an integer")
        }
    }

    package var json: JSONValue {
        .object(object(laps: .array(laps.map { .int($0.nanoseconds) })))
    }

    /// `json.serialized`, byte for byte, with the laps written straight from the durations:
    /// a stopwatch of 10,000 laps is written again at every lap (SPEC §4), and a `JSONValue`
    /// made of each lap first was a third of that write's instructions.
    package var serialized: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + 21 * laps.count)
        bytes.append(UInt8(ascii: "{"))
        for (index, member) in object(laps: nil).members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(member.key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if member.key == Self.lapsKey {
                bytes.append(UInt8(ascii: "["))
                for (lapIndex, lap) in laps.enumerated() {
                    if lapIndex > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONValue.writeInteger(lap.nanoseconds, into: &bytes)
                }
                bytes.append(UInt8(ascii: "]"))
            } else {
                member.value.write(into: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private static let lapsKey = "laps_ns"

    /// The record's members; `laps` in place of the laps (nil: an empty array, for
    /// `serialized` to fill).
    private func object(laps lapsValue: JSONValue?) -> JSONObject {
        var object: JSONObject = [
            "format": .int(Self.format),
            "name": .string(name),
            "state": .string(state.rawValue),
            "elapsed_ns": .int(elapsed.nanoseconds),
            Self.lapsKey: lapsValue ?? .array([]),
        ]
        if let bootID { object["boot_id"] = .string(bootID) }
        if bootID != nil, let originBoot, let originWall {
            object["origin_boot_ns"] = .int(originBoot.nanoseconds)
            object["origin_wall_ns"] = .int(originWall.nanoseconds)
            if let intervalStart { object["interval_start_ns"] = .int(intervalStart.nanoseconds) }
            if let originAwake { object["origin_awake_ns"] = .int(originAwake.nanoseconds) }
            if let note { object["note"] = .string(note) }
            if let intervalID { object["interval_id"] = .string(intervalID) }
            if let intervalStartBoot { object["interval_start_boot_ns"] = .int(intervalStartBoot.nanoseconds) }
            if let intervalStartWall { object["interval_start_wall_ns"] = .int(intervalStartWall.nanoseconds) }
            if let latestLapBoot { object["lap_boot_ns"] = .int(latestLapBoot.nanoseconds) }
        }
        if !countsSleep { object["counts_sleep"] = .bool(false) }
        if journalSequence > 0 { object[StopwatchJournal.sequenceKey] = .int(journalSequence) }
        if let journalID { object[StopwatchJournal.idKey] = .string(journalID) }
        if let latestTransitionBoot { object["transition_boot_ns"] = .int(latestTransitionBoot.nanoseconds) }
        if let latestTransitionAwake { object["transition_awake_ns"] = .int(latestTransitionAwake.nanoseconds) }
        if let latestTransitionWall { object["transition_wall_ns"] = .int(latestTransitionWall.nanoseconds) }
        if let target {
            object["target_ns"] = .int(target.nanoseconds)
            object["expired"] = .bool(hasExpired)
            if let cycle { object[Self.cycleKey] = Self.json(cycle) }
            if let snooze {
                object[Self.snoozeKey] = .object([
                    "count": .int(Int64(snooze.count)), "original_target_ns": .int(snooze.originalTarget.nanoseconds),
                ])
            }
        }
        return object
    }

    private static let cycleKey = "cycle"
    private static let snoozeKey = "snooze"

    /// The most snoozes a record may count: one a second (the shortest snooze) for 100 years.
    /// More is a damaged or forged file, and one more snooze must not overflow the count.
    package static let maximumSnoozes: Int64 = maximumElapsed.nanoseconds / 1_000_000_000

    /// The most a snoozed countdown's target may be: the longest elapsed time, and the
    /// longest snooze after it.
    package static let maximumSnoozedTarget = maximumElapsed + CyclePlan.snooze.upperBound

    private static func json(_ cycle: StopWatchCycle) -> JSONValue {
        var object: JSONObject = [
            "phases": .array(cycle.phases.map { .object(["label": .string($0.label), "target_ns": .int($0.target.nanoseconds)]) }),
            "phase": .int(Int64(cycle.phase)),
            "round": .int(Int64(cycle.round)),
        ]
        if let rounds = cycle.rounds { object["rounds"] = .int(Int64(rounds)) }
        object["auto"] = .bool(cycle.auto)
        return .object(object)
    }

    /// A target as StartCycle and SetTarget take it (whole milliseconds, 1 ms to 366 days),
    /// in nanoseconds; nil otherwise.
    private static func countdownTarget(_ value: JSONValue?) -> Duration? {
        guard case .int(let nanoseconds)? = value, nanoseconds % 1_000_000 == 0 else { return nil }
        return CountdownTarget.duration(milliseconds: nanoseconds / 1_000_000)
    }

    /// The cycle `value` says, within `CyclePlan`'s limits and at a position it has; throws
    /// otherwise (`StopWatchCycle` would clamp a position out of range: a file may not).
    private static func cycle(_ value: JSONValue) throws(MalformedMessage) -> StopWatchCycle {
        guard case .object(let object) = value else { throw MalformedMessage("cycle is not an object") }
        guard case .array(let list)? = object["phases"], CyclePlan.phaseCount.contains(list.count) else {
            throw MalformedMessage("cycle.phases is not a list of \(CyclePlan.phaseRule)")
        }
        var phases: [StopWatchCycle.Phase] = []
        for item in list {
            guard case .object(let phase) = item, case .string(let label)? = phase["label"], CyclePlan.isValidLabel(label) else {
                throw MalformedMessage("a phase of cycle.phases without a valid label (\(CyclePlan.labelRule))")
            }
            guard let target = countdownTarget(phase["target_ns"]) else {
                throw MalformedMessage("a phase of cycle.phases without a target_ns of whole milliseconds \(CountdownTarget.rule)")
            }
            phases.append(StopWatchCycle.Phase(label: label, target: target))
        }
        var rounds: Int?
        switch object["rounds"] {
        case nil, .null?: break
        case .int(let count)? where Int(exactly: count).map(CyclePlan.roundCount.contains) == true: rounds = Int(count)
        default: throw MalformedMessage("cycle.rounds is not \(CyclePlan.roundRule)")
        }
        guard case .int(let phase)? = object["phase"], phase >= 0, phase < Int64(phases.count) else {
            throw MalformedMessage("cycle.phase is not one of its \(phases.count) phases (0 to \(phases.count - 1))")
        }
        // Int(exactly:): no number in a file may trap a conversion.
        guard case .int(let round)? = object["round"], round >= 1, let roundNumber = Int(exactly: round),
            roundNumber <= rounds ?? Int.max
        else { throw MalformedMessage("cycle.round is not a round from 1 to its rounds") }
        guard case .bool(let auto)? = object["auto"] else { throw MalformedMessage("cycle.auto is not true or false") }
        guard let cycle = StopWatchCycle(phases: phases, rounds: rounds, auto: auto, phase: Int(phase), round: roundNumber) else {
            throw MalformedMessage("cycle is not a cycle")
        }
        return cycle
    }

    /// The snoozes `value` says: from 1 to `maximumSnoozes`, and the target before them.
    private static func snooze(_ value: JSONValue) throws(MalformedMessage) -> StopWatchSnooze {
        guard case .object(let object) = value else { throw MalformedMessage("snooze is not an object") }
        // Below Int.max too (a 32-bit Int's): the next snooze adds one.
        guard case .int(let count)? = object["count"], count >= 1, count <= maximumSnoozes, let number = Int(exactly: count), number < Int.max else {
            throw MalformedMessage("snooze.count is not a number from 1 to \(maximumSnoozes)")
        }
        guard let original = countdownTarget(object["original_target_ns"]) else {
            throw MalformedMessage("snooze.original_target_ns is not a whole number of milliseconds \(CountdownTarget.rule)")
        }
        return StopWatchSnooze(count: number, originalTarget: original)
    }

    package init(json: JSONValue) throws(MalformedMessage) {
        guard case .object(let object) = json else { throw MalformedMessage("not a JSON object") }
        guard case .int(let format)? = object["format"] else { throw MalformedMessage("no format version") }
        guard format == Self.format else {
            throw MalformedMessage("format \(format), but this stopwatchd reads format \(Self.format)")
        }
        guard case .string(let name)? = object["name"], StopwatchName.isValid(name) else {
            throw MalformedMessage("no valid name")
        }
        guard case .string(let stateName)? = object["state"], let state = Stopwatch.State(rawValue: stateName) else {
            throw MalformedMessage("no valid state")
        }
        guard case .int(let elapsed)? = object["elapsed_ns"], Self.isInRange(elapsed) else {
            throw MalformedMessage("no valid elapsed_ns (0 to 100 years)")
        }
        guard case .array(let lapValues)? = object["laps_ns"] else { throw MalformedMessage("no laps_ns") }
        var laps: [Duration] = []
        laps.reserveCapacity(lapValues.count)
        for value in lapValues {
            guard case .int(let lap) = value, Self.isInRange(lap) else { throw MalformedMessage("a lap that is not a duration of 0 to 100 years") }
            laps.append(.nanoseconds(lap))
        }
        self.name = name
        self.state = state
        self.elapsed = .nanoseconds(elapsed)
        self.laps = laps
        if state == .counting {
            guard case .string(let bootID)? = object["boot_id"], case .int(let originBoot)? = object["origin_boot_ns"],
                case .int(let originWall)? = object["origin_wall_ns"]
            else { throw MalformedMessage("a counting stopwatch without its origin") }
            // The wall clock's origin is never written below zero (see `init(name:snapshot:at:)`).
            // The boot clock's may be: a stopwatch carried over a reboot began before this boot.
            guard originWall >= 0 else { throw MalformedMessage("a negative origin_wall_ns") }
            self.bootID = bootID
            self.originBoot = .nanoseconds(originBoot)
            self.originWall = .nanoseconds(originWall)
            switch object["interval_start_ns"] {
            case nil, .null?: break
            case .int(let start)? where Self.isInRange(start) && start <= elapsed: intervalStart = .nanoseconds(start)
            default: throw MalformedMessage("interval_start_ns is not a duration of 0 to elapsed_ns")
            }
            switch object["origin_awake_ns"] {
            case nil, .null?: break
            case .int(let origin)?: originAwake = .nanoseconds(origin)
            default: throw MalformedMessage("origin_awake_ns is not an integer")
            }
            // Its counting interval began no later than where its origin places it: the awake
            // clock runs no faster than the wall clock.
            let latestStart = Duration.nanoseconds(originWall) + (intervalStart ?? .zero)
            switch object["interval_start_wall_ns"] {
            case nil, .null?: break
            case .int(let wall)? where wall > 0 && .nanoseconds(wall) <= latestStart: intervalStartWall = .nanoseconds(wall)
            default: throw MalformedMessage("interval_start_wall_ns is not a time from the epoch to origin_wall_ns + interval_start_ns")
            }
            intervalStartBoot = try Self.optionalInteger(object, "interval_start_boot_ns")
            latestLapBoot = try Self.optionalInteger(object, "lap_boot_ns")
            switch object["note"] {
            case nil, .null?: break
            case .string(let note)? where IntervalNote.isValid(note): self.note = note
            default: throw MalformedMessage("note is not a valid note (\(IntervalNote.rule))")
            }
            switch object["interval_id"] {
            case nil, .null?: break
            case .string(let id)? where IntervalID.isValid(id): intervalID = id
            // Not worth the stopwatch: its interval gets a new id at the restore (logged).
            case let bad?: ignoredIntervalID = String(bad.text.prefix(64))
            }
        }
        switch object["counts_sleep"] {
        case nil, .null?: break
        case .bool(let counts)?: countsSleep = counts
        default: throw MalformedMessage("counts_sleep is not true or false")
        }
        switch object[StopwatchJournal.sequenceKey] {
        case nil, .null?: break
        case .int(let sequence)? where sequence >= 0 && sequence < StopwatchJournal.sequenceBound: journalSequence = sequence
        default: throw MalformedMessage("\(StopwatchJournal.sequenceKey) is not an integer from 0 to 2^62")
        }
        switch object[StopwatchJournal.idKey] {
        case nil, .null?: break
        case .string(let id)? where IntervalID.isValid(id): journalID = id
        default: throw MalformedMessage("\(StopwatchJournal.idKey) is not 16 lowercase hex digits")
        }
        if state != .counting {
            switch object["boot_id"] {
            case nil, .null?: break
            case .string(let bootID)?: self.bootID = bootID
            default: throw MalformedMessage("boot_id is not a string")
            }
        }
        switch object["transition_wall_ns"] {
        case nil, .null?: break
        case .int(let wall)? where wall >= 0: latestTransitionWall = .nanoseconds(wall)
        default: throw MalformedMessage("transition_wall_ns is not a non-negative integer")
        }
        latestTransitionBoot = try Self.optionalInteger(object, "transition_boot_ns")
        latestTransitionAwake = try Self.optionalInteger(object, "transition_awake_ns")
        switch object[Self.snoozeKey] {
        case nil, .null?: break
        case let value?: snooze = try Self.snooze(value)
        }
        switch object["target_ns"] {
        case nil, .null?:
            break
        case .int(let target)? where snooze != nil:
            // A snooze's: the elapsed time then plus the snooze, to the nanosecond.
            guard target > 0, Duration.nanoseconds(target) <= Self.maximumSnoozedTarget else {
                throw MalformedMessage("target_ns of a snoozed countdown is not a duration from 1 ns to 100 years and 24 hours")
            }
            self.target = .nanoseconds(target)
        case .int(let target)?:
            // Targets come in whole milliseconds (`target_ms`).
            guard target % 1_000_000 == 0, CountdownTarget.duration(milliseconds: target / 1_000_000) != nil else { throw MalformedMessage("target_ns is not a whole number of milliseconds from 1 ms to 366 days") }
            self.target = .nanoseconds(target)
        default:
            throw MalformedMessage("target_ns is not an integer")
        }
        switch object[Self.cycleKey] {
        case nil, .null?: break
        case let value?: cycle = try Self.cycle(value)
        }
        if target == nil, cycle != nil || snooze != nil {
            throw MalformedMessage("\(cycle != nil ? "a cycle" : "a snooze") without target_ns")
        }
        switch object["expired"] {
        case nil, .null?: break
        case .bool(let expired)?: hasExpired = expired && target != nil
        default: throw MalformedMessage("expired is not true or false")
        }
    }
}
