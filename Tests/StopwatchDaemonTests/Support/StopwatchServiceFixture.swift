import Dispatch
import LinuxSystem
import StopWatchCore
import StopwatchProtocol
@testable import StopwatchDaemon
import StopWatchTesting
import Testing
import Varlink

/// What the service saved, in order: the in-memory `StopwatchStorage` for tests.
// Unchecked: used only on the fixture's queue (serial), as the daemon's store is.
final class SavedSnapshots: StopwatchStorage, @unchecked Sendable {
    private(set) var saves: [(name: String, snapshot: StopWatchSnapshot?)] = []
    /// What a name is now, for `saveSoon`: the registry's, set once it exists.
    var current: (String) -> StopWatchSnapshot? = { _ in nil }
    private let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func save(_ name: String, _ snapshot: StopWatchSnapshot?) {
        saves.append((name, snapshot))
    }

    /// As `StateStore` does: written in a later turn of the queue, as they are then.
    func saveSoon(_ names: [String]) {
        guard !names.isEmpty else { return }
        queue.async { [self] in
            for name in names { save(name, current(name)) }
        }
    }
}

/// The io.stopwatchd service on manual time, with its registry and a recording store; every
/// use goes through `queue`, as in the daemon.
final class StopwatchServiceFixture: @unchecked Sendable {
    // Unchecked: every property but the constants is used only on `queue` (serial).
    let time: ManualTime
    /// `time`'s timers that `open.json`'s window made (counted apart from the expiries').
    let openIntervalsTimers: CountedTimers
    let queue = DispatchQueue(label: "service-test")
    let registry: StopwatchRegistry
    let storage: SavedSnapshots
    let service: VarlinkService
    /// What the service reported, on `queue`.
    final class Told {
        var changes = 0
        /// What the hooks were told, in order.
        var events: [StopwatchEvent] = []
        /// The expiries recorded as told, in order, and each batch as it came.
        var expiries: [ToldExpiry] = []
        var batches: [EventBatch] = []
        /// Called with each batch as it is told, on `queue`, before the turn goes on.
        var whenTold: (EventBatch) -> Void = { _ in }
    }
    /// On `queue` only (a watcher's callback there may read it directly).
    let told = Told()
    let stopwatches: StopwatchService
    let wallClock: ManualWallClock
    let history: HistoryJournal?

    /// - Parameters:
    ///   - now: where the manual clock starts.
    ///   - restored: the stopwatches a daemon would have read at start.
    ///   - asleep: how long the machine was suspended before (the boot clock reads `now +
    ///     asleep`, the awake clock `now`).
    init(
        maximumStopwatches: Int = 100,
        maximumLaps: Int = 1000,
        maximumPendingEvents: Int = 1024,
        now: Duration = .zero,
        asleep: Duration = .zero,
        restored: [(name: String, snapshot: StopWatchSnapshot)] = [],
        toldBeforeRestart: [ToldExpiry] = [],
        restoredIDs: [String: String] = [:],
        historyDirectory: String? = nil,
        wallClock: ManualWallClock = ManualWallClock(1_700_000_000_000),
        historyBatchSize: Int = 10_000,
        historyKeepDays: Int? = nil,
        historyMemory: HistoryMemory = HistoryMemory(limit: 32 * 1024 * 1024),
        logged: Locked<[String]> = Locked([]),
        device: (id: String, name: String, folder: String, limit: Int)? = nil
    ) {
        self.wallClock = wallClock
        let queue = self.queue
        history = historyDirectory.map { path in
            HistoryJournal(
                openDirectory: { () throws(Errno) in
                    try DirectoryDescriptor.open(path, creatingWith: 0o700)
                },
                logger: Logger(minimumLevel: .info, journald: false) { line in logged.withLock { $0.append(line) } },
                queue: queue,
                wallClock: wallClock,
                keepDays: historyKeepDays,
                retryInterval: .seconds(3600),
                deviceID: device?.id ?? "",
                deviceName: device?.name ?? "",
                // The history folder holding `path` and the other devices' folders.
                openFolder: device.map { StopwatchServiceFixture.opening($0.folder) },
                deviceLimit: device?.limit ?? 64
            )
        }
        time = ManualTime(now: now)
        if asleep > .zero { time.suspend(for: asleep) }
        storage = SavedSnapshots(queue: queue)
        let time = self.time
        openIntervalsTimers = CountedTimers(time)
        registry = StopwatchRegistry(limit: maximumStopwatches, queue: queue) { snapshot in
            StopWatchUseCase(snapshot, clock: time, timers: time, tick: .seconds(1))
        }
        service = VarlinkService(info: .init(vendor: "test", product: "stopwatchd", version: "0", url: "http://test"))
        stopwatches = StopwatchService(
            registry: registry,
            storage: storage,
            clock: time,
            expiryTimers: time.bootTimers,
            awakeExpiryTimers: time.awakeTimers,
            openIntervalsTimers: openIntervalsTimers,
            queue: queue,
            maximumLaps: maximumLaps,
            maximumPendingEvents: maximumPendingEvents,
            logger: Logger(minimumLevel: .info, journald: false) { line in logged.withLock { $0.append(line) } },
            changed: { [told] in told.changes += 1 },
            tell: { [told] batch in
                told.events += batch.events
                told.expiries += batch.expiries
                told.batches.append(batch)
                told.whenTold(batch)
            },
            history: history,
            wallClock: wallClock,
            historyBatchSize: historyBatchSize,
            historyMemory: historyMemory
        )
        service.register(stopwatches.interface)
        let registry = self.registry
        storage.current = { registry.created($0)?.state.current }
        queue.sync {
            for (name, snapshot) in restored { _ = try? registry.create(name, from: snapshot) }
            for (name, id) in restoredIDs { registry.setIntervalID(id, of: name) }
            stopwatches.resumeCountdowns(told: toldBeforeRestart)
        }
    }

    /// Opens the folder at `path` (the history folder, for the other devices' folders).
    static func opening(_ path: String) -> () throws(Errno) -> DirectoryDescriptor {
        { () throws(Errno) in try DirectoryDescriptor.open(path) }
    }

    /// Calls `method` (`io.stopwatchd.` is added when it has no dot) on the queue.
    func call(_ method: String, _ parameters: JSONObject = [:], more: Bool = false) -> Result<VarlinkAnswer, VarlinkError> {
        let method = method.contains(".") ? method : "io.stopwatchd.\(method)"
        return queue.sync { service.answer(VarlinkCall(method: method, parameters: parameters, more: more)) }
    }

    /// The reply's parameters, or nil for an error or a stream.
    func reply(_ method: String, _ parameters: JSONObject = [:]) -> JSONObject? {
        switch call(method, parameters) {
        case .success(.reply(let reply)): return reply
        case .success(.message(let message)):
            // Written without a tree (a command's stopwatch): read back as a client would.
            guard message.last == 0, let json = try? JSONParser.parse(Array(message.dropLast())), let reply = try? VarlinkReply(json: json) else {
                Issue.record("a reply written without a tree does not read back: \(String(decoding: message, as: UTF8.self))")
                return nil
            }
            return reply.error == nil ? reply.parameters : nil
        default: return nil
        }
    }

    /// The error name the call answered with, or nil.
    func error(_ method: String, _ parameters: JSONObject = [:]) -> String? {
        guard case .failure(let error) = call(method, parameters) else { return nil }
        return error.name
    }

    /// The `stopwatch` of a reply, as the client reads it.
    func stopwatch(_ method: String, _ name: String) -> Stopwatch? {
        guard let value = reply(method, ["name": .string(name)])?["stopwatch"] else { return nil }
        return try? Stopwatch(json: value)
    }

    var saves: [(name: String, snapshot: StopWatchSnapshot?)] { queue.sync { storage.saves } }
    /// Lets the work queued on `queue` run (deliveries to watchers, expiries in later turns,
    /// saves after them), turn after turn, until `condition` holds: no clock, no sleep.
    @discardableResult
    func settle(turns: Int = 1000, until condition: () -> Bool = { false }) -> Bool {
        for _ in 0..<turns {
            if condition() { return true }
            queue.sync {}
        }
        return condition()
    }

    /// Watches `name` through the service, as a connection would, pulling each reply as it
    /// comes; the updates so far, and the stream to cancel.
    func watch(_ name: String) -> (stream: any VarlinkReplyStream, updates: Locked<[WatchUpdate]>)? {
        guard case .success(.stream(let stream)) = call("Watch", ["name": .string(name)], more: true) else { return nil }
        let updates = Locked<[WatchUpdate]>([])
        queue.sync {
            stream.start {
                while case .message(let bytes)? = stream.next() {
                    guard let reply = try? VarlinkReply(json: JSONParser.parse(Array(bytes.dropLast()))),
                        let update = try? WatchUpdate(json: reply.parameters)
                    else { continue }
                    updates.withLock { $0.append(update) }
                }
            }
        }
        return (stream, updates)
    }

    /// Calls History and pulls every reply as a connection would, turn after turn of the
    /// queue; each reply's parsed JSON, in order (an error reply included). `beforeReading`
    /// runs once the call is answered (its correction index taken) and before its stream reads.
    func historyReplies(_ parameters: JSONObject = [:], more: Bool = true, beforeReading: () -> Void = {}) -> [VarlinkReply] {
        let call = VarlinkCall(method: "io.stopwatchd.History", parameters: parameters, more: more)
        let answer = queue.sync { service.answer(call) }
        beforeReading()
        switch answer {
        case .failure(let error): return [VarlinkReply(error)]
        case .success(.reply(let parameters)): return [VarlinkReply(parameters: parameters)]
        case .success(.message(let message)):
            guard let reply = try? VarlinkReply(json: JSONParser.parse(Array(message.dropLast()))) else {
                Issue.record("a reply written without a tree does not read back: \(String(decoding: message, as: UTF8.self))")
                return []
            }
            return [reply]
        case .success(.stream(let stream)):
            let replies = Locked<[VarlinkReply]>([])
            let done = Locked(false)
            queue.sync {
                stream.start {}
            }
            settle(turns: 1_000_000) {
                queue.sync {
                    while let item = stream.next() {
                        let bytes: [UInt8]
                        switch item {
                        case .message(let message): bytes = message
                        case .last(let message):
                            bytes = message
                            done.withLock { $0 = true }
                        case .end(let error):
                            bytes = VarlinkReply(error).message
                            done.withLock { $0 = true }
                        }
                        if let reply = try? VarlinkReply(json: JSONParser.parse(Array(bytes.dropLast()))) {
                            replies.withLock { $0.append(reply) }
                        }
                    }
                }
                return done.withLock { $0 }
            }
            return replies.withLock { $0 }
        }
    }

    /// The intervals of every History reply, in order.
    func historyIntervals(_ parameters: JSONObject = [:]) -> [Interval] {
        historyReplies(parameters).flatMap { reply -> [Interval] in
            guard case .array(let values)? = reply.parameters["intervals"] else { return [] }
            return values.compactMap { try? Interval(json: $0) }
        }
    }

    var changeCount: Int { queue.sync { told.changes } }
    var events: [StopwatchEvent] { queue.sync { told.events } }
    var toldExpiries: [ToldExpiry] { queue.sync { told.expiries } }
    var batches: [EventBatch] { queue.sync { told.batches } }
}

/// Timers of a `ManualTime`, counted: which of its `timersMade` are one user's.
// Unchecked Sendable: `made` is a `Locked`, and `time` (a `ManualTime`) is Sendable; nothing
// else is stored.
final class CountedTimers: TickTimerFactory, @unchecked Sendable {
    private let time: ManualTime
    private let made = Locked(0)

    init(_ time: ManualTime) {
        self.time = time
    }

    var timersMade: Int { made.withLock { $0 } }

    func makeTimer(on queue: DispatchQueue, handler: @escaping @Sendable (any TickTimer, Duration) -> Void) -> any TickTimer {
        made.withLock { $0 += 1 }
        return time.makeTimer(on: queue, handler: handler)
    }
}
